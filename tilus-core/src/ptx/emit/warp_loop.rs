//! Loops that each warp leaves on its own ("warp" loops).
//!
//! A `while t.any() { .. }` loop is block-uniform: its condition is a block-wide reduction
//! (`bar.red.or`), so every warp runs every iteration, waiting at that barrier for the slowest
//! lane of the block, and a warp whose lanes are done runs the body again for nothing. The
//! device radix sort's look-back is such a loop: each of 256 lanes walks back over the tiles
//! before its own for its digit, and the block steps together, one barrier a step, until the
//! longest walk ends.
//!
//! Where nothing in the loop needs the other warps, each warp can test `t.any()` over its own
//! lanes (`vote.sync.any`) and leave when they are done. That gives the block-wide loop's
//! results exactly when the loop qualifies:
//! - its condition block is the reduction alone (`while t.any()`, `t` a `bool` tile);
//! - its body is flat (no nested control flow) and lane-local: element-wise instructions
//!   (`Reshape` and `Broadcast` move elements between lanes: not here), weak loads, relaxed
//!   atomic loads and prefetches of global memory, sleeps; nothing that writes memory, no
//!   shared memory, no reduction or other collective, no barrier;
//! - its scalars are the same in every warp: defined once in the loop from values that do not
//!   change in it, and not used after it (a warp that runs no iteration never defines them);
//! - and a lane whose elements of `t` are all false is a fixed point of the body: every variable
//!   the loop carries (read before it is assigned, or used after the loop) comes out of an
//!   iteration as it went in, and `t` stays false. [`Identity`] proves it by evaluating the
//!   body with `t` false (`false & x` is false, `select(false, a, b)` is `b`, `x + 0` is `x`,
//!   integers only).
//!
//! So the iterations a warp skips would have changed nothing of its lanes, and no lane of
//! another warp reads them (lane-local). The emulator runs the loop block-wide, as written.

use super::{CodegenResult, Emitter};
use crate::dtype::DType;
use crate::ir::{for_each_var, BinOp, Inst, Operand, ReduceOp, Stmt, Ty, UnOp, VarId, VarUse};
use crate::ptx::code::Guard;
use crate::ptx::value::Predicate;
use std::collections::HashMap;

/// How a loop runs warp by warp: the `bool` tile its condition folds.
pub(super) struct WarpPlan {
    live: VarId,
}

/// What a variable holds after part of an iteration, in a lane whose elements of the
/// condition's tile are false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Its value when the iteration began.
    Same(VarId),
    /// A known constant (an immediate's bits).
    Const(u64),
    Unknown,
}

/// The body's values in a lane whose elements of the condition's tile are false.
struct Identity<'a> {
    k: &'a crate::ir::Kernel,
    now: HashMap<VarId, Value>,
}

impl Identity<'_> {
    fn of(&self, o: Operand) -> Value {
        match o {
            Operand::Imm(bits, _) => Value::Const(bits),
            Operand::Var(v) => self.now.get(&v).copied().unwrap_or(Value::Same(v)),
        }
    }

    /// The value `inst` gives `dst` (of type `d`).
    fn step(&self, d: DType, inst: &Inst) -> Value {
        let zero = Value::Const(0);
        // Integer and bool arithmetic only: `x + 0.0` is not `x` for `x = -0.0`.
        let exact = d.is_int() || d.is_bool();
        match *inst {
            Inst::Mov(o) => self.of(o),
            Inst::Binary { op, lhs, rhs } if exact => {
                let (a, b) = (self.of(lhs), self.of(rhs));
                match op {
                    BinOp::And if a == zero || b == zero => zero,
                    BinOp::Mul if a == zero || b == zero => zero,
                    BinOp::Or | BinOp::Xor | BinOp::Add if a == zero => b,
                    BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub | BinOp::Shl | BinOp::Shr
                        if b == zero =>
                    {
                        a
                    }
                    _ => Value::Unknown,
                }
            }
            Inst::Unary { op: UnOp::Not, x } if d.is_bool() => match self.of(x) {
                Value::Const(0) => Value::Const(1),
                Value::Const(_) => zero,
                _ => Value::Unknown,
            },
            Inst::Select { cond, a, b } => match self.of(cond) {
                Value::Const(0) => self.of(b),
                Value::Const(_) => self.of(a),
                _ if self.of(a) == self.of(b) => self.of(a),
                _ => Value::Unknown,
            },
            // Zero is zero in every type (`false`, `0`, `0.0`).
            Inst::Cast { x, .. } if self.of(x) == zero => zero,
            _ => Value::Unknown,
        }
    }

    /// Evaluates the body's instructions in order.
    fn run(&mut self, body: &[Stmt]) {
        for s in body {
            if let Stmt::Inst {
                dst: Some(dst),
                inst,
                ..
            } = s
            {
                let d = self.k.ty(*dst).dtype();
                let v = self.step(d, inst);
                self.now.insert(*dst, v);
            }
        }
    }
}

impl Emitter<'_> {
    /// How `while` loop `s` runs warp by warp (see the module's documentation); `None` when it
    /// must run block-wide.
    pub(super) fn warp_plan(&self, s: &Stmt) -> Option<WarpPlan> {
        if self.solo || self.threads() <= 32 {
            return None;
        }
        let (c, live, body) = self.any_loop(s)?;
        let defs = self.lane_local_defs(body)?;
        let refs = self.reference_counts();
        let mut inside = HashMap::<VarId, u32>::new();
        for_each_var(std::slice::from_ref(s), &mut |u| {
            let (VarUse::Read(v) | VarUse::Def(v, _) | VarUse::LoopVar(v)) = u;
            *inside.entry(v).or_default() += 1;
        });
        let used_after = |v: VarId| refs[v as usize] > inside[&v];
        // A warp never computes the condition's scalar.
        let ok = !used_after(c)
            && self.steady_scalars(body, &defs, &used_after)
            && self.done_lanes_fixed(body, live, &defs, &used_after);
        ok.then_some(WarpPlan { live })
    }

    /// `while t.any() { body }`: the condition's scalar, `t` (a `bool` tile) and the body.
    fn any_loop<'s>(&self, s: &'s Stmt) -> Option<(VarId, VarId, &'s [Stmt])> {
        let Stmt::While {
            cond_block,
            cond: Operand::Var(c),
            body,
            ..
        } = s
        else {
            return None;
        };
        let [Stmt::Inst {
            dst: Some(d),
            inst:
                Inst::Reduce {
                    op: ReduceOp::Or,
                    x: live,
                },
            ..
        }] = &cond_block[..]
        else {
            return None;
        };
        let bool_tile = matches!(
            self.kernel().ty(*live),
            Ty::Tile {
                dtype: DType::Bool,
                ..
            }
        );
        (d == c && bool_tile).then_some((*c, *live, &body[..]))
    }

    /// How many times the body assigns each variable, where the body is flat and every
    /// instruction lane-local.
    fn lane_local_defs(&self, body: &[Stmt]) -> Option<HashMap<VarId, u32>> {
        let mut defs: HashMap<VarId, u32> = HashMap::new();
        for st in body {
            let Stmt::Inst { dst, inst, .. } = st else {
                return None;
            };
            if !self.lane_local(inst) {
                return None;
            }
            if let Some(v) = dst {
                *defs.entry(*v).or_default() += 1;
            }
        }
        Some(defs)
    }

    /// Whether the body's scalars are the same in every warp: each defined once, from values
    /// the loop does not change, and not used after the loop.
    fn steady_scalars(
        &self,
        body: &[Stmt],
        defs: &HashMap<VarId, u32>,
        used_after: &dyn Fn(VarId) -> bool,
    ) -> bool {
        let k = self.kernel();
        let mut steady: Vec<VarId> = Vec::new();
        for st in body {
            let Stmt::Inst {
                dst: Some(v), inst, ..
            } = st
            else {
                continue;
            };
            if !k.ty(*v).is_scalar() {
                continue;
            }
            let mut ok = defs[v] == 1 && !used_after(*v) && refs_defined_once(k, *v);
            for o in inst.operands() {
                if let Operand::Var(x) = o {
                    ok &= !defs.contains_key(&x) || steady.contains(&x);
                }
            }
            if !ok {
                return false;
            }
            steady.push(*v);
        }
        true
    }

    /// Whether every tile the loop carries (read in an iteration before it is assigned, or
    /// used after the loop) comes out of an iteration as it went in for a lane whose elements
    /// of `live` are false, and `live` stays false ([`Identity`]).
    fn done_lanes_fixed(
        &self,
        body: &[Stmt],
        live: VarId,
        defs: &HashMap<VarId, u32>,
        used_after: &dyn Fn(VarId) -> bool,
    ) -> bool {
        let k = self.kernel();
        let mut id = Identity {
            k,
            now: HashMap::from([(live, Value::Const(0))]),
        };
        id.run(body);
        let mut read_first: Vec<VarId> = vec![live];
        let mut seen: Vec<VarId> = Vec::new();
        for st in body {
            let Stmt::Inst { dst, inst, .. } = st else {
                continue;
            };
            for o in inst.operands() {
                if let Operand::Var(x) = o {
                    if defs.contains_key(&x) && !seen.contains(&x) {
                        read_first.push(x);
                    }
                }
            }
            if let Some(v) = dst {
                seen.push(*v);
            }
        }
        defs.keys().all(|&v| {
            let carried = !k.ty(v).is_scalar() && (read_first.contains(&v) || used_after(v));
            let want = if v == live {
                Value::Const(0)
            } else {
                Value::Same(v)
            };
            !carried || id.now.get(&v).copied().unwrap_or(Value::Same(v)) == want
        })
    }

    /// Whether `inst` reads and writes only the lanes that hold its elements, and no memory.
    fn lane_local(&self, inst: &Inst) -> bool {
        let k = self.kernel();
        let global = |a: &crate::ir::Access| matches!(k.ty(a.mem), Ty::Global { .. });
        match inst {
            _ if inst.is_elementwise() => true,
            Inst::Nanosleep { .. } => true,
            Inst::Load { access, .. } | Inst::Prefetch { access } => global(access),
            Inst::AtomicLoad { access, sem, .. } => {
                global(access) && !sem.has_acquire() && !sem.has_release()
            }
            _ => false,
        }
    }

    /// While loop `s` warp by warp: each warp tests its own lanes' elements of the condition's
    /// tile (`vote.sync.any`) and leaves when none holds.
    pub(super) fn warp_loop(&mut self, s: &Stmt, plan: &WarpPlan) -> CodegenResult<()> {
        let Stmt::While { body, .. } = s else {
            return super::internal("a warp loop that is not a while loop");
        };
        let Ty::Tile { shape, .. } = self.ty(plan.live)?.clone() else {
            return super::internal("a warp loop's condition of a scalar");
        };
        self.comment("while, warp by warp: the body changes nothing of a lane that is done");
        let (head, end) = (
            self.new_label("warp_while"),
            self.new_label("warp_while_end"),
        );
        self.label(head);
        let layout = self.layout_of(&shape);
        let mine = self.new_pred();
        self.ins(["mov", "pred"], (mine, 0));
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            match self.predicate_of(Operand::Var(plan.live), s)? {
                Predicate::Reg(p) => self.ins_if(ex.guard(), ["or", "pred"], (mine, mine, p)),
                Predicate::True => self.ins_if(ex.guard(), ["mov", "pred"], (mine, 1)),
                Predicate::False => {}
            }
        }
        let any = self.new_pred();
        self.ins(["vote", "sync", "any", "pred"], (any, mine, -1));
        self.branch_uniform(Guard::Unless(any), end);
        self.loop_ends.push(end);
        self.warp_loop = true;
        self.solo_barriers = 0;
        let r = self.block(body);
        self.warp_loop = false;
        self.loop_ends.pop();
        r?;
        if self.solo_barriers > 0 {
            return super::internal("a block barrier inside a loop that warps leave apart");
        }
        self.branch_uniform(Guard::Always, head);
        self.label(end);
        Ok(())
    }
}

/// Whether `v` is assigned at one place in the whole kernel (not a `let mut` carried in).
fn refs_defined_once(k: &crate::ir::Kernel, v: VarId) -> bool {
    let mut n = 0;
    for_each_var(&k.body, &mut |u| {
        if matches!(u, VarUse::Def(x, _) if x == v) {
            n += 1;
        }
    });
    n == 1
}
