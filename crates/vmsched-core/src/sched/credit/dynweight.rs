//! Credit with dynamic weights (`credit-dynweight`), the proposal of the
//! dynamic-weight Credit thesis chapter (`docs/schedulers/credit-dynweight.md`;
//! its evaluation is experiment E003-2 of `docs/reproduce-proposals.md`).
//!
//! Design. Credit, unchanged, whose domain weights are re-derived at run
//! time so that each domain's share of the PCPUs tracks its demand: "VMs with
//! more workload should get more weight value than the VMs with lesser
//! workload". The thesis's rule is in a chapter that is missing; only its
//! target survives, expected share_i = load_i / Σ load. That target is the
//! allocation in which every domain gets the *same fraction of what it asks
//! for*, and the rule here, vmsched's, steers the weights to it:
//!
//! * **Measurement.** Over each window of `window_ms` the scheduler measures,
//!   per domain, its demand D (time its VCPUs were runnable or running: from
//!   `wake` until `do_schedule` finds them blocked or `sleep` takes them
//!   away; a VCPU parked by its cap is not demanding) and its service R
//!   (time they ran), from its own hooks.
//! * **Satisfaction.** A domain that demanded something got σ_i = R_i / D_i;
//!   the host as a whole σ = ΣR / ΣD (over the dynamic domains that demanded
//!   something).
//! * **Step.** Each such domain's weight is multiplied by
//!   1 + `gain` × (f_i − 1), with f_i = σ / σ_i bounded to [1/2, 2] (2 when it
//!   got nothing): a domain served less than the host average gains weight,
//!   one served more loses it. Then the configured total weight of the
//!   dynamic domains (less what those that asked for nothing keep) is shared
//!   out in proportion to the stepped weights, in integers by largest
//!   remainders, each within Credit's 1..=65535 (a share past a bound is set
//!   to it and the rest re-shared): the total is preserved exactly whenever
//!   the bounds allow. At the fixed point every domain gets the same
//!   fraction of its demand, which is share_i = load_i / Σ load when the
//!   host is contended. Domains that demanded nothing keep their weight;
//!   domains with `dynamic = false` (a driver domain, say) keep their
//!   configured weight.
//! * New weights act at the next 30 ms accounting, as an
//!   `xl sched-credit -w` would.
//!
//! The weights start at the configured ones. Credit's own weighting (per
//! domain before 4.1, per active VCPU since) needs no special case: the step
//! corrects whatever the weight turns into.
//!
//! What the hypervisor can see limits what any such rule can do (see
//! `docs/schedulers/credit-dynweight.md`): a VCPU whose guest keeps more work
//! than it gets is runnable all the time, whatever its load, so two starved
//! single-VCPU domains look the same and stay equal.
//!
//! Integer arithmetic throughout (ratios in units of 2^-16; `gain` is
//! converted once), so runs are bit-identical everywhere.
//!
//! Parameters: Credit's, plus `window_ms` and `gain` (pool-wide) and
//! `dynamic` (per domain).
//!
//! Hooks: `init` (arms the window timer), `init_domain`, `wake`, `sleep` and
//! `do_schedule` (measurement, around Credit's), `timer` (the window, else
//! Credit's), `adjust`, `adjust_global`, `counters`, `dump`; the rest are
//! Credit's.

use super::{Credit, PARAMS as CREDIT_PARAMS};
use crate::sched::{Allocation, AllocParam, AllocValue, Shares};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::sched::{Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo};
use crate::time::{Time, NS_PER_MS};

/// Fixed point of ratios (satisfaction, step factor, gain): 1.0.
const ONE: u128 = 1 << 16;
/// A window changes a weight by at most this factor (either way).
const MAX_STEP: u128 = 2;
/// Credit's weight range.
const WEIGHT_MIN: u64 = 1;
const WEIGHT_MAX: u64 = 65535;

const OWN_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "window_ms",
        unit: "ms",
        kind: ParamKind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Default::Int(1000),
        scope: ParamScope::Global,
        doc: "Demand and service are measured over windows of this length; weights are stepped at the end of each.",
    },
    ParamSpec {
        name: "gain",
        unit: "",
        kind: ParamKind::Float {
            min: 0.001,
            max: 1.0,
        },
        default: Default::Float(0.5),
        scope: ParamScope::Global,
        doc: "Step size: a weight is multiplied by 1 + gain x (f - 1), f = host's served/demanded over the domain's, in [1/2, 2].",
    },
    ParamSpec {
        name: "dynamic",
        unit: "",
        kind: ParamKind::Bool,
        default: Default::Bool(true),
        scope: ParamScope::Domain,
        doc: "Step this domain's weight to balance served/demanded CPU; false keeps its configured weight (e.g. for a driver domain).",
    },
];

/// The own counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("weight_updates", "weight recomputations"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "credit-dynweight",
    "Credit, dynamic weights",
    extended_params!(CREDIT_PARAMS, OWN_PARAMS),
    |p, n| sized_scheduler!(n, W => CreditDynweight::<W>::new(p)),
)
.about(
    "Credit with dynamic weights (dynamic-weight Credit thesis chapter): weights stepped every window so each domain gets the same fraction of its demand.",
    "proposal: the dynamic-weight Credit thesis chapter (rule missing; vmsched's rule)",
)
.with_allocation(Allocation {
    rule: "cap = A (as Credit: dynamic weights leave Credit's caps as they are)",
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

#[derive(Clone, Debug)]
struct DynDom {
    /// The configured weight (scenario or `xl sched-credit -w`).
    base_weight: u32,
    dynamic: bool,
    /// Demanded (runnable or running) and served (running) ns in the last
    /// complete window.
    demand_ns: u64,
    served_ns: u64,
}

/// Per-VCPU measurement in the current window.
#[derive(Clone, Copy, Debug, Default)]
struct Meter {
    /// Runnable (or running) since; `None` while not runnable.
    demanding_since: Option<Time>,
    /// Running since; `None` while not running.
    running_since: Option<Time>,
    demand_ns: u64,
    served_ns: u64,
}

/// Credit whose weights follow measured demand.
pub struct CreditDynweight<const W: usize> {
    c: Credit<W>,
    window_ns: u64,
    /// `gain` in units of 2^-16.
    gain: u128,
    timer_id: u32,
    doms: Vec<DynDom>,
    meters: Vec<Meter>,
    stat_updates: u64,
}

impl<const W: usize> CreditDynweight<W> {
    /// A dynamic-weight Credit scheduler with validated global parameters.
    pub fn new(p: &Params) -> CreditDynweight<W> {
        let mut s = CreditDynweight {
            c: Credit::new(p),
            window_ns: 0,
            gain: 0,
            timer_id: 0,
            doms: Vec::new(),
            meters: Vec::new(),
            stat_updates: 0,
        };
        s.set_tunables(p);
        s
    }

    fn set_tunables(&mut self, p: &Params) {
        self.window_ns = p.int("window_ms") as u64 * NS_PER_MS;
        self.gain = ((p.float("gain") * ONE as f64).round() as u128).max(1);
    }

    /// `v` stops demanding CPU now.
    fn stop_demanding(&mut self, v: VcpuId, now: Time) {
        let m = &mut self.meters[v.idx()];
        if let Some(s) = m.demanding_since.take() {
            m.demand_ns += now.since(s);
        }
    }

    /// `v` stops running now.
    fn stop_running(&mut self, v: VcpuId, now: Time) {
        let m = &mut self.meters[v.idx()];
        if let Some(s) = m.running_since.take() {
            m.served_ns += now.since(s);
        }
    }

    /// The end of a window: collect each domain's demand and service.
    fn end_window(&mut self, ctx: &SchedCtx) {
        self.stat_updates += 1;
        let now = ctx.now();
        for d in 0..self.doms.len() {
            let (mut demand, mut served) = (0, 0);
            for v in ctx.vcpus_of(DomId(d as u32)) {
                let m = &mut self.meters[v.idx()];
                if let Some(s) = m.demanding_since.replace(now) {
                    m.demand_ns += now.since(s);
                } else {
                    m.demanding_since = None;
                }
                if let Some(s) = m.running_since.replace(now) {
                    m.served_ns += now.since(s);
                } else {
                    m.running_since = None;
                }
                demand += std::mem::take(&mut m.demand_ns);
                served += std::mem::take(&mut m.served_ns);
            }
            self.doms[d].demand_ns = demand;
            self.doms[d].served_ns = served;
        }
        self.step_weights();
    }

    /// One step of every dynamic domain that demanded CPU in the window.
    fn step_weights(&mut self) {
        let stepped: Vec<usize> = (0..self.doms.len())
            .filter(|&d| self.doms[d].dynamic && self.doms[d].demand_ns > 0)
            .collect();
        let demand: u128 = stepped
            .iter()
            .map(|&d| u128::from(self.doms[d].demand_ns))
            .sum();
        let served: u128 = stepped
            .iter()
            .map(|&d| u128::from(self.doms[d].served_ns))
            .sum();
        if stepped.is_empty() || served == 0 {
            return;
        }
        let weight = |d: usize| u128::from(self.c.doms[d].weight);
        // The dynamic domains' configured total, less what the ones that
        // asked for nothing keep.
        let dynamic = || (0..self.doms.len()).filter(|&d| self.doms[d].dynamic);
        let configured: u128 = dynamic()
            .map(|d| u128::from(self.doms[d].base_weight))
            .sum();
        let kept: u128 = dynamic()
            .filter(|&d| self.doms[d].demand_ns == 0)
            .map(weight)
            .sum();
        let total = configured.saturating_sub(kept);
        // Stepped weights in units of 2^-16, before sharing out `total`.
        let raw: Vec<u128> = stepped
            .iter()
            .map(|&d| {
                let dom = &self.doms[d];
                // f = (served / demand) / (served_d / demand_d), bounded.
                let num = served * u128::from(dom.demand_ns) * ONE;
                let den = demand * u128::from(dom.served_ns);
                // A domain that got nothing takes the largest step.
                let f = num
                    .checked_div(den)
                    .map_or(MAX_STEP * ONE, |f| f.clamp(ONE / MAX_STEP, MAX_STEP * ONE));
                // 1 + gain × (f − 1), in units of 2^-16 (f − 1 may be negative).
                let factor = (ONE * ONE + self.gain * f).saturating_sub(self.gain * ONE) / ONE;
                (weight(d) * factor).max(1)
            })
            .collect();
        for (&d, w) in stepped.iter().zip(apportion(&raw, total)) {
            self.c.set_weight(DomId(d as u32), w as u32);
        }
    }
}

/// `total` shared out in proportion to `parts` (all > 0), each share an
/// integer within Credit's weight range: shares that would fall outside are
/// set to the bound and the rest re-shared, until none does. The shares add
/// up to `total` exactly unless the bounds make that impossible.
fn apportion(parts: &[u128], total: u128) -> Vec<u64> {
    let (lo, hi) = (u128::from(WEIGHT_MIN), u128::from(WEIGHT_MAX));
    let mut fixed: Vec<Option<u128>> = vec![None; parts.len()];
    loop {
        let free: Vec<usize> = (0..parts.len()).filter(|&i| fixed[i].is_none()).collect();
        let left = total.saturating_sub(fixed.iter().flatten().sum::<u128>());
        let sum: u128 = free.iter().map(|&i| parts[i]).sum();
        let shares = if free.is_empty() {
            Vec::new()
        } else {
            scale_to(
                &free.iter().map(|&i| parts[i]).collect::<Vec<_>>(),
                sum,
                left,
            )
        };
        let mut settled = true;
        for (&i, &w) in free.iter().zip(&shares) {
            if w < lo || w > hi {
                fixed[i] = Some(w.clamp(lo, hi));
                settled = false;
            }
        }
        if settled {
            for (&i, &w) in free.iter().zip(&shares) {
                fixed[i] = Some(w);
            }
            return fixed.into_iter().map(|w| w.unwrap_or(lo) as u64).collect();
        }
    }
}

/// `parts` scaled so that they sum to `total` (`sum` is their sum), rounded
/// by largest remainders (ties to the earlier part): integers that add up to
/// `total` exactly.
fn scale_to(parts: &[u128], sum: u128, total: u128) -> Vec<u128> {
    let mut out: Vec<u128> = parts.iter().map(|&p| p * total / sum).collect();
    let mut short = total - out.iter().sum::<u128>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(parts[i] * total % sum));
    for i in order {
        if short == 0 {
            break;
        }
        out[i] += 1;
        short -= 1;
    }
    out
}

impl<const W: usize> Scheduler for CreditDynweight<W> {
    fn name(&self) -> &'static str {
        INFO.name
    }

    forward_hooks!(c: insert_vcpu, remove_vcpu, yield_, context_saved, pick_cpu, migrate);

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.c.init(ctx);
        self.meters = vec![Meter::default(); ctx.nvcpus()];
        // Credit's timers are its PCPUs' ticks and the master's accounting.
        self.timer_id = self.c.master_timer_id() + 1;
        let at = ctx.now().after(self.window_ns);
        ctx.arm_timer_late(self.timer_id, at, self.c.master);
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.c.init_domain(ctx, dom, params);
        self.doms.push(DynDom {
            base_weight: params.int("weight") as u32,
            dynamic: params.bool("dynamic"),
            demand_ns: 0,
            served_ns: 0,
        });
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let m = &mut self.meters[v.idx()];
        if m.demanding_since.is_none() {
            m.demanding_since = Some(ctx.now());
        }
        self.c.wake(ctx, v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if !ctx.is_runnable(v) {
            self.stop_demanding(v, ctx.now());
        }
        self.c.sleep(ctx, v);
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let now = ctx.now();
        let prev = ctx.current(cpu);
        if let Some(p) = prev.filter(|&p| !ctx.is_runnable(p)) {
            self.stop_demanding(p, now);
        }
        let d = self.c.do_schedule(ctx, cpu);
        if d.next != prev {
            if let Some(p) = prev {
                self.stop_running(p, now);
            }
            if let Some(n) = d.next {
                self.meters[n.idx()].running_since = Some(now);
            }
        }
        d
    }

    fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
        if id != self.timer_id {
            return self.c.timer(ctx, id);
        }
        self.end_window(ctx);
        let at = ctx.now().after(self.window_ns);
        ctx.arm_timer_late(self.timer_id, at, self.c.master);
    }

    /// `xl sched-credit -w` sets the configured weight, which acts at once
    /// and, for a dynamic domain, is re-derived at the end of the window.
    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        let d = &mut self.doms[dom.idx()];
        d.base_weight = params.int("weight") as u32;
        d.dynamic = params.bool("dynamic");
        self.c.adjust(ctx, dom, params);
    }

    fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
        self.set_tunables(params);
        self.c.adjust_global(ctx, params);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.c.counters();
        v.push(("weight_updates", self.stat_updates));
        v
    }

    /// Credit's dump, then one line per domain: `dom <id>: base=<configured
    /// weight> weight=<weight in force> demand_ns=<demanded> served_ns=<served,
    /// both in the last complete window> dynamic=<0|1>`.
    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = self.c.dump(ctx);
        for (i, d) in self.doms.iter().enumerate() {
            let _ = writeln!(
                s,
                "dom {i}: base={} weight={} demand_ns={} served_ns={} dynamic={}",
                d.base_weight,
                self.c.doms[i].weight,
                d.demand_ns,
                d.served_ns,
                u8::from(d.dynamic)
            );
        }
        s
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        let mut st = self.c.state(ctx);
        st.domains = (self.doms.iter().enumerate())
            .map(|(i, d)| {
                SchedState::record(serde_json::json!({
                    "base": d.base_weight, "weight": self.c.doms[i].weight,
                    "demand_ns": d.demand_ns, "served_ns": d.served_ns, "dynamic": d.dynamic,
                }))
            })
            .collect();
        st
    }
}
