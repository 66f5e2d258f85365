//! A block's control flow as an explicit stack of frames, so that a block can stop at the back
//! edge of a loop and resume later, on any worker (cooperative scheduling, `sched.rs`).
//!
//! Control flow is block-uniform, so the whole position of a block in its program is this
//! stack: one frame per statement list being run (the kernel body, an `if` branch, a loop
//! body or a `while` condition block), each with the index of its next statement.

use super::interp::{Fault, Interp, R};
use super::value::Value;
use super::EmuError;
use crate::elem;
use crate::ir::{DType, Operand, Stmt, VarId};
use std::sync::atomic::Ordering;

/// A block that spins (loop iterations that read global memory atomically) offers its worker
/// to other blocks every this many such iterations: often enough that a chain of waiting
/// blocks makes progress quickly, rarely enough that the switches cost little next to the
/// spinning itself.
const SPIN_YIELD: u64 = 32;

/// A block that loops this many iterations without finishing also yields, spinning or not: a
/// loop that never ends (waiting on weak loads, or a bug) must not keep the blocks waiting to
/// start from running (one of them may report an error that ends the launch).
const TIME_SLICE: u64 = 1 << 16;

/// How often (in loop iterations) a block also yields its host thread to the OS.
const OS_YIELD_EVERY: u64 = 1024;

/// One statement list being run.
#[derive(Debug, Clone)]
pub(crate) enum Frame<'k> {
    /// Run once: the kernel body or an `if` branch.
    Seq { stmts: &'k [Stmt], pc: usize },
    /// The body of a `for` loop over `var` (of type `dtype`), which goes on while the counter
    /// stays below `end`, by `step`.
    For {
        body: &'k [Stmt],
        pc: usize,
        var: VarId,
        dtype: DType,
        end: i128,
        step: i128,
    },
    /// A `while` loop: its condition block (`in_body` false, `cond` tested at its end) or its
    /// body.
    While {
        cond_block: &'k [Stmt],
        cond: Operand,
        body: &'k [Stmt],
        pc: usize,
        in_body: bool,
    },
}

impl<'k> Frame<'k> {
    /// The statement list being run and the index of its next statement.
    fn cursor(&mut self) -> (&'k [Stmt], &mut usize) {
        match self {
            Frame::Seq { stmts, pc } => (stmts, pc),
            Frame::For { body, pc, .. } => (body, pc),
            Frame::While {
                cond_block,
                body,
                pc,
                in_body,
                ..
            } => (if *in_body { body } else { cond_block }, pc),
        }
    }

    fn is_loop(&self) -> bool {
        !matches!(self, Frame::Seq { .. })
    }
}

/// How [`Interp::run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The block has finished.
    Done,
    /// The block spins on an atomic and gives its worker to other blocks; `run` continues it.
    Yielded,
}

/// What a step asks of the run loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Go,
    Yield,
}

impl<'k> Interp<'_, 'k, '_> {
    /// Run the current block until it finishes or yields at a loop's back edge.
    pub(crate) fn run(&mut self) -> R<Stop> {
        loop {
            let Some(top) = self.frames.last_mut() else {
                return Ok(Stop::Done);
            };
            let (stmts, pc) = top.cursor();
            let next = match stmts.get(*pc) {
                Some(stmt) => {
                    *pc += 1;
                    self.step(stmt)?
                }
                None => self.end_of_list()?,
            };
            if next == Next::Yield {
                return Ok(Stop::Yielded);
            }
        }
    }

    fn step(&mut self, stmt: &'k Stmt) -> R<Next> {
        match stmt {
            Stmt::Inst { dst, inst, .. } => {
                self.inst(*dst, inst)?;
                Ok(Next::Go)
            }
            Stmt::For(l) => {
                // Bounds are evaluated once; the counter is wide so that `var + step` past the
                // type's range ends the loop (as a Rust range does) instead of wrapping around.
                let dtype = self.dtype(Operand::Var(l.var));
                let (start, end, step) = (self.int(l.start)?, self.int(l.end)?, self.int(l.step)?);
                if step <= 0 || start >= end {
                    return Ok(Next::Go);
                }
                self.set(l.var, counter(dtype, start))?;
                self.frames.push(Frame::For {
                    body: &l.body,
                    pc: 0,
                    var: l.var,
                    dtype,
                    end,
                    step,
                });
                self.tick()
            }
            Stmt::While {
                cond_block,
                cond,
                body,
                ..
            } => {
                self.frames.push(Frame::While {
                    cond_block,
                    cond: *cond,
                    body,
                    pc: 0,
                    in_body: false,
                });
                Ok(Next::Go)
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let stmts = if self.scalar(*cond)? != 0 { then } else { els };
                self.frames.push(Frame::Seq { stmts, pc: 0 });
                Ok(Next::Go)
            }
            Stmt::Break { .. } => {
                // Leave every list up to and including the innermost loop.
                while let Some(f) = self.frames.pop() {
                    if f.is_loop() {
                        return Ok(Next::Go);
                    }
                }
                Err(self.malformed("`break` outside a loop".into()))
            }
        }
    }

    /// The top frame's list is exhausted: leave it, or go round its loop.
    fn end_of_list(&mut self) -> R<Next> {
        let Some(top) = self.frames.last_mut() else {
            return Ok(Next::Go);
        };
        match *top {
            Frame::Seq { .. } => {
                self.frames.pop();
                Ok(Next::Go)
            }
            Frame::For {
                var,
                dtype,
                end,
                step,
                ..
            } => {
                // The counter is the variable itself, as in the PTX loop: read it back.
                let i = self.int(Operand::Var(var))? + step;
                if i >= end {
                    self.frames.pop();
                    return Ok(Next::Go);
                }
                self.set(var, counter(dtype, i))?;
                self.rewind(false);
                self.tick()
            }
            Frame::While { cond, in_body, .. } => {
                if in_body {
                    self.rewind(false);
                    return Ok(Next::Go);
                }
                if self.scalar(cond)? == 0 {
                    self.frames.pop();
                    return Ok(Next::Go);
                }
                self.rewind(true);
                self.tick()
            }
        }
    }

    /// Count one loop iteration: enforce the step limit, stop if another block failed, and
    /// yield when the block spins (every [`SPIN_YIELD`] iterations that read global memory
    /// atomically: such a loop may wait for another block) or has run long (every
    /// [`TIME_SLICE`] iterations), if the scheduler has another block to run.
    fn tick(&mut self) -> R<Next> {
        self.iterations += 1;
        if let Some(limit) = self.ctx.opts.max_loop_iterations {
            if self.iterations > limit {
                return Err(Fault::Error(EmuError::StepLimit {
                    kernel: self.ctx.kernel.name.clone(),
                    block: self.block,
                    limit,
                }));
            }
        }
        if self.ctx.abort.load(Ordering::Relaxed) {
            return Err(Fault::Aborted);
        }
        if self.iterations.is_multiple_of(OS_YIELD_EVERY) {
            // The block waited for may be on a worker the OS has not scheduled (more workers
            // than cores, or a cluster's threads).
            std::thread::yield_now();
        }
        let due = if std::mem::take(&mut self.read_atomically) {
            self.spins += 1;
            self.spins.is_multiple_of(SPIN_YIELD)
        } else {
            self.iterations.is_multiple_of(TIME_SLICE)
        };
        if due && self.sched.is_some_and(|s| s.has_other_work()) {
            return Ok(Next::Yield);
        }
        Ok(Next::Go)
    }

    /// Restart the top (loop) frame's list: a `for` body, or a `while`'s body (`body`) or
    /// condition block.
    fn rewind(&mut self, body: bool) {
        match self.frames.last_mut() {
            Some(Frame::For { pc, .. }) => *pc = 0,
            Some(Frame::While { pc, in_body, .. }) => {
                *pc = 0;
                *in_body = body;
            }
            _ => {}
        }
    }
}

/// The loop counter `i` as a value of the loop variable's type.
fn counter(d: DType, i: i128) -> Value {
    Value::Scalar(elem::int_const(d, i).unwrap_or(0))
}
