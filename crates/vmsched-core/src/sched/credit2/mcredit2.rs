//! Mcredit2 (`mcredit2`), proposed by Kang & Lee 2018 (its design section
//! and its evaluation; `docs/schedulers/mcredit2.md`).
//!
//! Design. Credit2, unchanged, plus a temporary weight boost for the domain
//! whose VCPUs keep running out of credit. "If the number of processors for
//! a specific domain increases, the virtual processors in that domain will
//! not have sufficient credits and the initialization of credits increases.
//! Therefore, the domain can perform the given job with an increased weight
//! value."
//!
//! * **Reset count.** Every Credit2 credit reset (end of an epoch on a run
//!   queue) is caused by one VCPU: the one the PCPU has just chosen, whose
//!   credit (and that of the best queued VCPU) is used up. Its domain's
//!   `reset_count` goes up by one (the paper's Fig. 4: "the value of the
//!   reset_count variable of sdom is increased by one", sdom being the domain
//!   of the VCPU with insufficient credit). The other domains whose VCPUs
//!   are reset with it are not counted: every VCPU of the run queue is reset,
//!   blocked ones included, so counting them would only count VCPUs.
//! * **Reservation.** The domain with the greatest count since the last
//!   promotion is reserved as the next to boost; on a tie the one that
//!   reached the count first stays reserved. The reservation outlives a
//!   promotion (the paper's `boost_sdom`): until another domain's count
//!   passes the reserved one's, it is the one promoted next.
//! * **Promotion** (Algorithm 1). The check is made at the resets
//!   themselves (Fig. 4: "The time at which the reset_credit() function is
//!   called and the domain of BOOST state is changed by checking tick
//!   variables"): at the first reset at least `boost_period_ms` after the
//!   last promotion (after boot for the first), the reserved domain is
//!   promoted and every count goes back to 0; that reset is not counted
//!   (Algorithm 1 counts a reset only when no promotion is due). No reset,
//!   no promotion: an idle host keeps its boost as it is.
//! * **Boost** (Fig. 5). The boosted domain's weight is its configured
//!   weight × `rate`. Promoted for the first time, rate = 2; promoted again
//!   while still boosted, rate doubles (×2, ×4, ×8, ...: "the rate increases
//!   two times" read as a product, since the weight it multiplies is
//!   "dynamically changed" by doubling). When another domain is promoted the
//!   old one gets back exactly its configured weight (the paper divides by
//!   the rate; the same unless the weight was clipped) and the new one starts
//!   at rate 2. One domain is boosted at a time. The boosted weight is kept
//!   within Credit2's 1..=65535 (rate stops doubling once the weight is at
//!   65535).
//! * Weights change as `xl sched-credit2 -w` changes them (every VCPU of the
//!   domain, and its run queue's `max_weight`), so the boost acts through
//!   Credit2's burn rate. An administrator's weight change to the boosted
//!   domain sets its configured weight, and the boost applies on top.
//!
//! The paper built Mcredit2 on Xen 4.5.0's Credit2, which vmsched models as
//! 4.4.1's code (`xen_version` "4.4".."4.7" behave alike; see `credit2`); the
//! default is the current release, as for `credit2`, so that the two differ
//! only by the boost.
//!
//! Parameters: Credit2's, plus `boost_period_ms`.
//!
//! Hooks: `init_domain`, `do_schedule` (Credit2's, then the reset count and
//! promotion), `adjust`, `adjust_global`, `counters`, `dump`; the rest are
//! Credit2's.

use super::{Credit2, PARAMS as CREDIT2_PARAMS};
use crate::sched::{Allocation, AllocParam, AllocValue, Shares};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::sched::{Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo};
use crate::time::{Time, NS_PER_MS};

/// Credit2's largest weight.
const WEIGHT_MAX: u64 = 65535;
/// The rate never needs to exceed this: any weight × 65536 is past the maximum.
const RATE_MAX: u64 = 65536;

const OWN_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "boost_period_ms",
    unit: "ms",
    kind: ParamKind::Int {
        min: 1,
        max: 3_600_000,
    },
    default: Default::Int(1000),
    scope: ParamScope::Global,
    doc: "How often the domain with the most credit resets is boosted (weight x rate, rate 2, doubling while it stays boosted); checked at credit resets.",
}];

/// The own counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("boost_promotions", "promotions (a domain boosted, or its rate doubled)"),
    ("boost_changes", "promotions that changed which domain is boosted"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "mcredit2",
    "Mcredit2",
    extended_params!(CREDIT2_PARAMS, OWN_PARAMS),
    |p, n| sized_scheduler!(n, W => Mcredit2::<W>::new(p)),
)
.about(
    "Mcredit2 (Kang & Lee 2018): Credit2 that periodically boosts the weight of the domain causing the most credit resets.",
    "proposal: Kang & Lee 2018, on Xen 4.5.0's Credit2",
)
.with_allocation(Allocation {
    rule: "cap = A (as Credit2: the weight boost leaves Credit2's budgets as they are)",
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
.with_check_domain(super::check_domain)
.with_check_global(super::check_global)
.with_check_scenario(super::check_scenario)
.with_counters_after(super::COUNTERS, COUNTERS);

/// Credit2 with Mcredit2's weight boost.
pub struct Mcredit2<const W: usize> {
    c2: Credit2<W>,
    period_ns: u64,
    /// Configured weight of each domain.
    base_weight: Vec<u32>,
    /// Resets each domain caused since the last promotion.
    reset_count: Vec<u64>,
    reserved: Option<DomId>,
    boosted: Option<DomId>,
    rate: u64,
    last_promotion: Time,
    stat_promotions: u64,
    stat_boost_changes: u64,
}

impl<const W: usize> Mcredit2<W> {
    /// An Mcredit2 scheduler with validated global parameters.
    pub fn new(p: &Params) -> Mcredit2<W> {
        Mcredit2 {
            c2: Credit2::new(p),
            period_ns: p.int("boost_period_ms") as u64 * NS_PER_MS,
            base_weight: Vec::new(),
            reset_count: Vec::new(),
            reserved: None,
            boosted: None,
            rate: 1,
            last_promotion: Time::ZERO,
            stat_promotions: 0,
            stat_boost_changes: 0,
        }
    }

    /// The weight domain `d` runs with: configured, or boosted.
    fn weight_of(&self, d: DomId) -> u32 {
        let base = u64::from(self.base_weight[d.idx()]);
        if self.boosted == Some(d) {
            (base * self.rate).min(WEIGHT_MAX) as u32
        } else {
            base as u32
        }
    }

    /// A credit reset was caused by `v`, the VCPU just chosen with no credit.
    /// Algorithm 1: when a promotion is due the reserved domain is promoted
    /// and the reset is not counted; otherwise the reset is counted and the
    /// domain with the greatest count is reserved. The reservation outlives
    /// a promotion (the paper's `boost_sdom`), so a domain that stays ahead,
    /// or an interval in which no other domain caused a reset, promotes the
    /// same domain again.
    fn on_reset(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let d = ctx.domain_of(v);
        let due = ctx.now().since(self.last_promotion) >= self.period_ns;
        if due {
            if let Some(winner) = self.reserved {
                self.promote(ctx, winner);
                self.reset_count.fill(0);
                self.last_promotion = ctx.now();
                return;
            }
        }
        self.reset_count[d.idx()] += 1;
        let leads = match self.reserved {
            None => true,
            Some(r) => self.reset_count[d.idx()] > self.reset_count[r.idx()],
        };
        if leads {
            self.reserved = Some(d);
        }
    }

    /// Fig. 5: boost `d`, doubling the rate if it is boosted already.
    fn promote(&mut self, ctx: &SchedCtx, d: DomId) {
        self.stat_promotions += 1;
        if self.boosted == Some(d) {
            self.rate = (self.rate * 2).min(RATE_MAX);
        } else {
            if let Some(old) = self.boosted.replace(d) {
                self.c2.set_weight(ctx, old, self.base_weight[old.idx()]);
            }
            self.rate = 2;
            self.stat_boost_changes += 1;
        }
        self.c2.set_weight(ctx, d, self.weight_of(d));
    }
}

impl<const W: usize> Scheduler for Mcredit2<W> {
    fn name(&self) -> &'static str {
        INFO.name
    }

    forward_hooks!(c2: init, insert_vcpu, remove_vcpu, wake, sleep, yield_, context_saved,
        pick_cpu, migrate, timer);

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.c2.init_domain(ctx, dom, params);
        self.base_weight.push(params.int("weight") as u32);
        self.reset_count.push(0);
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let before = self.c2.resets();
        let d = self.c2.do_schedule(ctx, cpu);
        if self.c2.resets() != before {
            // Credit2 resets only after choosing a VCPU: the one it returns.
            let v = d.next.expect("a reset follows the choice of a VCPU");
            self.on_reset(ctx, v);
        }
        d
    }

    /// `xl sched-credit2 -w` sets the configured weight; a boosted domain
    /// keeps its boost on top of it.
    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.base_weight[dom.idx()] = params.int("weight") as u32;
        self.c2.adjust(ctx, dom, params);
        self.c2.set_weight(ctx, dom, self.weight_of(dom));
    }

    fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
        self.period_ns = params.int("boost_period_ms") as u64 * NS_PER_MS;
        self.c2.adjust_global(ctx, params);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.c2.counters();
        v.push(("boost_promotions", self.stat_promotions));
        v.push(("boost_changes", self.stat_boost_changes));
        v
    }

    /// Credit2's dump, then `mcredit2: boosted=<domain id|none> rate=<r>`
    /// and one line per domain: `dom <id>: base=<configured weight>
    /// weight=<weight in force> resets=<resets caused since the last
    /// promotion>`.
    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = self.c2.dump(ctx);
        let boosted = self.boosted.map_or("none".to_string(), |d| d.0.to_string());
        let _ = writeln!(s, "mcredit2: boosted={boosted} rate={}", self.rate);
        for (i, base) in self.base_weight.iter().enumerate() {
            let _ = writeln!(
                s,
                "dom {i}: base={base} weight={} resets={}",
                self.c2.doms[i].weight, self.reset_count[i]
            );
        }
        s
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        let mut st = self.c2.state(ctx);
        st.global.insert("boosted".into(), self.boosted.map(|d| d.0).into());
        st.global.insert("rate".into(), self.rate.into());
        st.domains = (self.base_weight.iter().enumerate())
            .map(|(i, base)| {
                SchedState::record(serde_json::json!({
                    "base": base, "weight": self.c2.doms[i].weight, "resets": self.reset_count[i],
                }))
            })
            .collect();
        st
    }
}
