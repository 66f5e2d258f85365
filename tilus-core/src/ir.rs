//! The typed, checked intermediate representation of a tile kernel.
//!
//! The front end (`crate::lower`) produces it from the surface AST after name resolution, shape and
//! type inference and validation; passes (`crate::passes`) rewrite it; the PTX back end
//! (`crate::ptx`) and the CPU emulator (`crate::emu`) both consume it, which is what keeps the two
//! backends in agreement: they implement one semantics, documented here.
//!
//! # Execution model
//! A kernel runs as a grid of blocks of `threads` threads. The body is *block-level* code: every
//! statement is executed by the whole block, and all control flow is block-uniform (conditions are
//! [`Ty::Scalar`] values, which are uniform by construction). A [`Ty::Tile`] is a register tile:
//! its elements are distributed over the block's threads by the back end's layout, each element
//! owned by exactly one thread (never replicated), so a memory operation on a tile touches each
//! element's address exactly once.
//!
//! # Form
//! Three-address code with structured control flow. Every value is a variable ([`VarId`]) declared
//! in [`Kernel::vars`] with its type; operands are variables or immediates. Variables may be
//! assigned more than once (`let mut` in the source); each assignment overwrites the value.

use serde::{Deserialize, Serialize};

/// Index into [`Kernel::vars`].
pub type VarId = u32;

/// Opaque source location: an index into the span table kept by whoever built the AST (the proc
/// macro maps it back to a `proc_macro2::Span`). `Span::NONE` where no source token applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Span(pub u32);

impl Span {
    pub const NONE: Span = Span(u32::MAX);
}

pub use crate::dtype::DType;

/// The type of an IR variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    /// A block-uniform scalar (every thread holds the same value).
    Scalar(DType),
    /// A register tile with a compile-time shape (rank 1..=3), row-major logical order.
    Tile { dtype: DType, shape: Vec<usize> },
    /// A global-memory tensor or a view of one: a base kernel parameter, a scalar element offset
    /// into it and `rank` runtime dimensions (row-major, contiguous). See [`Inst::View`].
    Global { dtype: DType, rank: usize },
    /// A shared-memory tensor with a compile-time shape, allocated by [`Inst::AllocShared`].
    Shared { dtype: DType, shape: Vec<usize> },
}

impl Ty {
    pub fn dtype(&self) -> DType {
        match self {
            Ty::Scalar(d) => *d,
            Ty::Tile { dtype, .. } | Ty::Global { dtype, .. } | Ty::Shared { dtype, .. } => *dtype,
        }
    }
    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::Scalar(_))
    }
    /// The same kind and shape with another element type.
    pub fn with_dtype(&self, d: DType) -> Ty {
        match self {
            Ty::Scalar(_) => Ty::Scalar(d),
            Ty::Tile { shape, .. } => Ty::Tile {
                dtype: d,
                shape: shape.clone(),
            },
            Ty::Global { rank, .. } => Ty::Global {
                dtype: d,
                rank: *rank,
            },
            Ty::Shared { shape, .. } => Ty::Shared {
                dtype: d,
                shape: shape.clone(),
            },
        }
    }
    /// The tile shape, if this is a tile.
    pub fn tile_shape(&self) -> Option<&[usize]> {
        match self {
            Ty::Tile { shape, .. } => Some(shape),
            _ => None,
        }
    }
}

/// Number of elements of a shape.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Var {
    /// Source name (for readability of dumps and PTX comments); temporaries are named `_tN`,
    /// which a user's variable may be named too: [`Var::temp`] is what tells them apart.
    pub name: String,
    pub ty: Ty,
    /// A value the compiler introduced (an intermediate result), not a name of the source.
    #[serde(default)]
    pub temp: bool,
}

impl Var {
    /// A variable named in the source (a parameter or a `let` binding).
    pub fn new(name: impl Into<String>, ty: Ty) -> Var {
        Var {
            name: name.into(),
            ty,
            temp: false,
        }
    }
}

/// A kernel parameter. Parameter `i` is variable `i` of [`Kernel::vars`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamKind {
    /// `GlobalTensor<T>`: passed as a 64-bit device pointer and an `i32` element count.
    /// Inside the kernel it is a rank-1 [`Ty::Global`] with offset 0 and dims `[len]`.
    Tensor(DType),
    /// A scalar passed by value (`i32`).
    Scalar(DType),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
}

pub use crate::target::Target;

/// The dimensions of a launch grid, in blocks (`x` varies fastest in the linear block order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Grid {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Grid {
    pub const fn new(x: u32, y: u32, z: u32) -> Grid {
        Grid { x, y, z }
    }
    /// The number of blocks (saturating).
    pub fn blocks(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
    /// The block at linear index `b` (`x` fastest).
    pub fn coords(self, b: u64) -> [u32; 3] {
        let (x, y) = (self.x.max(1) as u64, self.y.max(1) as u64);
        [(b % x) as u32, ((b / x) % y) as u32, (b / (x * y)) as u32]
    }
    /// The size along axis 0, 1, 2.
    pub fn dim(self, axis: u8) -> u32 {
        match axis {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }
}

impl From<u32> for Grid {
    fn from(x: u32) -> Grid {
        Grid::new(x, 1, 1)
    }
}
impl From<(u32, u32)> for Grid {
    fn from((x, y): (u32, u32)) -> Grid {
        Grid::new(x, y, 1)
    }
}
impl From<(u32, u32, u32)> for Grid {
    fn from((x, y, z): (u32, u32, u32)) -> Grid {
        Grid::new(x, y, z)
    }
}
impl From<[u32; 3]> for Grid {
    fn from([x, y, z]: [u32; 3]) -> Grid {
        Grid::new(x, y, z)
    }
}

fn one_cluster() -> Grid {
    Grid::new(1, 1, 1)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    /// Threads per block (a multiple of 32, at most 1024).
    pub threads: u32,
    /// Blocks per thread-block cluster (sm_90; `1x1x1` is no cluster): the grid must be a
    /// multiple of it.
    #[serde(default = "one_cluster")]
    pub cluster: Grid,
    /// Blocks that should fit on one SM at once (PTX `.minnctapersm`): the PTX assembler keeps
    /// registers per thread within `65536 / (threads * n)`. `None`: no hint.
    #[serde(default)]
    pub min_blocks_per_sm: Option<u32>,
    /// The longest run of consecutive elements a thread holds of a tile (a power of two up to
    /// 16; see `layout`). `None`: 16 bytes of the kernel's narrowest element type in memory.
    #[serde(default)]
    pub vector_width: Option<u32>,
    /// The PTX target: the user's request raised to what the kernel needs (e.g. `.cluster` scope
    /// needs sm_90).
    pub target: Target,
    pub params: Vec<Param>,
    /// All variables; `vars[0..params.len()]` are the parameters.
    pub vars: Vec<Var>,
    /// Bytes of shared memory allocated by [`Inst::AllocShared`] (16-byte aligned allocations).
    pub shared_bytes: usize,
    pub body: Block,
}

pub type Block = Vec<Stmt>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stmt {
    /// `dst = inst` (dst is `None` for instructions without a result, or whose result was
    /// removed by dead-code elimination).
    Inst {
        dst: Option<VarId>,
        inst: Inst,
        span: Span,
    },
    /// A counted loop.
    For(ForLoop),
    /// `while cond_block; cond { body }`: `cond_block` is evaluated before each test of `cond`
    /// (a scalar bool variable it computes).
    While {
        cond_block: Block,
        cond: Operand,
        body: Block,
        span: Span,
    },
    /// `if cond { then } else { els }` on a scalar bool.
    If {
        cond: Operand,
        then: Block,
        els: Block,
        span: Span,
    },
    /// Leave the innermost enclosing loop.
    Break { span: Span },
}

impl Stmt {
    /// Where the statement was written.
    pub fn span(&self) -> Span {
        match self {
            Stmt::Inst { span, .. }
            | Stmt::While { span, .. }
            | Stmt::If { span, .. }
            | Stmt::Break { span } => *span,
            Stmt::For(l) => l.span,
        }
    }
}

/// `for var in start..end` stepping by `step` (scalars; `step > 0` checked at compile time when
/// it is an immediate; a non-positive runtime step runs zero iterations).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForLoop {
    pub var: VarId,
    pub start: Operand,
    pub end: Operand,
    pub step: Operand,
    pub body: Block,
    pub span: Span,
}

impl ForLoop {
    /// The three scalars the loop reads once, before its first iteration: start, end, step.
    pub fn bounds(&self) -> [Operand; 3] {
        [self.start, self.end, self.step]
    }
}

/// An instruction operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    Var(VarId),
    /// An immediate scalar of the given dtype: its bit pattern in the low bits, the rest zero
    /// (`crate::elem::canon`; bool immediates are 0/1).
    Imm(u64, DType),
}

impl Operand {
    /// An immediate of type `dtype` with the value `v` (which must be representable).
    pub fn int(v: i128, dtype: DType) -> Operand {
        Operand::Imm(
            crate::elem::int_const(dtype, v).expect("representable immediate"),
            dtype,
        )
    }
    /// An `i32` immediate.
    pub fn i32(v: i32) -> Operand {
        Operand::Imm(v as u32 as u64, DType::I32)
    }
    /// A `bool` immediate.
    pub fn bool(b: bool) -> Operand {
        Operand::Imm(b as u64, DType::Bool)
    }
    /// The value of an integer immediate, sign- or zero-extended by its type.
    pub fn imm_int(self) -> Option<i128> {
        match self {
            Operand::Imm(bits, d) if d.is_int() || d.is_bool() => {
                Some(crate::elem::as_i128(d, bits))
            }
            _ => None,
        }
    }
    pub fn var(self) -> Option<VarId> {
        match self {
            Operand::Var(v) => Some(v),
            Operand::Imm(..) => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Division: truncating for integers (by zero gives 0, `crate::elem`), IEEE for floats.
    Div,
    /// Integer remainder with the sign of the dividend.
    Rem,
    And,
    Or,
    Xor,
    Shl,
    /// Shift right: arithmetic for signed types, logical for unsigned ones.
    Shr,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnOp {
    /// Wrapping negation of integers, sign flip of floats.
    Neg,
    /// Bitwise not on integers, logical not on bool.
    Not,
    /// Absolute value (wrapping for integers: `abs(MIN) == MIN`).
    Abs,
    /// Float square root, correctly rounded.
    Sqrt,
    /// Float rounding to an integral value: down, up, toward zero, half away from zero
    /// (Rust's `round`), half to even.
    Floor,
    Ceil,
    Trunc,
    Round,
    RoundEven,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
    /// Logical or (bool) / bitwise or (i32).
    Or,
    /// Logical and (bool) / bitwise and (i32).
    And,
}

/// A reduction along one axis of a tile ([`Inst::ReduceAxis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AxisReduce {
    /// A fold with the whole-tile reduction's operator and identity.
    Fold(ReduceOp),
    /// The index along the axis of the first minimum (an `i32`): NaNs never win unless every
    /// element is one, and equal values (`-0.0` and `+0.0` too) go to the lowest index.
    ArgMin,
    /// The index of the first maximum, likewise.
    ArgMax,
}

/// The operator of a scan ([`Inst::Scan`]); all are associative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScanOp {
    Add,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ScanOp {
    /// The element-wise operator that combines two values.
    pub fn binop(self) -> BinOp {
        match self {
            ScanOp::Add => BinOp::Add,
            ScanOp::Mul => BinOp::Mul,
            ScanOp::Min => BinOp::Min,
            ScanOp::Max => BinOp::Max,
            ScanOp::And => BinOp::And,
            ScanOp::Or => BinOp::Or,
            ScanOp::Xor => BinOp::Xor,
        }
    }
    pub const ALL: [ScanOp; 7] = [
        ScanOp::Add,
        ScanOp::Mul,
        ScanOp::Min,
        ScanOp::Max,
        ScanOp::And,
        ScanOp::Or,
        ScanOp::Xor,
    ];
    /// The name in the language (`t.scan(add)`, `t.cumsum()` is `add`).
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Add => "add",
            ScanOp::Mul => "mul",
            ScanOp::Min => "min",
            ScanOp::Max => "max",
            ScanOp::And => "and",
            ScanOp::Or => "or",
            ScanOp::Xor => "xor",
        }
    }
}

/// Memory spaces an access can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Space {
    Shared,
    Global,
}

/// Memory ordering of an atomic operation (PTX `.sem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Sem {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl Space {
    /// The PTX state space (`.shared` is the block's own; a distributed tensor's elements are
    /// in `.shared::cluster`, chosen by the code generator).
    pub fn ptx(self) -> &'static str {
        match self {
            Space::Shared => "shared",
            Space::Global => "global",
        }
    }
}

impl Sem {
    pub fn ptx(self) -> &'static str {
        match self {
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
        }
    }
    pub fn has_acquire(self) -> bool {
        matches!(self, Sem::Acquire | Sem::AcqRel)
    }
    pub fn has_release(self) -> bool {
        matches!(self, Sem::Release | Sem::AcqRel)
    }
    pub const ALL: [Sem; 4] = [Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel];
}

/// Synchronisation scope of an atomic operation (PTX `.scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl Scope {
    pub fn ptx(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
    pub const ALL: [Scope; 4] = [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys];
}

/// Read-modify-write operations (semantics per type in `crate::elem::rmw`). `Sub` is lowered
/// by the back ends to `Add` of the negated operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum RmwOp {
    Add,
    Sub,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    /// PTX `inc`: `old >= bound ? 0 : old + 1` (unsigned), the operand is the bound.
    Inc,
    /// PTX `dec`: `old == 0 || old > bound ? bound : old - 1` (unsigned).
    Dec,
}

impl RmwOp {
    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Add => "add",
            RmwOp::Sub => "sub",
            RmwOp::Min => "min",
            RmwOp::Max => "max",
            RmwOp::Exch => "exch",
            RmwOp::Cas => "cas",
            RmwOp::And => "and",
            RmwOp::Or => "or",
            RmwOp::Xor => "xor",
            RmwOp::Inc => "inc",
            RmwOp::Dec => "dec",
        }
    }
    pub const ALL: [RmwOp; 11] = [
        RmwOp::Add,
        RmwOp::Sub,
        RmwOp::Min,
        RmwOp::Max,
        RmwOp::Exch,
        RmwOp::Cas,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
        RmwOp::Inc,
        RmwOp::Dec,
    ];
}

/// How one memory axis of an [`Access`] is addressed for tile element `e` (with coordinates
/// `pos[0..rank]` in the access's iteration `shape`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Coord {
    /// `offset + pos[axis]`: the element's own position along tile axis `axis`, shifted by a
    /// scalar offset (an immediate 0 for no offset).
    Pos { axis: usize, offset: Operand },
    /// The value of an integer index (any integer type): a tile of the access's `shape`
    /// (element `e` uses its own element), or a scalar (the same coordinate for all elements).
    Index(Operand),
}

/// Addressing of a tile-shaped memory operation: element `e` of the iteration `shape` addresses
/// `mem[coords[0](e), ..., coords[r-1](e)]` where `r` is the rank of `mem`.
///
/// Bounds: when `check_bounds` is set, an element whose coordinate `k` is outside
/// `0..dims[k]` of `mem` (compile-time shape for shared, runtime dims for a global view) or whose
/// flat offset falls outside the base tensor `0..len` is *inactive*: it performs no memory access
/// (loads give [`Inst::Load::other`], RMWs give their out-of-bounds result). Elements for which
/// `mask` (a bool tile of `shape`, or a scalar) is false are inactive too.
/// When `check_bounds` is false the caller promised in-bounds coordinates (no check is emitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// A [`Ty::Global`] or [`Ty::Shared`] variable.
    pub mem: VarId,
    /// The iteration (tile) shape; results have this shape.
    pub shape: Vec<usize>,
    /// One coordinate per axis of `mem`.
    pub coords: Vec<Coord>,
    pub mask: Option<Operand>,
    pub check_bounds: bool,
}

/// What an RMW yields for an inactive element (masked off or out of bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InactiveResult {
    /// Zero.
    Zero,
    /// The element's `compare` operand (cuTile's `atomic_cas` convention).
    Compare,
}

/// An instruction. Unless noted, operands and results follow these typing rules (enforced by
/// the front end): binary operands are both scalars (result scalar) or tiles of one shape or a
/// tile and a scalar (result: tile of that shape); dtypes agree except where noted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Inst {
    /// Copy of a value (assignment to a `let mut` variable, or materialising an immediate).
    Mov(Operand),
    /// `blockIdx.{x,y,z}` (axis 0, 1, 2) as an i32 scalar.
    BlockIdx {
        axis: u8,
    },
    /// `gridDim.{x,y,z}` (axis 0, 1, 2) as an i32 scalar.
    GridDim {
        axis: u8,
    },
    /// The block's rank in its thread-block cluster (`%cluster_ctarank`: `x` fastest), an i32
    /// scalar in `0..cluster size`. Only in kernels declared with a cluster shape.
    ClusterRank,
    /// Blocks per cluster (`%cluster_nctarank`), an i32 scalar.
    ClusterSize,
    /// The cluster's index in the grid of clusters along axis 0, 1, 2 (`%clusterid.{x,y,z}`).
    ClusterIdx {
        axis: u8,
    },
    /// Cluster-wide barrier: every thread of every block of the cluster arrives (release) and
    /// waits (acquire), so shared-memory writes before it, in any block of the cluster, are
    /// visible to reads after it in any block (`barrier.cluster.arrive.release` +
    /// `barrier.cluster.wait.acquire`). It is also a block-wide barrier.
    ClusterSync,
    /// Runtime size of axis `axis` of a global view (i64 scalar).
    Dim {
        tensor: VarId,
        axis: usize,
    },
    /// A view of a global tensor (or of a view): element offset `offset` (an i64 scalar, relative
    /// to the source's start) and new dims (i64 scalars), row-major contiguous. Result
    /// `Ty::Global` of rank `shape.len()`. Bounds checks of accesses through a view check the
    /// view's dims and the base tensor's `len`. The view's offset from the base is the sum of
    /// the offsets saturated to the i64 range (so a huge offset stays out of bounds rather than
    /// wrapping), and flat indices `offset + sum(coord_k * stride_k)` are computed exactly.
    View {
        src: VarId,
        offset: Operand,
        shape: Vec<Operand>,
    },
    /// `[0, 1, ..., n-1]` as an integer tile of shape `[n]` (`dtype` holds `n - 1`).
    Arange {
        n: usize,
        dtype: DType,
    },
    /// Each element's warp lane: the lane (`0..32`) of the thread that holds it in the tile
    /// layout of `shape` (`crate::layout`), as an integer tile of `dtype`. Per-lane copies of a
    /// shared histogram indexed by it never share a bank within a warp.
    LaneIds {
        shape: Vec<usize>,
        dtype: DType,
    },
    /// A tile of `shape` filled with the scalar `value`.
    Full {
        shape: Vec<usize>,
        value: Operand,
    },
    Binary {
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
    },
    Unary {
        op: UnOp,
        x: Operand,
    },
    /// `a * b + c` with one rounding (float operands of one dtype; `f16`/`bf16` are computed
    /// as an `f32` fused multiply-add, rounded once more).
    Fma {
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `cond ? a : b` element-wise (cond bool scalar or tile; a, b of one dtype).
    Select {
        cond: Operand,
        a: Operand,
        b: Operand,
    },
    /// Convert to another dtype: Rust's `as` (`crate::elem::cast`; `x as bool` is `x != 0`).
    Cast {
        x: Operand,
        dtype: DType,
    },
    /// Reinterpret the bits of each element as `dtype`, of the same size (`f32::to_bits`,
    /// `f32::from_bits`; neither side `bool`).
    Bitcast {
        x: Operand,
        dtype: DType,
    },
    /// Same elements in row-major order, new shape (same element count).
    Reshape {
        x: VarId,
        shape: Vec<usize>,
    },
    /// Numpy-style broadcast of a tile to `shape` (same rank; each source axis is 1 or equal).
    Broadcast {
        x: VarId,
        shape: Vec<usize>,
    },
    /// Reduce all elements of a tile to a block-uniform scalar.
    Reduce {
        op: ReduceOp,
        x: VarId,
    },
    /// Reduce a tile along `axis`: the result has the tile's shape with that axis removed (a
    /// block-uniform scalar when none is left), or of length 1 with `keepdims`. Float folds
    /// combine in the order `crate::collective` defines (the same on both back ends).
    ReduceAxis {
        op: AxisReduce,
        x: VarId,
        axis: usize,
        keepdims: bool,
    },
    /// Scan each line of a tile along `axis`: element `k` of a line becomes
    /// `x[0] op x[1] op .. op x[k]` (inclusive), or the same up to `x[k - 1]` with the
    /// operator's identity at 0 (`exclusive`); with `reverse` the lines run from their end.
    /// Float `add`/`mul` combine in the order `crate::collective` defines.
    Scan {
        op: ScanOp,
        x: VarId,
        axis: usize,
        exclusive: bool,
        reverse: bool,
    },
    /// Sort each line of a tile along `axis`, ascending (or `descending`), stably. Floats
    /// sort by IEEE 754 `totalOrder` (`-NaN < -inf < .. < -0.0 < +0.0 < .. < +inf < +NaN`).
    Sort {
        x: VarId,
        axis: usize,
        descending: bool,
    },
    /// The stable sorting permutation of each line along `axis` (an `i32` tile of `x`'s
    /// shape): element `k` of a line is the index of the line's `k`-th smallest (or largest)
    /// element, equal elements in their original order.
    ArgSort {
        x: VarId,
        axis: usize,
        descending: bool,
    },
    /// Gather within a tile along `axis` (numpy's `take_along_axis`): element `e` of the
    /// result is `x` at `e`'s coordinates with the one along `axis` replaced by `indices[e]`.
    /// `indices` is an integer tile of the result's shape (which is `x`'s but along `axis`,
    /// where it may differ); an index outside `0..x.shape[axis]` gives 0.
    Take {
        x: VarId,
        indices: VarId,
        axis: usize,
    },
    /// The `k` largest (or smallest) elements of each line along `axis`, in order (largest
    /// first, or smallest first), or their indices (`i32`) with `indices`; ties to the lower
    /// index. The result has `x`'s shape with `k` along `axis`.
    TopK {
        x: VarId,
        k: usize,
        axis: usize,
        largest: bool,
        indices: bool,
    },
    /// For each element of an integer or `bool` tile, the number of elements before it in
    /// row-major order with the same value (an `i32` tile of `x`'s shape): the rank a stable
    /// scatter of equal keys needs. With `order` (a permutation of the axes, outermost
    /// first), "before" is in the row-major order of the coordinates permuted by it: element
    /// `c` comes before `c'` when `(c[order[0]], c[order[1]], ..)` is smaller.
    EqualRank {
        x: VarId,
        order: Option<Vec<usize>>,
    },
    /// Each element's place in a stable counting sort of the tile by value, where the
    /// elements of value `v` start at `starts[v]`: `starts[x[i]]` (0 where `x[i]` is outside
    /// `starts`) plus the [`Inst::EqualRank`] of `x[i]`, an `i32` tile of `x`'s shape. `x`
    /// is an integer or `bool` tile, `starts` a rank-1 `i32` tile; `order` as for
    /// [`Inst::EqualRank`].
    Place {
        x: VarId,
        starts: VarId,
        order: Option<Vec<usize>>,
    },
    /// The counts of the values `0..bins` in an integer tile (an `i32` tile of shape
    /// `[bins]`); values outside are not counted.
    Histogram {
        x: VarId,
        bins: usize,
    },
    /// Allocate a shared-memory tensor at byte `offset` of the block's shared window.
    ///
    /// `distributed`: a tensor of the whole cluster (distributed shared memory, sm_90): its
    /// axis 0 is split evenly over the cluster's blocks in rank order, block `r` holding rows
    /// `r * rows .. (r + 1) * rows` (`rows = shape[0] / cluster size`) at `offset` of its own
    /// window; every block addresses every element, the owner's through `.shared::cluster`.
    /// Accesses need the cluster running: a block must have passed a [`Inst::ClusterSync`]
    /// before it touches the tensor, and blocks do not exit while others may still access
    /// their part (the front end ends such kernels with a `ClusterSync`).
    AllocShared {
        dtype: DType,
        shape: Vec<usize>,
        offset: usize,
        #[serde(default)]
        distributed: bool,
    },
    /// Block-wide barrier (`bar.sync 0`); also orders shared- and global-memory accesses of the
    /// block's threads (CTA scope).
    Sync,
    /// Every thread sleeps about `ns` nanoseconds (a scalar `u32` or `i32`; PTX `nanosleep.u32`,
    /// which may sleep anywhere from 0 to twice that): a back-off for spin loops, so that
    /// waiting warps leave the issue slots to the others. Orders nothing; the emulator skips it.
    Nanosleep {
        ns: Operand,
    },
    /// Memory fence with the given order and scope (`fence.{sem}.{scope}`; relaxed is not
    /// allowed; acquire/release fences are emitted as `acq_rel`). Tile-level: the block
    /// synchronises before and after it, so it orders every thread's accesses before the fence
    /// against every thread's accesses after it.
    Fence {
        sem: Sem,
        scope: Scope,
    },
    /// Weak (non-atomic) gather/load: tile of `access.shape`; inactive elements read `other`.
    Load {
        access: Access,
        other: Operand,
    },
    /// Weak (non-atomic) scatter/store of `value` (a tile of `access.shape` or a scalar).
    /// Under duplicate addresses the winner is unspecified.
    Store {
        access: Access,
        value: Operand,
    },
    /// A hint: bring the addressed elements of a global tensor into the L2 cache (PTX
    /// `prefetch.global.L2`, an element a 128-byte line). Reads and writes nothing: elements
    /// outside the tensor are skipped, and the emulator does nothing.
    Prefetch {
        access: Access,
    },
    /// Atomic load `ld.{sem}.{scope}` (sem is relaxed or acquire).
    AtomicLoad {
        access: Access,
        sem: Sem,
        scope: Scope,
    },
    /// Atomic store `st.{sem}.{scope}` (sem is relaxed or release).
    AtomicStore {
        access: Access,
        value: Operand,
        sem: Sem,
        scope: Scope,
    },
    /// Atomic read-modify-write of each active element; the result (when `Stmt::Inst::dst` is
    /// `Some`) is the tile of pre-RMW values. `compare` is present exactly for `Cas`.
    /// Tile-level ordering: with a release component the block synchronises before the RMW,
    /// with an acquire component after it, so the ordering covers all of the block's accesses.
    AtomicRmw {
        op: RmwOp,
        access: Access,
        values: Operand,
        compare: Option<Operand>,
        sem: Sem,
        scope: Scope,
        inactive: InactiveResult,
        /// A 128-bit RMW (`cas`/`exch` of 64-bit elements, `atom.*.b128`): tile elements
        /// `2k` and `2k + 1` (a pair along the even-length last axis) are one atomic unit.
        /// A pair is performed when both elements are active, the second addresses the memory
        /// element after the first, and the first is 16-byte aligned; otherwise both are
        /// skipped (their results follow `inactive`).
        pairs: bool,
    },
}

impl Inst {
    /// The memory access of a load, store or atomic.
    pub fn access(&self) -> Option<&Access> {
        match self {
            Inst::Load { access, .. }
            | Inst::Store { access, .. }
            | Inst::Prefetch { access }
            | Inst::AtomicLoad { access, .. }
            | Inst::AtomicStore { access, .. }
            | Inst::AtomicRmw { access, .. } => Some(access),
            _ => None,
        }
    }

    /// The memory access of a load, store or atomic, to rewrite.
    pub fn access_mut(&mut self) -> Option<&mut Access> {
        match self {
            Inst::Load { access, .. }
            | Inst::Store { access, .. }
            | Inst::Prefetch { access }
            | Inst::AtomicLoad { access, .. }
            | Inst::AtomicStore { access, .. }
            | Inst::AtomicRmw { access, .. } => Some(access),
            _ => None,
        }
    }

    /// Whether each element of the result comes from the same element of the operands alone
    /// (or from none: `arange`, `lane_ids`, `full`), with no memory: what a lane computes
    /// without the rest of the block (scalar operands are the same in every lane).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Inst::Mov(_)
                | Inst::Arange { .. }
                | Inst::LaneIds { .. }
                | Inst::Full { .. }
                | Inst::Binary { .. }
                | Inst::Unary { .. }
                | Inst::Fma { .. }
                | Inst::Select { .. }
                | Inst::Cast { .. }
                | Inst::Bitcast { .. }
        )
    }

    /// Whether the instruction has effects beyond its result (so DCE must keep it).
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            Inst::Sync
                | Inst::Nanosleep { .. }
                | Inst::ClusterSync
                | Inst::Fence { .. }
                | Inst::Store { .. }
                | Inst::Prefetch { .. }
                | Inst::AtomicStore { .. }
                | Inst::AtomicRmw { .. }
                | Inst::AtomicLoad { .. }
                | Inst::AllocShared { .. }
        )
    }

    /// Every operand the instruction reads, in a fixed order.
    pub fn operands(&self) -> Vec<Operand> {
        let mut out = Vec::new();
        let access_ops = |a: &Access, out: &mut Vec<Operand>| {
            out.push(Operand::Var(a.mem));
            for c in &a.coords {
                match c {
                    Coord::Pos { offset, .. } => out.push(*offset),
                    Coord::Index(o) => out.push(*o),
                }
            }
            if let Some(m) = a.mask {
                out.push(m);
            }
        };
        match self {
            Inst::Mov(o) | Inst::Nanosleep { ns: o } => out.push(*o),
            Inst::BlockIdx { .. }
            | Inst::GridDim { .. }
            | Inst::Arange { .. }
            | Inst::LaneIds { .. }
            | Inst::Sync => {}
            Inst::ClusterRank | Inst::ClusterSize | Inst::ClusterIdx { .. } | Inst::ClusterSync => {
            }
            Inst::AllocShared { .. } | Inst::Fence { .. } => {}
            Inst::Dim { tensor, .. } => out.push(Operand::Var(*tensor)),
            Inst::View { src, offset, shape } => {
                out.push(Operand::Var(*src));
                out.push(*offset);
                out.extend(shape.iter().copied());
            }
            Inst::Full { value, .. } => out.push(*value),
            Inst::Binary { lhs, rhs, .. } => out.extend([*lhs, *rhs]),
            Inst::Unary { x, .. } | Inst::Cast { x, .. } | Inst::Bitcast { x, .. } => out.push(*x),
            Inst::Select { cond, a, b } => out.extend([*cond, *a, *b]),
            Inst::Fma { a, b, c } => out.extend([*a, *b, *c]),
            Inst::Reshape { x, .. }
            | Inst::Broadcast { x, .. }
            | Inst::Reduce { x, .. }
            | Inst::ReduceAxis { x, .. }
            | Inst::Scan { x, .. }
            | Inst::Sort { x, .. }
            | Inst::ArgSort { x, .. }
            | Inst::TopK { x, .. }
            | Inst::EqualRank { x, .. }
            | Inst::Histogram { x, .. } => out.push(Operand::Var(*x)),
            Inst::Take { x, indices, .. } => {
                out.push(Operand::Var(*x));
                out.push(Operand::Var(*indices));
            }
            Inst::Place { x, starts, .. } => {
                out.push(Operand::Var(*x));
                out.push(Operand::Var(*starts));
            }
            Inst::Load { access, other } => {
                access_ops(access, &mut out);
                out.push(*other);
            }
            Inst::AtomicLoad { access, .. } | Inst::Prefetch { access } => {
                access_ops(access, &mut out)
            }
            Inst::Store { access, value } | Inst::AtomicStore { access, value, .. } => {
                access_ops(access, &mut out);
                out.push(*value);
            }
            Inst::AtomicRmw {
                access,
                values,
                compare,
                ..
            } => {
                access_ops(access, &mut out);
                out.push(*values);
                if let Some(c) = compare {
                    out.push(*c);
                }
            }
        }
        out
    }
}

/// Every instruction of `block`, nested blocks included, in program order: `f(dst, inst, span)`.
pub fn for_each_inst(block: &[Stmt], f: &mut impl FnMut(Option<VarId>, &Inst, Span)) {
    for s in block {
        match s {
            Stmt::Inst { dst, inst, span } => f(*dst, inst, *span),
            Stmt::Break { .. } => {}
            Stmt::For(l) => for_each_inst(&l.body, f),
            Stmt::While {
                cond_block, body, ..
            } => {
                for_each_inst(cond_block, f);
                for_each_inst(body, f);
            }
            Stmt::If { then, els, .. } => {
                for_each_inst(then, f);
                for_each_inst(els, f);
            }
        }
    }
}

/// What a statement does with a variable, for [`for_each_var`].
#[derive(Debug, Clone, Copy)]
pub enum VarUse<'a> {
    /// Read as an operand, loop bound or condition.
    Read(VarId),
    /// Assigned by an instruction.
    Def(VarId, &'a Inst),
    /// The variable of a `for` loop: assigned on every iteration.
    LoopVar(VarId),
}

/// Every read and assignment of a variable in `block`, nested blocks included, in program order
/// (a statement's reads before its assignment). The passes' use/def counts come from here.
pub fn for_each_var<'a>(block: &'a [Stmt], f: &mut impl FnMut(VarUse<'a>)) {
    fn read<'a>(o: Operand, f: &mut impl FnMut(VarUse<'a>)) {
        if let Operand::Var(v) = o {
            f(VarUse::Read(v));
        }
    }
    for s in block {
        match s {
            Stmt::Inst { dst, inst, .. } => {
                inst.operands().into_iter().for_each(|o| read(o, f));
                if let Some(d) = dst {
                    f(VarUse::Def(*d, inst));
                }
            }
            Stmt::For(l) => {
                l.bounds().into_iter().for_each(|o| read(o, f));
                f(VarUse::LoopVar(l.var));
                for_each_var(&l.body, f);
            }
            Stmt::While {
                cond_block,
                cond,
                body,
                ..
            } => {
                for_each_var(cond_block, f);
                read(*cond, f);
                for_each_var(body, f);
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                read(*cond, f);
                for_each_var(then, f);
                for_each_var(els, f);
            }
            Stmt::Break { .. } => {}
        }
    }
}

/// Every instruction in `block`, nested blocks included, in program order, for rewriting in
/// place.
pub fn for_each_inst_mut(block: &mut [Stmt], f: &mut impl FnMut(&mut Inst)) {
    for s in block {
        match s {
            Stmt::Inst { inst, .. } => f(inst),
            Stmt::For(l) => for_each_inst_mut(&mut l.body, f),
            Stmt::While {
                cond_block, body, ..
            } => {
                for_each_inst_mut(cond_block, f);
                for_each_inst_mut(body, f);
            }
            Stmt::If { then, els, .. } => {
                for_each_inst_mut(then, f);
                for_each_inst_mut(els, f);
            }
            Stmt::Break { .. } => {}
        }
    }
}

impl Kernel {
    pub fn ty(&self, v: VarId) -> &Ty {
        &self.vars[v as usize].ty
    }
    pub fn operand_ty(&self, o: Operand) -> Ty {
        match o {
            Operand::Var(v) => self.ty(v).clone(),
            Operand::Imm(_, d) => Ty::Scalar(d),
        }
    }
    /// The kernel as the bytes `#[tile_kernel]` embeds in the user's binary (the emulator runs
    /// them, [`Kernel::from_bytes`]): [`IR_MAGIC`], then postcard's compact encoding. Compact
    /// because the macro writes it at every build, in a macro Cargo builds unoptimised by
    /// default: the largest generated seed's IR (`tests/differential_seeds.rs`) took 3.4 ms
    /// as 114 KB of JSON with `serde_json` there, 0.46 ms as 16 KB of postcard (2-core VM,
    /// tilus-core at opt-level 0, 2026-11-28), and the literal rustc reads is half as long
    /// (54 KB, escaped as a byte string).
    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_extend(self, IR_MAGIC.to_vec()).expect("the IR serialises")
    }

    /// The kernel from [`Kernel::to_bytes`]'s form, written by this same version of tilus-core
    /// (postcard's encoding follows the types field by field, so no other version reads it).
    pub fn from_bytes(bytes: &[u8]) -> Result<Kernel, IrDecodeError> {
        let body = bytes.strip_prefix(IR_MAGIC).ok_or(IrDecodeError::NotIr)?;
        match postcard::take_from_bytes(body) {
            Ok((kernel, [])) => Ok(kernel),
            Ok((_, rest)) => Err(IrDecodeError::Trailing(rest.len())),
            Err(e) => Err(IrDecodeError::Malformed(e.to_string())),
        }
    }
}

/// What [`Kernel::to_bytes`]'s form starts with: a name and the version of tilus-core that
/// wrote it (none other reads it).
pub const IR_MAGIC: &[u8] = concat!("tilus-ir ", env!("CARGO_PKG_VERSION"), "\0").as_bytes();

/// Why bytes are not a kernel's IR ([`Kernel::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrDecodeError {
    /// The bytes do not start with this version's [`IR_MAGIC`] (another format, or another
    /// version of tilus-core).
    #[error("not the IR of a kernel compiled by tilus-core {}", env!("CARGO_PKG_VERSION"))]
    NotIr,
    /// The encoding after the magic does not decode (cut short, or not postcard's).
    #[error("malformed IR: {0}")]
    Malformed(String),
    /// A whole kernel decoded with this many bytes left over.
    #[error("{0} bytes after the IR")]
    Trailing(usize),
}
