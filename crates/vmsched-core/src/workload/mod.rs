//! Workloads: what drives a domain's guest work.
//!
//! A workload puts [`WorkItem`]s on its domain's guest run queue, arms its own
//! timers, and reacts when an item completes (the item's continuation). Each
//! kind is one module with declared parameters and its own application
//! metrics. Randomness comes only from the workload's own seeded stream.

mod cpu_hog;
mod duty_cycle;
mod idle;
mod sysbench_cpu;
mod transient;

use crate::domain::WorkItem;
use crate::engine::World;
use crate::error::ScenarioError;
use crate::ids::DomId;
use crate::params::{ParamSpec, Params};
use crate::rng::Rng;
use crate::time::Time;
use serde_json::{Map, Value as Json};

/// What a workload may see and do, for its own domain.
pub struct GuestCtx<'a> {
    pub(crate) w: &'a mut World,
    pub(crate) dom: DomId,
}

impl GuestCtx<'_> {
    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.w.now
    }

    /// Number of VCPUs of this domain.
    pub fn nvcpus(&self) -> u32 {
        self.w.doms[self.dom.idx()].nvcpus
    }

    /// Queue `item` on the guest run queue; a halted VCPU wakes for it if every
    /// awake VCPU is busy.
    #[inline]
    pub fn push(&mut self, item: WorkItem) {
        self.w.doms[self.dom.idx()].queue.push_back(item);
        self.w.note_guest_work(self.dom);
    }

    /// Fire `timer(token)` at `at`.
    #[inline]
    pub fn arm_timer(&mut self, at: Time, token: u32) {
        self.w.arm_workload_timer(self.dom, at, token);
    }

    /// Drop all of this guest's work, queued and in progress (the processes
    /// exit). VCPUs left without work halt.
    pub fn cancel_all_work(&mut self) {
        self.w.cancel_guest_work(self.dom);
    }

    /// Work items waiting in the guest run queue (not on a VCPU).
    pub fn queued(&self) -> usize {
        self.w.doms[self.dom.idx()].queue.len()
    }

    /// VCPU number `vcpu` of this domain yields (`SCHEDOP_yield`): once the
    /// current callback returns, the scheduler's `yield_` runs and the VCPU's
    /// PCPU reschedules at once. Ignored if that VCPU is not running.
    pub fn yield_vcpu(&mut self, vcpu: u32) {
        let d = &self.w.doms[self.dom.idx()];
        if vcpu < d.nvcpus {
            let v = crate::ids::VcpuId(d.first_vcpu + vcpu);
            self.w.guest_yields.push(v);
        }
    }

    /// Is VCPU number `vcpu` of this domain running right now?
    pub fn is_running(&self, vcpu: u32) -> bool {
        let d = &self.w.doms[self.dom.idx()];
        vcpu < d.nvcpus
            && self.w.vcpus[(d.first_vcpu + vcpu) as usize]
                .running_on
                .is_some()
    }
}

/// A workload driving one domain.
pub trait Workload: Send {
    /// Registry name.
    fn kind(&self) -> &'static str;
    /// The run starts (t = 0): queue initial work, arm timers.
    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng);
    /// A work item completed on VCPU number `vcpu` of this domain.
    fn work_done(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, _tag: u32) {}
    /// A timer armed with [`GuestCtx::arm_timer`] fired.
    fn timer(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {}
    /// Warm-up ended at `now`: forget what was measured so far.
    fn reset_metrics(&mut self, _now: Time) {}
    /// Application metrics at the end of the run (`now`).
    fn metrics(&self, _now: Time) -> Map<String, Json> {
        Map::new()
    }
}

/// Builds a workload from its validated parameters.
pub type WorkloadFactory = fn(&Params) -> Box<dyn Workload>;

/// A registered workload kind.
pub struct WorkloadInfo {
    /// `kind` in `[domain.workload]`.
    pub kind: &'static str,
    /// One line: what it models.
    pub summary: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
    /// Names of the metrics it reports, with units in the name.
    pub metrics: &'static [&'static str],
    /// Constructor.
    pub make: WorkloadFactory,
    /// Cross-parameter checks a declaration cannot express.
    pub check: WorkloadCheck,
}

/// Cross-parameter check of a workload's parameters (`path` locates them).
pub type WorkloadCheck = fn(&Params, &str) -> Result<(), ScenarioError>;

/// A [`WorkloadCheck`] that accepts everything.
pub fn no_check(_p: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

/// Every workload kind, in listing order.
pub fn registry() -> &'static [WorkloadInfo] {
    static REGISTRY: &[WorkloadInfo] = &[
        idle::INFO,
        cpu_hog::INFO,
        duty_cycle::INFO,
        sysbench_cpu::INFO,
        transient::INFO,
    ];
    REGISTRY
}

/// Look a workload kind up.
pub fn find(kind: &str) -> Option<&'static WorkloadInfo> {
    registry().iter().find(|w| w.kind == kind)
}
