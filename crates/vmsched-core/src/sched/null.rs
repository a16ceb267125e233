//! null: Xen's static 1:1 scheduler (Xen 4.9+, experimental; supported for the PV shim).
//!
//! Design. Each PCPU runs either one assigned VCPU or nothing. VCPUs are
//! assigned as they are created, first come first served: to the PCPU they
//! were placed on if it is free, else the first free PCPU of their affinity
//! (soft affinity first). A VCPU that finds no free PCPU waits in a global
//! FIFO wait queue until a PCPU is freed (its VCPU goes offline, or is
//! moved away by `xl vcpu-pin`), so VCPUs beyond the number of PCPUs never
//! run otherwise. A paused VCPU keeps its PCPU (idle); an offline one gives
//! it up, and when it comes back it takes its old PCPU if free, else waits. An assigned VCPU that blocks leaves its PCPU idle; nothing else
//! may use it. There are no parameters, no time slices and no timers: a PCPU
//! re-decides only when tickled (its VCPU woke or went to sleep).
//!
//! Deviations from Xen: no tasklets or cpupools. Where Xen
//! places a VCPU that found no free PCPU on "any" PCPU of its affinity (a
//! placeholder; `cpumask_any` may be random), vmsched uses the first one, so
//! runs stay deterministic. See `docs/schedulers/null.md`.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu`, `remove_vcpu`, `wake`,
//! `sleep`, `do_schedule`, `pick_cpu` (pick_res), `migrate`, `adjust`.

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::cpumask::CpuMask;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{ParamSpec, Params};

const PARAMS: &[ParamSpec] = &[];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("assigned_vcpus", "VCPUs that hold a PCPU at the end"),
    ("waiting_vcpus", "VCPUs in the wait queue at the end"),
    ("waitq_assignments", "VCPUs given a PCPU from the wait queue"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "null",
    "null",
    PARAMS,
    |_, n| sized_scheduler!(n, W => Null::<W>::default()),
)
.about(
    "Xen's null scheduler: each VCPU statically owns one PCPU; VCPUs beyond the PCPU count wait forever.",
    "Xen 4.9 - current (experimental)",
)
.with_counters(COUNTERS);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Soft,
    Hard,
}

/// The null scheduler's state.
#[derive(Default)]
pub struct Null<const W: usize> {
    /// The VCPU assigned to each PCPU.
    assigned: Vec<Option<VcpuId>>,
    /// VCPUs without a PCPU, in arrival order.
    waitq: Vec<VcpuId>,
    in_waitq: Vec<bool>,
    cpus_free: CpuMask<W>,
    stat_waitq_assignments: u64,
}

impl<const W: usize> Null<W> {
    fn steps(ctx: &SchedCtx, v: VcpuId) -> &'static [Step] {
        if ctx.has_soft_affinity(v) {
            &[Step::Soft, Step::Hard]
        } else {
            &[Step::Hard]
        }
    }

    /// `affinity_balance_cpumask`: soft ∩ hard (hard if empty), or hard.
    fn balance_mask(ctx: &SchedCtx, v: VcpuId, step: Step) -> CpuMask<W> {
        let hard = ctx.hard_affinity(v).sized::<W>();
        match step {
            Step::Hard => hard,
            Step::Soft => {
                let s = ctx.soft_affinity(v).sized::<W>().and(&hard);
                if s.is_empty() {
                    hard
                } else {
                    s
                }
            }
        }
    }

    /// `unit_check_affinity`.
    fn allows(ctx: &SchedCtx, v: VcpuId, cpu: PcpuId, step: Step) -> bool {
        Self::balance_mask(ctx, v, step).test(cpu)
    }

    /// `pick_res`: own PCPU if free (or already ours), else the first free one.
    fn pick_res(&self, ctx: &SchedCtx, v: VcpuId) -> PcpuId {
        let cpu = ctx.processor(v);
        for &step in Self::steps(ctx, v) {
            let mask = Self::balance_mask(ctx, v, step);
            let owner = self.assigned[cpu.idx()];
            if (owner.is_none() || owner == Some(v)) && mask.test(cpu) {
                return cpu;
            }
            if let Some(c) = mask.and(&self.cpus_free).first() {
                return c;
            }
        }
        ctx.hard_affinity(v)
            .first()
            .expect("non-empty hard affinity")
    }

    fn assign(&mut self, ctx: &mut SchedCtx, v: VcpuId, cpu: PcpuId) {
        self.assigned[cpu.idx()] = Some(v);
        ctx.set_processor(v, cpu);
        self.cpus_free.clear(cpu);
    }

    fn waitq_push(&mut self, v: VcpuId) {
        self.waitq.push(v);
        self.in_waitq[v.idx()] = true;
    }

    fn waitq_remove(&mut self, v: VcpuId) {
        if std::mem::take(&mut self.in_waitq[v.idx()]) {
            self.waitq.retain(|&x| x != v);
        }
    }

    /// The first waiting VCPU that may run on `cpu` (soft-affinity pass first).
    fn waiter_for(&self, ctx: &SchedCtx, cpu: PcpuId) -> Option<VcpuId> {
        for step in [Step::Soft, Step::Hard] {
            for &w in &self.waitq {
                if step == Step::Soft && !ctx.has_soft_affinity(w) {
                    continue;
                }
                if Self::allows(ctx, w, cpu, step) {
                    return Some(w);
                }
            }
        }
        None
    }

    /// `unit_deassign`: free `v`'s PCPU and hand it to a waiter, if any.
    fn deassign(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let cpu = ctx.processor(v);
        self.assigned[cpu.idx()] = None;
        self.cpus_free.set(cpu);
        if let Some(w) = self.waiter_for(ctx, cpu) {
            self.waitq_remove(w);
            self.assign(ctx, w, cpu);
            self.stat_waitq_assignments += 1;
            ctx.tickle(cpu);
        }
    }
}

impl<const W: usize> Scheduler for Null<W> {
    fn name(&self) -> &'static str {
        "null"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.assigned = vec![None; ctx.npcpus()];
        self.in_waitq = vec![false; ctx.nvcpus()];
        self.cpus_free = ctx.topology().all().sized();
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let cpu = self.pick_res(ctx, v);
        ctx.set_processor(v, cpu);
        if self.assigned[cpu.idx()].is_none() {
            self.assign(ctx, v, cpu);
        } else {
            // pick_res returns a busy PCPU only when no allowed PCPU is free.
            self.waitq_push(v);
        }
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if self.in_waitq[v.idx()] {
            self.waitq_remove(v);
        } else if self.assigned[ctx.processor(v).idx()] == Some(v) {
            self.deassign(ctx, v);
        }
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() || self.in_waitq[v.idx()] {
            return;
        }
        let cpu = ctx.processor(v);
        if self.assigned[cpu.idx()] == Some(v) {
            ctx.tickle(cpu);
            return;
        }
        if self.assigned[cpu.idx()].is_none()
            && Self::allows(ctx, v, cpu, Step::Hard)
            && (!ctx.has_soft_affinity(v) || Self::allows(ctx, v, cpu, Step::Soft))
        {
            self.assign(ctx, v, cpu);
            ctx.tickle(cpu);
            return;
        }
        self.waitq_push(v);
        for c in ctx.hard_affinity(v).sized::<W>().and(&self.cpus_free).iter() {
            ctx.tickle(c);
        }
    }

    /// `null_unit_sleep`: a VCPU going offline gives up its PCPU (a waiter
    /// may take it) or its place in the wait queue; a paused one keeps its
    /// PCPU. If it is running there, its PCPU reschedules.
    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let cpu = ctx.processor(v);
        if !ctx.is_online(v) {
            if self.in_waitq[v.idx()] {
                self.waitq_remove(v);
            } else if self.assigned[cpu.idx()] == Some(v) {
                self.deassign(ctx, v);
            }
        }
        if ctx.current(cpu) == Some(v) {
            ctx.tickle(cpu);
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let mut next = self.assigned[cpu.idx()];
        if next.is_none() {
            if let Some(w) = self.waiter_for(ctx, cpu) {
                self.waitq_remove(w);
                self.assign(ctx, w, cpu);
                self.stat_waitq_assignments += 1;
                next = Some(w);
            } else {
                self.cpus_free.set(cpu);
            }
        }
        Decision {
            next: next.filter(|&v| ctx.is_runnable(v)),
            slice_ns: None,
            migrated: false,
        }
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        self.pick_res(ctx, v)
    }

    /// `null_unit_migrate`: leave the old PCPU (a waiter may take it), take
    /// the new one if free and allowed, else wait.
    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        let from = ctx.processor(v);
        if from == to {
            return;
        }
        if self.assigned[from.idx()] == Some(v) {
            self.deassign(ctx, v);
        }
        if self.assigned[to.idx()].is_none() && Self::allows(ctx, v, to, Step::Hard) {
            self.waitq_remove(v);
            self.assign(ctx, v, to);
        } else if !self.in_waitq[v.idx()] {
            self.waitq_push(v);
        }
        ctx.set_processor(v, to);
    }

    fn adjust(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            (
                "assigned_vcpus",
                self.assigned.iter().filter(|a| a.is_some()).count() as u64,
            ),
            ("waiting_vcpus", self.waitq.len() as u64),
            ("waitq_assignments", self.stat_waitq_assignments),
        ]
    }

    fn dump(&self, _ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for (p, a) in self.assigned.iter().enumerate() {
            let _ = writeln!(
                s,
                "pcpu{p}: {}",
                a.map_or("free".to_string(), |v| format!("v{}", v.0))
            );
        }
        let _ = writeln!(
            s,
            "waitq: {:?}",
            self.waitq.iter().map(|v| v.0).collect::<Vec<_>>()
        );
        s
    }
}
