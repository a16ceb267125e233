//! The event queue: a binary heap keyed by (time, sequence).
//!
//! The sequence number is assigned at insertion, so events at the same
//! instant pop in the order they were scheduled: ties are deterministic.

use crate::ids::{DomId, PcpuId, VcpuId};
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// SCHEDULE_SOFTIRQ on a PCPU (a tickle arriving, or raised locally).
    Softirq { pcpu: PcpuId, gen: u32 },
    /// A PCPU's slice timer (`s_timer`) expires.
    SliceEnd { pcpu: PcpuId, gen: u32 },
    /// A timer armed by the scheduler.
    SchedTimer { id: u32, gen: u32 },
    /// The work item of a running VCPU completes.
    WorkDone { vcpu: VcpuId, gen: u32 },
    /// A timer armed by a domain's workload.
    WorkloadTimer { dom: DomId, token: u32 },
    /// Take a time-series sample.
    Sample,
    /// Warm-up ends: measurement starts.
    WarmupEnd,
    /// A timed administrative action (index into the scenario's actions).
    Action { index: u32 },
    /// The run ends.
    End,
}

#[derive(Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Deterministic priority queue of events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// Schedule `ev` at `t`.
    #[inline]
    pub fn push(&mut self, t: Time, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time: t.0,
            seq: self.seq,
            ev,
        });
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (Time(e.time), e.ev))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time(e.time))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// No events pending?
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Event::Sample);
        q.push(Time(3), Event::End);
        q.push(Time(5), Event::WarmupEnd);
        q.push(Time(5), Event::Action { index: 1 });
        assert_eq!(q.pop(), Some((Time(3), Event::End)));
        assert_eq!(q.pop(), Some((Time(5), Event::Sample)));
        assert_eq!(q.pop(), Some((Time(5), Event::WarmupEnd)));
        assert_eq!(q.pop(), Some((Time(5), Event::Action { index: 1 })));
        assert_eq!(q.pop(), None);
    }
}
