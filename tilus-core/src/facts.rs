//! Facts about a kernel's variables that several parts of the compiler ask for, computed once
//! under one rule (below the passes and the PTX generator, which all read them from here).
//!
//! **Definition sites.** A variable is defined by the instructions that assign it and, for a
//! loop's own variable, by the loop's head (which assigns it on every iteration). Parameters
//! are defined once, by the launch. Two questions follow, and each consumer asks the one it
//! needs:
//!
//! * [`Defs::single_site`]: one place defines it (an instruction, a loop head or the launch),
//!   so every use sees a value that place produced: a fact true of every value that place can
//!   produce (its bound, its trailing zeros) holds at every use. The PTX generator's bounds and
//!   divisibility facts ask this.
//! * [`Defs::assigned_once`]: defined by exactly one instruction, executed at most once before
//!   each use: its value never changes once set, so two uses see the *same* value. A loop's
//!   variable is never assigned once (it changes every iteration), and neither is a variable an
//!   instruction also assigns. The rewriting passes (`range_mask`, `affine_index`) ask this.
//!   (An instruction inside a loop is assigned once in this sense only for uses in the same
//!   iteration, after it; the passes rewrite only such uses.)

use crate::ir::{for_each_var, Inst, Kernel, VarId, VarUse};

/// Where each variable of one kernel is defined and how often it is read.
#[derive(Debug, Clone)]
pub struct Defs {
    /// Instructions assigning each variable.
    inst_defs: Vec<u32>,
    /// Whether the variable is a `for` loop's own variable (assigned by its head).
    loop_var: Vec<bool>,
    /// Reads of each variable (operands, loop bounds, conditions).
    reads: Vec<u32>,
    /// The instruction assigning each variable that one instruction assigns.
    def_inst: Vec<Option<Inst>>,
    params: usize,
}

impl Defs {
    /// The facts of `k`'s body.
    pub fn of(k: &Kernel) -> Defs {
        Defs::of_body(&k.body, k.vars.len(), k.params.len())
    }

    /// The facts of `body`, a kernel body over `vars` variables of which the first `params`
    /// are parameters.
    pub fn of_body(body: &[crate::ir::Stmt], vars: usize, params: usize) -> Defs {
        let mut d = Defs {
            inst_defs: vec![0; vars],
            loop_var: vec![false; vars],
            reads: vec![0; vars],
            def_inst: vec![None; vars],
            params,
        };
        for_each_var(body, &mut |u| match u {
            VarUse::Read(v) => d.reads[v as usize] += 1,
            VarUse::Def(v, inst) => {
                d.inst_defs[v as usize] += 1;
                d.def_inst[v as usize] = (d.inst_defs[v as usize] == 1).then(|| inst.clone());
            }
            VarUse::LoopVar(v) => d.loop_var[v as usize] = true,
        });
        d
    }

    fn get<T: Copy + Default>(table: &[T], v: VarId) -> T {
        table.get(v as usize).copied().unwrap_or_default()
    }

    /// A parameter that nothing assigns.
    pub fn is_param(&self, v: VarId) -> bool {
        (v as usize) < self.params && Self::get(&self.inst_defs, v) == 0 && !self.is_loop_var(v)
    }

    /// A `for` loop's own variable.
    pub fn is_loop_var(&self, v: VarId) -> bool {
        Self::get(&self.loop_var, v)
    }

    /// Places defining `v`: its instructions, plus one for a loop head and one for a
    /// parameter's launch.
    pub fn sites(&self, v: VarId) -> u32 {
        Self::get(&self.inst_defs, v)
            + self.is_loop_var(v) as u32
            + ((v as usize) < self.params) as u32
    }

    /// One place defines `v` (see the module docs).
    pub fn single_site(&self, v: VarId) -> bool {
        self.sites(v) == 1
    }

    /// Exactly one instruction defines `v`, and nothing else does (see the module docs).
    pub fn assigned_once(&self, v: VarId) -> bool {
        self.single_site(v) && Self::get(&self.inst_defs, v) == 1
    }

    /// The one instruction defining `v`, when [`assigned_once`](Self::assigned_once).
    pub fn def_of(&self, v: VarId) -> Option<&Inst> {
        if self.assigned_once(v) {
            self.def_inst.get(v as usize)?.as_ref()
        } else {
            None
        }
    }

    /// Reads of `v`.
    pub fn reads(&self, v: VarId) -> usize {
        Self::get(&self.reads, v) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Block, Operand, Span, Stmt};
    use crate::passes::{scalar_test_kernel, test_def as inst};

    /// A loop variable that an instruction also assigns, read after the loop: every question
    /// gets one answer, whoever asks.
    #[test]
    fn one_answer_for_every_pass() {
        let body: Block = vec![
            inst(1, Inst::Mov(Operand::i32(5))),
            Stmt::For(crate::ir::ForLoop {
                var: 2,
                start: Operand::i32(0),
                end: Operand::Var(0),
                step: Operand::i32(1),
                body: vec![inst(3, Inst::Mov(Operand::Var(2)))],
                span: Span::NONE,
            }),
            inst(2, Inst::Mov(Operand::i32(7))),
            inst(4, Inst::Mov(Operand::Var(2))),
        ];
        let k = scalar_test_kernel(5, body);
        let d = Defs::of(&k);
        // The parameter: one site (the launch), never assigned by an instruction.
        assert!(d.is_param(0) && d.single_site(0) && !d.assigned_once(0));
        // An instruction's result: both.
        assert!(d.single_site(1) && d.assigned_once(1));
        assert!(matches!(d.def_of(1), Some(Inst::Mov(_))));
        // The loop variable also assigned after the loop: two sites, never once.
        assert!(d.is_loop_var(2) && d.sites(2) == 2);
        assert!(!d.single_site(2) && !d.assigned_once(2) && d.def_of(2).is_none());
        assert_eq!(d.reads(2), 2);
        // A loop variable alone: one site (its head), but not assigned once.
        let mut only_loop = k.clone();
        only_loop.body.truncate(2);
        let d = Defs::of(&only_loop);
        assert!(d.single_site(2) && !d.assigned_once(2));
    }
}
