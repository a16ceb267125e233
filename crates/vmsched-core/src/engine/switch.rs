//! What a domain switch costs besides the switch itself: the lazy switch,
//! the TLB/L1 refill, the L2 (and L3) footprint model, and the scheduler's
//! own run time (`docs/switch-cost.md`).
//!
//! The idea. A VCPU switched onto a PCPU first spends CPU on things that are
//! not its work: the direct switch (`ctx_switch_ns`), refilling the TLB, L1
//! and branch predictors a real address-space switch emptied
//! (`switch_refill_ns`), and reloading the cache lines of its working set
//! that others evicted while it was away. That last part follows Thiébaut
//! and Stone's footprint model: with random placement, a resident footprint
//! R of a cache of N lines loses R·(1 − e^(−F/N)) lines while F new lines are
//! brought in. So each core keeps Φ, the lines ever brought into its cache,
//! and each VCPU the value of Φ when it left (`mark`): resuming on the same
//! core it refills W − R·e^(−(Φ − mark)/N) lines, and on another core all W.
//! The refill is bounded by the run: a run of length t brings in at most
//! t/c lines (c the time per line), so a VCPU switched out before it has
//! refilled everything keeps only what it brought in (R < W), and the lines
//! still missing are paid at its next dispatch, lazy or not. Within a run the
//! work proceeds while the lines come back: over the first 2D of a run whose
//! refill costs D, half the time is refill and half is work (a miss to a
//! missing line about every fill time of work). A run that is not cut short
//! ends the same as with the refill first (the work completes D after it
//! would without the refill), so completion events are those of a prefix;
//! a run preempted inside its first 2D with work in hand is credited the
//! work the interleaving did and brings in only the lines it paid for. So a
//! VCPU whose quanta are shorter than its refill still progresses, at half
//! speed at worst, as on real hardware.
//! The scheduler's decision (`sched_invoke_ns`) and its run-queue operations
//! (`sched_queue_op_ns` each) are charged to the VCPU the decision
//! dispatches, as Xen's `schedule()` accounts them: it reads the time before
//! calling the scheduler and starts the next VCPU's run state at it.
//!
//! Xen switches lazily: going idle leaves the last VCPU's state loaded, and
//! returning to that same VCPU does no switch at all, so (with
//! `lazy_idle_switch`) it pays nothing but the decision. It still counts as
//! a dispatch (XenMon's executions).
//!
//! Every number here is an integer: line counts in thousandths of a line,
//! e^(−x) in 32-bit fixed point by a fixed series, so the results are the
//! same on every machine. Nothing allocates after the run is built.

use super::World;
use crate::domain::{FOREVER, URGENT};
use crate::host::{SwitchCosts, Topology};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::scenario::WorkloadSpec;
use crate::time::Time;
use crate::workload::footprint;
use std::cell::Cell;

/// Fixed-point one for [`exp_neg_ratio`].
const ONE_Q32: u64 = 1 << 32;
/// e^(−1) in 32-bit fixed point (round(e^(−1)·2^32)).
const EXP_NEG_ONE_Q32: u64 = 1_580_030_169;
/// Beyond this many cache sizes brought in, nothing of a footprint survives
/// (e^(−44) · 2^32 < 2^−31 of a line).
const SWEPT: u64 = 44;
/// No core/socket (a VCPU that never ran holds no lines).
const NOWHERE: u32 = u32::MAX;
/// Thousandths of a line per line.
const MILLI: u64 = 1000;

/// The parts of a switch's overhead, in the order the VCPU pays them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Part {
    /// The direct switch (`ctx_switch_ns`).
    Direct = 0,
    /// TLB, L1 and branch predictors (`switch_refill_ns`).
    Refill = 1,
    /// The scheduler's decision and queue operations.
    Sched = 2,
    /// Cache lines of the working set (`l2_fill_ns`, `l3_fill_ns`), last:
    /// the work interleaves with it (see [`World::switch_out`]).
    Cache = 3,
}

/// Number of [`Part`]s.
pub const PARTS: usize = 4;

/// The overhead a VCPU pays from `from` on, before its work progresses.
#[derive(Clone, Copy, Debug, Default)]
struct Overhead {
    from: Time,
    parts: [u64; PARTS],
    /// How much of it is already added to the VCPU's totals.
    accounted: u64,
}

impl Overhead {
    fn total(&self) -> u64 {
        self.parts.iter().sum()
    }

    /// Add what was paid up to `now` to `into`, part by part.
    fn accrue(&mut self, now: Time, into: &mut [u64; PARTS]) {
        let done = now.since(self.from).min(self.total());
        if done <= self.accounted {
            return;
        }
        let mut start = 0;
        for (k, &len) in self.parts.iter().enumerate() {
            let end = start + len;
            let lo = self.accounted.max(start);
            let hi = done.min(end);
            if hi > lo {
                into[k] += hi - lo;
            }
            start = end;
        }
        self.accounted = done;
    }
}

/// One VCPU's footprint and overhead state.
#[derive(Clone, Copy, Debug)]
struct VcpuCache {
    /// Working set, thousandths of a line.
    ws_ml: u64,
    /// Streamed lines per µs of CPU, thousandths of a line.
    stream_ml_per_us: u64,
    /// The core and socket whose caches hold its lines.
    core: u32,
    socket: u32,
    /// Φ of that core's L2 and that socket's L3 when it last left.
    mark2: u64,
    mark3: u64,
    /// Its lines resident in that L2 and L3 when it last left (at most its
    /// working set, less when a run ended before its refill did),
    /// thousandths of a line.
    res2: u64,
    res3: u64,
    /// The lines its current run's cache refill brings into the L2 and L3
    /// (all of them once the refill is paid), thousandths of a line.
    fill2: u64,
    fill3: u64,
    /// What refilling all of those lines costs, ns (the run's cache part
    /// may be less: see [`World::switch_in`]).
    fill_ns: u64,
    /// The PCPU its state is loaded on (Xen's `curr_vcpu` of that PCPU).
    loaded_on: Option<PcpuId>,
    /// When its work began progressing in its current run.
    useful_from: Time,
    /// The current run's overhead.
    ovh: Overhead,
    /// Overhead paid since measurement began, per [`Part`].
    paid: [u64; PARTS],
    /// Dispatches that were real switches and lazy returns.
    real_switches: u64,
    lazy_returns: u64,
}

/// The switch-cost model's state (part of the [`World`]).
pub(crate) struct SwitchModel {
    costs: SwitchCosts,
    /// Is any part of the cache model on?
    cache_on: bool,
    l2_ml: u64,
    l3_ml: u64,
    vcpus: Vec<VcpuCache>,
    /// Per PCPU: the VCPU whose state is loaded (idle leaves it).
    loaded: Vec<Option<VcpuId>>,
    /// Per PCPU: run-queue operations since its last decision (a `Cell`,
    /// so that scheduler code holding only a shared context can count).
    queue_ops: Vec<Cell<u64>>,
    /// Φ per core (L2) and per socket (L3), thousandths of a line.
    phi2: Vec<u64>,
    phi3: Vec<u64>,
}

/// A VCPU's working set and stream rate from its domain's workload.
pub(crate) struct VcpuFootprint {
    pub working_set_kb: f64,
    pub stream_fill_lines_per_us: f64,
}

/// The footprint of a VCPU of a domain running `workload` (`driver`: the
/// driver domain, whose backends add theirs).
pub(crate) fn footprint_of(workload: &WorkloadSpec, driver: bool) -> VcpuFootprint {
    let (ws_kb, stream) = footprint::default_footprint(&workload.kind);
    let f = &workload.footprint;
    let backends = if driver {
        footprint::DRIVER_BACKEND_KB
    } else {
        0.0
    };
    VcpuFootprint {
        working_set_kb: f.working_set_kb.unwrap_or(ws_kb + backends),
        stream_fill_lines_per_us: f.stream_fill_lines_per_us.unwrap_or(stream),
    }
}

impl SwitchModel {
    /// The model for the host `topo` and VCPUs of the given footprints.
    pub(crate) fn new(
        costs: &SwitchCosts,
        topo: &Topology,
        footprints: impl Iterator<Item = VcpuFootprint>,
    ) -> SwitchModel {
        let npcpus = topo.npcpus();
        let ncores = npcpus / topo.threads_per_core as usize;
        let nsockets = topo.sockets as usize;
        let line = costs.cache_line_bytes.max(1) as f64;
        let vcpus = footprints
            .map(|f| VcpuCache {
                // Rounded once, at build time: the run itself is integer.
                ws_ml: (f.working_set_kb * 1024.0 * MILLI as f64 / line).round() as u64,
                stream_ml_per_us: (f.stream_fill_lines_per_us * MILLI as f64).round() as u64,
                core: NOWHERE,
                socket: NOWHERE,
                mark2: 0,
                mark3: 0,
                res2: 0,
                res3: 0,
                fill2: 0,
                fill3: 0,
                fill_ns: 0,
                loaded_on: None,
                useful_from: Time::ZERO,
                ovh: Overhead::default(),
                paid: [0; PARTS],
                real_switches: 0,
                lazy_returns: 0,
            })
            .collect();
        let l2_on = costs.l2_fill_ns > 0 && costs.l2_lines > 0;
        let l3_on = l2_on && costs.l3_fill_ns > 0 && costs.l3_lines > 0;
        SwitchModel {
            cache_on: l2_on,
            l2_ml: costs.l2_lines * MILLI,
            l3_ml: if l3_on { costs.l3_lines * MILLI } else { 0 },
            costs: costs.clone(),
            vcpus,
            loaded: vec![None; npcpus],
            queue_ops: vec![Cell::new(0); npcpus],
            phi2: vec![0; ncores],
            phi3: vec![0; nsockets],
        }
    }

    /// Count one run-queue insertion or removal on `p`.
    #[inline]
    pub(crate) fn queue_op(&self, p: PcpuId) {
        let c = &self.queue_ops[p.idx()];
        c.set(c.get() + 1);
    }

    /// The scheduler's cost of the decision just taken on `p` (its
    /// invocation and the queue operations since its last one).
    #[inline]
    pub(crate) fn take_sched_ns(&mut self, p: PcpuId) -> u64 {
        let ops = self.queue_ops[p.idx()].take();
        self.costs.sched_invoke_ns + ops * self.costs.sched_queue_op_ns
    }

    /// Overhead per [`Part`] that `v` paid since measurement began, up to `now`.
    pub(crate) fn paid_at(&self, v: VcpuId, now: Time) -> [u64; PARTS] {
        let vc = &self.vcpus[v.idx()];
        let mut paid = vc.paid;
        let mut ovh = vc.ovh;
        ovh.accrue(now, &mut paid);
        paid
    }

    /// `v`'s real switches and lazy returns since measurement began.
    pub(crate) fn dispatches(&self, v: VcpuId) -> (u64, u64) {
        let vc = &self.vcpus[v.idx()];
        (vc.real_switches, vc.lazy_returns)
    }

    /// Measurement starts at `now`: forget what was paid before.
    pub(crate) fn reset(&mut self, now: Time) {
        for vc in &mut self.vcpus {
            let mut sink = [0; PARTS];
            vc.ovh.accrue(now, &mut sink);
            vc.paid = [0; PARTS];
            vc.real_switches = 0;
            vc.lazy_returns = 0;
        }
    }
}

impl World {
    /// `n` is switched onto `p` (`prev` ran there, `None` = idle) and its
    /// run costs `sched_ns` of scheduling: set up what `n` pays before its
    /// work progresses and return that total.
    pub(crate) fn switch_in(&mut self, p: PcpuId, n: VcpuId, sched_ns: u64) -> u64 {
        let now = self.now;
        let m = &mut self.switch;
        let (core, socket) = (self.topo.core_of(p), self.topo.socket_of(p));
        let lazy = m.costs.lazy_idle_switch && m.loaded[p.idx()] == Some(n);
        // Xen syncs a VCPU's state off a PCPU that still holds it lazily
        // before it runs elsewhere; the VCPU this PCPU held is unloaded.
        if let Some(q) = m.vcpus[n.idx()].loaded_on.filter(|&q| q != p) {
            m.loaded[q.idx()] = None;
        }
        if let Some(old) = m.loaded[p.idx()].filter(|&o| o != n) {
            m.vcpus[old.idx()].loaded_on = None;
        }
        m.loaded[p.idx()] = Some(n);
        m.vcpus[n.idx()].loaded_on = Some(p);
        let mut parts = [0; PARTS];
        parts[Part::Sched as usize] = sched_ns;
        if lazy {
            m.vcpus[n.idx()].lazy_returns += 1;
            // Nothing ran here since it left, so nothing of its own was
            // evicted; what it did not finish refilling last time is still
            // missing (nothing, after a run that finished its refill).
            if m.cache_on {
                parts[Part::Cache as usize] = m.refill_cache(n, core, socket, true);
            }
        } else {
            m.vcpus[n.idx()].real_switches += 1;
            parts[Part::Direct as usize] = self.platform.ctx_switch_ns;
            parts[Part::Refill as usize] = m.costs.switch_refill_ns;
            if m.cache_on {
                parts[Part::Cache as usize] = m.refill_cache(n, core, socket, false);
            }
        }
        let vc = &mut m.vcpus[n.idx()];
        vc.fill_ns = parts[Part::Cache as usize];
        // Resuming work it holds: with the work interleaved with the refill,
        // `r` of work left completes after r of refill, and the lines it did
        // not touch stay missing.
        if let Some(it) = self.vcpus[n.idx()].item {
            if it.remaining_ns != FOREVER {
                parts[Part::Cache as usize] = vc.fill_ns.min(it.remaining_ns);
            }
        }
        vc.ovh = Overhead {
            from: now,
            parts,
            accounted: 0,
        };
        let total = vc.ovh.total();
        vc.useful_from = now.after(total);
        total
    }

    /// `v` was re-picked on its PCPU without a switch and pays `sched_ns`
    /// more before its work progresses; returns when its work progresses.
    pub(crate) fn repick(&mut self, v: VcpuId, sched_ns: u64) -> Time {
        let now = self.now;
        let m = &mut self.switch;
        let vc = &mut m.vcpus[v.idx()];
        vc.ovh.accrue(now, &mut vc.paid);
        if vc.ovh.accounted >= vc.ovh.total() {
            // Its refill is done: its lines are in, before the overhead
            // that measured them is replaced.
            if let Some(p) = vc.loaded_on.filter(|_| m.cache_on) {
                let (core, socket) = (self.topo.core_of(p), self.topo.socket_of(p));
                let (core, socket) = (core as usize, socket as usize);
                m.bring_in(v, now, core, socket, 0);
            }
            m.vcpus[v.idx()].ovh = Overhead {
                from: now,
                parts: [0; PARTS],
                accounted: 0,
            };
        }
        let vc = &mut m.vcpus[v.idx()];
        vc.ovh.parts[Part::Sched as usize] += sched_ns;
        let at = vc.ovh.from.after(vc.ovh.total());
        vc.useful_from = vc.useful_from.max(at);
        at
    }

    /// `v` leaves `p`: the lines its refill brought in (all, or the share
    /// of them its run had time for) and the lines it streamed go into the
    /// caches, and its marks are set.
    pub(crate) fn switch_out(&mut self, v: VcpuId, p: PcpuId) {
        let now = self.now;
        let m = &mut self.switch;
        let vc = &mut m.vcpus[v.idx()];
        vc.ovh.accrue(now, &mut vc.paid);
        if !m.cache_on {
            return;
        }
        // Cut short inside its first 2D with work in hand: the interleaved
        // run did `credit` of work where the prefix did refill.
        let cache_ns = vc.ovh.parts[Part::Cache as usize];
        let credit = if self.vcpus[v.idx()].item.is_some() && cache_ns > 0 {
            let start = vc.ovh.from.after(vc.ovh.total() - cache_ns);
            let x = now.since(start);
            (x.min(2 * cache_ns) / 2).saturating_sub(x.saturating_sub(cache_ns))
        } else {
            0
        };
        if credit > 0 {
            vc.paid[Part::Cache as usize] -= credit;
            let w = &mut self.vcpus[v.idx()];
            if let Some(it) = w.item.as_mut() {
                if it.remaining_ns != FOREVER {
                    it.remaining_ns = it.remaining_ns.saturating_sub(credit);
                }
                if it.tag & URGENT != 0 {
                    w.urgent_ran_ns += credit;
                } else {
                    w.ordinary_ran_ns += credit;
                }
            }
        }
        let (core, socket) = (self.topo.core_of(p), self.topo.socket_of(p));
        let (core, socket) = (core as usize, socket as usize);
        m.bring_in(v, now, core, socket, credit);
        let vc = &mut m.vcpus[v.idx()];
        let ran_ns = now.since(vc.useful_from) + credit;
        let fills = mul_add_div(vc.stream_ml_per_us, ran_ns, 0, 1000);
        m.phi2[core] = m.phi2[core].wrapping_add(fills);
        vc.mark2 = m.phi2[core];
        if m.l3_ml > 0 {
            m.phi3[socket] = m.phi3[socket].wrapping_add(fills);
            vc.mark3 = m.phi3[socket];
        }
    }
}

impl SwitchModel {
    /// The lines `v`'s cache refill has brought into the caches of
    /// `core`/`socket` by `now` become resident and enter their Φ. The
    /// refill is paid after the direct switch, the TLB/L1 refill and the
    /// decision, and lines come back at a steady rate, so a refill cut short
    /// by the end of the run brings in the share of its lines it had time
    /// for (less the `credit` of it the interleaved work took); the rest
    /// stays missing until the VCPU's next dispatch.
    fn bring_in(&mut self, v: VcpuId, now: Time, core: usize, socket: usize, credit: u64) {
        let vc = &mut self.vcpus[v.idx()];
        let cache_ns = vc.ovh.parts[Part::Cache as usize];
        let (brought2, brought3) = if vc.fill_ns == 0 {
            (vc.fill2, vc.fill3)
        } else {
            let before = vc.ovh.total() - cache_ns;
            let done = now.since(vc.ovh.from).saturating_sub(before).min(cache_ns) - credit;
            let full = vc.fill_ns;
            // A refill paid in full brings in all its lines, none paid none:
            // the quotient without its division (the common cases).
            let share = |lines: u64| match done {
                0 => 0,
                d if d == full => lines,
                d => mul_add_div(lines, d, 0, full),
            };
            (share(vc.fill2), share(vc.fill3))
        };
        vc.res2 += brought2;
        vc.res3 += brought3;
        vc.fill2 = 0;
        vc.fill3 = 0;
        self.phi2[core] = self.phi2[core].wrapping_add(brought2);
        if self.l3_ml > 0 {
            self.phi3[socket] = self.phi3[socket].wrapping_add(brought3);
        }
    }

    /// What `n` pays to bring its working set back into the caches of
    /// `core`/`socket`, ns (`lazy`: nothing ran there since it left, so it
    /// refills only what it had not refilled then). The lines enter the
    /// caches' Φ as the run brings them in, at its switch-out.
    fn refill_cache(&mut self, n: VcpuId, core: u32, socket: u32, lazy: bool) -> u64 {
        let (ci, si) = (core as usize, socket as usize);
        let vc = &mut self.vcpus[n.idx()];
        // Only what fits can be resident: a working set larger than a
        // cache misses beyond its size whether or not others ran (a
        // capacity miss, part of the work, not of the switch).
        let w = vc.ws_ml.min(self.l2_ml);
        // Lines of its working set not in the L2: those it never brought
        // back, and those evicted since; all of them after a move to
        // another core.
        let kept2 = if vc.core != core {
            0
        } else if lazy {
            vc.res2
        } else {
            survivors(vc.res2, self.phi2[ci].wrapping_sub(vc.mark2), self.l2_ml)
        };
        let lost2 = w - kept2.min(w);
        vc.res2 = w - lost2;
        vc.fill2 = lost2;
        let mut ns = mul_ml(lost2, self.costs.l2_fill_ns);
        if self.l3_ml > 0 {
            // The L3 holds what the L2 holds (inclusive), so it cannot have
            // lost more than the L2.
            let w = vc.ws_ml.min(self.l3_ml);
            let kept3 = if vc.socket != socket {
                0
            } else if lazy {
                vc.res3
            } else {
                survivors(vc.res3, self.phi3[si].wrapping_sub(vc.mark3), self.l3_ml)
            };
            let lost3 = (w - kept3.min(w)).min(lost2);
            vc.res3 = w - lost3;
            vc.fill3 = lost3;
            ns += mul_ml(lost3, self.costs.l3_fill_ns);
        }
        vc.core = core;
        vc.socket = socket;
        ns
    }
}

/// `lines_ml` thousandths of a line at `ns_per_line` each, rounded to the ns.
#[inline]
fn mul_ml(lines_ml: u64, ns_per_line: u64) -> u64 {
    mul_add_div(lines_ml, ns_per_line, MILLI / 2, MILLI)
}

/// (a·b + add) / d, as 128-bit arithmetic gives it, as u64; in 64 bits when
/// a·b + add fits them (one machine division instead of a 128-bit library
/// call: the same result).
#[inline]
fn mul_add_div(a: u64, b: u64, add: u64, d: u64) -> u64 {
    match a.checked_mul(b).and_then(|x| x.checked_add(add)) {
        Some(x) => x / d,
        None => ((a as u128 * b as u128 + add as u128) / d as u128) as u64,
    }
}

/// Of a footprint of `r` (thousandths of a line), what survives `f` new
/// lines in a cache of `n` (same unit): r·e^(−f/n), rounded down.
#[inline]
fn survivors(r: u64, f: u64, n: u64) -> u64 {
    ((r as u128 * exp_neg_ratio(f, n) as u128) >> 32) as u64
}

/// e^(−num/den) in 32-bit fixed point, by integer arithmetic alone: e^(−k)
/// for the whole part k as k products of e^(−1), times a 16-term Taylor
/// series for the fraction in [0, 1) (whose first omitted term is below
/// 1/17! < 2^−48). The same bits on every machine.
pub(crate) fn exp_neg_ratio(num: u64, den: u64) -> u64 {
    if den == 0 {
        return 0;
    }
    let k = num / den;
    if k >= SWEPT {
        return 0;
    }
    // frac < 2^32, each term ≤ 2^32 and their sums < 2^34: 64 bits hold
    // every product and sum below, and 64-bit divisions give the same
    // quotients as 128-bit ones.
    let frac = if den <= u32::MAX as u64 {
        ((num % den) << 32) / den
    } else {
        ((((num % den) as u128) << 32) / den as u128) as u64
    };
    // Σ (−f)^i / i!, positive and negative terms apart, until a term is 0.
    // Written out term by term: each divisor is then a constant, which the
    // compiler turns into a multiplication (the same quotient; a division
    // by a loop counter costs tens of cycles, on every term).
    let (mut pos, mut neg) = (ONE_Q32, 0u64);
    let mut term = ONE_Q32;
    macro_rules! series {
        ($done:lifetime; $($i:literal)*) => {$(
            term = ((term * frac) >> 32) / $i;
            if term == 0 {
                break $done;
            }
            if $i % 2 == 1 {
                neg += term;
            } else {
                pos += term;
            }
        )*};
    }
    'done: {
        series!('done; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }
    let mut e = pos - neg;
    for _ in 0..k {
        e = ((e as u128 * EXP_NEG_ONE_Q32 as u128 + (1u128 << 31)) >> 32) as u64;
    }
    e
}

/// The overhead `dom`'s VCPUs paid since measurement began, per [`Part`],
/// up to `now`, and their real switches and lazy returns.
pub(crate) fn domain_paid(w: &World, dom: DomId, now: Time) -> ([u64; PARTS], u64, u64) {
    let d = &w.doms[dom.idx()];
    let mut tot = [0; PARTS];
    let (mut real, mut lazy) = (0, 0);
    for vi in d.first_vcpu..d.first_vcpu + d.nvcpus {
        let v = VcpuId(vi);
        let p = w.switch.paid_at(v, now);
        for k in 0..PARTS {
            tot[k] += p[k];
        }
        let (r, l) = w.switch.dispatches(v);
        real += r;
        lazy += l;
    }
    (tot, real, lazy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_exponential() {
        for &(num, den) in &[
            (0u64, 1u64),
            (1, 4),
            (1, 2),
            (3, 4),
            (1, 1),
            (5, 2),
            (10, 1),
            (43, 1),
            (8191, 8192),
            (12345, 999),
        ] {
            let got = exp_neg_ratio(num, den) as f64 / ONE_Q32 as f64;
            let want = (-(num as f64) / den as f64).exp();
            assert!(
                (got - want).abs() < 1e-8,
                "e^-({num}/{den}) = {got}, want {want}"
            );
        }
        assert_eq!(exp_neg_ratio(0, 7), ONE_Q32);
        assert_eq!(exp_neg_ratio(44, 1), 0);
    }

    /// The series written out term by term gives the bits the loop over the
    /// terms gave (its form before the unrolling), over the whole range of
    /// fractions and whole parts, and at cache sizes of both widths.
    #[test]
    fn the_written_out_series_is_the_loop() {
        fn by_loop(num: u64, den: u64) -> u64 {
            if den == 0 {
                return 0;
            }
            let k = num / den;
            if k >= SWEPT {
                return 0;
            }
            let frac = ((((num % den) as u128) << 32) / den as u128) as u64;
            let (mut pos, mut neg) = (ONE_Q32, 0u64);
            let mut term = ONE_Q32;
            for i in 1..=16u64 {
                term = ((term * frac) >> 32) / i;
                if term == 0 {
                    break;
                }
                if i % 2 == 1 {
                    neg += term;
                } else {
                    pos += term;
                }
            }
            let mut e = pos - neg;
            for _ in 0..k {
                e = ((e as u128 * EXP_NEG_ONE_Q32 as u128 + (1u128 << 31)) >> 32) as u64;
            }
            e
        }
        let mut rng = crate::rng::Rng::new(41, 0);
        for den in [
            1u64,
            7,
            1000,
            8_192_000,
            262_144_000,
            u32::MAX as u64 + 12_345,
        ] {
            for _ in 0..20_000 {
                let num = rng.next_u64() % (den.saturating_mul(46)).max(1);
                assert_eq!(exp_neg_ratio(num, den), by_loop(num, den), "{num}/{den}");
            }
            for num in [0, 1, den - 1, den, den + 1, 43 * den, 44 * den - 1] {
                assert_eq!(exp_neg_ratio(num, den), by_loop(num, den), "{num}/{den}");
            }
        }
    }

    #[test]
    fn overhead_is_paid_part_by_part() {
        let mut o = Overhead {
            from: Time(100),
            parts: [10, 20, 0, 5],
            accounted: 0,
        };
        let mut paid = [0; PARTS];
        o.accrue(Time(115), &mut paid);
        assert_eq!(paid, [10, 5, 0, 0]);
        o.accrue(Time(1000), &mut paid);
        assert_eq!(paid, [10, 20, 0, 5]);
        o.accrue(Time(2000), &mut paid);
        assert_eq!(paid, [10, 20, 0, 5]);
    }
}
