//! Credit (credit1): Xen's proportional-share SMP scheduler (Xen 3.0.3 – today).
//!
//! Design. Every domain has a weight and an optional cap. Each PCPU has its
//! own run queue, ordered by priority: BOOST (woke from blocking with credit
//! left), UNDER (has credit), OVER (has run past its share), and the idle
//! VCPU last; FIFO within a priority. Every 30 ms (`tslice_ms`) the master
//! PCPU hands out `300 credits × PCPUs` among the *active* VCPUs in proportion
//! to their domain's weight; a running VCPU pays 1 credit per 100 µs it runs.
//! Credit below zero makes a VCPU OVER; more than one slice's worth banked
//! makes it inactive (it stops earning, and its credit is halved). A VCPU runs
//! for a full 30 ms slice unless something preempts it; only a waking VCPU
//! with higher priority can do that (BOOST), and only when no PCPU is idle.
//!
//! Spreading over PCPUs happens by work stealing: a PCPU whose best local
//! candidate is OVER or idle takes a strictly higher-priority VCPU from a
//! busy peer; at a 10 ms tick a running VCPU whose PCPU has queued work is
//! pushed to an idle PCPU.
//!
//! Caps are enforced at accounting granularity: a capped domain gets at most
//! `cap × 3` credits per 30 ms, and a VCPU whose credit sinks below minus its
//! share of that is parked (paused) until an accounting leaves it in credit.
//!
//! Parameters (names as `xl sched-credit`): `weight`, `cap` per domain;
//! `tslice_ms`, `ratelimit_us` pool-wide; plus boot options
//! (`vcpu_migration_delay_us`, `lb_ratelimit_us`, `tickle_one_idle_cpu`,
//! `smt_power_savings`) and `xen_version`, which selects behaviour that
//! changed between releases (see `docs/schedulers/credit.md`).
//!
//! Deviations from Xen: no tasklets, no cpupools (one pool holds every PCPU),
//! one NUMA node per socket, no `sched-gran` other than `cpu`. Quirks Q1 (the
//! 100 ns minimum timer), Q2 (the kick-to-idler branch that never fires) and
//! Q5 (lazy run-queue sort) are reproduced.
//!
//! Hooks: `init` (timers), `init_domain`, `insert_vcpu` (res_pick),
//! `wake` (boost + tickle), `sleep`, `yield_`, `do_schedule`
//! (csched_schedule with ratelimit and load balancing), `pick_cpu`
//! (_csched_cpu_pick), `timer` (tick and accounting), `adjust`, `adjust_global`.

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::cpumask::CpuMask;
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::time::{Time, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

/// Priority of a VCPU that woke with credit left (most urgent).
const PRI_BOOST: i8 = 0;
/// Priority of a VCPU with credit.
const PRI_UNDER: i8 = -1;
/// Priority of a VCPU that has run past its share.
const PRI_OVER: i8 = -2;
/// Priority of the idle VCPU.
const PRI_IDLE: i8 = -64;

/// Credits earned per millisecond of entitlement (1 credit = 100 µs).
const CREDITS_PER_MSEC: i64 = 10;
/// Ticks per time slice (1 if the slice is shorter than 3 ms).
const TICKS_PER_TSLICE: u64 = 3;
/// `CSCHED_MIN_TIMER`: meant as 100 µs, used as 100 ns (quirk Q1).
const MIN_TIMER_NS: u64 = 100;
/// Default weight of a domain.
pub const DEFAULT_WEIGHT: i64 = 256;

/// The current Xen release, the default behaviour.
const CURRENT: Version = Version::new(4, 22);

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "weight",
        unit: "",
        kind: ParamKind::Int { min: 1, max: 65535 },
        default: Default::Int(DEFAULT_WEIGHT),
        scope: ParamScope::Domain,
        doc: "Relative share of CPU under contention (xl sched-credit -w).",
    },
    ParamSpec {
        name: "cap",
        unit: "%",
        kind: ParamKind::Int { min: 0, max: 65535 },
        default: Default::Int(0),
        scope: ParamScope::Domain,
        doc: "Most CPU the domain may use, in % of one PCPU; 0 = no cap (xl sched-credit -c).",
    },
    ParamSpec {
        name: "tslice_ms",
        unit: "ms",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: Default::Int(30),
        scope: ParamScope::Global,
        doc: "Time slice and accounting period (xl sched-credit -s -t; Xen 4.2+).",
    },
    ParamSpec {
        name: "ratelimit_us",
        unit: "us",
        kind: ParamKind::Int { min: 0, max: 500_000 },
        default: Default::Int(1000),
        scope: ParamScope::Global,
        doc: "Least time a VCPU runs before it can be preempted; 0 or 100..500000 (xl sched-credit -s -r; Xen 4.2+).",
    },
    ParamSpec {
        name: "vcpu_migration_delay_us",
        unit: "us",
        kind: ParamKind::Int { min: 0, max: 100_000 },
        default: Default::Int(0),
        scope: ParamScope::Global,
        doc: "A VCPU that ran within this time is cache-hot and is not stolen (xl sched-credit -s -m).",
    },
    ParamSpec {
        name: "lb_ratelimit_us",
        unit: "us",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: Default::Int(1000),
        scope: ParamScope::Global,
        doc: "Least time between two work-stealing attempts of a PCPU; 0 = none (boot option; Xen 4.18+).",
    },
    ParamSpec {
        name: "tickle_one_idle_cpu",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(true),
        scope: ParamScope::Global,
        doc: "Wake one idle PCPU for a waking VCPU instead of all of them (boot option).",
    },
    ParamSpec {
        name: "smt_power_savings",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(false),
        scope: ParamScope::Global,
        doc: "Fill SMT siblings before idle cores (boot option sched_smt_power_savings).",
    },
    ParamSpec {
        name: "xen_version",
        unit: "",
        kind: ParamKind::Version {
            min: Version::new(3, 0),
            max: CURRENT,
        },
        default: Default::Str("4.22"),
        scope: ParamScope::Global,
        doc: "Xen release whose Credit behaviour to reproduce (e.g. \"3.0\" for tick-sampled debiting).",
    },
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "credit",
    summary: "Xen's Credit scheduler: weights and caps, 30 ms slices, BOOST on wake-up, work stealing.",
    origin: "Xen 3.0.3 - current; default scheduler from 3.1 to 4.11",
    can_cap: true,
    params: PARAMS,
    make: |p| Box::new(Credit::new(p)),
    check_domain: super::accept_domain,
    check_global,
};

fn check_global(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let v = p.version("xen_version");
    let rl = p.int("ratelimit_us");
    if rl != 0 && rl < 100 {
        return Err(ScenarioError::new(
            format!("{path}.ratelimit_us"),
            format!("{rl} is not allowed; expected 0 (off) or 100..=500000 (us)"),
        ));
    }
    if rl > p.int("tslice_ms") * 1000 {
        return Err(ScenarioError::new(
            format!("{path}.ratelimit_us"),
            format!(
                "{rl} us is longer than tslice_ms ({} ms); expected ratelimit_us <= tslice_ms × 1000",
                p.int("tslice_ms")
            ),
        ));
    }
    if v < Version::new(4, 2) {
        for name in ["tslice_ms", "ratelimit_us"] {
            if p.is_explicit(name) {
                return Err(ScenarioError::new(
                    format!("{path}.{name}"),
                    format!(
                        "does not exist in Xen {v} (added in 4.2); expected no {name} with xen_version \"{v}\" (the slice is fixed at 30 ms, no rate limit)"
                    ),
                ));
            }
        }
    }
    if v < Version::new(4, 18) && p.is_explicit("lb_ratelimit_us") {
        return Err(ScenarioError::new(
            format!("{path}.lb_ratelimit_us"),
            format!("does not exist in Xen {v} (added in 4.18); expected no lb_ratelimit_us with xen_version \"{v}\""),
        ));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct Unit {
    credit: i32,
    pri: i8,
    parked: bool,
    yield_: bool,
    /// Set by `pick_cpu` with commit; a wake that finds it set does not boost.
    migrating: bool,
    /// An unpark is about to wake this VCPU (Xen 4.13+ keeps PARKED set
    /// during that wake so it is not boosted).
    unpark_wake: bool,
    /// `start_time` as Xen keeps it: absolute while running, relative while not.
    start_time: i64,
    residual: u64,
    last_sched_time: Time,
    /// When it was last switched in (core's `state_entry_time`).
    state_entry_time: Time,
    active: bool,
    on_runq: bool,
}

#[derive(Clone, Debug)]
struct Dom {
    weight: u32,
    cap: u32,
    /// Active VCPUs, most recently activated first (Xen's list_add at head).
    active_units: Vec<VcpuId>,
    in_active_list: bool,
}

#[derive(Clone, Debug)]
struct Pcpu {
    /// Queued VCPUs (the idle VCPU is implicit, always last).
    runq: VecDeque<VcpuId>,
    /// Non-idle VCPUs assigned here: running plus queued.
    nr_runnable: u32,
    runq_sort_last: u32,
    last_load_balance: Option<Time>,
    idle_bias: PcpuId,
    last_tickle: PcpuId,
    ticker_active: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Soft,
    Hard,
}

/// The Credit scheduler's state.
pub struct Credit {
    version: Version,
    tslice_ns: u64,
    tick_period_ns: u64,
    credits_per_tslice: i32,
    ratelimit_ns: u64,
    lb_ratelimit_ns: u64,
    migration_delay_ns: u64,
    tickle_one_idle: bool,
    smt_power_savings: bool,

    units: Vec<Unit>,
    doms: Vec<Dom>,
    pcpus: Vec<Pcpu>,
    /// Domains with active VCPUs, in Xen's list order (head first).
    active_doms: Vec<DomId>,
    /// Idle PCPUs that have not been tickled.
    idlers: CpuMask,
    /// Σ weight over active VCPUs.
    weight: u64,
    /// Credit handed out per accounting period (300 × PCPUs by default).
    credit: i64,
    credit_balance: i64,
    runq_sort: u32,
    balance_bias: Vec<PcpuId>,
    master: PcpuId,

    stat_ticks: u64,
    stat_accounting: u64,
    stat_steals: u64,
    stat_pushes: u64,
    stat_parks: u64,
    stat_boosts: u64,
    stat_ratelimited: u64,
    stat_tickles: u64,
}

impl Credit {
    /// A Credit scheduler with validated global parameters.
    pub fn new(p: &Params) -> Credit {
        let version = p.version("xen_version");
        let mut c = Credit {
            version,
            tslice_ns: 0,
            tick_period_ns: 0,
            credits_per_tslice: 0,
            ratelimit_ns: 0,
            lb_ratelimit_ns: 0,
            migration_delay_ns: p.int("vcpu_migration_delay_us") as u64 * NS_PER_US,
            tickle_one_idle: p.bool("tickle_one_idle_cpu"),
            smt_power_savings: p.bool("smt_power_savings"),
            units: Vec::new(),
            doms: Vec::new(),
            pcpus: Vec::new(),
            active_doms: Vec::new(),
            idlers: CpuMask::empty(),
            weight: 0,
            credit: 0,
            credit_balance: 0,
            runq_sort: 0,
            balance_bias: Vec::new(),
            master: PcpuId(0),
            stat_ticks: 0,
            stat_accounting: 0,
            stat_steals: 0,
            stat_pushes: 0,
            stat_parks: 0,
            stat_boosts: 0,
            stat_ratelimited: 0,
            stat_tickles: 0,
        };
        c.set_globals(p);
        c
    }

    fn set_globals(&mut self, p: &Params) {
        let v = self.version;
        let tslice_ms = if v < Version::new(4, 2) { 30 } else { p.int("tslice_ms") as u64 };
        let ticks = if tslice_ms < TICKS_PER_TSLICE { 1 } else { TICKS_PER_TSLICE };
        self.tslice_ns = tslice_ms * NS_PER_MS;
        // Xen keeps the tick period in whole microseconds.
        self.tick_period_ns = (tslice_ms * 1000 / ticks) * NS_PER_US;
        self.credits_per_tslice = (CREDITS_PER_MSEC as u64 * tslice_ms) as i32;
        self.ratelimit_ns = if v < Version::new(4, 2) {
            0
        } else {
            (p.int("ratelimit_us") as u64 * NS_PER_US).min(self.tslice_ns)
        };
        self.lb_ratelimit_ns = if v < Version::new(4, 18) {
            0
        } else {
            p.int("lb_ratelimit_us") as u64 * NS_PER_US
        };
        self.credit = i64::from(self.credits_per_tslice) * self.pcpus.len() as i64;
    }

    // ----- bookkeeping helpers ---------------------------------------------------

    #[inline]
    fn u(&self, v: VcpuId) -> &Unit {
        &self.units[v.idx()]
    }

    #[inline]
    fn um(&mut self, v: VcpuId) -> &mut Unit {
        &mut self.units[v.idx()]
    }

    /// Priority of what `p` runs (IDLE for the idle VCPU).
    fn cur_pri(&self, ctx: &SchedCtx, p: PcpuId) -> i8 {
        ctx.current(p).map_or(PRI_IDLE, |v| self.u(v).pri)
    }

    fn pinned(ctx: &SchedCtx, v: VcpuId) -> bool {
        ctx.hard_affinity(v).count() == 1
    }

    /// Affinity for a balancing step: soft ∩ hard (or hard if empty), or hard.
    fn affinity(ctx: &SchedCtx, v: VcpuId, step: Step) -> CpuMask {
        let hard = *ctx.hard_affinity(v);
        match step {
            Step::Hard => hard,
            Step::Soft => {
                let s = ctx.soft_affinity(v).and(&hard);
                if s.is_empty() {
                    hard
                } else {
                    s
                }
            }
        }
    }

    /// Xen's `__runq_insert`: before the first strictly-lower priority; a
    /// yielder goes one further back, behind one lower-priority VCPU.
    fn runq_insert(&mut self, p: PcpuId, v: VcpuId) {
        let pri = self.u(v).pri;
        let yielding = self.u(v).yield_;
        let q = &self.pcpus[p.idx()].runq;
        let mut i = q.iter().position(|&x| self.units[x.idx()].pri < pri).unwrap_or(q.len());
        if yielding && i < q.len() {
            i += 1;
        }
        self.pcpus[p.idx()].runq.insert(i, v);
        self.um(v).on_runq = true;
    }

    fn runq_remove(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.pcpus[p.idx()].runq;
        if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        self.um(v).on_runq = false;
        // Picking a VCPU off the queue clears its YIELD flag.
        self.um(v).yield_ = false;
    }

    /// Lazy sort: UNDER and BOOST ahead of OVER, order otherwise kept.
    fn runq_sort(&mut self, p: PcpuId) {
        let q = std::mem::take(&mut self.pcpus[p.idx()].runq);
        let (mut hi, lo): (VecDeque<VcpuId>, VecDeque<VcpuId>) =
            q.into_iter().partition(|&v| self.units[v.idx()].pri >= PRI_UNDER);
        hi.extend(lo);
        self.pcpus[p.idx()].runq = hi;
    }

    /// Charge the running VCPU for the time since `start_time`.
    fn burn_credits(&mut self, v: VcpuId, now: Time) {
        if self.version < Version::new(4, 0) {
            return; // debited by tick sampling instead
        }
        let u = &mut self.units[v.idx()];
        let delta = now.0 as i64 - u.start_time;
        if delta <= 0 {
            return;
        }
        let val = delta as u64 * CREDITS_PER_MSEC as u64 + u.residual;
        let credits = val / NS_PER_MS;
        u.residual = val % NS_PER_MS;
        u.credit -= credits as i32;
        u.start_time += (credits * NS_PER_MS / CREDITS_PER_MSEC as u64) as i64;
    }

    fn acct_start(&mut self, v: VcpuId, d: DomId) {
        if self.u(v).active {
            return;
        }
        self.um(v).active = true;
        let dom = &mut self.doms[d.idx()];
        dom.active_units.insert(0, v);
        self.weight += u64::from(dom.weight);
        if !dom.in_active_list {
            dom.in_active_list = true;
            self.active_doms.insert(0, d);
        }
    }

    fn acct_stop(&mut self, v: VcpuId, d: DomId) {
        if !self.u(v).active {
            return;
        }
        self.um(v).active = false;
        let dom = &mut self.doms[d.idx()];
        dom.active_units.retain(|&x| x != v);
        self.weight -= u64::from(dom.weight);
        if dom.active_units.is_empty() {
            dom.in_active_list = false;
            self.active_doms.retain(|&x| x != d);
        }
    }

    fn start_ticker(&mut self, ctx: &mut SchedCtx, p: PcpuId) {
        let now = ctx.now().0;
        let period = self.tick_period_ns;
        let at = now + period - now % period;
        ctx.arm_timer(p.0, Time(at), p);
        self.pcpus[p.idx()].ticker_active = true;
    }

    fn stop_ticker(&mut self, ctx: &mut SchedCtx, p: PcpuId) {
        ctx.cancel_timer(p.0);
        self.pcpus[p.idx()].ticker_active = false;
    }

    fn master_timer_id(&self) -> u32 {
        self.pcpus.len() as u32
    }

    // ----- placement ---------------------------------------------------------------

    /// `_csched_cpu_pick`: stay if the current PCPU is (or would be) idle,
    /// otherwise prefer an idle PCPU, spreading over cores and sockets.
    fn cpu_pick(&mut self, ctx: &SchedCtx, v: VcpuId, commit: bool) -> PcpuId {
        let cur = ctx.processor(v);
        let topo = ctx.topology();
        let mut cpu = cur;
        let mut bias_owner: Option<PcpuId> = None;
        for step in [Step::Soft, Step::Hard] {
            if step == Step::Soft && !ctx.has_soft_affinity(v) {
                continue;
            }
            let mut cpus = Self::affinity(ctx, v, step);
            if cpus.is_empty() {
                continue;
            }
            cpu = if cpus.test(cur) { cur } else { cpus.cycle(cur).unwrap() };
            let mut idlers = self.idlers;
            if cur == cpu && self.pcpus[cpu.idx()].runq.is_empty() {
                idlers.set(cpu);
            }
            cpus = cpus.and(&idlers);
            if !cpus.test(cpu) && !cpus.is_empty() {
                cpu = cpus.cycle(cpu).unwrap();
            }
            cpus.clear(cpu);
            while let Some(nxt) = cpus.cycle(cpu) {
                let same_socket = topo.socket_mask(cpu).test(nxt);
                let (factor, cpu_idlers, nxt_idlers) = if same_socket {
                    (1, idlers.and(topo.sibling_mask(cpu)), idlers.and(topo.sibling_mask(nxt)))
                } else {
                    (2, idlers.and(topo.socket_mask(cpu)), idlers.and(topo.socket_mask(nxt)))
                };
                let (wc, wn) = (cpu_idlers.count(), nxt_idlers.count());
                let better = if self.smt_power_savings { wc > wn } else { wc * factor < wn };
                if better {
                    let cand = nxt_idlers.and(&cpus);
                    bias_owner = Some(nxt);
                    cpu = cand.cycle(self.pcpus[nxt.idx()].idle_bias).unwrap_or(nxt);
                    cpus = cpus.andnot(topo.sibling_mask(cpu));
                } else {
                    cpus = cpus.andnot(&nxt_idlers);
                }
            }
            if idlers.test(cpu) {
                break;
            }
        }
        if commit {
            if let Some(o) = bias_owner {
                self.pcpus[o.idx()].idle_bias = cpu;
            }
        }
        cpu
    }

    // ----- tickling ----------------------------------------------------------------

    /// `__runq_tickle`: who should run a VCPU that just became runnable.
    fn runq_tickle(&mut self, ctx: &mut SchedCtx, new: VcpuId) {
        let cpu = ctx.processor(new);
        let cur_pri = self.cur_pri(ctx, cpu);
        let new_pri = self.u(new).pri;
        let idle = self.idlers;
        let mut mask = CpuMask::empty();
        if Self::pinned(ctx, new) && idle.test(cpu) {
            mask.set(cpu);
        } else if cur_pri == PRI_IDLE || (idle.is_empty() && new_pri > cur_pri) {
            mask.set(cpu);
        } else if !idle.is_empty() {
            for step in [Step::Soft, Step::Hard] {
                if step == Step::Soft && !ctx.has_soft_affinity(new) {
                    continue;
                }
                let cand = Self::affinity(ctx, new, step).and(&idle);
                if cand.is_empty() && step == Step::Soft {
                    continue;
                }
                if cand.is_empty() {
                    // Xen means to push cur to an idler here, but its test
                    // uses the waker's affinity, so it only preempts (Q2).
                    if new_pri > cur_pri {
                        mask.set(cpu);
                    }
                } else if self.tickle_one_idle {
                    let me = ctx.local().unwrap_or(cpu);
                    let last = &mut self.pcpus[me.idx()].last_tickle;
                    *last = cand.cycle(*last).unwrap();
                    mask.set(*last);
                } else {
                    mask = cand;
                }
                if !mask.is_empty() {
                    break;
                }
            }
        }
        for c in mask.iter() {
            self.idlers.clear(c);
            self.stat_tickles += 1;
            ctx.tickle(c);
        }
    }

    // ----- work stealing -------------------------------------------------------------

    fn runq_steal(&mut self, ctx: &SchedCtx, peer: PcpuId, cpu: PcpuId, pri: i8, step: Step) -> Option<VcpuId> {
        if ctx.current(peer).is_none() {
            return None; // an idle peer will run its own queue
        }
        let now = ctx.now();
        let old_yield_stealable = self.version < Version::new(4, 18);
        let mut found = None;
        for &sv in &self.pcpus[peer.idx()].runq {
            let u = &self.units[sv.idx()];
            if u.pri <= pri {
                break;
            }
            if u.yield_ && !old_yield_stealable {
                continue;
            }
            if step == Step::Soft && !ctx.has_soft_affinity(sv) {
                continue;
            }
            let hot = self.migration_delay_ns > 0 && now.since(u.last_sched_time) < self.migration_delay_ns;
            if Self::affinity(ctx, sv, step).test(cpu) && !hot {
                found = Some(sv);
                break;
            }
        }
        let sv = found?;
        self.runq_remove(peer, sv);
        self.pcpus[peer.idx()].nr_runnable -= 1;
        self.pcpus[cpu.idx()].nr_runnable += 1;
        self.stat_steals += 1;
        Some(sv)
    }

    /// `csched_load_balance`: try to steal a better VCPU than `snext`.
    fn load_balance(&mut self, ctx: &mut SchedCtx, cpu: PcpuId, snext: Option<VcpuId>) -> (Option<VcpuId>, bool) {
        let snext_pri = snext.map_or(PRI_IDLE, |v| self.u(v).pri);
        let topo = ctx.topology().clone();
        let nodes = topo.sockets;
        let all = topo.all();
        for step in [Step::Soft, Step::Hard] {
            let node = topo.socket_of(cpu);
            let mut peer_node = node;
            loop {
                let node_cpus = all.and(topo.socket_mask(PcpuId(peer_node * topo.cores_per_socket * topo.threads_per_core)));
                let mut workers = node_cpus.andnot(&self.idlers);
                workers.clear(cpu);
                if let Some(first) = workers.cycle(self.balance_bias[peer_node as usize]) {
                    let mut peer = first;
                    loop {
                        if self.pcpus[peer.idx()].nr_runnable > 1 {
                            if let Some(sv) = self.runq_steal(ctx, peer, cpu, snext_pri, step) {
                                self.balance_bias[peer_node as usize] = peer;
                                ctx.set_processor(sv, cpu);
                                return (Some(sv), true);
                            }
                        }
                        peer = workers.cycle(peer).unwrap();
                        if peer == first {
                            break;
                        }
                    }
                }
                peer_node = (peer_node + 1) % nodes;
                if peer_node == node {
                    break;
                }
            }
        }
        if let Some(v) = snext {
            self.runq_remove(cpu, v);
        }
        (snext, false)
    }

    // ----- periodic work -------------------------------------------------------------

    /// The 10 ms tick of a non-idle PCPU.
    fn tick(&mut self, ctx: &mut SchedCtx, p: PcpuId) {
        self.stat_ticks += 1;
        if let Some(v) = ctx.current(p) {
            self.unit_acct(ctx, p, v);
        }
        if self.runq_sort != self.pcpus[p.idx()].runq_sort_last {
            self.pcpus[p.idx()].runq_sort_last = self.runq_sort;
            self.runq_sort(p);
        }
        let at = ctx.now().after(self.tick_period_ns);
        ctx.arm_timer(p.0, at, p);
    }

    /// `csched_unit_acct`: the running VCPU is caught at a tick.
    fn unit_acct(&mut self, ctx: &mut SchedCtx, p: PcpuId, v: VcpuId) {
        if self.u(v).pri == PRI_BOOST {
            self.um(v).pri = PRI_UNDER;
        }
        if self.version < Version::new(4, 0) {
            // Tick sampling: whoever runs at the tick pays for the whole tick.
            let per_tick = CREDITS_PER_MSEC * (self.tick_period_ns / NS_PER_MS) as i64;
            self.um(v).credit -= per_tick as i32;
        } else {
            self.burn_credits(v, ctx.now());
        }
        if !self.u(v).active {
            self.acct_start(v, ctx.domain_of(v));
        } else {
            let new = self.cpu_pick(ctx, v, false);
            if new != p {
                self.stat_pushes += 1;
                ctx.migrate(v);
            }
        }
    }

    /// `csched_acct`: hand out credit every time slice.
    fn accounting(&mut self, ctx: &mut SchedCtx) {
        self.stat_accounting += 1;
        let w_total = self.weight as i64;
        let mut c_total = self.credit;
        if self.credit_balance < 0 {
            c_total += -self.credit_balance;
        }
        if w_total == 0 {
            self.credit_balance = 0;
            return self.rearm_master(ctx);
        }
        let ceil_div = |a: i64, b: i64| (a + b - 1) / b;
        let cpt = i64::from(self.credits_per_tslice);
        let mut weight_left = w_total;
        let mut credit_balance: i64 = 0;
        let mut credit_xtra = false;
        let snapshot = self.active_doms.clone();
        for d in snapshot {
            let (n, dw, cap) = {
                let dom = &self.doms[d.idx()];
                (dom.active_units.len() as i64, i64::from(dom.weight), i64::from(dom.cap))
            };
            if n == 0 {
                continue;
            }
            weight_left -= dw * n;
            let mut peak = n * cpt;
            if self.credit_balance < 0 {
                peak += ceil_div(-self.credit_balance * dw * n, w_total);
            }
            let mut cap_per_unit = 0;
            if cap != 0 {
                let capc = ceil_div(cap * cpt, 100);
                peak = peak.min(capc);
                cap_per_unit = ceil_div(capc, n);
            }
            let mut fair = ceil_div(c_total * dw * n, w_total);
            if fair < peak {
                credit_xtra = true;
            } else {
                if weight_left != 0 {
                    c_total += ceil_div((fair - peak) * w_total, weight_left);
                }
                if credit_xtra {
                    self.active_doms.retain(|&x| x != d);
                    self.active_doms.insert(0, d);
                }
                fair = peak;
            }
            let fair_per_unit = ceil_div(fair, n);
            let units = self.doms[d.idx()].active_units.clone();
            for v in units {
                self.um(v).credit += fair_per_unit as i32;
                let mut c = i64::from(self.u(v).credit);
                if c < 0 {
                    self.um(v).pri = PRI_OVER;
                    if cap != 0 && c < -cap_per_unit && !self.u(v).parked {
                        self.um(v).parked = true;
                        self.stat_parks += 1;
                        ctx.pause(v);
                    }
                    if c < -cpt {
                        c = -cpt;
                        self.um(v).credit = c as i32;
                    }
                } else {
                    self.um(v).pri = PRI_UNDER;
                    if self.u(v).parked {
                        // Xen 4.13+ unpauses before clearing PARKED, so the
                        // resulting wake is not boosted; earlier releases boosted it.
                        if self.version >= Version::new(4, 13) && ctx.unpause_would_wake(v) {
                            self.um(v).unpark_wake = true;
                        }
                        self.um(v).parked = false;
                        ctx.unpause(v);
                    }
                    if c > cpt {
                        self.acct_stop(v, d);
                        c /= 2;
                        self.um(v).credit = c as i32;
                    }
                }
                credit_balance += c;
            }
        }
        self.credit_balance = credit_balance;
        self.runq_sort = self.runq_sort.wrapping_add(1);
        self.rearm_master(ctx);
    }

    fn rearm_master(&mut self, ctx: &mut SchedCtx) {
        let at = ctx.now().after(self.tslice_ns);
        ctx.arm_timer(self.master_timer_id(), at, self.master);
    }
}

impl Scheduler for Credit {
    fn name(&self) -> &'static str {
        "credit"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        let n = ctx.npcpus();
        self.pcpus = (0..n)
            .map(|i| Pcpu {
                runq: VecDeque::new(),
                nr_runnable: 0,
                runq_sort_last: 0,
                last_load_balance: None,
                idle_bias: PcpuId(i as u32),
                last_tickle: PcpuId(i as u32),
                ticker_active: false,
            })
            .collect();
        self.idlers = ctx.topology().all();
        self.balance_bias = (0..ctx.topology().sockets)
            .map(|s| PcpuId(s * ctx.topology().cores_per_socket * ctx.topology().threads_per_core))
            .collect();
        self.credit = i64::from(self.credits_per_tslice) * n as i64;
        self.units = (0..ctx.nvcpus())
            .map(|_| Unit {
                credit: 0,
                pri: PRI_UNDER,
                parked: false,
                yield_: false,
                migrating: false,
                unpark_wake: false,
                start_time: 0,
                residual: 0,
                last_sched_time: Time::ZERO,
                state_entry_time: Time::ZERO,
                active: false,
                on_runq: false,
            })
            .collect();
        self.rearm_master(ctx);
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.doms.len());
        self.doms.push(Dom {
            weight: params.int("weight") as u32,
            cap: params.int("cap") as u32,
            active_units: Vec::new(),
            in_active_list: false,
        });
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = self.pick_cpu(ctx, v);
        ctx.set_processor(v, p);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if self.u(v).parked {
            self.um(v).parked = false;
            ctx.unpause(v);
        }
        let d = ctx.domain_of(v);
        self.acct_stop(v, d);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() || self.u(v).on_runq {
            return;
        }
        let migrating = std::mem::take(&mut self.um(v).migrating);
        let unpark = std::mem::take(&mut self.um(v).unpark_wake);
        let u = self.um(v);
        if !migrating && !unpark && u.pri == PRI_UNDER && !u.parked {
            u.pri = PRI_BOOST;
            self.stat_boosts += 1;
        }
        let p = ctx.processor(v);
        self.runq_insert(p, v);
        self.pcpus[p.idx()].nr_runnable += 1;
        self.runq_tickle(ctx, v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        } else if self.u(v).on_runq {
            self.runq_remove(p, v);
            self.pcpus[p.idx()].nr_runnable -= 1;
        }
    }

    fn yield_(&mut self, _ctx: &mut SchedCtx, v: VcpuId) {
        self.um(v).yield_ = true;
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let now = ctx.now();
        let scurr = ctx.current(cpu);
        if let Some(c) = scurr {
            let runtime = now.since(self.u(c).state_entry_time);
            self.burn_credits(c, now);
            self.um(c).start_time -= now.0 as i64;
            self.um(c).last_sched_time = now;
            // Rate limit: let a VCPU that has just started keep running.
            if !self.u(c).yield_ && self.ratelimit_ns > 0 && ctx.is_runnable(c) && runtime < self.ratelimit_ns {
                self.um(c).start_time += now.0 as i64;
                self.stat_ratelimited += 1;
                let slice = if self.version < Version::new(4, 8) {
                    self.ratelimit_ns
                } else if runtime < MIN_TIMER_NS {
                    MIN_TIMER_NS
                } else {
                    self.ratelimit_ns - runtime
                };
                return Decision {
                    next: Some(c),
                    slice_ns: Some(slice),
                    migrated: false,
                };
            }
            if ctx.is_runnable(c) {
                self.runq_insert(cpu, c);
            } else {
                self.pcpus[cpu.idx()].nr_runnable -= 1;
            }
        }
        let head = self.pcpus[cpu.idx()].runq.front().copied();
        let head_pri = head.map_or(PRI_IDLE, |v| self.u(v).pri);
        let lb_ok = match self.pcpus[cpu.idx()].last_load_balance {
            None => true,
            Some(t) => now.since(t) > self.lb_ratelimit_ns || self.lb_ratelimit_ns == 0,
        };
        let (snext, migrated) = if head_pri <= PRI_OVER && lb_ok {
            self.pcpus[cpu.idx()].last_load_balance = Some(now);
            self.load_balance(ctx, cpu, head)
        } else {
            if let Some(v) = head {
                self.runq_remove(cpu, v);
            }
            (head, false)
        };
        match snext {
            None => self.idlers.set(cpu),
            Some(_) => self.idlers.clear(cpu),
        }
        if let Some(n) = snext {
            self.um(n).start_time += now.0 as i64;
            self.um(n).yield_ = false;
            if Some(n) != scurr {
                self.um(n).state_entry_time = now;
            }
        }
        if let Some(c) = scurr {
            self.um(c).yield_ = false;
        }
        let ticking = self.pcpus[cpu.idx()].ticker_active;
        match (snext.is_some(), ticking) {
            (false, true) => self.stop_ticker(ctx, cpu),
            (true, false) => self.start_ticker(ctx, cpu),
            _ => {}
        }
        Decision {
            next: snext,
            slice_ns: snext.map(|_| self.tslice_ns),
            migrated,
        }
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        let p = self.cpu_pick(ctx, v, true);
        self.um(v).migrating = true;
        p
    }

    fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
        if id == self.master_timer_id() {
            self.accounting(ctx);
        } else {
            self.tick(ctx, PcpuId(id));
        }
    }

    fn adjust(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        let new_weight = params.int("weight") as u32;
        let d = &mut self.doms[dom.idx()];
        if d.in_active_list {
            let n = d.active_units.len() as u64;
            self.weight -= u64::from(d.weight) * n;
            self.weight += u64::from(new_weight) * n;
        }
        d.weight = new_weight;
        d.cap = params.int("cap") as u32;
    }

    fn adjust_global(&mut self, _ctx: &mut SchedCtx, params: &Params) {
        self.set_globals(params);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("ticks", self.stat_ticks),
            ("accounting_periods", self.stat_accounting),
            ("steals", self.stat_steals),
            ("tick_pushes", self.stat_pushes),
            ("parks", self.stat_parks),
            ("boosts", self.stat_boosts),
            ("ratelimit_deferrals", self.stat_ratelimited),
            ("tickles", self.stat_tickles),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let pri = |p: i8| match p {
            PRI_BOOST => "BOOST",
            PRI_UNDER => "UNDER",
            PRI_OVER => "OVER",
            _ => "IDLE",
        };
        let _ = writeln!(
            s,
            "credit: weight={} credit={} balance={} idlers={:?}",
            self.weight, self.credit, self.credit_balance, self.idlers
        );
        for (i, p) in self.pcpus.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = write!(s, "pcpu{i}: nr_runnable={} cur={:?} runq=[", p.nr_runnable, cur.map(|v| v.0));
            for v in &p.runq {
                let u = &self.units[v.idx()];
                let _ = write!(s, " v{}({} {})", v.0, pri(u.pri), u.credit);
            }
            let _ = writeln!(s, " ]");
        }
        s
    }
}
