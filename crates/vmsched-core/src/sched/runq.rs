//! Per-PCPU FIFO run queues: the state a simple scheduler keeps, and what
//! the [`Scheduler`](super::Scheduler) trait's default hooks work on.
//!
//! A scheduler that hands its [`RunQueues`] to the trait
//! ([`Scheduler::run_queues`](super::Scheduler::run_queues)) writes only what
//! makes it different; the defaults do the rest, as a plain round-robin:
//!
//! * placement (`insert_vcpu`): a new VCPU goes to the PCPU of its hard
//!   affinity with the fewest VCPUs placed on it, the lowest-numbered on
//!   ties; `remove_vcpu` and `migrate` keep those counts;
//! * `wake`: a VCPU that is neither queued nor running joins the tail of
//!   its PCPU's queue, and that PCPU is tickled if it is idle (a busy PCPU
//!   is never preempted: the waker waits for the slice to end);
//! * `sleep`: a running VCPU's PCPU is tickled (it leaves at the next
//!   decision), a queued one is dequeued;
//! * `do_schedule`: the previous VCPU, if it can still run, goes to the tail;
//!   the head runs for [`Scheduler::slice_ns`](super::Scheduler::slice_ns).
//!
//! The running VCPU is not in any queue. Every insertion into a queue and
//! every removal from one is counted with
//! [`SchedCtx::count_queue_op`](super::SchedCtx::count_queue_op), as every
//! built-in scheduler counts its own (the profile's `sched_queue_op_ns`).

use super::{Decision, SchedCtx};
use crate::ids::{PcpuId, VcpuId};
use std::collections::VecDeque;

/// One FIFO of runnable VCPUs per PCPU, and how many VCPUs are placed on
/// each PCPU. Sized on first use: `RunQueues::default()` is ready.
#[derive(Clone, Debug, Default)]
pub struct RunQueues {
    queues: Vec<VecDeque<VcpuId>>,
    placed: Vec<u32>,
}

static EMPTY: VecDeque<VcpuId> = VecDeque::new();

impl RunQueues {
    fn grow(&mut self, p: PcpuId) {
        if self.queues.len() <= p.idx() {
            self.queues.resize(p.idx() + 1, VecDeque::new());
            self.placed.resize(p.idx() + 1, 0);
        }
    }

    /// `p`'s queue, head first.
    pub fn queue(&self, p: PcpuId) -> &VecDeque<VcpuId> {
        self.queues.get(p.idx()).unwrap_or(&EMPTY)
    }

    /// Is `v` in `p`'s queue?
    pub fn contains(&self, p: PcpuId, v: VcpuId) -> bool {
        self.queue(p).contains(&v)
    }

    /// How many VCPUs are placed on `p`.
    pub fn placed(&self, p: PcpuId) -> u32 {
        self.placed.get(p.idx()).copied().unwrap_or(0)
    }

    /// Queue `v` at the tail of `p`'s queue.
    pub fn push_back(&mut self, ctx: &SchedCtx, p: PcpuId, v: VcpuId) {
        self.grow(p);
        self.queues[p.idx()].push_back(v);
        ctx.count_queue_op();
    }

    /// Queue `v` at the head of `p`'s queue (it runs next).
    pub fn push_front(&mut self, ctx: &SchedCtx, p: PcpuId, v: VcpuId) {
        self.grow(p);
        self.queues[p.idx()].push_front(v);
        ctx.count_queue_op();
    }

    /// Take the head of `p`'s queue.
    pub fn pop_front(&mut self, ctx: &SchedCtx, p: PcpuId) -> Option<VcpuId> {
        let v = self.queues.get_mut(p.idx())?.pop_front()?;
        ctx.count_queue_op();
        Some(v)
    }

    /// Take `v` out of `p`'s queue; whether it was there.
    pub fn remove(&mut self, ctx: &SchedCtx, p: PcpuId, v: VcpuId) -> bool {
        let Some(q) = self.queues.get_mut(p.idx()) else {
            return false;
        };
        let Some(i) = q.iter().position(|&x| x == v) else {
            return false;
        };
        q.remove(i);
        ctx.count_queue_op();
        true
    }

    /// Place a new VCPU: on the PCPU of its hard affinity with the fewest
    /// VCPUs placed, the lowest-numbered on ties.
    pub fn place(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx
            .hard_affinity(v)
            .iter()
            .min_by_key(|&p| self.placed(p))
            .expect("a hard affinity is never empty");
        self.grow(p);
        self.placed[p.idx()] += 1;
        ctx.set_processor(v, p);
    }

    /// `v` leaves for good: out of its queue, off its PCPU's count.
    pub fn forget(&mut self, ctx: &SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        self.remove(ctx, p, v);
        self.grow(p);
        self.placed[p.idx()] = self.placed[p.idx()].saturating_sub(1);
    }

    /// `v` moves to `to` (a migration: it is in no queue).
    pub fn moved(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        let from = ctx.processor(v);
        self.grow(from.max(to));
        self.placed[from.idx()] = self.placed[from.idx()].saturating_sub(1);
        self.placed[to.idx()] += 1;
        ctx.set_processor(v, to);
    }

    /// The default `wake`: to the tail of its PCPU's queue unless it is
    /// queued or running; tickle that PCPU if it is idle.
    pub fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        let p = ctx.processor(v);
        if ctx.running_on(v).is_some() || self.contains(p, v) {
            return;
        }
        self.push_back(ctx, p, v);
        if ctx.current(p).is_none() {
            ctx.tickle(p);
        }
    }

    /// The default `sleep`: a running VCPU's PCPU decides again; a queued
    /// one leaves its queue.
    pub fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match ctx.running_on(v) {
            Some(p) => ctx.tickle(p),
            None => {
                self.remove(ctx, ctx.processor(v), v);
            }
        }
    }

    /// The default decision's choice: the previous VCPU, if it can still
    /// run, to the tail of `p`'s queue; then the head, if any.
    pub fn next(&mut self, ctx: &mut SchedCtx, p: PcpuId) -> Option<VcpuId> {
        if let Some(prev) = ctx.current(p).filter(|&v| ctx.is_runnable(v)) {
            self.push_back(ctx, p, prev);
        }
        self.pop_front(ctx, p)
    }

    /// A decision to run `next` for `slice_ns`, or idle with no timer.
    pub fn decision(next: Option<VcpuId>, slice_ns: u64) -> Decision {
        match next {
            Some(v) => Decision {
                next: Some(v),
                slice_ns: Some(slice_ns),
                migrated: false,
            },
            None => Decision::IDLE,
        }
    }
}
