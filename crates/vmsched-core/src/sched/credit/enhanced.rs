//! The Enhanced credit scheduler (`credit-enhanced`), proposed in the Xen
//! scheduler thesis (2015): its rule and its `enhanced_schedule` pseudocode
//! (`docs/schedulers/credit-enhanced.md`).
//!
//! Design. Credit's structure, unchanged: weights and caps, 30 ms accounting
//! and slices, 10 ms ticks, BOOST on wake-up, per-PCPU run queues ordered
//! BOOST > UNDER > OVER, work stealing. What changes is the choice a PCPU
//! makes from its own run queue. The thesis lets "the credit remaining for
//! each VCPU after every accounting" drive it, so that "the starved VCPUs
//! with the most remaining credits are allowed to supersede others": a VCPU
//! that blocks often (I/O-bound) spends little of what accounting gives it
//! and so overtakes CPU hogs that have burnt theirs.
//!
//! Decision, in three steps after the running VCPU is descheduled (Credit's
//! first and last phases, [`Credit::schedule_prev`] and
//! [`Credit::switch_to`], without Credit's rate limit):
//!
//! 0. **Descheduling.** The thesis's `enhanced_schedule` (input: the current
//!    time; output: the next VCPU) opens with "IF running VCPU is runnable
//!    THEN insert at end of PCPU run queue" and has no other step for the
//!    running VCPU: unlike Xen 4.4's `csched_schedule`, whose rate limit
//!    (`ratelimit_us`, 1 ms) keeps a VCPU that has run less than that, every
//!    decision puts the running VCPU back and selects again. So a waking
//!    BOOST VCPU preempts at once, and the decisions are more frequent: the
//!    "context switch overhead because of additional validations in the
//!    scheduling decision path" the thesis reports. This is where the rule
//!    acts in the thesis's contended runs (a guest's I/O VCPU waking onto a
//!    PCPU where Dom0's CPU test has just started): the counter
//!    `ratelimit_overrides` counts those decisions, `differs_from_credit`
//!    every decision whose choice is not Credit's.
//!
//! 1. **Choice.** Among the VCPUs queued on this PCPU that are not OVER and
//!    not yielding, take those of the best priority present (BOOST, else
//!    UNDER) and run the one with the most credit left (the first in queue
//!    order on a tie). This is the thesis's test "priority OVER or credit
//!    less than `max_credit` → not chosen", with `max_credit` the most
//!    credit such a VCPU holds *now*. If every queued VCPU is OVER (or
//!    yielding), or none is queued, Credit decides as usual
//!    ([`Credit::pick_next`]: the head, after trying to steal a
//!    higher-priority VCPU from a busy peer).
//! 2. **Migration.** Every VCPU still queued here, in queue order, is moved
//!    to an idle PCPU whose run queue is empty, if one is in its affinity
//!    (soft first), and that PCPU is tickled: the pseudocode's "IF other PCPU
//!    run queue empty THEN dequeue from current PCPU run queue; insert VCPU
//!    into PCPU with empty run queue". One VCPU per idle PCPU; yielding and
//!    cache-hot VCPUs stay, as they would not be stolen.
//! 3. Whatever is not moved stays in its place ("yield PCPU and insert at end
//!    of current PCPU run queue": Credit's queue is already in priority
//!    order, FIFO within a priority, so re-inserting changes nothing).
//!
//! The `max_credit` questions the thesis leaves open (and where its text
//! and its pseudocode disagree) and what vmsched decides:
//!
//! * As written, `max_credit` only grows (it is set to the credit of each
//!   VCPU chosen) and is never reset, so after one well-funded pick every
//!   VCPU with less credit fails the test for good, and the selection
//!   "Perform VCPU selection from run queue" recurses with no exit when all
//!   fail. **Fix:** `max_credit` is recomputed at every decision as the most
//!   credit held by a candidate of the best priority class; exactly one
//!   VCPU passes, the scan ends after one pass over the queue, and an
//!   all-OVER queue falls back to Credit's choice (which never idles while a
//!   VCPU is queued). With that, the initial value, a reset at accounting,
//!   and "per PCPU or global" have no meaning left: it is per decision.
//! * "Remaining credit" is the credit the VCPU holds at the decision: what
//!   the last accounting gave it minus what it has burnt since (credit is
//!   burnt exactly, by time, from Xen 4.0). Except for an *inactive* VCPU:
//!   Credit stops accounting for a VCPU that leaves more than a slice of
//!   credit unspent (and never starts for one never caught running at a
//!   tick, quirk Q4), after which its credit is only burnt, never
//!   replenished, and can sit far below zero while it uses almost nothing.
//!   Ranking by that number would put the I/O-bound VCPUs the thesis wants
//!   first last, so an inactive VCPU ranks above every active one (its
//!   credit at its last accounting exceeded a slice, more than any active
//!   VCPU holds); within each group, by credit.
//! * Every queued VCPU is tested, not only the head.
//! * Priority classes are kept: a BOOST VCPU is chosen before any UNDER one
//!   whatever their credit, because BOOST is what lets a waking VCPU preempt
//!   (Credit's wake path, unchanged) and the preempting VCPU must be the one
//!   that runs. Within a class the most credit wins.
//! * A migrated VCPU runs at once: only idle PCPUs are targets, and they are
//!   tickled (one IPI).
//! * The rate limit is not applied (step 0); `ratelimit_us` is still
//!   accepted, and a decision Credit's limit would have deferred is counted.
//! * Accounting period, slice, ticks, BOOST, caps, stealing, placement and
//!   every other `xen_version` difference are Credit's. The thesis ran Xen 4.4.1
//!   (`xen_version = "4.4"`); the default is the current release, as for
//!   `credit`, so that the two differ only by the rule above.
//!
//! Parameters: Credit's, with the same names and meaning.
//!
//! Hooks: `do_schedule` (the steps above), `counters` (Credit's, and
//! `supersedes`, `moves_to_empty_pcpu`, `differs_from_credit`,
//! `ratelimit_overrides`), `dump`; every other hook is Credit's.

use super::{Credit, Step, PARAMS, PRI_OVER};
use crate::sched::{Allocation, AllocParam, AllocValue, Shares};
use crate::cpumask::CpuMask;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::Params;
use crate::sched::{Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo};

/// The own counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("supersedes", "decisions that ran a VCPU other than the run queue's head"),
    ("differs_from_credit", "decisions whose VCPU is not the one Credit would have run"),
    ("ratelimit_overrides", "of those, decisions Credit's rate limit would have deferred"),
    ("moves_to_empty_pcpu", "queued VCPUs moved to an idle PCPU"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "credit-enhanced",
    "Enhanced",
    PARAMS,
    |p, n| sized_scheduler!(n, W => CreditEnhanced::<W>::new(p)),
)
.about(
    "Enhanced credit (Xen scheduler thesis, 2015): Credit that runs the queued VCPU with the most remaining credit and moves the others to idle PCPUs.",
    "proposal: the Xen scheduler thesis (2015), on Xen 4.4.1's Credit",
)
.with_allocation(Allocation {
    rule: "cap = A (as Credit: Enhanced credit keeps Credit's caps)",
    since: "3.0",
    domain: &[AllocParam {
        name: "cap",
        unit: "%",
        value: AllocValue::Share(100.0),
        since: "",
    }],
    frames: None,
})
.with_shares(Shares::Weight {
        param: "weight",
        base: 256.0,
    })
.with_check_global(super::check_global)
.with_counters_after(super::COUNTERS, COUNTERS);

/// Credit with the Enhanced choice.
pub struct CreditEnhanced<const W: usize> {
    c: Credit<W>,
    /// Decisions whose choice was not the head of the run queue.
    stat_supersedes: u64,
    /// Queued VCPUs moved to an idle PCPU.
    stat_moves: u64,
    /// Decisions whose choice is not Credit's from the same state: the
    /// running VCPU where Credit's rate limit would have kept it, else the
    /// head of the run queue (work stealing, the same in both, aside).
    stat_differs: u64,
    /// Of those, decisions where Credit's rate limit would have kept the
    /// running VCPU.
    stat_ratelimit_overrides: u64,
}

impl<const W: usize> CreditEnhanced<W> {
    /// An Enhanced credit scheduler with validated global parameters.
    pub fn new(p: &Params) -> CreditEnhanced<W> {
        CreditEnhanced {
            c: Credit::new(p),
            stat_supersedes: 0,
            stat_moves: 0,
            stat_differs: 0,
            stat_ratelimit_overrides: 0,
        }
    }

    /// How much credit `v` has left, for ranking: an inactive VCPU (one
    /// Credit took out of accounting because it left more than a slice of
    /// credit unspent, or one never caught running at a tick) ranks above
    /// every active one, whose credit is at most a slice; within each group,
    /// by credit.
    fn remaining(&self, v: VcpuId) -> (bool, i32) {
        let u = self.c.u(v);
        (!u.active, u.credit)
    }

    /// The queued VCPU with the most remaining credit among those of the best
    /// priority above OVER that are not yielding (the first in queue order
    /// on a tie).
    fn most_credit(&self, cpu: PcpuId) -> Option<VcpuId> {
        let mut best: Option<(i8, (bool, i32), VcpuId)> = None;
        for &v in &self.c.pcpus[cpu.idx()].runq {
            let u = self.c.u(v);
            if u.pri <= PRI_OVER || u.yield_ {
                continue;
            }
            let key = (u.pri, self.remaining(v));
            let better = match best {
                None => true,
                Some((pri, rem, _)) => key > (pri, rem),
            };
            if better {
                best = Some((key.0, key.1, v));
            }
        }
        best.map(|(_, _, v)| v)
    }

    /// Idle PCPUs with nothing queued that nobody has tickled yet.
    fn empty_pcpus(&self, ctx: &SchedCtx, cpu: PcpuId) -> CpuMask<W> {
        let mut m = self.c.idlers;
        m.clear(cpu);
        for p in self.c.idlers.iter() {
            if ctx.current(p).is_some() || !self.c.pcpus[p.idx()].runq.is_empty() {
                m.clear(p);
            }
        }
        m
    }

    /// Where queued `v` may go: an empty PCPU of its soft affinity, else of
    /// its hard affinity; none for a yielding or cache-hot VCPU (those are
    /// not stolen either).
    fn empty_target(&self, ctx: &SchedCtx, v: VcpuId, empty: &CpuMask<W>) -> Option<PcpuId> {
        let u = self.c.u(v);
        let hot = self.c.migration_delay_ns > 0
            && ctx.now().since(u.last_sched_time) < self.c.migration_delay_ns;
        if hot || (u.yield_ && self.c.b.lb_ratelimit) {
            return None;
        }
        for step in [Step::Soft, Step::Hard] {
            if step == Step::Soft && !self.c.has_soft(ctx, v) {
                continue;
            }
            let cand = Credit::<W>::affinity(ctx, v, step).and(empty);
            if let Some(t) = cand.cycle(ctx.processor(v)) {
                return Some(t);
            }
        }
        None
    }

    /// Step 2: move what is still queued on `cpu` to empty PCPUs.
    fn move_to_empty(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) {
        if self.c.pcpus[cpu.idx()].runq.is_empty() {
            return;
        }
        let mut empty = self.empty_pcpus(ctx, cpu);
        let mut i = 0;
        while !empty.is_empty() && i < self.c.pcpus[cpu.idx()].runq.len() {
            let v = self.c.pcpus[cpu.idx()].runq[i];
            let Some(t) = self.empty_target(ctx, v, &empty) else {
                i += 1;
                continue;
            };
            empty.clear(t);
            self.c.runq_remove(cpu, v);
            self.c.sub_runnable(cpu);
            ctx.set_processor(v, t);
            self.c.runq_insert(t, v);
            self.c.add_runnable(t);
            if !self.c.b.tickled_stay_idle {
                self.c.idlers.clear(t);
            }
            self.stat_moves += 1;
            ctx.tickle(t);
        }
    }
}

impl<const W: usize> Scheduler for CreditEnhanced<W> {
    fn name(&self) -> &'static str {
        INFO.name
    }

    forward_hooks!(c: init, init_domain, insert_vcpu, remove_vcpu, wake, sleep, yield_,
        context_saved, pick_cpu, migrate, timer, adjust, adjust_global);

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        // Step 0: the running VCPU is descheduled whatever it has run; where
        // Credit's rate limit would have kept it, Credit's choice is it.
        let prev = ctx.current(cpu);
        let held = prev.is_some_and(|c| {
            let runtime = ctx.now().since(self.c.u(c).state_entry_time);
            self.c.ratelimit_holds(ctx, c, runtime)
        });
        if let Some(keep) = self.c.schedule_prev(ctx, cpu, false) {
            return keep;
        }
        let head = self.c.pcpus[cpu.idx()].runq.front().copied();
        let (snext, migrated) = match self.most_credit(cpu) {
            Some(v) => {
                if Some(v) != head {
                    self.stat_supersedes += 1;
                }
                self.c.runq_remove(cpu, v);
                (Some(v), false)
            }
            None => self.c.pick_next(ctx, cpu),
        };
        let credit_choice = if held { prev } else { head };
        if snext != credit_choice {
            self.stat_differs += 1;
            if held {
                self.stat_ratelimit_overrides += 1;
            }
        }
        self.move_to_empty(ctx, cpu);
        self.c.switch_to(ctx, cpu, snext, migrated)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.c.counters();
        v.push(("supersedes", self.stat_supersedes));
        v.push(("differs_from_credit", self.stat_differs));
        v.push(("ratelimit_overrides", self.stat_ratelimit_overrides));
        v.push(("moves_to_empty_pcpu", self.stat_moves));
        v
    }

    /// Credit's dump.
    fn dump(&self, ctx: &SchedCtx) -> String {
        self.c.dump(ctx)
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        self.c.state(ctx)
    }
}
