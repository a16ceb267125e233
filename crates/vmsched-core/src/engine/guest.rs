//! The guest work model: what a guest's VCPUs do when they run.
//!
//! A domain's workload queues work items on the domain's run queue (ordinary
//! work, taken by any free VCPU) or on one VCPU's interrupt queue (urgent
//! work, bound to an event channel). A running VCPU holds one item at a time
//! and makes progress on it at one nanosecond of work per nanosecond on a
//! PCPU; when it completes, the workload's continuation runs and the VCPU
//! takes the next item or halts (`SCHEDOP_block`). Queued work wakes halted
//! VCPUs, as a guest kernel's IPI to an idle VCPU would. A workload's
//! `SCHEDOP_yield` reaches the scheduler's `yield_` hook here too.

use super::{io, Event, Simulation, Timer, World};
use crate::domain::{WorkItem, BACKEND, FOREVER, TAG_MASK, URGENT};
use crate::ids::{DomId, VcpuId};
use crate::rng::Rng;
use crate::sched::SchedCtx;
use crate::workload::{GuestCtx, Workload};

impl World {
    pub(crate) fn note_guest_work(&mut self, dom: DomId) {
        if !self.guest_dirty.contains(&dom) {
            self.guest_dirty.push(dom);
        }
    }

    /// Drop all guest work of `dom`: queued items and the items its VCPUs hold.
    pub(crate) fn cancel_guest_work(&mut self, dom: DomId) {
        let d = &mut self.doms[dom.idx()];
        d.queue.clear();
        let (first, n) = (d.first_vcpu, d.nvcpus);
        for vi in first..first + n {
            let v = &mut self.vcpus[vi as usize];
            v.irq.retain(|it| it.tag & BACKEND != 0);
            v.stashed = None;
            // Backend work (a driver domain's) is the kernel's, not the
            // guest's processes': it stays.
            if v.item.is_some_and(|it| it.tag & BACKEND != 0) {
                continue;
            }
            v.item = None;
            v.work_gen = v.work_gen.wrapping_add(1);
            self.queue.cancel(Timer::Work(VcpuId(vi)));
            if let Some(p) = v.running_on {
                // The guest halts: a local SCHEDOP_block on that PCPU.
                v.blocked = true;
                self.raise_softirq(p, 0);
            }
        }
    }

    /// Bring the running VCPU's work item up to date.
    #[inline]
    pub(super) fn settle_work(&mut self, v: VcpuId) {
        let now = self.now;
        let vc = &mut self.vcpus[v.idx()];
        if now > vc.progress_from {
            let ran = now.since(vc.progress_from);
            if let Some(it) = vc.item.as_mut() {
                if it.remaining_ns != FOREVER {
                    it.remaining_ns = it.remaining_ns.saturating_sub(ran);
                }
                if it.tag & URGENT != 0 {
                    vc.urgent_ran_ns += ran;
                } else {
                    vc.ordinary_ran_ns += ran;
                }
            }
            vc.progress_from = now;
        }
    }

    /// Give the running VCPU `v` work if it has none, and arm its completion.
    /// Returns false if the guest has nothing for it (it must halt).
    pub(super) fn start_work(&mut self, v: VcpuId) -> bool {
        let vc = &mut self.vcpus[v.idx()];
        if vc.item.is_none() {
            let d = &mut self.doms[vc.dom.idx()];
            vc.item = vc
                .irq
                .pop_front()
                .or_else(|| vc.stashed.take())
                .or_else(|| d.queue.pop_front());
        }
        let Some(mut item) = vc.item else {
            return false;
        };
        if item.remaining_ns == io::UNSTARTED && item.tag & BACKEND != 0 {
            item.remaining_ns = self.begin_batch(crate::ids::DomId(item.tag & TAG_MASK));
            self.vcpus[v.idx()].item = Some(item);
        }
        let vc = &mut self.vcpus[v.idx()];
        vc.work_gen = vc.work_gen.wrapping_add(1);
        if item.remaining_ns != FOREVER {
            let at = vc.progress_from.after(item.remaining_ns);
            let gen = vc.work_gen;
            // Replaces (takes off) the stale completion of earlier work, if pending.
            self.queue.push(at, Event::WorkDone { vcpu: v, gen });
        } else {
            self.queue.cancel(Timer::Work(v));
        }
        true
    }
}

impl Simulation {
    /// Run a workload callback, then wake VCPUs for any work it queued.
    pub(super) fn call_workload(
        &mut self,
        dom: DomId,
        f: impl FnOnce(&mut dyn Workload, &mut GuestCtx, &mut Rng),
    ) {
        let d = dom.idx();
        {
            let mut g = GuestCtx {
                w: &mut self.w,
                dom,
            };
            f(self.workloads[d].as_mut(), &mut g, &mut self.rngs[d]);
        }
        self.dispatch_guest_work();
        self.guest_yields();
    }

    /// `SCHEDOP_yield` from running VCPUs: the scheduler's `yield_`, then a
    /// local reschedule on the VCPU's PCPU.
    fn guest_yields(&mut self) {
        let yields = std::mem::take(&mut self.w.guest_yields);
        for v in yields {
            let Some(p) = self.w.vcpus[v.idx()].running_on else {
                continue;
            };
            let saved = self.w.local;
            self.w.local = Some(p);
            self.sched.yield_(&mut SchedCtx::new(&mut self.w), v);
            self.w.raise_softirq(p, 0);
            self.w.local = saved;
            self.drain_deferred();
        }
    }

    /// For each domain that got work: wake halted VCPUs while there is more
    /// queued work than awake VCPUs free to take it (the guest OS sends an IPI
    /// to an idle VCPU).
    pub(super) fn dispatch_guest_work(&mut self) {
        while let Some(dom) = self.w.guest_dirty.pop() {
            let d = &self.w.doms[dom.idx()];
            let (first, n) = (d.first_vcpu, d.nvcpus);
            let queued = d.queue.len();
            let mut free = 0usize;
            for vi in first..first + n {
                let v = &self.w.vcpus[vi as usize];
                if v.item.is_none() && !v.blocked && v.online {
                    free += 1;
                }
            }
            let mut cursor = self.w.doms[dom.idx()].wake_cursor;
            let mut tries = 0;
            while free < queued && tries < n {
                let vi = first + wrap(cursor, n);
                cursor = cursor.wrapping_add(1);
                tries += 1;
                let v = &self.w.vcpus[vi as usize];
                if v.blocked && v.online {
                    free += 1;
                    self.wake_vcpu(VcpuId(vi));
                }
            }
            self.w.doms[dom.idx()].wake_cursor = wrap(cursor, n.max(1));
            for vi in first..first + n {
                if !self.w.vcpus[vi as usize].irq.is_empty() {
                    self.interrupt_vcpu(VcpuId(vi));
                }
            }
        }
    }

    /// A halted VCPU gets work: it becomes runnable and the scheduler hears of it.
    pub(super) fn wake_vcpu(&mut self, v: VcpuId) {
        let vc = &mut self.w.vcpus[v.idx()];
        if !vc.blocked {
            return;
        }
        vc.blocked = false;
        if vc.running_on.is_none() {
            vc.woke_at = Some(self.w.now);
        }
        self.w.update_state(v);
        if self.w.vcpus[v.idx()].runnable() {
            self.w.local = Some(self.w.vcpus[v.idx()].processor);
            self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
            self.w.local = None;
            self.drain_deferred();
        }
    }

    /// The running VCPU's work item completed.
    pub(super) fn work_done(&mut self, v: VcpuId, gen: u32) {
        let vc = &self.w.vcpus[v.idx()];
        if vc.work_gen != gen || vc.running_on.is_none() {
            return;
        }
        self.w.settle_work(v);
        let item: WorkItem = self.w.vcpus[v.idx()].item.take().expect("work item");
        let dom = self.w.vcpus[v.idx()].dom;
        let idx = self.w.vcpus[v.idx()].index;
        self.w.local = self.w.vcpus[v.idx()].running_on;
        if item.tag & BACKEND != 0 {
            self.backend_step(crate::ids::DomId(item.tag & TAG_MASK));
        } else {
            let tag = item.tag & TAG_MASK;
            self.call_workload(dom, |wl, g, rng| wl.work_done(g, rng, idx, tag));
        }
        // The continuation may have queued work for this VCPU; otherwise it halts.
        let vc = &self.w.vcpus[v.idx()];
        if vc.running_on.is_some() && vc.item.is_none() && !vc.blocked && !self.w.start_work(v) {
            let p = self.w.vcpus[v.idx()].running_on.unwrap();
            self.w.vcpus[v.idx()].blocked = true;
            self.w.raise_softirq(p, 0);
        }
        self.w.local = None;
    }
}

/// `c` mod `n` for `n` > 0, without a division when `c` is below `n` (a
/// domain's wake cursor nearly always is: it is kept reduced).
#[inline]
fn wrap(c: u32, n: u32) -> u32 {
    if c < n {
        c
    } else {
        c % n
    }
}
