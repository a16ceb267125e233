//! RTDS: Xen's real-time deferrable-server scheduler (Xen 4.5+, experimental).
//!
//! Design. Every VCPU is a deferrable server with a `budget` per `period`
//! (defaults 4 ms per 10 ms). Its deadline is the end of its current period;
//! deadlines stay on the grid `k × period` counted from time 0, also after
//! sleeps. One global run queue per pool holds the VCPUs that have budget,
//! ordered by (priority level, deadline): global EDF. A PCPU runs the first
//! queued VCPU it may run, unless its current VCPU still has budget and
//! strictly outranks it; a VCPU runs until its budget is spent (the slice is
//! the remaining budget). Budget burns only while running and is kept while
//! blocked or preempted, but it is not carried over: at every deadline a
//! replenishment timer resets it to the full budget and moves the deadline
//! on by whole periods. VCPUs migrate freely at every decision.
//!
//! A VCPU that has spent its budget is depleted: without `extratime` it
//! waits, even on an idle host, until its next replenishment (a hard cap of
//! budget/period, the only behaviour before 4.10). With `extratime` (default
//! since 4.10) it refills at the next lower priority level and keeps
//! competing, by deadline, with the VCPUs of that level, until its
//! replenishment puts it back at level 0.
//!
//! A waking or preempted VCPU tickles one PCPU: an idle untickled one
//! (starting with its own), else the one running the lowest-priority VCPU if
//! the waker outranks it, else nobody.
//!
//! Parameters (names and units as `xl sched-rtds`): `period`, `budget` in
//! µs and `extratime` per domain (applied to all its VCPUs, as
//! `xl sched-rtds -d D -v all -p P -b B -e E`); `xen_version` (4.7 – 4.22):
//! before 4.10 there is no extratime.
//!
//! Deviations from Xen: the quantum-driven 4.5 – 4.6 variant is not modelled
//! (`xen_version` starts at 4.7); per-VCPU parameters differing within a
//! domain cannot be expressed; no tasklets or cpupools. As-coded details
//! kept: the replenishment queue is ordered by (priority level, deadline), the
//! same comparison as the run queue, so a VCPU inserted at a lower level can
//! sit behind later deadlines; replenished VCPUs are tickled in reverse
//! order of their deadlines (Xen's temporary list is built at its head).
//! See `docs/schedulers/rtds.md`.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu`, `wake`, `sleep`,
//! `do_schedule` (rt_schedule), `context_saved`, `pick_cpu`, `timer`
//! (repl_timer_handler), `adjust`.

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use super::{Allocation, AllocParam, AllocValue};
use crate::cpumask::CpuMask;
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::time::{Time, NS_PER_US};

/// Default period (µs).
const DEFAULT_PERIOD_US: i64 = 10_000;
/// Default budget (µs).
const DEFAULT_BUDGET_US: i64 = 4_000;
/// Shortest period and budget (µs).
const MIN_PERIOD_US: i64 = 10;
const MIN_BUDGET_US: i64 = 10;
/// Longest period (µs): Xen's STIME_DELTA_MAX (2^62 ns) in µs.
const MAX_PERIOD_US: i64 = (1i64 << 62) / 1000;
/// The one replenishment timer.
const REPL_TIMER: u32 = 0;

const CURRENT: Version = Version::new(4, 22);

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "period",
        unit: "us",
        kind: ParamKind::Int {
            min: MIN_PERIOD_US,
            max: MAX_PERIOD_US,
        },
        default: Default::Int(DEFAULT_PERIOD_US),
        scope: ParamScope::Domain,
        doc: "Replenishment period of each VCPU (xl sched-rtds -p).",
    },
    ParamSpec {
        name: "budget",
        unit: "us",
        kind: ParamKind::Int {
            min: MIN_BUDGET_US,
            max: MAX_PERIOD_US,
        },
        default: Default::Int(DEFAULT_BUDGET_US),
        scope: ParamScope::Domain,
        doc: "CPU time each VCPU is guaranteed per period; at most period (xl sched-rtds -b).",
    },
    ParamSpec {
        name: "extratime",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(true),
        scope: ParamScope::Domain,
        doc: "Run beyond the budget, at lower priority, when the host has spare time (xl sched-rtds -e; Xen 4.10+).",
    },
    ParamSpec {
        name: "xen_version",
        unit: "",
        kind: ParamKind::Version {
            min: Version::new(4, 7),
            max: CURRENT,
        },
        default: Default::Str("4.22"),
        scope: ParamScope::Global,
        doc: "Xen release whose RTDS behaviour to reproduce (before \"4.10\": no extratime, a hard cap).",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("replenishments", "budget replenishments"),
    ("depletions", "budgets spent"),
    ("tickles", "PCPUs tickled"),
    ("wakeups_tickling_nobody", "wake-ups that found no PCPU to tickle"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "rtds",
    "RTDS",
    PARAMS,
    |p, n| sized_scheduler!(n, W => Rtds::<W>::new(p)),
)
.about(
    "Xen's RTDS scheduler: per-VCPU budget/period deferrable servers under global EDF, optional extratime.",
    "Xen 4.5 - current (experimental); extratime since 4.10",
)
.with_allocation(Allocation {
    rule: "period 10 000 us, budget A % x 10 000 us, no extratime (xl sched-rtds -p 10000 -b 100A -e 0)",
    since: "4.5",
    domain: &[
        AllocParam {
            name: "period",
            unit: "ms",
            value: AllocValue::Fixed(10.0),
            since: "",
        },
        AllocParam {
            name: "budget",
            unit: "ms",
            value: AllocValue::Share(10.0),
            since: "",
        },
        // Before 4.10 RTDS has no extratime: a depleted VCPU always waits.
        AllocParam {
            name: "extratime",
            unit: "bool",
            value: AllocValue::Flag(false),
            since: "4.10",
        },
    ],
    frames: None,
})
.with_check_domain(check_domain)
.with_check_scenario(check_scenario)
.with_counters(COUNTERS);

/// The release cannot change through an `[[action]]`.
pub fn check_scenario(sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    super::reject_boot_changes(sc, &["xen_version"])
}

fn check_domain(g: &Params, p: &Params, path: &str) -> Result<(), ScenarioError> {
    let (period, budget) = (p.int("period"), p.int("budget"));
    if budget > period {
        return Err(ScenarioError::new(
            format!("{path}.budget"),
            format!(
                "{budget} us is longer than the period ({period} us); expected budget <= period"
            ),
        ));
    }
    let v = g.version("xen_version");
    if v < Version::new(4, 10) && p.is_explicit("extratime") && p.bool("extratime") {
        return Err(ScenarioError::new(
            format!("{path}.extratime"),
            format!("does not exist in Xen {v} (added in 4.10); expected no extratime with xen_version \"{v}\""),
        ));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    None,
    Run,
    Depleted,
}

#[derive(Clone, Debug)]
struct Unit {
    period: i64,
    budget: i64,
    extratime: bool,
    cur_budget: i64,
    cur_deadline: i64,
    last_start: i64,
    priority_level: u32,
    scheduled: bool,
    delayed_runq_add: bool,
    depleted: bool,
    queue: Queue,
    on_replq: bool,
}

/// The RTDS scheduler's state.
pub struct Rtds<const W: usize> {
    extratime_exists: bool,
    units: Vec<Unit>,
    /// Domain parameters until the domain's VCPUs are inserted.
    dom_params: Vec<(i64, i64, bool)>,
    /// VCPUs with budget (or extratime), by (level, deadline); FIFO among equals.
    runq: Vec<VcpuId>,
    /// VCPUs without budget, most recently depleted first.
    depletedq: Vec<VcpuId>,
    /// Pending replenishments, ordered like `runq`.
    replq: Vec<VcpuId>,
    /// PCPUs tickled and not yet rescheduled.
    tickled: CpuMask<W>,
    timer_home: PcpuId,

    stat_replenishments: u64,
    stat_tickles: u64,
    stat_tickle_none: u64,
    stat_depletions: u64,
}

impl<const W: usize> Rtds<W> {
    /// An RTDS scheduler with validated global parameters.
    pub fn new(p: &Params) -> Rtds<W> {
        Rtds {
            extratime_exists: p.version("xen_version") >= Version::new(4, 10),
            units: Vec::new(),
            dom_params: Vec::new(),
            runq: Vec::new(),
            depletedq: Vec::new(),
            replq: Vec::new(),
            tickled: CpuMask::<W>::empty(),
            timer_home: PcpuId(0),
            stat_replenishments: 0,
            stat_tickles: 0,
            stat_tickle_none: 0,
            stat_depletions: 0,
        }
    }

    #[inline]
    fn u(&self, v: VcpuId) -> &Unit {
        &self.units[v.idx()]
    }

    #[inline]
    fn um(&mut self, v: VcpuId) -> &mut Unit {
        &mut self.units[v.idx()]
    }

    /// `compare_unit_priority`: > 0 if `a` outranks `b`, < 0 if it ranks lower.
    fn compare(&self, a: VcpuId, b: VcpuId) -> i64 {
        let (a, b) = (self.u(a), self.u(b));
        let prio = i64::from(b.priority_level) - i64::from(a.priority_level);
        if prio == 0 {
            b.cur_deadline - a.cur_deadline
        } else {
            prio
        }
    }

    /// `deadline_queue_insert`: before the first entry `v` strictly outranks.
    /// Returns whether `v` went to the front.
    fn queue_insert(&self, q: &mut Vec<VcpuId>, v: VcpuId) -> bool {
        let pos = q
            .iter()
            .position(|&x| self.compare(v, x) > 0)
            .unwrap_or(q.len());
        q.insert(pos, v);
        pos == 0
    }

    /// `rt_update_deadline`: next deadline on the period grid, full budget, level 0.
    fn update_deadline(&mut self, now: i64, v: VcpuId) {
        let u = self.um(v);
        if u.cur_deadline + (u.period << 10) > now {
            loop {
                u.cur_deadline += u.period;
                if u.cur_deadline > now {
                    break;
                }
            }
        } else {
            let count = (now - u.cur_deadline) / u.period + 1;
            u.cur_deadline += count * u.period;
        }
        u.last_start = now;
        u.cur_budget = u.budget;
        u.priority_level = 0;
    }

    fn arm_repl_timer(&self, ctx: &mut SchedCtx) {
        match self.replq.first() {
            Some(&h) => ctx.arm_timer(
                REPL_TIMER,
                Time(self.u(h).cur_deadline as u64),
                self.timer_home,
            ),
            None => ctx.cancel_timer(REPL_TIMER),
        }
    }

    fn replq_insert(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let mut q = std::mem::take(&mut self.replq);
        let first = self.queue_insert(&mut q, v);
        self.replq = q;
        self.um(v).on_replq = true;
        if first {
            ctx.arm_timer(
                REPL_TIMER,
                Time(self.u(v).cur_deadline as u64),
                self.timer_home,
            );
        }
    }

    fn replq_remove(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let Some(i) = self.replq.iter().position(|&x| x == v) else {
            return;
        };
        self.replq.remove(i);
        self.um(v).on_replq = false;
        if i == 0 {
            self.arm_repl_timer(ctx);
        }
    }

    /// `replq_reinsert`: the deadline changed; move `v` and re-arm if needed.
    fn replq_reinsert(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let i = self.replq.iter().position(|&x| x == v).expect("on replq");
        self.replq.remove(i);
        let mut q = std::mem::take(&mut self.replq);
        let first = self.queue_insert(&mut q, v);
        self.replq = q;
        if i == 0 || first {
            self.arm_repl_timer(ctx);
        }
    }

    /// `runq_insert`: to the run queue if it has budget or extratime, else depleted.
    fn runq_insert(&mut self, v: VcpuId) {
        let u = self.u(v);
        if u.cur_budget > 0 || u.extratime {
            let mut q = std::mem::take(&mut self.runq);
            self.queue_insert(&mut q, v);
            self.runq = q;
            self.um(v).queue = Queue::Run;
        } else {
            self.depletedq.insert(0, v);
            self.um(v).queue = Queue::Depleted;
        }
    }

    fn q_remove(&mut self, v: VcpuId) {
        let q = match self.u(v).queue {
            Queue::Run => &mut self.runq,
            Queue::Depleted => &mut self.depletedq,
            Queue::None => return,
        };
        if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        self.um(v).queue = Queue::None;
    }

    /// `burn_budget` for the running VCPU.
    fn burn_budget(&mut self, v: VcpuId, now: i64) {
        let u = self.um(v);
        let delta = now - u.last_start;
        if delta < 0 {
            u.last_start = now;
            return;
        }
        u.cur_budget -= delta;
        u.last_start = now;
        if u.cur_budget <= 0 {
            if u.extratime {
                u.priority_level = u.priority_level.saturating_add(1);
                u.cur_budget = u.budget;
            } else {
                u.cur_budget = 0;
                u.depleted = true;
                self.stat_depletions += 1;
            }
        }
    }

    /// `runq_tickle`: an idle PCPU (its own first), else the lowest-priority one it outranks.
    fn runq_tickle(&mut self, ctx: &mut SchedCtx, new: VcpuId) {
        let mut not_tickled = ctx.hard_affinity(new).sized::<W>().andnot(&self.tickled);
        let start = ctx.processor(new);
        let mut cpu = if not_tickled.test(start) {
            Some(start)
        } else {
            not_tickled.cycle(start)
        };
        let mut lowest: Option<VcpuId> = None;
        while let Some(c) = cpu {
            match ctx.current(c) {
                None => return self.tickle(ctx, c),
                Some(cur) => match lowest {
                    Some(l) if self.compare(cur, l) >= 0 => {}
                    _ => lowest = Some(cur),
                },
            }
            not_tickled.clear(c);
            cpu = not_tickled.cycle(c);
        }
        match lowest {
            Some(l) if self.compare(l, new) < 0 => {
                let p = ctx.processor(l);
                self.tickle(ctx, p);
            }
            _ => self.stat_tickle_none += 1,
        }
    }

    fn tickle(&mut self, ctx: &mut SchedCtx, p: PcpuId) {
        self.stat_tickles += 1;
        self.tickled.set(p);
        ctx.tickle(p);
    }

    /// `repl_timer_handler`.
    fn replenish(&mut self, ctx: &mut SchedCtx) {
        let now = ctx.now().0 as i64;
        let mut done: Vec<VcpuId> = Vec::new();
        while let Some(&v) = self.replq.first() {
            if now < self.u(v).cur_deadline {
                break;
            }
            self.replq.remove(0);
            self.stat_replenishments += 1;
            self.update_deadline(now, v);
            done.insert(0, v);
            if self.u(v).queue != Queue::None {
                self.q_remove(v);
                ctx.count_queue_op();
                self.runq_insert(v);
                ctx.count_queue_op();
            }
        }
        for v in done {
            let p = ctx.processor(v);
            if ctx.current(p) == Some(v) && !self.runq.is_empty() {
                let head = self.runq[0];
                if self.compare(v, head) < 0 {
                    self.runq_tickle(ctx, head);
                }
            } else if std::mem::take(&mut self.um(v).depleted) && self.u(v).queue != Queue::None {
                self.runq_tickle(ctx, v);
            }
            let mut q = std::mem::take(&mut self.replq);
            self.queue_insert(&mut q, v);
            self.replq = q;
        }
        if let Some(&h) = self.replq.first() {
            ctx.arm_timer(
                REPL_TIMER,
                Time(self.u(h).cur_deadline as u64),
                self.timer_home,
            );
        }
    }

    fn set_params(&mut self, v: VcpuId, (period, budget, extratime): (i64, i64, bool)) {
        let u = self.um(v);
        u.period = period;
        u.budget = budget;
        u.extratime = extratime;
    }

    fn dom_params_of(&self, p: &Params) -> (i64, i64, bool) {
        let us = NS_PER_US as i64;
        (
            p.int("period") * us,
            p.int("budget") * us,
            self.extratime_exists && p.bool("extratime"),
        )
    }
}

impl<const W: usize> Scheduler for Rtds<W> {
    fn name(&self) -> &'static str {
        "rtds"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.units = (0..ctx.nvcpus())
            .map(|_| Unit {
                period: DEFAULT_PERIOD_US * NS_PER_US as i64,
                budget: DEFAULT_BUDGET_US * NS_PER_US as i64,
                extratime: self.extratime_exists,
                cur_budget: 0,
                cur_deadline: 0,
                last_start: 0,
                priority_level: 0,
                scheduled: false,
                delayed_runq_add: false,
                depleted: false,
                queue: Queue::None,
                on_replq: false,
            })
            .collect();
        // The timer lives on the first PCPU that joined the pool.
        self.timer_home = PcpuId(0);
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.dom_params.len());
        let p = self.dom_params_of(params);
        self.dom_params.push(p);
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = self.dom_params[ctx.domain_of(v).idx()];
        self.set_params(v, p);
        let cpu = self.pick_cpu(ctx, v);
        ctx.set_processor(v, cpu);
        let now = ctx.now().0 as i64;
        if now >= self.u(v).cur_deadline {
            self.update_deadline(now, v);
        }
        if self.u(v).queue == Queue::None && ctx.is_runnable(v) {
            self.replq_insert(ctx, v);
            if ctx.running_on(v).is_none() {
                self.runq_insert(v);
                ctx.count_queue_op();
            }
        }
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() || self.u(v).queue != Queue::None {
            return;
        }
        let now = ctx.now().0 as i64;
        let missed = now >= self.u(v).cur_deadline;
        if missed {
            self.update_deadline(now, v);
        }
        if self.u(v).scheduled {
            self.um(v).delayed_runq_add = true;
            if missed {
                self.replq_reinsert(ctx, v);
            }
            return;
        }
        self.replq_insert(ctx, v);
        self.runq_insert(v);
        ctx.count_queue_op();
        self.runq_tickle(ctx, v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.current(p) == Some(v) {
            ctx.tickle(p);
        } else if self.u(v).queue != Queue::None {
            self.q_remove(v);
            ctx.count_queue_op();
            self.replq_remove(ctx, v);
        } else {
            self.um(v).delayed_runq_add = false;
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let now = ctx.now().0 as i64;
        self.tickled.clear(cpu);
        let scurr = ctx.current(cpu);
        if let Some(c) = scurr {
            self.burn_budget(c, now);
        }
        let mut snext = self
            .runq
            .iter()
            .copied()
            .find(|&x| ctx.hard_affinity(x).sized::<W>().test(cpu));
        if let Some(n) = snext {
            if !ctx.is_runnable(n) {
                self.q_remove(n);
                ctx.count_queue_op();
                snext = None;
            }
        }
        if let Some(c) = scurr {
            if ctx.is_runnable(c)
                && self.u(c).cur_budget > 0
                && !matches!(snext, Some(n) if self.compare(c, n) <= 0)
            {
                snext = Some(c);
            }
            if snext != Some(c) && ctx.is_runnable(c) {
                self.um(c).delayed_runq_add = true;
            }
        }
        let mut migrated = false;
        let slice = match snext {
            Some(n) => {
                self.um(n).last_start = now;
                if snext != scurr {
                    self.q_remove(n);
                    ctx.count_queue_op();
                    self.um(n).scheduled = true;
                }
                if ctx.processor(n) != cpu {
                    ctx.set_processor(n, cpu);
                    migrated = true;
                }
                Some(self.u(n).cur_budget as u64)
            }
            None => None,
        };
        Decision {
            next: snext,
            slice_ns: slice,
            migrated,
        }
    }

    fn context_saved(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.um(v).scheduled = false;
        let delayed = std::mem::take(&mut self.um(v).delayed_runq_add);
        if delayed && ctx.is_runnable(v) {
            self.runq_insert(v);
            ctx.count_queue_op();
            self.runq_tickle(ctx, v);
        } else {
            self.replq_remove(ctx, v);
        }
    }

    /// `rt_res_pick`: stay if allowed, else the next allowed PCPU.
    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        let hard = ctx.hard_affinity(v).sized::<W>();
        let cur = ctx.processor(v);
        if hard.test(cur) {
            cur
        } else {
            hard.cycle(cur).expect("non-empty hard affinity")
        }
    }

    fn timer(&mut self, ctx: &mut SchedCtx, _id: u32) {
        self.replenish(ctx);
    }

    /// New period/budget take effect at the next replenishment, as in Xen.
    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        let p = self.dom_params_of(params);
        self.dom_params[dom.idx()] = p;
        for v in ctx.vcpus_of(dom).collect::<Vec<_>>() {
            self.set_params(v, p);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("replenishments", self.stat_replenishments),
            ("depletions", self.stat_depletions),
            ("tickles", self.stat_tickles),
            ("wakeups_tickling_nobody", self.stat_tickle_none),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let show = |s: &mut String, label: &str, q: &[VcpuId]| {
            let _ = write!(s, "{label}:");
            for &v in q {
                let u = self.u(v);
                let _ = write!(
                    s,
                    " v{}(l{} d{} b{})",
                    v.0, u.priority_level, u.cur_deadline, u.cur_budget
                );
            }
            let _ = writeln!(s);
        };
        for p in 0..ctx.npcpus() {
            if let Some(v) = ctx.current(PcpuId(p as u32)) {
                let _ = writeln!(s, "pcpu{p}: v{}", v.0);
            }
        }
        show(&mut s, "runq", &self.runq);
        show(&mut s, "depletedq", &self.depletedq);
        show(&mut s, "replq", &self.replq);
        let tickled: Vec<u32> = self.tickled.iter().map(|p| p.0).collect();
        let _ = writeln!(s, "tickled: {tickled:?}");
        s
    }
}
