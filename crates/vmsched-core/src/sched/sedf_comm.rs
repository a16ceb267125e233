//! Communication-aware SEDF with I/O accounting (Govindan et al. 2009), built
//! on [`Sedf`](super::sedf::Sedf).
//!
//! Design. SEDF decides *how much* each VCPU gets: its slice in every
//! period, EDF among the VCPUs with slice left, slack in extra-time quanta
//! when none has. This scheduler changes only *which* eligible VCPU runs
//! next: the one whose domain has the most network packets waiting for it
//! (its *network intensity*), as long as running it ahead of EDF order
//! leaves every other reservation on the PCPU able to meet its deadline.
//! Eligible are the VCPUs that have received less than their slice in their
//! period (the paper's rule): those on the run queue, and those on the
//! penalty queue, which woke inside the period they blocked in and are owed
//! the lost slice in penalty quanta (a preferred one runs one such quantum).
//! Intensities, from the I/O counters the hypervisor can see
//! ([`SchedCtx::io_stats`]):
//!
//! * a guest: *reception* intensity, the packets delivered to it since its
//!   last run ended (Algorithm 1: netback counts up, the hypervisor counts
//!   down by what the guest processed when it is descheduled), plus its
//!   *anticipated transmit* intensity (Algorithm 2): the packets it queued
//!   in its last run that queued any (last-value prediction), while the
//!   time since that run is within the interval between its last two such
//!   runs;
//! * the driver domain: what its backends have pending (Algorithm 3),
//!   packets that reached the NIC for a guest and are not yet passed on, plus
//!   packets guests queued that are not yet sent.
//!
//! Each of the three preferences (driver domain, recipients, anticipated
//! senders) can be switched off (`prefer_dom0`, `prefer_recipient`,
//! `prefer_sender`); with all three off the scheduler is SEDF.
//!
//! I/O accounting (`io_accounting`): at the end of each run of a driver-domain
//! VCPU, the I/O events (page flips) its backends finished for each guest
//! since the last accounting, times the platform's per-kind costs (`net_rx_ns`,
//! `net_tx_ns`, `disk_read_ns`, `disk_write_ns`), are charged to the guest as
//! reserved time it ran, and the same time is not counted against the driver
//! domain's reservation. A run pays at most its own length; the rest waits
//! for the next run. See `docs/schedulers/sedf-comm.md` for every decision.
//!
//! Hooks: as SEDF, with `do_schedule` split into SEDF's halves and the
//! choice and the accounting between them; `adjust_global` switches the
//! preferences and the accounting at run time.

use super::sedf::{self, Prefer, Sedf, EXTRA_QUANTUM_NS};
use super::{Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo};
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};

const fn switch(name: &'static str, default: bool, doc: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(default),
        scope: ParamScope::Global,
        doc,
    }
}

const PARAMS: &[ParamSpec] = &[
    sedf::PERIOD,
    sedf::SLICE,
    sedf::LATENCY,
    sedf::EXTRATIME,
    sedf::WEIGHT,
    ParamSpec {
        default: Default::Str("3.0.2"),
        doc: "Xen release whose SEDF to build on (Govindan et al. modified 3.0.2): Dom0 defaults, penalty repayment, validation and placement.",
        ..sedf::XEN_VERSION
    },
    sedf::LATENCY_HINT,
    switch(
        "prefer_dom0",
        true,
        "Among VCPUs with slice left, prefer the driver domain by the packets its backends have pending (Algorithm 3).",
    ),
    switch(
        "prefer_recipient",
        true,
        "Among VCPUs with slice left, prefer a guest by the packets delivered to it since its last run (Algorithm 1).",
    ),
    switch(
        "prefer_sender",
        true,
        "Among VCPUs with slice left, prefer a guest expected to send: its last sending run's packet count, within the interval between its last two (Algorithm 2).",
    ),
    switch(
        "prefer_in_slack",
        false,
        "Also prefer, in extra time, a more network-intensive VCPU that has received its slice (from the utilisation queue): a reading the paper's text excludes ('so long as it has received less than its slice'), for comparison only.",
    ),
    switch(
        "decide_on_wake",
        false,
        "Also decide again when a VCPU wakes that the rule may prefer and that is more network-intensive than the running one (SEDF decides then only by its own rules; the paper runs its choice as part of SEDF's decisions), for comparison only.",
    ),
    switch(
        "io_accounting",
        false,
        "Charge the driver domain's time for each guest's I/O (events x the platform's per-kind costs) to the guest's reservation instead of the driver domain's (section 4).",
    ),
];

/// The own counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("comm_preferred", "decisions that ran a more network-intensive domain than the queue's head"),
    ("comm_preferred_penalty", "decisions that ran a domain owed its lost slice from the penalty queue ahead of the head"),
    ("comm_no_slack", "more intensive candidates passed over for want of a quantum of slack"),
    ("comm_not_eligible", "decisions at which a more network-intensive VCPU than any the rule may prefer waited for its next period (it had received its slice in the current one)"),
    ("io_charged_ns", "driver-domain time charged to the guests' reservations (ns)"),
    ("io_uncharged_ns", "driver-domain time a guest's reservation could not take (ns)"),
    ("dom0_credited_ns", "charged time credited back to the driver domain's reservation (ns)"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "sedf-comm",
    "SEDF-comm",
    PARAMS,
    |p, _| Box::new(SedfComm::new(p)),
)
.about(
    "Communication-aware SEDF: SEDF's reservations, the most network-intensive domain first within a period, optional I/O accounting.",
    "Govindan et al. 2009 (IEEE Trans. Computers 58(8)), on Xen 3.0.2's SEDF",
)
.with_allocation(sedf::ALLOCATION)
.with_shares(sedf::SHARES)
.with_check_domain(sedf::check_domain)
.with_check_scenario(check_scenario)
.with_counters_after(sedf::COUNTERS, COUNTERS);

/// The SEDF parameters fixed when the hypervisor starts.
pub fn check_scenario(sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    super::reject_boot_changes(sc, &["xen_version", "latency_hint"])
}

/// What counts for a preference or an accounting, from the global parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Switches {
    dom0: bool,
    recipient: bool,
    sender: bool,
    in_slack: bool,
    on_wake: bool,
    accounting: bool,
}

impl Switches {
    fn from(p: &Params) -> Switches {
        Switches {
            dom0: p.bool("prefer_dom0"),
            recipient: p.bool("prefer_recipient"),
            sender: p.bool("prefer_sender"),
            in_slack: p.bool("prefer_in_slack"),
            on_wake: p.bool("decide_on_wake"),
            accounting: p.bool("io_accounting"),
        }
    }

    fn any_preference(&self) -> bool {
        self.dom0 || self.recipient || self.sender
    }
}

/// Per-domain bookkeeping (Xen keeps it on shared pages per domain).
#[derive(Clone, Debug, Default)]
struct Dom {
    /// Algorithm 1: packets delivered to the domain when its last run ended;
    /// those delivered since are pending for it.
    rx_seen: u64,
    /// Algorithm 2: packets it had queued for sending when its last run
    /// ended.
    tx_seen: u64,
    /// Algorithm 2: packets queued in the last run that queued any (the
    /// last-value prediction of the next run's).
    anticipated: u64,
    /// When that run ended (T_tx), and the time from the run before it
    /// that queued packets (Δtx).
    last_tx_at: Option<i64>,
    tx_interval: Option<i64>,
    /// Accounting: the domain's I/O events per kind already accounted.
    flips_seen: [u64; 4],
    /// Accounting: driver-domain time spent for it and not yet charged, ns.
    owed: i64,
    /// Accounting: what it was charged so far, ns.
    charged: i64,
}

impl Dom {
    /// The anticipated transmit intensity at `now`: the prediction, while
    /// the next sending run is expected (within Δtx of the last one).
    fn anticipated_at(&self, now: i64) -> u64 {
        match (self.last_tx_at, self.tx_interval) {
            (Some(t), Some(dt)) if now <= t + dt => self.anticipated,
            _ => 0,
        }
    }
}

/// Growth of an I/O counter since it read `seen`. The counters restart from
/// 0 when the warm-up ends: a counter below what was seen counts from 0.
#[inline]
fn since(now: u64, seen: u64) -> u64 {
    if now >= seen {
        now - seen
    } else {
        now
    }
}

/// A VCPU `choose` may prefer to SEDF's choice.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    intensity: u64,
    /// Its place in SEDF's order: the run queue, then the penalty queue.
    pos: usize,
    vcpu: VcpuId,
    /// On the penalty queue (else on the run queue).
    penalty: bool,
    /// On the utilisation queue only (`prefer_in_slack`).
    util: bool,
}

/// The communication-aware SEDF scheduler's state.
pub struct SedfComm {
    sedf: Sedf,
    on: Switches,
    doms: Vec<Dom>,
    /// Reused by `choose`.
    candidates: Vec<Candidate>,

    stat_preferred: u64,
    stat_preferred_penalty: u64,
    stat_no_slack: u64,
    stat_not_eligible: u64,
    stat_charged_ns: u64,
    stat_uncharged_ns: u64,
    stat_credited_ns: u64,
}

impl SedfComm {
    /// A communication-aware SEDF scheduler with validated global parameters.
    pub fn new(p: &Params) -> SedfComm {
        SedfComm {
            sedf: Sedf::new(p),
            on: Switches::from(p),
            doms: Vec::new(),
            candidates: Vec::new(),
            stat_preferred: 0,
            stat_preferred_penalty: 0,
            stat_no_slack: 0,
            stat_not_eligible: 0,
            stat_charged_ns: 0,
            stat_uncharged_ns: 0,
            stat_credited_ns: 0,
        }
    }

    /// A guest's network intensity: reception plus anticipated transmission.
    fn guest_intensity(&self, ctx: &SchedCtx, d: DomId, now: i64) -> u64 {
        let s = &self.doms[d.idx()];
        let rx = if self.on.recipient {
            since(ctx.io_stats(d).rx_pkts, s.rx_seen)
        } else {
            0
        };
        let tx = if self.on.sender {
            s.anticipated_at(now)
        } else {
            0
        };
        rx + tx
    }

    /// The driver domain's network intensity: packets its backends have
    /// pending, received for guests and sent by them.
    fn driver_intensity(&self, ctx: &SchedCtx, driver: DomId) -> u64 {
        if !self.on.dom0 {
            return 0;
        }
        (0..ctx.ndomains())
            .map(|i| DomId(i as u32))
            .filter(|&d| d != driver)
            .map(|d| {
                let st = ctx.io_stats(d);
                st.rx_arrived_pkts.saturating_sub(st.rx_pkts)
                    + st.tx_queued_pkts.saturating_sub(st.tx_pkts)
            })
            .sum()
    }

    /// The network intensity of `v`'s domain (Algorithm 4, step 1).
    fn intensity(&self, ctx: &SchedCtx, driver: DomId, v: VcpuId, now: i64) -> u64 {
        let d = ctx.domain_of(v);
        if d == driver {
            self.driver_intensity(ctx, driver)
        } else {
            self.guest_intensity(ctx, d, now)
        }
    }

    /// Algorithm 4, step 2: among the VCPUs eligible within their current
    /// period by SEDF's limits (those that have received less than their
    /// slice in it: the run queue, with slice left, and the penalty queue,
    /// owed the slice they lost by blocking briefly), the one of the most
    /// network-intensive domain, if it is more intensive than what SEDF
    /// would run and, while reserved work waits on the run queue, running
    /// it first keeps every other reservation on `p`.
    fn choose(&mut self, ctx: &SchedCtx, p: PcpuId, now: i64) -> Option<Prefer> {
        if !self.on.any_preference() {
            return None;
        }
        let driver = ctx.driver_domain()?;
        // What SEDF itself would run: the EDF head, else the extra-time
        // quantum's VCPU (none when there is no extra time to hand out).
        let (baseline, in_extra) = match self.sedf.runq(p).first() {
            Some(&head) => (Some(head), false),
            None => (self.sedf.extra_time_choice(p, now)?, true),
        };
        let bar = baseline.map_or(0, |v| self.intensity(ctx, driver, v, now));
        let mut cands = std::mem::take(&mut self.candidates);
        cands.clear();
        let reserved = self.sedf.runq(p).iter().map(|&v| (v, false));
        let penalty = self.sedf.penalty_queue(p).iter().map(|&v| (v, true));
        for (pos, (v, pen)) in reserved.chain(penalty).enumerate() {
            if Some(v) == baseline {
                continue;
            }
            let i = self.intensity(ctx, driver, v, now);
            // Only a domain more intensive than SEDF's choice is worth a reordering.
            if i > bar {
                cands.push(Candidate {
                    intensity: i,
                    pos,
                    vcpu: v,
                    penalty: pen,
                    util: false,
                });
            }
        }
        if in_extra && self.on.in_slack {
            let n = cands.len() + self.sedf.penalty_queue(p).len();
            for (k, &v) in self.sedf.util_queue(p).iter().enumerate() {
                if Some(v) == baseline || self.sedf.penalty_queue(p).contains(&v) {
                    continue;
                }
                let i = self.intensity(ctx, driver, v, now);
                if i > bar {
                    cands.push(Candidate {
                        intensity: i,
                        pos: n + k,
                        vcpu: v,
                        penalty: false,
                        util: true,
                    });
                }
            }
        }
        // Diagnosis only (it changes no decision): a runnable VCPU waiting
        // for its next period, more intensive than SEDF's choice and every
        // eligible candidate, is one the rule may not prefer: it has received
        // its slice in its period.
        let best = cands.iter().map(|c| c.intensity).max().unwrap_or(0).max(bar);
        if self.sedf.waitq(p).iter().any(|&v| {
            Some(v) != baseline && ctx.is_runnable(v) && self.intensity(ctx, driver, v, now) > best
        }) {
            self.stat_not_eligible += 1;
        }
        // Most intensive first; equal intensities in SEDF's order (the run
        // queue's before the penalty queue's).
        cands.sort_by(|a, b| b.intensity.cmp(&a.intensity).then(a.pos.cmp(&b.pos)));
        let mut choice = None;
        for c in &cands {
            if in_extra {
                // Extra time: no reservation waits, and the next period
                // starts at least one quantum away (`extra_time_choice`).
                choice = Some(if c.util {
                    Prefer::Util(c.vcpu)
                } else {
                    Prefer::Penalty(c.vcpu)
                });
                break;
            }
            let slack = self.sedf.slack_before(ctx, p, c.vcpu, now);
            if slack >= EXTRA_QUANTUM_NS {
                choice = Some(if c.penalty {
                    Prefer::Penalty(c.vcpu)
                } else {
                    Prefer::Reserved {
                        vcpu: c.vcpu,
                        limit_ns: slack,
                    }
                });
                break;
            }
            self.stat_no_slack += 1;
        }
        self.candidates = cands;
        match choice {
            Some(Prefer::Penalty(_)) => {
                self.stat_preferred += 1;
                self.stat_preferred_penalty += 1;
            }
            Some(_) => self.stat_preferred += 1,
            None => {}
        }
        choice
    }

    /// A run of a VCPU of `d` ended: what it received is processed, and
    /// what it queued for sending predicts its next sending run.
    fn run_ended(&mut self, ctx: &SchedCtx, d: DomId, now: i64) {
        if Some(d) == ctx.driver_domain() {
            return;
        }
        let st = ctx.io_stats(d);
        let s = &mut self.doms[d.idx()];
        s.rx_seen = st.rx_pkts;
        let sent = since(st.tx_queued_pkts, s.tx_seen);
        s.tx_seen = st.tx_queued_pkts;
        if sent > 0 {
            s.anticipated = sent;
            s.tx_interval = s.last_tx_at.map(|t| now - t);
            s.last_tx_at = Some(now);
        }
    }

    /// Section 4: a run of driver-domain VCPU `c` ends. Charge the guests
    /// for the I/O events finished since the last accounting, at most the
    /// run's length in all, and credit the driver domain what was charged.
    fn account(&mut self, ctx: &mut SchedCtx, c: VcpuId, now: i64) {
        let io = &ctx.platform().io;
        let cost = [
            io.net_rx_ns,
            io.net_tx_ns,
            io.disk_read_ns,
            io.disk_write_ns,
        ];
        let driver = ctx.domain_of(c);
        let mut owed = 0i64;
        for (i, s) in self.doms.iter_mut().enumerate() {
            if i == driver.idx() {
                continue;
            }
            let flips = &ctx.io_stats(DomId(i as u32)).io_events_by_kind;
            for k in 0..4 {
                let n = since(flips[k], s.flips_seen[k]);
                s.owed += (n * cost[k]) as i64;
            }
            s.flips_seen = *flips;
            owed += s.owed;
        }
        if owed == 0 {
            return;
        }
        let ran = self.sedf.ran_ns(c, now).max(0);
        let mut charged = 0i64;
        for i in 0..self.doms.len() {
            let s_owed = self.doms[i].owed;
            if s_owed == 0 {
                continue;
            }
            // The run's length, shared in proportion to what is owed.
            let share = if owed <= ran {
                s_owed
            } else {
                (s_owed as i128 * ran as i128 / owed as i128) as i64
            };
            if share == 0 {
                continue;
            }
            self.doms[i].owed -= share;
            // A domain's VCPUs have consecutive ids; each takes an equal part.
            let mut vcpus = ctx.vcpus_of(DomId(i as u32));
            let Some(first) = vcpus.next() else { continue };
            let n = 1 + vcpus.count() as i64;
            for k in 0..n {
                let v = VcpuId(first.0 + k as u32);
                let part = share / n + i64::from(k < share % n);
                if self.sedf.charge(ctx, v, part) {
                    charged += part;
                    self.doms[i].charged += part;
                } else {
                    self.stat_uncharged_ns += part.max(0) as u64;
                }
            }
        }
        self.stat_charged_ns += charged as u64;
        if self.sedf.in_reserved_time(c) {
            self.stat_credited_ns += charged as u64;
        }
        self.sedf.credit_current(c, charged, now);
    }
}

impl Scheduler for SedfComm {
    fn name(&self) -> &'static str {
        "sedf-comm"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.doms = vec![Dom::default(); ctx.ndomains()];
        self.sedf.init(ctx);
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.sedf.init_domain(ctx, dom, params);
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.sedf.insert_vcpu(ctx, v);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.sedf.remove_vcpu(ctx, v);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.sedf.wake(ctx, v);
        if !(self.on.on_wake && self.on.any_preference()) {
            return;
        }
        let (Some(driver), p) = (ctx.driver_domain(), ctx.processor(v)) else {
            return;
        };
        let Some(cur) = ctx.current(p).filter(|&c| c != v) else {
            return;
        };
        let eligible = self.sedf.runq(p).contains(&v)
            || self.sedf.penalty_queue(p).contains(&v)
            || (self.on.in_slack && self.sedf.util_queue(p).contains(&v));
        let now = ctx.now().0 as i64;
        if eligible && self.intensity(ctx, driver, v, now) > self.intensity(ctx, driver, cur, now)
        {
            ctx.tickle(p);
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.sedf.sleep(ctx, v);
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        let now = ctx.now().0 as i64;
        // Without a driver domain there is no I/O to count or charge.
        if let (Some(c), Some(driver)) = (ctx.current(p), ctx.driver_domain()) {
            let d = ctx.domain_of(c);
            if self.on.accounting && d == driver {
                self.account(ctx, c, now);
            }
            self.run_ended(ctx, d, now);
        }
        self.sedf.desched_current(ctx, p, now);
        self.sedf.update_queues(p, now);
        let prefer = self.choose(ctx, p, now);
        self.sedf.pick(p, now, prefer)
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        self.sedf.pick_cpu(ctx, v)
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.sedf.migrate(ctx, v, to);
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.sedf.adjust(ctx, dom, params);
    }

    fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
        let was = self.on.accounting;
        self.on = Switches::from(params);
        if self.on.accounting && !was {
            // Accounting starts now: I/O done before is nobody's debt.
            for (i, s) in self.doms.iter_mut().enumerate() {
                s.flips_seen = ctx.io_stats(DomId(i as u32)).io_events_by_kind;
                s.owed = 0;
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.sedf.counters();
        c.extend([
            ("comm_preferred", self.stat_preferred),
            ("comm_preferred_penalty", self.stat_preferred_penalty),
            ("comm_no_slack", self.stat_no_slack),
            ("comm_not_eligible", self.stat_not_eligible),
            ("io_charged_ns", self.stat_charged_ns),
            ("io_uncharged_ns", self.stat_uncharged_ns),
            ("dom0_credited_ns", self.stat_credited_ns),
        ]);
        c
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = self.sedf.dump(ctx);
        let now = ctx.now().0 as i64;
        let driver = ctx.driver_domain();
        for i in 0..self.doms.len() {
            let d = DomId(i as u32);
            let intensity = if Some(d) == driver {
                self.driver_intensity(ctx, d)
            } else {
                self.guest_intensity(ctx, d, now)
            };
            let extra: i64 = ctx.vcpus_of(d).map(|v| self.sedf.extra_time_ns(v)).sum();
            let _ = writeln!(
                s,
                "dom{i}: intensity={intensity} anticipated={} owed={} charged={} extra={extra}",
                self.doms[i].anticipated_at(now),
                self.doms[i].owed,
                self.doms[i].charged,
            );
        }
        s
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        let mut st = self.sedf.state(ctx);
        let now = ctx.now().0 as i64;
        let driver = ctx.driver_domain();
        st.domains = (0..self.doms.len())
            .map(|i| {
                let d = DomId(i as u32);
                let intensity = if Some(d) == driver {
                    self.driver_intensity(ctx, d)
                } else {
                    self.guest_intensity(ctx, d, now)
                };
                let extra: i64 = ctx.vcpus_of(d).map(|v| self.sedf.extra_time_ns(v)).sum();
                SchedState::record(serde_json::json!({
                    "intensity": intensity, "anticipated": self.doms[i].anticipated_at(now),
                    "owed": self.doms[i].owed, "charged": self.doms[i].charged, "extra": extra,
                }))
            })
            .collect();
        st
    }
}
