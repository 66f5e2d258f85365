//! Runs: the resolution of an access whose coordinates are affine in the tile position (no
//! index tile, no mask tile) and whose last coordinate walks the tile's last axis. Every row of
//! the tile (the elements along its last axis) is then one span of consecutive addresses, so
//! the bounds are checked once per row, not once per element, and memory loops copy spans.

use super::access::{Base, Run, Src};
use super::value::{next_pos, strides_i64};

/// Write the runs of the active elements of an access of `shape` (row-major, `n > 0`
/// elements) into `runs`. `false` when the access is not of this form, or (with
/// `check_bounds` off) has an element out of bounds, which the general resolution reports.
pub(super) fn affine(
    shape: &[usize],
    srcs: &[Src<'_>],
    b: &Base<'_>,
    check_bounds: bool,
    runs: &mut Vec<Run>,
) -> bool {
    runs.clear();
    let (Some(last_axis), Some(k)) = (shape.len().checked_sub(1), srcs.len().checked_sub(1)) else {
        return false;
    };
    // The last coordinate (stride 1) walks the last tile axis, no other coordinate does, and
    // none is an index tile; a distributed tensor's elements are spread over windows.
    let Src::Pos { axis, offset } = srcs[k] else {
        return false;
    };
    let other_ok = srcs[..k].iter().all(|s| match s {
        Src::Pos { axis, .. } => *axis != last_axis,
        Src::Fixed(_) => true,
        Src::Tile(..) => false,
    });
    if axis != last_axis || !other_ok || b.distributed.is_some() {
        return false;
    }
    let len = shape[last_axis];
    let rows = shape[..last_axis].iter().product::<usize>();
    let strides = strides_i64(&b.dims);
    let mut pos = vec![0usize; last_axis];
    for row in 0..rows {
        let span = row_base(srcs, &b.dims, &strides, &pos).map(|base| {
            // Positions p of the row with 0 <= offset + p < dim and lo <= addr(p) < hi.
            let (base, o) = (b.start as i128 + base, offset as i128);
            let from = 0.max(-o).max(b.lo as i128 - base - o);
            let to = (len as i128)
                .min(b.dims[k] as i128 - o)
                .min(b.hi as i128 - base - o);
            (from, to, base + o)
        });
        let full = match span {
            Some((from, to, addr)) => {
                if from < to {
                    runs.push(Run {
                        e: row * len + from as usize,
                        addr: (addr + from) as i64,
                        len: (to - from) as usize,
                    });
                }
                from <= 0 && to >= len as i128
            }
            None => false,
        };
        if !full && !check_bounds {
            return false;
        }
        next_pos(&mut pos, &shape[..last_axis]);
    }
    true
}

/// The flat offset of a row's first element from its coordinates other than the last, or
/// `None` when one of them is outside its dim (the whole row is).
fn row_base(srcs: &[Src<'_>], dims: &[i64], strides: &[i64], pos: &[usize]) -> Option<i128> {
    let mut flat = 0i128;
    for (j, s) in srcs[..srcs.len() - 1].iter().enumerate() {
        let c = match s {
            Src::Fixed(c) => *c,
            Src::Pos { axis, offset } => offset.saturating_add(pos[*axis] as i64),
            Src::Tile(..) => return None,
        };
        if c < 0 || c >= dims[j] {
            return None;
        }
        flat += c as i128 * strides[j] as i128;
    }
    Some(flat)
}
