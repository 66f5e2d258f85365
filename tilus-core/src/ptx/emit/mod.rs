//! The emitter: the state of generating one kernel and the services instruction choice uses.
//! It appends typed code (`super::code`), hands out registers (`super::regs`), keeps the
//! values computed once per thread in the prologue, reserves back-end scratch, and records and
//! answers what is known of values (`super::known`). Its parts:
//! * `storage`: where each variable lives, and operands read from it;
//! * `fold`: 32-bit index arithmetic and predicates folded at compile time where they can be;
//! * `control`: the parameters and structured control flow.
//!
//! Instruction choice lives in the modules around it: `inst.rs` (scalar and element-wise),
//! `convert.rs`, `access.rs` and `memops.rs` (memory), `collective.rs` (across threads). They
//! reach the emitter's state only through its methods.

mod affine;
pub(in crate::ptx) use affine::affine_arange;
mod control;
mod fold;
mod solo;
mod storage;
mod warp_loop;

use std::collections::BTreeMap;

use super::code::{Arg, Args, Code, Guard, Ins, Label, Line, Opcode, Special};
use super::known::Known;
use super::regs::{Class, Reg, Regs};
use super::value::Predicate;
use super::CodegenError;
use crate::ir::{DType, Kernel, Span};
use crate::layout::Layout;

pub(super) use fold::cmp_name_for;
pub(super) use storage::{GlobalView, Storage};

pub(super) type CodegenResult<T> = Result<T, CodegenError>;

pub(super) fn internal<T>(msg: impl Into<String>) -> CodegenResult<T> {
    Err(CodegenError::new(msg))
}

/// Lines of body reserved up front (a kernel's body is a few hundred lines; more grow as usual).
const BODY_LINES: usize = 512;

/// Keys of values computed once in the prologue (they depend only on the thread index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cached {
    TidTimes(usize),
    /// `tid < owners` for partial chunks.
    TidLt(usize),
    SmemBase,
    ConstPred(bool),
    Lane,
    Warp,
    Zero16,
    ClusterRank,
}

pub(super) struct Emitter<'k> {
    kernel: &'k Kernel,
    regs: Regs,
    code: Code,
    /// Each variable's storage, from its first assignment on.
    storage: Vec<Option<Storage>>,
    known: Known<'k>,
    /// Integer tiles known as a thread's register plus a slot's constant (`affine.rs`).
    affine: std::collections::HashMap<crate::ir::VarId, affine::Affine>,
    /// Prologue values already computed.
    cache: BTreeMap<Cached, Reg>,
    /// Labels made so far (they are numbered in order).
    labels: u32,
    /// Where `break` goes: the end of each enclosing loop, innermost last.
    loop_ends: Vec<Label>,
    /// `%tid.x`.
    tid: Reg,
    /// The kernel's tile run length (`crate::layout::vector_width`).
    vector_width: usize,
    /// The oldest PTX ISA version (times 10) the instructions emitted so far need.
    min_version: u32,
    /// Bytes of back-end scratch needed after the user's shared allocations.
    scratch_bytes: usize,
    /// The statement that asked for `scratch_bytes`.
    scratch_span: Span,
    /// The statement being generated (for errors and scratch accounting).
    span: Span,
    /// Generating a loop that warp 0 runs alone (`solo.rs`).
    solo: bool,
    /// Block barriers emitted inside the current solo loop (there must be none).
    solo_barriers: u32,
    /// Generating a loop that each warp leaves on its own (`warp_loop.rs`); its block barriers
    /// are counted in `solo_barriers` too (there must be none).
    warp_loop: bool,
    /// References of each variable in the whole kernel, once a solo loop needed them.
    references: std::cell::RefCell<Option<Vec<u32>>>,
}

/// What generating a kernel leaves for its module.
pub(super) struct Generated {
    pub regs: Regs,
    pub code: Code,
    /// The oldest PTX ISA version (times 10) the instructions need.
    pub min_version: u32,
    /// Bytes of dynamic shared memory the launch must request.
    pub shared_bytes: usize,
    /// The statement that needs the most back-end scratch, when any does.
    pub scratch_span: Option<Span>,
}

impl<'k> Emitter<'k> {
    pub fn new(k: &'k Kernel) -> Emitter<'k> {
        let mut regs = Regs::default();
        let tid = regs.new_reg(Class::B32);
        let mut code = Code::default();
        // Room for the lines of most kernels (a few hundred): growing a vector of lines by
        // doubling copied them again and again.
        code.body.reserve(BODY_LINES);
        code.prologue.push(Line::Ins(Ins::new(
            Guard::Always,
            ["mov", "u32"],
            (tid, Special::ThreadIdx),
        )));
        Emitter {
            kernel: k,
            regs,
            code,
            storage: vec![None; k.vars.len()],
            known: Known::new(k),
            affine: std::collections::HashMap::new(),
            cache: BTreeMap::new(),
            labels: 0,
            loop_ends: Vec::new(),
            tid,
            vector_width: crate::layout::vector_width(k),
            min_version: 78,
            scratch_bytes: 0,
            scratch_span: Span::NONE,
            span: Span::NONE,
            solo: false,
            solo_barriers: 0,
            warp_loop: false,
            references: std::cell::RefCell::new(None),
        }
    }

    /// The code and what the module must declare for it.
    pub fn finish(self) -> Generated {
        let scratch = self.scratch_bytes > 0;
        Generated {
            shared_bytes: match scratch {
                true => self.scratch_offset() + self.scratch_bytes,
                false => self.kernel.shared_bytes,
            },
            scratch_span: scratch.then_some(self.scratch_span),
            regs: self.regs,
            code: self.code,
            min_version: self.min_version,
        }
    }

    pub fn kernel(&self) -> &'k Kernel {
        self.kernel
    }
    /// Threads per block.
    pub fn threads(&self) -> usize {
        self.kernel.threads as usize
    }
    /// The register holding `%tid.x`.
    pub fn tid(&self) -> Reg {
        self.tid
    }
    /// What is known of values at compile time.
    pub fn known(&self) -> &Known<'k> {
        &self.known
    }
    /// Records what follows for `d` from its definition by `inst`, just generated.
    pub fn record_facts(&mut self, d: crate::ir::VarId, inst: &crate::ir::Inst) {
        self.known.record(d, inst);
    }
    /// Raises the module's PTX ISA version to at least `version` (times 10).
    pub fn require_ptx(&mut self, version: u32) {
        self.min_version = self.min_version.max(version);
    }

    // ----- code -----

    /// Appends instruction `opcode args`.
    pub fn ins(&mut self, opcode: impl Into<Opcode>, args: impl Args) {
        self.ins_if(Guard::Always, opcode, args);
    }
    /// Appends instruction `opcode args` under `guard`.
    ///
    /// Signed 16- and 32-bit `min`/`max` are emitted in an equivalent unsigned form (see
    /// [`Emitter::signed_min_max_unsigned`]): ptxas miscompiles the signed ones on sm_90.
    pub fn ins_if(&mut self, guard: Guard, opcode: impl Into<Opcode>, args: impl Args) {
        let ins = Ins::new(guard, opcode, args);
        if let Some(bias) = signed_min_max(&ins) {
            return self.signed_min_max_unsigned(ins, bias);
        }
        self.code.body.push(Line::Ins(ins));
    }

    /// `min.s32 d, a, b` as `d = min.u32(a ^ M, b ^ M) ^ M` with `M` the sign bit (`max` and
    /// `.s16` alike): flipping the sign bit maps the signed order onto the unsigned one.
    ///
    /// Why: ptxas (12.8 and 13.0, for sm_90) fuses two signed `min`/`max` into `VIMNMX3` and
    /// folds a negation of its middle operand into it, where the negation is then lost:
    /// `max(max(-a, -b), -c)` is computed as `max(max(-a, b), -c)`. Found by the differential
    /// test on an H100 (`(-arange(232)).max()` gave 126); the PTX is the driver's input on every
    /// GPU from sm_90 on, whatever the module's `.target`, so the form is used everywhere.
    /// ptxas keeps the unsigned form (`VIMNMX.U32` after `LOP3`s) and cancels the flips
    /// between links of a chain. The tests `signed_min_max_*` in tests/gpu_regressions.rs hold
    /// the cases on the GPU.
    fn signed_min_max_unsigned(&mut self, ins: Ins, (class, unsigned, bit, sign): Bias) {
        let Ins {
            guard,
            opcode,
            args,
        } = ins;
        let [d, a, b]: [Arg; 3] = (args.into_vec().try_into()).expect("min/max: three operands");
        let (name, _) = opcode.name_and_type().expect("min/max: name and type");
        let flip = |e: &mut Self, x: Arg| -> Arg {
            let mask = (sign << 1) - 1;
            match x {
                Arg::Int(v) => Arg::Int((v & mask) ^ sign),
                Arg::Const(bits, _) => Arg::Int((bits as i128 & mask) ^ sign),
                x => {
                    let t = e.new_reg(class);
                    e.code.body.push(Line::Ins(Ins::new(
                        guard,
                        ["xor", bit],
                        (t, x, Arg::Int(sign)),
                    )));
                    Arg::Reg(t)
                }
            }
        };
        let (a, b) = (flip(self, a), flip(self, b));
        self.code.body.push(Line::Ins(Ins::new(
            guard,
            [name, unsigned],
            (d.clone(), a, b),
        )));
        self.code.body.push(Line::Ins(Ins::new(
            guard,
            ["xor", bit],
            (d.clone(), d, Arg::Int(sign)),
        )));
    }
    pub fn comment(&mut self, s: impl Into<String>) {
        self.code.body.push(Line::Comment(s.into()));
    }
    pub fn label(&mut self, l: Label) {
        self.code.body.push(Line::Label(l));
    }
    pub fn new_label(&mut self, kind: &'static str) -> Label {
        self.labels += 1;
        Label {
            kind,
            n: self.labels,
        }
    }
    /// A branch to `l` taken by all threads of a warp alike (`bra.uni`) where `guard` holds.
    pub fn branch_uniform(&mut self, guard: Guard, l: Label) {
        self.ins_if(guard, ["bra", "uni"], (l,));
    }
    /// A branch to `l` where `guard` holds, which threads of a warp may take apart (`bra`).
    pub fn branch(&mut self, guard: Guard, l: Label) {
        self.ins_if(guard, ["bra"], (l,));
    }
    /// A barrier of the whole block (`bar.sync 0`).
    pub fn barrier(&mut self) {
        if self.solo || self.warp_loop {
            self.solo_barriers += 1;
        }
        self.ins(["bar", "sync"], (0,));
    }

    // ----- registers -----

    pub fn new_reg(&mut self, class: Class) -> Reg {
        self.regs.new_reg(class)
    }
    pub fn r32(&mut self) -> Reg {
        self.new_reg(Class::B32)
    }
    pub fn r64(&mut self) -> Reg {
        self.new_reg(Class::B64)
    }
    pub fn new_pred(&mut self) -> Reg {
        self.new_reg(Class::Pred)
    }
    /// A fresh register holding an element of type `d`.
    pub fn reg_of(&mut self, d: DType) -> Reg {
        self.new_reg(d.info().reg)
    }

    // ----- prologue caches -----

    /// The register holding the prologue value `key`, computed there on first use by
    /// `make(register, tid)`.
    fn cached(&mut self, key: Cached, class: Class, make: impl FnOnce(Reg, Reg) -> Ins) -> Reg {
        if let Some(r) = self.cache.get(&key) {
            return *r;
        }
        let r = self.regs.new_reg(class);
        let ins = make(r, self.tid);
        self.code.prologue.push(Line::Ins(ins));
        self.cache.insert(key, r);
        r
    }

    /// `tid * v`: the thread's first flat index in every layout of width `v`.
    pub fn tid_times(&mut self, v: usize) -> Reg {
        if v == 1 {
            return self.tid;
        }
        let sh = v.trailing_zeros();
        self.cached(Cached::TidTimes(v), Class::B32, |r, t| {
            Ins::new(Guard::Always, ["shl", "b32"], (r, t, sh))
        })
    }

    /// Whether the thread owns slot chunk `o` of `layout` (compile-time true for full chunks).
    pub fn chunk_exists(&mut self, layout: &Layout, o: usize) -> Predicate {
        if layout.chunk_full(o) {
            return Predicate::True;
        }
        let owners = layout.chunk_owners(o);
        Predicate::Reg(self.cached(Cached::TidLt(owners), Class::Pred, |r, t| {
            Ins::new(Guard::Always, ["setp", "lt", "u32"], (r, t, owners))
        }))
    }

    /// 32-bit shared address of the dynamic window.
    pub fn smem_base(&mut self) -> Reg {
        self.cached(Cached::SmemBase, Class::B32, |r, _| {
            Ins::new(Guard::Always, ["mov", "u32"], (r, Special::SharedWindow))
        })
    }

    pub fn const_pred(&mut self, b: bool) -> Reg {
        self.cached(Cached::ConstPred(b), Class::Pred, |r, _| {
            Ins::new(Guard::Always, ["mov", "pred"], (r, b as i32))
        })
    }

    /// This block's rank in its cluster.
    pub fn cluster_rank_reg(&mut self) -> Reg {
        self.cached(Cached::ClusterRank, Class::B32, |r, _| {
            Ins::new(Guard::Always, ["mov", "u32"], (r, Special::ClusterRank))
        })
    }

    /// A 16-bit register holding 0 (the low half when widening `bf16`).
    pub fn zero16(&mut self) -> Reg {
        self.cached(Cached::Zero16, Class::B16, |r, _| {
            Ins::new(Guard::Always, ["mov", "b16"], (r, 0))
        })
    }

    pub fn lane(&mut self) -> Reg {
        self.cached(Cached::Lane, Class::B32, |r, t| {
            Ins::new(Guard::Always, ["and", "b32"], (r, t, 31))
        })
    }

    pub fn warp(&mut self) -> Reg {
        self.cached(Cached::Warp, Class::B32, |r, t| {
            Ins::new(Guard::Always, ["shr", "u32"], (r, t, 5))
        })
    }

    // ----- scratch -----

    /// Reserves `bytes` of scratch (shared memory after the user's allocations) for the
    /// statement being generated; returns its byte offset in the shared window.
    pub fn scratch(&mut self, bytes: usize) -> usize {
        if bytes > self.scratch_bytes {
            self.scratch_bytes = bytes;
            self.scratch_span = self.span;
        }
        self.scratch_offset()
    }
    fn scratch_offset(&self) -> usize {
        self.kernel.shared_bytes.div_ceil(16) * 16
    }
}

/// How a signed `min`/`max` is rewritten: the register class of its temporaries, the unsigned
/// type, the bit type and the sign bit.
type Bias = (Class, &'static str, &'static str, i128);

/// The rewrite of `ins` if it is a signed 16- or 32-bit `min` or `max`.
fn signed_min_max(ins: &Ins) -> Option<Bias> {
    let (name, ty) = ins.opcode.name_and_type()?;
    // Byte patterns, not string comparisons: asked of every instruction, unoptimised.
    if !matches!(name.as_bytes(), b"min" | b"max") {
        return None;
    }
    match ty {
        "s32" => Some((Class::B32, "u32", "b32", 0x8000_0000)),
        "s16" => Some((Class::B16, "u16", "b16", 0x8000)),
        _ => None,
    }
}
