//! Credit2: Xen's default scheduler since 4.12 (experimental from 4.1, supported from 4.8).
//!
//! Design. PCPUs are grouped into run queues by topology (`runqueue` = cpu,
//! core, socket, node or all; one per socket by default, at most 16 PCPUs
//! each since 4.14). All PCPUs of a run queue pick from one queue ordered by
//! credit, highest first. Every VCPU starts with 10 ms of credit and burns it
//! while it runs, faster the lower its weight: the heaviest VCPU assigned to
//! the run queue (blocked ones included) burns 1 credit per ns, one of half
//! that weight 2 per ns. When neither the chosen VCPU nor the best queued one
//! has credit left, the run queue's epoch ends: every VCPU assigned to it gets
//! +10 ms, clipped at 10.5 ms. Epochs are per run queue and unsynchronised
//! (quirk Q6). So weights shape the burn rate and the reset the share.
//!
//! A VCPU runs until its credit falls to that of the best waiter (or to 0),
//! at least 500 µs and the rate limit, at most 10 ms. Since 4.21 the VCPU it
//! preempted counts as a waiter, so two equal hogs alternate every ~1 ms
//! instead of every ~10 ms. A waking VCPU is queued in the run queue it last
//! used and tickles one PCPU of that run queue: a fully idle core first, then
//! any idle untickled PCPU, else the busy PCPU with the best `tickle_score`
//! (credit lead, minus 500 µs if it would migrate, bonuses for soft affinity)
//! provided the running VCPU has run for more than the rate limit minus 50 µs.
//! If none qualifies nobody is tickled and nothing retries. A preempted VCPU
//! is re-queued after its switch-out (`context_saved`) and tickles again.
//!
//! Load between run queues is balanced only right after a credit reset, on
//! the PCPU that triggered it: the run queue with the largest difference in
//! runnable-time load average (a fixed-point EWMA over ~1 s) is the peer, and
//! one push, pull or swap that strictly reduces the difference is made. The
//! integer arithmetic (1024-ns time units, 2^18 = load 1.0, shifts) is Xen's,
//! because outcomes such as the 3-hogs-on-2-per-PCPU-queues split depend on it.
//!
//! Caps (since 4.10): a capped domain gets `cap% × 10 ms` of budget every
//! 10 ms from its own timer; each VCPU takes a quota of it to run, returns
//! what it did not use when it stops, and is parked (paused) when the pool is
//! empty, until the next replenishment.
//!
//! Parameters (names as `xl sched-credit2`): `weight`, `cap` per domain;
//! `ratelimit_us` pool-wide; boot options `runqueue`, `max_cpus_runqueue`,
//! `migrate_resist_us`, `cap_period_ms`, `load_window_shift`,
//! `load_precision_shift`, `balance_under`, `balance_over`,
//! `smt_power_savings`; and `xen_version` (4.4 – 4.22), which selects the
//! behaviour of a release: the slice without the preempted waiter (≤ 4.20),
//! the old reset rule without a credit floor (≤ 4.13), no 16-PCPU run-queue
//! limit (≤ 4.13), no caps (≤ 4.9), wakers tickle a PCPU whose VCPU is
//! still inside its rate limit (≤ 4.9), no soft affinity (≤ 4.8); before
//! 4.8, 4.4.1's code: no rate limit, 2-ms slices at most, the old
//! `runq_tickle` and `runq_candidate` (no tickled skip, no yield), the reset
//! whenever the chosen VCPU has no credit. The load arithmetic and
//! `res_pick` stay 4.8's for those releases (a documented deviation).
//!
//! Deviations from Xen: no tasklets, no cpupools, one NUMA node per socket,
//! `sched-gran=cpu` only; lock try-failures never happen, so the fallbacks
//! they trigger in `res_pick` and `balance_load` are not modelled. The
//! replenishment timers live on PCPU 0. Quirks Q3 (capacity check against
//! the last run queue iterated) and Q6 (per-run-queue epochs) are reproduced.
//! See `docs/schedulers/credit2.md`.
//!
//! Variant built on this code (a child module, so it reuses it rather than
//! copy it): [`mcredit2`] (Kang & Lee 2018), which watches the credit resets
//! ([`Credit2::resets`]) and boosts weights through [`Credit2::set_weight`].
//!
//! Hooks: `init` (run-queue layout), `init_domain`, `insert_vcpu`
//! (res_pick + runq_assign), `remove_vcpu`, `wake`, `sleep`, `yield_`,
//! `do_schedule` (csched2_schedule with reset and balance_load),
//! `context_saved` (re-queue + tickle, budget return), `pick_cpu`
//! (csched2_res_pick), `migrate` (csched2_unit_migrate), `timer` (budget
//! replenishment), `adjust`, `adjust_global`.

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use super::{Allocation, AllocParam, AllocValue, Shares};
use crate::cpumask::CpuMask;
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::time::{Time, NS_PER_MS, NS_PER_US};

pub mod mcredit2;

/// Default weight of a domain.
const DEFAULT_WEIGHT: i64 = 256;
/// Credit a VCPU starts with and the reset increment (ns of credit).
const CREDIT_INIT: i32 = 10_000_000;
/// Credit never sinks below this (since 4.14).
const CREDIT_MIN: i32 = -CREDIT_INIT;
/// The idle VCPU's credit: below any real VCPU's.
const IDLE_CREDIT: i32 = CREDIT_MIN - 1;
/// Shortest slice (ns).
const MIN_TIMER_NS: i64 = 500_000;
/// Longest slice (ns).
const MAX_TIMER_NS: i64 = CREDIT_INIT as i64;
/// `CSCHED2_MAX_TIMER` before 4.8: 2 ms (4.8 made it `CREDIT_INIT`).
const MAX_TIMER_OLD_NS: i64 = 2_000_000;
/// Credit above INIT kept over a reset (ns of credit).
const CARRYOVER_MAX: i32 = MIN_TIMER_NS as i32;
/// Credit given to a VCPU pulled onto a different PCPU (ns of credit).
const MIGRATE_COMPENSATION: i32 = 50_000;
/// Slack on the rate limit when judging whether a running VCPU may be preempted (ns).
const RATELIMIT_TICKLE_TOLERANCE_NS: i64 = 50_000;
/// Load-average time unit: ns are shifted right by this much.
const LOADAVG_GRANULARITY_SHIFT: u32 = 10;
/// Budget of an uncapped VCPU (Xen's STIME_MAX).
const NO_CAP: i64 = i64::MAX;

const CURRENT: Version = Version::new(4, 22);
const RUNQUEUE_CHOICES: &[&str] = &["cpu", "core", "socket", "node", "all"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "weight",
        unit: "",
        kind: ParamKind::Int { min: 1, max: 65535 },
        default: Default::Int(DEFAULT_WEIGHT),
        scope: ParamScope::Domain,
        doc: "Relative share of CPU under contention (xl sched-credit2 -w).",
    },
    ParamSpec {
        name: "cap",
        unit: "%",
        kind: ParamKind::Int { min: 0, max: 65535 },
        default: Default::Int(0),
        scope: ParamScope::Domain,
        doc: "Most CPU the domain may use, in % of one PCPU; 0 = no cap (xl sched-credit2 -c; Xen 4.10+).",
    },
    ParamSpec {
        name: "ratelimit_us",
        unit: "us",
        kind: ParamKind::Int { min: 0, max: 500_000 },
        default: Default::Int(1000),
        scope: ParamScope::Global,
        doc: "Least time a VCPU runs before it can be preempted; 0 or 100..500000 (xl sched-credit2 -s -r).",
    },
    ParamSpec {
        name: "runqueue",
        unit: "",
        kind: ParamKind::Choice(RUNQUEUE_CHOICES),
        default: Default::Str("socket"),
        scope: ParamScope::Global,
        doc: "Which PCPUs share a run queue (boot option credit2_runqueue).",
    },
    ParamSpec {
        name: "max_cpus_runqueue",
        unit: "",
        kind: ParamKind::Int { min: 1, max: 512 },
        default: Default::Int(16),
        scope: ParamScope::Global,
        doc: "Most PCPUs in one run queue (boot option sched_credit2_max_cpus_runqueue; Xen 4.14+).",
    },
    ParamSpec {
        name: "migrate_resist_us",
        unit: "us",
        kind: ParamKind::Int { min: 0, max: 100_000 },
        default: Default::Int(500),
        scope: ParamScope::Global,
        doc: "Credit lead a VCPU needs to be pulled to another PCPU (boot option sched_credit2_migrate_resist).",
    },
    ParamSpec {
        name: "cap_period_ms",
        unit: "ms",
        kind: ParamKind::Int { min: 1, max: 10_000 },
        default: Default::Int(10),
        scope: ParamScope::Global,
        doc: "Budget replenishment period of capped domains (boot option credit2_cap_period_ms).",
    },
    ParamSpec {
        name: "load_window_shift",
        unit: "",
        kind: ParamKind::Int { min: 11, max: 40 },
        default: Default::Int(30),
        scope: ParamScope::Global,
        doc: "Load-average window is 2^shift ns (boot option credit2_load_window_shift).",
    },
    ParamSpec {
        name: "load_precision_shift",
        unit: "",
        kind: ParamKind::Int { min: 4, max: 24 },
        default: Default::Int(18),
        scope: ParamScope::Global,
        doc: "Fixed-point bits of load averages; load 1.0 = 2^shift (boot option credit2_load_precision_shift).",
    },
    ParamSpec {
        name: "balance_under",
        unit: "",
        kind: ParamKind::Int { min: -16, max: 16 },
        default: Default::Int(0),
        scope: ParamScope::Global,
        doc: "Below capacity, balance only if the load difference is >= 2^balance_under (boot option credit2_balance_under).",
    },
    ParamSpec {
        name: "balance_over",
        unit: "",
        kind: ParamKind::Int { min: -16, max: 16 },
        default: Default::Int(-3),
        scope: ParamScope::Global,
        doc: "At capacity, balance only if the load difference is >= 2^balance_over (boot option credit2_balance_over).",
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
            min: Version::new(4, 4),
            max: CURRENT,
        },
        default: Default::Str("4.22"),
        scope: ParamScope::Global,
        doc: "Xen release whose Credit2 behaviour to reproduce (\"4.20\" for ~10 ms alternation, \"4.13\" for the old reset rule, \"4.4\" for the releases before 4.8: no rate limit, 2 ms slices, 4.4's tickle).",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("runqueues", "run queues"),
    ("credit_resets", "credit resets (epochs)"),
    ("balance_moves", "VCPUs moved between run queues by load balancing"),
    ("runq_migrations", "VCPUs that changed run queue"),
    ("tickles", "PCPUs tickled"),
    ("wakeups_tickling_nobody", "wake-ups that found no PCPU to tickle"),
    ("ratelimit_deferrals", "decisions that kept a VCPU for the ratelimit"),
    ("parks", "capped VCPUs parked"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "credit2",
    "Credit2",
    PARAMS,
    |p, n| sized_scheduler!(n, W => Credit2::<W>::new(p)),
)
.about(
    "Xen's Credit2 scheduler: shared credit-ordered run queues, weight-scaled burn, epochs, load balancing, caps.",
    "Xen 4.8 - current (experimental since 4.1); default scheduler since 4.12",
)
.with_allocation(Allocation {
    rule: "cap = A (xl sched-credit2 -c A; a budget of A % of each 10 ms)",
    since: "4.10",
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
.with_check_domain(check_domain)
.with_check_global(check_global)
.with_check_scenario(check_scenario)
.with_counters(COUNTERS);

fn check_global(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let rl = p.int("ratelimit_us");
    if rl != 0 && rl < 100 {
        return Err(ScenarioError::new(
            format!("{path}.ratelimit_us"),
            format!("{rl} is not allowed; expected 0 (off) or 100..=500000 (us)"),
        ));
    }
    let shift = p.int("load_precision_shift");
    for name in ["balance_under", "balance_over"] {
        let tol = p.int(name);
        if shift + tol < 0 {
            return Err(ScenarioError::new(
                format!("{path}.{name}"),
                format!("{tol} with load_precision_shift {shift} gives a negative shift; expected {name} >= -{shift}"),
            ));
        }
    }
    let v = p.version("xen_version");
    if v < Version::new(4, 8) && p.is_explicit("ratelimit_us") {
        return Err(ScenarioError::new(
            format!("{path}.ratelimit_us"),
            format!("does not exist in Xen {v}'s Credit2 (added in 4.8); expected no ratelimit_us with xen_version \"{v}\""),
        ));
    }
    if v < Version::new(4, 14) && p.is_explicit("max_cpus_runqueue") {
        return Err(ScenarioError::new(
            format!("{path}.max_cpus_runqueue"),
            format!("does not exist in Xen {v} (added in 4.14); expected no max_cpus_runqueue with xen_version \"{v}\""),
        ));
    }
    Ok(())
}

/// Boot options and the release cannot change through an `[[action]]`.
pub fn check_scenario(sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    super::reject_boot_changes(
        sc,
        &[
            "runqueue",
            "max_cpus_runqueue",
            "cap_period_ms",
            "load_window_shift",
            "load_precision_shift",
            "smt_power_savings",
            "xen_version",
        ],
    )
}

fn check_domain(g: &Params, p: &Params, path: &str) -> Result<(), ScenarioError> {
    let v = g.version("xen_version");
    if v < Version::new(4, 10) && p.int("cap") != 0 {
        return Err(ScenarioError::new(
            format!("{path}.cap"),
            format!(
                "Credit2 has no caps in Xen {v} (added in 4.10); expected cap = 0 or xen_version >= \"4.10\""
            ),
        ));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunqueueLevel {
    Cpu,
    Core,
    Socket,
    Node,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Soft,
    Hard,
}

#[derive(Clone, Debug)]
struct Unit {
    credit: i32,
    weight: u32,
    /// Remainder of the weight-scaled burn division, carried to the next burn.
    residual: u64,
    /// Since when the running VCPU's credit was last charged.
    start_time: Time,
    /// Runnable-time load average, fixed point (2^P = 1.0).
    avgload: i64,
    /// When `avgload` was last updated, in 1024-ns units.
    load_last_update: i64,
    /// Budget held (ns); `NO_CAP` if the domain is uncapped.
    budget: i64,
    budget_quota: i64,
    tickled_cpu: Option<PcpuId>,
    rqd: Option<usize>,
    migrate_rqd: Option<usize>,
    /// Picked to run and not yet context-saved.
    scheduled: bool,
    delayed_runq_add: bool,
    runq_migrate_request: bool,
    yield_: bool,
    /// Parked by the cap (Xen's _VPF_parked); the engine pause follows.
    parked: bool,
    on_runq: bool,
    /// When it was last switched in (core's state_entry_time).
    state_entry_time: Time,
}

#[derive(Clone, Debug)]
struct Dom {
    weight: u32,
    cap: u32,
    nr_units: u32,
    tot_budget: i64,
    budget: i64,
    next_repl: Time,
    /// Parked VCPUs, most recently parked first (Xen's list_add at head).
    parked_units: Vec<VcpuId>,
}

#[derive(Clone, Debug)]
struct Runqueue<const W: usize> {
    /// Queued VCPUs, highest credit first, FIFO among equals.
    runq: Vec<VcpuId>,
    /// Every VCPU assigned here, in assignment order.
    svc: Vec<VcpuId>,
    nr_cpus: u32,
    max_weight: u32,
    /// Runnable VCPUs (queued + running).
    load: i64,
    avgload: i64,
    b_avgload: i64,
    load_last_update: i64,
    active: CpuMask<W>,
    idle: CpuMask<W>,
    tickled: CpuMask<W>,
    /// Cores whose threads are all idle and untickled.
    smt_idle: CpuMask<W>,
    pick_bias: PcpuId,
}

/// The Credit2 scheduler's state.
pub struct Credit2<const W: usize> {
    version: Version,
    ratelimit_ns: i64,
    level: RunqueueLevel,
    max_cpus_runqueue: u32,
    migrate_resist: i32,
    cap_period_ns: i64,
    /// Window shift in 1024-ns units (`load_window_shift - 10`).
    window_shift: u32,
    precision_shift: u32,
    balance_under: i32,
    balance_over: i32,
    smt_power_savings: bool,

    units: Vec<Unit>,
    doms: Vec<Dom>,
    rqs: Vec<Runqueue<W>>,
    /// Run queue of each PCPU.
    pcpu_rq: Vec<usize>,
    /// SMT siblings of each PCPU within its run queue.
    rq_sibling: Vec<CpuMask<W>>,

    stat_resets: u64,
    stat_balance_moves: u64,
    stat_tickles: u64,
    stat_tickle_none: u64,
    stat_ratelimited: u64,
    stat_parks: u64,
    stat_migrations: u64,
}

impl<const W: usize> Credit2<W> {
    /// A Credit2 scheduler with validated global parameters.
    pub fn new(p: &Params) -> Credit2<W> {
        let level = match p.str("runqueue") {
            "cpu" => RunqueueLevel::Cpu,
            "core" => RunqueueLevel::Core,
            "node" => RunqueueLevel::Node,
            "all" => RunqueueLevel::All,
            _ => RunqueueLevel::Socket,
        };
        let mut c = Credit2 {
            version: p.version("xen_version"),
            ratelimit_ns: 0,
            level,
            max_cpus_runqueue: p.int("max_cpus_runqueue") as u32,
            migrate_resist: 0,
            cap_period_ns: p.int("cap_period_ms") * NS_PER_MS as i64,
            window_shift: p.int("load_window_shift") as u32 - LOADAVG_GRANULARITY_SHIFT,
            precision_shift: p.int("load_precision_shift") as u32,
            balance_under: 0,
            balance_over: 0,
            smt_power_savings: p.bool("smt_power_savings"),
            units: Vec::new(),
            doms: Vec::new(),
            rqs: Vec::new(),
            pcpu_rq: Vec::new(),
            rq_sibling: Vec::new(),
            stat_resets: 0,
            stat_balance_moves: 0,
            stat_tickles: 0,
            stat_tickle_none: 0,
            stat_ratelimited: 0,
            stat_parks: 0,
            stat_migrations: 0,
        };
        c.set_tunables(p);
        c
    }

    /// The parameters that may change at run time.
    fn set_tunables(&mut self, p: &Params) {
        // Credit2 has had a rate limit since 4.8; before, none.
        self.ratelimit_ns = if self.since(Version::new(4, 8)) {
            p.int("ratelimit_us") * NS_PER_US as i64
        } else {
            0
        };
        self.migrate_resist = (p.int("migrate_resist_us") * NS_PER_US as i64) as i32;
        self.balance_under = p.int("balance_under") as i32;
        self.balance_over = p.int("balance_over") as i32;
    }

    fn since(&self, v: Version) -> bool {
        self.version >= v
    }

    #[inline]
    fn u(&self, v: VcpuId) -> &Unit {
        &self.units[v.idx()]
    }

    #[inline]
    fn um(&mut self, v: VcpuId) -> &mut Unit {
        &mut self.units[v.idx()]
    }

    #[inline]
    fn rq_of_cpu(&self, p: PcpuId) -> usize {
        self.pcpu_rq[p.idx()]
    }

    fn has_cap(&self, v: VcpuId) -> bool {
        self.u(v).budget != NO_CAP
    }

    /// Xen's `unit_runnable`: the engine's view, minus what Xen flags at once
    /// and the engine applies after the hook (a park, a requested migration).
    fn runnable(&self, ctx: &SchedCtx, v: VcpuId) -> bool {
        let u = self.u(v);
        ctx.is_runnable(v) && !u.parked && !u.runq_migrate_request
    }

    /// Soft affinity exists in Credit2 from 4.9.
    fn has_soft(&self, ctx: &SchedCtx, v: VcpuId) -> bool {
        self.since(Version::new(4, 9)) && ctx.has_soft_affinity(v)
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

    fn steps(&self, ctx: &SchedCtx, v: VcpuId) -> &'static [Step] {
        if self.has_soft(ctx, v) {
            &[Step::Soft, Step::Hard]
        } else {
            &[Step::Hard]
        }
    }

    // ----- run-queue layout ----------------------------------------------------------

    fn topology_match(&self, ctx: &SchedCtx, peer: PcpuId, cpu: PcpuId) -> bool {
        let t = ctx.topology();
        match self.level {
            RunqueueLevel::Cpu => false,
            RunqueueLevel::Core => t.core_of(peer) == t.core_of(cpu),
            RunqueueLevel::Socket | RunqueueLevel::Node => t.socket_of(peer) == t.socket_of(cpu),
            RunqueueLevel::All => true,
        }
    }

    /// Would `cpu` and its siblings fit in run queue `r` without exceeding
    /// `max` PCPUs, counting whole cores of the PCPUs already there?
    fn siblings_fit(&self, ctx: &SchedCtx, r: usize, cpu: PcpuId, max: u32) -> bool {
        let t = ctx.topology();
        let mut counted = CpuMask::<W>::empty();
        let mut total = 0;
        for c in self.rqs[r].active.iter() {
            let siblings = t.sibling_mask(c).sized::<W>();
            if !siblings.intersects(&counted) {
                counted = counted.or(&siblings);
                total += siblings.count();
            }
        }
        total + t.sibling_mask(cpu).count() <= max
    }

    /// `cpu_add_to_runqueue` (4.14+) / `cpu_to_runqueue` (earlier).
    fn add_cpu(&mut self, ctx: &SchedCtx, cpu: PcpuId, n: u32) {
        let capped = self.since(Version::new(4, 14));
        let min_rqs = (n - 1) / self.max_cpus_runqueue + 1;
        let max_per_rq = n / min_rqs;
        let mut chosen: Option<usize> = None;
        for r in 0..self.rqs.len() {
            if !self.topology_match(ctx, self.rqs[r].pick_bias, cpu) {
                continue;
            }
            if !capped {
                chosen = Some(r);
                break;
            }
            if self.rqs[r]
                .active
                .intersects(&ctx.topology().sibling_mask(cpu).sized::<W>())
            {
                chosen = Some(r);
                break;
            }
            let fits =
                self.level == RunqueueLevel::All || self.siblings_fit(ctx, r, cpu, max_per_rq);
            // Among fitting run queues the emptiest wins; the first on ties.
            if self.rqs[r].nr_cpus < max_per_rq
                && fits
                && self.rqs[r].nr_cpus < chosen.map_or(u32::MAX, |c| self.rqs[c].nr_cpus)
            {
                chosen = Some(r);
            }
        }
        let r = chosen.unwrap_or_else(|| {
            self.rqs.push(Runqueue {
                runq: Vec::new(),
                svc: Vec::new(),
                nr_cpus: 0,
                max_weight: 1,
                load: 0,
                avgload: 0,
                b_avgload: 0,
                load_last_update: 0,
                active: CpuMask::<W>::empty(),
                idle: CpuMask::<W>::empty(),
                tickled: CpuMask::<W>::empty(),
                smt_idle: CpuMask::<W>::empty(),
                pick_bias: cpu,
            });
            self.rqs.len() - 1
        });
        let rq = &mut self.rqs[r];
        rq.active.set(cpu);
        rq.idle.set(cpu);
        rq.smt_idle.set(cpu);
        rq.nr_cpus += 1;
        self.pcpu_rq[cpu.idx()] = r;
    }

    // ----- load tracking -------------------------------------------------------------

    /// One EWMA step of `avg` towards `sample` over `delta` time units.
    #[inline]
    fn ewma(&self, avg: i64, sample: i64, delta: i64) -> i64 {
        let w = self.window_shift;
        avg + ((delta * (sample << self.precision_shift)) >> w) - ((delta * avg) >> w)
    }

    /// `update_runq_load`: the sample is the load before `change`.
    fn update_runq_load(&mut self, r: usize, change: i64, now: Time) {
        let t = (now.0 >> LOADAVG_GRANULARITY_SHIFT) as i64;
        let window = 1i64 << self.window_shift;
        let rq = &self.rqs[r];
        let (avg, b_avg) = if rq.load_last_update + window < t {
            (
                rq.load << self.precision_shift,
                rq.load << self.precision_shift,
            )
        } else {
            let d = (t - rq.load_last_update).max(0);
            (
                self.ewma(rq.avgload, rq.load, d),
                self.ewma(rq.b_avgload, rq.load, d),
            )
        };
        let rq = &mut self.rqs[r];
        rq.avgload = avg;
        rq.b_avgload = b_avg;
        rq.load += change;
        rq.load_last_update = t;
    }

    /// `update_svc_load`: sample 1 before a -1 change, 0 before +1, else runnable.
    fn update_svc_load(&mut self, ctx: &SchedCtx, v: VcpuId, change: i64, now: Time) {
        let sample = match change {
            -1 => 1,
            1 => 0,
            _ => i64::from(self.runnable(ctx, v)),
        };
        let t = (now.0 >> LOADAVG_GRANULARITY_SHIFT) as i64;
        let window = 1i64 << self.window_shift;
        let u = self.u(v);
        let avg = if u.load_last_update + window < t {
            sample << self.precision_shift
        } else {
            self.ewma(u.avgload, sample, (t - u.load_last_update).max(0))
        };
        let u = self.um(v);
        u.avgload = avg;
        u.load_last_update = t;
    }

    fn update_load(&mut self, ctx: &SchedCtx, r: usize, v: Option<VcpuId>, change: i64, now: Time) {
        self.update_runq_load(r, change, now);
        if let Some(v) = v {
            self.update_svc_load(ctx, v, change, now);
        }
    }

    // ----- run-queue membership ------------------------------------------------------

    /// `update_max_weight`.
    fn update_max_weight(&mut self, r: usize, new_weight: u32, old_weight: u32) {
        if new_weight > self.rqs[r].max_weight {
            self.rqs[r].max_weight = new_weight;
        } else if old_weight == self.rqs[r].max_weight {
            let m = self.rqs[r]
                .svc
                .iter()
                .map(|&v| self.units[v.idx()].weight)
                .max()
                .unwrap_or(1);
            self.rqs[r].max_weight = m.max(1);
        }
    }

    fn runq_assign(&mut self, v: VcpuId, r: usize) {
        self.um(v).rqd = Some(r);
        self.rqs[r].svc.push(v);
        let w = self.u(v).weight;
        self.update_max_weight(r, w, 0);
        self.rqs[r].b_avgload += self.u(v).avgload;
    }

    fn runq_deassign(&mut self, v: VcpuId) {
        let r = self.u(v).rqd.expect("assigned");
        self.rqs[r].svc.retain(|&x| x != v);
        let w = self.u(v).weight;
        self.update_max_weight(r, 0, w);
        self.rqs[r].b_avgload = (self.rqs[r].b_avgload - self.u(v).avgload).max(0);
        self.um(v).rqd = None;
    }

    /// `runq_insert`: before the first VCPU with strictly less credit.
    fn runq_insert(&mut self, v: VcpuId) {
        let r = self.u(v).rqd.expect("assigned");
        let credit = self.u(v).credit;
        let q = &self.rqs[r].runq;
        let pos = q
            .iter()
            .position(|&x| credit > self.units[x.idx()].credit)
            .unwrap_or(q.len());
        self.rqs[r].runq.insert(pos, v);
        self.um(v).on_runq = true;
    }

    fn runq_remove(&mut self, v: VcpuId) {
        let r = self.u(v).rqd.expect("assigned");
        if let Some(i) = self.rqs[r].runq.iter().position(|&x| x == v) {
            self.rqs[r].runq.remove(i);
        }
        self.um(v).on_runq = false;
    }

    // ----- credit ---------------------------------------------------------------------

    /// `burn_credits` for a running VCPU.
    fn burn_credits(&mut self, v: VcpuId, now: Time) {
        let r = self.u(v).rqd.expect("assigned");
        let max_weight = u64::from(self.rqs[r].max_weight);
        let floor = self.since(Version::new(4, 14));
        let u = &mut self.units[v.idx()];
        if now <= u.start_time {
            return;
        }
        let delta = now.since(u.start_time);
        let val = delta * max_weight + u.residual;
        let weight = u64::from(u.weight);
        let burned = (val / weight) as i64;
        u.residual = val % weight;
        let credit = i64::from(u.credit) - burned;
        u.credit = if floor {
            credit.max(i64::from(CREDIT_MIN)) as i32
        } else {
            credit.max(i64::from(i32::MIN)) as i32
        };
        if u.budget != NO_CAP {
            u.budget -= delta as i64;
        }
        u.start_time = now;
    }

    /// `c2t`: credit to ns of run time at this VCPU's burn rate.
    fn c2t(&self, r: usize, credit: i64, v: VcpuId) -> i64 {
        credit * i64::from(self.u(v).weight) / i64::from(self.rqs[r].max_weight)
    }

    /// `reset_credit`: the run queue's epoch ends.
    fn reset_credit(&mut self, ctx: &mut SchedCtx, cpu: PcpuId, now: Time, snext: VcpuId) {
        self.stat_resets += 1;
        let r = self.rq_of_cpu(cpu);
        let snext_credit = i64::from(self.u(snext).credit);
        let add = if self.since(Version::new(4, 14)) {
            if self.u(snext).credit == CREDIT_MIN {
                2 * i64::from(CREDIT_INIT)
            } else {
                i64::from(CREDIT_INIT)
            }
        } else {
            // Before 4.14 there was no floor: add enough multiples of INIT to
            // bring the chosen VCPU back into the black.
            let m = if snext_credit < -i64::from(CREDIT_INIT) {
                1 + (-snext_credit) / i64::from(CREDIT_INIT)
            } else {
                1
            };
            m * i64::from(CREDIT_INIT)
        };
        let top = i64::from(CREDIT_INIT + CARRYOVER_MAX);
        for i in 0..self.rqs[r].svc.len() {
            let v = self.rqs[r].svc[i];
            let p = ctx.processor(v);
            if ctx.current(p) == Some(v) {
                self.burn_credits(v, now);
                if self.u(v).budget <= 0 {
                    self.tickle_cpu(ctx, r, p);
                }
            }
            let u = self.um(v);
            u.credit = (i64::from(u.credit) + add).min(top) as i32;
            u.start_time = now;
        }
    }

    /// Credit resets (epochs ended) so far, on every run queue.
    fn resets(&self) -> u64 {
        self.stat_resets
    }

    /// Change a domain's weight as `csched2_dom_cntl` does: every VCPU takes
    /// the new weight and its run queue's `max_weight` follows.
    fn set_weight(&mut self, ctx: &SchedCtx, dom: DomId, new_weight: u32) {
        let d = dom.idx();
        let old_weight = self.doms[d].weight;
        if new_weight == old_weight {
            return;
        }
        self.doms[d].weight = new_weight;
        for v in ctx.vcpus_of(dom) {
            self.um(v).weight = new_weight;
            if let Some(r) = self.u(v).rqd {
                self.update_max_weight(r, new_weight, old_weight);
            }
        }
    }

    // ----- caps -----------------------------------------------------------------------

    /// `unit_grab_budget`: take a quota from the domain's pool, or park.
    fn grab_budget(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> bool {
        if self.u(v).budget > 0 {
            return true;
        }
        let d = ctx.domain_of(v).idx();
        self.doms[d].budget += self.u(v).budget;
        if self.doms[d].budget > 0 {
            let take = self.u(v).budget_quota.min(self.doms[d].budget);
            self.um(v).budget = take;
            self.doms[d].budget -= take;
        } else {
            self.um(v).budget = 0;
            self.park(ctx, v);
        }
        self.u(v).budget > 0
    }

    /// `park_unit`.
    fn park(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.stat_parks += 1;
        self.um(v).parked = true;
        ctx.pause(v);
        if self.u(v).on_runq {
            self.runq_remove(v);
            ctx.count_queue_op();
            let r = self.u(v).rqd.expect("assigned");
            self.update_load(ctx, r, Some(v), -1, ctx.now());
        }
        let d = ctx.domain_of(v).idx();
        self.doms[d].parked_units.insert(0, v);
    }

    /// `unit_return_budget`: give back what was not used; returns the VCPUs
    /// to unpark if the pool is positive again.
    fn return_budget(&mut self, ctx: &SchedCtx, v: VcpuId) -> Vec<VcpuId> {
        let d = ctx.domain_of(v).idx();
        self.doms[d].budget += self.u(v).budget;
        self.um(v).budget = 0;
        if self.doms[d].budget > 0 {
            std::mem::take(&mut self.doms[d].parked_units)
        } else {
            Vec::new()
        }
    }

    /// `unpark_parked_units`: the engine's unpause wakes each runnable one,
    /// and `wake` queues and tickles it.
    fn unpark(&mut self, ctx: &mut SchedCtx, list: Vec<VcpuId>) {
        for v in list {
            self.um(v).parked = false;
            ctx.unpause(v);
        }
    }

    /// `replenish_domain_budget`.
    fn replenish(&mut self, ctx: &mut SchedCtx, d: usize) {
        let now = ctx.now();
        let period = self.cap_period_ns as u64;
        let dom = &mut self.doms[d];
        loop {
            dom.budget += dom.tot_budget;
            dom.next_repl = dom.next_repl.after(period);
            if dom.next_repl > now {
                break;
            }
        }
        let at = dom.next_repl;
        if dom.budget > 0 {
            dom.budget = dom.budget.min(dom.tot_budget);
            let list = std::mem::take(&mut dom.parked_units);
            self.unpark(ctx, list);
        }
        ctx.arm_timer(d as u32, at, PcpuId(0));
    }

    /// Apply a domain's cap as `csched2_dom_cntl` does.
    fn set_cap(&mut self, ctx: &mut SchedCtx, dom: DomId, cap: u32) {
        let d = dom.idx();
        let vcpus: Vec<VcpuId> = ctx.vcpus_of(dom).collect();
        if cap != 0 {
            let tot = self.cap_period_ns * i64::from(cap) / 100;
            self.doms[d].tot_budget = tot;
            let n = i64::from(self.doms[d].nr_units.max(1));
            for &v in &vcpus {
                self.um(v).budget_quota = (tot / n).max(MIN_TIMER_NS);
            }
            if self.doms[d].cap == 0 {
                self.doms[d].budget = tot;
                let next = ctx.now().after(self.cap_period_ns as u64);
                self.doms[d].next_repl = next;
                ctx.arm_timer(d as u32, next, PcpuId(0));
                for &v in &vcpus {
                    if let Some(p) = ctx.running_on(v) {
                        // Charge the run so far before budgeting starts.
                        self.burn_credits(v, ctx.now());
                        let r = self.rq_of_cpu(p);
                        self.rqs[r].tickled.set(p);
                        ctx.tickle(p);
                    }
                    self.um(v).budget = 0;
                }
            }
            self.doms[d].cap = cap;
        } else if self.doms[d].cap != 0 {
            ctx.cancel_timer(d as u32);
            for &v in &vcpus {
                self.um(v).budget = NO_CAP;
                self.um(v).budget_quota = 0;
            }
            self.doms[d].cap = 0;
            let list = std::mem::take(&mut self.doms[d].parked_units);
            self.unpark(ctx, list);
        }
    }

    // ----- tickling -------------------------------------------------------------------

    /// `smt_idle_mask_set`: mark `cpu`'s core fully idle if all its threads are in `idlers`.
    fn smt_idle_set(&mut self, r: usize, cpu: PcpuId, idlers: &CpuMask<W>) {
        let sib = self.rq_sibling[cpu.idx()];
        if sib.is_subset(idlers) {
            self.rqs[r].smt_idle = self.rqs[r].smt_idle.or(&sib);
        }
    }

    /// `smt_idle_mask_clear`.
    fn smt_idle_clear(&mut self, r: usize, cpu: PcpuId) {
        let sib = self.rq_sibling[cpu.idx()];
        if sib.is_subset(&self.rqs[r].smt_idle) {
            self.rqs[r].smt_idle = self.rqs[r].smt_idle.andnot(&sib);
        }
    }

    fn tickle_cpu(&mut self, ctx: &mut SchedCtx, r: usize, cpu: PcpuId) {
        self.rqs[r].tickled.set(cpu);
        self.smt_idle_clear(r, cpu);
        self.stat_tickles += 1;
        ctx.tickle(cpu);
    }

    /// May the running `cur` be preempted (it ran past the rate limit, minus
    /// tolerance)? `is_preemptable` came with 4.10 (`4b6923acff`, Aug 2017):
    /// before it every busy PCPU is scored, and a tickled PCPU whose VCPU is
    /// inside its rate limit keeps it only until the limit expires
    /// (`csched2_runtime`), so the waker runs then rather than at the end of
    /// the current VCPU's slice.
    fn preemptable(&self, cur: VcpuId, now: Time) -> bool {
        if !self.since(Version::new(4, 10)) || self.ratelimit_ns <= RATELIMIT_TICKLE_TOLERANCE_NS
        {
            return true;
        }
        now.since(self.u(cur).state_entry_time) as i64
            > self.ratelimit_ns - RATELIMIT_TICKLE_TOLERANCE_NS
    }

    /// `tickle_score`: how much `new` deserves `cpu`; negative if not at all.
    fn tickle_score(&mut self, ctx: &SchedCtx, new: VcpuId, cpu: PcpuId, now: Time) -> i64 {
        let Some(cur) = ctx.current(cpu) else {
            return -1;
        };
        if !self.preemptable(cur, now) {
            return -1;
        }
        self.burn_credits(cur, now);
        let mut score = i64::from(self.u(new).credit) - i64::from(self.u(cur).credit);
        if ctx.processor(new) != cpu {
            score -= i64::from(self.migrate_resist);
        }
        if score > 0 {
            if ctx.soft_affinity(new).sized::<W>().test(cpu) {
                score += i64::from(CREDIT_INIT);
            }
            if !ctx.soft_affinity(cur).sized::<W>().test(cpu) {
                score += i64::from(CREDIT_INIT);
            }
        }
        score
    }

    /// `runq_tickle`: choose one PCPU of `new`'s run queue to pick it up.
    fn runq_tickle(&mut self, ctx: &mut SchedCtx, new: VcpuId, now: Time) {
        let cpu = ctx.processor(new);
        let r = self.u(new).rqd.expect("assigned");
        let chosen = self.tickle_target(ctx, new, cpu, r, now);
        match chosen {
            Some(i) => {
                self.tickle_cpu(ctx, r, i);
                self.um(new).tickled_cpu = Some(i);
            }
            None => self.stat_tickle_none += 1,
        }
    }

    fn tickle_target(
        &mut self,
        ctx: &SchedCtx,
        new: VcpuId,
        cpu: PcpuId,
        r: usize,
        now: Time,
    ) -> Option<PcpuId> {
        if !self.since(Version::new(4, 8)) {
            return self.tickle_target_old(ctx, new, cpu, r, now);
        }
        let hard = ctx.hard_affinity(new).sized::<W>();
        {
            let rq = &self.rqs[r];
            if hard.count() == 1 && rq.idle.test(cpu) && !rq.tickled.test(cpu) {
                return Some(cpu);
            }
            let test_or_cycle = |m: &CpuMask<W>| if m.test(cpu) { Some(cpu) } else { m.cycle(cpu) };
            for &step in self.steps(ctx, new) {
                let aff = Self::balance_mask(ctx, new, step);
                let cores = if self.smt_power_savings {
                    rq.idle.andnot(&rq.smt_idle)
                } else {
                    rq.smt_idle
                };
                if let Some(i) = test_or_cycle(&cores.and(&aff)) {
                    return Some(i);
                }
                if let Some(i) = test_or_cycle(&rq.idle.andnot(&rq.tickled).and(&aff)) {
                    return Some(i);
                }
            }
        }
        let rq = &self.rqs[r];
        let mut busy = rq.active.andnot(&rq.idle).andnot(&rq.tickled).and(&hard);
        let mut best = None;
        let mut max = 0i64;
        if busy.test(cpu) {
            busy.clear(cpu);
            let s = self.tickle_score(ctx, new, cpu, now);
            if s > max {
                max = s;
                best = Some(cpu);
                if ctx.soft_affinity(new).sized::<W>().test(cpu) {
                    return best;
                }
            }
        }
        for i in busy.iter() {
            let s = self.tickle_score(ctx, new, i, now);
            if s > max {
                max = s;
                best = Some(i);
            }
        }
        best
    }

    /// `runq_tickle` before 4.8 (4.4.1's code): the PCPU `new` is on first,
    /// if its current VCPU (the idle VCPU included) has less credit; else an
    /// idle untickled PCPU, cycling from it; else the busy untickled PCPU with
    /// the least credit, if `new` leads it by at least the migration
    /// resistance. No rate limit, soft affinity or SMT preference yet.
    fn tickle_target_old(
        &mut self,
        ctx: &SchedCtx,
        new: VcpuId,
        cpu: PcpuId,
        r: usize,
        now: Time,
    ) -> Option<PcpuId> {
        let new_credit = self.u(new).credit;
        let cur_credit = match ctx.current(cpu) {
            Some(cur) => {
                self.burn_credits(cur, now);
                self.u(cur).credit
            }
            None => IDLE_CREDIT,
        };
        if cur_credit < new_credit {
            return Some(cpu);
        }
        let rq = &self.rqs[r];
        if let Some(i) = rq.idle.andnot(&rq.tickled).cycle(cpu) {
            return Some(i);
        }
        let busy = rq.active.andnot(&rq.idle).andnot(&rq.tickled);
        let mut best = None;
        let mut lowest = i64::from(1i32 << 30);
        for i in busy.iter() {
            if i == cpu {
                continue;
            }
            let Some(cur) = ctx.current(i) else { continue };
            self.burn_credits(cur, now);
            let c = i64::from(self.u(cur).credit);
            if c < lowest {
                lowest = c;
                best = Some(i);
            }
        }
        best.filter(|_| lowest + i64::from(self.migrate_resist) <= i64::from(new_credit))
    }

    // ----- placement and balancing ---------------------------------------------------

    /// `get_fallback_cpu` (used when no run queue qualified).
    fn fallback_cpu(&self, ctx: &SchedCtx, v: VcpuId) -> PcpuId {
        let cur = ctx.processor(v);
        let active = self
            .u(v)
            .rqd
            .map(|r| self.rqs[r].active)
            .unwrap_or_default();
        for &step in self.steps(ctx, v) {
            let m = Self::balance_mask(ctx, v, step);
            if m.test(cur) {
                return cur;
            }
            if let Some(c) = m.and(&active).first() {
                return c;
            }
            if step == Step::Hard {
                return m.first().expect("non-empty hard affinity");
            }
        }
        ctx.hard_affinity(v)
            .first()
            .expect("non-empty hard affinity")
    }

    /// `csched2_res_pick`: least-loaded run queue, a PCPU of it round-robin.
    fn res_pick(&mut self, ctx: &SchedCtx, v: VcpuId) -> PcpuId {
        let hard = ctx.hard_affinity(v).sized::<W>();
        if std::mem::take(&mut self.um(v).runq_migrate_request) {
            if let Some(t) = self.u(v).migrate_rqd {
                let m = hard.and(&self.rqs[t].active);
                if let Some(c) = m.cycle(self.rqs[t].pick_bias) {
                    self.rqs[t].pick_bias = c;
                    return c;
                }
            }
        }
        let has_soft = self.has_soft(ctx, v);
        let soft = ctx.soft_affinity(v).sized::<W>();
        let mine = self.u(v).rqd;
        let mut min: Option<(i64, usize)> = None;
        let mut min_soft: Option<(i64, usize)> = None;
        for r in 0..self.rqs.len() {
            let rq = &self.rqs[r];
            if !hard.intersects(&rq.active) {
                continue;
            }
            let load = if Some(r) == mine {
                (rq.b_avgload - self.u(v).avgload).max(0)
            } else {
                rq.b_avgload
            };
            if has_soft
                && load < min_soft.map_or(i64::MAX, |(l, _)| l)
                && hard.and(&rq.active).intersects(&soft)
            {
                min_soft = Some((load, r));
            }
            if load < min.map_or(i64::MAX, |(l, _)| l) {
                min = Some((load, r));
            }
        }
        let (target, mask) = match (min_soft, min) {
            (Some((_, r)), _) if has_soft => (r, hard.and(&soft).and(&self.rqs[r].active)),
            (_, Some((_, r))) => (r, hard.and(&self.rqs[r].active)),
            _ => return self.fallback_cpu(ctx, v),
        };
        let c = mask.cycle(self.rqs[target].pick_bias).expect("non-empty");
        self.rqs[target].pick_bias = c;
        c
    }

    fn migrateable(&self, ctx: &SchedCtx, v: VcpuId, r: usize) -> bool {
        !self.u(v).runq_migrate_request && ctx.hard_affinity(v).sized::<W>().intersects(&self.rqs[r].active)
    }

    /// `migrate`: move `v` to run queue `t` (or ask its PCPU to let it go).
    fn migrate_to(&mut self, ctx: &mut SchedCtx, v: VcpuId, t: usize, now: Time) {
        self.stat_migrations += 1;
        if self.u(v).scheduled {
            let u = self.um(v);
            u.migrate_rqd = Some(t);
            u.runq_migrate_request = true;
            let p = ctx.processor(v);
            let r = self.u(v).rqd.expect("assigned");
            self.tickle_cpu(ctx, r, p);
            ctx.migrate(v);
        } else {
            let was_queued = self.u(v).on_runq;
            let old = self.u(v).rqd.expect("assigned");
            if was_queued {
                self.runq_remove(v);
                ctx.count_queue_op();
                self.update_runq_load(old, -1, now);
            }
            self.runq_deassign(v);
            let mask = ctx.hard_affinity(v).sized::<W>().and(&self.rqs[t].active);
            let c = mask.cycle(self.rqs[t].pick_bias).expect("migrateable");
            self.rqs[t].pick_bias = c;
            ctx.set_processor(v, c);
            self.runq_assign(v, t);
            if was_queued {
                self.update_runq_load(t, 1, now);
                self.runq_insert(v);
                ctx.count_queue_op();
                self.runq_tickle(ctx, v, now);
            }
        }
    }

    /// `consider`: is moving `push` out and `pull` in the best so far?
    #[allow(clippy::too_many_arguments)]
    fn consider(
        &self,
        l: usize,
        o: usize,
        push: Option<VcpuId>,
        pull: Option<VcpuId>,
        best_delta: &mut i64,
        best: &mut (Option<VcpuId>, Option<VcpuId>),
    ) {
        let mut l_load = self.rqs[l].b_avgload;
        let mut o_load = self.rqs[o].b_avgload;
        if let Some(p) = push {
            l_load -= self.u(p).avgload;
            o_load += self.u(p).avgload;
        }
        if let Some(q) = pull {
            l_load += self.u(q).avgload;
            o_load -= self.u(q).avgload;
        }
        let delta = (l_load - o_load).abs();
        if delta < *best_delta {
            *best_delta = delta;
            *best = (push, pull);
        }
    }

    /// `balance_load`, run right after a credit reset on `cpu`.
    fn balance_load(&mut self, ctx: &mut SchedCtx, cpu: PcpuId, now: Time) {
        let l = self.rq_of_cpu(cpu);
        self.update_runq_load(l, 0, now);
        let mut best_delta = 0i64;
        let mut other = None;
        let mut last = l;
        for r in 0..self.rqs.len() {
            last = r;
            if r == l {
                continue;
            }
            self.update_runq_load(r, 0, now);
            let d = (self.rqs[l].b_avgload - self.rqs[r].b_avgload).abs();
            if d > best_delta {
                best_delta = d;
                other = Some(r);
            }
        }
        let Some(o) = other else { return };
        // Quirk Q3: the capacity check uses the last run queue iterated, not `o`.
        let load_max = self.rqs[l].b_avgload.max(self.rqs[last].b_avgload);
        let cpus_max = i64::from(self.rqs[l].nr_cpus.max(self.rqs[last].nr_cpus));
        let tolerance = if load_max < cpus_max << self.precision_shift {
            self.balance_under
        } else {
            self.balance_over
        };
        if best_delta < 1i64 << (self.precision_shift as i32 + tolerance) {
            return;
        }
        let mut best = (None, None);
        let mut inner_updated = false;
        let lsvc = self.rqs[l].svc.clone();
        let osvc = self.rqs[o].svc.clone();
        for &p in &lsvc {
            self.update_svc_load(ctx, p, 0, now);
            if !self.migrateable(ctx, p, o) {
                continue;
            }
            for &q in &osvc {
                if !inner_updated {
                    self.update_svc_load(ctx, q, 0, now);
                }
                if !self.migrateable(ctx, q, l) {
                    continue;
                }
                self.consider(l, o, Some(p), Some(q), &mut best_delta, &mut best);
            }
            inner_updated = true;
            self.consider(l, o, Some(p), None, &mut best_delta, &mut best);
        }
        for &q in &osvc {
            if self.migrateable(ctx, q, l) {
                self.consider(l, o, None, Some(q), &mut best_delta, &mut best);
            }
        }
        if let Some(p) = best.0 {
            self.stat_balance_moves += 1;
            self.migrate_to(ctx, p, o, now);
        }
        if let Some(q) = best.1 {
            self.stat_balance_moves += 1;
            self.migrate_to(ctx, q, l, now);
        }
    }

    // ----- the decision ----------------------------------------------------------------

    /// `runq_candidate`: what `cpu` should run next (`None` = idle), and
    /// whether queued VCPUs were passed over (the ≤ 4.13 reset rule needs it).
    fn runq_candidate(
        &mut self,
        ctx: &mut SchedCtx,
        r: usize,
        scurr: Option<VcpuId>,
        cpu: PcpuId,
        now: Time,
    ) -> (Option<VcpuId>, bool) {
        let mut yielding = false;
        let mut snext = None;
        let old = !self.since(Version::new(4, 8));
        if let Some(c) = scurr {
            // Yielding came with 4.8.
            yielding = std::mem::take(&mut self.um(c).yield_) && !old;
            let runnable = self.runnable(ctx, c);
            if !yielding
                && self.ratelimit_ns > 0
                && runnable
                && (now.since(self.u(c).state_entry_time) as i64) < self.ratelimit_ns
            {
                self.stat_ratelimited += 1;
                return (Some(c), false);
            }
            let mut soft_aff_preempt = false;
            if self.has_soft(ctx, c) {
                let m = Self::balance_mask(ctx, c, Step::Soft);
                if !m.test(cpu) {
                    let rq = &self.rqs[r];
                    soft_aff_preempt = m
                        .and(&rq.idle)
                        .andnot(&rq.tickled)
                        .intersects(&ctx.topology().all().sized::<W>());
                }
            }
            if runnable && !soft_aff_preempt {
                snext = Some(c);
            }
        }
        let snext_credit = snext.map_or(IDLE_CREDIT, |v| self.u(v).credit);
        let mut skipped = false;
        let mut i = 0;
        while i < self.rqs[r].runq.len() {
            let svc = self.rqs[r].runq[i];
            i += 1;
            if !self.runnable(ctx, svc) {
                continue;
            }
            if !ctx.hard_affinity(svc).sized::<W>().test(cpu) {
                skipped = true;
                continue;
            }
            if let Some(t) = self.u(svc).tickled_cpu.filter(|_| !old) {
                if t != cpu && self.rqs[r].tickled.test(t) {
                    skipped = true;
                    continue;
                }
            }
            let credit = self.u(svc).credit;
            if ctx.processor(svc) != cpu
                && snext_credit.saturating_add(self.migrate_resist) > credit
            {
                skipped = true;
                continue;
            }
            if (yielding || credit > snext_credit)
                && (!self.has_cap(svc) || self.grab_budget(ctx, svc))
            {
                snext = Some(svc);
            }
            break;
        }
        (snext, skipped)
    }

    /// `csched2_runtime`: the slice for `snext`.
    fn runtime(&self, r: usize, snext: VcpuId, continuing: bool, now: Time, inflight: i32) -> u64 {
        let mut min_time = MIN_TIMER_NS;
        if self.ratelimit_ns > 0 {
            let rl = if continuing {
                self.u(snext).state_entry_time.0 as i64 + self.ratelimit_ns - now.0 as i64
            } else {
                self.ratelimit_ns
            };
            min_time = min_time.max(rl);
        }
        let credit = i64::from(self.u(snext).credit);
        let mut swait = 0i64;
        if let Some(&head) = self.rqs[r].runq.first() {
            let hc = i64::from(self.u(head).credit);
            if hc > 0 {
                swait = hc;
            }
        }
        swait = swait.max(i64::from(inflight));
        let rt_credit = if swait > 0 { credit - swait } else { credit };
        let mut time = if rt_credit > 0 {
            self.c2t(r, rt_credit, snext)
        } else {
            0
        };
        if self.has_cap(snext) {
            time = time.min(self.u(snext).budget);
        }
        let max_time = if self.since(Version::new(4, 8)) {
            MAX_TIMER_NS
        } else {
            MAX_TIMER_OLD_NS
        };
        if time < min_time {
            time = min_time;
        } else if time > max_time {
            time = max_time;
        }
        time as u64
    }
}

impl<const W: usize> Scheduler for Credit2<W> {
    fn name(&self) -> &'static str {
        "credit2"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        let n = ctx.npcpus();
        self.pcpu_rq = vec![0; n];
        for p in 0..n {
            self.add_cpu(ctx, PcpuId(p as u32), n as u32);
        }
        self.rq_sibling = (0..n)
            .map(|p| {
                let rq = &self.rqs[self.pcpu_rq[p]];
                ctx.topology()
                    .sibling_mask(PcpuId(p as u32))
                    .sized::<W>()
                    .and(&rq.active)
            })
            .collect();
        // smt_idle holds whole idle cores only.
        for r in 0..self.rqs.len() {
            let idle = self.rqs[r].idle;
            self.rqs[r].smt_idle = CpuMask::<W>::empty();
            for p in idle.iter() {
                self.smt_idle_set(r, p, &idle);
            }
        }
        self.units = (0..ctx.nvcpus())
            .map(|_| Unit {
                credit: CREDIT_INIT,
                weight: DEFAULT_WEIGHT as u32,
                residual: 0,
                start_time: Time::ZERO,
                avgload: 1i64 << (self.precision_shift - 1),
                load_last_update: 0,
                budget: NO_CAP,
                budget_quota: 0,
                tickled_cpu: None,
                rqd: None,
                migrate_rqd: None,
                scheduled: false,
                delayed_runq_add: false,
                runq_migrate_request: false,
                yield_: false,
                parked: false,
                on_runq: false,
                state_entry_time: Time::ZERO,
            })
            .collect();
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.doms.len());
        self.doms.push(Dom {
            weight: params.int("weight") as u32,
            // Applied once the domain's VCPUs exist, as xl does after creation.
            cap: params.int("cap") as u32,
            nr_units: 0,
            tot_budget: 0,
            budget: 0,
            next_repl: Time::ZERO,
            parked_units: Vec::new(),
        });
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let d = ctx.domain_of(v);
        let now = ctx.now();
        let u = self.um(v);
        u.load_last_update = (now.0 >> LOADAVG_GRANULARITY_SHIFT) as i64;
        self.um(v).weight = self.doms[d.idx()].weight;
        let p = self.res_pick(ctx, v);
        ctx.set_processor(v, p);
        let r = self.rq_of_cpu(p);
        self.runq_assign(v, r);
        self.doms[d.idx()].nr_units += 1;
        let last = ctx.vcpus_of(d).last() == Some(v);
        if last && self.doms[d.idx()].cap != 0 {
            let cap = std::mem::replace(&mut self.doms[d.idx()].cap, 0);
            self.set_cap(ctx, d, cap);
        }
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.runq_deassign(v);
        let d = ctx.domain_of(v).idx();
        self.doms[d].nr_units -= 1;
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() || self.u(v).on_runq {
            return;
        }
        if self.u(v).scheduled {
            self.um(v).delayed_runq_add = true;
            return;
        }
        if self.u(v).rqd.is_none() {
            let r = self.rq_of_cpu(ctx.processor(v));
            self.runq_assign(v, r);
        }
        let now = ctx.now();
        let r = self.u(v).rqd.expect("assigned");
        self.update_load(ctx, r, Some(v), 1, now);
        self.runq_insert(v);
        ctx.count_queue_op();
        self.runq_tickle(ctx, v, now);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.current(p) == Some(v) {
            // A migration Credit2 requested has already tickled (Xen's
            // migrate() does not go through sleep).
            if !self.since(Version::new(4, 8)) {
                // Before 4.8 only the softirq is raised: no tickled mark.
                ctx.tickle(p);
            } else if !self.u(v).runq_migrate_request {
                let r = self.u(v).rqd.expect("assigned");
                self.tickle_cpu(ctx, r, p);
            }
        } else if self.u(v).on_runq {
            let r = self.u(v).rqd.expect("assigned");
            self.update_load(ctx, r, Some(v), -1, ctx.now());
            self.runq_remove(v);
            ctx.count_queue_op();
        } else {
            self.um(v).delayed_runq_add = false;
        }
    }

    fn yield_(&mut self, _ctx: &mut SchedCtx, v: VcpuId) {
        self.um(v).yield_ = true;
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let now = ctx.now();
        let r = self.rq_of_cpu(cpu);
        if self.rqs[r].tickled.test(cpu) {
            self.rqs[r].tickled.clear(cpu);
            let idlers = self.rqs[r].idle.andnot(&self.rqs[r].tickled);
            self.smt_idle_set(r, cpu, &idlers);
        }
        let scurr = ctx.current(cpu);
        if let Some(c) = scurr {
            self.burn_credits(c, now);
            if self.u(c).budget <= 0 {
                self.grab_budget(ctx, c);
            }
        }
        let (snext, skipped) = self.runq_candidate(ctx, r, scurr, cpu, now);
        if let Some(c) = scurr {
            if snext != Some(c) && self.runnable(ctx, c) {
                self.um(c).delayed_runq_add = true;
            }
        }
        let mut migrated = false;
        let mut inflight = 0;
        match snext {
            Some(n) => {
                if snext != scurr {
                    self.runq_remove(n);
                    ctx.count_queue_op();
                    self.um(n).scheduled = true;
                } else if self.since(Version::new(4, 16)) {
                    self.update_load(ctx, r, Some(n), 0, now);
                }
                if self.rqs[r].idle.test(cpu) {
                    self.rqs[r].idle.clear(cpu);
                    self.smt_idle_clear(r, cpu);
                }
                let credit = self.u(n).credit;
                let reset = if self.since(Version::new(4, 14)) {
                    let head = self.rqs[r]
                        .runq
                        .first()
                        .map_or(credit, |&h| self.u(h).credit.max(credit));
                    head <= 0
                } else if self.since(Version::new(4, 8)) {
                    !skipped && credit <= 0
                } else {
                    credit <= 0
                };
                if reset {
                    self.reset_credit(ctx, cpu, now, n);
                    self.balance_load(ctx, cpu, now);
                }
                if self.since(Version::new(4, 21)) {
                    if let Some(c) = scurr.filter(|&c| self.u(c).delayed_runq_add) {
                        inflight = self.u(c).credit;
                    }
                }
                let u = self.um(n);
                u.start_time = now;
                u.tickled_cpu = None;
                if snext != scurr {
                    u.state_entry_time = now;
                }
                if ctx.processor(n) != cpu {
                    self.um(n).credit += MIGRATE_COMPENSATION;
                    ctx.set_processor(n, cpu);
                    migrated = true;
                }
            }
            None => {
                if !self.rqs[r].idle.test(cpu) {
                    self.rqs[r].idle.set(cpu);
                    let idlers = self.rqs[r].idle.andnot(&self.rqs[r].tickled);
                    self.smt_idle_set(r, cpu, &idlers);
                }
                self.update_load(ctx, r, None, 0, now);
            }
        }
        Decision {
            next: snext,
            slice_ns: snext.map(|n| self.runtime(r, n, snext == scurr, now, inflight)),
            migrated,
        }
    }

    fn context_saved(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let now = ctx.now();
        self.um(v).scheduled = false;
        let mut were_parked = Vec::new();
        if self.has_cap(v) && self.u(v).budget > 0 {
            were_parked = self.return_budget(ctx, v);
        }
        let delayed = std::mem::take(&mut self.um(v).delayed_runq_add);
        if delayed && self.runnable(ctx, v) {
            self.runq_insert(v);
            ctx.count_queue_op();
            self.runq_tickle(ctx, v, now);
        } else {
            let r = self.u(v).rqd.expect("assigned");
            self.update_load(ctx, r, Some(v), -1, now);
        }
        self.unpark(ctx, were_parked);
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        self.res_pick(ctx, v)
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        let t = self.rq_of_cpu(to);
        if Some(t) != self.u(v).rqd {
            self.migrate_to(ctx, v, t, ctx.now());
        } else {
            ctx.set_processor(v, to);
        }
    }

    fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
        self.replenish(ctx, id as usize);
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.set_weight(ctx, dom, params.int("weight") as u32);
        let cap = params.int("cap") as u32;
        if cap != self.doms[dom.idx()].cap {
            self.set_cap(ctx, dom, cap);
        }
    }

    fn adjust_global(&mut self, _ctx: &mut SchedCtx, params: &Params) {
        self.set_tunables(params);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("runqueues", self.rqs.len() as u64),
            ("credit_resets", self.stat_resets),
            ("balance_moves", self.stat_balance_moves),
            ("runq_migrations", self.stat_migrations),
            ("tickles", self.stat_tickles),
            ("wakeups_tickling_nobody", self.stat_tickle_none),
            ("ratelimit_deferrals", self.stat_ratelimited),
            ("parks", self.stat_parks),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for (i, rq) in self.rqs.iter().enumerate() {
            let _ = writeln!(
                s,
                "runqueue {i}: cpus={:?} max_weight={} load={} avgload={} b_avgload={} idle={:?} tickled={:?}",
                rq.active, rq.max_weight, rq.load, rq.avgload, rq.b_avgload, rq.idle, rq.tickled
            );
            for p in rq.active.iter() {
                if let Some(v) = ctx.current(p) {
                    let u = self.u(v);
                    let _ = writeln!(
                        s,
                        "  pcpu{p}: v{} credit={} avgload={}",
                        v.0, u.credit, u.avgload
                    );
                }
            }
            let _ = write!(s, "  runq:");
            for v in &rq.runq {
                let _ = write!(s, " v{}({})", v.0, self.u(*v).credit);
            }
            let _ = writeln!(s);
        }
        s
    }
}
