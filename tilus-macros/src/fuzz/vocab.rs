//! What mutations put in: names the language gives meaning to, names PTX gives meaning to,
//! names that look like the compiler's own, and edge-case literals.

use super::rng::Rng;

/// Words of the kernel language that are not builtins, methods or keywords: types, constants,
/// the paths of orders and scopes.
const LANGUAGE_WORDS: &[&str] = &[
    "atomic",
    "step_by",
    "i8",
    "u8",
    "i16",
    "u16",
    "i32",
    "bool",
    "u32",
    "i64",
    "u64",
    "f16",
    "bf16",
    "f32",
    "f64",
    "usize",
    "MAX",
    "MIN",
    "BITS",
    "EPSILON",
    "INFINITY",
    "NEG_INFINITY",
    "NAN",
    "MIN_POSITIVE",
    "GlobalTensor",
    "MemoryOrder",
    "MemoryScope",
    "Relaxed",
    "Acquire",
    "Release",
    "AcqRel",
    "Block",
    "Device",
    "Cluster",
    "Sys",
    "Weak",
    "true",
    "false",
];

/// Functions, methods, path segments and types of the kernel language: the builtins and
/// methods from the compiler's own tables (so a new builtin is in the fuzzer's vocabulary the
/// moment it exists), then [`LANGUAGE_WORDS`].
pub fn builtins() -> &'static [String] {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let mut v: Vec<String> = Vec::new();
        let names = tilus_core::lower::builtin_names();
        let segments = names.iter().flat_map(|n| n.split("::").map(str::to_string));
        let methods = tilus_core::lower::method_names()
            .into_iter()
            .map(str::to_string);
        let words = LANGUAGE_WORDS.iter().map(|w| w.to_string());
        for w in segments.chain(methods).chain(words) {
            if !v.contains(&w) {
                v.push(w);
            }
        }
        v
    })
}

/// Keyword-argument names, from the compiler's tables.
pub fn kwargs() -> &'static [&'static str] {
    static WORDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    WORDS.get_or_init(tilus_core::lower::keyword_names)
}

/// Values of `sem = ..` / `scope = ..` / `order = ..`.
pub const QUALIFIERS: &[&str] = &[
    "relaxed",
    "acquire",
    "release",
    "acq_rel",
    "weak",
    "cta",
    "gpu",
    "sys",
    "cluster",
    "block",
    "device",
    "MemoryOrder::Relaxed",
    "MemoryOrder::Acquire",
    "MemoryOrder::Release",
    "MemoryOrder::AcqRel",
    "MemoryScope::Block",
    "MemoryScope::Device",
    "MemoryScope::Cluster",
    "MemoryScope::Sys",
    "\"acquire\"",
    "\"gpu\"",
];

/// PTX keywords, directives, types, special registers and instruction names, the generator's
/// own symbol prefixes, and names like compiler temporaries: all valid Rust identifiers.
pub const PTX_WORDS: &[&str] = &[
    "WARP_SZ",
    "tid",
    "ntid",
    "ctaid",
    "nctaid",
    "laneid",
    "warpid",
    "clock",
    "clock64",
    "pm0",
    "envreg0",
    "lanemask_eq",
    "ld",
    "st",
    "reg",
    "param",
    "entry",
    "func",
    "global",
    "shared",
    "local",
    "tex",
    "ret",
    "exit",
    "bra",
    "call",
    "version",
    "target",
    "address_size",
    "visible",
    "extern",
    "weak",
    "maxntid",
    "reqntid",
    "align",
    "pragma",
    "atom",
    "red",
    "bar",
    "barrier",
    "membar",
    "cvta",
    "mov",
    "add",
    "sub",
    "mul",
    "mad",
    "setp",
    "selp",
    "and",
    "or",
    "xor",
    "not",
    "shl",
    "shr",
    "cvt",
    "b8",
    "b32",
    "b64",
    "s32",
    "u32",
    "u64",
    "f32",
    "pred",
    "sm_70",
    "sm_90",
    "tilus_smem",
    "tilus",
    "smem",
    "tk_k",
    "tk_",
    "p0_ptr",
    "k_p0_ptr",
    "_t",
    "_t0",
    "_t1",
    "_t2",
    "_tmp",
    "__t3",
    "_",
    "r",
    "r1",
    "rd1",
    "p1",
    "r0",
    "rd0",
    "p0",
    "f1",
    "L0",
    "L__BB0_1",
    "$L1",
    "r#loop",
    "r#fn",
    "r#ld",
    "r#type",
    "main",
    "kernel",
];

/// Identifiers: builtins, keyword names, the kernel's own names, PTX words and temporaries.
pub fn ident(rng: &mut Rng, own: &[String]) -> String {
    match rng.weighted(&[4, 2, 4, 3, 1]) {
        0 => rng.pick(builtins()).to_string(),
        1 => rng.pick(kwargs()).to_string(),
        2 if !own.is_empty() => rng.pick(own).clone(),
        3 => {
            let w = *rng.pick(PTX_WORDS);
            // `$L1` is not an identifier: only its spelling as one.
            w.trim_start_matches('$').to_string()
        }
        _ => rng
            .pick(&["self", "Self", "super", "crate", "loop", "fn", "let", "mut"])
            .to_string(),
    }
}

/// Names to rename a variable or the kernel to.
pub fn new_name(rng: &mut Rng, own: &[String]) -> String {
    match rng.weighted(&[6, 2, 2, 1]) {
        0 => rng.pick(PTX_WORDS).trim_start_matches('$').to_string(),
        1 => rng.pick(builtins()).to_string(),
        2 if !own.is_empty() => rng.pick(own).clone(),
        _ => format!("_t{}", rng.below(40)),
    }
}

/// Literal token text (some of them several tokens).
pub const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "31",
    "32",
    "33",
    "63",
    "64",
    "127",
    "128",
    "255",
    "256",
    "257",
    "1023",
    "1024",
    "4096",
    "65535",
    "65536",
    "65537",
    "1 << 20",
    "1048576",
    "2147483647",
    "-2147483648",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "170141183460469231731687303715884105727",
    "340282366920938463463374607431768211455",
    "0x7fffffff",
    "0x80000000",
    "0b1010",
    "0o17",
    "1_000",
    "1i32",
    "1u32",
    "7u64",
    "1i64",
    "1usize",
    "1i8",
    "255u8",
    "1i128",
    "3isize",
    "0.0",
    "0.5",
    "1.0",
    "-1.5",
    "1e10",
    "1e-3",
    "2.5f32",
    "1f64",
    "3.4e38f32",
    "1e39f32",
    "65504.0",
    "65520.0",
    "-0.0",
    "1e-45",
    "5e-324f64",
    "1.7976931348623157e308",
    "1e309",
    "i32::MAX",
    "i32::MIN",
    "i64::MIN",
    "u8::MAX",
    "f32::NAN",
    "f32::INFINITY",
    "f64::NEG_INFINITY",
    "f16::MAX",
    "bf16::EPSILON",
    "u64::MAX",
    "255u8",
    "-128i8",
    "65535u16",
    "-1i64",
    "18446744073709551615u64",
    "9223372036854775808i64",
    "256u8",
    "true",
    "false",
    "\"acquire\"",
    "\"sm_90\"",
    "\"\"",
    "'c'",
    "b'x'",
    "b\"ab\"",
];

pub fn literal(rng: &mut Rng) -> &'static str {
    rng.word(LITERALS)
}

/// Interesting integers (as text), for shapes and indices.
pub const SHAPE_SIZES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "7",
    "16",
    "31",
    "32",
    "33",
    "64",
    "96",
    "100",
    "128",
    "255",
    "256",
    "512",
    "1000",
    "1024",
    "2048",
    "4096",
    "8192",
    "16384",
    "65536",
    "65537",
    "131072",
    "2147483647",
    "-1",
    "-32",
];

pub const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<", "<=", ">",
    ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "=", "!", "..", "..=", ".",
    "::", "?", "->", "=>", "@", "~",
];

pub const THREADS: &[&str] = &[
    "0",
    "1",
    "16",
    "31",
    "32",
    "33",
    "64",
    "96",
    "128",
    "160",
    "256",
    "384",
    "512",
    "992",
    "1024",
    "1056",
    "2048",
    "65536",
    "4294967295",
    "4294967296",
];

pub const TARGETS: &[&str] = &[
    "0",
    "1",
    "50",
    "60",
    "70",
    "71",
    "72",
    "75",
    "80",
    "86",
    "87",
    "89",
    "90",
    "99",
    "100",
    "120",
    "1000",
    "\"sm_70\"",
    "\"sm_80\"",
    "\"sm_90\"",
    "\"sm_100\"",
    "\"90\"",
    "\"sm_x\"",
];

/// Element types of the language (and two it does not have).
pub const TYPES: &[&str] = &[
    "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64",
    "usize", "i128",
];
