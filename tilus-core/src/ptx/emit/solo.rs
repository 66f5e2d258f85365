//! Loops that one warp runs alone ("solo" loops).
//!
//! A reduction of a tile to a block-uniform scalar costs two block barriers when the block has
//! more than one warp (`collective::reduce`): the warps' partials go through shared scratch and
//! every thread reads them. In a loop whose tiles all fit in one warp (at most 32 elements: the
//! layout puts element `i` on thread `i`, see `crate::layout`), only warp 0 holds data, and the
//! other warps just wait at those barriers, iteration after iteration. The packed look-back of
//! `tilus::algo`'s scans and compactions is such a loop: a spin over a window of 32
//! predecessors' status words, whose latency is on the critical path of the whole scan.
//!
//! Such a loop is generated for warp 0 only: the other warps branch past it, its reductions end
//! with the warp's butterfly (every lane of warp 0 holds the result), and after it warp 0
//! hands the scalars the loop assigned, and the rest of the kernel reads, to the block through
//! scratch between two barriers. Tiles the loop assigns need nothing: their elements live in
//! warp 0's lanes anyway. Results are the same as the block-wide code's, bit for bit (a float
//! fold is combined with the identity once more, as the block-wide fold combines it with the
//! other warps' empty partials), so the emulator (which knows nothing of this) still agrees.
//!
//! A loop qualifies when it has at least one such reduction and nothing that needs the whole
//! block: every tile it touches has at most 32 elements, and its instructions are element-wise
//! arithmetic, reductions, weak or relaxed accesses to global memory and acquire loads (no
//! shared memory, no barrier, no release, which is block-wide at tile level, no other
//! collective). An acquire's barrier becomes the warp's, and such a loop starts with one block
//! barrier, so that the other warps' accesses before it stay ordered before the acquire.
//! The emulator's race checker counts no barrier for a reduction within one warp, so it never
//! assumed the barriers this removes.

use super::{internal, CodegenResult, Emitter};
use crate::dtype::DType;
use crate::ir::{for_each_var, numel, Inst, Stmt, Ty, VarId, VarUse};
use crate::ptx::code::Guard;
use crate::ptx::value::RegOrConst;

/// Elements a tile may have for a loop to run on one warp.
const WARP: usize = 32;

/// How a loop runs on warp 0 alone.
pub(super) struct SoloPlan {
    /// The scalars the loop assigns that are referenced outside it: handed to the block after.
    outs: Vec<VarId>,
    /// Whether the loop has an acquire load (the block synchronises before it).
    acquires: bool,
}

impl Emitter<'_> {
    /// How loop `s` runs on warp 0 alone (see the module's documentation); `None` when it
    /// cannot or there is nothing to gain.
    pub(super) fn solo_plan(&self, s: &Stmt) -> Option<SoloPlan> {
        if self.solo || self.threads() <= WARP {
            return None;
        }
        let k = self.kernel();
        let one = std::slice::from_ref(s);
        let (mut fits, mut gains, mut acquires) = (true, false, false);
        crate::ir::for_each_inst(one, &mut |_, inst, _| {
            fits &= self.solo_inst(inst);
            gains |= matches!(inst, Inst::Reduce { x, .. } if matches!(k.ty(*x), Ty::Tile { .. }));
            acquires |= matches!(inst, Inst::AtomicLoad { sem, .. } if sem.has_acquire());
        });
        let mut inside = vec![0u32; k.vars.len()];
        let mut assigned = Vec::new();
        for_each_var(one, &mut |u| {
            let v = match u {
                VarUse::Read(v) => v,
                VarUse::Def(v, _) | VarUse::LoopVar(v) => {
                    assigned.push(v);
                    v
                }
            };
            fits &= match k.ty(v) {
                Ty::Tile { shape, .. } => numel(shape) <= WARP,
                _ => true,
            };
            inside[v as usize] += 1;
        });
        if !fits || !gains {
            return None;
        }
        let total = self.reference_counts();
        let mut outs: Vec<VarId> = assigned
            .into_iter()
            .filter(|&v| total[v as usize] > inside[v as usize])
            .collect();
        outs.sort_unstable();
        outs.dedup();
        // A view made in the loop and used after it would exist in warp 0 only.
        if outs.iter().any(|&v| matches!(k.ty(v), Ty::Global { .. })) {
            return None;
        }
        outs.retain(|&v| k.ty(v).is_scalar());
        Some(SoloPlan { outs, acquires })
    }

    /// Whether `inst` does the same on warp 0 alone as on the whole block (its tiles' sizes
    /// are checked apart).
    fn solo_inst(&self, inst: &Inst) -> bool {
        let k = self.kernel();
        match inst {
            _ if inst.is_elementwise() => true,
            Inst::BlockIdx { .. }
            | Inst::GridDim { .. }
            | Inst::ClusterRank
            | Inst::ClusterSize
            | Inst::ClusterIdx { .. }
            | Inst::Dim { .. }
            | Inst::View { .. }
            | Inst::Reshape { .. }
            | Inst::Nanosleep { .. }
            | Inst::Reduce { .. } => true,
            // Same element count: a register copy; otherwise it goes through scratch.
            Inst::Broadcast { x, shape } => match k.ty(*x) {
                Ty::Tile { shape: from, .. } => numel(from) == numel(shape),
                _ => true,
            },
            Inst::Load { access, .. } | Inst::Store { access, .. } => {
                matches!(k.ty(access.mem), Ty::Global { .. })
            }
            // An acquire load orders the block's later accesses after it with a barrier; in a
            // loop only warp 0 runs, so a warp barrier does it ([`Emitter::barrier_after_acquire`]),
            // and the barrier after the loop carries the order to the other warps. A release
            // would need the other warps' earlier writes ordered before it: not here.
            Inst::AtomicLoad { access, sem, .. } => {
                matches!(k.ty(access.mem), Ty::Global { .. }) && !sem.has_release()
            }
            Inst::AtomicStore { access, sem, .. } | Inst::AtomicRmw { access, sem, .. } => {
                matches!(k.ty(access.mem), Ty::Global { .. })
                    && !sem.has_release()
                    && !sem.has_acquire()
            }
            _ => false,
        }
    }

    /// How often each variable is referenced in the whole kernel (reads, assignments, loop
    /// variables), computed once.
    pub(super) fn reference_counts(&self) -> std::cell::Ref<'_, Vec<u32>> {
        if self.references.borrow().is_none() {
            let k = self.kernel();
            let mut n = vec![0u32; k.vars.len()];
            for_each_var(&k.body, &mut |u| {
                let (VarUse::Read(v) | VarUse::Def(v, _) | VarUse::LoopVar(v)) = u;
                n[v as usize] += 1;
            });
            *self.references.borrow_mut() = Some(n);
        }
        std::cell::Ref::map(self.references.borrow(), |r| {
            r.as_ref().expect("counted above")
        })
    }

    /// Loop `s` on warp 0 alone, then the scalars it assigned handed to the whole block.
    pub(super) fn solo_loop(&mut self, s: &Stmt, plan: &SoloPlan) -> CodegenResult<()> {
        let outs = &plan.outs[..];
        self.comment("one warp runs this loop: every tile in it fits in warp 0");
        if plan.acquires {
            // A tile-level acquire orders the whole block's earlier accesses before what
            // follows it (its barrier): the other warps' accesses before the loop are ordered
            // here, once, since in the loop the acquire's barrier is only the warp's.
            self.barrier();
        }
        let skip = self.new_label("solo_end");
        let warp = self.warp();
        let others = self.new_pred();
        self.ins(["setp", "ne", "u32"], (others, warp, 0));
        // Uniform within each warp, which is what `.uni` promises.
        self.branch_uniform(Guard::If(others), skip);
        self.solo = true;
        self.solo_barriers = 0;
        let r = self.stmt_generic(s);
        self.solo = false;
        r?;
        if self.solo_barriers > 0 {
            return internal("a block barrier inside a loop that runs on one warp");
        }
        // Slots of 8 bytes, one per scalar, written by lane 0 of warp 0.
        let scratch = self.scratch(8 * outs.len());
        let smem = self.smem_base();
        let mut regs = Vec::with_capacity(outs.len());
        if !outs.is_empty() {
            let lane = self.lane();
            let first = self.new_pred();
            self.ins(["setp", "eq", "u32"], (first, lane, 0));
            for (i, &v) in outs.iter().enumerate() {
                let d = self.kernel().ty(v).dtype();
                let r = self.dst_regs(v)?[0];
                self.st_scratch(
                    Guard::If(first),
                    d,
                    smem,
                    scratch + 8 * i,
                    RegOrConst::Reg(r),
                );
                regs.push((d, r));
            }
        }
        self.label(skip);
        self.barrier();
        if !outs.is_empty() {
            for (i, &(d, r)) in regs.iter().enumerate() {
                self.ld_scratch(Guard::Always, d, r, smem, scratch + 8 * i);
            }
            // The scratch may be reused by the next collective right away.
            self.barrier();
        }
        Ok(())
    }

    /// In a solo loop, a float fold of a tile of one warp is combined once with the identity,
    /// as the block-wide fold combines it with the other (empty) warps' partials: `max(NaN,
    /// -inf)` is `-inf` in PTX, and the emulator follows the block-wide order.
    /// The barrier after a tile-level acquire: the block's (`bar.sync`), or in a loop that warp
    /// 0 runs alone the warp's (`bar.warp.sync`, which orders memory among its threads too).
    pub(in crate::ptx) fn barrier_after_acquire(&mut self) {
        if self.solo {
            self.ins(["bar", "warp", "sync"], (-1,));
        } else {
            self.barrier();
        }
    }

    /// Whether a loop that warp 0 runs alone is being generated.
    pub(in crate::ptx) fn in_solo_loop(&self) -> bool {
        self.solo
    }

    pub(in crate::ptx) fn solo_fold_as_block(&self, acc: DType) -> bool {
        self.solo && acc.is_float() && self.threads() > WARP
    }
}
