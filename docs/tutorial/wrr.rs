//! Weighted round-robin: one FIFO per PCPU, turns of 10 ms x weight / 256.
//! The tutorial's scheduler (docs/write-a-scheduler.md) in Rust: save it as
//! `crates/vmsched-core/src/sched/wrr.rs` and add `wrr` to `schedulers!`.

use super::{RunQueues, SchedCtx, Scheduler, SchedulerInfo};
use crate::ids::{DomId, VcpuId};
use crate::params::{ParamSpec, Params};

/// A FIFO per PCPU, which the trait's default hooks run as a round-robin
/// (placement, wake, sleep, do_schedule); each VCPU's turn, ns.
#[derive(Default)]
pub struct WeightedRr {
    queues: RunQueues,
    turn_ns: Vec<u64>,
}

impl Scheduler for WeightedRr {
    fn run_queues(&mut self) -> Option<&mut RunQueues> {
        Some(&mut self.queues)
    }

    fn slice_ns(&self, v: VcpuId) -> u64 {
        self.turn_ns[v.idx()]
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.turn_ns.resize(ctx.nvcpus(), 0);
        for v in ctx.vcpus_of(dom) {
            self.turn_ns[v.idx()] = 10_000_000 * params.int("weight") as u64 / 256;
        }
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.init_domain(ctx, dom, params);
    }
}

const PARAMS: &[ParamSpec] = &[ParamSpec::int("weight", 256, 1, 65535)
    .per_domain()
    .doc("Relative length of a turn.")];

/// The registry entry: its name, parameters and what it is.
pub const INFO: SchedulerInfo = SchedulerInfo::new("wrr", "Weighted RR", PARAMS, |_, _| {
    Box::new(WeightedRr::default())
})
.about(
    "Per-PCPU FIFOs, turns of 10 ms x weight / 256.",
    "the tutorial",
);
