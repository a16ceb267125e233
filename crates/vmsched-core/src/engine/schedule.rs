//! The scheduler's decisions: SCHEDULE_SOFTIRQ on a PCPU, and the
//! operations hooks defer to the engine.
//!
//! `schedule` asks the scheduler's `do_schedule` for the next VCPU and its
//! slice, checks the decision against the engine's invariants (runnable,
//! not running elsewhere, inside its hard affinity), switches (charging the
//! switch costs of `switch.rs`), starts the new VCPU's work and arms the
//! slice timer. A hook never changes the world's run states itself: it asks
//! for a pause, an unpause or a migration ([`Deferred`]), which the engine
//! performs after the hook returns, calling back into the scheduler as Xen
//! does (`sleep`, then `pick_cpu`, `migrate`, `wake`).

use super::{Event, Simulation, Timer};
use crate::ids::{PcpuId, VcpuId};
use crate::sched::{Deferred, SchedCtx};
use crate::trace::{CounterEvent, SchedEvent};

impl Simulation {
    /// Perform the operations hooks asked for, until none are left (most
    /// hooks ask for none: that case costs one test, here).
    #[inline]
    pub(super) fn drain_deferred(&mut self) {
        if !self.w.deferred.is_empty() {
            self.perform_deferred();
        }
    }

    /// [`Simulation::drain_deferred`]'s work.
    fn perform_deferred(&mut self) {
        while !self.w.deferred.is_empty() {
            let op = self.w.deferred.remove(0);
            match op {
                Deferred::Pause(v) => {
                    let was = self.w.vcpus[v.idx()].runnable();
                    self.w.vcpus[v.idx()].pause_count += 1;
                    self.w.update_state(v);
                    if was {
                        self.sched.sleep(&mut SchedCtx::new(&mut self.w), v);
                    }
                }
                Deferred::Unpause(v) => {
                    let vc = &mut self.w.vcpus[v.idx()];
                    if vc.pause_count == 0 {
                        self.w.violation(format!(
                            "scheduler {} unpaused {} which was not paused",
                            self.sched_name(),
                            self.w.vcpu_name(v)
                        ));
                        continue;
                    }
                    vc.pause_count -= 1;
                    self.w.update_state(v);
                    if self.w.vcpus[v.idx()].runnable() {
                        self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
                    }
                }
                Deferred::Migrate(v) => {
                    let vc = &mut self.w.vcpus[v.idx()];
                    if vc.migrating {
                        continue;
                    }
                    let was = vc.runnable();
                    vc.migrating = true;
                    if was {
                        self.sched.sleep(&mut SchedCtx::new(&mut self.w), v);
                    }
                    if self.w.vcpus[v.idx()].running_on.is_none() {
                        self.finish_migration(v);
                    }
                }
            }
        }
    }

    /// The scheduler's name for messages: its own, or the scenario's.
    fn sched_name(&self) -> &str {
        match self.sched.name() {
            "" => &self.scenario.scheduler.name,
            name => name,
        }
    }

    /// Xen's `sched_unit_migrate_finish`: pick, move, wake.
    fn finish_migration(&mut self, v: VcpuId) {
        let to = self.sched.pick_cpu(&mut SchedCtx::new(&mut self.w), v);
        if !self.w.masks[self.w.vcpus[v.idx()].hard_mask as usize].test(to) {
            let name = self.w.vcpu_name(v);
            self.w.violation(format!(
                "scheduler {} placed {name} on pcpu {to}, outside its hard affinity",
                self.sched_name()
            ));
        }
        self.sched.migrate(&mut SchedCtx::new(&mut self.w), v, to);
        self.w.vcpus[v.idx()].migrating = false;
        self.w.update_state(v);
        if self.w.vcpus[v.idx()].runnable() {
            self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
        }
        self.drain_deferred();
    }

    /// SCHEDULE_SOFTIRQ on `p`: ask the scheduler, switch, arm the slice timer.
    pub(super) fn schedule(&mut self, p: PcpuId) {
        let pi = p.idx();
        {
            let pc = &mut self.w.pcpus[pi];
            pc.softirq_gen = pc.softirq_gen.wrapping_add(1);
            pc.softirq_at = None;
            pc.slice_gen = pc.slice_gen.wrapping_add(1);
            pc.schedules += 1;
        }
        self.w.queue.cancel(Timer::Slice(p));
        let now = self.w.now;
        let prev = self.w.pcpus[pi].current;
        if let Some(v) = prev {
            self.w.settle_work(v);
        }
        self.w.local = Some(p);
        let d = self.sched.do_schedule(&mut SchedCtx::new(&mut self.w), p);
        self.check_decision(p, prev, &d);
        if self.w.fatal.is_some() {
            return;
        }
        if let Some(t) = self.w.trace.as_deref_mut() {
            t.schedule(&SchedEvent {
                now,
                pcpu: p,
                prev,
                next: d.next,
                slice_ns: d.slice_ns,
                vcpus: &self.w.vcpus,
            });
            t.counters(&CounterEvent {
                now,
                pcpu: p,
                counters: &self.sched.counters(),
            });
        }
        let sched_ns = self.w.switch.take_sched_ns(p);
        if d.next != prev {
            if let Some(v) = prev {
                self.w.switch_out(v, p);
                let vc = &mut self.w.vcpus[v.idx()];
                vc.running_on = None;
                vc.work_gen = vc.work_gen.wrapping_add(1);
                self.w.queue.cancel(Timer::Work(v));
                self.w.update_state(v);
            }
            self.w.pcpus[pi].current = d.next;
            match d.next {
                Some(n) => {
                    if let Some(s) = self.w.pcpus[pi].idle_since.take() {
                        self.w.pcpus[pi].idle_ns += now.since(s);
                    }
                    let cost = self.w.switch_in(p, n, sched_ns);
                    let vc = &mut self.w.vcpus[n.idx()];
                    vc.running_on = Some(p);
                    vc.processor = p;
                    vc.context_switches += 1;
                    if vc.last_ran_on.is_some_and(|l| l != p) {
                        vc.migrations += 1;
                    }
                    vc.last_ran_on = Some(p);
                    if let Some(w) = vc.woke_at.take() {
                        vc.wake_latency.record(now.since(w));
                    }
                    vc.progress_from = now.after(cost);
                    self.w.update_state(n);
                    if !self.w.start_work(n) {
                        // Woken for work another VCPU took: the guest halts again.
                        self.w.vcpus[n.idx()].blocked = true;
                        self.w.raise_softirq(p, 0);
                    }
                }
                None => {
                    if self.w.pcpus[pi].idle_since.is_none() {
                        self.w.pcpus[pi].idle_since = Some(now);
                    }
                }
            }
            if let Some(v) = prev {
                self.sched.context_saved(&mut SchedCtx::new(&mut self.w), v);
                self.drain_deferred();
                if self.w.vcpus[v.idx()].migrating {
                    self.finish_migration(v);
                }
            }
        } else if let Some(n) = d.next {
            // Re-picked without a switch: it keeps its work and its completion
            // event, unless it had halted and was woken again at this instant.
            // The decision's own run time delays its work (and that event).
            if sched_ns > 0 {
                let at = self.w.repick(n, sched_ns);
                self.w.vcpus[n.idx()].progress_from = at;
                if self.w.vcpus[n.idx()].item.is_some() {
                    self.w.start_work(n);
                }
            }
            if self.w.vcpus[n.idx()].item.is_none() && !self.w.start_work(n) {
                self.w.vcpus[n.idx()].blocked = true;
                self.w.raise_softirq(p, 0);
            }
        }
        self.w.local = Some(p);
        if let Some(s) = d.slice_ns {
            let gen = self.w.pcpus[pi].slice_gen;
            self.w
                .queue
                .push(now.after(s), Event::SliceEnd { pcpu: p, gen });
        }
        self.drain_deferred();
        self.w.local = None;
    }

    fn check_decision(&mut self, p: PcpuId, prev: Option<VcpuId>, d: &crate::sched::Decision) {
        let Some(n) = d.next else { return };
        if n.idx() >= self.w.vcpus.len() {
            let name = self.sched_name().to_string();
            self.w.violation(format!(
                "scheduler {name} chose vcpu id {n}, which does not exist"
            ));
            return;
        }
        let vc = &self.w.vcpus[n.idx()];
        // Names are formatted only when something is wrong (this runs at
        // every decision).
        let problem = if !vc.runnable() {
            format!("on pcpu {p} but it is not runnable")
        } else if let Some(q) = vc.running_on.filter(|&q| q != p) {
            format!("on pcpu {p} while it runs on pcpu {q}")
        } else if !self.w.masks[vc.hard_mask as usize].test(p) {
            format!("on pcpu {p}, outside its hard affinity")
        } else if prev != Some(n) && vc.running_on == Some(p) {
            let who = self.w.vcpu_name(n);
            self.w.violation(format!(
                "engine: {who} marked running on pcpu {p} but not current"
            ));
            return;
        } else {
            return;
        };
        let who = self.w.vcpu_name(n);
        let name = self.sched_name().to_string();
        self.w
            .violation(format!("scheduler {name} chose {who} {problem}"));
    }
}
