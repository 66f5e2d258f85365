//! Regression tests for bugs found by fuzzing (issue 7), each on every backend: the strict
//! emulator, and the GPU with `--features cuda`.
//!
//! * an argument with an effect was lowered twice (the atomic in it happened twice);
//! * a user variable named like a compiler temporary (`_t...`) was aliased instead of copied;
//! * kernels named like PTX reserved words, or with more parameters than the PTX parameter
//!   space holds, were accepted and then rejected by ptxas;
//! * a tensor where a value is expected reached the back end as an internal error;
//! * a parameter whose type came from a `macro_rules!` `$t:ty` fragment (an invisible group)
//!   was rejected as an unsupported type.

mod common;

use common::{assemble_all, backends};
use tilus::core::ast::*;
use tilus::core::ir::Span;
use tilus::prelude::*;

#[tile_kernel(threads = 32)]
fn nested_effect(out: GlobalTensor<i32>, counter: GlobalTensor<i32>) {
    // The inner atomic is an argument of the outer one: it must happen exactly once.
    atomic::global_add(out, atomic::global_add(counter, ones([1])));
}

#[test]
fn an_effect_inside_an_argument_happens_once() {
    for dev in backends() {
        let out = dev.upload(&[100]).unwrap();
        let counter = dev.upload(&[7]).unwrap();
        nested_effect::launch(&dev, 1, &out, &counter).unwrap();
        assert_eq!(counter.download().unwrap(), vec![8], "{dev:?}: counter");
        // out += the counter's value before the increment.
        assert_eq!(out.download().unwrap(), vec![107], "{dev:?}: out");
    }
    // One atomic per call in the PTX: two `add`s in all (the outer one is a `red`).
    let adds = nested_effect::PTX.matches(".global.add.").count();
    assert_eq!(adds, 2, "{}", nested_effect::PTX);
}

#[tile_kernel(threads = 32)]
fn argument_order(log: GlobalTensor<i32>, c: GlobalTensor<i32>) {
    // Arguments are evaluated left to right as written: the first RMW sees 0, the second 1.
    let a = atomic_add(c, 0, 1);
    store_global(log, full([1], a), offsets = [0]);
    atomic::global_exch(
        log.view(1, [1]),
        values = atomic::global_add(c, ones([1])),
        mask = atomic::global_add(c, full([1], 10)) == full([1], 2),
    );
}

#[test]
fn arguments_are_evaluated_in_source_order() {
    for dev in backends() {
        let log = dev.upload(&[-1, -1]).unwrap();
        let c = dev.upload(&[0]).unwrap();
        argument_order::launch(&dev, 1, &log, &c).unwrap();
        // values = old 1, mask: old 2 == 2 -> the exchange happens.
        assert_eq!(log.download().unwrap(), vec![0, 1], "{dev:?}");
        assert_eq!(c.download().unwrap(), vec![12], "{dev:?}");
    }
}

#[tile_kernel(threads = 32)]
fn temp_like_names(out: GlobalTensor<i32>) {
    let mut _total = 0;
    let snap = _total;
    _total += 5;
    let mut _t1 = 3;
    let _t2 = _t1;
    _t1 = 9;
    let x = arange(4);
    let _t3 = x;
    store_global(out, full([4], snap), offsets = [0]);
    store_global(out, full([4], _total), offsets = [4]);
    store_global(out, full([4], _t2), offsets = [8]);
    store_global(out, full([4], _t1), offsets = [12]);
    store_global(out, _t3, offsets = [16]);
}

#[test]
fn user_names_that_look_like_temporaries_are_variables() {
    for dev in backends() {
        let out = dev.upload(&[-1; 20]).unwrap();
        temp_like_names::launch(&dev, 1, &out).unwrap();
        let got = out.download().unwrap();
        let want: Vec<i32> = [0, 5, 3, 9]
            .iter()
            .flat_map(|&v| [v; 4])
            .chain(0..4)
            .collect();
        assert_eq!(got, want, "{dev:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Names and limits, through the compiler API.

const S: Span = Span(0);

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}

fn path(n: &str) -> Expr {
    e(ExprKind::Path(vec![n.into()]))
}

/// `store_global(out, arange(32), offsets = [0])` in a kernel called `name` with `params`.
fn kernel(name: &str, params: Vec<ParamDef>) -> KernelDef {
    let call = e(ExprKind::Call {
        path: vec!["store_global".into()],
        path_span: S,
        generics: vec![],
        args: vec![
            Arg {
                name: None,
                value: path("out"),
                span: S,
            },
            Arg {
                name: None,
                value: e(ExprKind::Call {
                    path: vec!["arange".into()],
                    path_span: S,
                    generics: vec![],
                    args: vec![Arg {
                        name: None,
                        value: e(ExprKind::Int {
                            value: 32,
                            suffix: None,
                        }),
                        span: S,
                    }],
                }),
                span: S,
            },
            Arg {
                name: Some(("offsets".into(), S)),
                value: e(ExprKind::Array(vec![e(ExprKind::Int {
                    value: 0,
                    suffix: None,
                })])),
                span: S,
            },
        ],
    });
    KernelDef {
        name: name.into(),
        name_span: S,
        params,
        body: vec![Stmt::Expr(call)],
        options: KernelOptions {
            threads: 32,
            ..KernelOptions::default()
        },
    }
}

fn tensor_param(name: &str) -> ParamDef {
    ParamDef {
        name: name.into(),
        span: Span(1),
        ty: ParamTy::GlobalTensor { elem: "i32".into() },
        ty_span: S,
    }
}

/// PTX opcodes, directives (without the dot), types, state spaces, special registers (without
/// `%`), and the generator's own symbols: none of them may break a kernel named like it.
const PTX_WORDS: &[&str] = &[
    // opcodes
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "isspacep",
    "istypep",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vadd",
    "vmad",
    "vmax",
    "vmin",
    "vote",
    "vset",
    "vshl",
    "vshr",
    "vsub",
    "wgmma",
    "wmma",
    "xor",
    // directives
    "address_size",
    "align",
    "branchtargets",
    "callprototype",
    "calltargets",
    "const",
    "entry",
    "explicitcluster",
    "extern",
    "file",
    "func",
    "global",
    "loc",
    "local",
    "maxclusterrank",
    "maxnctapersm",
    "maxnreg",
    "maxntid",
    "minnctapersm",
    "noreturn",
    "param",
    "pragma",
    "reg",
    "reqnctapercluster",
    "reqntid",
    "section",
    "shared",
    "sreg",
    "target",
    "tex",
    "version",
    "visible",
    "weak",
    "common",
    "alias",
    // types and other keywords
    "b8",
    "b16",
    "b32",
    "b64",
    "b128",
    "s8",
    "s16",
    "s32",
    "s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f16x2",
    "f32",
    "f64",
    "bf16",
    "bf16x2",
    "e4m3",
    "e5m2",
    "tf32",
    "pred",
    "texref",
    "samplerref",
    "surfref",
    "v2",
    "v4",
    "v8",
    "ptr",
    "texmode_unified",
    "texmode_independent",
    "WARP_SZ",
    "map_f64_to_f32",
    // special registers
    "tid",
    "ntid",
    "laneid",
    "warpid",
    "nwarpid",
    "ctaid",
    "nctaid",
    "smid",
    "nsmid",
    "gridid",
    "clusterid",
    "nclusterid",
    "cluster_ctaid",
    "cluster_nctaid",
    "cluster_ctarank",
    "cluster_nctarank",
    "is_explicit_cluster",
    "lanemask_eq",
    "lanemask_le",
    "lanemask_lt",
    "lanemask_ge",
    "lanemask_gt",
    "clock",
    "clock64",
    "globaltimer",
    "total_smem_size",
    "dynamic_smem_size",
    "envreg0",
    "pm0",
    // our own symbols, old and new
    "tilus_smem",
    "tk_x",
    "x_param_0",
    "_",
    "_t1",
];

#[test]
fn every_ptx_reserved_word_is_a_valid_kernel_name() {
    for &name in PTX_WORDS {
        let def = kernel(name, vec![tensor_param("out")]);
        let c = tilus::core::compile(&def)
            .unwrap_or_else(|e| panic!("kernel `{name}` does not compile: {e:?}"));
        assemble_all(name, &c.ptx, c.ir.target.0);
    }
}

#[test]
fn the_parameter_space_is_checked_at_compile_time() {
    // 16 bytes per tensor: 272 fit in the 4352 bytes of PTX ISA 8.0, and up to 2047 in the
    // 32764 bytes of 8.1, which the module then declares; 2048 do not fit.
    let params = |n: usize| -> Vec<ParamDef> {
        let mut ps = vec![tensor_param("out")];
        for i in 1..n {
            let mut p = tensor_param(&format!("t{i}"));
            p.span = Span(1000 + i as u32);
            ps.push(p);
        }
        ps
    };
    let ok = tilus::core::compile(&kernel("wide", params(272))).expect("272 tensors fit");
    assert!(ok.ptx.contains(".version 7.8"), "no newer PTX than needed");
    assemble_all("wide", &ok.ptx, ok.ir.target.0);
    let ok = tilus::core::compile(&kernel("wider", params(2047))).expect("2047 tensors fit");
    assert!(
        ok.ptx.contains(".version 8.1"),
        "PTX 8.1 for the larger space"
    );
    assemble_all("wider", &ok.ptx, ok.ir.target.0);
    let Err(err) = tilus::core::compile(&kernel("widest", params(2048))) else {
        panic!("2048 tensors do not fit");
    };
    assert_eq!(err.len(), 1, "{}", err.len());
    assert_eq!(
        err[0].span,
        Span(1000 + 2047),
        "reported at the parameter that overflows"
    );
    assert!(
        err[0].message.contains("parameter space"),
        "{}",
        err[0].message
    );
}

#[test]
fn every_known_target_compiles_and_assembles() {
    // Any target >= 70 used to be printed under `.version 7.8`, which ptxas rejects for sm_100
    // and newer (and for architectures that do not exist).
    for &(sm, version) in tilus::core::ir::Target::KNOWN {
        let mut def = kernel(&format!("on_sm_{sm}"), vec![tensor_param("out")]);
        def.options.target = Some(sm);
        let c = tilus::core::compile(&def).unwrap_or_else(|e| panic!("sm_{sm}: {e:?}"));
        let v = version.max(78);
        let header = format!(".version {}.{}\n.target sm_{sm}\n", v / 10, v % 10);
        assert!(c.ptx.contains(&header), "sm_{sm}:\n{}", c.ptx);
        if let Err(e) = tilus_testkit::ptxas::assemble(&c.ptx, sm) {
            panic!("ptxas rejected the kernel for sm_{sm}:\n{e}");
        }
    }
    for sm in [71, 101, 1000] {
        let mut def = kernel("nowhere", vec![tensor_param("out")]);
        def.options.target = Some(sm);
        let Err(err) = tilus::core::compile(&def) else {
            panic!("sm_{sm} is not an architecture");
        };
        assert!(
            err[0].message.contains("no NVIDIA architecture"),
            "{}",
            err[0].message
        );
    }
}

#[tile_kernel(threads = 32)]
fn extreme_offsets(x: GlobalTensor<i64>, out: GlobalTensor<i64>) {
    // Every element of both loads is out of bounds: they read 0 (and must not overflow the
    // bounds arithmetic, which once negated the offset in the compiler and added the position
    // to it in the emulator).
    let low = load_global(x, [-9223372036854775808i64], [4]);
    let high = load_global(x, [9223372036854775806i64], [4]);
    store_global(out, low + high + arange(4i64), offsets = [0]);
}

#[test]
fn offsets_at_the_ends_of_i64_are_out_of_bounds() {
    for dev in backends() {
        let x = dev.upload(&[5i64, 6, 7, 8]).unwrap();
        let out = dev.full(4, -1i64).unwrap();
        extreme_offsets::launch(&dev, 1, &x, &out).unwrap();
        assert_eq!(out.download().unwrap(), vec![0, 1, 2, 3], "{dev:?}");
    }
    assemble_all("extreme_offsets", extreme_offsets::PTX, 70);
}

#[tile_kernel(threads = 32)]
fn suffixed_arange(out: GlobalTensor<u64>, s: u32) {
    // `arange(32u64)` is a u64 tile wherever it is used (its length's suffix types it, as in
    // `0..32u64`); it used to be typed by its first use, `i32` here, which made `w` an i32.
    let v = arange(32u64);
    let w = v << s;
    store_global(out, w + (1 << s), offsets = [0]);
}

#[test]
fn an_arange_is_typed_by_its_suffix() {
    for dev in backends() {
        let out = dev.zeros::<u64>(32).unwrap();
        suffixed_arange::launch(&dev, 1, &out, 40).unwrap();
        let want: Vec<u64> = (0..32u64).map(|i| (i << 40) + (1 << 40)).collect();
        assert_eq!(out.download().unwrap(), want, "{dev:?}");
    }
}

/// The bounds mask `arange(T) + start < n` is computed in 32 bits where no element of the sum
/// wraps (`passes::range_mask`), and the original way near the end of the type's range: both
/// give Rust's wrapping semantics, on every backend, for starts and lengths at the extremes.
macro_rules! range_mask_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 32)]
        fn $name(out: GlobalTensor<u8>, start: $t, n: $t) {
            let inside = arange(100) + start < n;
            store_global(out, inside as u8, offsets = [0]);
        }
    };
}
range_mask_kernel!(range_mask_i64, i64);
range_mask_kernel!(range_mask_u64, u64);
range_mask_kernel!(range_mask_i32, i32);
range_mask_kernel!(range_mask_u32, u32);

/// The same with the `arange` hoisted out of a loop (Triton's `offs = arange(BLOCK)` style).
#[tile_kernel(threads = 32)]
fn range_mask_hoisted(out: GlobalTensor<u8>, start: i64, n: i64) {
    let lanes = arange(100i64);
    for r in 0..2 {
        let first = start + (r as i64) * 100;
        let inside = lanes + first < n;
        store_global(out, inside as u8, offsets = [r * 100]);
    }
}

macro_rules! range_mask_case {
    ($kernel:ident, $t:ident, $dev:expr, $cases:expr) => {
        for (start, n) in $cases {
            let out = $dev.full(100, 7u8).unwrap();
            $kernel::launch(&$dev, 1, &out, start, n).unwrap();
            let want: Vec<u8> = (0..100)
                .map(|e| (start.wrapping_add(e as $t) < n) as u8)
                .collect();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{:?} {} start {start} n {n}",
                $dev,
                stringify!($t)
            );
        }
    };
}

#[test]
fn range_masks_match_wrapping_semantics_at_the_extremes() {
    // The fast path is there (the mask in 32 bits under a uniform branch).
    for ptx in [
        range_mask_i64::PTX,
        range_mask_u64::PTX,
        range_mask_i32::PTX,
        range_mask_u32::PTX,
    ] {
        assert!(ptx.contains("setp.lt.s32"), "{ptx}");
        assert!(ptx.contains("bra.uni"), "{ptx}");
    }
    assert!(range_mask_hoisted::PTX.contains("setp.lt.s32"));
    for dev in backends() {
        for (start, n) in [
            (0i64, 150i64),
            (-20, 7),
            (i64::MAX - 150, i64::MAX),
            (i64::MAX - 20, 0),
        ] {
            let out = dev.full(200, 7u8).unwrap();
            range_mask_hoisted::launch(&dev, 1, &out, start, n).unwrap();
            let want: Vec<u8> = (0..200i64)
                .map(|k| (start.wrapping_add(k / 100 * 100).wrapping_add(k % 100) < n) as u8)
                .collect();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{dev:?} hoisted start {start} n {n}"
            );
        }
        let m = i64::MAX;
        range_mask_case!(
            range_mask_i64,
            i64,
            dev,
            [
                (0, 0),
                (0, 37),
                (0, 100),
                (0, 1000),
                (-50, 20),
                (-50, -60),
                (5, 3),
                (i64::MIN, i64::MAX),
                (i64::MIN, i64::MIN + 40),
                (m - 99, m),
                (m - 98, m),
                (m - 60, m),
                (m - 10, i64::MIN + 5),
                (m, m),
                (m - 30, -3),
                (-7, i64::MIN),
            ]
        );
        let u = u64::MAX;
        range_mask_case!(
            range_mask_u64,
            u64,
            dev,
            [
                (0, 0),
                (0, 42),
                (3, 1u64 << 63),
                (u - 99, u),
                (u - 98, u),
                (u - 20, 10),
                (u - 1, 0),
                (1 << 63, (1 << 63) + 50),
                (77, 76),
            ]
        );
        let m = i32::MAX;
        range_mask_case!(
            range_mask_i32,
            i32,
            dev,
            [
                (0, 0),
                (-100, 3),
                (i32::MIN, m),
                (m - 99, m),
                (m - 40, i32::MIN + 20),
                (m, -1),
            ]
        );
        let u = u32::MAX;
        range_mask_case!(
            range_mask_u32,
            u32,
            dev,
            [(0, 99), (u - 99, u), (u - 50, 30), (u, u), (1 << 31, u),]
        );
    }
}

/// A range mask used as the mask of an access: `passes::range_mask` unswitches the access on a
/// whole tile (`if bound == T { no mask } else { masked }`). The elements written must be
/// exactly those of the mask, in both branches and in the wrapping fallback, at the extremes.
macro_rules! masked_store_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 32)]
        fn $name(out: GlobalTensor<u8>, start: $t, n: $t) {
            let inside = arange(100) + start < n;
            store_global(out, full([100], 1u8), offsets = [0], mask = inside);
        }
    };
}
masked_store_kernel!(masked_store_i64, i64);
masked_store_kernel!(masked_store_u32, u32);

#[test]
fn masked_accesses_unswitched_on_whole_tiles_keep_the_mask_semantics() {
    for ptx in [masked_store_i64::PTX, masked_store_u32::PTX] {
        // The whole-tile test is there.
        assert!(
            ptx.lines()
                .any(|l| l.contains("setp.eq.s32") && l.trim_end().ends_with(", 100;")),
            "{ptx}"
        );
    }
    let run = |dev: &tilus::Device,
               launch: &dyn Fn(&tilus::GlobalTensor<u8>),
               want: Vec<u8>,
               what: String| {
        let out = dev.full(100, 7u8).unwrap();
        launch(&out);
        assert_eq!(out.download().unwrap(), want, "{dev:?} {what}");
    };
    for dev in backends() {
        let m = i64::MAX;
        for (start, n) in [
            (0i64, 100i64),
            (0, 1000),
            (0, 99),
            (0, 0),
            (-50, 20),
            (-50, 50),
            (i64::MIN, i64::MAX),
            (m - 99, m),
            (m - 200, m),
            (m - 10, i64::MIN + 5),
            (m, m),
        ] {
            let want = (0..100i64)
                .map(|e| if start.wrapping_add(e) < n { 1 } else { 7 })
                .collect();
            run(
                &dev,
                &|o| masked_store_i64::launch(&dev, 1, o, start, n).unwrap(),
                want,
                format!("i64 start {start} n {n}"),
            );
        }
        let u = u32::MAX;
        for (start, n) in [
            (0u32, 100u32),
            (0, 37),
            (u - 99, u),
            (u - 150, u),
            (u - 20, 10),
            (u, u),
        ] {
            let want = (0..100u32)
                .map(|e| if start.wrapping_add(e) < n { 1 } else { 7 })
                .collect();
            run(
                &dev,
                &|o| masked_store_u32::launch(&dev, 1, o, start, n).unwrap(),
                want,
                format!("u32 start {start} n {n}"),
            );
        }
    }
    assemble_all("masked_store_i64", masked_store_i64::PTX, 70);
    assemble_all("masked_store_u32", masked_store_u32::PTX, 70);
}

#[tile_kernel(threads = 32)]
fn open_literal_decided_after_a_branch(out: GlobalTensor<i64>, c: i64) {
    // `flag` is open (an unsuffixed literal) through both arms; the store after them decides
    // `i64`, and every definition, those inside the arms too, must become `i64` (the fuzzer
    // found the arms' definitions left as `i32`, which ptxas rejected).
    let mut flag = 0;
    if c == 3 {
        flag = 1;
    } else {
        flag = 2;
    }
    store_global(out, full([1], flag), offsets = [0]);
    let mut count = 0;
    for _i in 0..c {
        count += 1;
    }
    store_global(out, full([1], count), offsets = [1]);
}

#[test]
fn open_literals_assigned_in_branches_take_the_decided_type() {
    assemble_all(
        "open_literal_decided_after_a_branch",
        open_literal_decided_after_a_branch::PTX,
        open_literal_decided_after_a_branch::TARGET,
    );
    for dev in backends() {
        for (c, want) in [(3i64, vec![1i64, 3]), (7, vec![2, 7]), (-1, vec![2, 0])] {
            let out = dev.upload(&[-9i64, -9]).unwrap();
            open_literal_decided_after_a_branch::launch(&dev, 1, &out, c).unwrap();
            assert_eq!(out.download().unwrap(), want, "{dev:?}: c = {c}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ptxas (12.8 and 13.0, sm_90) fuses two signed `min`/`max` into `VIMNMX3` and loses a negation
// folded into its middle operand: `(-arange(232)).max()` gave 126 on an H100 (found by the
// differential test). Signed 16/32-bit `min`/`max` are now emitted in an unsigned form. These
// kernels are the shapes that failed, checked against references computed here.

#[tile_kernel(threads = 32)]
fn negated_reductions(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    store_global(out, full([1], (-arange(232)).max()), offsets = [0]);
    store_global(out, full([1], (-arange(232)).min()), offsets = [1]);
    let c = full([1], 13)
        .broadcast_to([138])
        .cumsum(axis = 0, reverse = true);
    store_global(out, full([1], (-c).max()), offsets = [2]);
    let t = load_global(x, offsets = [0], shape = [232]);
    store_global(out, full([1], (-t).max()), offsets = [3]);
    store_global(out, full([1], (-t).min()), offsets = [4]);
    store_global(out, full([1], (0 - t).max()), offsets = [5]);
}

#[tile_kernel(threads = 96)]
fn negated_min_max_chains(
    x: GlobalTensor<i32>,
    y: GlobalTensor<i16>,
    out: GlobalTensor<i32>,
    o16: GlobalTensor<i16>,
) {
    let a = load_global(x, offsets = [0], shape = [200]);
    let b = load_global(x, offsets = [200], shape = [200]);
    let c = load_global(x, offsets = [400], shape = [200]);
    store_global(out, max(max(-a, -b), -c), offsets = [0]);
    store_global(out, min(min(-a, -b), -c), offsets = [200]);
    store_global(out, max(max(a, -(b + 2)), -c), offsets = [400]);
    let p = load_global(y, offsets = [0], shape = [200]);
    let q = load_global(y, offsets = [200], shape = [200]);
    let r = load_global(y, offsets = [400], shape = [200]);
    store_global(o16, max(max(-p, -q), -r), offsets = [0]);
    store_global(o16, min(min(-p, -q), -r), offsets = [200]);
    store_global(o16, full([1], (-p).max()), offsets = [400]);
}

#[test]
fn signed_min_max_of_negated_values() {
    assemble_all(
        "negated_reductions",
        negated_reductions::PTX,
        negated_reductions::TARGET,
    );
    assemble_all(
        "negated_min_max_chains",
        negated_min_max_chains::PTX,
        negated_min_max_chains::TARGET,
    );
    let mut rng = common::Rng::from_env_or_clock();
    // Values away from i32::MIN, whose negation wraps (checked elsewhere).
    let x = rng.vec(600, -1 << 30, 1 << 30);
    let y: Vec<i16> = rng
        .vec(600, -32767, 32767)
        .iter()
        .map(|&v| v as i16)
        .collect();
    let neg: Vec<i32> = x[..232].iter().map(|v| -v).collect();
    let c: Vec<i32> = (0..138).map(|i| -13 * (138 - i)).collect();
    let want = [
        0,
        -231,
        *c.iter().max().unwrap(),
        *neg.iter().max().unwrap(),
        *neg.iter().min().unwrap(),
        *neg.iter().max().unwrap(),
    ];
    let (a, b, cc) = (&x[..200], &x[200..400], &x[400..600]);
    let mut chains = Vec::new();
    chains.extend((0..200).map(|i| (-a[i]).max(-b[i]).max(-cc[i])));
    chains.extend((0..200).map(|i| (-a[i]).min(-b[i]).min(-cc[i])));
    chains.extend((0..200).map(|i| a[i].max(-(b[i] + 2)).max(-cc[i])));
    let (p, q, r) = (&y[..200], &y[200..400], &y[400..600]);
    let mut c16: Vec<i16> = Vec::new();
    c16.extend((0..200).map(|i| (-p[i]).max(-q[i]).max(-r[i])));
    c16.extend((0..200).map(|i| (-p[i]).min(-q[i]).min(-r[i])));
    c16.push(p.iter().map(|v| -v).max().unwrap());
    for dev in backends() {
        let xd = dev.upload(&x).unwrap();
        let yd = dev.upload(&y).unwrap();
        let out = dev.full(6, -1i32).unwrap();
        negated_reductions::launch(&dev, 1, &xd, &out).unwrap();
        assert_eq!(out.download().unwrap(), want, "{dev:?}: reductions");
        let out = dev.full(600, -1i32).unwrap();
        let o16 = dev.full(401, -1i16).unwrap();
        negated_min_max_chains::launch(&dev, 1, &xd, &yd, &out, &o16).unwrap();
        assert!(
            out.download().unwrap() == chains,
            "{dev:?}: i32 chains differ"
        );
        assert!(o16.download().unwrap() == c16, "{dev:?}: i16 chains differ");
    }
}

// Rank-1 range accesses test their bounds as one unsigned compare of `f - lo` against a span
// (`Range::window` in tilus-core); a shared tensor's limits are not clamped to the tile, so
// that 32-bit arithmetic wraps at extreme offsets. Every element outside must read `other`.
#[tile_kernel(threads = 32)]
fn shared_part_at(out: GlobalTensor<i32>, offset: i32) {
    let s = shared_tensor(i32, [100]);
    store_shared(s, arange(100));
    sync();
    let t = load_shared(s, offsets = [offset], shape = [64], other = -7);
    store_global(out, t, offsets = [0]);
}

#[tile_kernel(threads = 32)]
fn global_part_at(x: GlobalTensor<i32>, out: GlobalTensor<i32>, offset: i32) {
    let t = load_global(x, offsets = [offset], shape = [64], other = -7);
    store_global(out, t, offsets = [0]);
}

#[test]
fn range_bounds_hold_at_extreme_offsets() {
    for dev in backends() {
        let x = dev.upload(&(0..100).collect::<Vec<i32>>()).unwrap();
        for offset in [
            i32::MIN,
            i32::MIN + 5,
            -1_000_000,
            -64,
            -63,
            -1,
            0,
            50,
            99,
            100,
            i32::MAX - 63,
            i32::MAX - 10,
            i32::MAX,
        ] {
            let want: Vec<i32> = (0..64i64)
                .map(|f| match offset as i64 + f {
                    i @ 0..100 => i as i32,
                    _ => -7,
                })
                .collect();
            let out = dev.full::<i32>(64, 123).unwrap();
            shared_part_at::launch(&dev, 1, &out, offset).unwrap();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{dev:?}: shared, offset {offset}"
            );
            let out = dev.full::<i32>(64, 123).unwrap();
            global_part_at::launch(&dev, 1, &x, &out, offset).unwrap();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{dev:?}: global, offset {offset}"
            );
        }
    }
}

/// Kernels written by a `macro_rules!` macro whose types are `ty` fragments (rustc hands each
/// over wrapped in an invisible group): a whole tensor type, an element type inside
/// `GlobalTensor<..>`, a scalar type, a cast's type and a generic argument.
macro_rules! scaled_copy {
    ($name:ident, $tensor:ty, $elem:ty, $scalar:ty) => {
        #[tile_kernel(threads = 64)]
        fn $name(x: $tensor, out: GlobalTensor<$elem>, k: $scalar) {
            let t = load_global(x, offsets = [0], shape = [64]);
            let s = shared_tensor::<$elem>([64]);
            store_shared(s, (t * k) as $elem);
            sync();
            store_global(out, load_shared(s), offsets = [0]);
        }
    };
}

scaled_copy!(scaled_i32, GlobalTensor<i32>, i32, i32);
scaled_copy!(scaled_f64, GlobalTensor<f64>, f64, f64);

#[test]
fn parameter_types_from_macro_fragments_are_accepted() {
    let x: Vec<i32> = (0..64).collect();
    let y: Vec<f64> = (0..64).map(|i| i as f64 * 0.5).collect();
    for dev in backends() {
        let (xd, out) = (dev.upload(&x).unwrap(), dev.zeros::<i32>(64).unwrap());
        scaled_i32::launch(&dev, 1, &xd, &out, 3).unwrap();
        let want: Vec<i32> = x.iter().map(|v| v * 3).collect();
        assert_eq!(out.download().unwrap(), want, "{dev:?}");
        let (yd, out) = (dev.upload(&y).unwrap(), dev.zeros::<f64>(64).unwrap());
        scaled_f64::launch(&dev, 1, &yd, &out, -2.0).unwrap();
        let want: Vec<f64> = y.iter().map(|v| v * -2.0).collect();
        assert_eq!(out.download().unwrap(), want, "{dev:?}");
    }
}
