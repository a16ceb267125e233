//! Weighted round-robin: one FIFO per PCPU, turns of 10 ms x weight / 256.
//!
//! The tutorial's scheduler (docs/write-a-scheduler.md) in Rust: this file
//! is `crates/vmsched-core/src/sched/wrr.rs` plus `wrr` in `schedulers!`.
//! (vmsched's tests compile it from here and register it at run time.)

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use std::collections::VecDeque;

/// Turn of a weight-256 VCPU, ns.
const PERIOD_NS: u64 = 10_000_000;

/// The scheduler's state: a FIFO per PCPU, each VCPU's turn.
#[derive(Default)]
pub struct WeightedRr {
    queues: Vec<VecDeque<VcpuId>>,
    load: Vec<u32>,
    turn_ns: Vec<u64>,
}

impl Scheduler for WeightedRr {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.queues = vec![VecDeque::new(); ctx.npcpus()];
        self.load = vec![0; ctx.npcpus()];
        self.turn_ns = vec![PERIOD_NS; ctx.nvcpus()];
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        for v in ctx.vcpus_of(dom) {
            self.turn_ns[v.idx()] = PERIOD_NS * params.int("weight") as u64 / 256;
        }
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.init_domain(ctx, dom, params);
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let hard = *ctx.hard_affinity(v);
        let p = hard
            .iter()
            .min_by_key(|p| self.load[p.idx()])
            .expect("non-empty");
        self.load[p.idx()] += 1;
        ctx.set_processor(v, p);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if !self.queues[p.idx()].contains(&v) && ctx.running_on(v).is_none() {
            self.queues[p.idx()].push_back(v);
            if ctx.current(p).is_none() {
                ctx.tickle(p);
            }
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match ctx.running_on(v) {
            Some(p) => ctx.tickle(p),
            None => self.queues[ctx.processor(v).idx()].retain(|&x| x != v),
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        if let Some(prev) = ctx.current(p).filter(|&v| ctx.is_runnable(v)) {
            self.queues[p.idx()].push_back(prev);
        }
        match self.queues[p.idx()].pop_front() {
            Some(v) => Decision {
                next: Some(v),
                slice_ns: Some(self.turn_ns[v.idx()]),
                migrated: false,
            },
            None => Decision::IDLE,
        }
    }
}

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "weight",
    unit: "",
    kind: ParamKind::Int { min: 1, max: 65535 },
    default: Default::Int(256),
    scope: ParamScope::Domain,
    doc: "Relative length of a turn.",
}];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new("wrr", "Weighted RR", PARAMS, |_| {
    Box::new(WeightedRr::default())
})
.about(
    "Weighted round-robin: per-PCPU FIFO, turns of 10 ms x weight / 256.",
    "the tutorial",
);
