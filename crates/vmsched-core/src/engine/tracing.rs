//! Tracing a run: installing a [`TraceSink`] at the start of measurement and
//! finishing it (with the scheduler's counters as they are at the end). The two hooks themselves are in `schedule.rs` and
//! `World::update_state` (mod.rs).

use super::Simulation;
use crate::ids::PcpuId;
use crate::time::Time;
use crate::trace::{CounterEvent, TraceError, TraceSink, TraceStart};

impl Simulation {
    /// Trace the run into `sink` (see [`crate::trace::to_files`]). Tracing
    /// starts at the start of measurement: after the warm-up, or now if
    /// measurement has started. A sink set earlier is replaced (and
    /// dropped: a file sink's temporary file is removed). Call
    /// [`Simulation::finish_trace`] when the run is over.
    pub fn set_trace(&mut self, sink: Box<dyn TraceSink>) {
        self.w.trace = None;
        self.trace_pending = None;
        if self.measuring() {
            self.start_trace(sink);
        } else {
            self.trace_pending = Some(sink);
        }
    }

    /// Whether a trace sink is set (active or waiting for the warm-up's end).
    pub fn tracing(&self) -> bool {
        self.w.trace.is_some() || self.trace_pending.is_some()
    }

    /// Stop tracing and finish the sink (files: flush and rename into
    /// place). A sink still waiting for the warm-up's end is started first,
    /// so its file holds only the header. `Ok` if no sink is set.
    pub fn finish_trace(&mut self) -> Result<(), TraceError> {
        let header_only = self.trace_pending.is_some();
        if let Some(sink) = self.trace_pending.take() {
            self.start_trace(sink);
        }
        match self.w.trace.take() {
            Some(sink) if header_only => sink.finish(),
            Some(mut sink) => {
                sink.counters(&CounterEvent {
                    now: self.w.now,
                    pcpu: PcpuId(0),
                    counters: &self.sched.counters(),
                });
                sink.finish()
            }
            None => Ok(()),
        }
    }

    /// Stop tracing and drop the sink without finishing it (files: the
    /// temporary file is removed, nothing appears).
    pub fn discard_trace(&mut self) {
        self.w.trace = None;
        self.trace_pending = None;
    }

    /// Called when the warm-up ends.
    pub(super) fn start_pending_trace(&mut self) {
        if let Some(sink) = self.trace_pending.take() {
            self.start_trace(sink);
        }
    }

    fn measuring(&self) -> bool {
        self.scenario.run.warmup_ns == 0 || self.measure_from > Time::ZERO
    }

    fn start_trace(&mut self, mut sink: Box<dyn TraceSink>) {
        let w = &self.w;
        let pcpus = w
            .pcpus
            .iter()
            .map(|pc| match pc.current {
                Some(v) => (Some(v), w.vcpus[v.idx()].state_since),
                None => (None, pc.idle_since.unwrap_or(w.now)),
            })
            .collect();
        sink.begin(&TraceStart {
            now: w.now,
            scheduler: &self.scenario.scheduler.name,
            domains: &w.doms,
            vcpus: &w.vcpus,
            pcpus,
            counters: crate::sched::find(&self.scenario.scheduler.name)
                .map(|info| info.declared_counters().copied().collect())
                .unwrap_or_default(),
        });
        self.w.trace = Some(sink);
    }
}
