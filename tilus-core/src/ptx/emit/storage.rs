//! Where each variable's value lives, and operands read from it: the types of variables, the
//! registers a variable owns (allocated by its first assignment), and an operand's element as
//! a register or a compile-time value.

use super::{internal, CodegenResult, Emitter};
use crate::ir::{DType, Operand, Ty, VarId};
use crate::layout::Layout;
use crate::ptx::regs::{Class, Reg};
use crate::ptx::value::{Predicate, RegOrConst, RegOrImm};

/// A global tensor or view: base pointer and length (elements) of the parameter it came from,
/// the element offset of the view inside it and the view's runtime dims, all 64-bit. All in
/// registers owned by the variable, so re-assigning a `let mut` view overwrites them in place.
#[derive(Debug, Clone)]
pub(in crate::ptx) struct GlobalView {
    pub ptr: Reg,
    pub len: Reg,
    pub off: Reg,
    pub dims: Vec<Reg>,
    /// The variable is a parameter itself (never re-assigned): offset 0 and dims `[len]`, so
    /// accesses may skip the view arithmetic.
    pub whole: bool,
}

/// Where a variable's value lives. A variable keeps the same storage for its whole life: the
/// first emitted assignment allocates it, later ones (loop-carried `let mut`) write into it.
#[derive(Debug, Clone)]
pub(in crate::ptx) enum Storage {
    Scalar(Reg),
    /// One register per layout slot.
    Tile(Vec<Reg>),
    Global(GlobalView),
    /// Compile-time placement in the shared window. `rows`: a distributed (cluster) tensor
    /// whose axis 0 is split over the cluster's blocks, `rows` rows per block.
    Shared {
        offset: usize,
        shape: Vec<usize>,
        rows: Option<usize>,
    },
}

impl<'k> Emitter<'k> {
    pub fn ty(&self, v: VarId) -> CodegenResult<&'k Ty> {
        match self.kernel.vars.get(v as usize) {
            Some(var) => Ok(&var.ty),
            None => internal(format!("variable {v} out of range")),
        }
    }
    pub fn name(&self, v: VarId) -> &str {
        self.kernel
            .vars
            .get(v as usize)
            .map(|x| x.name.as_str())
            .unwrap_or("?")
    }
    /// Whether `o` is a tile (one register per layout slot) rather than a scalar.
    pub fn is_tile(&self, o: Operand) -> CodegenResult<bool> {
        Ok(match o {
            Operand::Var(v) => matches!(self.ty(v)?, Ty::Tile { .. }),
            Operand::Imm(..) => false,
        })
    }
    /// The operand's element type.
    pub fn dtype_of(&self, o: Operand) -> CodegenResult<DType> {
        match o {
            Operand::Var(v) => Ok(self.ty(v)?.dtype()),
            Operand::Imm(_, d) => Ok(d),
        }
    }
    /// The layout of a tile of `shape` in this kernel.
    pub fn layout_of(&self, shape: &[usize]) -> Layout {
        Layout::new(crate::ir::numel(shape), self.threads(), self.vector_width)
    }

    pub fn storage(&self, v: VarId) -> CodegenResult<&Storage> {
        match self.storage.get(v as usize) {
            Some(Some(s)) => Ok(s),
            _ => internal(format!(
                "variable `{}` ({v}) read before it is assigned",
                self.name(v)
            )),
        }
    }

    /// The registers of a scalar or tile variable, allocating them on its first assignment.
    pub fn dst_regs(&mut self, v: VarId) -> CodegenResult<Vec<Reg>> {
        if let Some(Some(s)) = self.storage.get(v as usize) {
            return match s {
                Storage::Scalar(r) => Ok(vec![*r]),
                Storage::Tile(rs) => Ok(rs.clone()),
                _ => internal(format!("`{}` is not a register value", self.name(v))),
            };
        }
        let (st, regs) = match self.ty(v)? {
            Ty::Scalar(d) => {
                let r = self.reg_of(*d);
                (Storage::Scalar(r), vec![r])
            }
            Ty::Tile { dtype, shape } => {
                let n = self.layout_of(shape).slots();
                let rs: Vec<Reg> = (0..n).map(|_| self.reg_of(*dtype)).collect();
                (Storage::Tile(rs.clone()), rs)
            }
            _ => return internal(format!("`{}` is not a register value", self.name(v))),
        };
        self.storage[v as usize] = Some(st);
        Ok(regs)
    }

    /// The global storage of `v`, allocating registers on first assignment.
    pub fn dst_global(&mut self, v: VarId) -> CodegenResult<GlobalView> {
        if let Some(Some(s)) = self.storage.get(v as usize) {
            return match s {
                Storage::Global(g) => Ok(g.clone()),
                _ => internal(format!("`{}` is not a global tensor", self.name(v))),
            };
        }
        let Ty::Global { rank, .. } = self.ty(v)? else {
            return internal(format!("`{}` is not a global tensor", self.name(v)));
        };
        let whole = (v as usize) < self.kernel.params.len();
        let g = GlobalView {
            ptr: self.r64(),
            len: self.r64(),
            off: self.r64(),
            dims: (0..*rank).map(|_| self.r64()).collect(),
            whole,
        };
        self.storage[v as usize] = Some(Storage::Global(g.clone()));
        Ok(g)
    }

    pub fn global(&self, v: VarId) -> CodegenResult<GlobalView> {
        match self.storage(v)? {
            Storage::Global(g) => Ok(g.clone()),
            _ => internal(format!("`{}` is not a global tensor", self.name(v))),
        }
    }

    /// Binds `d` to a place in the shared window (a shared tensor's storage is compile-time:
    /// a later assignment must name the same place).
    pub fn set_shared(
        &mut self,
        d: VarId,
        offset: usize,
        shape: Vec<usize>,
        rows: Option<usize>,
    ) -> CodegenResult<()> {
        match &self.storage[d as usize] {
            None => {
                self.storage[d as usize] = Some(Storage::Shared {
                    offset,
                    shape,
                    rows,
                });
                Ok(())
            }
            Some(Storage::Shared {
                offset: o,
                shape: s,
                rows: r,
            }) if *o == offset && *s == shape && *r == rows => Ok(()),
            Some(_) => internal(format!(
                "shared tensor variable `{}` is re-assigned to a different allocation (not supported)",
                self.name(d)
            )),
        }
    }

    /// Element `slot` of an operand as a register or a 32-bit immediate: for index arithmetic
    /// on 32-bit (and narrower) integers, and for any operand held in a register.
    pub fn reg_or_imm(&mut self, o: Operand, slot: usize) -> CodegenResult<RegOrImm> {
        match o {
            Operand::Imm(bits, d) if d.bits() <= 32 && !d.is_float() => {
                Ok(RegOrImm::Imm(crate::elem::as_i128(d, bits) as i32))
            }
            // A wide or float constant in an index position: materialise it.
            Operand::Imm(bits, d) => Ok(RegOrImm::Reg(self.in_reg(RegOrConst::Const(bits, d)))),
            Operand::Var(v) => match self.storage(v)? {
                Storage::Scalar(r) => Ok(RegOrImm::Reg(*r)),
                Storage::Tile(rs) => match rs.get(slot) {
                    Some(r) => Ok(RegOrImm::Reg(*r)),
                    None => internal(format!("slot {slot} of `{}` out of range", self.name(v))),
                },
                _ => internal(format!("`{}` is not a value", self.name(v))),
            },
        }
    }

    /// Element `slot` of an operand of any type (a constant stays a constant).
    pub fn reg_or_const(&mut self, o: Operand, slot: usize) -> CodegenResult<RegOrConst> {
        match o {
            Operand::Imm(bits, d) => Ok(RegOrConst::Const(crate::elem::canon(d, bits), d)),
            Operand::Var(_) => match self.reg_or_imm(o, slot)? {
                RegOrImm::Reg(r) => Ok(RegOrConst::Reg(r)),
                RegOrImm::Imm(_) => internal("a variable resolved to an immediate"),
            },
        }
    }

    /// The slot of `o` that goes with slot `s` of a tile: `s` for a tile, 0 for a scalar
    /// (which goes with every slot).
    pub fn slot_of(&self, o: Operand, s: usize) -> CodegenResult<usize> {
        Ok(if self.is_tile(o)? { s } else { 0 })
    }

    /// The element of `o` that goes with slot `s` of a tile ([`Self::slot_of`]).
    pub fn slot_value(&mut self, o: Operand, s: usize) -> CodegenResult<RegOrConst> {
        let slot = self.slot_of(o, s)?;
        self.reg_or_const(o, slot)
    }

    /// An element value in a register of its type's class (constants are moved in).
    pub fn in_reg(&mut self, v: RegOrConst) -> Reg {
        match v {
            RegOrConst::Reg(r) => r,
            RegOrConst::Const(bits, DType::Bool) => self.const_pred(bits != 0),
            RegOrConst::Const(bits, d) => {
                let r = self.reg_of(d);
                self.ins(["mov", d.info().bit_reg()], (r, RegOrConst::Const(bits, d)));
                r
            }
        }
    }

    /// Element `slot` of a bool operand as a predicate (immediates fold).
    pub fn predicate_of(&mut self, o: Operand, slot: usize) -> CodegenResult<Predicate> {
        match o {
            Operand::Imm(i, _) => Ok(if i != 0 {
                Predicate::True
            } else {
                Predicate::False
            }),
            Operand::Var(_) => match self.reg_or_imm(o, slot)? {
                RegOrImm::Reg(r) if r.class == Class::Pred => Ok(Predicate::Reg(r)),
                _ => internal("expected a bool operand"),
            },
        }
    }
}
