//! The builtin functions of the kernel language: one table of names and signatures, and one
//! handler per family.

use super::args::{opt, opt_alias, req, req_alias, Bound, P};
use super::mathfns::MathFn;
use super::{ty_name, LResult, Lowerer};
use crate::ast::{Arg, ExprKind, GenericArg};
use crate::diag::Diagnostic;
use crate::ir::{numel, DType, Inst, Operand, RmwOp, Scope, Sem, Space, Span, Ty};
use crate::table;

const SEM: P = opt_alias("sem", &["order", "memory_order"]).meta();
const SCOPE: P = opt_alias("scope", &["memory_scope"]).meta();

/// Which builtin a call path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    BlockIdx,
    GridDim,
    Arange,
    LaneIds,
    Zeros,
    Ones,
    Full,
    Select,
    Min,
    Max,
    Abs,
    Sqrt,
    Fma,
    Math(MathFn),
    /// `f32::from_bits(x)` and the other float types'.
    FromBits(DType),
    LoadGlobal,
    PrefetchGlobal,
    StoreGlobal,
    SharedTensor,
    LoadShared,
    StoreShared,
    Sync,
    Nanosleep,
    ClusterRank,
    ClusterSize,
    ClusterIdx,
    ClusterSync,
    /// `cluster_shared_tensor`: a shared tensor distributed over the cluster's blocks.
    ClusterSharedTensor,
    Fence,
    StoreScatter(Space),
    /// tilus `atomic::{space}_{op}` (element-wise); `true`: the 128-bit form on element pairs
    /// (`atomic::{space}_{op}128`).
    Elementwise(Space, RmwOp, bool),
    /// tilus `atomic::{space}_scatter_{op}`.
    Scatter(Space, RmwOp),
    /// cuTile `atomic_{op}(array, indices, ...)`; `true`: the 128-bit form on element pairs
    /// (`atomic_cas128`, `atomic_xchg128`).
    Indexed(RmwOp, bool),
    AtomicLoad,
    AtomicStore,
}

/// One free function of the language: its name, what lowers it and its parameters. The
/// name lists of messages, "did you mean", the fuzzer's vocabulary ([`builtin_names`]) and the
/// check that every builtin has a page in `tilus::lang` all come from these rows (and from the
/// generated `atomic::` and `T::from_bits` families below).
struct BuiltinDef {
    name: &'static str,
    builtin: Builtin,
    params: &'static [P],
}

const fn def(name: &'static str, builtin: Builtin, params: &'static [P]) -> BuiltinDef {
    BuiltinDef {
        name,
        builtin,
        params,
    }
}

const AXIS: &[P] = &[opt("axis").meta()];
const NO_PARAMS: &[P] = &[];
const SHAPE_DTYPE: &[P] = &[req("shape").meta(), opt("dtype").meta()];
const ONE_VALUE: &[P] = &[req("x")];
const TWO_VALUES: &[P] = &[req("a"), req("b")];
const ALLOC: &[P] = &[req("dtype").meta(), req("shape").meta()];
const INDICES: P = req_alias("indices", &["index"]).list();
const CHECK_BOUNDS: P = opt("check_bounds").meta();
const INDEXED_RMW: &[P] = &[
    req("array"),
    INDICES,
    req_alias("update", &["value", "values"]),
    CHECK_BOUNDS,
    SEM,
    SCOPE,
];
const INDEXED_CAS: &[P] = &[
    req("array"),
    INDICES,
    req("expected"),
    req("desired"),
    CHECK_BOUNDS,
    SEM,
    SCOPE,
];
const SCATTER_STORE: &[P] = &[
    req("dst"),
    req("dim").meta(),
    req("indices"),
    req("values"),
    opt("mask"),
];

/// The free functions, in the order messages list them.
const BUILTINS: &[BuiltinDef] = &[
    def("block_idx", Builtin::BlockIdx, AXIS),
    def("grid_dim", Builtin::GridDim, AXIS),
    def("arange", Builtin::Arange, &[req("n").meta()]),
    def("lane_ids", Builtin::LaneIds, SHAPE_DTYPE),
    def("zeros", Builtin::Zeros, SHAPE_DTYPE),
    def("ones", Builtin::Ones, SHAPE_DTYPE),
    def("full", Builtin::Full, &[req("shape").meta(), req("value")]),
    def(
        "select",
        Builtin::Select,
        &[req("cond"), req("a"), req("b")],
    ),
    def("min", Builtin::Min, TWO_VALUES),
    def("max", Builtin::Max, TWO_VALUES),
    def("abs", Builtin::Abs, ONE_VALUE),
    def("sqrt", Builtin::Sqrt, ONE_VALUE),
    def("fma", Builtin::Fma, &[req("a"), req("b"), req("c")]),
    def("exp", Builtin::Math(MathFn::Exp), ONE_VALUE),
    def("ln", Builtin::Math(MathFn::Ln), ONE_VALUE),
    // Natural logarithm, as `log` is in numpy, Triton and CUDA.
    def("log", Builtin::Math(MathFn::Ln), ONE_VALUE),
    def(
        "load_global",
        Builtin::LoadGlobal,
        &[
            req("src"),
            req("offsets").list(),
            req("shape").meta(),
            opt("other"),
            opt("mask"),
        ],
    ),
    def(
        "prefetch_global",
        Builtin::PrefetchGlobal,
        &[req("src"), req("offsets").list(), req("shape").meta()],
    ),
    def(
        "store_global",
        Builtin::StoreGlobal,
        &[req("dst"), req("value"), req("offsets").list(), opt("mask")],
    ),
    def("shared_tensor", Builtin::SharedTensor, ALLOC),
    def(
        "load_shared",
        Builtin::LoadShared,
        &[
            req("src"),
            opt("offsets").list(),
            opt("shape").meta(),
            opt("other"),
            opt("mask"),
        ],
    ),
    def(
        "store_shared",
        Builtin::StoreShared,
        &[req("dst"), req("value")],
    ),
    def("sync", Builtin::Sync, NO_PARAMS),
    def("nanosleep", Builtin::Nanosleep, &[req("ns")]),
    def("cluster_rank", Builtin::ClusterRank, NO_PARAMS),
    def("cluster_size", Builtin::ClusterSize, NO_PARAMS),
    def("cluster_idx", Builtin::ClusterIdx, AXIS),
    def("cluster_sync", Builtin::ClusterSync, NO_PARAMS),
    def("cluster_shared_tensor", Builtin::ClusterSharedTensor, ALLOC),
    def(
        "fence",
        Builtin::Fence,
        &[
            req_alias("sem", &["order", "memory_order"]).meta(),
            req_alias("scope", &["memory_scope"]).meta(),
        ],
    ),
    def(
        "store_shared_scatter",
        Builtin::StoreScatter(Space::Shared),
        SCATTER_STORE,
    ),
    def(
        "store_global_scatter",
        Builtin::StoreScatter(Space::Global),
        SCATTER_STORE,
    ),
    def(
        "atomic_load",
        Builtin::AtomicLoad,
        &[req("array"), INDICES, CHECK_BOUNDS, SEM, SCOPE],
    ),
    def(
        "atomic_store",
        Builtin::AtomicStore,
        &[
            req("array"),
            INDICES,
            req_alias("value", &["values", "update"]),
            CHECK_BOUNDS,
            SEM,
            SCOPE,
        ],
    ),
    def(
        "atomic_add",
        Builtin::Indexed(RmwOp::Add, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_sub",
        Builtin::Indexed(RmwOp::Sub, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_min",
        Builtin::Indexed(RmwOp::Min, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_max",
        Builtin::Indexed(RmwOp::Max, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_xchg",
        Builtin::Indexed(RmwOp::Exch, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_cas",
        Builtin::Indexed(RmwOp::Cas, false),
        INDEXED_CAS,
    ),
    def(
        "atomic_and",
        Builtin::Indexed(RmwOp::And, false),
        INDEXED_RMW,
    ),
    def("atomic_or", Builtin::Indexed(RmwOp::Or, false), INDEXED_RMW),
    def(
        "atomic_xor",
        Builtin::Indexed(RmwOp::Xor, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_inc",
        Builtin::Indexed(RmwOp::Inc, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_dec",
        Builtin::Indexed(RmwOp::Dec, false),
        INDEXED_RMW,
    ),
    def(
        "atomic_xchg128",
        Builtin::Indexed(RmwOp::Exch, true),
        INDEXED_RMW,
    ),
    def(
        "atomic_cas128",
        Builtin::Indexed(RmwOp::Cas, true),
        INDEXED_CAS,
    ),
];

/// The op names of the tilus `atomic::` group.
const TILUS_OPS: &[(&str, RmwOp)] = &[
    ("add", RmwOp::Add),
    ("sub", RmwOp::Sub),
    ("min", RmwOp::Min),
    ("max", RmwOp::Max),
    ("exch", RmwOp::Exch),
    ("cas", RmwOp::Cas),
    ("and", RmwOp::And),
    ("or", RmwOp::Or),
    ("xor", RmwOp::Xor),
    ("inc", RmwOp::Inc),
    ("dec", RmwOp::Dec),
];

fn resolve(path: &[String]) -> Option<Builtin> {
    let segs: Vec<&str> = path.iter().map(String::as_str).collect();
    // Accept an optional leading `tilus::` / `tilus::prelude::`.
    let segs: &[&str] = match segs.as_slice() {
        ["tilus", "prelude", rest @ ..] | ["tilus", rest @ ..] => rest,
        s => s,
    };
    match segs {
        [name] => BUILTINS.iter().find(|d| d.name == *name).map(|d| d.builtin),
        [ty, "from_bits"] => DType::from_name(ty)
            .filter(|d| d.is_float())
            .map(Builtin::FromBits),
        ["atomic", name] => {
            let (space, rest) = if let Some(r) = name.strip_prefix("shared_") {
                (Space::Shared, r)
            } else if let Some(r) = name.strip_prefix("global_") {
                (Space::Global, r)
            } else {
                return None;
            };
            if let Some(op) = rest.strip_prefix("scatter_") {
                TILUS_OPS
                    .iter()
                    .find(|(n, _)| *n == op)
                    .map(|(_, o)| Builtin::Scatter(space, *o))
            } else if let Some(op) = rest.strip_suffix("128") {
                // Every op resolves, so that `global_add128` is told which ops have 128 bits.
                TILUS_OPS
                    .iter()
                    .find(|(n, _)| *n == op)
                    .map(|(_, o)| Builtin::Elementwise(space, *o, true))
            } else {
                TILUS_OPS
                    .iter()
                    .find(|(n, _)| *n == rest)
                    .map(|(_, o)| Builtin::Elementwise(space, *o, false))
            }
        }
        _ => None,
    }
}

/// The parameters of builtin `b`: its row's, or those of a generated family (`atomic::..`,
/// `T::from_bits`).
fn signature(b: Builtin) -> &'static [P] {
    if let Some(d) = BUILTINS.iter().find(|d| d.builtin == b) {
        return d.params;
    }
    match b {
        Builtin::FromBits(_) => ONE_VALUE,
        Builtin::Elementwise(Space::Shared, RmwOp::Cas, _) => {
            const {
                &[
                    req("dst"),
                    req("compare"),
                    req("values"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Elementwise(Space::Global, RmwOp::Cas, _) => {
            const {
                &[
                    req("dst"),
                    req("compare"),
                    req("values"),
                    opt("offsets").list(),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Elementwise(Space::Shared, ..) => {
            const { &[req("dst"), req("values"), opt("mask"), SEM, SCOPE] }
        }
        Builtin::Elementwise(Space::Global, ..) => {
            const {
                &[
                    req("dst"),
                    req("values"),
                    opt("offsets").list(),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Scatter(..) => {
            const {
                &[
                    req("dst"),
                    req("dim").meta(),
                    req("indices"),
                    req("values"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        _ => unreachable!("every other builtin has a row in `BUILTINS`"),
    }
}

fn display_name(path: &[String]) -> String {
    path.join("::")
}

/// Whether the tilus scatter form of `op` exists (the legality table provides it for some
/// element type).
fn has_scatter(op: RmwOp) -> bool {
    table::RMW_ROWS.iter().any(|r| r.op == op && r.scatter)
}

/// Whether `op` has a 128-bit form on element pairs.
fn has_pairs(op: RmwOp) -> bool {
    table::RMW_ROWS.iter().any(|r| r.op == op && r.pairs)
}

/// Every builtin as it is written (`load_global`, `atomic::global_add`, `f32::from_bits`), for
/// "did you mean", the fuzzer's vocabulary and the documentation check. Generated from the
/// tables above, and each checked with `resolve`, so it cannot offer a name that does not
/// resolve.
pub fn builtin_names() -> Vec<String> {
    let mut v: Vec<String> = BUILTINS.iter().map(|d| d.name.to_string()).collect();
    for space in ["shared", "global"] {
        for (op, o) in TILUS_OPS {
            v.push(format!("atomic::{space}_{op}"));
            if has_scatter(*o) {
                v.push(format!("atomic::{space}_scatter_{op}"));
            }
            if has_pairs(*o) {
                v.push(format!("atomic::{space}_{op}128"));
            }
        }
    }
    v.extend(
        DType::ALL
            .iter()
            .map(|d| format!("{}::from_bits", d.name())),
    );
    v.retain(|n| resolve(&n.split("::").map(String::from).collect::<Vec<_>>()).is_some());
    v
}

/// Every parameter name and alias of the builtins and methods, once each (for the fuzzer's
/// vocabulary).
pub fn keyword_names() -> Vec<&'static str> {
    let families = [
        Builtin::Elementwise(Space::Shared, RmwOp::Cas, false),
        Builtin::Elementwise(Space::Global, RmwOp::Cas, false),
        Builtin::Scatter(Space::Global, RmwOp::Add),
    ];
    let params = BUILTINS
        .iter()
        .map(|d| d.params)
        .chain(families.into_iter().map(signature))
        .chain(super::methods::METHODS.iter().map(|m| m.params));
    let mut v: Vec<&'static str> = Vec::new();
    for p in params.flatten() {
        for n in std::iter::once(p.name).chain(p.aliases.iter().copied()) {
            if !v.contains(&n) {
                v.push(n);
            }
        }
    }
    v
}

/// The builtins in one line, for the note of an unknown function.
fn names_summary() -> String {
    let free: Vec<&str> = BUILTINS.iter().map(|d| d.name).collect();
    let plain: Vec<&str> = free
        .iter()
        .copied()
        .filter(|n| !n.starts_with("atomic_"))
        .collect();
    let cutile: Vec<&str> = free
        .iter()
        .filter_map(|n| n.strip_prefix("atomic_"))
        .collect();
    let ops: Vec<&str> = TILUS_OPS.iter().map(|(n, _)| *n).collect();
    let scatter: Vec<&str> = TILUS_OPS
        .iter()
        .filter(|(_, o)| has_scatter(*o))
        .map(|(n, _)| *n)
        .collect();
    let pairs: Vec<&str> = TILUS_OPS
        .iter()
        .filter(|(_, o)| has_pairs(*o))
        .map(|(n, _)| *n)
        .collect();
    let from_bits: Vec<&str> = DType::ALL
        .iter()
        .map(|d| d.name())
        .filter(|t| resolve(&[t.to_string(), "from_bits".into()]).is_some())
        .collect();
    let mut s = plain.join(", ");
    s += &format!(
        ", atomic::{{shared,global}}_{{{}}}, atomic::{{shared,global}}_scatter_{{{}}}, atomic::{{shared,global}}_{{{}}}128, atomic_{{{}}}",
        ops.join(","),
        scatter.join(","),
        pairs.join(","),
        cutile.join(",")
    );
    if !from_bits.is_empty() {
        s += &format!(", {{{}}}::from_bits", from_bits.join(","));
    }
    s
}

impl Lowerer {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call(
        &mut self,
        path: &[String],
        path_span: Span,
        generics: &[GenericArg],
        args: &[Arg],
        want: Option<DType>,
        span: Span,
    ) -> LResult<Option<Operand>> {
        let name = display_name(path);
        let Some(b) = resolve(path) else {
            return Err(self.unknown_builtin(&name, path_span));
        };
        let generic_dtype = self.generic_dtype(b, &name, generics, path_span)?;
        let shared_tensor = matches!(b, Builtin::SharedTensor | Builtin::ClusterSharedTensor);
        let sig: &'static [P] = if shared_tensor && generic_dtype.is_some() {
            const { &[req("shape").meta()] }
        } else {
            signature(b)
        };
        self.reject_compare(b, &name, args)?;
        self.reject_deterministic(b, &name, args)?;
        let bound = self.bind_args(&name, sig, args, span)?;
        let explicit = self.explicit_dtype(&bound, &generic_dtype, shared_tensor)?;
        match b {
            Builtin::BlockIdx
            | Builtin::GridDim
            | Builtin::ClusterRank
            | Builtin::ClusterSize
            | Builtin::ClusterIdx => self.grid_index(b, &name, &bound, want, span).map(Some),
            Builtin::Sync => {
                self.emit_void(Inst::Sync, span);
                Ok(None)
            }
            Builtin::Nanosleep => self.nanosleep(&bound, span).map(|()| None),
            Builtin::ClusterSync => {
                self.need_cluster(&name, span)?;
                self.emit_void(Inst::ClusterSync, span);
                Ok(None)
            }
            Builtin::Arange => self.arange(&bound, explicit, want, span).map(Some),
            Builtin::LaneIds => self.lane_ids(&bound, explicit, want, span).map(Some),
            Builtin::Zeros | Builtin::Ones | Builtin::Full => {
                self.fill(b, &bound, explicit, want, span).map(Some)
            }
            Builtin::Select => {
                let c = self.req_arg(&bound, "cond", None)?;
                let (a, bb) = self.arg_pair(&bound, "a", "b", want)?;
                Ok(Some(self.select(c, a, bb, span)?))
            }
            Builtin::Min | Builtin::Max => {
                let (a, bb) = self.arg_pair(&bound, "a", "b", want)?;
                Ok(Some(self.minmax(b == Builtin::Min, a, bb, span)?))
            }
            Builtin::Abs => {
                let x = self.req_arg(&bound, "x", want)?;
                Ok(Some(self.abs(x, span)?))
            }
            Builtin::Sqrt => {
                let x = self.req_arg(&bound, "x", want.filter(|d| d.is_float()))?;
                Ok(Some(self.float_fn("sqrt", x, span)?))
            }
            Builtin::Math(func) => {
                let x = self.req_arg(&bound, "x", want.filter(|d| d.is_float()))?;
                Ok(Some(self.math_fn(func, x, span)?))
            }
            Builtin::FromBits(to) => {
                let bits = to.bits_type();
                let x = self.req_arg(&bound, "x", Some(bits))?;
                Ok(Some(self.bitcast_checked(
                    x,
                    bits,
                    to,
                    "from_bits",
                    span,
                )?))
            }
            Builtin::Fma => self.fma_call(&bound, want, span).map(Some),
            Builtin::SharedTensor | Builtin::ClusterSharedTensor => {
                let distributed = b == Builtin::ClusterSharedTensor;
                self.alloc_shared(distributed, &name, &bound, generic_dtype, span)
                    .map(Some)
            }
            Builtin::LoadShared => self.load_shared(&bound, span).map(Some),
            Builtin::StoreShared => self.store_shared(&bound, span).map(|()| None),
            Builtin::LoadGlobal => self.load_global(&bound, span).map(Some),
            Builtin::PrefetchGlobal => self.prefetch_global(&bound, span).map(|()| None),
            Builtin::StoreGlobal => self.store_global(&bound, span).map(|()| None),
            Builtin::Fence => self.fence(&bound, span).map(|()| None),
            Builtin::StoreScatter(space) => self.store_scatter(&bound, space, span).map(|()| None),
            Builtin::Elementwise(space, op, pairs) => self
                .elementwise_rmw(&bound, space, op, pairs, span)
                .map(Some),
            Builtin::Scatter(space, op) => self.scatter_rmw(&bound, space, op, span).map(Some),
            Builtin::Indexed(op, pairs) => self.indexed_rmw(&bound, op, pairs, span).map(Some),
            Builtin::AtomicLoad => self.indexed_load(&bound, span).map(Some),
            Builtin::AtomicStore => self.indexed_store(&bound, span).map(|()| None),
        }
    }

    /// The error for a call of no builtin: a close name as help, else the list of them all.
    fn unknown_builtin(&mut self, name: &str, path_span: Span) -> super::Reported {
        let d = Diagnostic::new(
            path_span,
            format!("cannot find function `{name}` in tile kernels"),
        );
        // A close name says what to write; only without one is the whole list worth reading.
        let names = builtin_names();
        let d = match super::suggest::similar("a builtin", name, names.iter().map(String::as_str)) {
            Some(h) => d.help(h),
            None => d.note(format!("kernel bodies may call: {}", names_summary())),
        };
        self.error(d)
    }

    /// Generic arguments: an element type, on the builtins that make values of one
    /// (`shared_tensor::<f32>(shape)`, `zeros::<u8>(shape)`, `arange::<i64>(n)`).
    fn generic_dtype(
        &mut self,
        b: Builtin,
        name: &str,
        generics: &[GenericArg],
        path_span: Span,
    ) -> LResult<Option<(String, Span)>> {
        if generics.is_empty() {
            return Ok(None);
        }
        match (b, generics) {
            (
                Builtin::SharedTensor
                | Builtin::ClusterSharedTensor
                | Builtin::Zeros
                | Builtin::Ones
                | Builtin::Arange
                | Builtin::LaneIds,
                [GenericArg::Type(t, s)],
            ) => Ok(Some((t.clone(), *s))),
            _ => self.err(path_span, format!("`{name}` takes no generic arguments")),
        }
    }

    /// A `compare` argument on an atomic other than compare-and-swap: an error naming the
    /// compare-and-swap builtins, before binding would call it an unknown argument.
    fn reject_compare(&mut self, b: Builtin, name: &str, args: &[Arg]) -> LResult<()> {
        if let Builtin::Elementwise(_, op, _) | Builtin::Scatter(_, op) | Builtin::Indexed(op, _) =
            b
        {
            if op != RmwOp::Cas {
                if let Some((_, at)) = args
                    .iter()
                    .filter_map(|a| a.name.as_ref())
                    .find(|(n, _)| n == "compare")
                {
                    return self.err(
                        *at,
                        format!("`{name}` takes no `compare`: only compare-and-swap does (`atomic::shared_cas`, `atomic::global_cas`, `atomic_cas`)"),
                    );
                }
            }
        }
        Ok(())
    }

    /// A `deterministic` argument on an atomic: an error saying why a launch cannot promise it
    /// and where the promise is kept (`tilus::algo`), before binding would call it an unknown
    /// argument.
    fn reject_deterministic(&mut self, b: Builtin, name: &str, args: &[Arg]) -> LResult<()> {
        if !matches!(
            b,
            Builtin::Elementwise(..) | Builtin::Scatter(..) | Builtin::Indexed(..)
        ) {
            return Ok(());
        }
        let Some((_, at)) = args
            .iter()
            .filter_map(|a| a.name.as_ref())
            .find(|(n, _)| n == "deterministic")
        else {
            return Ok(());
        };
        Err(self.error(
            Diagnostic::new(
                *at,
                format!("`{name}` cannot promise deterministic results: atomics combine in the order the blocks happen to run, which nothing in one launch fixes"),
            )
            .help("for the bits of the sequential loop `out[idx[i]] += vals[i]` on every run, call `tilus::algo::index_add` (or `index_add_rows`, `segmented_reduce`) from the host"),
        ))
    }

    /// An explicit element type: `zeros([4], f32)` or the generic form (a shared tensor's
    /// `dtype` argument is read by [`Self::alloc_shared`] instead).
    fn explicit_dtype(
        &mut self,
        bound: &Bound<'_>,
        generic_dtype: &Option<(String, Span)>,
        shared_tensor: bool,
    ) -> LResult<Option<DType>> {
        let dtype_arg = bound.has("dtype").then(|| bound.get("dtype")).flatten();
        let explicit = match (generic_dtype, dtype_arg) {
            (Some((t, s)), _) => Some((t.clone(), *s)),
            (None, Some(e)) if !shared_tensor => match &e.kind {
                ExprKind::Path(p) if p.len() == 1 => Some((p[0].clone(), e.span)),
                _ => return self.err(e.span, "expected an element type such as `f32`"),
            },
            _ => None,
        };
        match explicit {
            Some((t, s)) => match DType::from_name(&t) {
                Some(d) => Ok(Some(d)),
                None => Err(self.error(super::suggest::unknown_dtype(
                    Diagnostic::new(s, format!("unknown element type `{t}`")),
                    &t,
                ))),
            },
            None => Ok(None),
        }
    }

    /// `block_idx`, `grid_dim` and the cluster indices: one special register read as an `i32`,
    /// cast to the integer type its context needs.
    fn grid_index(
        &mut self,
        b: Builtin,
        name: &str,
        bound: &Bound<'_>,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        if matches!(
            b,
            Builtin::ClusterRank | Builtin::ClusterSize | Builtin::ClusterIdx
        ) {
            self.need_cluster(name, span)?;
        }
        // The axis of a 1-, 2- or 3-D grid (of blocks, or of clusters): x by default
        // (`cluster_rank()`/`cluster_size()` take none).
        let axis_arg = bound.has("axis").then(|| bound.get("axis")).flatten();
        let axis = match axis_arg {
            Some(e) => {
                let a = self.const_usize(e, "a grid axis")?;
                if a > 2 {
                    return self.err(
                        e.span,
                        format!(
                            "grid axis {a} does not exist: grids have axes 0 (x), 1 (y) and 2 (z)"
                        ),
                    );
                }
                a as u8
            }
            None => 0,
        };
        let inst = match b {
            Builtin::BlockIdx => Inst::BlockIdx { axis },
            Builtin::GridDim => Inst::GridDim { axis },
            Builtin::ClusterIdx => Inst::ClusterIdx { axis },
            Builtin::ClusterRank => Inst::ClusterRank,
            _ => Inst::ClusterSize,
        };
        let v = self.emit(inst, Ty::Scalar(DType::I32), span);
        // An integer of the type its context needs (`types.rs`).
        match want {
            Some(d) if d.is_int() && d != DType::I32 => self.cast(v, d, span),
            _ => Ok(v),
        }
    }

    /// `arange(n)`: the tile `0..n` of a compile-time length, its integer type from the
    /// generic, the length's suffix or the context.
    fn arange(
        &mut self,
        bound: &Bound<'_>,
        explicit: Option<DType>,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        let n = self.const_usize(bound.req("n"), "the length of `arange`")?;
        if n == 0 || n > super::MAX_TILE_ELEMENTS {
            return self.err(
                bound.req("n").span,
                format!(
                    "`arange({n})`: the length must be 1..={}",
                    super::MAX_TILE_ELEMENTS
                ),
            );
        }
        // `arange::<u64>(n)`, or the suffix of the length (`arange(32u64)`, as Rust
        // types `0..32u64`), else the context's integer type, else `i32`.
        let suffixed = match &bound.req("n").kind {
            ExprKind::Int {
                suffix: Some(s), ..
            } => DType::from_name(s),
            _ => None,
        };
        if let (Some(e), Some(s)) = (explicit, suffixed) {
            if e != s {
                return self.err(
                    bound.req("n").span,
                    format!("`arange::<{e}>` with a length of type `{s}`: write one type"),
                );
            }
        }
        let d = explicit
            .or(suffixed)
            .or(want.filter(|d| d.is_int()))
            .unwrap_or(DType::I32);
        if !d.is_int() || crate::elem::int_const(d, n as i128 - 1).is_none() {
            return self.err(
                span,
                format!("`arange({n})` does not fit in `{d}` elements"),
            );
        }
        Ok(self.emit(
            Inst::Arange { n, dtype: d },
            Ty::Tile {
                dtype: d,
                shape: vec![n],
            },
            span,
        ))
    }

    /// `lane_ids(shape)`: each element's warp lane (`0..32`) in the tile layout, of the
    /// explicit integer type, else the context's, else `i32`.
    fn lane_ids(
        &mut self,
        bound: &Bound<'_>,
        explicit: Option<DType>,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        let shape = self.shape_arg(bound.req("shape"))?;
        let dtype = explicit
            .or(want.filter(|d| d.is_int()))
            .unwrap_or(DType::I32);
        if !dtype.is_int() {
            return self.err(
                span,
                format!("`lane_ids` makes integer tiles, not `{dtype}`: convert with `as {dtype}`"),
            );
        }
        Ok(self.emit(
            Inst::LaneIds {
                shape: shape.clone(),
                dtype,
            },
            Ty::Tile { dtype, shape },
            span,
        ))
    }

    /// `zeros`, `ones` and `full`: a tile of one scalar value, typed by the explicit element
    /// type, the context or the fill value.
    fn fill(
        &mut self,
        b: Builtin,
        bound: &Bound<'_>,
        explicit: Option<DType>,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        let shape = self.shape_arg(bound.req("shape"))?;
        let value = match b {
            Builtin::Full => {
                let v = self.req_arg(bound, "value", want)?;
                if !self.ty(v).is_scalar() {
                    return self.err(
                        bound.req("value").span,
                        "the fill value of `full` must be a scalar",
                    );
                }
                v
            }
            _ => {
                let d = explicit
                    .or(want.filter(|d| d.is_numeric()))
                    .unwrap_or(DType::I32);
                let one = (b == Builtin::Ones) as u64;
                Operand::Imm(crate::elem::cast(DType::I32, d, one), d)
            }
        };
        let dtype = self.ty(value).dtype();
        Ok(self.emit(
            Inst::Full {
                shape: shape.clone(),
                value,
            },
            Ty::Tile { dtype, shape },
            span,
        ))
    }

    /// `nanosleep(ns)`: a scalar `u32` (or `i32`) number of nanoseconds.
    fn nanosleep(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let ns = self.req_arg(bound, "ns", Some(DType::U32))?;
        let ty = self.ty(ns);
        if !ty.is_scalar() || !matches!(ty.dtype(), DType::U32 | DType::I32) {
            return self.err(
                bound.req("ns").span,
                format!(
                    "`nanosleep` takes a scalar `u32` number of nanoseconds, not {}",
                    ty_name(&ty)
                ),
            );
        }
        self.emit_void(Inst::Nanosleep { ns }, span);
        Ok(())
    }

    /// `fma(a, b, c)`: the typed operand decides the type of context-typed ones.
    fn fma_call(&mut self, bound: &Bound<'_>, want: Option<DType>, span: Span) -> LResult<Operand> {
        let known = ["a", "b", "c"]
            .iter()
            .find_map(|n| self.arg_type(bound, n))
            .map(|t| t.dtype())
            .or(want.filter(|d| d.is_float()));
        let a = self.req_arg(bound, "a", known)?;
        let w = Some(self.ty(a).dtype());
        let b2 = self.req_arg(bound, "b", w)?;
        let c = self.req_arg(bound, "c", w)?;
        self.fma(a, b2, c, span)
    }

    /// `shared_tensor` and `cluster_shared_tensor`: a static allocation of the block's shared
    /// memory (a cluster's splits axis 0 over its blocks, each holding its share of the rows).
    fn alloc_shared(
        &mut self,
        distributed: bool,
        name: &str,
        bound: &Bound<'_>,
        generic_dtype: Option<(String, Span)>,
        span: Span,
    ) -> LResult<Operand> {
        let blocks = if distributed {
            let c = self.need_cluster(name, span)?;
            c.iter().product::<u32>() as usize
        } else {
            1
        };
        let (dtype, dspan) = match generic_dtype {
            Some((t, s)) => (t, s),
            None => {
                let e = bound.req("dtype");
                match &e.kind {
                    ExprKind::Path(p) if p.len() == 1 => (p[0].clone(), e.span),
                    _ => return self.err(e.span, "expected an element type such as `i32`"),
                }
            }
        };
        let Some(d) = DType::from_name(&dtype) else {
            return Err(self.error(super::suggest::unknown_dtype(
                Diagnostic::new(dspan, format!("unknown element type `{dtype}`")),
                &dtype,
            )));
        };
        let shape = self.shape_arg_max(bound.req("shape"), super::MAX_TILE_ELEMENTS * blocks)?;
        let rows = shape.first().copied().unwrap_or(1);
        if rows % blocks != 0 {
            return Err(self.error(
                Diagnostic::new(
                    bound.req("shape").span,
                    format!("a cluster shared tensor's axis 0 is split evenly over the cluster's {blocks} blocks, but {rows} rows do not divide by {blocks}"),
                )
                .help(format!("make axis 0 a multiple of {blocks}")),
            ));
        }
        // Each block holds its share of the rows.
        let bytes = numel(&shape) / blocks * d.size_bytes();
        let offset = self.shared_bytes.next_multiple_of(16);
        if offset + bytes > super::MAX_SHARED_BYTES {
            return self.err(
                span,
                format!(
                    "shared memory overflow: this allocation brings the kernel to {} bytes, over the {}-byte limit of a block",
                    offset + bytes,
                    super::MAX_SHARED_BYTES
                ),
            );
        }
        self.shared_bytes = offset + bytes;
        self.distributed_shared |= distributed;
        let t = self.emit(
            Inst::AllocShared {
                dtype: d,
                shape: shape.clone(),
                offset,
                distributed,
            },
            Ty::Shared { dtype: d, shape },
            span,
        );
        if let (true, Operand::Var(v)) = (distributed, t) {
            self.distributed_vars.insert(v);
        }
        Ok(t)
    }

    /// `fence(sem, scope)`: a memory fence, its order and scope checked against the table and
    /// the target.
    fn fence(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let sem = self.sem_arg(Some(bound.req("sem")), Sem::AcqRel)?;
        let scope = self.scope_arg(Some(bound.req("scope")), Scope::Gpu)?;
        if let Err(e) = table::check_fence(sem, scope, self.explicit_target) {
            return Err(self.illegal(bound, span, e));
        }
        self.require_target(table::scope_min_target(scope));
        self.emit_void(Inst::Fence { sem, scope }, span);
        Ok(())
    }
}

impl Lowerer {
    /// Two value arguments that must agree in type (`select`'s arms, `min`/`max`), the
    /// context-typed one (if any) taking the other's type (`types.rs`).
    pub(super) fn arg_pair(
        &mut self,
        bound: &super::args::Bound<'_>,
        a: &str,
        b: &str,
        want: Option<DType>,
    ) -> LResult<(Operand, Operand)> {
        let (ta, tb) = (self.arg_type(bound, a), self.arg_type(bound, b));
        let (ea, eb) = (bound.req(a), bound.req(b));
        let w = match (&ta, &tb) {
            (Some(t), _) | (None, Some(t)) => Some(t.dtype()),
            (None, None) => match (self.flex_kind(ea), self.flex_kind(eb)) {
                (Some(x), Some(y)) => {
                    super::types::Flex::unify(x, y).and_then(|k| want.filter(|d| k.accepts(*d)))
                }
                _ => None,
            },
        };
        let va = self.req_arg(bound, a, w)?;
        let w = w.or(Some(self.ty(va).dtype()));
        let vb = self.req_arg(bound, b, w)?;
        Ok((va, vb))
    }
}

impl Lowerer {
    /// The declared cluster shape, or an error at `span` for a cluster builtin in a kernel
    /// without one.
    fn need_cluster(&mut self, name: &str, span: Span) -> LResult<[u32; 3]> {
        match self.cluster {
            Some(c) => Ok(c),
            None => Err(self.error(
                Diagnostic::new(
                    span,
                    format!("`{name}` needs a thread-block cluster, and this kernel declares none"),
                )
                .help("declare one: `#[tile_kernel(threads = .., cluster = 4)]` (sm_90)"),
            )),
        }
    }
}
