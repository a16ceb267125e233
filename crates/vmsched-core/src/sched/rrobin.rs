//! Round-robin: Xen 2.0.x's demonstration scheduler (`sched=rrobin`).
//!
//! Design. Each PCPU has one FIFO run queue, headed by its idle VCPU's list
//! node, so an empty queue means idle. The running VCPU stays on the queue;
//! at every decision it goes to the tail if it can still run, and the head
//! runs for a fixed slice, `rr_slice` (10 ms). A waking VCPU goes to the
//! **head** of its queue, so it runs next, but it never preempts a busy PCPU:
//! only an idle PCPU is tickled, and otherwise the waker waits for the current
//! slice to end. There are no weights, no caps and no balancing between
//! PCPUs; placement at creation (Xen 2.0's rule) decides which VCPUs share a
//! PCPU.
//!
//! Parameters: `rr_slice` (ns, global, `xm rrobin SLICE`). Deviations: none
//! in the algorithm; see `docs/schedulers/rrobin.md` for the model's limits.
//!
//! Hooks: `init`, `init_domain`, `insert_vcpu` (Xen 2.0 placement), `wake`,
//! `sleep`, `do_schedule`, `pick_cpu`, `adjust_global`.

use super::placement::{CreationRule, PinRule, Placer};
use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use std::collections::VecDeque;

/// Default slice.
pub const RR_SLICE_NS: i64 = 10_000_000;

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "rr_slice",
    unit: "ns",
    // Xen keeps the slice in a signed 32-bit field when arming the timer;
    // below 1 us a PCPU would do nothing but reschedule.
    kind: ParamKind::Int {
        min: 1_000,
        max: i32::MAX as i64,
    },
    default: Default::Int(RR_SLICE_NS),
    scope: ParamScope::Global,
    doc: "Fixed time slice (xm rrobin SLICE).",
}];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "rrobin",
    summary: "Xen 2.0's round-robin: per-PCPU FIFO, fixed 10 ms slices, wakers to the head without preemption.",
    origin: "Xen 2.0.x (removed in 2005)",
    can_cap: false,
    params: PARAMS,
    make: |p| Box::new(RoundRobin::new(p)),
    check_domain: super::accept_domain,
    check_global: super::accept_global,
};

/// The round-robin scheduler's state.
pub struct RoundRobin {
    rr_slice: u64,
    runqs: Vec<VecDeque<VcpuId>>,
    on_runq: Vec<bool>,
    placer: Placer,
    stat_idle_tickles: u64,
}

impl RoundRobin {
    /// A round-robin scheduler with validated global parameters.
    pub fn new(p: &Params) -> RoundRobin {
        RoundRobin {
            rr_slice: p.int("rr_slice") as u64,
            runqs: Vec::new(),
            on_runq: Vec::new(),
            placer: Placer::default(),
            stat_idle_tickles: 0,
        }
    }

    fn remove(&mut self, p: PcpuId, v: VcpuId) {
        let q = &mut self.runqs[p.idx()];
        if let Some(i) = q.iter().position(|&x| x == v) {
            q.remove(i);
        }
        self.on_runq[v.idx()] = false;
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rrobin"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.runqs = vec![VecDeque::new(); ctx.npcpus()];
        self.on_runq = vec![false; ctx.nvcpus()];
        self.placer = Placer::new(ctx.npcpus());
        // Xen starts the scheduler on every PCPU at boot (`schedulers_start`).
        for p in 0..ctx.npcpus() {
            ctx.tickle(PcpuId(p as u32));
        }
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.placer
            .place(ctx, v, CreationRule::Xen20, PinRule::CreateWithin);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.remove(p, v);
        ctx.count_queue_op();
        self.placer.removed(p);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if self.on_runq[v.idx()] {
            return;
        }
        let p = ctx.processor(v);
        self.runqs[p.idx()].push_front(v);
        ctx.count_queue_op();
        self.on_runq[v.idx()] = true;
        if ctx.current(p).is_none() {
            self.stat_idle_tickles += 1;
            ctx.tickle(p);
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.running_on(v) == Some(p) {
            ctx.tickle(p);
        } else {
            self.remove(p, v);
            ctx.count_queue_op();
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        if let Some(prev) = ctx.current(p) {
            self.remove(p, prev);
            ctx.count_queue_op();
            if ctx.is_runnable(prev) {
                self.runqs[p.idx()].push_back(prev);
                ctx.count_queue_op();
                self.on_runq[prev.idx()] = true;
            }
        }
        Decision {
            next: self.runqs[p.idx()].front().copied(),
            slice_ns: Some(self.rr_slice),
            migrated: false,
        }
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        super::placement::stay_or_first_allowed(ctx, v)
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.placer.moved(ctx.processor(v), to);
        ctx.set_processor(v, to);
    }

    fn adjust(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    fn adjust_global(&mut self, _ctx: &mut SchedCtx, params: &Params) {
        self.rr_slice = params.int("rr_slice") as u64;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("idle_tickles", self.stat_idle_tickles)]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for (i, q) in self.runqs.iter().enumerate() {
            let cur = ctx.current(PcpuId(i as u32));
            let _ = writeln!(
                s,
                "pcpu{i}: cur={:?} runq={:?}",
                cur.map(|v| v.0),
                q.iter().map(|v| v.0).collect::<Vec<_>>()
            );
        }
        s
    }
}
