//! Where Xen put a new domain's VCPUs, release by release.
//!
//! Schedulers with one queue per PCPU and no load balancing (Round-robin,
//! BVT, Atropos, SEDF) never move a VCPU on their own, so the PCPU chosen when
//! the VCPU is created decides its share for good: three equal CPU hogs on two
//! PCPUs get 100 % / 50 % / 50 %, and *which* guest gets the lone PCPU depends
//! on the release's tie-breaking. The engine's generic placement (VCPU 0 on
//! the first PCPU of the affinity, the next VCPUs cycling on) is modern Xen's
//! `sched_select_initial_cpu`; these schedulers call [`Placer::place`] from
//! `insert_vcpu` instead, which reproduces the older rules:
//!
//! * **Xen 2.0** (`DOM0_CREATEDOMAIN`): the PCPU hosting the fewest domains
//!   (counted as VCPUs: the same with 2.0's one VCPU per domain), ties to
//!   the lowest-numbered one. A domain pinned with `cpu=N` starts on
//!   `N`; vmsched restricts the choice to the domain's hard affinity, which
//!   for a single-PCPU affinity is exactly `cpu=N`.
//! * **Xen 3.0** (`DOM0_CREATEDOMAIN` / `DOM0_MAX_VCPUS`): VCPU 0 goes to the
//!   PCPU with the fewest VCPUs of all domains, ties to the highest-numbered
//!   one; on SMT hosts only the last thread of each core is a candidate.
//!   VCPU i > 0 goes to the PCPU after VCPU i−1's.
//! * **Xen 4.x** (`default_vcpu0_location`): the same least-populated rule,
//!   ties to the highest-numbered PCPU, but the SMT candidates are the first
//!   non-primary thread of each core and the starting candidate is PCPU 0's
//!   second thread.
//!
//! Domain 0 is built by Xen itself: VCPU 0 on PCPU 0, the others cycling on.
//! vmsched treats the scenario's first domain as Domain 0 when it is a driver
//! domain.
//!
//! The scenario's `affinity` is applied after creation, as the toolstack pins
//! a domain (`cpus=` / `vcpu-pin`). What that did to the VCPU's PCPU depends on
//! the release and the scheduler; see [`PinRule`].
//!
//! Xen 2.0 had one VCPU per domain; for multi-VCPU domains under the 2.0 rule
//! vmsched places VCPU i > 0 after VCPU i−1 (within the affinity), as 3.0 did.

use super::SchedCtx;
use crate::cpumask::CpuMask;
use crate::ids::{DomId, PcpuId, VcpuId};

/// The creation-time placement rule of a Xen release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationRule {
    /// Xen 2.0.x: fewest domains, ties to the lowest PCPU.
    Xen20,
    /// Xen 3.0.x: fewest VCPUs, ties to the highest PCPU, last SMT thread.
    Xen30,
    /// Xen 4.x `default_vcpu0_location`.
    Xen4,
}

/// What pinning a VCPU (its hard affinity) did to its PCPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinRule {
    /// Xen 2.0: the domain is created on a PCPU of its affinity (`cpu=N`).
    CreateWithin,
    /// Xen 3.0.0–3.0.2 SEDF/BVT `set_affinity`: the VCPU moves to the first
    /// PCPU of the new affinity, even if its PCPU was already in it.
    FirstOfAffinity,
    /// Xen 3.0.3+ generic `vcpu_set_affinity`: the VCPU moves only if its PCPU
    /// is outside the affinity, to the first PCPU of the affinity (SEDF's
    /// `pick_cpu` up to 4.1).
    MoveToFirst,
    /// SEDF 4.3+: every VCPU is placed again by SEDF's `pick_cpu` right after
    /// creation, pinned or not, on the first PCPU of its affinity numbered at
    /// least `vcpu_id mod |affinity|`. From 4.3 `vcpu_set_affinity` always
    /// asks the scheduler to re-place (`0f3b02d07e`, 8 March 2013), and both
    /// the toolstack's affinity call at domain build (libxl 4.3–4.4
    /// `libxl__build_pre`) and a PV Linux guest's `VCPUOP_stop_periodic_timer`
    /// at boot (`vcpu_force_reschedule`) go through it; `pick_cpu` by VCPU id
    /// is `e6a6fd6365` (4 March 2013).
    RepickByVcpuId,
}

/// Where a scheduler without load balancing puts a migrating VCPU (BVT,
/// Atropos, Round-robin): it stays on its PCPU if its hard affinity allows,
/// else it goes to the first PCPU of that affinity.
pub fn stay_or_first_allowed(ctx: &SchedCtx, v: VcpuId) -> PcpuId {
    let hard = ctx.hard_affinity(v);
    let p = ctx.processor(v);
    if hard.test(p) {
        p
    } else {
        hard.first().expect("affinity masks are non-empty")
    }
}

/// The first PCPU of `mask` numbered at least `vcpu_index mod |mask|`,
/// wrapping round (SEDF's `pick_cpu` in Xen 4.3–4.5).
pub fn vcpu_id_slot(mask: &CpuMask, vcpu_index: u32) -> PcpuId {
    let n = mask.count().max(1);
    let k = vcpu_index % n;
    mask.iter()
        .find(|p| p.0 >= k)
        .or_else(|| mask.first())
        .expect("affinity masks are non-empty")
}

/// Initial placement by a Xen release's rule, keeping the per-PCPU VCPU
/// counts the rules need.
#[derive(Clone, Debug, Default)]
pub struct Placer {
    /// VCPUs placed on each PCPU so far.
    per_pcpu: Vec<u32>,
}

impl Placer {
    /// A placer for a host of `npcpus` PCPUs.
    pub fn new(npcpus: usize) -> Placer {
        Placer {
            per_pcpu: vec![0; npcpus],
        }
    }

    /// VCPUs placed on `p` so far.
    pub fn count(&self, p: PcpuId) -> u32 {
        self.per_pcpu[p.idx()]
    }

    /// Choose the PCPU of `v`, which is being created (VCPUs are created in
    /// id order, so VCPU i−1 of its domain is already placed), set it as
    /// `v`'s processor and count it.
    pub fn place(
        &mut self,
        ctx: &mut SchedCtx,
        v: VcpuId,
        rule: CreationRule,
        pin: PinRule,
    ) -> PcpuId {
        let dom = ctx.domain_of(v);
        let index = ctx.vcpu_index(v);
        let all = ctx.topology().all();
        let hard = *ctx.hard_affinity(v);
        let pinned = hard != all;
        let is_dom0 = dom == DomId(0) && ctx.is_driver(dom);
        // Xen 2.0 created the domain where it was pinned; later releases
        // created it anywhere and moved it when the toolstack pinned it.
        let candidates = if pin == PinRule::CreateWithin {
            hard
        } else {
            all
        };
        let created = if index > 0 {
            let prev = ctx.processor(VcpuId(v.0 - 1));
            candidates.cycle(prev)
        } else if is_dom0 {
            candidates.first()
        } else {
            Some(match rule {
                CreationRule::Xen20 => self.fewest_lowest(&candidates),
                CreationRule::Xen30 => self.xen30(ctx, &candidates),
                CreationRule::Xen4 => self.xen4(ctx, &candidates),
            })
        }
        .expect("affinity masks are non-empty");
        let placed = match pin {
            PinRule::RepickByVcpuId => vcpu_id_slot(&hard, index),
            _ if !pinned => created,
            PinRule::CreateWithin => created,
            PinRule::FirstOfAffinity => hard.first().expect("non-empty"),
            PinRule::MoveToFirst if hard.test(created) => created,
            PinRule::MoveToFirst => hard.first().expect("non-empty"),
        };
        self.per_pcpu[placed.idx()] += 1;
        ctx.set_processor(v, placed);
        placed
    }

    /// A placed VCPU moved from `from` to `to` (migration).
    pub fn moved(&mut self, from: PcpuId, to: PcpuId) {
        self.per_pcpu[from.idx()] = self.per_pcpu[from.idx()].saturating_sub(1);
        self.per_pcpu[to.idx()] += 1;
    }

    /// A placed VCPU on `p` left (hot-unplug).
    pub fn removed(&mut self, p: PcpuId) {
        self.per_pcpu[p.idx()] = self.per_pcpu[p.idx()].saturating_sub(1);
    }

    /// Xen 2.0: fewest, ties to the lowest-numbered PCPU.
    fn fewest_lowest(&self, candidates: &CpuMask) -> PcpuId {
        let mut best = candidates.first().expect("non-empty");
        for p in candidates.iter() {
            if self.count(p) < self.count(best) {
                best = p;
            }
        }
        best
    }

    /// Xen 3.0: start at the last thread of core 0, consider the last thread
    /// of every core, and move to any candidate hosting no more VCPUs.
    fn xen30(&self, ctx: &SchedCtx, candidates: &CpuMask) -> PcpuId {
        let threads = ctx.topology().threads_per_core;
        let n = ctx.npcpus() as u32;
        let mut best = PcpuId(threads - 1);
        let mut i = threads - 1;
        while i < n {
            let p = PcpuId(i);
            if candidates.test(p) && self.count(p) <= self.count(best) {
                best = p;
            }
            i += threads;
        }
        best
    }

    /// Xen 4.x `default_vcpu0_location`: one non-primary thread per core,
    /// starting from PCPU 0's second thread; ties to the highest PCPU.
    fn xen4(&self, ctx: &SchedCtx, candidates: &CpuMask) -> PcpuId {
        let topo = ctx.topology();
        let mut exclude = *topo.sibling_mask(PcpuId(0));
        let first = exclude.first().expect("non-empty");
        let mut best = if exclude.count() > 1 {
            exclude.cycle(first).expect("non-empty")
        } else {
            first
        };
        for p in candidates.iter() {
            if exclude.test(p) {
                continue;
            }
            let siblings = topo.sibling_mask(p);
            if siblings.count() > 1 && siblings.first() == Some(p) {
                continue;
            }
            exclude = exclude.or(siblings);
            if self.count(p) <= self.count(best) {
                best = p;
            }
        }
        best
    }
}
