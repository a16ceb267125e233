//! BVT, Borrowed Virtual Time: Xen 1.x – 3.0.2 (default in 1.x and 2.0).
//!
//! Design (Duda & Cheriton, SOSP '99). Each VCPU has an *actual virtual
//! time* (avt) that advances while it runs, by `mcuadv` units per minimum
//! charging unit (MCU, 100 µs) of run time, rounded **up** to whole MCUs at
//! every deschedule. `mcuadv` is the inverse of a weight: CPU shares of
//! continuously runnable VCPUs on a PCPU are proportional to `1/mcuadv`. The
//! PCPU runs the VCPU with the smallest *effective* virtual time (evt), which
//! is avt, or avt − `warpvalue` while the domain is warped, a head start for
//! latency-sensitive domains that lasts at most `warpl` of continuous running
//! and, after such a timeout, is withheld for `warpu`.
//!
//! Each PCPU keeps one unsorted run list (wakers at the head, preempted VCPUs
//! at the tail; the earlier entry wins evt ties) and a *system virtual time*,
//! the smallest avt on the list. A waking VCPU's avt is raised to it, so long
//! sleepers bank no credit. A waker whose evt is not above the running VCPU's
//! (charged up to now) preempts at once; otherwise it pulls the PCPU's next
//! decision in to about a context allowance after the running VCPU started.
//!
//! The slice is the context allowance `ctx_allow` plus the evt lead of the
//! runner-up divided by the runner's `mcuadv`. That quotient is a number of
//! MCUs but Xen adds it as nanoseconds (**as coded**, since 2003), so with
//! two or more runnable VCPUs the slice is `ctx_allow` plus a few ns; with
//! one, `10 · ctx_allow`; an idle PCPU decides again every `ctx_allow`.
//! Virtual times are unsigned 32-bit and wrap as in Xen (a warp value larger
//! than a VCPU's avt wraps its evt to near 2^32, the back of the queue).
//!
//! BVT cannot cap: it is work-conserving, and there is no balancing between
//! PCPUs; placement at creation decides which VCPUs share a PCPU.
//!
//! Parameters (`xm bvt` / `xm sched-bvt`): per domain `mcuadv`, `warpback`,
//! `warpvalue` (virtual-time units), `warpl` and `warpu` (ms); global
//! `ctx_allow` (ns, `xm bvt_ctxallow`) and `xen_version` (2.0 to 3.0.2:
//! placement, and from 3.0.2 charging from the run-state entry, so that a
//! VCPU picked again is charged again from its first dispatch; later
//! releases have no BVT and are refused). Deviations: see
//! `docs/schedulers/bvt.md`.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu` (placement by release),
//! `wake` (preempt or pull the timer in), `sleep`, `do_schedule`,
//! `migrate`, `pick_cpu`, `timer` (pulled-in decision, warp, unwarp),
//! `adjust`, `adjust_global`.

use super::placement::{CreationRule, PinRule, Placer};
use super::Shares;
use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::time::{Time, NS_PER_MS};

/// Minimum charging unit: run time is charged in whole MCUs, rounded up.
pub const MCU_NS: u32 = 100_000;
/// Default `mcuadv` (virtual-time units per MCU): the inverse of a weight.
pub const MCU_ADVANCE: u32 = 10;
/// Default context-switch allowance.
pub const CTX_ALLOW_NS: i64 = 5_000_000;
/// Smallest context allowance Xen 3.0 reports (it clamps on read).
pub const CTX_MIN_NS: i64 = 10_000;
/// Largest context allowance whose `10 × ctx_allow` fits Xen's 32-bit slice.
pub const CTX_MAX_NS: i64 = i32::MAX as i64 / 10;
/// Default warp limit.
const WARPL_MS: i64 = 2000;
/// Default unwarp requirement.
const WARPU_MS: i64 = 1000;
/// Virtual time of the idle VCPU, and "none" for the scans.
const VT_MAX: u32 = u32::MAX;
/// System virtual time at which a PCPU's virtual times are shifted down.
const SVT_WRAP_AT: u32 = 0xF000_0000;
/// How far they are shifted.
const SVT_WRAP_BY: u32 = 0xE000_0000;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "mcuadv",
        unit: "",
        kind: ParamKind::Int { min: 1, max: 1_000_000 },
        default: Default::Int(MCU_ADVANCE as i64),
        scope: ParamScope::Domain,
        doc: "Virtual time charged per 100 us MCU of running, the inverse of a weight (xm sched-bvt MCUADV; Xen 2.0's cpu_weight W is mcuadv = int(10/W)).",
    },
    ParamSpec {
        name: "warpback",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(false),
        scope: ParamScope::Domain,
        doc: "Warping enabled (xm sched-bvt WARPBACK).",
    },
    ParamSpec {
        name: "warpvalue",
        unit: "vt",
        kind: ParamKind::Int { min: i32::MIN as i64, max: i32::MAX as i64 },
        default: Default::Int(0),
        scope: ParamScope::Domain,
        doc: "How far evt is lowered while warped, in virtual-time units (10 = one MCU at the default mcuadv) (xm sched-bvt WARPVALUE).",
    },
    ParamSpec {
        name: "warpl",
        unit: "ms",
        kind: ParamKind::Int { min: 0, max: 2_000_000 },
        default: Default::Int(WARPL_MS),
        scope: ParamScope::Domain,
        doc: "Warp limit: longest continuous run while warped; 0 = unlimited (xm sched-bvt WARPL).",
    },
    ParamSpec {
        name: "warpu",
        unit: "ms",
        kind: ParamKind::Int { min: 0, max: 2_000_000 },
        default: Default::Int(WARPU_MS),
        scope: ParamScope::Domain,
        doc: "Unwarp requirement: how long warping is withheld after a warp timeout; 0 = warp only once (xm sched-bvt WARPU).",
    },
    ParamSpec {
        name: "ctx_allow",
        unit: "ns",
        kind: ParamKind::Int { min: CTX_MIN_NS, max: CTX_MAX_NS },
        default: Default::Int(CTX_ALLOW_NS),
        scope: ParamScope::Global,
        doc: "Context-switch allowance, about the minimum quantum (xm bvt_ctxallow / sched-bvt-ctxallow).",
    },
    ParamSpec {
        name: "xen_version",
        unit: "",
        kind: ParamKind::Version {
            min: Version::new(2, 0),
            max: LAST,
        },
        default: Default::Str("3.0"),
        scope: ParamScope::Global,
        doc: "Xen release whose BVT to reproduce: \"2.0\", \"3.0\" (3.0.0), \"3.0.1\" or \"3.0.2\" (BVT was removed before 3.0.3): placement of new domains, and from 3.0.2 charging from the VCPU's run-state entry.",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("wake_preemptions", "wake-ups that preempted the running VCPU at once"),
    ("wake_timer_pulls", "wake-ups that cut the running slice to about ctx_allow"),
    ("warp_timeouts", "warps ended by warpl"),
    ("svt_wraps", "system virtual time wrapped back (and every VCPU's with it)"),
    ("past_timer_rounds", "rounds charged to a VCPU whose lead would overflow the slice timer"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "bvt",
    "BVT",
    PARAMS,
    |p, _| Box::new(Bvt::new(p)),
)
.about(
    "Xen's Borrowed Virtual Time: per-PCPU virtual-time fair share with warping; no caps.",
    "Xen 1.x - 3.0.2; default scheduler in 1.x and 2.0",
)
.with_shares(Shares::InverseWeight {
        param: "mcuadv",
        base: 40.0,
    })
.with_check_global(check_global)
.with_counters(COUNTERS);

/// The last release with BVT: it was removed on 23 August 2006
/// (`db51cd09d3`), before 3.0.3.
const LAST: Version = Version::with_patch(3, 0, 2);

/// BVT exists up to 3.0.2 only; the parameter's range admits every 3.0.x.
fn check_global(g: &Params, path: &str) -> Result<(), ScenarioError> {
    let v = g.version("xen_version");
    if v > LAST {
        return Err(ScenarioError::new(
            format!("{path}.xen_version"),
            format!("\"{v}\" has no BVT (Xen removed it on 23 Aug 2006, before 3.0.3); expected a Xen version from \"2.0\" to \"{LAST}\""),
        ));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct Dom {
    mcu_advance: u32,
    warpback: bool,
    /// Warping now (Xen's `warp` flag).
    warp: bool,
    warp_value: i32,
    warpl_ns: u64,
    warpu_ns: u64,
    first_vcpu: VcpuId,
}

#[derive(Clone, Debug)]
struct Unit {
    avt: u32,
    evt: u32,
    /// Where run time is charged from: the last dispatch (Xen ≤ 3.0.1's
    /// `lastschd`, set at every decision, also when the VCPU is picked
    /// again), or from 3.0.2 its run-state entry (`state_entry_time`, which
    /// a decision that picks the running VCPU again leaves alone, so such a
    /// VCPU is charged again from its first dispatch).
    lastschd: Time,
    migrated: bool,
    on_runq: bool,
}

#[derive(Clone, Debug)]
struct Pcpu {
    /// The run list, head first; the running VCPU stays on it.
    runq: Vec<VcpuId>,
    svt: u32,
    /// When the PCPU's scheduling timer (`s_timer`) fires next.
    s_timer_expires: i64,
}

/// The BVT scheduler's state.
pub struct Bvt {
    ctx_allow: i64,
    /// Xen 3.0.2: charge from the run-state entry (see [`Unit::lastschd`]).
    charge_from_state_entry: bool,
    creation: CreationRule,
    pin: PinRule,
    doms: Vec<Dom>,
    units: Vec<Unit>,
    pcpus: Vec<Pcpu>,
    placer: Placer,
    stat_wake_preempt: u64,
    stat_wake_pull: u64,
    stat_warp_timeouts: u64,
    stat_svt_wraps: u64,
    stat_past_timer_rounds: u64,
}

impl Bvt {
    /// A BVT scheduler with validated global parameters.
    pub fn new(p: &Params) -> Bvt {
        let (creation, pin) = if p.version("xen_version") < Version::new(3, 0) {
            (CreationRule::Xen20, PinRule::CreateWithin)
        } else {
            (CreationRule::Xen30, PinRule::FirstOfAffinity)
        };
        Bvt {
            ctx_allow: p.int("ctx_allow"),
            charge_from_state_entry: p.version("xen_version") >= LAST,
            creation,
            pin,
            doms: Vec::new(),
            units: Vec::new(),
            pcpus: Vec::new(),
            placer: Placer::default(),
            stat_wake_preempt: 0,
            stat_wake_pull: 0,
            stat_warp_timeouts: 0,
            stat_svt_wraps: 0,
            stat_past_timer_rounds: 0,
        }
    }

    #[inline]
    fn dom_of(&self, ctx: &SchedCtx, v: VcpuId) -> &Dom {
        &self.doms[ctx.domain_of(v).idx()]
    }

    /// Xen's `calc_avt`: avt charged for the run since the last dispatch,
    /// in whole MCUs rounded up (32-bit arithmetic, as Xen's).
    fn calc_avt(&self, ctx: &SchedCtx, v: VcpuId, now: Time) -> u32 {
        let u = &self.units[v.idx()];
        let ranfor = now.0.wrapping_sub(u.lastschd.0) as u32;
        let mcus = ranfor.wrapping_add(MCU_NS - 1) / MCU_NS;
        u.avt
            .wrapping_add(mcus.wrapping_mul(self.dom_of(ctx, v).mcu_advance))
    }

    /// Xen's `calc_evt`.
    fn calc_evt(&self, ctx: &SchedCtx, v: VcpuId, avt: u32) -> u32 {
        let d = self.dom_of(ctx, v);
        if d.warp {
            avt.wrapping_sub(d.warp_value as u32)
        } else {
            avt
        }
    }

    fn runq_remove(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.pcpus[p.idx()].runq;
        if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        self.units[v.idx()].on_runq = false;
    }

    /// Scheduler timer ids: one per PCPU for a pulled-in decision, then a
    /// warp and an unwarp timer per domain.
    fn warp_timer_id(&self, d: DomId) -> u32 {
        (self.pcpus.len() + 2 * d.idx()) as u32
    }

    fn unwarp_timer_id(&self, d: DomId) -> u32 {
        self.warp_timer_id(d) + 1
    }

    /// Where a domain's warp timers live and whom they tickle: the PCPU of
    /// its VCPU 0.
    fn dom_home(&self, ctx: &SchedCtx, d: DomId) -> PcpuId {
        ctx.processor(self.doms[d.idx()].first_vcpu)
    }

    fn set_params(&mut self, ctx: &mut SchedCtx, dom: DomId, p: &Params) {
        let d = &mut self.doms[dom.idx()];
        d.mcu_advance = p.int("mcuadv") as u32;
        d.warpback = p.bool("warpback");
        d.warp = d.warpback;
        d.warp_value = p.int("warpvalue") as i32;
        d.warpl_ns = p.int("warpl") as u64 * NS_PER_MS;
        d.warpu_ns = p.int("warpu") as u64 * NS_PER_MS;
        let warpback = d.warpback;
        ctx.cancel_timer(self.unwarp_timer_id(dom));
        if !warpback {
            ctx.cancel_timer(self.warp_timer_id(dom));
        }
    }

    fn warp_timeout(&mut self, ctx: &mut SchedCtx, dom: DomId) {
        self.stat_warp_timeouts += 1;
        let home = self.dom_home(ctx, dom);
        let d = &mut self.doms[dom.idx()];
        d.warp = false;
        if d.warpu_ns == 0 {
            // As coded: only switching warping off for good tickles.
            d.warpback = false;
            ctx.tickle(home);
        }
        let at = ctx.now().after(self.doms[dom.idx()].warpu_ns);
        ctx.arm_timer(self.unwarp_timer_id(dom), at, home);
    }

    fn unwarp_timeout(&mut self, ctx: &mut SchedCtx, dom: DomId) {
        let d = &mut self.doms[dom.idx()];
        if d.warpback {
            d.warp = true;
            let home = self.dom_home(ctx, dom);
            ctx.tickle(home);
        }
    }
}

impl Scheduler for Bvt {
    fn name(&self) -> &'static str {
        "bvt"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.pcpus = vec![
            Pcpu {
                runq: Vec::new(),
                svt: 0,
                s_timer_expires: 0,
            };
            ctx.npcpus()
        ];
        self.placer = Placer::new(ctx.npcpus());
        self.units = Vec::with_capacity(ctx.nvcpus());
        // Xen starts the scheduler on every PCPU at boot (`schedulers_start`).
        for p in 0..ctx.npcpus() {
            ctx.tickle(PcpuId(p as u32));
        }
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        debug_assert_eq!(dom.idx(), self.doms.len());
        let first_vcpu = ctx.vcpus_of(dom).next().expect("a domain has a VCPU");
        self.doms.push(Dom {
            mcu_advance: MCU_ADVANCE,
            warpback: false,
            warp: false,
            warp_value: 0,
            warpl_ns: WARPL_MS as u64 * NS_PER_MS,
            warpu_ns: WARPU_MS as u64 * NS_PER_MS,
            first_vcpu,
        });
        self.set_params(ctx, dom, params);
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = self.placer.place(ctx, v, self.creation, self.pin);
        let svt = self.pcpus[p.idx()].svt;
        debug_assert_eq!(v.idx(), self.units.len());
        self.units.push(Unit {
            avt: svt,
            evt: svt,
            lastschd: ctx.now(),
            migrated: false,
            on_runq: false,
        });
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.runq_remove(p, v);
        ctx.count_queue_op();
        self.placer.removed(p);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if self.units[v.idx()].on_runq {
            return;
        }
        let p = ctx.processor(v);
        let now = ctx.now();
        self.pcpus[p.idx()].runq.insert(0, v);
        ctx.count_queue_op();
        let svt = self.pcpus[p.idx()].svt;
        let u = &mut self.units[v.idx()];
        u.on_runq = true;
        if u.avt < svt || u.migrated {
            u.avt = svt;
            u.migrated = false;
        }
        let evt = self.calc_evt(ctx, v, self.units[v.idx()].avt);
        self.units[v.idx()].evt = evt;
        let Some(cur) = ctx.current(p) else {
            self.stat_wake_preempt += 1;
            ctx.tickle(p);
            return;
        };
        let cur_evt = self.calc_evt(ctx, cur, self.calc_avt(ctx, cur, now));
        if evt <= cur_evt {
            self.stat_wake_preempt += 1;
            ctx.tickle(p);
        } else {
            // Same ns-for-MCU arithmetic as the slice (as coded).
            let lead = evt.wrapping_sub(cur_evt) / self.dom_of(ctx, cur).mcu_advance;
            let at = self.units[cur.idx()].lastschd.0 as i64 + i64::from(lead) + self.ctx_allow;
            if self.pcpus[p.idx()].s_timer_expires > at {
                self.stat_wake_pull += 1;
                self.pcpus[p.idx()].s_timer_expires = at;
                ctx.arm_timer(p.0, Time(at.max(0) as u64), p);
            }
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        } else {
            self.runq_remove(p, v);
            ctx.count_queue_op();
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        let now = ctx.now();
        ctx.cancel_timer(p.0);
        let running = ctx.current(p);
        if let Some(prev) = running {
            let avt = self.calc_avt(ctx, prev, now);
            let evt = self.calc_evt(ctx, prev, avt);
            let u = &mut self.units[prev.idx()];
            u.avt = avt;
            u.evt = evt;
            let dom = ctx.domain_of(prev);
            let d = &self.doms[dom.idx()];
            if d.warpback && d.warpl_ns > 0 {
                ctx.cancel_timer(self.warp_timer_id(dom));
            }
            self.runq_remove(p, prev);
            ctx.count_queue_op();
            if ctx.is_runnable(prev) {
                self.pcpus[p.idx()].runq.push(prev);
                ctx.count_queue_op();
                self.units[prev.idx()].on_runq = true;
            }
        }
        // A negative 32-bit slice is a timer in the past: Xen decides again at
        // once, and again, each round charging the chosen VCPU one MCU (it
        // ran for less than an MCU since the last round, but not for 0 ns),
        // until its lead over the runner-up is small enough for the slice to
        // be non-negative. Decisions take no time here, so a 0 ns charge
        // would repeat the same decision forever at one instant: the rounds
        // are made here, at once (in chunks, so that the svt wrap check
        // below runs as often as Xen's per-round check would need to).
        let (next, r_time) = loop {
            // Smallest and second-smallest evt; the idle VCPU (evt = VT_MAX) is
            // the initial best and so the runner-up of a lone VCPU.
            let mut next: Option<VcpuId> = None;
            let mut next_evt = VT_MAX;
            let mut prime: Option<Option<VcpuId>> = None;
            let mut prime_evt = VT_MAX;
            let mut min_avt = VT_MAX;
            for &v in &self.pcpus[p.idx()].runq {
                let u = &self.units[v.idx()];
                if u.evt < next_evt {
                    prime = Some(next);
                    prime_evt = next_evt;
                    next = Some(v);
                    next_evt = u.evt;
                } else if prime_evt == VT_MAX || u.evt < prime_evt {
                    prime = Some(Some(v));
                    prime_evt = u.evt;
                }
                min_avt = min_avt.min(u.avt);
            }
            if let Some(n) = next {
                let dom = ctx.domain_of(n);
                let d = &self.doms[dom.idx()];
                if d.warp && d.warpl_ns > 0 {
                    let at = now.after(d.warpl_ns);
                    let home = self.dom_home(ctx, dom);
                    ctx.arm_timer(self.warp_timer_id(dom), at, home);
                }
            }
            let pc = &mut self.pcpus[p.idx()];
            if min_avt != VT_MAX {
                pc.svt = min_avt;
            }
            if pc.svt >= SVT_WRAP_AT {
                pc.svt -= SVT_WRAP_BY;
                self.stat_svt_wraps += 1;
                for (i, u) in self.units.iter_mut().enumerate() {
                    if ctx.processor(VcpuId(i as u32)) == p {
                        u.evt = u.evt.wrapping_sub(SVT_WRAP_BY);
                        u.avt = u.avt.wrapping_sub(SVT_WRAP_BY);
                    }
                }
            }
            let ctx_allow = self.ctx_allow as i32;
            let r = match (next, prime) {
                (None, _) => ctx_allow,
                (Some(_), None) | (Some(_), Some(None)) => ctx_allow.wrapping_mul(10),
                (Some(n), Some(Some(_))) => {
                    let lead = prime_evt.wrapping_sub(next_evt) / self.dom_of(ctx, n).mcu_advance;
                    lead.wrapping_add(ctx_allow as u32) as i32
                }
            };
            if r >= 0 {
                break (next, r);
            }
            let (Some(n), Some(Some(_))) = (next, prime) else {
                break (next, r.max(0));
            };
            let mcu = self.dom_of(ctx, n).mcu_advance;
            let lead = u64::from(prime_evt.wrapping_sub(next_evt) / mcu);
            let rounds = (lead + u64::from(ctx_allow as u32) - (i32::MAX as u64))
                .min((0x1000_0000 / u64::from(mcu)).max(1));
            let charge = (rounds as u32).wrapping_mul(mcu);
            let u = &mut self.units[n.idx()];
            u.avt = u.avt.wrapping_add(charge);
            u.evt = u.evt.wrapping_add(charge);
            self.stat_past_timer_rounds += rounds;
            // Each round deschedules it to the tail of the run list.
            self.runq_remove(p, n);
            ctx.count_queue_op();
            self.pcpus[p.idx()].runq.push(n);
            ctx.count_queue_op();
            self.units[n.idx()].on_runq = true;
        };
        if let Some(n) = next {
            // 3.0.2's `__enter_scheduler` returns before the run-state
            // change when it picks the running VCPU again.
            if !(self.charge_from_state_entry && running == Some(n)) {
                self.units[n.idx()].lastschd = now;
            }
        }
        let slice = r_time as u64;
        self.pcpus[p.idx()].s_timer_expires = now.0 as i64 + slice as i64;
        Decision {
            next,
            slice_ns: Some(slice),
            migrated: false,
        }
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        super::placement::stay_or_first_allowed(ctx, v)
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.placer.moved(ctx.processor(v), to);
        // DF_MIGRATED marks a move to another PCPU (Xen sets it only when the
        // processor changes); a re-placement that stays (an `xl vcpu-pin`
        // that keeps the PCPU) must not reset the VCPU's virtual time.
        if ctx.processor(v) != to {
            self.units[v.idx()].migrated = true;
        }
        ctx.set_processor(v, to);
    }

    fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
        let n = self.pcpus.len() as u32;
        if id < n {
            // The pulled-in scheduling timer.
            ctx.tickle(PcpuId(id));
        } else {
            let dom = DomId((id - n) / 2);
            if (id - n).is_multiple_of(2) {
                self.warp_timeout(ctx, dom);
            } else {
                self.unwarp_timeout(ctx, dom);
            }
        }
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.set_params(ctx, dom, params);
    }

    fn adjust_global(&mut self, _ctx: &mut SchedCtx, params: &Params) {
        self.ctx_allow = params.int("ctx_allow");
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("wake_preemptions", self.stat_wake_preempt),
            ("wake_timer_pulls", self.stat_wake_pull),
            ("warp_timeouts", self.stat_warp_timeouts),
            ("svt_wraps", self.stat_svt_wraps),
            ("past_timer_rounds", self.stat_past_timer_rounds),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "bvt: ctx_allow={} ns", self.ctx_allow);
        for (i, pc) in self.pcpus.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = write!(
                s,
                "pcpu{i}: svt={:#x} cur={:?} runq=[",
                pc.svt,
                cur.map(|v| v.0)
            );
            for v in &pc.runq {
                let u = &self.units[v.idx()];
                let _ = write!(s, " v{}(avt={:#x} evt={:#x})", v.0, u.avt, u.evt);
            }
            let _ = writeln!(s, " ]");
        }
        s
    }
}
