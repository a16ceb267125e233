//! The simulation engine: the world (PCPUs, VCPUs, domains) and the
//! simulation that drives it, with exact state accounting.
//!
//! One thread, one event queue, integer-nanosecond time. Cancellation is by
//! generation counters: a timer event carries the generation it was armed with
//! and a stale pop is dropped. The queue also takes a stale softirq, slice
//! or scheduler timer off at once (armed again, or cancelled here with
//! [`EventQueue::cancel`]), so that those are never popped. Randomness comes
//! only from per-workload seeded
//! streams. Same scenario + same seed ⇒ identical results.
//!
//! This file holds the world, its timers and its run-state accounting, and
//! the simulation's read-only views. The rest, one concept per module:
//! `build` (construction and boot), `event_loop` (the loop),
//! `schedule` (the scheduler's decisions and deferred operations), `guest`
//! (the guest work model), `guest_linux` (Linux's scheduler inside a
//! guest), `admin` (toolstack actions), `io` (the engine's side of the I/O
//! path), `switch` (switch costs), `sampling` (series and warm-up),
//! `summary` and `tracing`.

mod admin;
mod build;
mod event_loop;
mod guest;
mod guest_linux;
mod io;
mod queue;
mod sampling;
mod schedule;
mod summary;
mod switch;
mod tracing;

#[cfg(feature = "queue-trace")]
pub use queue::QueueOp;
pub use queue::{Event, EventQueue, Timer};
pub use summary::SummaryParts;

use crate::cpumask::CpuMask;
use crate::domain::{Domain, Vcpu};
use crate::host::{Platform, Topology};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::io::IoState;
use crate::metrics::{IoCounters, Series};
use crate::params::Params;
use crate::rng::Rng;
use crate::scenario::{DomainAdmin, Scenario};
use crate::sched::{Deferred, SchedCtx, Scheduler};
use crate::time::Time;
use crate::trace::{RunstateEvent, TraceSink};
use crate::workload::Workload;

/// One physical CPU.
#[derive(Clone, Debug, Default)]
pub struct Pcpu {
    /// The VCPU it runs (`None` = idle).
    pub current: Option<VcpuId>,
    /// Generation of the pending softirq event, if any.
    softirq_gen: u32,
    /// When the pending softirq is due.
    softirq_at: Option<Time>,
    /// Generation of the slice timer.
    slice_gen: u32,
    /// Accumulated idle time and since when it is idle.
    idle_ns: u64,
    idle_since: Option<Time>,
    /// Times `do_schedule` ran here.
    pub schedules: u64,
}

/// Everything the scheduler and workloads act on, apart from themselves.
pub struct World {
    pub(crate) now: Time,
    pub(crate) queue: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) platform: Platform,
    pub(crate) pcpus: Vec<Pcpu>,
    pub(crate) vcpus: Vec<Vcpu>,
    pub(crate) doms: Vec<Domain>,
    /// Affinity masks, shared by index (0 = all PCPUs).
    pub(crate) masks: Vec<CpuMask>,
    /// Does any VCPU have a soft-affinity mask other than every PCPU? Soft
    /// masks are set when the world is built and never change, so when this
    /// is false no VCPU has a soft affinity for the whole run, and the
    /// schedulers skip their soft-affinity balancing steps at once (they
    /// would find nothing: Xen tests `has_soft_affinity` per VCPU).
    pub(crate) any_soft: bool,
    /// Generation and home PCPU of each scheduler timer id.
    sched_timers: Vec<(u32, PcpuId)>,
    pub(crate) deferred: Vec<Deferred>,
    /// Domains whose guest run queue got work during the current callback.
    guest_dirty: Vec<DomId>,
    /// VCPUs whose guest asked to yield during the current callback.
    pub(crate) guest_yields: Vec<VcpuId>,
    /// The PCPU whose code is running now, for local vs remote tickles.
    pub(crate) local: Option<PcpuId>,
    /// First invariant violation seen (the run stops with an internal error).
    fatal: Option<String>,
    /// The I/O path: backends, devices, counters.
    pub(crate) io: IoState,
    /// Every host's and domain's name (this host alone, outside a cluster).
    pub(crate) directory: std::sync::Arc<crate::io::Directory>,
    /// Where scheduling events go while a trace is taken (`trace/`).
    pub(crate) trace: Option<Box<dyn TraceSink>>,
    /// The indirect costs of switches and the scheduler's run time.
    pub(crate) switch: switch::SwitchModel,
    /// The run's seed, for the scheduler's own random streams.
    pub(crate) seed: u64,
}

impl World {
    /// Raise SCHEDULE_SOFTIRQ on `p` after `delay` ns, unless one is already
    /// due no later than that.
    pub(crate) fn raise_softirq(&mut self, p: PcpuId, delay: u64) {
        let at = self.now.after(delay);
        let pc = &mut self.pcpus[p.idx()];
        if matches!(pc.softirq_at, Some(t) if t <= at) {
            return;
        }
        pc.softirq_gen = pc.softirq_gen.wrapping_add(1);
        pc.softirq_at = Some(at);
        let gen = pc.softirq_gen;
        self.queue.push_softirq(at, Event::Softirq { pcpu: p, gen });
    }

    pub(crate) fn arm_sched_timer(&mut self, id: u32, at: Time, home: PcpuId, late: bool) {
        let i = id as usize;
        if i >= self.sched_timers.len() {
            self.sched_timers.resize(i + 1, (0, PcpuId(0)));
        }
        let slot = &mut self.sched_timers[i];
        slot.0 = slot.0.wrapping_add(1);
        slot.1 = home;
        let gen = slot.0;
        let ev = Event::SchedTimer { id, gen };
        if late {
            self.queue.push_late(at.max(self.now), ev);
        } else {
            self.queue.push(at.max(self.now), ev);
        }
    }

    pub(crate) fn cancel_sched_timer(&mut self, id: u32) {
        if let Some(slot) = self.sched_timers.get_mut(id as usize) {
            slot.0 = slot.0.wrapping_add(1);
        }
        self.queue.cancel(Timer::Sched(id));
    }

    pub(crate) fn arm_workload_timer(&mut self, dom: DomId, at: Time, token: u32) {
        self.queue
            .push(at.max(self.now), Event::WorkloadTimer { dom, token });
    }

    /// Move `v`'s accounting to the state its flags imply.
    #[inline]
    fn update_state(&mut self, v: VcpuId) {
        let now = self.now;
        let vc = &mut self.vcpus[v.idx()];
        let new = vc.implied_state();
        if new != vc.state {
            let old = vc.state;
            vc.state_ns[vc.state as usize] += now.since(vc.state_since);
            vc.state = new;
            vc.state_since = now;
            if let Some(t) = self.trace.as_deref_mut() {
                t.runstate(&RunstateEvent {
                    now,
                    cpu: self.local,
                    vcpu: v,
                    old,
                    v: &self.vcpus[v.idx()],
                });
            }
        }
    }

    fn flush_states(&mut self) {
        for i in 0..self.vcpus.len() {
            let now = self.now;
            let vc = &mut self.vcpus[i];
            vc.state_ns[vc.state as usize] += now.since(vc.state_since);
            vc.state_since = now;
        }
        let now = self.now;
        for pc in &mut self.pcpus {
            if let Some(s) = pc.idle_since {
                pc.idle_ns += now.since(s);
                pc.idle_since = Some(now);
            }
        }
    }

    pub(crate) fn violation(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(msg);
        }
    }

    fn vcpu_name(&self, v: VcpuId) -> String {
        let vc = &self.vcpus[v.idx()];
        format!("{}.v{}", self.doms[vc.dom.idx()].name, vc.index)
    }
}

/// How far a run has got (for progress bars and live monitors).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: Time,
    pub end: Time,
    pub events: u64,
    pub finished: bool,
}

/// A simulation of one host under one scheduler.
pub struct Simulation {
    w: World,
    sched: Box<dyn Scheduler>,
    workloads: Vec<Box<dyn Workload>>,
    rngs: Vec<Rng>,
    scenario: Scenario,
    /// Each domain as the toolstack sees it (parameters, pauses, VCPUs online).
    admin: Vec<DomainAdmin>,
    global_params: Params,
    series: Series,
    /// Cumulative [running, runnable, blocked, context switches] per VCPU
    /// at the last sample.
    sample_prev: Vec<[u64; 4]>,
    /// Cumulative I/O counters per domain at the last sample.
    io_prev: Vec<IoCounters>,
    last_sample: Time,
    measure_from: Time,
    end: Time,
    events: u64,
    finished: bool,
    /// A trace sink set before the warm-up's end, installed at its end.
    trace_pending: Option<Box<dyn TraceSink>>,
}

impl Simulation {
    /// Where the run is.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.w.now,
            end: self.end,
            events: self.events(),
            finished: self.finished,
        }
    }

    /// Events processed since measurement started. Stale work completions
    /// the queue took off unpopped are counted as the popped ones always
    /// were ([`EventQueue::ghosts`]).
    pub fn events(&self) -> u64 {
        self.events + self.w.queue.ghosts()
    }

    /// Events in the queue now (benchmarks compare the engine with a bare
    /// heap of this size).
    pub fn queue_len(&self) -> usize {
        self.w.queue.len()
    }

    /// The queue's operations recorded since the last call (feature
    /// `queue-trace`, under which a simulation's queue records from its
    /// first push; the `queue_bound` example replays them).
    #[cfg(feature = "queue-trace")]
    pub fn take_queue_trace(&mut self) -> Vec<QueueOp> {
        self.w.queue.take_trace()
    }

    /// The sampled series so far.
    pub fn series(&self) -> &Series {
        &self.series
    }

    /// The scenario being run, without its input tree (`source` is null:
    /// keep the [`Scenario`] the simulation was built from to echo it).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Per-VCPU state, for monitors and tests.
    pub fn vcpus(&self) -> &[Vcpu] {
        &self.w.vcpus
    }

    /// Per-PCPU state, for monitors and tests.
    pub fn pcpus(&self) -> &[Pcpu] {
        &self.w.pcpus
    }

    /// Domains, for monitors and tests.
    pub fn domains(&self) -> &[Domain] {
        &self.w.doms
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.w.now
    }

    /// The scheduler's debug dump.
    pub fn dump(&mut self) -> String {
        self.sched.dump(&SchedCtx::new(&mut self.w))
    }

    /// The scheduler's state as data (what [`Simulation::dump`] shows).
    pub fn sched_state(&mut self) -> crate::sched::SchedState {
        self.sched.state(&SchedCtx::new(&mut self.w))
    }

    /// Bytes of heap and inline memory the model holds per VCPU (for the
    /// memory benchmark): the VCPU record, its histogram, its sample slot.
    /// A lower bound: the event queue, the scheduler's own state and the
    /// per-domain records are not counted (measure the process's RSS for
    /// the total).
    pub fn bytes_per_vcpu(&self) -> f64 {
        let n = self.w.vcpus.len().max(1);
        let inline = std::mem::size_of::<Vcpu>() + std::mem::size_of::<[u64; 4]>();
        let heap: usize = self
            .w
            .vcpus
            .iter()
            .map(|v| v.wake_latency.heap_bytes())
            .sum();
        inline as f64 + heap as f64 / n as f64
    }
}
