//! The event loop: pop the next event, advance the clock, hand the event to
//! the part of the engine that owns it.
//!
//! Events are handled one at a time in time order (ties in the queue's
//! order). A stale timer (its generation moved on) is dropped here. After
//! every event the loop checks for an invariant violation and stops the run
//! with an internal error naming the culprit. A cluster interleaves its
//! hosts by stepping each one event at a time ([`Simulation::step_one`]).

use super::{Event, Progress, Simulation};
use crate::error::SimError;
use crate::sched::SchedCtx;
use crate::time::Time;

impl Simulation {
    /// Handle one event. Returns false when the run is over.
    fn step(&mut self) -> bool {
        match self.w.queue.pop() {
            Some((t, ev)) => self.handle(t, ev),
            None => false,
        }
    }

    /// Handle `ev`, just popped, due at `t`. Returns false when the run is over.
    #[inline]
    fn handle(&mut self, t: Time, ev: Event) -> bool {
        debug_assert!(t >= self.w.now, "time went backwards");
        self.w.now = t;
        match ev {
            Event::Softirq { pcpu, gen } => {
                if self.w.pcpus[pcpu.idx()].softirq_gen != gen {
                    return true;
                }
                self.schedule(pcpu);
            }
            Event::SliceEnd { pcpu, gen } => {
                if self.w.pcpus[pcpu.idx()].slice_gen != gen {
                    return true;
                }
                // As in Xen, the slice timer only raises SCHEDULE_SOFTIRQ: every
                // timer expiring at this same instant (queued earlier, e.g.
                // Credit's tick and accounting) runs before the scheduler does,
                // because TIMER_SOFTIRQ is served before SCHEDULE_SOFTIRQ.
                self.w.raise_softirq(pcpu, 0);
            }
            Event::SchedTimer { id, gen } => {
                let (g, home) = self.w.sched_timers[id as usize];
                if g != gen {
                    return true;
                }
                self.w.local = Some(home);
                self.sched.timer(&mut SchedCtx::new(&mut self.w), id);
                self.drain_deferred();
                self.w.local = None;
            }
            Event::WorkDone { vcpu, gen } => self.work_done(vcpu, gen),
            Event::WorkloadTimer { dom, token } => {
                self.call_workload(dom, |wl, g, rng| wl.timer(g, rng, token));
            }
            Event::Sample => {
                self.take_sample();
                self.schedule_sample();
            }
            Event::Io { slot } => self.io_event(slot),
            Event::GuestTick { vcpu } => {
                self.w.vcpus[vcpu.idx()].tick_armed = false;
                self.preempt_for_irq(vcpu);
            }
            Event::WarmupEnd => self.end_warmup(),
            Event::Action { index } => self.apply_action(index as usize),
            Event::End => {
                // The sample interval that ends with the run is not lost (a
                // shorter last interval is normalised by its own length).
                if self.w.now > self.last_sample && self.w.now > self.measure_from {
                    self.take_sample();
                }
                self.w.flush_states();
                self.finished = true;
                return false;
            }
        }
        self.events += 1;
        true
    }

    /// Simulate up to simulated time `until` (or the end of the run).
    pub fn run_until(&mut self, until: Time) -> Result<Progress, SimError> {
        while !self.finished {
            let Some((t, ev)) = self.w.queue.pop_due(until) else {
                break;
            };
            if !self.handle(t, ev) {
                break;
            }
            if let Some(m) = self.w.fatal.take() {
                self.finished = true;
                return Err(SimError::Internal(m));
            }
        }
        if !self.finished {
            // A stale work completion due by `until` that the queue took off
            // would have been popped, moving the clock (see `queue`).
            if let Some(g) = self.w.queue.passed_ghost(until) {
                self.w.now = self.w.now.max(g);
            }
        }
        Ok(self.progress())
    }

    /// When the next event is due (`None` once the run is over).
    pub(crate) fn next_event_time(&self) -> Option<Time> {
        if self.finished {
            None
        } else {
            self.w.queue.peek_time()
        }
    }

    /// Handle exactly one event (a cluster interleaves its hosts' events).
    pub(crate) fn step_one(&mut self) -> Result<(), SimError> {
        if !self.finished && !self.step() {
            self.finished = true;
        }
        if let Some(m) = self.w.fatal.take() {
            self.finished = true;
            return Err(SimError::Internal(m));
        }
        Ok(())
    }

    /// Simulate to the end.
    pub fn run(&mut self) -> Result<Progress, SimError> {
        self.run_until(Time(u64::MAX))
    }
}
