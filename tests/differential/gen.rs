//! The random kernel generator: well-typed, deterministic kernels as `tilus::core::ast` trees.
//!
//! Every generated expression is asked for at a type ([`VTy`]: an element type [`Dt`] and a
//! shape, or none for a scalar); [`Gen::expr`] dispatches on it. Adding an element type means
//! adding a [`Dt`] variant, the leaves and operators that produce it, and the memory that holds
//! it; the statement generators only ask for types.
//!
//! # Determinism (the rules every generated kernel follows)
//!
//! * Divisors are `(e | 1) & 127` (or `1023`, `7`) or `-((e & 63) | 2)`: never 0 or -1.
//! * Global memory:
//!   - `x`, `y` are read-only (weak loads, atomic loads, anything);
//!   - `out` is written in slots, one per (block, statement): weak stores at loop-invariant
//!     offsets (one thread per address, whatever the iteration), and scatter stores / atomic
//!     stores with collision-free indices between `sync()`s;
//!   - `acc` (add/sub), `accm` (only min or only max per kernel) and `accb` (only one of
//!     and/or/xor per kernel) take atomics from every block whose results are never used: each
//!     buffer's updates commute;
//!   - `pb` is cut into slots, one per (block, statement) again: atomics there (element-wise,
//!     or indexed with collision-free indices) have deterministic results, which are used; a
//!     statement that touches a slot is preceded and followed by `sync()`.
//! * Shared memory: every write (stores, scatters, atomics) has a `sync()` before and after it,
//!   and an atomic whose result is used touches each address once (element-wise, or indexed
//!   with collision-free indices); atomics with colliding indices have unused results and
//!   commuting ops.
//! * Nested effects (an atomic as an argument of another call, a loop bound, an `if`
//!   condition, ...) are on memory of their own (a fresh shared tensor or `pb` slot, or the
//!   read-only inputs), so the statement's other effects never touch it; they are never
//!   generated where the language forbids them (`&&`/`||` operands, value-`if` arms) or where
//!   a loop would repeat them (`while` conditions, except the counter pattern).
//! * Control flow is block-uniform: conditions are scalars computed from deterministic values;
//!   every loop has a small constant bound on its trip count.
//! * Atomic orders and scopes: accesses of one memory that synchronise (non-relaxed) use one
//!   scope per kernel (a scope mismatch is a compile error); atomics on memory shared across
//!   blocks use `gpu` or `sys` scope.

use super::ast::*;
use super::krng::KRng;
use super::syntax::*;
use std::collections::{BTreeSet, HashSet};

pub type Shape = Vec<usize>;

/// Output slots of `out` per block (one per store statement; surplus stores are not generated).
pub const NS: usize = 12;
/// Slots of `pb` per block (one per statement using one; surplus uses are not generated).
pub const NPB: usize = 12;

/// Tensor parameters, in order (then the scalars).
pub const TENSORS: [&str; 7] = ["x", "y", "out", "acc", "accm", "accb", "pb"];
pub const SCALARS: [&str; 2] = ["k", "m"];

/// Element types of generated values (the kernel language's element types this generator
/// produces; only `i32` lives in memory in this version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dt {
    I32,
    Bool,
}

impl Dt {
    pub fn name(self) -> &'static str {
        match self {
            Dt::I32 => "i32",
            Dt::Bool => "bool",
        }
    }
}

/// The type of a generated value: a block-uniform scalar (`shape == None`) or a tile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VTy {
    pub dt: Dt,
    pub shape: Option<Shape>,
}

impl VTy {
    pub fn scalar(dt: Dt) -> VTy {
        VTy { dt, shape: None }
    }
    pub fn tile(dt: Dt, shape: &[usize]) -> VTy {
        VTy {
            dt,
            shape: Some(shape.to_vec()),
        }
    }
}

const ARITH: [BinOp; 10] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
];
const CMP: [BinOp; 6] = [
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
];

/// Variable names a user may well choose that look like compiler temporaries (`_tN`), PTX
/// instructions, directives, registers or special registers, or the compiler's own symbols.
/// Each is used at most once per kernel (plus deliberate shadowing). None is a builtin, a
/// parameter, a qualifier name (`relaxed`, `gpu`) or a type name, so renaming them is safe.
#[rustfmt::skip]
const ODD_NAMES: &[&str] = &[
    "_t",
    "_t0",
    "_t1",
    "_t2",
    "_t3",
    "_t7",
    "_t12",
    "_tmp",
    "_tmp1",
    "_total",
    "ld",
    "st",
    "reg",
    "WARP_SZ",
    "mov",
    "bra",
    "ret",
    "exit",
    "param",
    "global",
    "shared",
    "local",
    "tid",
    "ntid",
    "ctaid",
    "nctaid",
    "laneid",
    "warpid",
    "clock",
    "pred",
    "p",
    "r",
    "rd",
    "f",
    "b32",
    "s32",
    "u32",
    "u64",
    "entry",
    "func",
    "version",
    "address_size",
    "visible",
    "align",
    "atom",
    "red",
    "bar",
    "membar",
    "sreg",
    "smem",
    "tilus_smem",
    "tk_x",
    "tk_diff",
    "r1",
    "rd1",
    "p1",
    "SP",
    "SPL",
    "gridid",
    "pm0",
    "envreg0",
    "__local_depot0",
    "_Z3foov",
    "__cuda_local_var",
    "vote",
    "shfl",
    "selp",
    "setp",
    "cvt",
    "and",
    "or",
    "xor",
    "not",
    "neg",
    "div",
    "rem",
    "shl",
    "shr",
];

/// Which memory an atomic targets (decides its scope rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mem {
    /// A shared tensor (private to the block).
    Shared,
    /// `acc`/`accm`/`accb`: updated by every block.
    Acc,
    /// A slot of `pb` (private to the block).
    Pb,
    /// A slot of `out` (private to the block).
    Out,
    /// The read-only inputs `x`, `y`.
    Input,
}

/// Statements a nested effect needs around the statement that contains it.
#[derive(Default)]
pub struct Pending {
    pre: Vec<Stmt>,
    /// A `sync()` after the statement.
    post_sync: bool,
    /// Statements after that `sync()` (read-backs), and the values they bind.
    post: Vec<Stmt>,
    post_vals: Vec<(String, VTy)>,
}

/// Whether kernels use the tile collectives (scans, sorts, reductions along an axis, ...).
const COLLECTIVES: bool = true;

pub struct Gen {
    pub rng: KRng,
    /// Values in scope (names and types).
    vals: Vec<(String, VTy)>,
    /// Views of the read-only inputs in scope (name, rank).
    views: Vec<(String, usize)>,
    /// `let mut` values assignable in the current scope.
    muts: Vec<(String, VTy)>,
    used_names: HashSet<String>,
    /// Names that must not be shadowed (loop counters assigned at the end of their loop).
    no_shadow: Vec<String>,
    counter: usize,
    /// The main 2-D shape `[r, c]`, its flat form `[r * c]`, an unrelated 1-D length `n`, and
    /// a rank-3 shape (sometimes with `r * c` elements).
    pub r: usize,
    pub c: usize,
    pub n: usize,
    pub d3: Shape,
    /// Slots of `out` used so far and the slot size (elements).
    pub stores: usize,
    pub slot: usize,
    /// Slots of `pb` used so far (the slot size is `slot` too).
    pub pbs: usize,
    /// The one op `accm` sees ("min" or "max") and the one `accb` sees ("and", "or", "xor").
    pub accm_op: &'static str,
    pub accb_op: &'static str,
    /// Scopes of synchronising accesses: acc buffers (also their relaxed ones), pb, shared, out.
    gscope: &'static str,
    pbscope: &'static str,
    sscope: &'static str,
    oscope: &'static str,
    pub target: Option<u32>,
    /// `#[tile_kernel(cluster = [c, 1, 1])]`: launched in clusters of `c` blocks (the grid is
    /// a multiple of `c`).
    pub cluster: Option<[u32; 3]>,
    loop_depth: usize,
    /// Depth of loads being generated inside other loads.
    nest: usize,
    /// Collectives being generated around the current expression: their operands may hold
    /// collectives again, two deep at the most (each operand restarts the expression depth,
    /// so without a bound the recursion can branch without end).
    collectives: usize,
    /// Whether the expression being generated may contain a nested effect, and how many more.
    fx_ok: bool,
    fx_budget: usize,
    pending: Pending,
    shared_bytes: usize,
    /// What this kernel exercises (for the coverage summary).
    pub features: BTreeSet<&'static str>,
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        let mut rng = KRng::new(seed);
        // Shapes that are mostly not multiples of anything (but sometimes are).
        let r = if rng.chance(15) {
            rng.pick(&[1, 8, 16])
        } else {
            rng.int(1, 13) as usize
        };
        let c = if rng.chance(15) {
            rng.pick(&[1, 32])
        } else {
            rng.int(1, 25) as usize
        };
        let n = if rng.chance(15) {
            rng.pick(&[1, 64, 256])
        } else {
            rng.int(1, 300) as usize
        };
        let factor = (2..c).find(|f| c % f == 0 && c / f > 1);
        let d3 = match factor {
            Some(f) if rng.chance(35) => vec![r, f, c / f],
            _ => {
                let mut d = vec![
                    rng.int(1, 4) as usize,
                    rng.int(1, 6) as usize,
                    rng.int(1, 9) as usize,
                ];
                if rng.chance(20) {
                    d[rng.below(3)] = 1;
                }
                d
            }
        };
        let slot = (r * c).max(n).max(d3.iter().product()) + 8;
        let accm_op = rng.pick(&["min", "max"]);
        let accb_op = rng.pick(&["and", "or", "xor"]);
        let gscope = if rng.chance(70) { "gpu" } else { "sys" };
        let target = match rng.below(20) {
            0 => Some(70),
            1 => Some(80),
            2 => Some(90),
            _ => None,
        };
        let cluster_ok = target.is_none_or(|t| t >= 90);
        // A cluster shape raises the target to sm_90 (an explicit lower target is an error).
        let cluster = if cluster_ok && rng.chance(15) {
            Some([rng.pick(&[1u32, 2, 4]), 1, 1])
        } else {
            None
        };
        let private_scope = |rng: &mut KRng| {
            if cluster_ok && rng.chance(5) {
                "cluster"
            } else {
                rng.pick(&["cta", "gpu", "sys"])
            }
        };
        let pbscope = private_scope(&mut rng);
        let sscope = private_scope(&mut rng);
        let oscope = private_scope(&mut rng);
        let used_names = ["b", "i32", "bool"]
            .iter()
            .chain(TENSORS.iter())
            .chain(SCALARS.iter())
            .map(|s| s.to_string())
            .collect();
        Gen {
            rng,
            vals: vec![
                ("b".into(), VTy::scalar(Dt::I32)),
                ("k".into(), VTy::scalar(Dt::I32)),
                ("m".into(), VTy::scalar(Dt::I32)),
            ],
            views: vec![],
            muts: vec![],
            used_names,
            no_shadow: vec!["b".into(), "k".into(), "m".into()],
            counter: 0,
            r,
            c,
            n,
            d3,
            stores: 0,
            slot,
            pbs: 0,
            accm_op,
            accb_op,
            gscope,
            pbscope,
            sscope,
            oscope,
            target,
            cluster,
            loop_depth: 0,
            nest: 0,
            collectives: 0,
            fx_ok: false,
            fx_budget: 0,
            pending: Pending::default(),
            shared_bytes: 0,
            features: BTreeSet::new(),
        }
    }

    fn feature(&mut self, f: &'static str) {
        self.features.insert(f);
    }

    // ---- names ----

    /// A fresh variable name: mostly `{prefix}{N}`, sometimes a name that looks like a compiler
    /// temporary or a PTX word.
    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh_odd(prefix, 12)
    }

    /// A fresh name for a `let mut` (or a copy of one): more often like a temporary, as
    /// aliasing a mutable variable is what a name taken for a temporary gets wrong.
    fn fresh_mut(&mut self, prefix: &str) -> String {
        self.fresh_odd(prefix, 35)
    }

    /// A fresh name, like a temporary with probability `temp_like` percent.
    fn fresh_odd(&mut self, prefix: &str, temp_like: usize) -> String {
        self.counter += 1;
        let roll = self.rng.below(100);
        let candidate = if roll < temp_like {
            format!("_t{}", self.counter)
        } else if roll < temp_like + 18 {
            self.rng.pick(ODD_NAMES).to_string()
        } else {
            format!("{prefix}{}", self.counter)
        };
        let name = if self.used_names.contains(&candidate) {
            format!("{prefix}{}", self.counter)
        } else {
            candidate
        };
        if name.starts_with("_t") {
            self.feature("names like temporaries");
        } else if ODD_NAMES.contains(&name.as_str()) {
            self.feature("names like PTX words");
        }
        self.used_names.insert(name.clone());
        name
    }

    /// A name for memory the generator manages itself (never in the value pools).
    fn internal(&mut self, prefix: &str) -> String {
        self.fresh(prefix)
    }

    // ---- shapes ----

    fn main_shapes(&self) -> [Shape; 4] {
        [
            vec![self.r, self.c],
            vec![self.r * self.c],
            vec![self.n],
            self.d3.clone(),
        ]
    }

    fn any_shape(&mut self) -> Shape {
        let s = self.main_shapes();
        let i = self.rng.below(4);
        if i == 3 {
            self.feature("rank-3 tiles");
        }
        s[i].clone()
    }

    /// A shape with `shape`'s element count from the main shapes, other than `shape`.
    fn same_numel_shape(&mut self, shape: &[usize]) -> Option<Shape> {
        let n: usize = shape.iter().product();
        let others: Vec<Shape> = self
            .main_shapes()
            .into_iter()
            .filter(|s| s.as_slice() != shape && s.iter().product::<usize>() == n)
            .collect();
        (!others.is_empty()).then(|| others[self.rng.below(others.len())].clone())
    }

    // ---- statements and their pending effects ----

    /// Push `s` with the statements its nested effects need before and after it.
    fn push(&mut self, out: &mut Vec<Stmt>, s: Stmt) {
        let p = self.take_pending();
        self.push_with(out, p, s);
    }

    fn take_pending(&mut self) -> Pending {
        std::mem::take(&mut self.pending)
    }

    fn push_with(&mut self, out: &mut Vec<Stmt>, p: Pending, s: Stmt) {
        out.extend(p.pre);
        out.push(s);
        if p.post_sync {
            out.push(sync());
        }
        out.extend(p.post);
        self.vals.extend(p.post_vals);
    }

    /// A `sync()` before the current statement (merged with one already there).
    fn pre_sync(&mut self) {
        if !matches!(self.pending.pre.last(), Some(s) if is_sync(s)) {
            self.pending.pre.push(sync());
        }
    }

    fn pure<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let ok = std::mem::replace(&mut self.fx_ok, false);
        let r = f(self);
        self.fx_ok = ok;
        r
    }

    /// Whether a nested effect may go here; takes it from the statement's budget.
    fn take_fx(&mut self) -> bool {
        if self.fx_ok && self.fx_budget > 0 && self.nest <= 1 && self.rng.chance(35) {
            self.fx_budget -= 1;
            true
        } else {
            false
        }
    }

    fn save(&self) -> [usize; 3] {
        [self.vals.len(), self.views.len(), self.muts.len()]
    }
    fn restore(&mut self, s: [usize; 3]) {
        self.vals.truncate(s[0]);
        self.views.truncate(s[1]);
        self.muts.truncate(s[2]);
    }

    fn pick_var(&mut self, ty: &VTy) -> Option<String> {
        let c: Vec<&String> = self
            .vals
            .iter()
            .filter(|(_, t)| t == ty)
            .map(|(n, _)| n)
            .collect();
        (!c.is_empty()).then(|| c[self.rng.below(c.len())].clone())
    }

    // ---- qualifiers ----

    fn sem_expr(&mut self, sem: &str) -> Expr {
        let (tilus, enm, caps) = match sem {
            "relaxed" => ("relaxed", "Relaxed", "RELAXED"),
            "acquire" => ("acquire", "Acquire", "ACQUIRE"),
            "release" => ("release", "Release", "RELEASE"),
            _ => ("acq_rel", "AcqRel", "ACQ_REL"),
        };
        match self.rng.below(4) {
            0 => string(tilus),
            1 => var(tilus),
            2 => path(&format!("MemoryOrder::{enm}")),
            _ => var(caps),
        }
    }

    fn scope_expr(&mut self, scope: &str) -> Expr {
        let (enm, caps) = match scope {
            "cta" => ("Block", "BLOCK"),
            "cluster" => ("Cluster", "CLUSTER"),
            "gpu" => ("Device", "DEVICE"),
            _ => ("Sys", "SYS"),
        };
        match self.rng.below(4) {
            0 => string(scope),
            1 => var(scope),
            2 => path(&format!("MemoryScope::{enm}")),
            _ => var(caps),
        }
    }

    /// `sem = ..` / `scope = ..` (in one of their spellings) for an atomic on `mem` whose
    /// allowed orders are `sems` (the first is the default when none is written).
    fn qualifiers(&mut self, args: &mut Vec<Arg>, mem: Mem, sems: &[&'static str]) {
        let sem = self.rng.chance(40).then(|| self.rng.pick(sems));
        let effective = sem.unwrap_or(sems[0]);
        if let Some(s) = sem {
            let k = self.rng.pick(&["sem", "order", "memory_order", "sem"]);
            let e = self.sem_expr(s);
            args.push(kw(k, e));
        }
        let default_scope = if mem == Mem::Shared { "cta" } else { "gpu" };
        let cluster_ok = self.target.is_none_or(|t| t >= 90);
        let scope = match mem {
            Mem::Acc => Some(self.gscope),
            _ if effective != "relaxed" && mem != Mem::Input => Some(match mem {
                Mem::Shared => self.sscope,
                Mem::Pb => self.pbscope,
                _ => self.oscope,
            }),
            _ if self.rng.chance(30) => Some(if cluster_ok && self.rng.chance(10) {
                "cluster"
            } else {
                self.rng.pick(&["cta", "gpu", "sys"])
            }),
            _ => None,
        };
        if let Some(sc) = scope {
            if sc != default_scope || self.rng.chance(30) {
                let k = self.rng.pick(&["scope", "memory_scope", "scope"]);
                let e = self.scope_expr(sc);
                args.push(kw(k, e));
            }
            if sc == "cluster" {
                self.feature("cluster scope (sm_90)");
            }
        }
    }

    // ---- scalars ----

    fn literal(&mut self) -> Expr {
        match self.rng.below(12) {
            0..=2 => int(self.rng.value() as i64),
            3 => {
                self.feature("suffixed literals");
                match self.rng.below(4) {
                    0 => un(UnOp::Neg, int_suffixed(self.rng.int(0, 100) as u32)),
                    // `-2147483648i32`: `i32::MIN`, one literal after the negation.
                    1 if self.rng.chance(50) => un(UnOp::Neg, int_suffixed(1 << 31)),
                    1 => int_suffixed(i32::MAX as u32),
                    _ => int_suffixed(self.rng.int(0, 100) as u32),
                }
            }
            4 => path(self.rng.pick(&["i32::MIN", "i32::MAX"])),
            _ => int(self.rng.int(-20, 40)),
        }
    }

    /// A small non-negative runtime scalar (for offsets of permutations).
    fn small_runtime(&mut self, mask: i64) -> Expr {
        let s = var(self.rng.pick(&["k", "m", "b"]));
        bin(BinOp::BitAnd, s, int(mask))
    }

    fn scalar_leaf(&mut self) -> Expr {
        loop {
            match self.rng.below(14) {
                0..=4 => {
                    if let Some(v) = self.pick_var(&VTy::scalar(Dt::I32)) {
                        return var(&v);
                    }
                }
                5 | 6 => return self.literal(),
                7 => {
                    // The 3-D grid builtins too: the launch grid is 1-D, so axes 1 and 2 have
                    // index 0 and extent 1 on every backend (a wrong axis would show).
                    let f = self.rng.pick(&["grid_dim", "block_idx"]);
                    if self.rng.chance(60) {
                        return call("grid_dim", vec![]);
                    }
                    self.feature("block_idx/grid_dim with an axis");
                    let axis = self.rng.int(0, 2);
                    let a = if self.rng.chance(20) {
                        kw("axis", int(axis))
                    } else {
                        pos(int(axis))
                    };
                    return call(f, vec![a]);
                }
                8 => return extent(var(self.rng.pick(&["x", "y"])), None),
                9 if !self.views.is_empty() => {
                    let (v, rank) = self.views[self.rng.below(self.views.len())].clone();
                    let axis = (!self.rng.chance(25)).then(|| self.rng.below(rank));
                    return extent(var(&v), axis);
                }
                10 if self.nest == 0 => {
                    // `.item()` of a one-element tile.
                    let s = self
                        .rng
                        .pick(&[&[1usize][..], &[1, 1], &[1, 1, 1]])
                        .to_vec();
                    let t = self.tile(&s, 0);
                    return method(t, "item", vec![]);
                }
                11 if self.take_fx() => return self.fx_scalar(),
                12 | 13 if self.nest == 0 => {
                    let op = self.rng.pick(&["sum", "min", "max"]);
                    let sh = self.any_shape();
                    let t = self.tile(&sh, 0);
                    return method(t, op, vec![]);
                }
                _ => {}
            }
        }
    }

    fn scalar(&mut self, d: usize) -> Expr {
        if d == 0 || self.rng.chance(35) {
            return self.scalar_leaf();
        }
        match self.rng.below(10) {
            0..=3 => {
                let op = self.rng.pick(&ARITH);
                let a = self.scalar(d - 1);
                let b = self.scalar(d - 1);
                self.arith(op, a, b)
            }
            4 => {
                let m = self.rng.pick(&["min", "max"]);
                let a = self.scalar(d - 1);
                let b = self.scalar(d - 1);
                if self.rng.chance(50) {
                    method(a, m, vec![pos(b)])
                } else {
                    call(m, vec![pos(a), pos(b)])
                }
            }
            5 => {
                let op = self.rng.pick(&["sum", "min", "max"]);
                let sh = self.any_shape();
                let t = self.tile(&sh, 1.min(d - 1));
                method(t, op, vec![])
            }
            6 => {
                let c = self.bool_scalar(d - 1);
                if self.rng.chance(50) {
                    let (a, b) = self.pure(|g| (g.scalar(d - 1), g.scalar(d - 1)));
                    if_else(c, a, b)
                } else {
                    let a = self.scalar(d - 1);
                    let b = self.scalar(d - 1);
                    call("select", vec![pos(c), pos(a), pos(b)])
                }
            }
            7 => {
                let op = self.rng.pick(&[UnOp::Neg, UnOp::Not]);
                let a = self.scalar(d - 1);
                un(op, a)
            }
            _ => cast(self.bool_scalar(d - 1), "i32"),
        }
    }

    fn bool_scalar(&mut self, d: usize) -> Expr {
        match self.rng.below(if d == 0 { 3 } else { 8 }) {
            0 | 1 => {
                let op = self.rng.pick(&CMP);
                let a = self.scalar(d.min(1));
                let b = self.scalar(d.min(1));
                bin(op, a, b)
            }
            2 => match self.pick_var(&VTy::scalar(Dt::Bool)) {
                Some(v) => var(&v),
                None => boolean(self.rng.chance(50)),
            },
            3 => {
                let sh = self.any_shape();
                let t = self.bool_tile(&sh, 1);
                method(t, self.rng.pick(&["any", "all"]), vec![])
            }
            4 => {
                let op = self
                    .rng
                    .pick(&[BinOp::And, BinOp::Or, BinOp::BitAnd, BinOp::BitXor]);
                if matches!(op, BinOp::And | BinOp::Or) {
                    let (a, b) = self.pure(|g| (g.bool_scalar(d - 1), g.bool_scalar(d - 1)));
                    bin(op, a, b)
                } else {
                    let a = self.bool_scalar(d - 1);
                    let b = self.bool_scalar(d - 1);
                    bin(op, a, b)
                }
            }
            5 => un(UnOp::Not, self.bool_scalar(d - 1)),
            6 => cast(self.scalar(d - 1), "bool"),
            _ => boolean(self.rng.chance(50)),
        }
    }

    /// `a op b` with the divisor / shift amount made safe and interesting.
    fn arith(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        let b = match op {
            // Never 0, never -1 (i32::MIN / -1 is unspecified on the GPU).
            BinOp::Div | BinOp::Rem => {
                if self.rng.chance(70) {
                    bin(
                        BinOp::BitAnd,
                        bin(BinOp::BitOr, b, int(1)),
                        int(self.rng.pick(&[127, 7, 1023])),
                    )
                } else {
                    un(
                        UnOp::Neg,
                        bin(BinOp::BitOr, bin(BinOp::BitAnd, b, int(63)), int(2)),
                    )
                }
            }
            // Shifts are defined for every amount (clamped, PTX style); mostly keep them small.
            BinOp::Shl | BinOp::Shr if self.rng.chance(75) => bin(BinOp::BitAnd, b, int(31)),
            _ => b,
        };
        bin(op, a, b)
    }

    /// A value of type `ty`.
    pub fn expr(&mut self, ty: &VTy, d: usize) -> Expr {
        match (ty.dt, &ty.shape) {
            (Dt::I32, None) => self.scalar(d),
            (Dt::Bool, None) => self.bool_scalar(d),
            (Dt::I32, Some(s)) => {
                let s = s.clone();
                self.tile(&s, d)
            }
            (Dt::Bool, Some(s)) => {
                let s = s.clone();
                self.bool_tile(&s, d)
            }
        }
    }

    // ---- offsets and views ----

    /// A scalar element offset into `x`/`y`: mostly in or near bounds, sometimes far off.
    fn offset(&mut self) -> Expr {
        match self.rng.below(10) {
            0..=4 => {
                let per = self.rng.int(0, 300);
                let base = self.rng.int(-30, 900);
                add(mul(var("b"), int(per)), int(base))
            }
            5 | 6 => {
                let s = self.scalar(1);
                bin(
                    BinOp::Sub,
                    bin(BinOp::BitAnd, s, int(1023)),
                    int(self.rng.int(0, 50)),
                )
            }
            7 => int(self.rng.int(-600, 2000)),
            8 => self.scalar(1),
            _ => int(self.rng.pick(&[
                i32::MAX as i64,
                i32::MAX as i64 - 7,
                i32::MIN as i64,
                i32::MIN as i64 + 9,
                -1,
            ])),
        }
    }

    /// A small coordinate for an access along an axis of extent `extent`.
    fn coord(&mut self, extent: usize) -> Expr {
        match self.rng.below(6) {
            0..=2 => int(self.rng.int(-2, extent as i64 + 2)),
            3 => bin(BinOp::Rem, var("b"), int(self.rng.int(1, 4))),
            4 => bin(
                BinOp::Sub,
                bin(BinOp::BitAnd, var("k"), int(7)),
                int(self.rng.int(0, 3)),
            ),
            _ => int(0),
        }
    }

    /// A view of `x` or `y` of rank `rank` with runtime or literal dims around `like`.
    fn view_expr(&mut self, rank: usize, like: &[usize]) -> Expr {
        let src = var(self.rng.pick(&["x", "y"]));
        let off = match self.rng.below(5) {
            0 => int(0),
            1 | 2 => self.offset(),
            // An effect in a view's offset: evaluated once, before the load it is under.
            3 if self.take_fx() => {
                self.feature("nested effects in view offsets");
                bin(BinOp::BitAnd, self.fx_scalar(), int(1023))
            }
            _ => mul(var("b"), int(self.rng.int(0, 200))),
        };
        let mut dims = Vec::new();
        for a in 0..rank {
            let e = like.get(a).copied().unwrap_or(4) as i64;
            dims.push(match self.rng.below(4) {
                0 => add(
                    bin(BinOp::BitAnd, var(self.rng.pick(&["k", "m"])), int(15)),
                    int(self.rng.int(0, 4)),
                ),
                _ => int(self.rng.int(if a + 1 == rank { 1 } else { 0 }, e + 6)),
            });
        }
        method(src, "view", vec![pos(off), pos(arr(dims))])
    }

    // ---- tiles ----

    fn load(&mut self, shape: &[usize]) -> Expr {
        self.nest += 1;
        let e = self.load_inner(shape);
        self.nest -= 1;
        e
    }

    fn load_inner(&mut self, shape: &[usize]) -> Expr {
        // Loads nested in the `other`/`mask`/offsets of loads stay simple.
        let simple = self.nest > 1;
        let rank = shape.len();
        let (src, offsets) = if rank == 1 && self.rng.chance(75) {
            (var(self.rng.pick(&["x", "y"])), vec![self.offset()])
        } else {
            let existing: Vec<String> = self
                .views
                .iter()
                .filter(|(_, r)| *r == rank)
                .map(|(n, _)| n.clone())
                .collect();
            let src = if !existing.is_empty() && self.rng.chance(70) {
                var(&existing[self.rng.below(existing.len())])
            } else {
                self.view_expr(rank, shape)
            };
            let offsets = shape.iter().map(|&e| self.coord(e)).collect();
            (src, offsets)
        };
        if rank == 3 {
            self.feature("rank-3 views");
        }
        let mut args = vec![
            pos(src),
            kw("offsets", arr(offsets)),
            kw("shape", shape_e(shape)),
        ];
        if self.rng.chance(60) {
            let o = if simple || self.rng.chance(50) {
                self.literal()
            } else {
                self.scalar(1)
            };
            args.push(kw("other", o));
        }
        if !simple && self.rng.chance(20) {
            let m = self.bool_tile(shape, 0);
            args.push(kw("mask", m));
        }
        call("load_global", args)
    }

    /// A tile of `shape` built from positions (no memory).
    fn arange_tile(&mut self, shape: &[usize]) -> Expr {
        let n: usize = shape.iter().product();
        let rank = shape.len();
        if rank >= 2 && self.rng.chance(50) {
            // Sum of per-axis position terms, broadcast together.
            let mut e: Option<Expr> = None;
            for (axis, &s) in shape.iter().enumerate() {
                let t = mul(arange_along(s, axis, rank), int(self.rng.int(1, 1000)));
                e = Some(match e {
                    None => t,
                    Some(acc) => add(acc, t),
                });
            }
            return e.expect("rank >= 2");
        }
        let a = call("arange", vec![pos(int(n as i64))]);
        let a = if self.rng.chance(40) {
            let s = self.scalar(0);
            bin(
                self.rng.pick(&[BinOp::Add, BinOp::Mul, BinOp::BitXor]),
                a,
                s,
            )
        } else {
            a
        };
        if rank == 1 {
            a
        } else {
            method(a, "reshape", vec![pos(shape_e(shape))])
        }
    }

    /// Two shapes that broadcast (numpy rules, aligned on the right) to exactly `shape`; the
    /// second may have a lower rank.
    fn broadcast_parts(&mut self, shape: &[usize]) -> (Shape, Shape) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for &s in shape {
            match self.rng.below(3) {
                0 => {
                    a.push(s);
                    b.push(1);
                }
                1 => {
                    a.push(1);
                    b.push(s);
                }
                _ => {
                    a.push(s);
                    b.push(s);
                }
            }
        }
        // Drop leading unit axes of `b` (mixed-rank broadcasting).
        while b.len() > 1 && b[0] == 1 && self.rng.chance(50) {
            b.remove(0);
            self.feature("mixed-rank broadcasting");
        }
        (a, b)
    }

    fn tile_leaf(&mut self, shape: &[usize]) -> Expr {
        let n: usize = shape.iter().product();
        loop {
            match self.rng.below(if COLLECTIVES { 16 } else { 14 }) {
                0..=3 => {
                    if let Some(v) = self.pick_var(&VTy::tile(Dt::I32, shape)) {
                        return var(&v);
                    }
                }
                4 => {
                    let c: Vec<String> = self
                        .vals
                        .iter()
                        .filter(|(_, t)| {
                            t.dt == Dt::I32
                                && t.shape
                                    .as_ref()
                                    .is_some_and(|s| s != shape && s.iter().product::<usize>() == n)
                        })
                        .map(|(n, _)| n.clone())
                        .collect();
                    if !c.is_empty() {
                        let t = var(&c[self.rng.below(c.len())]);
                        return method(t, "reshape", vec![pos(shape_e(shape))]);
                    }
                }
                5..=7 => return self.load(shape),
                8 => return self.arange_tile(shape),
                9 => {
                    return match self.rng.below(3) {
                        0 => call("zeros", vec![pos(shape_e(shape))]),
                        1 => call("ones", vec![pos(shape_e(shape))]),
                        _ => {
                            let s = self.scalar(1);
                            call("full", vec![pos(shape_e(shape)), pos(s)])
                        }
                    }
                }
                10 if self.nest <= 1 => {
                    // broadcast_to from a shape with unit axes (maybe of a lower rank).
                    let (src, _) = self.broadcast_parts(shape);
                    let mut src = src;
                    while src.len() > 1 && src[0] == 1 && self.rng.chance(30) {
                        src.remove(0);
                    }
                    if src.as_slice() == shape {
                        continue;
                    }
                    let t = self.small_tile(&src);
                    return method(t, "broadcast_to", vec![pos(shape_e(shape))]);
                }
                11 if self.nest <= 1 && shape.len() >= 2 => {
                    // numpy broadcasting: e.g. [r, 1] op [1, c], [p, 1, w] op [q, 1].
                    let (sa, sb) = self.broadcast_parts(shape);
                    let a = self.small_tile(&sa);
                    let b = self.small_tile(&sb);
                    let op = self.rng.pick(&ARITH);
                    if shape.len() == 3 {
                        self.feature("rank-3 broadcasting");
                    }
                    // The result must have exactly `shape`: at least one operand spans each axis.
                    return self.arith(op, a, b);
                }
                12 | 13 if self.take_fx() => return self.fx_tile(shape),
                14 | 15 if self.nest == 0 && self.collectives < 2 => {
                    self.collectives += 1;
                    let e = self.collective_tile(shape);
                    self.collectives -= 1;
                    return e;
                }
                _ => {}
            }
        }
    }

    // ---- tile collectives ----

    /// A tile of `shape` made by a collective: a scan or sort along an axis, an argsort with
    /// the `take` that applies it, a reduction along an axis kept and broadcast back, an arg
    /// reduction, top-k, equal ranks, a histogram (integers: exact on every backend).
    fn collective_tile(&mut self, shape: &[usize]) -> Expr {
        let rank = shape.len();
        let axis = self.rng.below(rank);
        // Sometimes counted from the end.
        let axis_e = if self.rng.chance(25) {
            int(axis as i64 - rank as i64)
        } else {
            int(axis as i64)
        };
        let t = self.tile(shape, 1);
        let kw_flag = |g: &mut Self, args: &mut Vec<Arg>, name: &str| {
            if g.rng.chance(40) {
                args.push(kw(name, boolean(g.rng.chance(50))));
            }
        };
        match self.rng.below(9) {
            0 | 1 => {
                self.feature("scans");
                let (name, mut args) = if self.rng.chance(50) {
                    ("cumsum", vec![])
                } else {
                    let op = self
                        .rng
                        .pick(&["add", "mul", "min", "max", "and", "or", "xor"]);
                    ("scan", vec![pos(string(op))])
                };
                args.push(kw("axis", axis_e));
                kw_flag(self, &mut args, "exclusive");
                kw_flag(self, &mut args, "reverse");
                method(t, name, args)
            }
            2 => {
                self.feature("sorts");
                let mut args = vec![kw("axis", axis_e)];
                kw_flag(self, &mut args, "descending");
                method(t, "sort", args)
            }
            3 => {
                self.feature("argsort and take");
                let keys = self.tile(shape, 1);
                let mut args = vec![kw("axis", axis_e.clone())];
                kw_flag(self, &mut args, "descending");
                let order = method(keys, "argsort", args);
                method(t, "take", vec![pos(order), kw("axis", axis_e)])
            }
            4 => {
                self.feature("take with computed indices");
                let len = shape[axis] as i64;
                let idx = bin(
                    BinOp::Rem,
                    bin(BinOp::BitAnd, self.tile(shape, 1), int(1023)),
                    int(len + 1),
                );
                method(t, "take", vec![pos(idx), kw("axis", axis_e)])
            }
            5 => {
                self.feature("reductions along an axis");
                let mut src = shape.to_vec();
                src[axis] = self.rng.int(1, 9) as usize;
                let u = self.tile(&src, 1);
                let (name, axis_arg) = match self.rng.below(4) {
                    0 => ("sum", pos(axis_e)),
                    1 => ("sum", kw("axis", axis_e)),
                    2 => ("min", kw("axis", axis_e)),
                    _ => ("max", kw("axis", axis_e)),
                };
                let r = method(u, name, vec![axis_arg, kw("keepdims", boolean(true))]);
                method(r, "broadcast_to", vec![pos(shape_e(shape))])
            }
            6 => {
                self.feature("arg reductions");
                let mut src = shape.to_vec();
                src[axis] = self.rng.int(1, 9) as usize;
                let u = self.tile(&src, 1);
                let name = self.rng.pick(&["argmin", "argmax"]);
                let r = method(
                    u,
                    name,
                    vec![kw("axis", axis_e), kw("keepdims", boolean(true))],
                );
                method(r, "broadcast_to", vec![pos(shape_e(shape))])
            }
            7 => {
                self.feature("top-k");
                let last = rank - 1;
                let mut src = shape.to_vec();
                src[last] = shape[last] + self.rng.int(0, 6) as usize;
                let u = self.tile(&src, 1);
                let name = self.rng.pick(&["topk", "argtopk"]);
                let mut args = vec![pos(int(shape[last] as i64))];
                kw_flag(self, &mut args, "largest");
                method(u, name, args)
            }
            _ => {
                self.feature("equal ranks and histograms");
                if rank == 1 && self.rng.chance(50) {
                    let u = self.any_shape();
                    let keys = bin(BinOp::BitAnd, self.tile(&u, 1), int(self.rng.int(1, 63)));
                    return method(keys, "histogram", vec![pos(int(shape[0] as i64))]);
                }
                method(bin(BinOp::BitAnd, t, int(7)), "equal_rank", vec![])
            }
        }
    }

    /// A tile with unit axes, for broadcasting: a load, positions, or a fill.
    fn small_tile(&mut self, shape: &[usize]) -> Expr {
        let n: usize = shape.iter().product();
        match self.rng.below(5) {
            0 | 1 => self.load(shape),
            2 => {
                let a = call("arange", vec![pos(int(n as i64))]);
                let s = self.scalar(0);
                method(bin(BinOp::Sub, a, s), "reshape", vec![pos(shape_e(shape))])
            }
            3 => match self.pick_var(&VTy::tile(Dt::I32, shape)) {
                Some(v) => var(&v),
                None => call("full", vec![pos(shape_e(shape)), pos(self.scalar(0))]),
            },
            _ => {
                let s = self.scalar(1);
                call("full", vec![pos(shape_e(shape)), pos(s)])
            }
        }
    }

    fn tile(&mut self, shape: &[usize], d: usize) -> Expr {
        if d == 0 || self.rng.chance(25) {
            return self.tile_leaf(shape);
        }
        match self.rng.below(12) {
            0..=4 => {
                let op = self.rng.pick(&ARITH);
                let a = self.tile(shape, d - 1);
                if self.rng.chance(30) {
                    let s = self.scalar(1);
                    if self.rng.chance(50) {
                        self.arith(op, a, s)
                    } else {
                        self.arith(op, s, a)
                    }
                } else {
                    let b = self.tile(shape, d - 1);
                    self.arith(op, a, b)
                }
            }
            5 => {
                let op = self.rng.pick(&[UnOp::Neg, UnOp::Not]);
                un(op, self.tile(shape, d - 1))
            }
            6 | 7 => {
                let c = self.bool_tile(shape, d - 1);
                let value_if = self.rng.chance(50);
                let arm = |g: &mut Self| {
                    if g.rng.chance(30) {
                        g.scalar(1)
                    } else {
                        g.tile(shape, d - 1)
                    }
                };
                if value_if {
                    let (a, b) = self.pure(|g| (arm(g), arm(g)));
                    if_else(c, a, b)
                } else {
                    let a = arm(self);
                    let b = arm(self);
                    call("select", vec![pos(c), pos(a), pos(b)])
                }
            }
            8 => {
                let m = self.rng.pick(&["min", "max"]);
                let a = self.tile(shape, d - 1);
                let b = if self.rng.chance(30) {
                    self.scalar(1)
                } else {
                    self.tile(shape, d - 1)
                };
                call(m, vec![pos(a), pos(b)])
            }
            9 if self.rng.chance(15) => cast(self.tile(shape, d - 1), Dt::I32.name()),
            9 => cast(self.bool_tile(shape, d - 1), Dt::I32.name()),
            10 => match self.same_numel_shape(shape) {
                // The same elements through another shape.
                Some(o) => {
                    let t = self.tile(&o, d - 1);
                    method(t, "reshape", vec![pos(shape_e(shape))])
                }
                None => self.tile(shape, d - 1),
            },
            _ => {
                // A tile and a (uniform) scalar condition.
                let c = self.bool_scalar(1);
                let a = self.tile(shape, d - 1);
                let b = self.tile(shape, d - 1);
                call("select", vec![pos(c), pos(a), pos(b)])
            }
        }
    }

    fn bool_tile(&mut self, shape: &[usize], d: usize) -> Expr {
        match self.rng.below(if d == 0 { 3 } else { 7 }) {
            0 | 1 => {
                let op = self.rng.pick(&CMP);
                let a = self.tile(shape, d.min(1));
                let b = if self.rng.chance(50) {
                    self.scalar(1)
                } else {
                    self.tile(shape, 0)
                };
                if self.rng.chance(50) {
                    bin(op, a, b)
                } else {
                    bin(op, b, a)
                }
            }
            2 => match self.pick_var(&VTy::tile(Dt::Bool, shape)) {
                Some(v) => var(&v),
                None => {
                    let t = self.tile(shape, 0);
                    cast(t, "bool")
                }
            },
            3 => {
                let op = self.rng.pick(&[
                    BinOp::And,
                    BinOp::Or,
                    BinOp::BitAnd,
                    BinOp::BitOr,
                    BinOp::BitXor,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                let pure = matches!(op, BinOp::And | BinOp::Or);
                let scalar_rhs = self.rng.chance(25);
                let gen = |g: &mut Self| {
                    let a = g.bool_tile(shape, d - 1);
                    let b = if scalar_rhs {
                        g.bool_scalar(0)
                    } else {
                        g.bool_tile(shape, d - 1)
                    };
                    (a, b)
                };
                let (a, b) = if pure { self.pure(gen) } else { gen(self) };
                bin(op, a, b)
            }
            4 => un(UnOp::Not, self.bool_tile(shape, d - 1)),
            5 => cast(self.tile(shape, d - 1), "bool"),
            _ => {
                let c = self.bool_scalar(0);
                let a = self.bool_tile(shape, d - 1);
                let b = self.bool_tile(shape, d - 1);
                call("select", vec![pos(c), pos(a), pos(b)])
            }
        }
    }

    // ---- indices ----

    /// A permutation of `0..n` as an `[n]` tile (or, shifted, an injective map into a range
    /// around it), from positions and a literal or runtime offset.
    fn perm(&mut self, n: usize, shift: bool) -> Expr {
        let e = match self.rng.below(4) {
            0 if n > 1 => bin(
                BinOp::Sub,
                int(n as i64 - 1),
                call("arange", vec![pos(int(n as i64))]),
            ),
            1 if n.is_power_of_two() => {
                let x = self.rng.below(n) as i64;
                bin(
                    BinOp::BitXor,
                    call("arange", vec![pos(int(n as i64))]),
                    int(x),
                )
            }
            _ => {
                // (i * a + c) % n with gcd(a, n) = 1 and c >= 0.
                let a = (1..=13).filter(|a| gcd(*a, n) == 1).collect::<Vec<_>>();
                let a = self.rng.pick(&a) as i64;
                let c = if self.rng.chance(50) {
                    int(self.rng.int(0, 100))
                } else {
                    self.small_runtime(255)
                };
                bin(
                    BinOp::Rem,
                    add(mul(call("arange", vec![pos(int(n as i64))]), int(a)), c),
                    int(n as i64),
                )
            }
        };
        if shift && self.rng.chance(40) {
            add(e, int(self.rng.int(-2, 3)))
        } else {
            e
        }
    }

    /// An index tile of `shape` whose values are distinct along axis `dim` for every fixed
    /// position on the other axes (collision-free for a scatter along `dim`); `in_range` keeps
    /// them in `0..shape[dim]`.
    fn perm_along(&mut self, shape: &[usize], dim: usize, in_range: bool) -> Expr {
        let rank = shape.len();
        if rank == 1 {
            return self.perm(shape[0], !in_range);
        }
        let s = shape[dim];
        let a = (1..=13).filter(|a| gcd(*a, s) == 1).collect::<Vec<_>>();
        let a = self.rng.pick(&a) as i64;
        // (pos_dim * a + sum_k pos_k * c_k + c) % s: a permutation along `dim` for every fiber.
        let mut e = mul(arange_along(s, dim, rank), int(a));
        let mut covered = vec![1; rank];
        covered[dim] = s;
        for k in 0..rank {
            if k != dim && shape[k] > 1 && self.rng.chance(60) {
                e = add(
                    e,
                    mul(arange_along(shape[k], k, rank), int(self.rng.int(1, 9))),
                );
                covered[k] = shape[k];
            }
        }
        let c = if self.rng.chance(50) {
            int(self.rng.int(0, 50))
        } else {
            self.small_runtime(127)
        };
        let mut e = bin(BinOp::Rem, add(e, c), int(s as i64));
        if !in_range && self.rng.chance(40) {
            e = add(e, int(self.rng.int(-1, 2)));
        }
        if covered.as_slice() != shape {
            e = method(e, "broadcast_to", vec![pos(shape_e(shape))]);
        }
        e
    }

    /// Indices into an axis of extent `h` that may collide: mostly in range, some negative or
    /// past it.
    fn indices(&mut self, shape: &[usize], h: usize) -> Expr {
        let t = self.tile(shape, 1);
        match self.rng.below(3) {
            0 => bin(BinOp::Rem, t, int(h as i64 + self.rng.int(0, 3))),
            1 => bin(
                BinOp::Sub,
                bin(
                    BinOp::Rem,
                    bin(BinOp::BitAnd, t, int(1023)),
                    int(h as i64 + 2),
                ),
                int(1),
            ),
            _ => bin(BinOp::BitAnd, t, int(self.rng.pick(&[0, 1, 3, 7, 63]))),
        }
    }

    /// Indices in `0..h` (for `check_bounds = false`).
    fn indices_in_range(&mut self, shape: &[usize], h: usize) -> Expr {
        let t = self.tile(shape, 1);
        if h.is_power_of_two() {
            bin(BinOp::BitAnd, t, int(h as i64 - 1))
        } else {
            bin(
                BinOp::Rem,
                bin(BinOp::BitAnd, t, int(0x7fff)),
                int(h as i64),
            )
        }
    }

    /// cuTile `indices` for a rank-`dims.len()` array whose result has `shape`, collision-free:
    /// one permutation per axis (as tiles running along that axis, broadcast together; or a
    /// flat permutation reshaped for a rank-1 array), with some scalar coordinates. With
    /// `in_range` every index is inside `dims`.
    fn injective_indices(&mut self, dims: &[usize], shape: &[usize], in_range: bool) -> Expr {
        let rank = dims.len();
        if rank == 1 {
            let n: usize = shape.iter().product();
            let p = self.perm(n, !in_range);
            return if shape.len() == 1 {
                p
            } else {
                method(p, "reshape", vec![pos(shape_e(shape))])
            };
        }
        debug_assert_eq!(rank, shape.len());
        // A scalar coordinate for some unit axes, but never for all (all-scalar indices give a
        // one-element rank-1 operation, which a rank-3 update would not broadcast to).
        let scalar_axis: Vec<bool> = (0..rank)
            .map(|k| shape[k] == 1 && self.rng.chance(50))
            .collect();
        let all_scalar = scalar_axis.iter().all(|&s| s);
        let items = (0..rank)
            .map(|k| {
                if scalar_axis[k] && !(all_scalar && k == rank - 1) {
                    int(if in_range { 0 } else { self.rng.int(0, 1) })
                } else {
                    let p = self.perm(shape[k], !in_range);
                    let mut s = vec![1; rank];
                    s[k] = shape[k];
                    method(p, "reshape", vec![pos(shape_e(&s))])
                }
            })
            .collect();
        tuple(items)
    }

    // ---- memory the generator manages ----

    /// A fresh shared tensor of `shape`, filled (between barriers) before the current statement.
    fn fresh_shared(&mut self, shape: &[usize]) -> Option<String> {
        let bytes = shape.iter().product::<usize>() * 4;
        if self.shared_bytes + bytes > 48 * 1024 {
            return None;
        }
        self.shared_bytes += bytes.next_multiple_of(16);
        let name = self.internal("e");
        let alloc = if self.rng.chance(80) {
            call(
                "shared_tensor",
                vec![pos(var(Dt::I32.name())), pos(shape_e(shape))],
            )
        } else {
            ex(ExprKind::Call {
                path: vec!["shared_tensor".into()],
                path_span: S,
                generics: vec![GenericArg::Type(Dt::I32.name().into(), S)],
                args: vec![pos(shape_e(shape))],
            })
        };
        let init = self.pure(|g| {
            if g.rng.chance(50) {
                g.tile(shape, 1)
            } else {
                g.arange_tile(shape)
            }
        });
        self.pending.pre.push(let_(&name, false, alloc));
        self.pre_sync();
        self.pending.pre.push(expr_stmt(call(
            "store_shared",
            vec![pos(var(&name)), pos(init)],
        )));
        self.pending.pre.push(sync());
        Some(name)
    }

    /// After the current statement: `sync()`, then (sometimes) `let t = load_shared(e)` into
    /// the pool.
    fn read_back_shared(&mut self, e: &str, shape: &[usize]) {
        self.pending.post_sync = true;
        if self.rng.chance(50) {
            let t = self.fresh("t");
            self.pending
                .post
                .push(let_(&t, false, call("load_shared", vec![pos(var(e))])));
            self.pending.post_vals.push((t, VTy::tile(Dt::I32, shape)));
        }
    }

    /// The next `pb` slot of this block: `(b * NPB + j) * slot`, or `None` when all are used.
    fn pb_slot(&mut self) -> Option<Expr> {
        if self.pbs >= NPB {
            return None;
        }
        let j = self.pbs;
        self.pbs += 1;
        Some(mul(
            add(mul(var("b"), int(NPB as i64)), int(j as i64)),
            int(self.slot as i64),
        ))
    }

    /// Dims of a view with `rank` axes around `shape` holding at most `slot` elements.
    fn slot_dims(&mut self, shape: &[usize]) -> Vec<usize> {
        for _ in 0..64 {
            let d: Vec<usize> = shape
                .iter()
                .map(|&s| (s as i64 + self.rng.int(-1, 2)).max(1) as usize)
                .collect();
            if d.iter().product::<usize>() <= self.slot {
                return d;
            }
        }
        // A shape far over the slot (a collective's operand can be one), where no draw fits:
        // halve the longest axis until the view does (the elements past it are inactive). The
        // draws above once looped for ever on such a shape (clock seed 6750316347915092529).
        let mut d = shape.to_vec();
        while d.iter().product::<usize>() > self.slot {
            let longest = (0..d.len()).max_by_key(|&i| d[i]).expect("rank >= 1");
            d[longest] = d[longest].div_ceil(2);
        }
        d
    }

    /// A view of a `pb` slot with the given dims (so accesses stay inside the slot).
    fn pb_view(&mut self, base: Expr, dims: &[usize]) -> Expr {
        method(
            var("pb"),
            "view",
            vec![
                pos(base),
                pos(arr(dims.iter().map(|&d| int(d as i64)).collect())),
            ],
        )
    }

    /// After the current statement: `sync()`, and sometimes a load of the slot into the pool.
    fn read_back_pb(&mut self, base: Expr) {
        self.pending.post_sync = true;
        if self.rng.chance(40) {
            let shape = self.any_shape();
            let t = self.fresh("t");
            let load = call(
                "load_global",
                vec![
                    pos(self.pb_view(base, &[self.slot])),
                    kw("offsets", arr(vec![int(0)])),
                    kw("shape", shape_e(&[shape.iter().product()])),
                ],
            );
            let load = if shape.len() == 1 {
                load
            } else {
                method(load, "reshape", vec![pos(shape_e(&shape))])
            };
            self.pending.post.push(let_(&t, false, load));
            self.pending.post_vals.push((t, VTy::tile(Dt::I32, &shape)));
        }
    }

    // ---- nested effects ----

    /// A tile of `shape` produced by an effect whose result is deterministic.
    fn fx_tile(&mut self, shape: &[usize]) -> Expr {
        self.feature("nested effects");
        for _ in 0..4 {
            let e = match self.rng.below(5) {
                0 => self.shared_elementwise_expr(shape),
                1 => self.pb_elementwise_expr(shape),
                2 => self.indexed_rmw_expr(shape, true),
                3 => self.indexed_rmw_expr(shape, false),
                _ => Some(self.atomic_load_input(Some(shape))),
            };
            if let Some(e) = e {
                return e;
            }
        }
        self.atomic_load_input(Some(shape))
    }

    /// A scalar produced by an effect whose result is deterministic.
    fn fx_scalar(&mut self) -> Expr {
        self.feature("nested effects");
        match self.rng.below(4) {
            0 => {
                let sh = self.any_shape();
                let t = self.fx_tile(&sh);
                method(t, self.rng.pick(&["sum", "min", "max"]), vec![])
            }
            1 => self.atomic_load_input(None),
            _ => {
                let in_pb = self.rng.chance(60);
                self.indexed_rmw_scalar(in_pb)
                    .unwrap_or_else(|| self.atomic_load_input(None))
            }
        }
    }

    /// `atomic::shared_{op}(e, ..)` on a fresh shared tensor (each element its own address).
    fn shared_elementwise_expr(&mut self, shape: &[usize]) -> Option<Expr> {
        let e = self.fresh_shared(shape)?;
        let op = self.rng.pick(&["add", "sub", "min", "max", "exch", "cas"]);
        let mut args = vec![pos(var(&e))];
        if op == "cas" {
            let c = self.value_arg(shape);
            args.push(kw("compare", c));
        }
        let v = self.value_arg(shape);
        args.push(kw("values", v));
        if self.rng.chance(30) {
            let m = self.bool_tile(shape, 1);
            args.push(kw("mask", m));
        }
        self.qualifiers(
            &mut args,
            Mem::Shared,
            &["relaxed", "acquire", "release", "acq_rel"],
        );
        self.read_back_shared(&e, shape);
        Some(call(&format!("atomic::shared_{op}"), args))
    }

    /// A tile of `shape` or (sometimes) a scalar, for `values`/`compare`.
    fn value_arg(&mut self, shape: &[usize]) -> Expr {
        if self.rng.chance(20) {
            self.scalar(1)
        } else {
            self.tile(shape, 1)
        }
    }

    /// `atomic::global_{op}(pb.view(..), values, offsets)` on a fresh slot of `pb`.
    fn pb_elementwise_expr(&mut self, shape: &[usize]) -> Option<Expr> {
        let base = self.pb_slot()?;
        self.feature("atomics on per-block slots");
        self.pre_sync();
        let dims = self.slot_dims(shape);
        let view = self.pb_view(base.clone(), &dims);
        let op = self.rng.pick(&["add", "sub", "min", "max", "exch", "cas"]);
        let mut args = vec![pos(view)];
        if op == "cas" {
            let c = self.value_arg(shape);
            args.push(kw("compare", c));
        }
        let v = self.tile(shape, 1);
        args.push(kw("values", v));
        if self.rng.chance(70) {
            let offs = shape.iter().map(|_| int(self.rng.int(-1, 2))).collect();
            args.push(kw("offsets", arr(offs)));
        }
        if self.rng.chance(30) {
            let m = self.bool_tile(shape, 1);
            args.push(kw("mask", m));
        }
        self.qualifiers(
            &mut args,
            Mem::Pb,
            &["relaxed", "acquire", "release", "acq_rel"],
        );
        self.read_back_pb(base);
        Some(call(&format!("atomic::global_{op}"), args))
    }

    /// The keyword or positional form of an argument, at random (positional only while no
    /// keyword came before).
    fn arg(&mut self, args: &mut Vec<Arg>, name: &str, aliases: &[&str], value: Expr) {
        let keyword_before = args.iter().any(|a| a.name.is_some());
        if !keyword_before && self.rng.chance(60) {
            args.push(pos(value));
        } else {
            let mut names = vec![name];
            names.extend_from_slice(aliases);
            args.push(kw(self.rng.pick(&names), value));
        }
    }

    /// cuTile `atomic_{op}(array, indices, ..)` with collision-free indices on a fresh `pb`
    /// slot (`in_pb`) or a fresh shared tensor; the result (of `shape`) is deterministic.
    fn indexed_rmw_expr(&mut self, shape: &[usize], in_pb: bool) -> Option<Expr> {
        let rank = if self.rng.chance(40) { 1 } else { shape.len() };
        let (array, dims, mem, base) = if in_pb {
            let base = self.pb_slot()?;
            self.pre_sync();
            let dims = if rank == 1 {
                vec![self.slot]
            } else {
                self.slot_dims(shape)
            };
            (self.pb_view(base.clone(), &dims), dims, Mem::Pb, Some(base))
        } else {
            let dims = if rank == 1 {
                vec![shape.iter().product::<usize>() + self.rng.below(3)]
            } else {
                shape
                    .iter()
                    .map(|&s| s + self.rng.below(2))
                    .collect::<Vec<_>>()
            };
            let e = self.fresh_shared(&dims)?;
            (var(&e), dims, Mem::Shared, None)
        };
        let check_bounds = match mem {
            Mem::Shared => self.rng.below(3),
            _ => self.rng.below(2),
        };
        let in_range = check_bounds == 2;
        let idx = self.injective_indices(&dims, shape, in_range);
        let op = self.rng.pick(&[
            "add", "sub", "min", "max", "and", "or", "xor", "xchg", "cas",
        ]);
        self.feature("cuTile indexed atomics");
        let mut args = vec![pos(array)];
        self.arg(&mut args, "indices", &["index"], idx);
        if op == "cas" {
            let e = self.value_arg(shape);
            self.arg(&mut args, "expected", &[], e);
            let d = self.value_arg(shape);
            self.arg(&mut args, "desired", &[], d);
        } else {
            let u = self.update_arg(shape);
            self.arg(&mut args, "update", &["value", "values"], u);
        }
        match check_bounds {
            1 => args.push(kw("check_bounds", boolean(true))),
            2 => {
                self.feature("check_bounds = false");
                args.push(kw("check_bounds", boolean(false)))
            }
            _ => {}
        }
        self.qualifiers(&mut args, mem, &["acq_rel", "relaxed"]);
        match base {
            Some(b) => self.read_back_pb(b),
            None => self.pending.post_sync = true,
        }
        Some(call(&format!("atomic_{op}"), args))
    }

    /// An update operand that broadcasts to `shape`: a tile of it, of a broadcastable shape, or
    /// a scalar.
    fn update_arg(&mut self, shape: &[usize]) -> Expr {
        match self.rng.below(5) {
            0 => self.scalar(1),
            1 => {
                let (a, _) = self.broadcast_parts(shape);
                self.small_tile(&a)
            }
            _ => self.tile(shape, 1),
        }
    }

    /// A scalar-index cuTile RMW on a fresh `pb` slot or shared tensor: a scalar result.
    fn indexed_rmw_scalar(&mut self, in_pb: bool) -> Option<Expr> {
        let (array, extent, mem, base) = if in_pb {
            let base = self.pb_slot()?;
            self.pre_sync();
            (
                self.pb_view(base.clone(), &[self.slot]),
                self.slot,
                Mem::Pb,
                Some(base),
            )
        } else {
            let h = self.rng.int(1, 40) as usize;
            let e = self.fresh_shared(&[h])?;
            (var(&e), h, Mem::Shared, None)
        };
        let i = int(self.rng.int(-1, extent as i64));
        let op = self.rng.pick(&[
            "add", "sub", "min", "max", "and", "or", "xor", "xchg", "cas",
        ]);
        self.feature("cuTile indexed atomics");
        self.feature("scalar-index atomics");
        let mut args = vec![pos(array)];
        self.arg(&mut args, "indices", &["index"], i);
        let n = if op == "cas" { 2 } else { 1 };
        for j in 0..n {
            let v = self.scalar(1);
            let name = match (op, j) {
                ("cas", 0) => "expected",
                ("cas", _) => "desired",
                _ => "update",
            };
            self.arg(&mut args, name, &[], v);
        }
        self.qualifiers(&mut args, mem, &["acq_rel", "relaxed"]);
        match base {
            Some(b) => self.read_back_pb(b),
            None => self.pending.post_sync = true,
        }
        Some(call(&format!("atomic_{op}"), args))
    }

    /// `atomic_load` from the read-only inputs: a tile of `shape` (tile indices) or a scalar.
    fn atomic_load_input(&mut self, shape: Option<&[usize]>) -> Expr {
        self.feature("atomic_load");
        let src = self.rng.pick(&["x", "y"]);
        let two_d = self.rng.chance(30);
        let mut check_false = false;
        let (array, idx) = match (shape, two_d) {
            (Some(s), false) => {
                let n: usize = s.iter().product();
                check_false = self.rng.chance(20);
                let flat = if check_false {
                    self.indices_in_range(&[n], 64)
                } else {
                    self.indices(&[n], 1500)
                };
                let idx = if s.len() == 1 {
                    flat
                } else {
                    method(flat, "reshape", vec![pos(shape_e(s))])
                };
                (var(src), idx)
            }
            (None, false) => {
                let i = match self.rng.below(3) {
                    0 => int(self.rng.int(-2, 1600)),
                    1 => bin(BinOp::BitAnd, var(self.rng.pick(&["k", "m"])), int(1023)),
                    _ => self.scalar(1),
                };
                (var(src), i)
            }
            (shape, true) => {
                // Rank-2 view of the input, (rows, cols) indices broadcast together.
                let v = method(
                    var(src),
                    "view",
                    vec![
                        pos(int(self.rng.int(0, 64))),
                        pos(arr(vec![int(8), int(16)])),
                    ],
                );
                let idx = match shape {
                    Some(s) if s.len() == 2 => tuple(vec![
                        method(
                            bin(
                                BinOp::Rem,
                                call("arange", vec![pos(int(s[0] as i64))]),
                                int(self.rng.int(1, 10)),
                            ),
                            "reshape",
                            vec![pos(shape_e(&[s[0], 1]))],
                        ),
                        bin(BinOp::BitAnd, self.tile(&[1, s[1]], 0), int(15)),
                    ]),
                    Some(s) => {
                        let n: usize = s.iter().product();
                        let rows =
                            bin(BinOp::Rem, call("arange", vec![pos(int(n as i64))]), int(9));
                        let rows = if s.len() == 1 {
                            rows
                        } else {
                            method(rows, "reshape", vec![pos(shape_e(s))])
                        };
                        tuple(vec![rows, bin(BinOp::BitAnd, var("k"), int(15))])
                    }
                    None => tuple(vec![int(self.rng.int(0, 9)), int(self.rng.int(0, 17))]),
                };
                (v, idx)
            }
        };
        let mut args = vec![pos(array)];
        self.arg(&mut args, "indices", &["index"], idx);
        if check_false {
            self.feature("check_bounds = false");
            args.push(kw("check_bounds", boolean(false)));
        }
        self.qualifiers(&mut args, Mem::Input, &["acquire", "relaxed"]);
        call("atomic_load", args)
    }

    // ---- statements ----

    /// `let name = value;` into the pool.
    fn let_val(&mut self, out: &mut Vec<Stmt>, prefix: &str, ty: VTy, d: usize) {
        let e = self.expr(&ty, d);
        let name = self.fresh(prefix);
        self.push(out, let_(&name, false, e));
        self.vals.push((name, ty));
    }

    /// `store_global` of a tile into this statement's own slot of `out`.
    fn store(&mut self, out: &mut Vec<Stmt>) {
        let Some(slot_base) = self.out_slot() else {
            return;
        };
        let shape = self.any_shape();
        let numel: usize = shape.iter().product();
        let value = self.tile(&shape, 2);
        let (dst, offsets) = if shape.len() == 1 {
            let d = self.rng.int(0, (self.slot - numel) as i64);
            (var("out"), vec![add(slot_base, int(d))])
        } else {
            // Through a view of the slot: elements outside the view's dims are inactive, so
            // nothing lands outside the slot (the view holds at most `slot` elements).
            let dims = loop {
                let d: Vec<i64> = shape
                    .iter()
                    .map(|&s| self.rng.int(0, s as i64 + 3))
                    .collect();
                if d.iter().product::<i64>() <= self.slot as i64 {
                    break d;
                }
            };
            let v = method(
                var("out"),
                "view",
                vec![
                    pos(slot_base),
                    pos(arr(dims.into_iter().map(int).collect())),
                ],
            );
            let offs = shape.iter().map(|_| int(self.rng.int(-1, 2))).collect();
            (v, offs)
        };
        let mut args = vec![pos(dst), pos(value), kw("offsets", arr(offsets))];
        if self.rng.chance(60) {
            let m = if self.rng.chance(80) {
                self.bool_tile(&shape, 2)
            } else {
                self.bool_scalar(1)
            };
            args.push(kw("mask", m));
        }
        self.push(out, expr_stmt(call("store_global", args)));
    }

    /// The next `out` slot of this block: `(b * NS + j) * slot`, or `None` when all are used.
    fn out_slot(&mut self) -> Option<Expr> {
        if self.stores >= NS {
            return None;
        }
        let j = self.stores;
        self.stores += 1;
        Some(mul(
            add(mul(var("b"), int(NS as i64)), int(j as i64)),
            int(self.slot as i64),
        ))
    }

    fn shared_round_trip(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let Some(sh) = self.fresh_shared(&shape) else {
            return;
        };
        let t = self.fresh("t");
        let mut load = call("load_shared", vec![pos(var(&sh))]);
        let mut tshape = shape.clone();
        if self.rng.chance(30) {
            if let Some(o) = self.same_numel_shape(&shape) {
                load = method(load, "reshape", vec![pos(shape_e(&o))]);
                tshape = o;
            }
        }
        self.push(out, let_(&t, false, load));
        self.vals.push((t, VTy::tile(Dt::I32, &tshape)));
    }

    /// A shared tensor of `shape`'s rank with extent `h` along `dim` (the other axes as in
    /// `shape`), and the scatter's indices shape.
    fn scatter_shapes(&mut self) -> (Shape, Shape, usize) {
        let h = self.rng.int(1, 48) as usize;
        match self.rng.below(4) {
            0 => {
                let s = if self.rng.chance(50) {
                    vec![self.n]
                } else {
                    vec![self.r * self.c]
                };
                (vec![h], s, 0)
            }
            1 => (vec![h, self.c], vec![self.r, self.c], 0),
            2 => (vec![self.r, h], vec![self.r, self.c], 1),
            _ => {
                self.feature("rank-3 scatter");
                let dim = self.rng.below(3);
                let mut hs = self.d3.clone();
                hs[dim] = self.rng.int(1, 12) as usize;
                (hs, self.d3.clone(), dim)
            }
        }
    }

    /// Scatter RMW into a fresh shared histogram, read back after a barrier.
    fn shared_scatter(&mut self, out: &mut Vec<Stmt>) {
        let (hshape, ishape, dim) = self.scatter_shapes();
        let Some(name) = self.fresh_shared(&hshape) else {
            return;
        };
        let idx = self.indices(&ishape, hshape[dim]);
        let op = self.rng.pick(&["add", "sub", "min", "max"]);
        let values = self.value_arg(&ishape);
        let mut args = vec![
            pos(var(&name)),
            kw("dim", int(dim as i64)),
            kw("indices", idx),
            kw("values", values),
        ];
        if self.rng.chance(40) {
            let m = self.bool_tile(&ishape, 1);
            args.push(kw("mask", m));
        }
        self.qualifiers(
            &mut args,
            Mem::Shared,
            &["relaxed", "acquire", "release", "acq_rel"],
        );
        self.pending.post_sync = true;
        self.push(
            out,
            expr_stmt(call(&format!("atomic::shared_scatter_{op}"), args)),
        );
        self.read_shared_into_pool(out, &name, &hshape);
    }

    /// `let t = load_shared(h)` (reshaped to a pool shape, or reduced to a scalar).
    fn read_shared_into_pool(&mut self, out: &mut Vec<Stmt>, name: &str, hshape: &[usize]) {
        let t = self.fresh("t");
        let mut load = call("load_shared", vec![pos(var(name))]);
        let hn: usize = hshape.iter().product();
        let target = self
            .main_shapes()
            .into_iter()
            .find(|s| s.iter().product::<usize>() == hn);
        match target {
            Some(s) => {
                if s != hshape {
                    load = method(load, "reshape", vec![pos(shape_e(&s))]);
                }
                self.push(out, let_(&t, false, load));
                self.vals.push((t, VTy::tile(Dt::I32, &s)));
            }
            None => {
                let red = self.rng.pick(&["sum", "min", "max"]);
                self.push(out, let_(&t, false, method(load, red, vec![])));
                self.vals.push((t, VTy::scalar(Dt::I32)));
            }
        }
    }

    /// Element-wise RMW on a fresh shared tensor; its (uncontended) pre-RMW values are used.
    fn shared_elementwise(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let Some(e) = self.shared_elementwise_expr(&shape) else {
            return;
        };
        let old = self.fresh("old");
        self.push(out, let_(&old, false, e));
        self.vals.push((old, VTy::tile(Dt::I32, &shape)));
    }

    /// Which accumulator buffer and op for a tilus atomic: `acc` takes add/sub, `accm` the
    /// kernel's min or max.
    fn acc_op(&mut self) -> (&'static str, &'static str) {
        if self.rng.chance(50) {
            ("acc", self.rng.pick(&["add", "sub"]))
        } else {
            ("accm", self.accm_op)
        }
    }

    fn global_scatter(&mut self, out: &mut Vec<Stmt>) {
        let (buf, op) = self.acc_op();
        let (dst, ishape, dim) = match self.rng.below(5) {
            0..=2 => {
                let s = if self.rng.chance(50) {
                    vec![self.n]
                } else {
                    vec![self.r * self.c]
                };
                (var(buf), s, 0)
            }
            3 => {
                let rows = self.rng.int(1, self.r as i64 + 8);
                let cols = self.rng.int(1, self.c as i64 + 8);
                let off = int(self.rng.int(-3, 20));
                let v = method(
                    var(buf),
                    "view",
                    vec![pos(off), pos(arr(vec![int(rows), int(cols)]))],
                );
                (v, vec![self.r, self.c], self.rng.below(2))
            }
            _ => {
                let dims: Vec<Expr> = self
                    .d3
                    .iter()
                    .map(|&d| int(self.rng.int(1, d as i64 + 3)))
                    .collect();
                let v = method(
                    var(buf),
                    "view",
                    vec![pos(int(self.rng.int(0, 20))), pos(arr(dims))],
                );
                (v, self.d3.clone(), self.rng.below(3))
            }
        };
        let t = self.tile(&ishape, 1);
        let idx = if dim == 0 && ishape.len() == 1 {
            // Relative to the runtime length: some indices negative, some past the end.
            bin(
                BinOp::Rem,
                t,
                add(extent(var(buf), None), int(self.rng.int(1, 6))),
            )
        } else {
            self.indices(&ishape, 8)
        };
        let values = self.value_arg(&ishape);
        let mut args = vec![
            pos(dst),
            kw("dim", int(dim as i64)),
            kw("indices", idx),
            kw("values", values),
        ];
        if self.rng.chance(40) {
            let m = self.bool_tile(&ishape, 1);
            args.push(kw("mask", m));
        }
        self.qualifiers(
            &mut args,
            Mem::Acc,
            &["relaxed", "acquire", "release", "acq_rel"],
        );
        self.push(
            out,
            expr_stmt(call(&format!("atomic::global_scatter_{op}"), args)),
        );
    }

    fn global_elementwise(&mut self, out: &mut Vec<Stmt>) {
        let (buf, op) = self.acc_op();
        let shape = self.any_shape();
        let (dst, offsets) = if shape.len() == 1 {
            let o = match self.rng.below(3) {
                0 => int(self.rng.int(-10, 100)),
                1 => mul(var("b"), int(self.rng.int(0, 40))),
                _ => bin(
                    BinOp::Sub,
                    bin(BinOp::BitAnd, self.scalar(1), int(127)),
                    int(5),
                ),
            };
            (var(buf), vec![o])
        } else {
            let dims = shape
                .iter()
                .map(|&s| int(self.rng.int(1, s as i64 + 4)))
                .collect();
            let v = method(
                var(buf),
                "view",
                vec![pos(int(self.rng.int(0, 30))), pos(arr(dims))],
            );
            let offs = shape.iter().map(|_| self.coord(2)).collect();
            (v, offs)
        };
        let values = self.tile(&shape, 2);
        let mut args = vec![pos(dst), kw("values", values), kw("offsets", arr(offsets))];
        if self.rng.chance(40) {
            let m = self.bool_tile(&shape, 1);
            args.push(kw("mask", m));
        }
        self.qualifiers(
            &mut args,
            Mem::Acc,
            &["relaxed", "acquire", "release", "acq_rel"],
        );
        self.push(out, expr_stmt(call(&format!("atomic::global_{op}"), args)));
    }

    /// A cuTile indexed RMW whose result is unused, with indices that may collide: on the
    /// accumulators (each with its one commuting op), on a `pb` slot or a fresh shared tensor
    /// (any commuting op; read back afterwards).
    fn indexed_rmw_stmt(&mut self, out: &mut Vec<Stmt>) {
        self.feature("cuTile indexed atomics");
        let shape = self.any_shape();
        let target = self.rng.below(4);
        let (array, dims, mem, op): (Expr, Vec<usize>, Mem, &str) = match target {
            0 | 1 => {
                let (buf, op) = match self.rng.below(3) {
                    0 => ("acc", self.rng.pick(&["add", "sub"])),
                    1 => ("accm", self.accm_op),
                    _ => ("accb", self.accb_op),
                };
                // The accumulators hold at least 32 elements; the views here fit in 32.
                if self.rng.chance(60) {
                    (var(buf), vec![32], Mem::Acc, op)
                } else {
                    let rank = self.rng.int(2, 3) as usize;
                    let hi = if rank == 2 { 5 } else { 3 };
                    let d: Vec<usize> = (0..rank).map(|_| self.rng.int(1, hi) as usize).collect();
                    let off = self.rng.int(0, 32 - d.iter().product::<usize>() as i64);
                    let v = method(
                        var(buf),
                        "view",
                        vec![
                            pos(int(off)),
                            pos(arr(d.iter().map(|&x| int(x as i64)).collect())),
                        ],
                    );
                    (v, d, Mem::Acc, op)
                }
            }
            2 => {
                let Some(base) = self.pb_slot() else {
                    return;
                };
                self.feature("atomics on per-block slots");
                self.pre_sync();
                let op = self.commuting_op();
                let v = self.pb_view(base.clone(), &[self.slot]);
                self.read_back_pb(base);
                (v, vec![self.slot], Mem::Pb, op)
            }
            _ => {
                let h = self.rng.int(1, 40) as usize;
                let Some(e) = self.fresh_shared(&[h]) else {
                    return;
                };
                let op = self.commuting_op();
                self.read_back_shared(&e, &[h]);
                (var(&e), vec![h], Mem::Shared, op)
            }
        };
        // Indices: one per axis of the array; tiles broadcast to the operation's shape.
        let check_false = mem != Mem::Pb && self.rng.chance(25);
        let idx = if dims.len() == 1 {
            if check_false {
                self.indices_in_range(&shape, dims[0])
            } else {
                self.indices(&shape, dims[0] + 2)
            }
        } else {
            // One small index tile (or a scalar) per axis, running along that axis: the
            // operation's shape is their broadcast.
            let rank = dims.len();
            let items = (0..rank)
                .map(|a| {
                    if self.rng.chance(25) {
                        let hi = dims[a] as i64 - if check_false { 1 } else { 0 };
                        int(self.rng.int(0, hi))
                    } else {
                        let l = self.rng.int(1, 6) as usize;
                        let t = self.tile(&[l], 0);
                        let t = bin(BinOp::BitAnd, t, int(7));
                        let t = if check_false {
                            bin(BinOp::Rem, t, int(dims[a] as i64))
                        } else {
                            t
                        };
                        let mut s = vec![1; rank];
                        s[a] = l;
                        method(t, "reshape", vec![pos(shape_e(&s))])
                    }
                })
                .collect();
            tuple(items)
        };
        let mut args = vec![pos(array)];
        self.arg(&mut args, "indices", &["index"], idx);
        let u = if self.rng.chance(40) {
            self.scalar(1)
        } else {
            self.tile(&shape, 1)
        };
        // A tile update must broadcast to the indices' shape: only when the indices are tiles
        // of `shape` (rank-1 arrays); otherwise use a scalar.
        let u = if dims.len() == 1 { u } else { self.scalar(1) };
        self.arg(&mut args, "update", &["value", "values"], u);
        if check_false {
            self.feature("check_bounds = false");
            args.push(kw("check_bounds", boolean(false)));
        } else if self.rng.chance(20) {
            args.push(kw("check_bounds", boolean(true)));
        }
        self.qualifiers(&mut args, mem, &["acq_rel", "relaxed"]);
        self.push(out, expr_stmt(call(&format!("atomic_{op}"), args)));
    }

    fn commuting_op(&mut self) -> &'static str {
        self.rng
            .pick(&["add", "sub", "min", "max", "and", "or", "xor"])
    }

    /// `atomic_store` with collision-free indices into a `pb` slot, an `out` slot or a fresh
    /// shared tensor (read back afterwards where it is not `out`).
    fn atomic_store_stmt(&mut self, out: &mut Vec<Stmt>) {
        self.feature("atomic_store");
        let shape = self.any_shape();
        let scalar_index = self.rng.chance(25);
        let rank = if self.rng.chance(50) { 1 } else { shape.len() };
        let (array, dims, mem) = match self.rng.below(3) {
            0 => {
                let Some(base) = self.pb_slot() else {
                    return;
                };
                let dims = if rank == 1 {
                    vec![self.slot]
                } else {
                    self.slot_dims(&shape)
                };
                let v = self.pb_view(base.clone(), &dims);
                self.read_back_pb(base);
                (v, dims, Mem::Pb)
            }
            1 => {
                let Some(base) = self.out_slot() else {
                    return;
                };
                let dims = if rank == 1 {
                    vec![self.slot]
                } else {
                    self.slot_dims(&shape)
                };
                let v = method(
                    var("out"),
                    "view",
                    vec![
                        pos(base),
                        pos(arr(dims.iter().map(|&d| int(d as i64)).collect())),
                    ],
                );
                self.pending.post_sync = true;
                (v, dims, Mem::Out)
            }
            _ => {
                let dims = if rank == 1 {
                    vec![shape.iter().product::<usize>() + self.rng.below(3)]
                } else {
                    shape.iter().map(|&s| s + self.rng.below(2)).collect()
                };
                let Some(e) = self.fresh_shared(&dims) else {
                    return;
                };
                self.read_back_shared(&e, &dims);
                (var(&e), dims, Mem::Shared)
            }
        };
        self.pre_sync();
        let check_false = mem == Mem::Shared && self.rng.chance(30);
        let mut args = vec![pos(array)];
        let value = if scalar_index {
            let i: Vec<Expr> = dims
                .iter()
                .map(|&d| int(self.rng.int(if check_false { 0 } else { -1 }, d as i64 - 1)))
                .collect();
            let idx = if i.len() == 1 {
                i.into_iter().next().expect("one")
            } else {
                tuple(i)
            };
            self.arg(&mut args, "indices", &["index"], idx);
            self.scalar(1)
        } else {
            let idx = self.injective_indices(&dims, &shape, check_false);
            self.arg(&mut args, "indices", &["index"], idx);
            self.update_arg(&shape)
        };
        self.arg(&mut args, "value", &["values", "update"], value);
        if check_false {
            self.feature("check_bounds = false");
            args.push(kw("check_bounds", boolean(false)));
        }
        self.qualifiers(&mut args, mem, &["release", "relaxed"]);
        self.push(out, expr_stmt(call("atomic_store", args)));
    }

    /// Non-atomic scatter store with collision-free indices into a fresh shared tensor (read
    /// back) or into this statement's slot of `out`.
    fn scatter_store(&mut self, out: &mut Vec<Stmt>) {
        self.feature("scatter stores");
        let (hshape, ishape, dim) = self.scatter_shapes();
        let shared = self
            .rng
            .chance(50)
            .then_some(())
            .and_then(|_| self.fresh_shared(&hshape));
        let dst = if let Some(e) = &shared {
            var(e)
        } else {
            let Some(base) = self.out_slot() else {
                return;
            };
            self.pre_sync();
            self.pending.post_sync = true;
            // A view of the slot with the shared shape's dims (at most `slot` elements).
            let dims = if hshape.iter().product::<usize>() <= self.slot {
                hshape.clone()
            } else {
                self.slot_dims(&ishape)
            };
            method(
                var("out"),
                "view",
                vec![
                    pos(base),
                    pos(arr(dims.iter().map(|&d| int(d as i64)).collect())),
                ],
            )
        };
        let idx = self.perm_along(&ishape, dim, false);
        let values = self.value_arg(&ishape);
        let mut args = vec![pos(dst)];
        self.arg(&mut args, "dim", &[], int(dim as i64));
        self.arg(&mut args, "indices", &[], idx);
        self.arg(&mut args, "values", &[], values);
        if self.rng.chance(40) {
            let m = self.bool_tile(&ishape, 1);
            args.push(kw("mask", m));
        }
        self.pending.post_sync = true;
        let f = if shared.is_some() {
            "store_shared_scatter"
        } else {
            "store_global_scatter"
        };
        self.push(out, expr_stmt(call(f, args)));
        if let Some(name) = shared {
            self.read_shared_into_pool(out, &name, &hshape);
        }
    }

    /// `let mut` accumulators, then a `for` loop updating them.
    fn for_loop(&mut self, out: &mut Vec<Stmt>) {
        self.feature("for");
        let shape = self.any_shape();
        let a = self.fresh_mut("acc");
        let init = self.tile(&shape, 1);
        self.push(out, let_(&a, true, init));
        let s = self.fresh_mut("sacc");
        let sinit = self.literal();
        self.push(out, let_(&s, true, sinit));
        let i = self.fresh("i");
        let start = if self.rng.chance(80) {
            int(self.rng.int(-2, 3))
        } else {
            // A loop bound with an effect or a reduction: evaluated once, before the loop.
            bin(BinOp::BitAnd, self.scalar(1), int(3))
        };
        let len = match self.rng.below(3) {
            0 => bin(BinOp::BitAnd, var(self.rng.pick(&["k", "m"])), int(3)),
            _ => int(self.rng.int(0, 4)),
        };
        let end = add(start.clone(), len);
        // `start` appears twice: only a pure one may be duplicated.
        let (start, end) = if has_effect(&start) {
            (int(0), bin(BinOp::BitAnd, start, int(3)))
        } else {
            (start, end)
        };
        let step = match self.rng.below(4) {
            0 => Some(int(self.rng.int(1, 2))),
            1 => Some(add(bin(BinOp::BitAnd, var("m"), int(1)), int(1))),
            _ => None,
        };
        let header = self.take_pending();
        let saved = self.save();
        self.muts.push((a.clone(), VTy::tile(Dt::I32, &shape)));
        self.muts.push((s.clone(), VTy::scalar(Dt::I32)));
        self.vals.push((a.clone(), VTy::tile(Dt::I32, &shape)));
        self.vals.push((s.clone(), VTy::scalar(Dt::I32)));
        self.vals.push((i.clone(), VTy::scalar(Dt::I32)));
        self.loop_depth += 1;
        // An early exit somewhere in the body, on names in scope at the loop's start.
        let break_cond = self.rng.chance(30).then(|| self.pure(|g| g.bool_scalar(1)));
        let mut body = Vec::new();
        let n = self.rng.int(1, 4 - self.loop_depth as i64);
        for _ in 0..n {
            self.stmt(&mut body);
        }
        // The accumulators are always updated.
        self.start_stmt();
        let v = self.tile(&shape, 2);
        let op = self.rng.pick(&[
            None,
            Some(BinOp::Add),
            Some(BinOp::BitXor),
            Some(BinOp::Sub),
        ]);
        self.push(&mut body, assign(&a, op, v));
        self.start_stmt();
        let sv = self.scalar(2);
        self.push(&mut body, assign(&s, Some(BinOp::Add), sv));
        if let Some(c) = break_cond {
            let at = self.rng.below(body.len() + 1);
            body.insert(at, if_(c, vec![brk()], None));
        }
        self.loop_depth -= 1;
        self.restore(saved);
        self.push_with(
            out,
            header,
            Stmt::For {
                var: i,
                var_span: S,
                range: RangeExpr {
                    start,
                    end,
                    step,
                    span: S,
                },
                body,
                span: S,
            },
        );
        self.vals.push((a, VTy::tile(Dt::I32, &shape)));
        self.vals.push((s, VTy::scalar(Dt::I32)));
    }

    /// A body of 1..=3 statements in its own scope, with `extra` inserted at a random place.
    fn loop_body(&mut self, extra: Vec<Stmt>) -> Vec<Stmt> {
        let saved = self.save();
        self.loop_depth += 1;
        let mut body = Vec::new();
        let n = self.rng.int(1, 4 - self.loop_depth as i64);
        for _ in 0..n {
            self.stmt(&mut body);
        }
        for s in extra {
            let at = self.rng.below(body.len() + 1);
            body.insert(at, s);
        }
        self.loop_depth -= 1;
        self.restore(saved);
        body
    }

    /// A bound on a trip count: a small literal or `k & 3`-like runtime value.
    fn trip_bound(&mut self) -> Expr {
        match self.rng.below(3) {
            0 => bin(BinOp::BitAnd, var(self.rng.pick(&["k", "m", "b"])), int(3)),
            1 => bin(BinOp::BitAnd, self.pure(|g| g.scalar(1)), int(3)),
            _ => int(self.rng.int(0, 4)),
        }
    }

    /// `let mut w = 0; while w < bound [&& cond] { ..; w += 1; }`, or a `while` whose
    /// condition is an atomic counter on a fresh `pb` slot.
    fn while_loop(&mut self, out: &mut Vec<Stmt>) {
        self.feature("while");
        let w = self.fresh("w");
        self.no_shadow.push(w.clone());
        self.push(out, let_(&w, true, int(0)));
        let bound = self.trip_bound();
        let guard = bin(BinOp::Lt, var(&w), bound);
        let counter = self.rng.chance(40).then(|| self.pb_slot()).flatten();
        let cond = match &counter {
            Some(base) => {
                // atomic_store(c, 0, 0); sync(); while (atomic_add(c, 0, 1) < n) & (w < 4)
                // (the effect in the condition runs before every test; `&` evaluates both
                // sides, `&&` would reject the effect).
                self.feature("atomic in a while condition");
                let view = self.pb_view(base.clone(), &[self.slot]);
                let mut st = vec![pos(view.clone())];
                self.arg(&mut st, "indices", &["index"], int(0));
                self.arg(&mut st, "value", &[], int(0));
                self.qualifiers(&mut st, Mem::Pb, &["release", "relaxed"]);
                self.push(out, sync());
                self.push(out, expr_stmt(call("atomic_store", st)));
                self.push(out, sync());
                let mut args = vec![pos(view)];
                self.arg(&mut args, "indices", &["index"], int(0));
                self.arg(&mut args, "update", &[], int(1));
                self.qualifiers(&mut args, Mem::Pb, &["acq_rel", "relaxed"]);
                let n = int(self.rng.int(0, 4));
                bin(
                    BinOp::BitAnd,
                    bin(BinOp::Lt, call("atomic_add", args), n),
                    bin(BinOp::Lt, var(&w), int(5)),
                )
            }
            None if self.rng.chance(40) => {
                let saved = self.save();
                self.vals.push((w.clone(), VTy::scalar(Dt::I32)));
                let extra = self.pure(|g| g.bool_scalar(1));
                self.restore(saved);
                bin(self.rng.pick(&[BinOp::And, BinOp::BitAnd]), guard, extra)
            }
            None => guard,
        };
        let header = self.take_pending();
        let saved = self.save();
        self.vals.push((w.clone(), VTy::scalar(Dt::I32)));
        let extra = if self.rng.chance(25) {
            let c = self.pure(|g| g.bool_scalar(1));
            vec![if_(c, vec![brk()], None)]
        } else {
            vec![]
        };
        let mut body = self.loop_body(extra);
        self.restore(saved);
        body.push(assign(&w, Some(BinOp::Add), int(1)));
        self.push_with(
            out,
            header,
            Stmt::While {
                cond,
                body,
                span: S,
            },
        );
        if counter.is_some() {
            self.push(out, sync());
        }
        self.vals.push((w, VTy::scalar(Dt::I32)));
    }

    /// `let mut w = 0; loop { if w >= bound { break; } ..; w += 1; }` (or the test last).
    fn loop_loop(&mut self, out: &mut Vec<Stmt>) {
        self.feature("loop/break");
        let w = self.fresh("w");
        self.no_shadow.push(w.clone());
        self.push(out, let_(&w, true, int(0)));
        let bound = self.trip_bound();
        let test = if_(bin(BinOp::Ge, var(&w), bound), vec![brk()], None);
        let saved = self.save();
        self.vals.push((w.clone(), VTy::scalar(Dt::I32)));
        let extra = if self.rng.chance(30) {
            let c = self.pure(|g| g.bool_scalar(1));
            vec![if_(c, vec![brk()], None)]
        } else {
            vec![]
        };
        let mut body = self.loop_body(extra);
        self.restore(saved);
        if self.rng.chance(50) {
            body.insert(0, test);
            body.push(assign(&w, Some(BinOp::Add), int(1)));
        } else {
            body.push(assign(&w, Some(BinOp::Add), int(1)));
            body.push(test);
        }
        self.push(out, Stmt::Loop { body, span: S });
        self.vals.push((w, VTy::scalar(Dt::I32)));
    }

    /// `let mut z = ..; if cond { z = ..; .. } [else if cond { .. }] else { z = ..; .. }`
    fn if_stmt(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let ty = if self.rng.chance(80) {
            VTy::tile(Dt::I32, &shape)
        } else {
            VTy::tile(Dt::Bool, &shape)
        };
        let z = self.fresh_mut("z");
        let init = self.expr(&ty, 1);
        self.push(out, let_(&z, true, init));
        self.start_stmt();
        let cond = self.bool_scalar(2);
        let header = self.take_pending();
        let arms = if self.rng.chance(25) { 3 } else { 2 };
        let mut bodies = Vec::new();
        let mut conds = Vec::new();
        let saved = self.save();
        self.muts.push((z.clone(), ty.clone()));
        self.vals.push((z.clone(), ty.clone()));
        for arm in 0..arms {
            if arm == 1 && arms == 3 {
                // `else if`: a pure condition (it would sit between the arms' statements).
                conds.push(self.pure(|g| g.bool_scalar(1)));
            }
            let inner = self.save();
            let mut body = Vec::new();
            for _ in 0..self.rng.int(0, 2) {
                self.stmt(&mut body);
            }
            self.start_stmt();
            let v = self.expr(&ty, 2);
            self.push(&mut body, assign(&z, None, v));
            self.restore(inner);
            bodies.push(body);
        }
        self.restore(saved);
        let mut els = bodies.pop().filter(|_| self.rng.chance(80));
        if arms == 3 {
            let mid = bodies.pop().expect("three arms");
            els = Some(vec![if_(conds.pop().expect("else-if cond"), mid, els)]);
        }
        let then = bodies.pop().expect("then arm");
        self.push_with(out, header, if_(cond, then, els));
        self.vals.push((z, ty));
    }

    /// `let s = t.red() op x; if s cmp y { .. }`
    fn reduction_if(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let s = self.fresh("s");
        let red = self.rng.pick(&["sum", "min", "max"]);
        let t = self.tile(&shape, 2);
        let rhs = self.scalar(1);
        let op = self.rng.pick(&ARITH);
        let e = self.arith(op, method(t, red, vec![]), rhs);
        self.push(out, let_(&s, false, e));
        self.vals.push((s.clone(), VTy::scalar(Dt::I32)));
        self.start_stmt();
        let rhs = self.scalar(1);
        let cond = bin(self.rng.pick(&CMP), var(&s), rhs);
        let header = self.take_pending();
        let saved = self.save();
        let mut then = Vec::new();
        self.stmt(&mut then);
        self.restore(saved);
        self.push_with(out, header, if_(cond, then, None));
    }

    /// `let v = x.view(off, [..]);` of rank 1 to 3.
    fn let_view(&mut self, out: &mut Vec<Stmt>) {
        let rank = self.rng.int(1, 3) as usize;
        let like = match rank {
            1 => vec![self.n],
            2 => vec![self.r, self.c],
            _ => self.d3.clone(),
        };
        let e = self.view_expr(rank, &like);
        let v = self.fresh("v");
        self.push(out, let_(&v, false, e));
        self.views.push((v, rank));
    }

    /// `let mut m = ..;`, assignable for the rest of the scope.
    fn let_mut(&mut self, out: &mut Vec<Stmt>) {
        let ty = self.any_ty();
        let e = self.expr(&ty, 2);
        let name = self.fresh_mut("mv");
        self.push(out, let_(&name, true, e));
        self.vals.push((name.clone(), ty.clone()));
        self.muts.push((name, ty));
    }

    /// An i32 or bool scalar or tile type of a main shape.
    fn any_ty(&mut self) -> VTy {
        let dt = if self.rng.chance(75) {
            Dt::I32
        } else {
            Dt::Bool
        };
        if self.rng.chance(30) {
            VTy::scalar(dt)
        } else {
            let s = self.any_shape();
            VTy::tile(dt, &s)
        }
    }

    /// Copies that must not alias their source: `let s = m; m op= ..;` (a snapshot of a
    /// mutable taken before it changes) or `let mut c = v; c op= ..;` (a mutable copy of a
    /// value that stays as it was); both values stay in the pool.
    fn copies(&mut self, out: &mut Vec<Stmt>) {
        self.feature("copies of mutables");
        let snapshot = !self.muts.is_empty() && self.rng.chance(60);
        // (the value that must not change, the variable that changes)
        let (keep, ty, target) = if snapshot {
            let (m, ty) = self.muts[self.rng.below(self.muts.len())].clone();
            let s = self.fresh_mut("snap");
            self.push(out, let_(&s, false, var(&m)));
            self.vals.push((s.clone(), ty.clone()));
            (s, ty, m)
        } else {
            let (v, ty) = self.vals[self.rng.below(self.vals.len())].clone();
            let c = self.fresh_mut("cp");
            self.push(out, let_(&c, true, var(&v)));
            self.vals.push((c.clone(), ty.clone()));
            self.muts.push((c.clone(), ty.clone()));
            (v, ty, c)
        };
        self.start_stmt();
        let e = self.expr(&ty, 1);
        let op = match ty.dt {
            Dt::I32 => self
                .rng
                .pick(&[None, Some(BinOp::Add), Some(BinOp::BitXor)]),
            Dt::Bool => self.rng.pick(&[None, Some(BinOp::BitXor)]),
        };
        self.push(out, assign(&target, op, e));
        if self.rng.chance(70) {
            self.observe(out, var(&keep), &ty);
        }
    }

    /// Store a value of type `ty` into the next `out` slot, so that it reaches the results.
    fn observe(&mut self, out: &mut Vec<Stmt>, value: Expr, ty: &VTy) {
        let Some(base) = self.out_slot() else {
            return;
        };
        let value = match ty.dt {
            Dt::I32 => value,
            Dt::Bool => cast(value, Dt::I32.name()),
        };
        let value = match &ty.shape {
            None => call("full", vec![pos(shape_e(&[1])), pos(value)]),
            Some(s) if s.len() == 1 => value,
            Some(s) => method(value, "reshape", vec![pos(shape_e(&[s.iter().product()]))]),
        };
        self.push(
            out,
            expr_stmt(call(
                "store_global",
                vec![pos(var("out")), pos(value), kw("offsets", arr(vec![base]))],
            )),
        );
    }

    /// `let a = f(a);`: an immutable value shadowed by one of the same type.
    fn shadow(&mut self, out: &mut Vec<Stmt>) {
        let cands: Vec<(String, VTy)> = self
            .vals
            .iter()
            .filter(|(n, _)| !self.no_shadow.contains(n))
            .filter(|(n, _)| !self.muts.iter().any(|(m, _)| m == n))
            .cloned()
            .collect();
        if cands.is_empty() {
            return;
        }
        let (name, ty) = cands[self.rng.below(cands.len())].clone();
        self.feature("shadowing");
        let e = self.expr(&ty, 1);
        let e = match ty.dt {
            Dt::I32 => add(var(&name), e),
            Dt::Bool => bin(BinOp::BitXor, var(&name), e),
        };
        // The new binding has the same name and type: the pools stay as they are.
        self.push(out, let_(&name, false, e));
    }

    fn fence(&mut self, out: &mut Vec<Stmt>) {
        self.feature("fence");
        let sem = self.rng.pick(&["acquire", "release", "acq_rel"]);
        let cluster_ok = self.target.is_none_or(|t| t >= 90);
        let scope = if cluster_ok && self.rng.chance(10) {
            "cluster"
        } else {
            self.rng.pick(&["cta", "gpu", "sys"])
        };
        let s = self.sem_expr(sem);
        let sc = self.scope_expr(scope);
        let args = if self.rng.chance(50) {
            vec![pos(s), pos(sc)]
        } else {
            vec![kw("sem", s), kw("scope", sc)]
        };
        self.push(out, expr_stmt(call("fence", args)));
    }

    /// A fresh statement: its nested-effect budget.
    fn start_stmt(&mut self) {
        self.fx_ok = true;
        self.fx_budget = match self.rng.below(10) {
            0..=4 => 0,
            5..=8 => 1,
            _ => 2,
        };
    }

    pub fn stmt(&mut self, out: &mut Vec<Stmt>) {
        debug_assert!(self.pending.pre.is_empty() && self.pending.post.is_empty());
        self.start_stmt();
        loop {
            match self.rng.below(48) {
                0..=4 => {
                    let shape = self.any_shape();
                    self.let_val(out, "t", VTy::tile(Dt::I32, &shape), 2);
                }
                5 => {
                    let ty = if self.rng.chance(60) {
                        let shape = self.any_shape();
                        VTy::tile(Dt::Bool, &shape)
                    } else {
                        VTy::scalar(Dt::Bool)
                    };
                    self.let_val(out, "q", ty, 2);
                }
                6 => self.let_val(out, "s", VTy::scalar(Dt::I32), 3),
                7 => self.let_view(out),
                8..=10 => self.store(out),
                11 if self.loop_depth < 2 => self.for_loop(out),
                12 if self.loop_depth < 2 => self.while_loop(out),
                13 if self.loop_depth < 2 => self.loop_loop(out),
                14 => self.if_stmt(out),
                15 => self.shared_round_trip(out),
                16 => self.shared_scatter(out),
                17 => self.shared_elementwise(out),
                18 => self.global_scatter(out),
                19 => self.global_elementwise(out),
                20 | 21 if !self.muts.is_empty() => {
                    let (name, ty) = self.muts[self.rng.below(self.muts.len())].clone();
                    let v = self.expr(&ty, 2);
                    let op = match (&ty.dt, &ty.shape) {
                        (Dt::Bool, _) => self.rng.pick(&[None, Some(BinOp::BitXor)]),
                        (Dt::I32, Some(_)) => self.rng.pick(&[
                            None,
                            Some(BinOp::Add),
                            Some(BinOp::BitOr),
                            Some(BinOp::Mul),
                        ]),
                        (Dt::I32, None) => self.rng.pick(&[
                            Some(BinOp::BitXor),
                            Some(BinOp::Add),
                            Some(BinOp::Sub),
                        ]),
                    };
                    self.push(out, assign(&name, op, v));
                }
                22 | 23 => self.reduction_if(out),
                24 | 25 => self.scatter_store(out),
                26 | 27 => self.indexed_rmw_stmt(out),
                28 => self.atomic_store_stmt(out),
                29 => {
                    let ty = if self.rng.chance(60) {
                        let s = self.any_shape();
                        VTy::tile(Dt::I32, &s)
                    } else {
                        VTy::scalar(Dt::I32)
                    };
                    let e = self.atomic_load_input(ty.shape.as_deref());
                    let name = self.fresh("al");
                    self.push(out, let_(&name, false, e));
                    self.vals.push((name, ty));
                }
                30 => self.shadow(out),
                31 if self.rng.chance(30) => self.fence(out),
                32..=35 => {
                    // A value with a nested effect somewhere inside (stored or kept).
                    self.fx_budget = self.fx_budget.max(1);
                    let shape = self.any_shape();
                    let e = if self.rng.chance(70) {
                        self.fx_budget -= 1;
                        let t = self.fx_tile(&shape);
                        let t2 = self.tile(&shape, 1);
                        let op = self.rng.pick(&ARITH);
                        self.arith(op, t, t2)
                    } else {
                        self.tile(&shape, 2)
                    };
                    let name = self.fresh("n");
                    self.push(out, let_(&name, false, e));
                    self.vals.push((name, VTy::tile(Dt::I32, &shape)));
                }
                36 | 37 => {
                    // A store whose value, mask or offsets may hold nested effects.
                    self.fx_budget = self.fx_budget.max(2);
                    self.store(out);
                }
                38 if self.loop_depth < 2 => self.for_loop(out),
                39 if self.loop_depth < 2 => self.while_loop(out),
                40 if self.loop_depth < 2 => self.loop_loop(out),
                41 => self.atomic_store_stmt(out),
                42 => self.indexed_rmw_stmt(out),
                43 => self.let_mut(out),
                44..=46 => self.copies(out),
                _ => continue,
            }
            return;
        }
    }
}

/// `t.len()` (`axis == None`) or `t.dim(axis)` of a global tensor, as an `i32`: lengths may
/// have another integer type (`as` is a no-op where they are `i32`).
fn extent(t: Expr, axis: Option<usize>) -> Expr {
    let e = match axis {
        None => method(t, "len", vec![]),
        Some(a) => method(t, "dim", vec![pos(int(a as i64))]),
    };
    cast(e, Dt::I32.name())
}

fn is_sync(s: &Stmt) -> bool {
    matches!(s, Stmt::Expr(Expr { kind: ExprKind::Call { path, .. }, .. }) if path.len() == 1 && path[0] == "sync")
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One random kernel (parameters [`TENSORS`] as `GlobalTensor<i32>`, then [`SCALARS`] as
/// `i32`).
pub fn gen_kernel(seed: u64, name: &str) -> (KernelDef, Gen) {
    let mut g = Gen::new(seed);
    let threads = if g.rng.chance(3) {
        1024
    } else {
        g.rng.pick(&[32u32, 64, 96, 128, 256])
    };
    let mut body = vec![let_("b", false, call("block_idx", vec![]))];
    let n = g.rng.int(2, 6);
    for _ in 0..n {
        g.stmt(&mut body);
    }
    // Always store something.
    g.start_stmt();
    g.store(&mut body);
    // Some builtins called through the crate's paths (`tilus::arange`, `tilus::atomic::..`).
    if g.rng.chance(30) {
        let mut rng = KRng::new(seed ^ 0x7111_0005);
        for s in &mut body {
            visit_stmt_exprs_mut(s, &mut |e| {
                if let ExprKind::Call { path, .. } = &mut e.kind {
                    if rng.chance(30) {
                        let prefix: &[&str] = if rng.chance(70) {
                            &["tilus"]
                        } else {
                            &["tilus", "prelude"]
                        };
                        path.splice(0..0, prefix.iter().map(|p| p.to_string()));
                    }
                }
            });
        }
        g.feature("tilus:: paths");
    }
    if g.cluster.is_some() {
        g.feature("thread-block clusters");
    }
    // Unchecked accesses are unsafe: each goes in an `unsafe { .. }` of its own, or the kernel
    // is an `unsafe fn` (its launch is then the caller's promise).
    let mut unchecked = 0;
    for s in &mut body {
        visit_stmt_exprs_mut(s, &mut |e| {
            if is_unchecked_call(e) {
                unchecked += 1;
            }
        });
    }
    let unsafe_fn = unchecked > 0 && KRng::new(seed ^ 0x0a5a_fe00).chance(30);
    if unchecked > 0 && !unsafe_fn {
        g.feature("unsafe blocks");
        for s in &mut body {
            visit_stmt_exprs_mut(s, &mut |e| {
                if is_unchecked_call(e) {
                    *e = Expr {
                        kind: ExprKind::Unsafe(Box::new(e.clone())),
                        span: S,
                    };
                }
            });
        }
    }
    if unsafe_fn {
        g.feature("unsafe fn kernels");
    }
    let tensor = |n: &str| ParamDef {
        name: n.to_string(),
        span: S,
        ty: ParamTy::GlobalTensor { elem: "i32".into() },
        ty_span: S,
    };
    let scalar = |n: &str| ParamDef {
        name: n.to_string(),
        span: S,
        ty: ParamTy::Scalar("i32".into()),
        ty_span: S,
    };
    let def = KernelDef {
        name: name.to_string(),
        name_span: S,
        params: TENSORS
            .iter()
            .map(|t| tensor(t))
            .chain(SCALARS.iter().map(|s| scalar(s)))
            .collect(),
        body,
        options: KernelOptions {
            threads,
            target: g.target,
            cluster: g.cluster,
            unsafe_fn,
            ..KernelOptions::default()
        },
    };
    (def, g)
}

/// A call with `check_bounds = false` (which only an unsafe context accepts).
fn is_unchecked_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { args, .. } if args.iter().any(|a| {
        a.name.as_ref().is_some_and(|(n, _)| n == "check_bounds")
            && matches!(a.value.kind, ExprKind::Bool(false))
    }))
}
