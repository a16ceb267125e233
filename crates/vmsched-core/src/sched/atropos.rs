//! Atropos: Xen 2.0.x's soft real-time scheduler, from Nemesis (removed in 2005 as broken).
//!
//! Design. A domain reserves `slice` ns in every `period` ns. Each PCPU has a
//! **run queue** ordered by deadline (the end of the current period) with the
//! idle VCPU always last, and a **wait queue**, also by deadline, of domains
//! that have used up their time (`WAIT`) or woke from a short block
//! (`UNBLOCKED`). The head of the run queue runs for what it has left of its
//! slice, cut short when the first waiting domain's next period starts; when
//! only idle is left, an `UNBLOCKED` domain on the wait queue runs first,
//! then the wait queue shares the slack round-robin among `xtratime` domains
//! in 5 ms quanta (with a round-robin cursor shared by every PCPU, as coded).
//! No slice is ever shorter than 5 ms. At each new period a domain gets a
//! fresh slice, or its slice minus the debt it overran.
//!
//! A domain that wakes after its deadline (a *long block*) gets period =
//! `latency` and the same share of it (`slice / (period / latency)`, integer
//! division), doubling back to its natural period over the next periods. A
//! domain that wakes before its deadline keeps what is left of its slice and
//! is preferred for slack.
//!
//! **As coded** (the behaviour that got it removed): nothing ever returns a
//! domain from `WAIT`/`UNBLOCKED` to the run queue, so a domain that once
//! exhausts its slice is served only from slack from then on; CPU-bound
//! domains lose their reservation. Blocking runs no Atropos hook (its
//! `block` is wired to `sleep`, i.e. a pause), so a domain keeps its state
//! across a halt and even a long-block waker in `WAIT` goes back to the wait
//! queue. Any run, slack included, is charged to `remain`, so slack used is
//! repaid from the next slice. The slack cursor is advanced past the
//! requeued current domain, so slack is not round-robin. `mode = "intended"`
//! returns a domain to the run queue when a new period or a long block gives
//! it time (as the pre-2.0 code did). A waker never preempts: the PCPU
//! notices it at its next decision (an idle PCPU decides every 5 ms).
//!
//! Defaults: guests 10 ms per 10 s, latency 10 s, xtratime (effectively
//! best effort); Domain 0 15 ms per 20 ms, latency 5 ms.
//!
//! Parameters (`xm atropos DOM PERIOD SLICE LATENCY XTRATIME`, ns): per domain
//! `period`, `slice`, `latency`, `xtratime`; global `mode`. A change sets the
//! natural values only; the current period and slice pick them up at the next
//! doubling step or long block. Deviations: see `docs/schedulers/atropos.md`.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu` (Xen 2.0 placement), `wake`
//! (unblock), `sleep` (block), `do_schedule`, `pick_cpu`, `adjust`.

use super::placement::{CreationRule, PinRule, Placer};
use super::{Allocation, AllocParam, AllocValue};
use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};

/// The slack quantum, and the shortest slice Atropos ever returns.
const BESTEFFORT_QUANTUM_NS: i64 = 5_000_000;
/// Guests' creation defaults: 10 ms per 10 s, latency 10 s.
const GUEST_PERIOD_NS: i64 = 10_000_000_000;
const GUEST_SLICE_NS: i64 = 10_000_000;
const GUEST_LATENCY_NS: i64 = 10_000_000_000;
/// Domain 0's creation defaults: 15 ms per 20 ms, latency 5 ms.
const DOM0_PERIOD_NS: i64 = 20_000_000;
const DOM0_SLICE_NS: i64 = 15_000_000;
const DOM0_LATENCY_NS: i64 = 5_000_000;
/// Largest period/slice/latency accepted (one hour).
const MAX_NS: i64 = 3_600_000_000_000;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "period",
        unit: "ns",
        kind: ParamKind::Int { min: 1, max: MAX_NS },
        default: Default::Int(GUEST_PERIOD_NS),
        scope: ParamScope::Domain,
        doc: "Natural period (xm atropos PERIOD). Not given: Xen's default (10 s; Dom0 20 ms).",
    },
    ParamSpec {
        name: "slice",
        unit: "ns",
        kind: ParamKind::Int { min: 0, max: MAX_NS },
        default: Default::Int(GUEST_SLICE_NS),
        scope: ParamScope::Domain,
        doc: "CPU time reserved per natural period (xm atropos SLICE). Not given: 10 ms; Dom0 15 ms.",
    },
    ParamSpec {
        name: "latency",
        unit: "ns",
        kind: ParamKind::Int { min: 1, max: MAX_NS },
        default: Default::Int(GUEST_LATENCY_NS),
        scope: ParamScope::Domain,
        doc: "Unblocking latency: a long-block waker's period (xm atropos LATENCY). Not given: 10 s; Dom0 5 ms.",
    },
    ParamSpec {
        name: "xtratime",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(true),
        scope: ParamScope::Domain,
        doc: "May run in slack (xm atropos XTRATIME 0|1).",
    },
    ParamSpec {
        name: "mode",
        unit: "",
        kind: ParamKind::Choice(&["as-coded", "intended"]),
        default: Default::Str("as-coded"),
        scope: ParamScope::Global,
        doc: "\"as-coded\": Xen 2.0's code, where a domain never returns from the wait queue at a new period; \"intended\": it does when it has time again.",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("new_periods", "periods started (slices refreshed)"),
    ("slack_quanta", "5 ms slack quanta handed out"),
    ("unblocked_picks", "slack given first to a short-block waker with slice left"),
    ("short_blocks", "wake-ups within the period they blocked in"),
    ("long_blocks", "wake-ups after a period or more blocked"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "atropos",
    "Atropos",
    PARAMS,
    |p, _| Box::new(Atropos::new(p)),
)
.about(
    "Xen 2.0's Atropos: per-PCPU EDF reservations with latency hints and 5 ms slack quanta (as coded, broken).",
    "Xen 2.0.x (removed in 2005 as broken); from Nemesis",
)
.with_allocation(Allocation {
    rule: "period 10 ms, slice A % x 10 ms, latency 10 ms, no xtratime (xm atropos DOM 10ms A/10ms 10ms 0)",
    since: "",
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
            name: "latency",
            unit: "ms",
            value: AllocValue::Fixed(10.0),
            since: "",
        },
        AllocParam {
            name: "xtratime",
            unit: "bool",
            value: AllocValue::Flag(false),
            since: "",
        },
    ],
    frames: None,
})
.with_check_domain(check_domain)
.with_counters(COUNTERS);

fn check_domain(_g: &Params, p: &Params, path: &str) -> Result<(), ScenarioError> {
    let timed = ["period", "slice", "latency"];
    if timed.iter().any(|n| p.is_explicit(n)) {
        if let Some(missing) = timed.iter().find(|n| !p.is_explicit(n)) {
            return Err(ScenarioError::new(
                format!("{path}.{missing}"),
                "is missing; expected period, slice and latency (ns) together, as xm atropos takes them".to_string(),
            ));
        }
    }
    let (period, slice, latency) = (p.int("period"), p.int("slice"), p.int("latency"));
    if slice > period {
        return Err(ScenarioError::new(
            format!("{path}.slice"),
            format!("{slice} ns is longer than period ({period} ns); expected slice <= period"),
        ));
    }
    if latency > period {
        return Err(ScenarioError::new(
            format!("{path}.latency"),
            format!(
                "{latency} ns is longer than period ({period} ns); expected 0 < latency <= period"
            ),
        ));
    }
    Ok(())
}

/// Atropos's per-domain state word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// 0: belongs on the run queue.
    Runnable,
    /// 16: woke from a short block with time left; preferred for slack.
    Unblocked,
    /// 32: out of time until its next period.
    Wait,
    /// 48: paused (Atropos's `sleep` hook); treated as runnable on requeue.
    Blocked,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    None,
    Run,
    Wait,
}

#[derive(Clone, Debug)]
struct Unit {
    deadline: i64,
    prevddln: i64,
    remain: i64,
    period: i64,
    nat_period: i64,
    slice: i64,
    nat_slice: i64,
    latency: i64,
    xtratime: bool,
    state: State,
    lastschd: i64,
    queue: Queue,
}

#[derive(Clone, Debug, Default)]
struct Pcpu {
    runq: Vec<VcpuId>,
    waitq: Vec<VcpuId>,
}

/// The Atropos scheduler's state.
pub struct Atropos {
    intended: bool,
    units: Vec<Unit>,
    pcpus: Vec<Pcpu>,
    pending: Vec<Params>,
    placer: Placer,
    /// The slack round-robin cursor, one for the whole host (a `static` in Xen).
    waitq_rrobin: usize,
    stat_new_periods: u64,
    stat_slack_quanta: u64,
    stat_unblocked_picks: u64,
    stat_short_blocks: u64,
    stat_long_blocks: u64,
}

impl Atropos {
    /// An Atropos scheduler with validated global parameters.
    pub fn new(p: &Params) -> Atropos {
        Atropos {
            intended: p.str("mode") == "intended",
            units: Vec::new(),
            pcpus: Vec::new(),
            pending: Vec::new(),
            placer: Placer::default(),
            waitq_rrobin: 0,
            stat_new_periods: 0,
            stat_slack_quanta: 0,
            stat_unblocked_picks: 0,
            stat_short_blocks: 0,
            stat_long_blocks: 0,
        }
    }

    fn dequeue(&mut self, p: PcpuId, v: VcpuId) {
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

    /// Xen's `requeue`: a runnable domain goes to the wait queue in states
    /// WAIT and UNBLOCKED, else to the run queue; both by deadline, after
    /// equal deadlines.
    fn requeue(&mut self, ctx: &SchedCtx, p: PcpuId, v: VcpuId) {
        if !ctx.is_runnable(v) {
            return;
        }
        let u = &self.units[v.idx()];
        let dl = u.deadline;
        let to_wait = matches!(u.state, State::Wait | State::Unblocked);
        let pc = &mut self.pcpus[p.idx()];
        let q = if to_wait { &mut pc.waitq } else { &mut pc.runq };
        let pos = q
            .iter()
            .position(|x| self.units[x.idx()].deadline > dl)
            .unwrap_or(q.len());
        q.insert(pos, v);
        self.units[v.idx()].queue = if to_wait { Queue::Wait } else { Queue::Run };
    }

    fn set_params(&mut self, v: VcpuId, p: &Params) {
        let u = &mut self.units[v.idx()];
        if p.is_explicit("period") {
            u.nat_period = p.int("period");
            u.nat_slice = p.int("slice");
            u.latency = p.int("latency");
        }
        u.xtratime = p.bool("xtratime");
    }
}

impl Scheduler for Atropos {
    fn name(&self) -> &'static str {
        "atropos"
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
        self.placer
            .place(ctx, v, CreationRule::Xen20, PinRule::CreateWithin);
        let dom = ctx.domain_of(v);
        // Xen creates a domain paused and unpauses it later: creation
        // precedes the first wake, which is therefore a long block.
        let created = ctx.now().0 as i64 - 1;
        let is_dom0 = dom == DomId(0) && ctx.is_driver(dom);
        let (period, slice, latency, remain, prevddln) = if is_dom0 {
            (
                DOM0_PERIOD_NS,
                DOM0_SLICE_NS,
                DOM0_LATENCY_NS,
                DOM0_SLICE_NS,
                created,
            )
        } else {
            (GUEST_PERIOD_NS, GUEST_SLICE_NS, GUEST_LATENCY_NS, 0, 0)
        };
        debug_assert_eq!(v.idx(), self.units.len());
        self.units.push(Unit {
            deadline: created,
            prevddln,
            remain,
            period,
            nat_period: period,
            slice,
            nat_slice: slice,
            latency,
            xtratime: true,
            state: State::Runnable,
            lastschd: created,
            queue: Queue::None,
        });
        let params = self.pending[dom.idx()].clone();
        self.set_params(v, &params);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.dequeue(p, v);
        self.placer.removed(p);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() {
            // It halted and got work back before its PCPU rescheduled; Xen's
            // block path would have kept it running.
            return;
        }
        let p = ctx.processor(v);
        let now = ctx.now().0 as i64;
        self.dequeue(p, v);
        let u = &mut self.units[v.idx()];
        if u.deadline < now {
            self.stat_long_blocks += 1;
            u.prevddln = now;
            u.deadline = now + u.latency;
            u.slice = u.nat_slice / (u.nat_period / u.latency);
            u.period = u.latency;
            u.remain = u.slice;
            if self.intended {
                u.state = State::Runnable;
            }
        } else {
            self.stat_short_blocks += 1;
            u.state = if u.remain > 0 {
                State::Unblocked
            } else {
                State::Wait
            };
        }
        self.requeue(ctx, p, v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.units[v.idx()].state = State::Blocked;
        self.dequeue(p, v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        let now = ctx.now().0 as i64;
        if let Some(cur) = ctx.current(p) {
            let ran = now - self.units[cur.idx()].lastschd;
            self.dequeue(p, cur);
            let u = &mut self.units[cur.idx()];
            if ctx.is_runnable(cur) || u.state == State::Unblocked {
                u.remain -= ran;
                if u.remain <= 0 {
                    u.state = State::Wait;
                }
            }
            self.requeue(ctx, p, cur);
        }
        // New periods for waiting domains whose deadline has passed.
        while let Some(&h) = self.pcpus[p.idx()].waitq.first() {
            if self.units[h.idx()].deadline > now {
                break;
            }
            self.stat_new_periods += 1;
            self.dequeue(p, h);
            let intended = self.intended;
            let u = &mut self.units[h.idx()];
            if u.period != u.nat_period {
                u.slice *= 2;
                u.period *= 2;
                if u.period > u.nat_period {
                    u.period = u.nat_period;
                    u.slice = u.nat_slice;
                }
            }
            u.remain = if u.remain > 0 {
                u.slice
            } else {
                u.remain + u.slice
            };
            u.prevddln = u.deadline;
            u.deadline += u.period;
            if u.remain <= 0 {
                u.state = State::Wait;
            } else if intended {
                u.state = State::Runnable;
            }
            self.requeue(ctx, p, h);
        }
        let pc = &self.pcpus[p.idx()];
        let mut pick = pc.runq.first().copied();
        let mut newtime = now + pick.map_or(0, |v| self.units[v.idx()].remain);
        if pick.is_none() && !pc.waitq.is_empty() {
            if let Some(&v) = pc
                .waitq
                .iter()
                .find(|v| self.units[v.idx()].state == State::Unblocked)
            {
                pick = Some(v);
                newtime = now + self.units[v.idx()].remain;
                self.stat_unblocked_picks += 1;
            } else {
                if self.waitq_rrobin >= pc.waitq.len() {
                    self.waitq_rrobin = 0;
                }
                let rr = self.waitq_rrobin;
                let found = pc
                    .waitq
                    .iter()
                    .enumerate()
                    .find(|&(i, v)| self.units[v.idx()].xtratime && i >= rr);
                if let Some((i, &v)) = found {
                    pick = Some(v);
                    newtime = now + BESTEFFORT_QUANTUM_NS;
                    self.waitq_rrobin = i + 1;
                    self.stat_slack_quanta += 1;
                }
            }
        }
        let pc = &self.pcpus[p.idx()];
        if let Some(&w) = pc.waitq.first() {
            newtime = newtime.min(self.units[w.idx()].deadline);
        }
        newtime = newtime.max(now + BESTEFFORT_QUANTUM_NS);
        if let Some(v) = pick {
            self.units[v.idx()].lastschd = now;
        }
        Decision {
            next: pick,
            slice_ns: Some((newtime - now) as u64),
            migrated: false,
        }
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        super::placement::stay_or_first_allowed(ctx, v)
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.placer.moved(ctx.processor(v), to);
        ctx.set_processor(v, to);
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        for v in ctx.vcpus_of(dom).collect::<Vec<_>>() {
            self.set_params(v, params);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("new_periods", self.stat_new_periods),
            ("slack_quanta", self.stat_slack_quanta),
            ("unblocked_picks", self.stat_unblocked_picks),
            ("short_blocks", self.stat_short_blocks),
            ("long_blocks", self.stat_long_blocks),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "atropos: rr={} intended={}",
            self.waitq_rrobin, self.intended
        );
        for (i, pc) in self.pcpus.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = write!(s, "pcpu{i}: cur={:?}", cur.map(|v| v.0));
            for (name, q) in [("runq", &pc.runq), ("waitq", &pc.waitq)] {
                let _ = write!(s, " {name}=[");
                for v in q {
                    let u = &self.units[v.idx()];
                    let _ = write!(
                        s,
                        " v{}({:?} d={} r={} p={} s={})",
                        v.0, u.state, u.deadline, u.remain, u.period, u.slice
                    );
                }
                let _ = write!(s, " ]");
            }
            let _ = writeln!(s);
        }
        s
    }
}
