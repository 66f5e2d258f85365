//! The order an equal rank counts in: row-major, or with `order = [..]` (`equal_rank`,
//! `place`) the row-major order of the coordinates permuted by it. The ranks stage each
//! element at its position in that order, so a permuted order costs a few index instructions
//! an element, except for the one layout that needs no staging at all ([`warp_striped`]).

use super::super::code::Guard;
use super::super::emit::{CodegenResult, Emitter};
use super::super::value::{Predicate, RegOrImm};
use crate::dtype::DType;
use crate::ir::{Operand, VarId};
use crate::layout::Layout;

/// Whether an equal rank in `order` of a tile of `shape` (laid out as `layout` on `threads`
/// threads) counts each warp's own registers in order: shape `[J, W, 32]` with `W` warps, one
/// element a run, counted in order `[1, 0, 2]`. Thread `32 w + l` holds element `(j, w, l)` in
/// slot `j`, whose position in that order is `32 J w + 32 j + l`: warp `w`'s segment of the
/// order is its own slots, round `j` its lanes' slot `j`. A device radix sort loads its tiles so
/// (CUB's warp-striped arrangement) to rank without moving its keys through shared memory.
pub(super) fn warp_striped(
    shape: &[usize],
    order: Option<&[usize]>,
    layout: &Layout,
    threads: usize,
) -> bool {
    order == Some(&[1, 0, 2])
        && shape.len() == 3
        && shape[2] == 32
        && shape[1] * 32 == threads
        && layout.v == 1
        // A held rank is below 2^22, its byte above it (`rank.rs`).
        && shape[0] * 32 <= 1 << 22
}

impl Emitter<'_> {
    /// Slot `s`'s position in the count order of a tile of `shape` laid out as `layout`: its
    /// row-major index, or its index in the row-major order of the coordinates permuted by
    /// `order` (outermost first).
    pub(super) fn count_pos(
        &mut self,
        layout: &Layout,
        shape: &[usize],
        order: Option<&[usize]>,
        s: usize,
    ) -> RegOrImm {
        let f = self.flat_index(layout, s);
        let Some(order) = order else { return f };
        let mut p = RegOrImm::Imm(0);
        for &a in order {
            let c = self.tile_pos(f, shape, a, shape[a]);
            let scaled = self.mul32(p, RegOrImm::Imm(shape[a] as i32));
            p = self.add32(scaled, c);
        }
        p
    }

    /// Stores the elements this thread holds of tile `x` (type `d`, shape `shape`, laid out as
    /// `layout`) at their positions in the count order in the array at scratch offset `off`.
    pub(super) fn stage_in_order(
        &mut self,
        x: VarId,
        d: DType,
        layout: &Layout,
        off: usize,
        shape: &[usize],
        order: Option<&[usize]>,
    ) -> CodegenResult<()> {
        if order.is_none() {
            return self.stage(x, d, layout, off);
        }
        let smem = self.smem_base();
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let p = self.count_pos(layout, shape, order, s);
            let val = self.reg_or_const(Operand::Var(x), s)?;
            let (base, at) = match p {
                RegOrImm::Imm(c) => (smem, off + d.size_bytes() * c as usize),
                RegOrImm::Reg(r) => {
                    let a = self.r32();
                    self.ins(["mad", "lo", "s32"], (a, r, d.size_bytes(), smem));
                    (a, off)
                }
            };
            let guard: Guard = ex.guard();
            self.st_scratch(guard, d, base, at, val);
        }
        Ok(())
    }
}
