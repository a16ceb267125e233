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
//! `tslice_ms`, `ratelimit_us` pool-wide; the boot options
//! `vcpu_migration_delay_us`, `lb_ratelimit_us`, `tickle_one_idle_cpu`,
//! `smt_power_savings`; and `xen_version`, which selects the behaviour of a
//! Xen release. The default is the current release (4.22).
//!
//! Versions. [`Behaviour::of`] lists every difference between releases that
//! changes results, with the release range and the evidence; the same list
//! is in `docs/schedulers/credit.md`. In short: before 4.0 a running VCPU is
//! charged a whole 10 ms tick (100 credits) when it is found running at a tick
//! and nothing otherwise; before 4.1 weight counts once per domain, not per
//! active VCPU, and placement never moves a VCPU on a flat host; before 4.3 a
//! waking VCPU preempts whenever it has higher priority and idle PCPUs are
//! tickled too; before 3.4 idle PCPUs reschedule every 30 ms and accounting
//! runs from the master PCPU's tick; 3.0.3 (the initial merge) counts 1
//! credit per ms and parks a capped VCPU below idle instead of pausing it.
//!
//! Deviations from Xen: no tasklets, no cpupools (one pool holds every PCPU),
//! one NUMA node per socket, no `sched-gran` other than `cpu`; locks are not
//! modelled, so a `trylock` never fails. Every PCPU's tick is aligned to
//! multiples of the tick period from boot, and accounting runs after the
//! ticks and slice ends due at the same instant, so it sees every running
//! VCPU charged up to that instant (Xen 3.0's order; later releases leave
//! the phase of the accounting timer to boot timing). Quirks Q1 (the 100 ns
//! minimum timer), Q2 (the kick-to-idler branch that never fires), Q4
//! (inactive VCPUs keep their priority) and Q5 (lazy run-queue sort) are
//! reproduced.
//!
//! Variants built on this code (child modules, so they reuse it rather than
//! copy it): [`enhanced`] (`credit-enhanced`, which replaces the middle phase
//! of the decision, [`Credit::pick_next`]) and [`dynweight`]
//! (`credit-dynweight`, which re-derives weights through
//! [`Credit::set_weight`]).
//!
//! Hooks: `init` (timers), `init_domain`, `insert_vcpu` (res_pick),
//! `wake` (boost + tickle), `sleep`, `yield_`, `do_schedule`
//! (csched_schedule with ratelimit and load balancing), `pick_cpu`
//! (_csched_cpu_pick), `timer` (tick and accounting), `adjust`, `adjust_global`,
//! `dump`.

use super::{Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo};
use super::{Allocation, AllocParam, AllocValue, Shares};
use crate::cpumask::CpuMask;
use crate::error::ScenarioError;
use crate::host::Topology;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::time::{Time, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

pub mod dynweight;
pub mod enhanced;
#[cfg(test)]
mod steal_oracle;

/// Priority of a VCPU that woke with credit left (most urgent).
const PRI_BOOST: i8 = 0;
/// Priority of a VCPU with credit.
const PRI_UNDER: i8 = -1;
/// Priority of a VCPU that has run past its share.
const PRI_OVER: i8 = -2;
/// Priority of the idle VCPU.
const PRI_IDLE: i8 = -64;
/// Before 3.0.4: priority of a capped VCPU with negative credit, below the
/// idle VCPU, so it does not run until an accounting leaves it in credit
/// (`CSCHED_PRI_TS_PARKED` of the initial merge, as 3.0.3 shipped it).
const PRI_PARKED: i8 = -65;

/// Credits earned per millisecond of entitlement (1 credit = 100 µs), from
/// 3.0.4 (`CSCHED_CREDITS_PER_TICK` 100 per 10 ms tick).
const CREDITS_PER_MSEC: i64 = 10;
/// Before 3.0.4: 1 credit per millisecond (3.0.3's `CSCHED_TICK` 10 credits
/// per tick, `CSCHED_ACCT_PERIOD` 30 per PCPU per period, bounds ±30).
const CREDITS_PER_MSEC_3_0_3: i64 = 1;
/// Ticks per time slice (1 if the slice is shorter than 3 ms).
const TICKS_PER_TSLICE: u64 = 3;
/// `CSCHED_MIN_TIMER`: meant as 100 µs, used as 100 ns (quirk Q1).
const MIN_TIMER_NS: u64 = 100;
/// Default weight of a domain.
pub const DEFAULT_WEIGHT: i64 = 256;

/// The current Xen release, the default behaviour.
const CURRENT: Version = Version::new(4, 22);
/// The first release with Credit: 3.0.3 (merged into xen-unstable in May
/// 2006, after 3.0.2 was released; 3.0.0 – 3.0.2 had BVT and SEDF only).
const FIRST: Version = Version::with_patch(3, 0, 3);

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
        doc: "A VCPU that ran within this time is cache-hot and is not stolen (xl sched-credit -s -m; Xen 3.4+).",
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
        doc: "Wake one idle PCPU for a waking VCPU instead of all of them (boot option; Xen 4.1+).",
    },
    ParamSpec {
        name: "smt_power_savings",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(false),
        scope: ParamScope::Global,
        doc: "Fill SMT siblings before idle cores (boot option sched_smt_power_savings; Xen 3.4+).",
    },
    ParamSpec {
        name: "xen_version",
        unit: "",
        kind: ParamKind::Version {
            min: FIRST,
            max: CURRENT,
        },
        default: Default::Str("4.22"),
        scope: ParamScope::Global,
        doc: "Xen release whose Credit behaviour to reproduce, from \"3.0.3\" (the first with Credit); see docs/schedulers/credit.md.",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("ticks", "10 ms ticks served"),
    ("accounting_periods", "30 ms accounting periods"),
    ("steals", "VCPUs stolen by a PCPU from a peer's run queue"),
    ("tick_pushes", "running VCPUs pushed to an idle PCPU at a tick"),
    ("parks", "capped VCPUs parked"),
    ("boosts", "wake-ups given BOOST"),
    ("ratelimit_deferrals", "decisions that kept a VCPU for the ratelimit"),
    ("tickles", "PCPUs tickled"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "credit",
    "Credit",
    PARAMS,
    |p, n| sized_scheduler!(n, W => Credit::<W>::new(p)),
)
.about(
    "Xen's Credit scheduler: weights and caps, 30 ms slices, BOOST on wake-up, work stealing.",
    "Xen 3.0.3 - current; default scheduler from 3.1 to 4.11",
)
.with_allocation(Allocation {
    rule: "cap = A (xl sched-credit -c A)",
    since: "3.0.3",
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
.with_check_global(check_global)
.with_counters(COUNTERS);

/// Global parameters that a release did not have yet: (name, first release).
const ADDED_IN: &[(&str, Version)] = &[
    ("tslice_ms", Version::new(4, 2)),
    ("ratelimit_us", Version::new(4, 2)),
    ("lb_ratelimit_us", Version::new(4, 18)),
    ("tickle_one_idle_cpu", Version::new(4, 1)),
    ("vcpu_migration_delay_us", Version::new(3, 4)),
    ("smt_power_savings", Version::new(3, 4)),
];

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
    for &(name, since) in ADDED_IN {
        if v < since && p.is_explicit(name) {
            return Err(ScenarioError::new(
                format!("{path}.{name}"),
                format!(
                    "does not exist in Xen {v} (added in {since}); expected no {name} with xen_version \"{v}\""
                ),
            ));
        }
    }
    Ok(())
}

/// What the selected Xen release does where releases differ in ways that
/// change results. Each field names the releases and the evidence: "B" is the
/// late-2006 code (Xen 3.0.4 era: tick sampling, BOOST, parking by
/// pause), "C" the 2009 code just before 4.0 (tick_suspend, burn_credits),
/// "D" the 4.8 code (commit 0053127890), "R" the 4.22 code
/// (`xen/common/sched/credit.c` at RELEASE-4.22). Where a change is bracketed by two
/// snapshots rather than dated by its commit, the boundary is marked
/// "approximate" and the doc page says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Behaviour {
    /// Before 4.0: the VCPU found running at a tick pays 100 credits; nothing is
    /// charged at a context switch (B; commit 78c9b2a64b "Accurate accounting
    /// for credit scheduler" introduced time-based burning for 4.0).
    sampled_debit: bool,
    /// Before 3.4 (3.3.0-branched still calls `csched_acct` from the master's
    /// tick; 3.4.0-rc1 has the `master_ticker` timer): accounting runs inside
    /// the master PCPU's tick, after that tick's debit, and every PCPU's tick
    /// runs even while it is idle (the generic 10 ms scheduler tick in 3.0,
    /// Credit's own per-PCPU ticker from 3.1, re-armed whatever runs).
    tick_driven_accounting: bool,
    /// Before 3.4 (3.3.0-branched returns a 30 ms slice for the idle VCPU,
    /// 3.4.0-rc1 returns −1): an idle PCPU reschedules every slice, so it
    /// polls for work to steal.
    idle_polls: bool,
    /// Before 4.1 (approximate; B and C add a domain's weight once, D "Make weight
    /// per-vcpu"): shares are weight per domain, not weight × active VCPUs.
    per_domain_weight: bool,
    /// Before 4.1 (approximate; B and C zero the credit, D halves it): the credit of
    /// a VCPU that goes inactive.
    inactive_resets_credit: bool,
    /// Before 4.3 (`__runq_tickle` of RELEASE-4.2.0 still has it, 4.3.0 has
    /// the idle-first rule): a waking VCPU preempts its PCPU whenever it has
    /// strictly higher priority, and, when its PCPU runs a VCPU, idle PCPUs in
    /// its affinity are tickled too: all of them before 4.1, from 4.1 one
    /// (or all with `tickle_one_idle_cpu` off).
    old_tickle: bool,
    /// From 4.1 (RELEASE-4.1.0 has `opt_tickle_one_idle`): the boot option
    /// `tickle_one_idle_cpu` exists.
    tickle_one_option: bool,
    /// 4.3 – 4.6 (RELEASE-4.3.0 to 4.6.x; commit f02a5760c7, 2 Nov 2015, in
    /// 4.7, kicks only if cur could run on one of the idlers, which never
    /// holds there: quirk Q2): a waker that finds no idle PCPU in its
    /// affinity while some are idle and preempts the running VCPU also sets
    /// that VCPU's migrating flag, so once switched out it is moved by
    /// `csched_cpu_pick`, to an idle PCPU if its affinity has one.
    kick_away: bool,
    /// Before 4.7 (commit 47d5292995 "consider tickled pCPUs as busy"): a tickled
    /// idle PCPU stays in the idlers mask until it reschedules.
    tickled_stay_idle: bool,
    /// Before 4.1 (approximate; B and C): `cpu_pick` always counts the VCPU's own
    /// PCPU as idle, so on a flat host it never moves a VCPU; there is no
    /// MIGRATING flag (a wake after a migration is boosted), no placement at
    /// insert and no per-socket factor of 2.
    old_pick: bool,
    /// From 4.1 (approximate; B and C have no YIELD flag): `yield` re-queues
    /// behind one lower-priority VCPU.
    yield_flag: bool,
    /// From 4.5 (soft affinity was added to Credit in 4.5): soft affinity is honoured.
    soft_affinity: bool,
    /// Before 4.3 (RELEASE-4.2.0 walks the busy PCPUs from the stealer's
    /// neighbour; 4.3.0 walks them node by node): work stealing order.
    steal_from_neighbour: bool,
    /// From 4.9 (commit 89216c7999, 7 Apr 2017, "treat pCPUs more evenly
    /// during balancing"): within a node the walk starts at the node's
    /// `balance_bias`, the peer last stolen from; 4.3 – 4.8 start at the
    /// node's first busy PCPU every time.
    balance_bias: bool,
    /// From 4.7 (commit 66c7449a4d, 29 Feb 2016, "avoid boosting vCPUs being
    /// just migrated"): `csched_cpu_pick` sets the MIGRATING flag and the
    /// wake that follows a migration is not boosted. 4.1 – 4.6 boost it.
    migrating_flag: bool,
    /// From 4.2: `ratelimit_us` and `tslice_ms` exist.
    ratelimit: bool,
    /// From 4.8 (commit 0053127890): the ratelimit returns the remaining time
    /// (quirk Q1); before, a full ratelimit.
    ratelimit_remaining: bool,
    /// From 4.18 (approximate; D does not, R does): a yield bypasses the
    /// ratelimit, and the YIELD flag stays set while the VCPU is queued.
    yield_bypasses_ratelimit: bool,
    /// From 4.18 (commits 58feb9e0ac, e282067cf2): load-balance ratelimit, and
    /// a yielding VCPU is never stolen.
    lb_ratelimit: bool,
    /// From 4.1 to 4.12 (fixed by 5c8c0ae7c4; lower bound approximate: B and C
    /// unpause before clearing PARKED, D clears first): an unparked VCPU's wake
    /// is boosted.
    unpark_boost_bug: bool,
    /// From 3.0.4 (commit 59f9d8ef44, 27 Oct 2006, "Allow non CPU consuming
    /// wake-to-run latency sensitive VCPUs to preempt CPU consuming ones"): an
    /// UNDER VCPU that wakes gets BOOST. Xen 3.0.3 was branched on 15 Oct 2006
    /// (tag `3.0.3-branched`) without it: its `csched_vcpu_wake` only queues
    /// and tickles, so a waker preempts only a VCPU of lower priority.
    boost: bool,
    /// Before 3.0.4 (the initial merge, as the `3.0.3-branched` tag has it;
    /// 3.0.4 scaled it by 10 with `CSCHED_CREDITS_PER_TICK`): 1 credit per
    /// millisecond, so a tick debits 10, a PCPU adds 30 per period and the
    /// bounds are ±30; caps and fair shares are rounded up on that scale.
    credits_per_ms_3_0_3: bool,
    /// Before 3.0.4 (3.0.3's `csched_acct`; 3.0.4 pauses instead): a capped
    /// VCPU whose credit is negative at accounting gets the PARKED priority,
    /// below the idle VCPU, and is not paused; it stays queued behind idle
    /// (a running one finishes its slice first) until an accounting leaves
    /// it in credit. The cap is not split per VCPU.
    park_by_priority: bool,
    /// Before 3.0.4 (3.0.3's `csched_vcpu_init` calls `csched_vcpu_acct(svc,
    /// 0)`; 3.0.4's `csched_vcpu_init` does not): a new VCPU is active from
    /// creation, so the first accounting already gives it credit.
    active_at_creation: bool,
    /// From 3.0.4 (3.0.3 has no `csched_cpu_pick` and no `pick_cpu` hook): a
    /// VCPU found running at a tick may be pushed to a better PCPU.
    tick_push: bool,
}

impl Behaviour {
    fn of(v: Version) -> Behaviour {
        let before = |major, minor| v < Version::new(major, minor);
        Behaviour {
            sampled_debit: before(4, 0),
            tick_driven_accounting: before(3, 4),
            idle_polls: before(3, 4),
            per_domain_weight: before(4, 1),
            inactive_resets_credit: before(4, 1),
            old_tickle: before(4, 3),
            tickle_one_option: !before(4, 1),
            kick_away: !before(4, 3) && before(4, 7),
            tickled_stay_idle: before(4, 7),
            old_pick: before(4, 1),
            yield_flag: !before(4, 1),
            soft_affinity: !before(4, 5),
            steal_from_neighbour: before(4, 3),
            balance_bias: !before(4, 9),
            migrating_flag: !before(4, 7),
            ratelimit: !before(4, 2),
            ratelimit_remaining: !before(4, 8),
            yield_bypasses_ratelimit: !before(4, 18),
            lb_ratelimit: !before(4, 18),
            unpark_boost_bug: !before(4, 1) && before(4, 13),
            boost: v >= Version::with_patch(3, 0, 4),
            credits_per_ms_3_0_3: v < Version::with_patch(3, 0, 4),
            park_by_priority: v < Version::with_patch(3, 0, 4),
            active_at_creation: v < Version::with_patch(3, 0, 4),
            tick_push: v >= Version::with_patch(3, 0, 4),
        }
    }
}

#[derive(Clone, Debug)]
struct Unit {
    credit: i32,
    /// Credit right after the last accounting (Xen's `credit_last` statistic).
    credit_last: i32,
    pri: i8,
    parked: bool,
    yield_: bool,
    /// Set by `pick_cpu` with commit; a wake that finds it set does not boost.
    migrating: bool,
    /// An unpark is about to wake this VCPU and PARKED is still logically set
    /// during that wake, so it is not boosted.
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
    /// Neighbours in the active-domain list ([`NIL`] at the ends).
    prev: u32,
    next: u32,
}

/// No domain: the end of the active-domain list.
const NIL: u32 = u32::MAX;

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
pub struct Credit<const W: usize> {
    version: Version,
    b: Behaviour,
    tslice_ns: u64,
    tick_period_ns: u64,
    credits_per_tslice: i32,
    /// Credits per millisecond (10; 1 before 3.0.4).
    credits_per_msec: i64,
    ratelimit_ns: u64,
    lb_ratelimit_ns: u64,
    migration_delay_ns: u64,
    tickle_one_idle: bool,
    smt_power_savings: bool,

    units: Vec<Unit>,
    doms: Vec<Dom>,
    pcpus: Vec<Pcpu>,
    /// Head of the domains with active VCPUs, in Xen's list order (a list
    /// linked through `Dom::prev`/`next`, so moves and removals are O(1)).
    active_head: u32,
    /// Reused buffer for the VCPUs accounting walks (no allocation per period).
    scratch_units: Vec<VcpuId>,
    /// Xen 4.8 – 4.12's `cpumask_any` at domain creation draws from this
    /// stream (made at the first creation).
    any_rng: Option<crate::rng::Rng>,
    /// Idle PCPUs that have not been tickled.
    idlers: CpuMask<W>,
    /// PCPUs with `nr_runnable > 1`: the only ones work stealing looks at
    /// (a faster form of Xen's per-peer `nr_runnable` test).
    overloaded: CpuMask<W>,
    /// PCPUs whose run queue's head is UNDER or BOOST: the only peers a PCPU
    /// whose best local candidate is OVER can steal from, since a steal scans
    /// a peer's queue from the head and stops at the first VCPU of priority
    /// OVER or lower (see [`Credit::load_balance`]).
    steal_above_over: CpuMask<W>,
    /// One socket, one thread per core: `cpu_pick` cannot prefer one idle
    /// PCPU over another, so its grouping loop is skipped.
    flat: bool,
    /// Σ weight over active VCPUs (over active domains before 4.1).
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

impl<const W: usize> Credit<W> {
    /// A Credit scheduler with validated global parameters.
    pub fn new(p: &Params) -> Credit<W> {
        let version = p.version("xen_version");
        let mut c = Credit {
            version,
            b: Behaviour::of(version),
            tslice_ns: 0,
            tick_period_ns: 0,
            credits_per_tslice: 0,
            credits_per_msec: CREDITS_PER_MSEC,
            ratelimit_ns: 0,
            lb_ratelimit_ns: 0,
            migration_delay_ns: 0,
            tickle_one_idle: true,
            smt_power_savings: false,
            units: Vec::new(),
            doms: Vec::new(),
            pcpus: Vec::new(),
            active_head: NIL,
            scratch_units: Vec::new(),
            any_rng: None,
            idlers: CpuMask::<W>::empty(),
            overloaded: CpuMask::<W>::empty(),
            steal_above_over: CpuMask::<W>::empty(),
            flat: true,
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
        let b = self.b;
        let tslice_ms = if b.ratelimit {
            p.int("tslice_ms") as u64
        } else {
            30
        };
        let ticks = if tslice_ms < TICKS_PER_TSLICE {
            1
        } else {
            TICKS_PER_TSLICE
        };
        self.tslice_ns = tslice_ms * NS_PER_MS;
        // Xen keeps the tick period in whole microseconds.
        self.tick_period_ns = (tslice_ms * 1000 / ticks) * NS_PER_US;
        self.credits_per_msec = if b.credits_per_ms_3_0_3 {
            CREDITS_PER_MSEC_3_0_3
        } else {
            CREDITS_PER_MSEC
        };
        self.credits_per_tslice = (self.credits_per_msec as u64 * tslice_ms) as i32;
        self.ratelimit_ns = if b.ratelimit {
            (p.int("ratelimit_us") as u64 * NS_PER_US).min(self.tslice_ns)
        } else {
            0
        };
        self.lb_ratelimit_ns = if b.lb_ratelimit {
            p.int("lb_ratelimit_us") as u64 * NS_PER_US
        } else {
            0
        };
        self.migration_delay_ns = p.int("vcpu_migration_delay_us") as u64 * NS_PER_US;
        // Before 4.1 every idle PCPU in the waker's affinity is tickled.
        self.tickle_one_idle = b.tickle_one_option && p.bool("tickle_one_idle_cpu");
        self.smt_power_savings = p.bool("smt_power_savings");
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
        ctx.hard_affinity(v).sized::<W>().count() == 1
    }

    /// Xen's "has soft affinity", for releases that have soft affinity.
    fn has_soft(&self, ctx: &SchedCtx, v: VcpuId) -> bool {
        self.b.soft_affinity && ctx.has_soft_affinity(v)
    }

    /// Affinity for a balancing step: soft ∩ hard (or hard if empty), or hard.
    fn affinity(ctx: &SchedCtx, v: VcpuId, step: Step) -> CpuMask<W> {
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

    fn add_runnable(&mut self, p: PcpuId) {
        let pc = &mut self.pcpus[p.idx()];
        pc.nr_runnable += 1;
        if pc.nr_runnable > 1 {
            self.overloaded.set(p);
        }
    }

    fn sub_runnable(&mut self, p: PcpuId) {
        let pc = &mut self.pcpus[p.idx()];
        pc.nr_runnable -= 1;
        if pc.nr_runnable <= 1 {
            self.overloaded.clear(p);
        }
    }

    /// Set `v`'s priority where it may be queued (accounting changes queued
    /// VCPUs' priorities in place).
    fn set_queued_pri(&mut self, ctx: &SchedCtx, v: VcpuId, pri: i8) {
        let u = self.um(v);
        // The same priority leaves the queue's head as it was (accounting
        // sets every active VCPU's priority each period, changed or not).
        if u.pri == pri {
            return;
        }
        u.pri = pri;
        if u.on_runq {
            self.note_head(ctx.processor(v));
        }
    }

    /// Keep `p`'s bit of [`Credit::steal_above_over`] after its queue's head
    /// or the head's priority changed.
    fn note_head(&mut self, p: PcpuId) {
        let above = self.pcpus[p.idx()]
            .runq
            .front()
            .is_some_and(|&v| self.units[v.idx()].pri > PRI_OVER);
        if above {
            self.steal_above_over.set(p);
        } else {
            self.steal_above_over.clear(p);
        }
    }

    /// Xen's `__runq_insert`: before the first strictly-lower priority; a
    /// yielder goes one further back, behind one lower-priority VCPU.
    fn runq_insert(&mut self, p: PcpuId, v: VcpuId) {
        let pri = self.u(v).pri;
        let yielding = self.u(v).yield_;
        let q = &self.pcpus[p.idx()].runq;
        let mut i = q
            .iter()
            .position(|&x| self.units[x.idx()].pri < pri)
            .unwrap_or(q.len());
        // Stopping before a queued VCPU means stopping at a non-idle element
        // that is not the last (the idle VCPU is Xen's last element).
        if yielding && i < q.len() {
            i += 1;
        }
        let q = &mut self.pcpus[p.idx()].runq;
        if i == q.len() {
            q.push_back(v);
        } else {
            q.insert(i, v);
        }
        self.um(v).on_runq = true;
        self.note_head(p);
    }

    fn runq_remove(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.pcpus[p.idx()].runq;
        if q.front() == Some(&v) {
            q.pop_front();
        } else if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        let u = self.um(v);
        u.on_runq = false;
        // Picking a VCPU off the queue clears its YIELD flag.
        u.yield_ = false;
        self.note_head(p);
    }

    /// Lazy sort: UNDER and BOOST ahead of OVER, order otherwise kept.
    fn runq_sort(&mut self, p: PcpuId) {
        let units = &self.units;
        let q = &mut self.pcpus[p.idx()].runq;
        if q.iter().all(|&v| units[v.idx()].pri >= PRI_UNDER) {
            return;
        }
        // A stable sort on "is OVER" is the partition, in place (no queue
        // built and dropped at every tick).
        q.make_contiguous()
            .sort_by_key(|&v| units[v.idx()].pri < PRI_UNDER);
        self.note_head(p);
    }

    /// Charge the running VCPU for the time since `start_time` (4.0+).
    fn burn_credits(&mut self, v: VcpuId, now: Time) {
        if self.b.sampled_debit {
            return; // debited by tick sampling instead
        }
        let u = &mut self.units[v.idx()];
        let delta = now.0 as i64 - u.start_time;
        if delta <= 0 {
            return;
        }
        let per_ms = self.credits_per_msec as u64;
        let val = delta as u64 * per_ms + u.residual;
        let credits = val / NS_PER_MS;
        u.residual = val % NS_PER_MS;
        u.credit -= credits as i32;
        u.start_time += (credits * NS_PER_MS / per_ms) as i64;
    }

    /// Put domain `d` at the head of the active-domain list (Xen's `list_add`).
    fn active_push_head(&mut self, d: DomId) {
        let old = self.active_head;
        let dom = &mut self.doms[d.idx()];
        dom.prev = NIL;
        dom.next = old;
        if old != NIL {
            self.doms[old as usize].prev = d.0;
        }
        self.active_head = d.0;
    }

    /// Take domain `d` out of the active-domain list (Xen's `list_del`).
    fn active_unlink(&mut self, d: DomId) {
        let (prev, next) = {
            let dom = &self.doms[d.idx()];
            (dom.prev, dom.next)
        };
        if prev == NIL {
            self.active_head = next;
        } else {
            self.doms[prev as usize].next = next;
        }
        if next != NIL {
            self.doms[next as usize].prev = prev;
        }
        let dom = &mut self.doms[d.idx()];
        dom.prev = NIL;
        dom.next = NIL;
    }

    fn acct_start(&mut self, v: VcpuId, d: DomId) {
        if self.u(v).active {
            return;
        }
        self.um(v).active = true;
        let per_domain = self.b.per_domain_weight;
        let dom = &mut self.doms[d.idx()];
        dom.active_units.insert(0, v);
        if !per_domain {
            self.weight += u64::from(dom.weight);
        }
        if !dom.in_active_list {
            dom.in_active_list = true;
            if per_domain {
                self.weight += u64::from(dom.weight);
            }
            self.active_push_head(d);
        }
    }

    fn acct_stop(&mut self, v: VcpuId, d: DomId) {
        if !self.u(v).active {
            return;
        }
        self.um(v).active = false;
        let per_domain = self.b.per_domain_weight;
        let dom = &mut self.doms[d.idx()];
        dom.active_units.retain(|&x| x != v);
        if !per_domain {
            self.weight -= u64::from(dom.weight);
        }
        if dom.active_units.is_empty() {
            dom.in_active_list = false;
            if per_domain {
                self.weight -= u64::from(dom.weight);
            }
            self.active_unlink(d);
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

    /// Change a domain's weight (what `xl sched-credit -w` does): the total
    /// of active weight follows at once, credit at the next accounting.
    fn set_weight(&mut self, dom: DomId, new_weight: u32) {
        let d = &mut self.doms[dom.idx()];
        if d.in_active_list {
            let n = if self.b.per_domain_weight {
                1
            } else {
                d.active_units.len() as u64
            };
            self.weight -= u64::from(d.weight) * n;
            self.weight += u64::from(new_weight) * n;
        }
        d.weight = new_weight;
    }

    // ----- placement ---------------------------------------------------------------

    /// `_csched_cpu_pick`: stay if the current PCPU is (or would be) idle,
    /// otherwise prefer an idle PCPU, spreading over cores and sockets.
    fn cpu_pick(&mut self, ctx: &SchedCtx, v: VcpuId, commit: bool) -> PcpuId {
        if self.b.old_pick {
            return self.cpu_pick_old(ctx, v, commit);
        }
        let cur = ctx.processor(v);
        if self.flat && !self.has_soft(ctx, v) {
            return self.cpu_pick_flat_hard(ctx, cur, v);
        }
        let topo = ctx.topology();
        let mut cpu = cur;
        let mut bias_owner: Option<PcpuId> = None;
        for step in [Step::Soft, Step::Hard] {
            if step == Step::Soft && !self.has_soft(ctx, v) {
                continue;
            }
            let mut cpus = Self::affinity(ctx, v, step);
            if cpus.is_empty() {
                continue;
            }
            cpu = if cpus.test(cur) {
                cur
            } else {
                cpus.cycle(cur).unwrap()
            };
            let mut idlers = self.idlers;
            if cur == cpu && self.pcpus[cpu.idx()].runq.is_empty() {
                idlers.set(cpu);
            }
            cpus = cpus.and(&idlers);
            if !cpus.test(cpu) && !cpus.is_empty() {
                cpu = cpus.cycle(cpu).unwrap();
            }
            cpus.clear(cpu);
            // On a flat host every idle PCPU is as good as any other: the
            // grouping loop below would never move `cpu`.
            if !self.flat {
                while let Some(nxt) = cpus.cycle(cpu) {
                    let same_socket = topo.socket_mask(cpu).test(nxt);
                    let (factor, cpu_idlers, nxt_idlers) = if same_socket {
                        (
                            1,
                            idlers.and(&topo.sibling_mask(cpu).sized::<W>()),
                            idlers.and(&topo.sibling_mask(nxt).sized::<W>()),
                        )
                    } else {
                        (
                            2,
                            idlers.and(&topo.socket_mask(cpu).sized::<W>()),
                            idlers.and(&topo.socket_mask(nxt).sized::<W>()),
                        )
                    };
                    let (wc, wn) = (cpu_idlers.count(), nxt_idlers.count());
                    let better = if self.smt_power_savings {
                        wc > wn
                    } else {
                        wc * factor < wn
                    };
                    if better {
                        let cand = nxt_idlers.and(&cpus);
                        bias_owner = Some(nxt);
                        cpu = cand.cycle(self.pcpus[nxt.idx()].idle_bias).unwrap_or(nxt);
                        cpus = cpus.andnot(&topo.sibling_mask(cpu).sized::<W>());
                    } else {
                        cpus = cpus.andnot(&nxt_idlers);
                    }
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

    /// [`Credit::cpu_pick`]'s hard-affinity step alone on a flat host (no
    /// soft affinity to try first, no grouping loop, no idle bias to
    /// commit): the same choice, without building the intermediate masks.
    /// `cpu` is the VCPU's PCPU if its affinity allows it (else the next one
    /// that does); it stays if it is (or would be, its queue being empty)
    /// idle, and otherwise gives way to the next idle PCPU of the affinity.
    #[inline]
    fn cpu_pick_flat_hard(&self, ctx: &SchedCtx, cur: PcpuId, v: VcpuId) -> PcpuId {
        let hard = ctx.hard_affinity(v).sized::<W>();
        let cpu = if hard.test(cur) {
            cur
        } else {
            hard.cycle(cur).expect("affinity masks are non-empty")
        };
        if (cpu == cur && self.pcpus[cpu.idx()].runq.is_empty()) || self.idlers.test(cpu) {
            return cpu;
        }
        hard.cycle_and(&self.idlers, cpu).unwrap_or(cpu)
    }

    /// `csched_cpu_pick` before 4.1: the VCPU's own PCPU always counts as
    /// idle, the same comparison of idle threads within a socket and of idle
    /// PCPUs across sockets (no factor of 2), no soft affinity.
    fn cpu_pick_old(&mut self, ctx: &SchedCtx, v: VcpuId, commit: bool) -> PcpuId {
        let cur = ctx.processor(v);
        let topo = ctx.topology();
        let aff = ctx.hard_affinity(v).sized::<W>();
        let mut cpu = if aff.test(cur) {
            cur
        } else {
            aff.cycle(cur).unwrap()
        };
        if self.flat {
            return cpu;
        }
        let mut idlers = self.idlers;
        idlers.set(cpu);
        let mut cpus = aff.and(&idlers);
        cpus.clear(cpu);
        while let Some(nxt) = cpus.cycle(cpu) {
            let (cpu_idlers, nxt_idlers) = if topo.socket_mask(cpu).test(nxt) {
                (
                    idlers.and(&topo.sibling_mask(cpu).sized::<W>()),
                    idlers.and(&topo.sibling_mask(nxt).sized::<W>()),
                )
            } else {
                (
                    idlers.and(&topo.socket_mask(cpu).sized::<W>()),
                    idlers.and(&topo.socket_mask(nxt).sized::<W>()),
                )
            };
            let (wc, wn) = (cpu_idlers.count(), nxt_idlers.count());
            let better = if self.smt_power_savings {
                wc > wn
            } else {
                wc < wn
            };
            if better {
                // Xen cycles over nxt's idle group; vmsched keeps the choice
                // inside the VCPU's affinity.
                let cand = nxt_idlers.and(&aff);
                cpu = cand.cycle(self.pcpus[nxt.idx()].idle_bias).unwrap_or(nxt);
                if commit {
                    self.pcpus[nxt.idx()].idle_bias = cpu;
                }
                cpus = cpus.andnot(&topo.sibling_mask(cpu).sized::<W>());
            } else {
                cpus = cpus.andnot(&nxt_idlers);
            }
        }
        cpu
    }

    /// Where Xen before 4.8 put a new VCPU (no scheduler placement at insert):
    /// VCPU 0 of a domain on the least-populated PCPU, the highest-numbered
    /// one on a tie (`default_vcpu0_location`); VCPU i on the PCPU after VCPU
    /// i-1's. Both within hard affinity. VCPUs are inserted in id order, so
    /// those with smaller ids are already placed. Domain 0 is not created by
    /// the toolstack: Xen builds it at boot with VCPU 0 on PCPU 0
    /// (`alloc_dom0_vcpu0`), here the first PCPU of its affinity.
    fn initial_cpu_old(ctx: &SchedCtx, v: VcpuId) -> PcpuId {
        let aff = ctx.hard_affinity(v).sized::<W>();
        if ctx.vcpu_index(v) > 0 {
            let prev = ctx.processor(VcpuId(v.0 - 1));
            return aff.cycle(prev).expect("affinity masks are non-empty");
        }
        let d = ctx.domain_of(v);
        if d == DomId(0) && ctx.is_driver(d) {
            return aff.first().expect("affinity masks are non-empty");
        }
        let mut count = vec![0u32; ctx.npcpus()];
        for u in 0..v.0 {
            count[ctx.processor(VcpuId(u)).idx()] += 1;
        }
        let mut best = aff.first().expect("affinity masks are non-empty");
        for p in aff.iter() {
            if count[p.idx()] <= count[best.idx()] {
                best = p;
            }
        }
        best
    }

    /// Where Xen 4.8 – 4.12 creates a VCPU (`XEN_DOMCTL_max_vcpus`): VCPU 0
    /// on `cpumask_any` of the pool's PCPUs, a PCPU drawn at random (here
    /// from the run's seeded stream `credit:cpumask_any`, uniformly, where
    /// Xen steps `get_random() % weight` PCPUs on from the first); VCPU i on
    /// the PCPU after the one VCPU i−1 was placed on.
    fn initial_cpu_any(&mut self, ctx: &SchedCtx, v: VcpuId) -> PcpuId {
        let online = ctx.topology().all().sized::<W>();
        if ctx.vcpu_index(v) > 0 {
            let prev = ctx.processor(VcpuId(v.0 - 1));
            return online.cycle(prev).expect("a host has PCPUs");
        }
        let rng = self
            .any_rng
            .get_or_insert_with(|| ctx.rng("credit:cpumask_any"));
        let k = rng.below(online.count() as u64) as usize;
        let p = online.iter().nth(k).expect("k is below the count");
        p
    }

    // ----- tickling ----------------------------------------------------------------

    /// `__runq_tickle`: who should run a VCPU that just became runnable.
    fn runq_tickle(&mut self, ctx: &mut SchedCtx, new: VcpuId) {
        let cpu = ctx.processor(new);
        let cur_pri = self.cur_pri(ctx, cpu);
        let new_pri = self.u(new).pri;
        let idle = self.idlers;
        let mut mask = CpuMask::<W>::empty();
        if self.b.old_tickle {
            if new_pri > cur_pri {
                mask.set(cpu);
            }
            if cur_pri > PRI_IDLE && !idle.is_empty() {
                let cand = idle.and(&ctx.hard_affinity(new).sized::<W>());
                if self.tickle_one_idle {
                    // 4.1 – 4.2: one idler, cycled from this PCPU's last.
                    if !cand.is_empty() {
                        let me = ctx.local().unwrap_or(cpu);
                        let last = &mut self.pcpus[me.idx()].last_tickle;
                        *last = cand.cycle(*last).unwrap();
                        mask.set(*last);
                    }
                } else {
                    mask = mask.or(&cand);
                }
                mask = mask.and(&ctx.hard_affinity(new).sized::<W>());
            }
        } else if (Self::pinned(ctx, new) && idle.test(cpu))
            || cur_pri == PRI_IDLE
            || (idle.is_empty() && new_pri > cur_pri)
        {
            // A VCPU pinned to its idle PCPU runs there; otherwise run here
            // if this PCPU is idle, or preempt if no PCPU is idle.
            mask.set(cpu);
        } else if !idle.is_empty() {
            for step in [Step::Soft, Step::Hard] {
                if step == Step::Soft && !self.has_soft(ctx, new) {
                    continue;
                }
                let cand = Self::affinity(ctx, new, step).and(&idle);
                if cand.is_empty() && step == Step::Soft {
                    continue;
                }
                if cand.is_empty() {
                    // 4.3 – 4.6 push cur away to be re-placed once switched
                    // out; from 4.7 Xen means to push it to an idler only if
                    // it may run there, but its test uses the waker's
                    // affinity, so it only preempts (Q2).
                    if new_pri > cur_pri {
                        if self.b.kick_away {
                            if let Some(c) = ctx.current(cpu) {
                                ctx.migrate(c);
                            }
                        }
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
            if !self.b.tickled_stay_idle {
                self.idlers.clear(c);
            }
            self.stat_tickles += 1;
            ctx.tickle(c);
        }
    }

    // ----- work stealing -------------------------------------------------------------

    /// `csched_runq_steal`'s choice, without taking it: the first VCPU of
    /// `peer`'s queue, scanned from the head and stopping at the first of
    /// priority `pri` or lower, that `cpu` may run in this balancing step.
    fn runq_steal_find(
        &self,
        ctx: &SchedCtx,
        peer: PcpuId,
        cpu: PcpuId,
        pri: i8,
        step: Step,
    ) -> Option<VcpuId> {
        ctx.current(peer)?; // an idle peer will run its own queue
        let now = ctx.now();
        for &sv in &self.pcpus[peer.idx()].runq {
            let u = &self.units[sv.idx()];
            if u.pri <= pri {
                break;
            }
            if u.yield_ && self.b.lb_ratelimit {
                continue;
            }
            if step == Step::Soft && !self.has_soft(ctx, sv) {
                continue;
            }
            let hot = self.migration_delay_ns > 0
                && now.since(u.last_sched_time) < self.migration_delay_ns;
            if Self::affinity(ctx, sv, step).test(cpu) && !hot {
                return Some(sv);
            }
        }
        None
    }

    /// Move a stolen VCPU `sv` from `peer`'s queue to `cpu`.
    fn take(&mut self, peer: PcpuId, cpu: PcpuId, sv: VcpuId) {
        self.runq_remove(peer, sv);
        self.sub_runnable(peer);
        self.add_runnable(cpu);
        self.stat_steals += 1;
    }

    /// The peers `cpu` may steal from when its best local candidate has
    /// priority `snext_pri` (OVER or IDLE): busy PCPUs with a queue, and for
    /// an OVER candidate only those whose queue's head is above OVER. Every
    /// peer left out would make [`Credit::runq_steal_find`] return nothing
    /// (it stops at the head), so the first peer that yields a VCPU, in the
    /// scan order, is the same as when every busy peer is tried, as Xen
    /// does; skipping the rest at once keeps a decision from costing a scan
    /// of every PCPU (Xen's own skip is per peer, on `nr_runnable`).
    fn steal_candidates(&self, cpu: PcpuId, snext_pri: i8) -> CpuMask<W> {
        let mut workers = self.overloaded.andnot(&self.idlers);
        if snext_pri >= PRI_OVER {
            workers = workers.and(&self.steal_above_over);
        }
        workers.clear(cpu);
        workers
    }

    /// `csched_load_balance`'s choice: the peer and the VCPU of strictly
    /// higher priority than `snext_pri` it would steal, if any, and the
    /// balancing node whose `balance_bias` it sets (None before 4.9).
    /// `workers` gives the peers to try (each node's in turn).
    fn balance_choice(
        &self,
        ctx: &SchedCtx,
        cpu: PcpuId,
        snext_pri: i8,
        workers: &CpuMask<W>,
    ) -> Option<(PcpuId, VcpuId, Option<usize>)> {
        let topo: &Topology = ctx.topology();
        if self.b.steal_from_neighbour {
            let mut peer = cpu;
            let mut left = *workers;
            while let Some(p) = left.cycle(peer) {
                peer = p;
                left.clear(peer);
                if let Some(sv) = self.runq_steal_find(ctx, peer, cpu, snext_pri, Step::Hard) {
                    return Some((peer, sv, None));
                }
            }
            return None;
        }
        let nodes = topo.sockets;
        let per_node = topo.cores_per_socket * topo.threads_per_core;
        for step in [Step::Soft, Step::Hard] {
            // With no soft affinity anywhere the soft step would scan every
            // peer's queue and take nothing (each VCPU fails `has_soft`).
            if step == Step::Soft && !(self.b.soft_affinity && ctx.any_soft_affinity()) {
                continue;
            }
            let node = topo.socket_of(cpu);
            let mut peer_node = node;
            loop {
                let node_cpus = topo
                    .socket_mask(PcpuId(peer_node * per_node))
                    .sized::<W>();
                let in_node = node_cpus.and(workers);
                // 4.9+: from the node's balance bias; 4.3 – 4.8: from the
                // node's first busy PCPU (`cpumask_first(&workers)`).
                let start = if self.b.balance_bias {
                    in_node.cycle(self.balance_bias[peer_node as usize])
                } else {
                    in_node.first()
                };
                if let Some(first) = start {
                    let mut peer = first;
                    loop {
                        if let Some(sv) = self.runq_steal_find(ctx, peer, cpu, snext_pri, step) {
                            let bias = self.b.balance_bias.then_some(peer_node as usize);
                            return Some((peer, sv, bias));
                        }
                        peer = in_node.cycle(peer).unwrap();
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
        None
    }

    /// `csched_load_balance`: a VCPU of strictly higher priority than
    /// `snext_pri` stolen from a busy peer, if any.
    fn load_balance(&mut self, ctx: &SchedCtx, cpu: PcpuId, snext_pri: i8) -> Option<VcpuId> {
        let workers = self.steal_candidates(cpu, snext_pri);
        // No candidate peer: every scan below would find nothing.
        let choice = if workers.is_empty() {
            None
        } else {
            self.balance_choice(ctx, cpu, snext_pri, &workers)
        };
        #[cfg(test)]
        {
            // The oracle: Xen's scan of every busy peer with a queue.
            let mut all = self.overloaded.andnot(&self.idlers);
            all.clear(cpu);
            let scan = self.balance_choice(ctx, cpu, snext_pri, &all);
            assert_eq!(choice, scan, "steal at {:?} by pcpu {cpu}", ctx.now());
        }
        let (peer, sv, node) = choice?;
        if let Some(n) = node {
            self.balance_bias[n] = peer;
        }
        self.take(peer, cpu, sv);
        ctx.count_queue_op();
        Some(sv)
    }

    // ----- the decision (csched_schedule, in three phases) ---------------------------

    /// First phase of `csched_schedule`: charge the previous VCPU and, if the
    /// rate limit keeps it running, return that decision; otherwise put it
    /// back in the run queue (or drop it from `nr_runnable` if it blocked).
    /// Variants of Credit run this phase as it is (`credit-enhanced` without
    /// the rate limit: `ratelimit` false).
    fn schedule_prev(
        &mut self,
        ctx: &mut SchedCtx,
        cpu: PcpuId,
        ratelimit: bool,
    ) -> Option<Decision> {
        let now = ctx.now();
        let c = ctx.current(cpu)?;
        let runtime = now.since(self.u(c).state_entry_time);
        self.burn_credits(c, now);
        self.um(c).start_time -= now.0 as i64;
        self.um(c).last_sched_time = now;
        // Rate limit: let a VCPU that has just started keep running.
        if ratelimit && self.ratelimit_holds(ctx, c, runtime) {
            self.um(c).start_time += now.0 as i64;
            self.stat_ratelimited += 1;
            let slice = if !self.b.ratelimit_remaining {
                self.ratelimit_ns
            } else if runtime < MIN_TIMER_NS {
                MIN_TIMER_NS
            } else {
                self.ratelimit_ns - runtime
            };
            return Some(Decision {
                next: Some(c),
                slice_ns: Some(slice),
                migrated: false,
            });
        }
        if ctx.is_runnable(c) {
            self.runq_insert(cpu, c);
            ctx.count_queue_op();
        } else {
            self.sub_runnable(cpu);
        }
        // Before 4.18 YIELD is cleared as the VCPU is scheduled out;
        // from 4.18 it stays set while the VCPU is queued.
        if !self.b.yield_bypasses_ratelimit {
            self.um(c).yield_ = false;
        }
        None
    }

    /// Would the rate limit keep the running `c`, which has run `runtime_ns`
    /// since it was switched in, at this decision?
    fn ratelimit_holds(&self, ctx: &SchedCtx, c: VcpuId, runtime_ns: u64) -> bool {
        let yielded = self.u(c).yield_ && self.b.yield_bypasses_ratelimit;
        !yielded && self.ratelimit_ns > 0 && ctx.is_runnable(c) && runtime_ns < self.ratelimit_ns
    }

    /// Second phase: Credit's choice. The head of the local run queue, or,
    /// when that is OVER or idle, a strictly higher-priority VCPU stolen from
    /// a busy peer. Returns the choice (taken off its queue) and whether it
    /// was stolen.
    fn pick_next(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> (Option<VcpuId>, bool) {
        let now = ctx.now();
        // A PARKED head (3.0.3) is queued behind the idle VCPU: idle is next.
        let head = self.pcpus[cpu.idx()]
            .runq
            .front()
            .copied()
            .filter(|&v| self.u(v).pri > PRI_IDLE);
        let head_pri = head.map_or(PRI_IDLE, |v| self.u(v).pri);
        let lb_ok = match self.pcpus[cpu.idx()].last_load_balance {
            None => true,
            Some(t) => self.lb_ratelimit_ns == 0 || now.since(t) > self.lb_ratelimit_ns,
        };
        if head_pri <= PRI_OVER && lb_ok {
            self.pcpus[cpu.idx()].last_load_balance = Some(now);
            if let Some(sv) = self.load_balance(ctx, cpu, head_pri) {
                ctx.set_processor(sv, cpu);
                return (Some(sv), true);
            }
        }
        if let Some(v) = head {
            self.runq_remove(cpu, v);
            ctx.count_queue_op();
        }
        (head, false)
    }

    /// Last phase: `snext` (already off every run queue) runs on `cpu` for a
    /// full slice, or the PCPU goes idle; idlers mask, start time and ticker
    /// follow.
    fn switch_to(
        &mut self,
        ctx: &mut SchedCtx,
        cpu: PcpuId,
        snext: Option<VcpuId>,
        migrated: bool,
    ) -> Decision {
        let now = ctx.now();
        match snext {
            None => self.idlers.set(cpu),
            Some(_) => self.idlers.clear(cpu),
        }
        if let Some(n) = snext {
            let switched = Some(n) != ctx.current(cpu);
            let u = self.um(n);
            u.start_time += now.0 as i64;
            u.yield_ = false;
            if switched {
                u.state_entry_time = now;
            }
        }
        if !self.b.tick_driven_accounting {
            let ticking = self.pcpus[cpu.idx()].ticker_active;
            match (snext.is_some(), ticking) {
                (false, true) => self.stop_ticker(ctx, cpu),
                (true, false) => self.start_ticker(ctx, cpu),
                _ => {}
            }
        }
        let slice_ns = if snext.is_some() || self.b.idle_polls {
            Some(self.tslice_ns)
        } else {
            None
        };
        Decision {
            next: snext,
            slice_ns,
            migrated,
        }
    }

    // ----- periodic work -------------------------------------------------------------

    /// The 10 ms tick of a PCPU (of a non-idle one from 3.3 on).
    fn tick(&mut self, ctx: &mut SchedCtx, p: PcpuId) {
        self.stat_ticks += 1;
        if let Some(v) = ctx.current(p) {
            self.unit_acct(ctx, p, v);
        }
        if self.b.tick_driven_accounting && p == self.master {
            let n = ctx.now().0 / self.tick_period_ns;
            // `u64::is_multiple_of` needs Rust 1.87; the workspace supports 1.80.
            #[allow(clippy::manual_is_multiple_of)]
            if n % TICKS_PER_TSLICE == 0 {
                self.accounting(ctx);
            }
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
            self.set_queued_pri(ctx, v, PRI_UNDER);
        }
        if self.b.sampled_debit {
            // Tick sampling: whoever runs at the tick pays for the whole tick.
            let per_tick = self.credits_per_msec * (self.tick_period_ns / NS_PER_MS) as i64;
            self.um(v).credit -= per_tick as i32;
        } else {
            self.burn_credits(v, ctx.now());
        }
        if !self.u(v).active {
            self.acct_start(v, ctx.domain_of(v));
        } else if self.b.tick_push {
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
        // Xen's list_for_each_safe: the next domain is read before this one
        // may be moved to the head or leave the list.
        let mut cursor = self.active_head;
        // The active VCPUs of the domain at hand are copied here (the loop
        // may take them off the active list), in a buffer kept from one
        // accounting to the next.
        let mut units = std::mem::take(&mut self.scratch_units);
        while cursor != NIL {
            let d = DomId(cursor);
            cursor = self.doms[d.idx()].next;
            let (n, dw, cap) = {
                let dom = &self.doms[d.idx()];
                (
                    dom.active_units.len() as i64,
                    i64::from(dom.weight),
                    i64::from(dom.cap),
                )
            };
            if n == 0 {
                continue;
            }
            // Before 4.1 a domain's weight counts once, whatever its active VCPUs.
            let share = if self.b.per_domain_weight { 1 } else { n };
            weight_left -= dw * share;
            let mut peak = n * cpt;
            if self.credit_balance < 0 {
                peak += ceil_div(-self.credit_balance * dw * share, w_total);
            }
            let mut cap_per_unit = 0;
            if cap != 0 {
                let capc = ceil_div(cap * cpt, 100);
                peak = peak.min(capc);
                cap_per_unit = ceil_div(capc, n);
            }
            let mut fair = ceil_div(c_total * dw * share, w_total);
            if fair < peak {
                credit_xtra = true;
            } else {
                if weight_left != 0 {
                    c_total += ceil_div((fair - peak) * w_total, weight_left);
                }
                if credit_xtra {
                    self.active_unlink(d);
                    self.active_push_head(d);
                }
                fair = peak;
            }
            let fair_per_unit = ceil_div(fair, n);
            units.clear();
            units.extend_from_slice(&self.doms[d.idx()].active_units);
            for &v in &units {
                self.um(v).credit += fair_per_unit as i32;
                let mut c = i64::from(self.u(v).credit);
                if c < 0 && self.b.park_by_priority {
                    // 3.0.3: PARKED below idle for a capped domain, no pause.
                    let pri = if cap != 0 { PRI_PARKED } else { PRI_OVER };
                    if pri == PRI_PARKED && self.u(v).pri != PRI_PARKED {
                        self.stat_parks += 1;
                    }
                    self.set_queued_pri(ctx, v, pri);
                    if c < -cpt {
                        c = -cpt;
                        self.um(v).credit = c as i32;
                    }
                } else if c < 0 {
                    self.set_queued_pri(ctx, v, PRI_OVER);
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
                    self.set_queued_pri(ctx, v, PRI_UNDER);
                    if self.u(v).parked {
                        // Xen unpauses before it clears PARKED, so the wake is
                        // not boosted, except 4.1–4.12, which cleared it first.
                        if !self.b.unpark_boost_bug && ctx.unpause_would_wake(v) {
                            self.um(v).unpark_wake = true;
                        }
                        self.um(v).parked = false;
                        ctx.unpause(v);
                    }
                    if c > cpt {
                        self.acct_stop(v, d);
                        c = if self.b.inactive_resets_credit {
                            0
                        } else {
                            c / 2
                        };
                        self.um(v).credit = c as i32;
                    }
                }
                self.um(v).credit_last = c as i32;
                credit_balance += c;
            }
        }
        self.scratch_units = units;
        self.credit_balance = credit_balance;
        self.runq_sort = self.runq_sort.wrapping_add(1);
        self.rearm_master(ctx);
    }

    fn rearm_master(&mut self, ctx: &mut SchedCtx) {
        if self.b.tick_driven_accounting {
            return; // the master's tick runs accounting
        }
        // After the ticks and slice ends due at the same instant, so that
        // accounting sees every running VCPU charged up to now (as Xen 3.0,
        // where accounting ran inside the master's tick after its debit; for
        // later releases the phase of the master timer against the tick
        // grid depends on boot timing, and this is the choice vmsched makes).
        let at = ctx.now().after(self.tslice_ns);
        ctx.arm_timer_late(self.master_timer_id(), at, self.master);
    }
}

impl<const W: usize> Scheduler for Credit<W> {
    fn name(&self) -> &'static str {
        "credit"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        let n = ctx.npcpus();
        let topo = ctx.topology();
        self.flat = topo.sockets == 1 && topo.threads_per_core == 1;
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
        self.idlers = topo.all().sized::<W>();
        self.balance_bias = (0..topo.sockets)
            .map(|s| PcpuId(s * topo.cores_per_socket * topo.threads_per_core))
            .collect();
        self.credit = i64::from(self.credits_per_tslice) * n as i64;
        self.units = (0..ctx.nvcpus())
            .map(|_| Unit {
                credit: 0,
                credit_last: 0,
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
        if self.b.tick_driven_accounting {
            // The generic scheduler tick runs on every PCPU from boot.
            for p in 0..n {
                self.start_ticker(ctx, PcpuId(p as u32));
            }
        } else {
            self.rearm_master(ctx);
        }
        if self.b.idle_polls {
            // Every PCPU enters its idle loop through the scheduler at boot,
            // which arms the idle VCPU's 30 ms slice: idle PCPUs poll from then on.
            for p in 0..n {
                ctx.tickle(PcpuId(p as u32));
            }
        }
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.doms.len());
        self.doms.push(Dom {
            weight: params.int("weight") as u32,
            cap: params.int("cap") as u32,
            active_units: Vec::new(),
            in_active_list: false,
            prev: NIL,
            next: NIL,
        });
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = if self.version < Version::new(4, 8) {
            // `vcpu_initialise` at `default_vcpu0_location` (domctl.c), and
            // no placement by the scheduler, until `d5438accce` and
            // `9f358ddd69` (15 Jul 2016, in 4.8).
            Self::initial_cpu_old(ctx, v)
        } else {
            // From 4.8 `csched_vcpu_insert` moves the new VCPU with
            // `csched_cpu_pick` from where it was created: until 4.12 VCPU 0
            // at `cpumask_any` of the pool's PCPUs (domctl.c), from 4.13 at
            // the first (`sched_select_initial_cpu`, which the engine does).
            // Domain 0 is built by Xen itself with VCPU 0 on PCPU 0 (the
            // engine's placement) in every release.
            let d = ctx.domain_of(v);
            let dom0 = d == DomId(0) && ctx.is_driver(d);
            if self.version < Version::new(4, 13) && !dom0 {
                let start = self.initial_cpu_any(ctx, v);
                ctx.set_processor(v, start);
            }
            self.pick_cpu(ctx, v)
        };
        ctx.set_processor(v, p);
        if self.b.active_at_creation {
            // 3.0.3's `csched_vcpu_init` puts the new VCPU on the active list.
            self.acct_start(v, ctx.domain_of(v));
        }
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
        let boost = self.b.boost;
        let u = self.um(v);
        if boost && !migrating && !unpark && u.pri == PRI_UNDER && !u.parked {
            u.pri = PRI_BOOST;
            self.stat_boosts += 1;
        }
        let p = ctx.processor(v);
        self.runq_insert(p, v);
        ctx.count_queue_op();
        self.add_runnable(p);
        self.runq_tickle(ctx, v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        } else if self.u(v).on_runq {
            self.runq_remove(p, v);
            ctx.count_queue_op();
            self.sub_runnable(p);
        }
    }

    fn yield_(&mut self, _ctx: &mut SchedCtx, v: VcpuId) {
        if self.b.yield_flag {
            self.um(v).yield_ = true;
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        if let Some(keep) = self.schedule_prev(ctx, cpu, true) {
            return keep;
        }
        let (snext, migrated) = self.pick_next(ctx, cpu);
        self.switch_to(ctx, cpu, snext, migrated)
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        let p = self.cpu_pick(ctx, v, true);
        if self.b.migrating_flag {
            self.um(v).migrating = true;
        }
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
        self.set_weight(dom, params.int("weight") as u32);
        self.doms[dom.idx()].cap = params.int("cap") as u32;
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

    /// One header line, one line per PCPU, then one line per VCPU:
    /// `vcpu <id>: pri=<BOOST|UNDER|OVER|PARKED> credit=<n> last=<credit after the
    /// last accounting> active=<0|1> parked=<0|1> yield=<0|1>`.
    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let pri = |p: i8| match p {
            PRI_BOOST => "BOOST",
            PRI_UNDER => "UNDER",
            PRI_OVER => "OVER",
            PRI_PARKED => "PARKED",
            _ => "IDLE",
        };
        let _ = writeln!(
            s,
            "credit: xen_version={} weight={} credit={} balance={} idlers={:?}",
            self.version, self.weight, self.credit, self.credit_balance, self.idlers
        );
        for (i, p) in self.pcpus.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = write!(
                s,
                "pcpu {i}: nr_runnable={} cur={} runq=[",
                p.nr_runnable,
                cur.map_or("idle".to_string(), |v| v.0.to_string())
            );
            for v in &p.runq {
                let u = &self.units[v.idx()];
                let _ = write!(s, " {}({} {})", v.0, pri(u.pri), u.credit);
            }
            let _ = writeln!(s, " ]");
        }
        for (i, u) in self.units.iter().enumerate() {
            let _ = writeln!(
                s,
                "vcpu {i}: pri={} credit={} last={} active={} parked={} yield={}",
                pri(u.pri),
                u.credit,
                u.credit_last,
                u8::from(u.active),
                u8::from(u.parked),
                u8::from(u.yield_)
            );
        }
        s
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        let pri = |p: i8| match p {
            PRI_BOOST => "BOOST",
            PRI_UNDER => "UNDER",
            PRI_OVER => "OVER",
            PRI_PARKED => "PARKED",
            _ => "IDLE",
        };
        let rec = SchedState::record;
        SchedState {
            global: rec(serde_json::json!({
                "weight": self.weight, "credit": self.credit, "balance": self.credit_balance,
            })),
            pcpus: (self.pcpus.iter().enumerate())
                .map(|(i, p)| {
                    let cur = ctx.current(PcpuId(i as u32)).map(|v| v.0);
                    let runq: Vec<u32> = p.runq.iter().map(|v| v.0).collect();
                    rec(serde_json::json!({"nr_runnable": p.nr_runnable, "cur": cur, "runq": runq}))
                })
                .collect(),
            domains: Vec::new(),
            vcpus: (self.units.iter())
                .map(|u| {
                    rec(serde_json::json!({
                        "pri": pri(u.pri), "credit": u.credit, "last": u.credit_last,
                        "active": u.active, "parked": u.parked, "yield": u.yield_,
                    }))
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaviour_boundaries() {
        let b30 = Behaviour::of(FIRST);
        assert!(b30.sampled_debit && b30.idle_polls && b30.tick_driven_accounting);
        assert!(b30.per_domain_weight && b30.old_tickle && b30.old_pick && !b30.yield_flag);
        assert!(!b30.ratelimit && !b30.unpark_boost_bug);
        assert!(!Behaviour::of(Version::with_patch(3, 0, 3)).boost);
        assert!(b30.credits_per_ms_3_0_3 && b30.park_by_priority && b30.active_at_creation);
        assert!(!b30.tick_push);
        let b304 = Behaviour::of(Version::with_patch(3, 0, 4));
        assert!(b304.boost && b304.tick_push && !b304.park_by_priority);
        assert!(!b304.credits_per_ms_3_0_3 && !b304.active_at_creation);
        assert!(Behaviour::of(Version::new(3, 1)).boost);
        let b33 = Behaviour::of(Version::new(3, 3));
        assert!(b33.idle_polls && b33.tick_driven_accounting);
        let b42 = Behaviour::of(Version::new(4, 2));
        assert!(b42.old_tickle && b42.tickle_one_option && b42.steal_from_neighbour);
        assert!(!b42.kick_away && !b42.migrating_flag);
        let b43 = Behaviour::of(Version::new(4, 3));
        assert!(!b43.old_tickle && b43.kick_away && !b43.steal_from_neighbour);
        assert!(!b43.balance_bias);
        let b47 = Behaviour::of(Version::new(4, 7));
        assert!(!b47.kick_away && b47.migrating_flag && !b47.balance_bias);
        assert!(Behaviour::of(Version::new(4, 9)).balance_bias);
        let b34 = Behaviour::of(Version::new(3, 4));
        assert!(b34.sampled_debit && !b34.idle_polls && !b34.tick_driven_accounting);
        let b40 = Behaviour::of(Version::new(4, 0));
        assert!(!b40.sampled_debit && b40.old_tickle);
        let b412 = Behaviour::of(Version::new(4, 12));
        assert!(b412.unpark_boost_bug && b412.ratelimit && b412.ratelimit_remaining);
        assert!(!b412.lb_ratelimit && !b412.yield_bypasses_ratelimit);
        assert!(!Behaviour::of(Version::new(4, 13)).unpark_boost_bug);
        let cur = Behaviour::of(CURRENT);
        assert!(cur.lb_ratelimit && cur.yield_bypasses_ratelimit && cur.soft_affinity);
        assert!(!cur.old_tickle && !cur.old_pick && !cur.tickled_stay_idle && !cur.sampled_debit);
    }
}
