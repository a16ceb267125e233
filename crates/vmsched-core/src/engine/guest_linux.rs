//! The guest's own scheduler: when Linux inside a domain lets urgent work
//! (a backend, a front end's batch) preempt the process a VCPU is running.
//!
//! In interrupt context (the profile's `backend_context = "softirq"`) urgent
//! work preempts at once. As a kernel thread (`"thread"`) it preempts at
//! once only if Linux's CFS would preempt on the wake-up (its sleeper
//! credit and wake-up granularity, scaled by the guest's CPUs), else at the
//! guest's next scheduler tick. The preempted work resumes after it.

use super::{Event, Simulation, Timer};
use crate::domain::URGENT;
use crate::ids::VcpuId;
use crate::time::Time;

impl Simulation {
    /// Urgent work is queued for VCPU `v`. Halted, it wakes; already in
    /// interrupt context or free, it takes the work when it gets to it;
    /// holding ordinary work, the urgent work preempts that work, which
    /// resumes after it: at once for interrupt context (the profile's
    /// `backend_context = "softirq"`); for kernel threads (`"thread"`) at
    /// once if the guest's CFS would preempt on the wake-up
    /// ([`Simulation::cfs_wakeup_preempts`]), else at its next scheduler tick.
    pub(super) fn interrupt_vcpu(&mut self, v: VcpuId) {
        let vc = &self.w.vcpus[v.idx()];
        if !vc.online {
            return;
        }
        if vc.blocked {
            self.wake_vcpu(v);
            return;
        }
        if !matches!(vc.item, Some(it) if it.tag & URGENT == 0) {
            return;
        }
        let tick = self.w.platform.io.guest_tick_ns;
        if self.w.platform.io.backend_thread && tick > 0 && !self.cfs_wakeup_preempts(v) {
            let vc = &self.w.vcpus[v.idx()];
            if !vc.tick_armed {
                let now = self.w.now.0;
                let at = Time((now / tick + 1) * tick);
                self.w.vcpus[v.idx()].tick_armed = true;
                self.w.queue.push(at, Event::GuestTick { vcpu: v });
            }
        } else {
            self.preempt_for_irq(v);
        }
    }

    /// Does the guest's scheduler (Linux CFS) let a kernel thread woken on
    /// `v` preempt the process running there at once? CFS places a woken
    /// sleeper at most half its latency target (3 ms) behind the running
    /// process's virtual runtime and preempts when the sleeper is more than
    /// the wake-up granularity (1 ms) behind; both are scaled by 1 + log2 of
    /// the CPUs (at most 8). A backend that uses little CPU is always that far behind and
    /// preempts at once; one that has used as much CPU as the process waits
    /// for the tick. vmsched compares the CPU time `v` gave to urgent and to
    /// ordinary work.
    fn cfs_wakeup_preempts(&mut self, v: VcpuId) -> bool {
        if self.w.vcpus[v.idx()].running_on.is_some() {
            self.w.settle_work(v);
        }
        // Linux's defaults: sched_latency 6 ms (a sleeper is placed at most
        // half of it behind) and sched_wakeup_granularity 1 ms, both scaled
        // by 1 + log2(CPUs) up to 8 CPUs.
        const SLEEPER_BONUS_NS: u64 = 3_000_000;
        const WAKEUP_GRAN_NS: u64 = 1_000_000;
        let vc = &self.w.vcpus[v.idx()];
        let ncpus = self.w.doms[vc.dom.idx()].online_vcpus.len().clamp(1, 8) as u64;
        let factor = 1 + ncpus.ilog2() as u64;
        let gran = WAKEUP_GRAN_NS * factor;
        let sleeper = vc
            .urgent_ran_ns
            .max(vc.ordinary_ran_ns.saturating_sub(SLEEPER_BONUS_NS * factor));
        vc.ordinary_ran_ns.saturating_sub(sleeper) > gran
    }

    /// The guest preempts `v`'s ordinary work for its urgent work.
    pub(super) fn preempt_for_irq(&mut self, v: VcpuId) {
        let vc = &self.w.vcpus[v.idx()];
        if vc.irq.is_empty() || !matches!(vc.item, Some(it) if it.tag & URGENT == 0) {
            return;
        }
        let running = vc.running_on.is_some();
        if running {
            self.w.settle_work(v);
        }
        let vc = &mut self.w.vcpus[v.idx()];
        vc.stashed = vc.item.take();
        vc.work_gen = vc.work_gen.wrapping_add(1);
        self.w.queue.cancel(Timer::Work(v));
        if running {
            self.w.start_work(v);
        }
    }
}
