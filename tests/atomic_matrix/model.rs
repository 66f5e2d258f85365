//! The dimensions of the matrix and one point of it ([`Combo`]).

use tilus::core::dtype::DType;

/// Read-modify-write ops, by their tilus names (`atomic::shared_{op}`); the cuTile name of
/// `exch` is `xchg` ([`cutile_name`]).
pub const RMW_OPS: [&str; 11] = [
    "add", "sub", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec",
];

/// Every op of the matrix: the RMWs, then cuTile's `atomic_load` / `atomic_store`.
pub const OPS: [&str; 13] = [
    "add", "sub", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec", "load", "store",
];

pub fn cutile_name(op: &str) -> &str {
    if op == "exch" {
        "xchg"
    } else {
        op
    }
}

pub fn is_rmw(op: &str) -> bool {
    RMW_OPS.contains(&op)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Shared,
    Global,
}

pub const SPACES: [Space; 2] = [Space::Shared, Space::Global];

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Shared => "shared",
            Space::Global => "global",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Form {
    /// tilus element-wise `atomic::{space}_{op}(dst, values)`.
    Elementwise,
    /// tilus 1-D scatter (`dim = 0`).
    Scatter1,
    /// tilus 2-D scatter along `dim`.
    Scatter2(usize),
    /// cuTile `atomic_{op}(array, indices, ..)`, `atomic_load`, `atomic_store` (rank 1).
    Indexed,
}

pub const FORMS: [Form; 5] = [
    Form::Elementwise,
    Form::Scatter1,
    Form::Scatter2(0),
    Form::Scatter2(1),
    Form::Indexed,
];

impl Form {
    pub fn is_scatter(self) -> bool {
        matches!(self, Form::Scatter1 | Form::Scatter2(_))
    }
    pub fn tag(self) -> String {
        match self {
            Form::Elementwise => "ew".into(),
            Form::Scatter1 => "sc1".into(),
            Form::Scatter2(d) => format!("sc2d{d}"),
            Form::Indexed => "ix".into(),
        }
    }
}

/// The forms an op is generated in: RMWs in every form, loads and stores only indexed.
pub fn forms_of(op: &str) -> &'static [Form] {
    if is_rmw(op) {
        &FORMS
    } else {
        &FORMS[4..]
    }
}

/// `None` = the keyword is not given (the default applies).
pub const SEMS: [Option<&str>; 5] = [
    None,
    Some("relaxed"),
    Some("acquire"),
    Some("release"),
    Some("acq_rel"),
];
pub const SCOPES: [Option<&str>; 5] =
    [None, Some("cta"), Some("cluster"), Some("gpu"), Some("sys")];
/// `None` = no `target` option (the compiler's default, raised as needed).
pub const TARGETS: [Option<u32>; 4] = [None, Some(70), Some(80), Some(90)];

/// One cell of the coverage requirement: every (op, type, form, space) appears.
pub type Cell = (&'static str, DType, Form, Space);

/// Every cell, in a fixed order.
pub fn cells() -> Vec<Cell> {
    let mut v = Vec::new();
    for op in OPS {
        for d in DType::ALL {
            for &form in forms_of(op) {
                for space in SPACES {
                    v.push((op, d, form, space));
                }
            }
        }
    }
    v
}

/// One point of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Combo {
    pub op: &'static str,
    pub dtype: DType,
    pub form: Form,
    pub space: Space,
    pub sem: Option<&'static str>,
    pub scope: Option<&'static str>,
    /// Whether the kernel reads the op's result (an RMW's old values, a load's values); stores
    /// have no result and are always `false`.
    pub used: bool,
    pub masked: bool,
    pub target: Option<u32>,
}

impl Combo {
    /// A unique kernel name (merged modules need distinct entries).
    pub fn name(&self) -> String {
        format!(
            "m_{}_{}_{}_{}_{}_{}_{}{}_t{}",
            self.space.name(),
            self.form.tag(),
            self.op,
            self.dtype.name(),
            self.sem.unwrap_or("dsem"),
            self.scope.unwrap_or("dscope"),
            if self.used { "used" } else { "unused" },
            if self.masked { "_mask" } else { "" },
            self.target.map_or("none".to_string(), |t| t.to_string()),
        )
    }
}
