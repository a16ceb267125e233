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
//! Hooks: `init`, `insert_vcpu` (Xen 2.0 placement), `remove_vcpu`, `wake`,
//! `sleep`, `do_schedule`, `migrate`, `adjust_global`; the others keep the
//! trait's defaults (`pick_cpu`: stay if allowed). The registration block
//! at the end says everything else about it. It does not use the trait's
//! default round-robin ([`super::RunQueues`]), which the tutorial's
//! schedulers use: Xen 2.0's differs in placement, wakers to the head and
//! the running VCPU kept at its queue's head (`docs/schedulers/rrobin.md`).

use super::placement::{CreationRule, PinRule, Placer};
use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use crate::ids::{PcpuId, VcpuId};
use crate::params::{ParamSpec, Params};
use std::collections::VecDeque;

/// Default slice.
pub const RR_SLICE_NS: i64 = 10_000_000;

/// The round-robin scheduler's state: one FIFO per PCPU, the running VCPU
/// included.
pub struct RoundRobin {
    rr_slice: u64,
    runqs: Vec<VecDeque<VcpuId>>,
    placer: Placer,
    stat_idle_tickles: u64,
}

impl RoundRobin {
    /// A round-robin scheduler with validated global parameters.
    pub fn new(p: &Params) -> RoundRobin {
        let (runqs, placer) = (Vec::new(), Placer::default());
        RoundRobin { rr_slice: p.int("rr_slice") as u64, runqs, placer, stat_idle_tickles: 0 }
    }

    fn remove(&mut self, p: PcpuId, v: VcpuId) {
        self.runqs[p.idx()].retain(|&x| x != v);
    }
}

impl Scheduler for RoundRobin {
    fn init(&mut self, ctx: &mut SchedCtx) {
        self.runqs = vec![VecDeque::new(); ctx.npcpus()];
        self.placer = Placer::new(ctx.npcpus());
        // Xen starts the scheduler on every PCPU at boot (`schedulers_start`).
        (0..ctx.npcpus()).for_each(|p| ctx.tickle(PcpuId(p as u32)));
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.placer.place(ctx, v, CreationRule::Xen20, PinRule::CreateWithin);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.remove(ctx.processor(v), v);
        ctx.count_queue_op();
        self.placer.removed(ctx.processor(v));
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if !self.runqs[p.idx()].contains(&v) {
            self.runqs[p.idx()].push_front(v);
            ctx.count_queue_op();
            if ctx.current(p).is_none() {
                self.stat_idle_tickles += 1;
                ctx.tickle(p);
            }
        }
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match ctx.running_on(v) {
            Some(p) => ctx.tickle(p),
            None => {
                self.remove(ctx.processor(v), v);
                ctx.count_queue_op();
            }
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Decision {
        if let Some(prev) = ctx.current(p) {
            self.remove(p, prev);
            ctx.count_queue_op();
            if ctx.is_runnable(prev) {
                self.runqs[p.idx()].push_back(prev);
                ctx.count_queue_op();
            }
        }
        let next = self.runqs[p.idx()].front().copied();
        Decision { next, slice_ns: Some(self.rr_slice), migrated: false }
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        self.placer.moved(ctx.processor(v), to);
        ctx.set_processor(v, to);
    }

    fn adjust_global(&mut self, _ctx: &mut SchedCtx, params: &Params) {
        self.rr_slice = params.int("rr_slice") as u64;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("idle_tickles", self.stat_idle_tickles)]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        let line = |(i, q): (usize, &VecDeque<VcpuId>)| {
            let cur = ctx.current(PcpuId(i as u32)).map(|v| v.0);
            let runq: Vec<u32> = q.iter().map(|v| v.0).collect();
            format!("pcpu{i}: cur={cur:?} runq={runq:?}\n")
        };
        self.runqs.iter().enumerate().map(line).collect()
    }
}

// ----- registration ------------------------------------------------------------------

// Xen keeps the slice in a signed 32-bit field when arming the timer;
// below 1 us a PCPU would do nothing but reschedule.
const PARAMS: &[ParamSpec] = &[ParamSpec::int("rr_slice", RR_SLICE_NS, 1_000, i32::MAX as i64)
    .unit("ns")
    .doc("Fixed time slice (xm rrobin SLICE).")];

/// The registry entry: no caps, no shares, no checks beyond the parameter's range.
pub const INFO: SchedulerInfo =
    SchedulerInfo::new("rrobin", "Round-robin", PARAMS, |p, _| Box::new(RoundRobin::new(p)))
        .about(
            "Xen 2.0's round-robin: per-PCPU FIFO, fixed 10 ms slices, wakers to the head without preemption.",
            "Xen 2.0.x (removed in 2005)",
        )
        .with_counters(&[("idle_tickles", "wake-ups that found their PCPU idle and tickled it")]);
