//! SEDF, Simple Earliest Deadline First: Xen 3.0.0 – 4.5 (default in 3.0.0–3.0.2).
//!
//! Design. Every VCPU has a *period* and a *slice*: it is guaranteed `slice`
//! ns of CPU in every `period` ns. Each PCPU has its own queues and VCPUs
//! never move between PCPUs (placement at creation decides everything):
//!
//! * the **run queue** holds VCPUs inside their current period that still
//!   have slice left, ordered by absolute deadline (end of the period); its
//!   head runs, earliest deadline first, until its slice is used or the next
//!   waiting period starts;
//! * the **wait queue** holds runnable VCPUs waiting for their next period,
//!   ordered by period start. Best-effort VCPUs (slice 0) live there for good;
//! * two **extra-time queues** share whatever the reservations leave over,
//!   in fixed 500 µs quanta and only while the run queue is empty: the
//!   *penalty* queue (L0) first, holding VCPUs that lost reserved time by
//!   blocking briefly, then the *utilisation* queue (L1), holding every
//!   runnable VCPU with `extratime` set. L1 is stride scheduling: after a
//!   quantum a VCPU's score grows by `2^17 / extraweight`, or by
//!   `1024 · period / slice` for a time-driven VCPU (whose extra weight is 0),
//!   so slack is shared by weight, and a reservation of 100 % counts as
//!   extra weight 128.
//!
//! A VCPU that wakes inside the period it blocked in (a *short block*) gets
//! no more reserved time in that period: its deadline moves one period on and,
//! as compensation, it joins the penalty queue (one quantum pays the whole
//! penalty off, from 3.0.3). A VCPU whose deadline passed while it slept (a
//! *long block*) starts a fresh period at the wake time, which can preempt a
//! VCPU with a later deadline.
//!
//! Parameters (`xm sched-sedf` / `xl sched-sedf`, in ms): `period`, `slice`,
//! `latency`, `extratime`, `weight` per domain. `weight` without
//! `period`/`slice` selects weight mode as `xl sched-sedf -w` does: with
//! `extratime` the weight shares slack only (extra weight); without, slices
//! are computed from weights per PCPU, `w/Σw · (95 ms − reserved)` per
//! 100 ms, frozen until the next adjustment. Global: `xen_version` (creation
//! defaults, penalty handling, placement) and `latency_hint`, which selects
//! the compiled-out "Atropos" unblocking variant in which the latency hint
//! shortens a long-block waker's period (off, as in every released build).
//!
//! Quirks reproduced: idle holes before a waiting period start shorter than
//! one quantum; lost slice on short blocks; extra time discards an EDF
//! overrun; deadline misses re-align the deadline and refresh the slice;
//! weighted slices frozen until the next adjust; 32-bit scores that truncate.
//!
//! Deviations (see `docs/schedulers/sedf.md`): no cpupools and no tasklets;
//! time-driven domains need slice > 0 in every version (Xen 3.0.0–3.0.1
//! accepted 0 and then divided by it); a `wake` that finds the VCPU still
//! queued after a `sleep` on its PCPU (possible only because vmsched's pause
//! is not synchronous) just clears the sleep; `latency`/`extratime` given
//! alone keep the domain's mode instead of resubmitting period and slice as
//! `xl` would.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu` (placement by release),
//! `wake`, `sleep`, `do_schedule`, `pick_cpu`, `adjust`.
//!
//! Extension points for a scheduler built on SEDF (`sedf_comm`, the
//! communication-aware SEDF): `do_schedule` in its halves
//! (`desched_current`, `update_queues`, `pick`, which may be asked to run
//! another VCPU of the run queue than its head for a bounded time), the run
//! queue read-only, `slack_before` (how long the PCPU may run a VCPU ahead
//! of EDF order without a reservation missing its deadline), and I/O
//! accounting (`charge` a VCPU for time another domain spent on its behalf,
//! `credit_current` that domain). SEDF itself uses none of them beyond the
//! halves: its charges (`Unit::debt`) are always 0.

use super::placement::{vcpu_id_slot, CreationRule, PinRule, Placer};
use super::{Allocation, AllocParam, AllocValue, Shares};
use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};

/// Length of every extra-time quantum, and the least gap before a waiting
/// period start that extra time may use.
pub(super) const EXTRA_QUANTUM_NS: i64 = 500_000;
/// Period given to best-effort and weight-driven VCPUs.
const WEIGHT_PERIOD_NS: i64 = 100_000_000;
/// Per `WEIGHT_PERIOD_NS`, not handed out to weight-driven VCPUs.
const WEIGHT_SAFETY_NS: i64 = 5_000_000;
/// Longest period accepted (Xen 3.0.2+).
const PERIOD_MAX_NS: i64 = 10_000_000_000;
/// Shortest period accepted (Xen 3.0.2+).
const PERIOD_MIN_NS: i64 = 10_000;
/// Shortest slice accepted (Xen 3.0.2+).
const SLICE_MIN_NS: i64 = 5_000;
/// How long an idle PCPU with empty queues sleeps before deciding again.
const IDLE_SLICE_NS: i64 = 1_000_000_000;
/// Domain 0's period before Xen 4.2.
const DOM0_PERIOD_NS: i64 = 20_000_000;
/// Domain 0's slice before Xen 4.2 (75 % reserved).
const DOM0_SLICE_NS: i64 = 15_000_000;
/// Score numerator of an extra-weight VCPU: `2^17 / extraweight`.
const EXTRAWEIGHT_SCORE_ONE: i64 = 1 << 17;
/// Fixed-point fraction bits of the utilisation and penalty scores.
const SCORE_FRACTION_BITS: u32 = 10;

/// Status bits, as Xen keeps them.
const EXTRA_AWARE: u8 = 1;
const EXTRA_RUN_PEN: u8 = 2;
const EXTRA_RUN_UTIL: u8 = 4;
const EXTRA_WANT_PEN_Q: u8 = 8;
const SEDF_ASLEEP: u8 = 16;

/// Penalty extra queue ("L0").
const PEN: usize = 0;
/// Utilisation extra queue ("L1").
const UTIL: usize = 1;

/// Every release that shipped SEDF, oldest first.
/// The oldest and newest releases with SEDF.
const FIRST: Version = Version::new(3, 0);
const LAST: Version = Version::new(4, 5);

// The parameters, one constant each, so that a scheduler built on SEDF
// (`sedf_comm`) declares the same ones.
pub(super) const PERIOD: ParamSpec = ParamSpec {
    name: "period",
    unit: "ms",
    kind: ParamKind::Float { min: 0.0, max: 10_000.0 },
    default: Default::Float(100.0),
    scope: ParamScope::Domain,
    doc: "Period (relative deadline); with slice makes the domain time-driven (xl sched-sedf -p). Not given: Xen's creation default (best effort, 100 ms; Dom0 20 ms before 4.2).",
};

pub(super) const SLICE: ParamSpec = ParamSpec {
    name: "slice",
    unit: "ms",
    kind: ParamKind::Float { min: 0.0, max: 10_000.0 },
    default: Default::Float(0.0),
    scope: ParamScope::Domain,
    doc: "CPU time guaranteed per period; 0 = best effort (xl sched-sedf -s). Not given: Xen's creation default (0; Dom0 15 ms before 4.2).",
};

pub(super) const LATENCY: ParamSpec = ParamSpec {
    name: "latency",
    unit: "ms",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10_000.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Domain,
    doc: "Latency hint; stored but unused unless latency_hint is on (xl sched-sedf -l).",
};

pub(super) const EXTRATIME: ParamSpec = ParamSpec {
    name: "extratime",
    unit: "",
    kind: ParamKind::Bool,
    default: Default::Bool(true),
    scope: ParamScope::Domain,
    doc: "May use slack beyond the reservation (xl sched-sedf -e 0|1).",
};

pub(super) const WEIGHT: ParamSpec = ParamSpec {
    name: "weight",
    unit: "",
    kind: ParamKind::Int { min: 0, max: 32767 },
    default: Default::Int(0),
    scope: ParamScope::Domain,
    doc: "Weight mode, as xl sched-sedf -w (period/slice not given): with extratime the weight shares slack; without, it sets a reserved slice per PCPU. 0 = off.",
};

pub(super) const XEN_VERSION: ParamSpec = ParamSpec {
    name: "xen_version",
    unit: "",
    kind: ParamKind::Version {
        min: FIRST,
        max: LAST,
    },
    default: Default::Str("4.5"),
    scope: ParamScope::Global,
    doc: "Xen release whose SEDF to reproduce: Dom0 defaults, penalty repayment, validation and placement.",
};

pub(super) const LATENCY_HINT: ParamSpec = ParamSpec {
    name: "latency_hint",
    unit: "",
    kind: ParamKind::Bool,
    default: Default::Bool(false),
    scope: ParamScope::Global,
    doc: "Build with the compiled-out UNBLOCK_ATROPOS variant: a long-block waker with a latency hint gets period = latency (slice scaled), doubling back.",
};

const PARAMS: &[ParamSpec] = &[
    PERIOD,
    SLICE,
    LATENCY,
    EXTRATIME,
    WEIGHT,
    XEN_VERSION,
    LATENCY_HINT,
];

/// How SEDF caps a domain (ALERT, `compare`): a reservation with no extra
/// time; `sedf-comm` takes the same parameters.
pub const ALLOCATION: Allocation = Allocation {
    rule: "period 10 ms, slice A % x 10 ms, extratime 0 (xm sched-sedf -p 10 -s A/10 -e 0)",
    since: "3.0",
    domain: &[
        AllocParam {
            name: "period",
            unit: "ms",
            value: AllocValue::Fixed(10.0),
            since: "",
        },
        AllocParam {
            name: "slice",
            unit: "ms",
            value: AllocValue::Share(10.0),
            since: "",
        },
        AllocParam {
            name: "extratime",
            unit: "bool",
            value: AllocValue::Flag(false),
            since: "",
        },
    ],
    frames: None,
};

/// How SEDF gives proportional shares: reservations.
pub const SHARES: Shares = Shares::Reservation {
    period: "period",
    slice: "slice",
    extra: "extratime",
};

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("deadline_misses", "deadlines missed (moved back onto the grid)"),
    ("extra_quanta_util", "extra-time quanta from the utilisation queue"),
    ("extra_quanta_penalty", "extra-time quanta from the penalty queue"),
    ("extra_time_ns", "CPU time given as extra time (ns)"),
    ("short_blocks", "wake-ups within the period they blocked in"),
    ("long_blocks", "wake-ups after a period or more blocked"),
    ("idle_holes", "gaps under 500 µs left idle before a period start"),
    ("behind_schedule", "decisions whose slice came out negative (Xen's \"BEHIND schedule\")"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "sedf",
    "SEDF",
    PARAMS,
    |p, _| Box::new(Sedf::new(p)),
)
.about(
    "Xen's SEDF: per-PCPU EDF reservations (period, slice) with weighted slack in 500 us quanta.",
    "Xen 3.0.0 - 4.5; default scheduler in 3.0.0 - 3.0.2",
)
.with_allocation(ALLOCATION)
.with_shares(SHARES)
.with_check_domain(check_domain)
.with_counters(COUNTERS);

/// Behaviour that changed between releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Era {
    /// 3.0.0–3.0.1: no period/slice limits, Dom0 extra weight 0, penalty
    /// repaid quantum by quantum.
    V300,
    /// 3.0.2: as 3.0.0, with period/slice limits.
    V302,
    /// 3.0.3–4.1: Dom0 extra weight 1, one penalty quantum pays all.
    V303,
    /// 4.2: Dom0 best effort.
    V42,
    /// 4.3–4.5: as 4.2, and every VCPU re-placed by `pick_cpu` by VCPU id.
    V43,
}

fn era_of(v: Version) -> Era {
    if v < Version::with_patch(3, 0, 2) {
        Era::V300
    } else if v < Version::with_patch(3, 0, 3) {
        Era::V302
    } else if v >= Version::new(4, 3) {
        Era::V43
    } else if v >= Version::new(4, 2) {
        Era::V42
    } else {
        Era::V303
    }
}

fn ms_to_ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

pub(super) fn check_domain(g: &Params, p: &Params, path: &str) -> Result<(), ScenarioError> {
    let era = era_of(g.version("xen_version"));
    let err = |field: &str, msg: String| Err(ScenarioError::new(format!("{path}.{field}"), msg));
    let timed = p.is_explicit("period") || p.is_explicit("slice");
    let weight = p.int("weight");
    if weight != 0 && timed {
        let field = if p.is_explicit("period") {
            "period"
        } else {
            "slice"
        };
        return err(
            field,
            format!("is given together with weight {weight}; expected either weight (weight mode, as xl sched-sedf -w) or period and slice (time-driven); set weight = 0 to make a weighted domain time-driven"),
        );
    }
    if timed {
        for (have, missing) in [("period", "slice"), ("slice", "period")] {
            if p.is_explicit(have) && !p.is_explicit(missing) {
                return err(
                    missing,
                    format!("is missing; expected {missing} (ms) together with {have}: a time-driven SEDF domain needs both"),
                );
            }
        }
        let period = ms_to_ns(p.float("period"));
        let slice = ms_to_ns(p.float("slice"));
        if era >= Era::V302 {
            if !(PERIOD_MIN_NS..=PERIOD_MAX_NS).contains(&period) {
                return err(
                    "period",
                    format!("{} ms is not allowed; expected 0.01 ms <= period <= 10000 ms (Xen rejects other periods)", p.float("period")),
                );
            }
            if slice < SLICE_MIN_NS || slice > period {
                return err(
                    "slice",
                    format!(
                        "{} ms is not allowed; expected 0.005 ms <= slice <= period ({} ms)",
                        p.float("slice"),
                        p.float("period")
                    ),
                );
            }
        } else {
            if period <= 0 {
                return err(
                    "period",
                    format!(
                        "{} ms is not allowed; expected period > 0",
                        p.float("period")
                    ),
                );
            }
            if slice <= 0 || slice > period {
                return err(
                    "slice",
                    format!(
                        "{} ms is not allowed; expected 0 < slice <= period ({} ms) (Xen {} accepted slice 0 and then divided by it)",
                        p.float("slice"),
                        p.float("period"),
                        g.version("xen_version")
                    ),
                );
            }
        }
    } else if weight == 0 && p.is_explicit("extratime") && !p.bool("extratime") {
        return err(
            "extratime",
            "false on a best-effort domain is not allowed (it could never run; Xen rejects the call); expected period and slice, or weight, with extratime = false".into(),
        );
    }
    Ok(())
}

/// Which queue a VCPU is on besides the extra queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    None,
    Run,
    Wait,
}

#[derive(Clone, Debug)]
struct Unit {
    period: i64,
    slice: i64,
    period_orig: i64,
    slice_orig: i64,
    latency: i64,
    weight: i64,
    extraweight: i64,
    status: u8,
    deadl_abs: i64,
    sched_start_abs: i64,
    cputime: i64,
    block_abs: i64,
    score: [i32; 2],
    short_block_lost_tot: i64,
    extra_time_ns: i64,
    queue: Queue,
    on_extra: [bool; 2],
    /// Time charged to this VCPU for work another domain did on its behalf
    /// (`sedf-comm`'s I/O accounting), not yet taken from its reservation:
    /// it counts as reserved time run, at the next point where SEDF accounts
    /// reserved time (see [`Sedf::charge`]). Always 0 under plain SEDF.
    debt: i64,
}

impl Unit {
    #[inline]
    fn period_begin(&self) -> i64 {
        self.deadl_abs - self.period
    }

    #[inline]
    fn asleep(&self) -> bool {
        self.status & SEDF_ASLEEP != 0
    }
}

#[derive(Clone, Debug, Default)]
struct Pcpu {
    runq: Vec<VcpuId>,
    waitq: Vec<VcpuId>,
    extraq: [Vec<VcpuId>; 2],
    current_slice_expires: i64,
}

/// Reserved work of one VCPU, as `Sedf::slack_before` counts it.
#[derive(Clone, Copy, Debug)]
struct Job {
    /// Its next deadline.
    deadline: i64,
    /// What it must have run by then.
    first: i64,
    slice: i64,
    period: i64,
}

impl Job {
    /// An upper bound on the reserved time due in its later periods by `t`
    /// (>= `deadline`): `slice/period` of the time since `deadline`, rounded up.
    fn later_demand(&self, t: i64) -> i64 {
        let x = (t - self.deadline).max(0) as u128 * self.slice as u128;
        x.div_ceil(self.period as u128) as i64
    }
}

/// What a scheduler built on SEDF (`sedf_comm`) may ask [`Sedf::pick`] to
/// run instead of SEDF's own choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Prefer {
    /// A VCPU of the run queue, in reserved time as EDF would run it, for at
    /// most `limit_ns`.
    Reserved { vcpu: VcpuId, limit_ns: i64 },
    /// A VCPU of the penalty queue (owed the slice it lost by blocking
    /// briefly), for one penalty extra-time quantum.
    Penalty(VcpuId),
    /// A VCPU of the utilisation queue, for one utilisation extra-time
    /// quantum (the run queue being empty).
    Util(VcpuId),
}

/// What kind of time a PCPU is running (for `should_switch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunType {
    Edf,
    ExtraPen,
    ExtraUtil,
    Idle,
}

/// The SEDF scheduler's state.
pub struct Sedf {
    era: Era,
    creation: CreationRule,
    pin: PinRule,
    latency_hint: bool,
    units: Vec<Unit>,
    pcpus: Vec<Pcpu>,
    /// Per-domain parameters, until the domain's last VCPU is inserted.
    pending: Vec<Params>,
    placer: Placer,
    /// Reused by `slack_before`.
    scratch: Vec<Job>,

    stat_deadline_misses: u64,
    stat_extra_util: u64,
    stat_extra_pen: u64,
    stat_short_blocks: u64,
    stat_long_blocks: u64,
    stat_idle_holes: u64,
    stat_behind: u64,
}

impl Sedf {
    /// A SEDF scheduler with validated global parameters.
    pub fn new(p: &Params) -> Sedf {
        let version = p.version("xen_version");
        let era = era_of(version);
        let creation = if version.major == 3 {
            CreationRule::Xen30
        } else {
            CreationRule::Xen4
        };
        let pin = match era {
            Era::V300 | Era::V302 => PinRule::FirstOfAffinity,
            Era::V303 | Era::V42 => PinRule::MoveToFirst,
            Era::V43 => PinRule::RepickByVcpuId,
        };
        Sedf {
            era,
            creation,
            pin,
            latency_hint: p.bool("latency_hint"),
            units: Vec::new(),
            pcpus: Vec::new(),
            pending: Vec::new(),
            placer: Placer::default(),
            scratch: Vec::new(),
            stat_deadline_misses: 0,
            stat_extra_util: 0,
            stat_extra_pen: 0,
            stat_short_blocks: 0,
            stat_long_blocks: 0,
            stat_idle_holes: 0,
            stat_behind: 0,
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

    // ----- queues ---------------------------------------------------------------

    /// Insert after every element whose key is not greater (FIFO among equals).
    fn insert_sorted(units: &[Unit], q: &mut Vec<VcpuId>, v: VcpuId, key: impl Fn(&Unit) -> i64) {
        let k = key(&units[v.idx()]);
        let pos = q
            .iter()
            .position(|x| k < key(&units[x.idx()]))
            .unwrap_or(q.len());
        q.insert(pos, v);
    }

    fn add_runq(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.pcpus[p.idx()].runq;
        Self::insert_sorted(&self.units, q, v, |u| u.deadl_abs);
        self.units[v.idx()].queue = Queue::Run;
        self.pay_debt(p, v);
    }

    fn add_waitq(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.pcpus[p.idx()].waitq;
        Self::insert_sorted(&self.units, q, v, Unit::period_begin);
        self.units[v.idx()].queue = Queue::Wait;
    }

    fn del_queue(&mut self, p: PcpuId, v: VcpuId) {
        let pc = &mut self.pcpus[p.idx()];
        let q = match self.units[v.idx()].queue {
            Queue::None => return,
            Queue::Run => &mut pc.runq,
            Queue::Wait => &mut pc.waitq,
        };
        if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        self.units[v.idx()].queue = Queue::None;
    }

    fn extraq_del(&mut self, p: PcpuId, v: VcpuId, i: usize) {
        if !self.units[v.idx()].on_extra[i] {
            return;
        }
        let q = &mut self.pcpus[p.idx()].extraq[i];
        if let Some(pos) = q.iter().position(|&x| x == v) {
            q.remove(pos);
        }
        self.units[v.idx()].on_extra[i] = false;
    }

    /// Xen's `extraq_add_sort_update`: subtract `sub` from the score of every
    /// queued VCPU, and insert `v` before the first whose (reduced) score is
    /// strictly greater than its own.
    fn extraq_add_sort_update(&mut self, p: PcpuId, v: VcpuId, i: usize, sub: i32) {
        if self.units[v.idx()].on_extra[i] {
            debug_assert!(false, "vcpu {v} already on extra queue {i}");
            return;
        }
        let own = self.units[v.idx()].score[i];
        let q = &mut self.pcpus[p.idx()].extraq[i];
        let mut pos = q.len();
        for (k, x) in q.iter().enumerate() {
            let s = &mut self.units[x.idx()].score[i];
            *s = s.wrapping_sub(sub);
            if own < *s {
                pos = k;
                break;
            }
        }
        if sub != 0 {
            for x in q.iter().skip(pos + 1) {
                let s = &mut self.units[x.idx()].score[i];
                *s = s.wrapping_sub(sub);
            }
        }
        q.insert(pos, v);
        self.units[v.idx()].on_extra[i] = true;
    }

    /// Xen's `extraq_check`: after a parameter change, join or leave the
    /// utilisation queue as `extratime` now says.
    fn extraq_check(&mut self, p: PcpuId, v: VcpuId) {
        let u = &self.units[v.idx()];
        if u.on_extra[UTIL] {
            if u.status & EXTRA_AWARE == 0 && u.status & (EXTRA_RUN_PEN | EXTRA_RUN_UTIL) == 0 {
                self.extraq_del(p, v, UTIL);
            }
        } else if u.status & EXTRA_AWARE != 0 && !u.asleep() {
            self.extraq_add_sort_update(p, v, UTIL, 0);
        }
    }

    fn add_util_if_aware(&mut self, p: PcpuId, v: VcpuId) {
        if self.units[v.idx()].status & EXTRA_AWARE != 0 {
            self.extraq_add_sort_update(p, v, UTIL, 0);
        }
    }

    // ----- accounting -------------------------------------------------------------

    /// Xen's `desched_edf_dom`: the current VCPU ran in reserved time.
    fn desched_edf(&mut self, p: PcpuId, v: VcpuId, now: i64) {
        let u = &mut self.units[v.idx()];
        u.cputime += now - u.sched_start_abs;
        if u.cputime < u.slice && !u.asleep() {
            self.pay_debt(p, v);
            return;
        }
        self.del_queue(p, v);
        let u = &mut self.units[v.idx()];
        if u.cputime >= u.slice {
            u.cputime -= u.slice;
            if u.period < u.period_orig {
                // Recovering from latency scaling: double back.
                u.period *= 2;
                u.slice *= 2;
                if u.period > u.period_orig || u.slice > u.slice_orig {
                    u.period = u.period_orig;
                    u.slice = u.slice_orig;
                }
            }
            u.deadl_abs += u.period;
        }
        if !self.units[v.idx()].asleep() {
            self.add_waitq(p, v);
        } else {
            self.extraq_del(p, v, PEN);
            self.extraq_del(p, v, UTIL);
        }
    }

    /// Xen's `desched_extra_dom`: the current VCPU ran one extra quantum.
    fn desched_extra(&mut self, p: PcpuId, v: VcpuId, now: i64) {
        let era = self.era;
        let u = &mut self.units[v.idx()];
        let i = if u.status & EXTRA_RUN_PEN != 0 {
            PEN
        } else {
            UTIL
        };
        u.status &= !(EXTRA_RUN_PEN | EXTRA_RUN_UTIL);
        // As coded: a fresh slice, which also discards any EDF overrun.
        u.cputime = 0;
        let ran = now - u.sched_start_abs;
        u.extra_time_ns += ran;
        self.extraq_del(p, v, i);
        let u = &mut self.units[v.idx()];
        let mut oldscore = u.score[i];
        if i == PEN {
            if era >= Era::V303 {
                // One quantum pays the whole penalty off.
                u.short_block_lost_tot = 0;
                u.status &= !EXTRA_WANT_PEN_Q;
            } else {
                u.short_block_lost_tot -= ran;
                if u.short_block_lost_tot <= 0 {
                    u.short_block_lost_tot = 0;
                    u.status &= !EXTRA_WANT_PEN_Q;
                } else {
                    u.score[PEN] =
                        ((u.period << SCORE_FRACTION_BITS) / u.short_block_lost_tot) as i32;
                    oldscore = 0;
                }
            }
        } else {
            u.score[UTIL] = util_score(u);
        }
        let u = &self.units[v.idx()];
        if !u.asleep() {
            let requeue = (i == UTIL && u.status & EXTRA_AWARE != 0)
                || (i == PEN && u.status & EXTRA_WANT_PEN_Q != 0);
            if requeue {
                self.extraq_add_sort_update(p, v, i, oldscore);
            }
        } else {
            self.del_queue(p, v);
            self.extraq_del(p, v, 1 - i);
        }
    }

    /// Xen's `update_queues`: start due periods, and push best-effort VCPUs
    /// and VCPUs that missed their deadline off the head of the run queue.
    pub(super) fn update_queues(&mut self, p: PcpuId, now: i64) {
        while let Some(&h) = self.pcpus[p.idx()].waitq.first() {
            if self.units[h.idx()].period_begin() > now {
                break;
            }
            self.del_queue(p, h);
            self.add_runq(p, h);
        }
        // Walk as Xen's list_for_each_safe does: the next element is fixed
        // before the current one is moved.
        let mut next = self.pcpus[p.idx()].runq.first().copied();
        while let Some(cur) = next {
            let q = &self.pcpus[p.idx()].runq;
            let pos = q.iter().position(|&x| x == cur).expect("on runq");
            next = q.get(pos + 1).copied();
            let u = &self.units[cur.idx()];
            if u.slice == 0 {
                self.del_queue(p, cur);
                let u = &mut self.units[cur.idx()];
                u.deadl_abs += u.period;
                if u.period_begin() < now {
                    u.deadl_abs += div_up(now - u.period_begin(), u.period) * u.period;
                }
                self.add_waitq(p, cur);
            } else if u.deadl_abs < now || u.cputime > u.slice {
                self.stat_deadline_misses += 1;
                self.del_queue(p, cur);
                let u = &mut self.units[cur.idx()];
                u.deadl_abs += u.period;
                if u.deadl_abs < now {
                    u.deadl_abs += div_up(now - u.deadl_abs, u.period) * u.period;
                }
                u.cputime = 0;
                if u.period_begin() > now {
                    self.add_waitq(p, cur);
                } else {
                    self.add_runq(p, cur);
                }
            } else {
                break;
            }
        }
    }

    /// Xen's `sedf_do_extra_schedule`: slack until `end`.
    fn extra_schedule(&mut self, p: PcpuId, now: i64, end: i64) -> (Option<VcpuId>, i64) {
        let pc = &self.pcpus[p.idx()];
        if end - now < EXTRA_QUANTUM_NS {
            if !pc.extraq[PEN].is_empty() || !pc.extraq[UTIL].is_empty() {
                self.stat_idle_holes += 1;
            }
            return (None, end - now);
        }
        if let Some(&v) = pc.extraq[PEN].first() {
            self.um(v).status |= EXTRA_RUN_PEN;
            self.stat_extra_pen += 1;
            return (Some(v), EXTRA_QUANTUM_NS);
        }
        if let Some(&v) = pc.extraq[UTIL].first() {
            self.um(v).status |= EXTRA_RUN_UTIL;
            self.stat_extra_util += 1;
            return (Some(v), EXTRA_QUANTUM_NS);
        }
        (None, end - now)
    }

    fn run_type(&self, cur: Option<VcpuId>) -> RunType {
        match cur {
            None => RunType::Idle,
            Some(c) => {
                let s = self.u(c).status;
                if s & EXTRA_RUN_PEN != 0 {
                    RunType::ExtraPen
                } else if s & EXTRA_RUN_UTIL != 0 {
                    RunType::ExtraUtil
                } else {
                    RunType::Edf
                }
            }
        }
    }

    /// Xen's `should_switch`: must the waker's PCPU decide again now?
    fn should_switch(&self, p: PcpuId, cur: Option<VcpuId>, new: VcpuId) -> bool {
        let n = self.u(new);
        if n.period_begin() < self.pcpus[p.idx()].current_slice_expires {
            return true;
        }
        match self.run_type(cur) {
            RunType::Idle => true,
            RunType::Edf => false,
            RunType::ExtraPen => {
                let c = self.u(cur.expect("not idle"));
                n.status & EXTRA_WANT_PEN_Q != 0 && n.score[PEN] < c.score[PEN]
            }
            RunType::ExtraUtil => n.status & EXTRA_WANT_PEN_Q != 0,
        }
    }

    /// The short-block rule of the shipped build (`UNBLOCK_EXTRA_SUPPORT`):
    /// no more reserved time this period, a place on the penalty queue instead.
    fn unblock_short_extra_support(&mut self, p: PcpuId, v: VcpuId) {
        let u = &mut self.units[v.idx()];
        u.deadl_abs += u.period;
        if u.block_abs != 0 {
            let pen = (u.slice - u.cputime).max(0);
            u.short_block_lost_tot = pen;
            if pen != 0 {
                u.score[PEN] = ((u.period << SCORE_FRACTION_BITS) / pen) as i32;
                if u.on_extra[PEN] {
                    self.extraq_del(p, v, PEN);
                } else {
                    self.um(v).status |= EXTRA_WANT_PEN_Q;
                }
                self.extraq_add_sort_update(p, v, PEN, 0);
            }
        }
        self.um(v).cputime = 0;
    }

    // ----- the decision, in two halves ----------------------------------------------
    //
    // `do_schedule` is `desched_current`, `update_queues`, `pick`. A
    // scheduler built on SEDF (`sedf_comm`) runs the same steps and may look
    // at the run queue between the last two, to ask `pick` for another of
    // its VCPUs than the head.

    /// The first half of Xen's `sedf_do_schedule`: account the time the
    /// PCPU's current VCPU ran, reserved or extra.
    pub(super) fn desched_current(&mut self, ctx: &SchedCtx, p: PcpuId, now: i64) {
        if let Some(c) = ctx.current(p) {
            if !ctx.is_runnable(c) {
                self.um(c).status |= SEDF_ASLEEP;
            }
            if self.u(c).asleep() {
                self.um(c).block_abs = now;
            }
            if self.u(c).status & (EXTRA_RUN_PEN | EXTRA_RUN_UTIL) != 0 {
                self.desched_extra(p, c, now);
            } else {
                self.desched_edf(p, c, now);
            }
        }
    }

    /// The second half: choose and set the slice. The run queue's head runs
    /// until its slice is used or the next waiting period starts. With
    /// `Prefer::Reserved { vcpu, limit_ns }`, `vcpu` (which must be on this
    /// run queue) runs instead, by the same rule and for at most `limit_ns`;
    /// with `Prefer::Penalty(v)`, `v` (on this penalty queue) runs one
    /// penalty quantum, as SEDF runs the head of that queue in extra time.
    pub(super) fn pick(&mut self, p: PcpuId, now: i64, prefer: Option<Prefer>) -> Decision {
        let pc = &self.pcpus[p.idx()];
        let (next, mut time) = if let Some(Prefer::Penalty(v)) = prefer {
            debug_assert!(
                pc.extraq[PEN].contains(&v),
                "preferred {v} is not on pcpu {p}'s penalty queue"
            );
            self.um(v).status |= EXTRA_RUN_PEN;
            self.stat_extra_pen += 1;
            (Some(v), EXTRA_QUANTUM_NS)
        } else if let Some(Prefer::Util(v)) = prefer {
            debug_assert!(
                pc.extraq[UTIL].contains(&v),
                "preferred {v} is not on pcpu {p}'s utilisation queue"
            );
            self.um(v).status |= EXTRA_RUN_UTIL;
            self.stat_extra_util += 1;
            (Some(v), EXTRA_QUANTUM_NS)
        } else if let Some(&head) = pc.runq.first() {
            let (r, limit) = match prefer {
                Some(Prefer::Reserved { vcpu, limit_ns }) => {
                    debug_assert!(
                        pc.runq.contains(&vcpu),
                        "preferred {vcpu} is not on pcpu {p}'s run queue"
                    );
                    (vcpu, limit_ns)
                }
                _ => (head, i64::MAX),
            };
            let u = self.u(r);
            let mut t = (u.slice - u.cputime).min(limit);
            if let Some(&w) = pc.waitq.first() {
                t = (now + t).min(self.u(w).period_begin()) - now;
            }
            (Some(r), t)
        } else if let Some(&w) = pc.waitq.first() {
            let end = self.u(w).period_begin();
            self.extra_schedule(p, now, end)
        } else {
            (None, IDLE_SLICE_NS)
        };
        if time < 0 {
            // Xen prints "seriously BEHIND schedule" and carries on.
            self.stat_behind += 1;
            time = EXTRA_QUANTUM_NS;
        }
        if let Some(n) = next {
            self.um(n).sched_start_abs = now;
        }
        self.pcpus[p.idx()].current_slice_expires = now + time;
        Decision {
            next,
            slice_ns: Some(time as u64),
            migrated: false,
        }
    }

    // ----- for schedulers built on SEDF (`sedf_comm`) -------------------------------

    /// PCPU `p`'s run queue, earliest deadline first.
    pub(super) fn runq(&self, p: PcpuId) -> &[VcpuId] {
        &self.pcpus[p.idx()].runq
    }

    /// PCPU `p`'s wait queue: runnable VCPUs waiting for their next period
    /// (they have received their slice in the current one, or reserve none),
    /// earliest period start first.
    pub(super) fn waitq(&self, p: PcpuId) -> &[VcpuId] {
        &self.pcpus[p.idx()].waitq
    }

    /// PCPU `p`'s penalty queue (VCPUs that lost reserved time by blocking
    /// briefly and are owed it in extra time), in SEDF's order.
    pub(super) fn penalty_queue(&self, p: PcpuId) -> &[VcpuId] {
        &self.pcpus[p.idx()].extraq[PEN]
    }

    /// PCPU `p`'s utilisation queue (every runnable VCPU with extra time),
    /// in SEDF's order (lowest score first).
    pub(super) fn util_queue(&self, p: PcpuId) -> &[VcpuId] {
        &self.pcpus[p.idx()].extraq[UTIL]
    }

    /// What SEDF would run on `p` now in extra time, the run queue being
    /// empty: `Some((head of the penalty queue, else of the utilisation
    /// queue, if any))`; `None` when there is no extra time to hand out (the
    /// run queue is not empty, nothing waits, or the next period starts
    /// within one quantum).
    pub(super) fn extra_time_choice(&self, p: PcpuId, now: i64) -> Option<Option<VcpuId>> {
        let pc = &self.pcpus[p.idx()];
        if !pc.runq.is_empty() {
            return None;
        }
        let &w = pc.waitq.first()?;
        if self.u(w).period_begin() - now < EXTRA_QUANTUM_NS {
            return None;
        }
        Some(pc.extraq[PEN].first().or(pc.extraq[UTIL].first()).copied())
    }

    /// Does `v` run reserved (EDF) time, rather than an extra-time quantum,
    /// in its current (or, inside `do_schedule`, just ended) run?
    pub(super) fn in_reserved_time(&self, v: VcpuId) -> bool {
        self.u(v).status & (EXTRA_RUN_PEN | EXTRA_RUN_UTIL) == 0
    }

    /// The extra time (slack quanta, penalty and utilisation) `v` has run, ns.
    pub(super) fn extra_time_ns(&self, v: VcpuId) -> i64 {
        self.u(v).extra_time_ns
    }

    /// How long `v` has run since it was last picked, ns.
    pub(super) fn ran_ns(&self, v: VcpuId, now: i64) -> i64 {
        now - self.u(v).sched_start_abs
    }

    /// I/O accounting: `ns` of the current run of `v`, about to be
    /// descheduled, were spent for other domains (and charged to them), so
    /// they do not count against `v`'s reservation. Extra time is not
    /// counted against a reservation anyway: no effect there.
    pub(super) fn credit_current(&mut self, v: VcpuId, ns: i64, now: i64) {
        if self.in_reserved_time(v) {
            let u = self.um(v);
            u.sched_start_abs = (u.sched_start_abs + ns.max(0)).min(now);
        }
    }

    /// I/O accounting: charge `ns` of another domain's time to `v`, as
    /// reserved time `v` ran (its [`Unit::debt`]). It is taken from the
    /// reservation at once if `v` waits on its run queue; if `v` runs, when
    /// it is next descheduled (its PCPU is asked to decide again when it
    /// runs reserved time); if it waits for its next period or is blocked,
    /// when it next enters its run queue. A debt that uses up the slice moves
    /// the VCPU on by whole periods, and the rest carries into the next
    /// period as an overrun does. A best-effort VCPU (slice 0) reserves
    /// nothing to take from: then nothing is charged and this returns false.
    pub(super) fn charge(&mut self, ctx: &mut SchedCtx, v: VcpuId, ns: i64) -> bool {
        if self.u(v).slice == 0 || ns <= 0 {
            return false;
        }
        self.um(v).debt += ns;
        match ctx.running_on(v) {
            Some(q) => {
                if self.in_reserved_time(v) && ctx.local() != Some(q) {
                    ctx.tickle(q);
                }
            }
            None => {
                if self.u(v).queue == Queue::Run {
                    self.pay_debt(ctx.processor(v), v);
                }
            }
        }
        true
    }

    /// Take `v`'s debt from its reservation: `v` is on its run queue, not
    /// running. See [`Sedf::charge`].
    fn pay_debt(&mut self, p: PcpuId, v: VcpuId) {
        let u = &mut self.units[v.idx()];
        if u.debt == 0 {
            return;
        }
        if u.slice == 0 {
            // Became best effort since the charge: nothing to take it from.
            u.debt = 0;
            return;
        }
        u.cputime += u.debt;
        u.debt = 0;
        if u.cputime < u.slice {
            return;
        }
        let periods = u.cputime / u.slice;
        u.cputime -= periods * u.slice;
        u.deadl_abs += periods * u.period;
        self.del_queue(p, v);
        self.add_waitq(p, v);
    }

    /// The earliest reserved work a VCPU that is not queued (blocked,
    /// paused) could bring if it woke at `now` or later, by SEDF's wake-up
    /// rules: (deadline, slice due by it). Waking later never gives an
    /// earlier deadline.
    fn earliest_wake_job(&self, u: &Unit, now: i64) -> (i64, i64) {
        if u.deadl_abs == 0 {
            // First wake: deadline now + slice, then treated as a short block.
            (now + u.slice + u.period, u.slice)
        } else if now < u.period_begin() {
            // Wakes in extra time: its next period stands, with the slice
            // it has left there.
            (u.deadl_abs, (u.slice - u.cputime).max(0))
        } else if now < u.deadl_abs {
            // Short block: the current period is forfeited.
            (u.deadl_abs + u.period, u.slice)
        } else {
            // Long block: a new period from the wake-up (the latency-hint
            // variant may shorten it to the latency).
            let period = if self.latency_hint && u.latency != 0 {
                u.latency.min(u.period)
            } else {
                u.period
            };
            (now + period, u.slice)
        }
    }

    /// How long PCPU `p` may run `v`, a VCPU on its run queue, ahead of EDF
    /// order from `now` without any reservation of another VCPU of `p` that
    /// is due before `v`'s deadline missing its deadline.
    ///
    /// Reordering only delays work due before `v`'s deadline `dv` (work due
    /// at or after it had `v`'s work counted before it anyway). Each other
    /// reserved VCPU of `p` contributes a demand: its next deadline `D` with
    /// the slice due by it (what it has left if queued; for a blocked or
    /// paused VCPU, the earliest period a wake-up could give it, with a full
    /// slice, see `earliest_wake_job`), then `slice/period` of every ns after
    /// `D`, an upper bound on its later periods' slices. The answer is the
    /// least, over the instants `t` = each such `D` < `dv` and `dv` itself,
    /// of `t − now − demand due by t`; where reservations sum to at most
    /// 100 % the demand line is no steeper than time, so these instants are
    /// where the margin is smallest. Negative when there is no slack.
    pub(super) fn slack_before(&mut self, ctx: &SchedCtx, p: PcpuId, v: VcpuId, now: i64) -> i64 {
        let dv = self.u(v).deadl_abs;
        let mut jobs = std::mem::take(&mut self.scratch);
        jobs.clear();
        for (i, u) in self.units.iter().enumerate() {
            let w = VcpuId(i as u32);
            if w == v || u.slice <= 0 || ctx.processor(w) != p {
                continue;
            }
            let (d, f) = match u.queue {
                Queue::Run | Queue::Wait => (u.deadl_abs, (u.slice - u.cputime).max(0)),
                Queue::None => self.earliest_wake_job(u, now),
            };
            if d < dv {
                jobs.push(Job {
                    deadline: d,
                    first: f,
                    slice: u.slice,
                    period: u.period,
                });
            }
        }
        let due_by = |t: i64| -> i64 {
            jobs.iter()
                .filter(|j| j.deadline <= t)
                .map(|j| j.first + j.later_demand(t))
                .sum()
        };
        // At dv: every job listed is due before it.
        let mut slack = dv - now - due_by(dv);
        for j in &jobs {
            slack = slack.min(j.deadline - now - due_by(j.deadline));
        }
        self.scratch = jobs;
        slack
    }

    // ----- parameters -------------------------------------------------------------

    /// Creation defaults (`sedf_alloc_vdata`).
    fn fresh_unit(&self, is_dom0: bool) -> Unit {
        let (period, slice, extraweight) = if is_dom0 && self.era < Era::V42 {
            let ew = if self.era >= Era::V303 { 1 } else { 0 };
            (DOM0_PERIOD_NS, DOM0_SLICE_NS, ew)
        } else {
            (WEIGHT_PERIOD_NS, 0, 1)
        };
        Unit {
            period,
            slice,
            period_orig: period,
            slice_orig: slice,
            latency: 0,
            weight: 0,
            extraweight,
            status: EXTRA_AWARE | SEDF_ASLEEP,
            deadl_abs: 0,
            sched_start_abs: 0,
            cputime: 0,
            block_abs: 0,
            score: [0, 0],
            short_block_lost_tot: 0,
            extra_time_ns: 0,
            queue: Queue::None,
            on_extra: [false, false],
            debt: 0,
        }
    }

    /// Xen's `sedf_adjust` (putinfo), with the domain's parameters mapped as
    /// `xl sched-sedf` maps its options.
    fn put_info(&mut self, ctx: &mut SchedCtx, dom: DomId, p: &Params) {
        let weight = p.int("weight");
        let extratime = p.bool("extratime");
        let latency = ms_to_ns(p.float("latency"));
        let timed = p.is_explicit("period") || p.is_explicit("slice");
        let vcpus: Vec<VcpuId> = ctx.vcpus_of(dom).collect();
        if weight != 0 {
            // xl -w submits period = slice = 0.
            for &v in &vcpus {
                let u = self.um(v);
                if extratime {
                    u.extraweight = weight;
                    u.weight = 0;
                    u.slice = 0;
                    u.period = WEIGHT_PERIOD_NS;
                } else {
                    u.weight = weight;
                }
            }
        } else if timed {
            let period = ms_to_ns(p.float("period"));
            let slice = ms_to_ns(p.float("slice"));
            for &v in &vcpus {
                let u = self.um(v);
                u.weight = 0;
                u.extraweight = 0;
                u.period = period;
                u.period_orig = period;
                u.slice = slice;
                u.slice_orig = slice;
            }
        }
        self.adjust_weights(ctx);
        for &v in &vcpus {
            let u = self.um(v);
            u.status = (u.status & !EXTRA_AWARE) | if extratime { EXTRA_AWARE } else { 0 };
            u.latency = latency;
            let pc = ctx.processor(v);
            self.extraq_check(pc, v);
        }
    }

    /// Xen's `sedf_adjust_weights`: weighted slices from what the other
    /// VCPUs on the same PCPU reserve.
    fn adjust_weights(&mut self, ctx: &SchedCtx) {
        let n = self.pcpus.len();
        let mut sumw = vec![0i64; n];
        let mut sumt = vec![0i64; n];
        for (i, u) in self.units.iter().enumerate() {
            let p = ctx.processor(VcpuId(i as u32)).idx();
            if u.weight != 0 {
                sumw[p] += u.weight;
            } else {
                sumt[p] += WEIGHT_PERIOD_NS * u.slice_orig / u.period_orig;
            }
        }
        for (i, u) in self.units.iter_mut().enumerate() {
            if u.weight != 0 {
                let p = ctx.processor(VcpuId(i as u32)).idx();
                u.period = WEIGHT_PERIOD_NS;
                u.period_orig = WEIGHT_PERIOD_NS;
                u.slice = u.weight * (WEIGHT_PERIOD_NS - WEIGHT_SAFETY_NS - sumt[p]) / sumw[p];
                u.slice_orig = u.slice;
            }
        }
    }
}

/// `ceil(a / b)` for positive operands, as Xen's `DIV_UP`.
#[inline]
fn div_up(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The utilisation-queue stride of a VCPU. Xen divides by the slice of a
/// time-driven VCPU; a zero slice there would fault the hypervisor, so
/// vmsched gives it the lowest priority instead.
fn util_score(u: &Unit) -> i32 {
    if u.extraweight != 0 {
        (EXTRAWEIGHT_SCORE_ONE / u.extraweight) as i32
    } else if u.slice != 0 {
        ((u.period << SCORE_FRACTION_BITS) / u.slice) as i32
    } else {
        i32::MAX
    }
}

impl Scheduler for Sedf {
    fn name(&self) -> &'static str {
        "sedf"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.pcpus = vec![Pcpu::default(); ctx.npcpus()];
        self.placer = Placer::new(ctx.npcpus());
        self.units = Vec::with_capacity(ctx.nvcpus());
        // Xen starts the scheduler on every PCPU at boot (`schedulers_start`).
        for p in 0..ctx.npcpus() {
            ctx.tickle(PcpuId(p as u32));
        }
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.pending.len());
        self.pending.push(params.clone());
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.placer.place(ctx, v, self.creation, self.pin);
        let dom = ctx.domain_of(v);
        let is_dom0 = dom == DomId(0) && ctx.is_driver(dom);
        let unit = self.fresh_unit(is_dom0);
        debug_assert_eq!(v.idx(), self.units.len());
        self.units.push(unit);
        let last = ctx.vcpus_of(dom).last() == Some(v);
        if last {
            // The toolstack applies the configured parameters once the
            // domain exists, as xl/xm do after creating it.
            let p = std::mem::take(&mut self.pending[dom.idx()]);
            if p.iter().any(|(name, _)| p.is_explicit(name)) {
                self.put_info(ctx, dom, &p);
            }
        }
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.del_queue(p, v);
        ctx.count_queue_op();
        self.extraq_del(p, v, PEN);
        self.extraq_del(p, v, UTIL);
        self.placer.removed(p);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if self.u(v).queue != Queue::None {
            // Still queued: it never left its PCPU since a sleep (vmsched's
            // pause is not synchronous as Xen's is), so only undo the sleep.
            self.um(v).status &= !SEDF_ASLEEP;
            return;
        }
        let now = ctx.now().0 as i64;
        let u = self.um(v);
        u.status &= !SEDF_ASLEEP;
        if u.deadl_abs == 0 {
            u.deadl_abs = now + u.slice;
        }
        if now < u.period_begin() {
            // Woke in extra time, before its next period starts.
            if u.status & EXTRA_WANT_PEN_Q != 0 {
                self.extraq_add_sort_update(p, v, PEN, 0);
                ctx.count_queue_op();
            }
            self.add_util_if_aware(p, v);
        } else if now < u.deadl_abs {
            self.stat_short_blocks += 1;
            if self.latency_hint {
                // UNBLOCK_ATROPOS build: plain "start in the next period".
                let u = self.um(v);
                u.deadl_abs += u.period;
                u.cputime = 0;
            } else {
                self.unblock_short_extra_support(p, v);
            }
            self.add_util_if_aware(p, v);
        } else {
            self.stat_long_blocks += 1;
            let hint = self.latency_hint;
            let u = self.um(v);
            if hint && u.latency != 0 {
                u.period = u.latency;
                u.slice = u.period * u.slice_orig / u.period_orig;
            }
            u.deadl_abs = now + u.period;
            u.cputime = 0;
            self.add_util_if_aware(p, v);
        }
        if self.u(v).period_begin() > now {
            self.add_waitq(p, v);
            ctx.count_queue_op();
        } else {
            self.add_runq(p, v);
            ctx.count_queue_op();
        }
        if self.should_switch(p, ctx.current(p), v) {
            ctx.tickle(p);
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.um(v).status |= SEDF_ASLEEP;
        let p = ctx.processor(v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        } else {
            self.del_queue(p, v);
            ctx.count_queue_op();
            self.extraq_del(p, v, UTIL);
            self.extraq_del(p, v, PEN);
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        let now = ctx.now().0 as i64;
        self.desched_current(ctx, p, now);
        self.update_queues(p, now);
        self.pick(p, now, None)
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        let hard = *ctx.hard_affinity(v);
        match self.pin {
            PinRule::RepickByVcpuId => vcpu_id_slot(&hard, ctx.vcpu_index(v)),
            _ => hard.first().expect("affinity masks are non-empty"),
        }
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.placer.moved(ctx.processor(v), to);
        ctx.set_processor(v, to);
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.put_info(ctx, dom, params);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let extra_ns: i64 = self.units.iter().map(|u| u.extra_time_ns).sum();
        vec![
            ("deadline_misses", self.stat_deadline_misses),
            ("extra_quanta_util", self.stat_extra_util),
            ("extra_quanta_penalty", self.stat_extra_pen),
            ("extra_time_ns", extra_ns.max(0) as u64),
            ("short_blocks", self.stat_short_blocks),
            ("long_blocks", self.stat_long_blocks),
            ("idle_holes", self.stat_idle_holes),
            ("behind_schedule", self.stat_behind),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let show = |s: &mut String, name: &str, q: &[VcpuId]| {
            let _ = write!(s, " {name}=[");
            for v in q {
                let u = &self.units[v.idx()];
                let _ = write!(
                    s,
                    " v{}(p={} s={} d={} c={} sc={:?} st={:#x})",
                    v.0, u.period, u.slice, u.deadl_abs, u.cputime, u.score, u.status
                );
            }
            let _ = write!(s, " ]");
        };
        for (i, pc) in self.pcpus.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = write!(
                s,
                "pcpu{i}: cur={:?} expires={}",
                cur.map(|v| v.0),
                pc.current_slice_expires
            );
            show(&mut s, "runq", &pc.runq);
            show(&mut s, "waitq", &pc.waitq);
            show(&mut s, "pen", &pc.extraq[PEN]);
            show(&mut s, "util", &pc.extraq[UTIL]);
            let _ = writeln!(s);
        }
        s
    }
}
