//! Address resolution of an [`Access`]: which memory word each element of the iteration shape
//! touches, or that it is inactive.
//!
//! Resolution happens once per tile operation, before any memory is touched, so that an
//! out-of-bounds element (with `check_bounds` off) or a duplicate scatter is reported without a
//! partial write having happened.

use super::buf::{with_elem_type, Stored, Word, Words};
use super::value::{numel_checked, operand, strides_i64, Elems, Value};
use crate::elem::as_i128;
use crate::elem::Elem;
use crate::ir::{Access, Coord, DType, Kernel, Operand};

/// Which memory the resolved addresses index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Region {
    /// The slice of kernel parameter `param`; addresses are element indices into it.
    Global { param: usize },
    /// The block's shared window; addresses are indices of elements of the allocation's type
    /// counted from the window's start (byte offset = address × element size).
    Shared,
    /// A distributed tensor in the cluster's windows: indices of elements counted from the
    /// start of the rank-0 window (windows are consecutive, `window` bytes each).
    Cluster,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::Global { .. } => "global",
            Region::Shared => "shared",
            Region::Cluster => "cluster shared",
        }
    }
}

/// Why an access could not be resolved.
#[derive(Debug)]
pub(crate) enum AccessFault {
    /// The IR broke an invariant the front end guarantees.
    Malformed(String),
    /// An active element is out of bounds and `check_bounds` is off.
    OutOfBounds {
        space: &'static str,
        element: usize,
        detail: String,
    },
}

/// The outcome of [`resolve`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    pub region: Region,
    /// Number of elements of the access.
    pub n: usize,
    /// The first valid address of the tensor (0 for global, the allocation's first word for
    /// shared), to report addresses relative to the tensor.
    pub lo: i64,
    /// The active elements are the runs written to the run buffer ([`Run`]); otherwise the
    /// address buffer holds one entry per element.
    pub runs: bool,
}

/// Tile elements `e..e + len`, active, at consecutive addresses from `addr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub e: usize,
    pub addr: i64,
    pub len: usize,
}

/// Where the resolved addresses of an access are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Plan<'p> {
    /// The active elements, as runs; every other element is inactive.
    Runs(&'p [Run]),
    /// One address per element, [`INACTIVE`] for inactive ones.
    Addrs(&'p [i64]),
}

impl Plan<'_> {
    /// Whether `f` holds for the address of some active element.
    pub fn any_active(&self, f: impl Fn(i64) -> bool) -> bool {
        match self {
            Plan::Runs(runs) => runs.iter().any(|r| (r.addr..r.addr + r.len as i64).any(&f)),
            Plan::Addrs(addrs) => addrs.iter().any(|&p| p != INACTIVE && f(p)),
        }
    }
}

/// Write the addresses of `runs` (of an `n`-element access) into `addrs`, one per element.
pub(crate) fn expand_runs(runs: &[Run], n: usize, addrs: &mut Vec<i64>) {
    addrs.clear();
    addrs.resize(n, INACTIVE);
    for r in runs {
        let span = &mut addrs[r.e..r.e + r.len];
        span.iter_mut()
            .zip(r.addr..)
            .for_each(|(a, addr)| *a = addr);
    }
}

/// Marks an inactive element in the address buffer (valid addresses are never negative).
pub(crate) const INACTIVE: i64 = -1;

/// One coordinate's source, with operands already read.
pub(super) enum Src<'a> {
    Pos {
        axis: usize,
        offset: i64,
    },
    Fixed(i64),
    /// An index tile and its element type.
    Tile(Words<'a>, DType),
}

/// An integer coordinate as i64 (saturating: a value past the i64 range is out of bounds anyway).
#[inline(always)]
fn coord(d: DType, bits: u64) -> i64 {
    as_i128(d, bits).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn dtype_of(kernel: &Kernel, op: Operand) -> DType {
    match op {
        Operand::Imm(_, d) => d,
        Operand::Var(v) => kernel
            .vars
            .get(v as usize)
            .map_or(DType::I32, |v| v.ty.dtype()),
    }
}

/// The tensor an access indexes: valid absolute addresses are `lo..hi`, and an element's
/// address is `start + flat offset`.
pub(super) struct Base<'a> {
    pub region: Region,
    pub dims: std::borrow::Cow<'a, [i64]>,
    pub start: i64,
    pub lo: i64,
    pub hi: i64,
    /// A distributed tensor: (elements per block, elements per window).
    pub distributed: Option<(i64, i64)>,
}

fn bad(m: String) -> AccessFault {
    AccessFault::Malformed(m)
}

/// The memory `access.mem` names, with its extent.
fn base<'a>(
    access: &Access,
    vars: &'a [Value],
    global_lens: &[i64],
    shared_bytes: usize,
) -> Result<Base<'a>, AccessFault> {
    match vars.get(access.mem as usize) {
        Some(Value::Global(g)) => Ok(Base {
            region: Region::Global { param: g.param },
            dims: (&g.dims[..]).into(),
            start: g.offset,
            lo: 0,
            hi: global_lens.get(g.param).copied().unwrap_or(0),
            distributed: None,
        }),
        Some(Value::Shared(s)) => {
            let dims: Vec<i64> = s
                .shape
                .iter()
                .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
                .collect();
            let count = numel_checked(&s.shape)
                .and_then(|c| i64::try_from(c).ok())
                .unwrap_or(i64::MAX);
            let size = s.dtype.size_bytes();
            let first = (s.byte / size) as i64;
            let window = (shared_bytes / size) as i64;
            let (region, hi, distributed) = match s.part {
                Some(part) => (
                    Region::Cluster,
                    first.saturating_add(count),
                    Some((part.max(1) as i64, window)),
                ),
                None => (
                    Region::Shared,
                    first.saturating_add(count).min(window),
                    None,
                ),
            };
            Ok(Base {
                region,
                dims: dims.into(),
                start: first,
                lo: first,
                hi,
                distributed,
            })
        }
        _ => Err(bad(format!(
            "access base variable {} is not a global or shared tensor",
            access.mem
        ))),
    }
}

/// Each coordinate's source, with its operand read; `n` elements of `access.shape`.
fn sources<'a>(
    access: &Access,
    kernel: &Kernel,
    vars: &'a [Value],
    n: usize,
) -> Result<Vec<Src<'a>>, AccessFault> {
    let shape = &access.shape;
    let mut srcs = Vec::with_capacity(access.coords.len());
    for c in &access.coords {
        srcs.push(match c {
            Coord::Pos { axis, offset } => {
                if *axis >= shape.len() {
                    return Err(bad(format!(
                        "coordinate uses tile axis {axis} of a rank-{} access",
                        shape.len()
                    )));
                }
                let offset = match operand(vars, *offset).map_err(bad)? {
                    Elems::Scalar(v) => coord(dtype_of(kernel, *offset), v),
                    Elems::Tile(..) => {
                        return Err(bad("a position offset must be a scalar".into()))
                    }
                };
                Src::Pos {
                    axis: *axis,
                    offset,
                }
            }
            Coord::Index(op) => match operand(vars, *op).map_err(bad)? {
                Elems::Scalar(v) => Src::Fixed(coord(dtype_of(kernel, *op), v)),
                Elems::Tile(_, d) if d.len() == n => Src::Tile(d, dtype_of(kernel, *op)),
                Elems::Tile(s, _) => {
                    return Err(bad(format!(
                        "index tile of shape {s:?} for an access of shape {shape:?}"
                    )))
                }
            },
        });
    }
    Ok(srcs)
}

/// Marks an element with a coordinate outside its dim in [`flat_offsets`]: in-range
/// coordinates and strides are non-negative, so a real flat offset is never negative.
const BAD: i64 = i64::MIN;

/// Column passes: one tight loop per coordinate accumulates the flat offsets into `addrs`
/// (`n > 0` entries; the source kind is matched once per coordinate, not per element).
fn flat_offsets(addrs: &mut [i64], srcs: &[Src<'_>], dims: &[i64], shape: &[usize]) {
    let strides = strides_i64(dims);
    for (k, src) in srcs.iter().enumerate() {
        let (dim, stride) = (dims[k], strides[k]);
        let add = |f: &mut i64, c: i64| {
            if c < 0 || c >= dim {
                *f = BAD;
            } else if *f != BAD {
                // Saturating, so absurd dims push the address out of range instead of wrapping.
                *f = f.saturating_add(c.saturating_mul(stride));
            }
        };
        match src {
            Src::Fixed(c) => addrs.iter_mut().for_each(|f| add(f, *c)),
            Src::Tile(d, dt) => with_elem_type!(*dt, T => {
                match <<T as Stored>::W as Word>::slice(*d) {
                    Some(d) => addrs.iter_mut().zip(d).for_each(|(f, &w)| {
                        add(f, coord(<T as Elem>::DTYPE, w.bits()))
                    }),
                    None => addrs.iter_mut().enumerate().for_each(|(e, f)| add(f, coord(*dt, d.at(e)))),
                }
            }),
            Src::Pos { axis, offset } => {
                // Element e sits at position (e / inner) % shape[axis] along `axis`.
                let inner: usize = shape[axis + 1..].iter().product();
                let mut chunks = addrs.chunks_mut(inner.max(1));
                'outer: loop {
                    for i in 0..shape[*axis] {
                        let Some(chunk) = chunks.next() else {
                            break 'outer;
                        };
                        let c = offset.saturating_add(i as i64);
                        chunk.iter_mut().for_each(|f| add(f, c));
                    }
                }
            }
        }
    }
}

/// The buffers [`resolve`] writes: per-element addresses or runs.
pub(crate) struct Out<'o> {
    pub addrs: &'o mut Vec<i64>,
    pub runs: &'o mut Vec<Run>,
}

/// Resolve `access`: into runs (`out.runs`, [`Resolved::runs`]) when its coordinates are affine
/// in the tile position and there is no mask tile, else into `out.addrs` (one entry per element
/// of `access.shape`, row-major: the address, or [`INACTIVE`]). `global_lens[p]` is the length
/// of tensor parameter `p`; `shared_bytes` the size of the shared window (and the distance
/// between consecutive windows of a cluster).
pub(crate) fn resolve(
    access: &Access,
    kernel: &Kernel,
    vars: &[Value],
    global_lens: &[i64],
    shared_bytes: usize,
    out: Out<'_>,
) -> Result<Resolved, AccessFault> {
    let shape = &access.shape;
    let n =
        numel_checked(shape).ok_or_else(|| bad(format!("access shape {shape:?} is too large")))?;
    let b = base(access, vars, global_lens, shared_bytes)?;
    let (region, lo) = (b.region, b.lo);
    if access.coords.len() != b.dims.len() {
        return Err(bad(format!(
            "access gives {} coordinates for a rank-{} tensor",
            access.coords.len(),
            b.dims.len()
        )));
    }
    let srcs = sources(access, kernel, vars, n)?;
    let mask = match access.mask {
        None => None,
        Some(m) => {
            let m = operand(vars, m).map_err(bad)?;
            if m.len().is_some_and(|l| l != n) {
                return Err(bad(format!(
                    "mask of shape {:?} for an access of shape {shape:?}",
                    m.shape()
                )));
            }
            Some(m)
        }
    };
    let runs = Resolved {
        region,
        n,
        lo,
        runs: true,
    };
    out.runs.clear();
    // The mask as a slice (empty: all elements enabled), so the pass below needs no match.
    let mask: &[u8] = match mask {
        // Nothing is active (nor checked).
        _ if n == 0 => return Ok(runs),
        Some(Elems::Scalar(0)) => return Ok(runs),
        None | Some(Elems::Scalar(_)) => {
            if super::runs::affine(shape, &srcs, &b, access.check_bounds, out.runs) {
                return Ok(runs);
            }
            if super::indexed::one_index(&srcs, &b, n, access.check_bounds, out.addrs) {
                return Ok(Resolved {
                    runs: false,
                    ..runs
                });
            }
            &[]
        }
        Some(Elems::Tile(_, Words::W8(d))) => d,
        Some(Elems::Tile(..)) => return Err(bad("a mask tile that is not bool".into())),
    };
    addresses(access, &srcs, &b, mask, out.addrs)?;
    Ok(Resolved {
        runs: false,
        ..runs
    })
}

/// The general resolution: each element's address (or [`INACTIVE`]) into `addrs`, with
/// `mask` (empty: all elements enabled) and the bounds applied.
fn addresses(
    access: &Access,
    srcs: &[Src<'_>],
    b: &Base<'_>,
    mask: &[u8],
    addrs: &mut Vec<i64>,
) -> Result<(), AccessFault> {
    let shape = &access.shape;
    addrs.clear();
    addrs.resize(numel_checked(shape).unwrap_or(0), 0);
    flat_offsets(addrs, srcs, &b.dims, shape);
    for (e, a) in addrs.iter_mut().enumerate() {
        let f = *a;
        if mask.get(e) == Some(&0) {
            *a = INACTIVE;
            continue;
        }
        let abs = b.start.saturating_add(f);
        if f != BAD && abs >= b.lo && abs < b.hi {
            *a = match b.distributed {
                // Owner block `f / part`, at the same place in its window.
                Some((part, window)) => (f / part) * window + b.start + f % part,
                None => abs,
            };
        } else if access.check_bounds {
            *a = INACTIVE;
        } else {
            let detail = match first_bad_coord(srcs, &b.dims, shape, e) {
                Some((k, c)) => format!("coordinate {k} is {c}, outside 0..{}", b.dims[k]),
                None => format!(
                    "element offset {} is outside the tensor's 0..{}",
                    abs.saturating_sub(b.lo),
                    b.hi - b.lo
                ),
            };
            return Err(AccessFault::OutOfBounds {
                space: b.region.name(),
                element: e,
                detail,
            });
        }
    }
    Ok(())
}

/// The first coordinate of element `e` outside its dim (for the error message only).
fn first_bad_coord(
    srcs: &[Src<'_>],
    dims: &[i64],
    shape: &[usize],
    e: usize,
) -> Option<(usize, i64)> {
    // Row-major position of e.
    let mut pos = vec![0usize; shape.len()];
    let mut rest = e;
    for k in (0..shape.len()).rev() {
        let d = shape[k].max(1);
        pos[k] = rest % d;
        rest /= d;
    }
    srcs.iter().enumerate().find_map(|(k, src)| {
        let c = match src {
            Src::Pos { axis, offset } => offset.saturating_add(pos[*axis] as i64),
            Src::Fixed(v) => *v,
            Src::Tile(d, dt) => coord(*dt, d.at(e)),
        };
        (c < 0 || c >= dims[k]).then_some((k, c))
    })
}
