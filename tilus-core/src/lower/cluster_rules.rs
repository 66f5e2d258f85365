//! The rules that keep thread-block clusters sound, checked on the finished body:
//!
//! * **`cluster_sync()` is reached by every block of the cluster the same number of times.** A
//!   cluster barrier counts arrivals: a block that skips one (or takes an extra one) pairs its
//!   barriers with the wrong ones of its peers, so a block may exit while a peer still writes
//!   into its shared memory, or hang. So a `cluster_sync()` may only stand where the path to it
//!   is the same for all blocks of the cluster: under conditions and loop bounds that are
//!   *cluster-uniform*, in loops left by no `break` under a condition that is not. A value is
//!   cluster-uniform when it is computed only from literals, scalar parameters, tensor lengths,
//!   `grid_dim`, `cluster_idx`, `cluster_size` and other cluster-uniform values, under
//!   cluster-uniform control; `block_idx()`, `cluster_rank()` and anything read from memory
//!   (loads, atomics) are not. A `let mut` variable is cluster-uniform when every assignment
//!   to it is (wherever it stands: the analysis does not follow which assignment reaches a
//!   use).
//! * **Distributed shared memory is touched only once the whole cluster runs.** A peer block
//!   may not have started yet (its shared memory does not exist) until the first
//!   `cluster_sync()`. When an access to a `cluster_shared_tensor` can run before every path to
//!   it has passed a `cluster_sync()`, the compiler puts one at the start of the kernel (a
//!   barrier every block reaches once; zeroing one's own part before the first user barrier
//!   stays legal and costs that one barrier).

use super::Lowerer;
use crate::diag::Diagnostic;
use crate::ir::{Block, Inst, Operand, Span, Stmt, VarId};
use std::collections::HashSet;

/// The variables whose value may differ between the blocks of a cluster.
struct Uniformity {
    varying: HashSet<VarId>,
    changed: bool,
}

impl Uniformity {
    fn operand(&self, o: Operand) -> bool {
        o.var().is_none_or(|v| !self.varying.contains(&v))
    }

    fn inst(&self, inst: &Inst) -> bool {
        let source_varies = matches!(
            inst,
            Inst::BlockIdx { .. }
                | Inst::ClusterRank
                | Inst::Load { .. }
                | Inst::AtomicLoad { .. }
                | Inst::AtomicRmw { .. }
        );
        !source_varies && inst.operands().into_iter().all(|o| self.operand(o))
    }

    fn mark(&mut self, v: VarId) {
        self.changed |= self.varying.insert(v);
    }

    /// One pass over `block` under control that is cluster-uniform (`ctl`) and uniform since
    /// the innermost loop's header (`since_loop`): marks what varies, and returns whether a
    /// `break` of the innermost loop is reached under a condition that varies.
    fn walk(&mut self, block: &[Stmt], ctl: bool, since_loop: bool) -> bool {
        let mut varying_break = false;
        for s in block {
            match s {
                Stmt::Inst { dst, inst, .. } => {
                    if let Some(d) = dst {
                        if !(ctl && self.inst(inst)) {
                            self.mark(*d);
                        }
                    }
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    let c = self.operand(*cond);
                    varying_break |= self.walk(then, ctl && c, since_loop && c);
                    varying_break |= self.walk(els, ctl && c, since_loop && c);
                }
                Stmt::For(l) => {
                    let header = l.bounds().into_iter().all(|o| self.operand(o));
                    let body_ctl = ctl && header && !self.walk(&l.body, ctl && header, true);
                    if !body_ctl {
                        self.walk(&l.body, false, true);
                        self.mark(l.var);
                    }
                }
                Stmt::While {
                    cond_block,
                    cond,
                    body,
                    ..
                } => {
                    self.walk(cond_block, ctl, true);
                    let c = self.operand(*cond);
                    if !(ctl && c && !self.walk(body, ctl && c, true)) {
                        self.walk(cond_block, false, true);
                        self.walk(body, false, true);
                    }
                }
                Stmt::Break { .. } => varying_break |= !since_loop,
            }
        }
        varying_break
    }
}

/// Whether a loop's body may leave it by a `break` under a condition that varies.
fn loop_exits_vary(u: &Uniformity, body: &[Stmt]) -> bool {
    fn walk(u: &Uniformity, block: &[Stmt], uniform: bool) -> bool {
        block.iter().any(|s| match s {
            Stmt::Break { .. } => !uniform,
            Stmt::If {
                cond, then, els, ..
            } => {
                let c = uniform && u.operand(*cond);
                walk(u, then, c) || walk(u, els, c)
            }
            _ => false,
        })
    }
    walk(u, body, true)
}

impl Lowerer {
    /// Check the cluster rules on `body` (see the module docs): report each `cluster_sync()`
    /// that not every block of the cluster reaches alike, and put a `cluster_sync()` at the
    /// start when distributed shared memory may be touched before the first one.
    pub(super) fn check_cluster_rules(&mut self, body: &mut Block, entry: Span) {
        if self.cluster.is_none() {
            return;
        }
        let mut u = Uniformity {
            varying: HashSet::new(),
            changed: true,
        };
        while u.changed {
            u.changed = false;
            u.walk(body, true, true);
        }
        self.report_varying_syncs(&u, body, None);
        if !self.distributed_vars.is_empty() && !self.synced_before_access(body, false).1 {
            body.insert(
                0,
                Stmt::Inst {
                    dst: None,
                    inst: Inst::ClusterSync,
                    span: entry,
                },
            );
        }
    }

    /// Report every `cluster_sync()` in `block` under control that varies (`why`: the statement
    /// whose condition, bounds or exits vary).
    fn report_varying_syncs(&mut self, u: &Uniformity, block: &[Stmt], why: Option<Span>) {
        for s in block {
            match s {
                Stmt::Inst {
                    inst: Inst::ClusterSync,
                    span,
                    ..
                } => {
                    if let Some(at) = why {
                        self.error(
                            Diagnostic::new(*span, "`cluster_sync()` is not reached alike by every block of the cluster")
                                .label(at, "this condition, loop bound or loop exit may differ between the cluster's blocks")
                                .note("a cluster barrier pairs the n-th arrival of each block: a block that skips one (or takes an extra one) meets its peers at the wrong barrier, and may exit while they still use its shared memory, or hang")
                                .note("conditions that `block_idx()`, `cluster_rank()` or a value read from memory decide may differ between blocks")
                                .help("move the `cluster_sync()` out of the branch or loop, or make the condition depend only on parameters, lengths, `grid_dim()`, `cluster_idx()` and `cluster_size()`"),
                        );
                    }
                }
                Stmt::Inst { .. } | Stmt::Break { .. } => {}
                Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                } => {
                    let w = why.or((!u.operand(*cond)).then_some(*span));
                    self.report_varying_syncs(u, then, w);
                    self.report_varying_syncs(u, els, w);
                }
                Stmt::For(l) => {
                    let header = l.bounds().into_iter().all(|o| u.operand(o));
                    let varies = !header || loop_exits_vary(u, &l.body);
                    self.report_varying_syncs(u, &l.body, why.or(varies.then_some(l.span)));
                }
                Stmt::While {
                    cond_block,
                    cond,
                    body,
                    span,
                } => {
                    let varies = !u.operand(*cond) || loop_exits_vary(u, body);
                    let w = why.or(varies.then_some(*span));
                    self.report_varying_syncs(u, cond_block, w);
                    self.report_varying_syncs(u, body, w);
                }
            }
        }
    }

    /// Walk `block` entered with `synced` (every path to here has passed a cluster barrier):
    /// returns whether every path through it ends synced, and whether every access to a
    /// distributed shared tensor in it is synced.
    fn synced_before_access(&self, block: &[Stmt], mut synced: bool) -> (bool, bool) {
        let mut ok = true;
        for s in block {
            match s {
                Stmt::Inst { inst, .. } => {
                    if matches!(inst, Inst::ClusterSync) {
                        synced = true;
                    } else if let Some(a) = inst.access() {
                        ok &= synced || !self.distributed_vars.contains(&a.mem);
                    }
                }
                Stmt::Break { .. } => {}
                Stmt::If { then, els, .. } => {
                    let (t, ok_t) = self.synced_before_access(then, synced);
                    let (e, ok_e) = self.synced_before_access(els, synced);
                    ok &= ok_t && ok_e;
                    synced = t && e;
                }
                Stmt::For(l) => {
                    // The body may run no iteration: the state after is the state before.
                    ok &= self.synced_before_access(&l.body, synced).1;
                }
                Stmt::While {
                    cond_block, body, ..
                } => {
                    // The condition runs at least once.
                    let (c, ok_c) = self.synced_before_access(cond_block, synced);
                    ok &= ok_c && self.synced_before_access(body, c).1;
                    synced = c;
                }
            }
        }
        (synced, ok)
    }
}
