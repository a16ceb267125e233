//! The event queue: a binary heap keyed by (time, class, sequence).
//!
//! The sequence number is assigned at insertion, so events of one class at
//! the same instant pop in the order they were scheduled: ties are
//! deterministic. Classes order what Xen orders within one instant: timers
//! first ([`EventQueue::push`]), then timers that must see the others'
//! effects ([`EventQueue::push_late`], e.g. Credit's accounting after the
//! ticks), then SCHEDULE_SOFTIRQ ([`EventQueue::push_softirq`]), which Xen
//! serves after TIMER_SOFTIRQ.

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
    /// A guest's scheduler tick: a kernel thread with urgent work may now
    /// preempt the ordinary work `vcpu` holds.
    GuestTick { vcpu: VcpuId },
    /// An I/O operation completes outside any CPU (slot in the in-flight table).
    Io { slot: u32 },
    /// A timed administrative action (index into the scenario's actions).
    Action { index: u32 },
    /// The run ends.
    End,
}

#[derive(Debug)]
struct Entry {
    /// time (high 64 bits), class (2 bits: 0 ordinary, 1 late timer,
    /// 2 softirq), sequence number (low 62 bits): one integer comparison
    /// orders events.
    key: u128,
    ev: Event,
}

/// Bits of the key holding the sequence number (4.6 × 10^18 events).
const SEQ_BITS: u32 = 62;

impl Entry {
    #[inline]
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
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
        self.push_with(t, 0, ev);
    }

    /// Schedule `ev` at `t`, after every ordinary event due at `t`.
    #[inline]
    pub fn push_late(&mut self, t: Time, ev: Event) {
        self.push_with(t, 1, ev);
    }

    /// Schedule a softirq at `t`, after every timer due at `t`.
    #[inline]
    pub fn push_softirq(&mut self, t: Time, ev: Event) {
        self.push_with(t, 2, ev);
    }

    #[inline]
    fn push_with(&mut self, t: Time, class: u8, ev: Event) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let key = (u128::from(t.0) << 64) | (u128::from(class) << SEQ_BITS) | u128::from(self.seq);
        self.heap.push(Entry { key, ev });
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time(), e.ev))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time())
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

    #[test]
    fn classes_order_events_at_the_same_instant() {
        let mut q = EventQueue::default();
        q.push_softirq(
            Time(5),
            Event::Softirq {
                pcpu: PcpuId(0),
                gen: 1,
            },
        );
        q.push_late(Time(5), Event::Sample);
        q.push(Time(5), Event::End);
        q.push(Time(4), Event::WarmupEnd);
        q.push_late(Time(4), Event::Action { index: 0 });
        assert_eq!(q.pop(), Some((Time(4), Event::WarmupEnd)));
        assert_eq!(q.pop(), Some((Time(4), Event::Action { index: 0 })));
        assert_eq!(q.pop(), Some((Time(5), Event::End)));
        assert_eq!(q.pop(), Some((Time(5), Event::Sample)));
        assert_eq!(
            q.pop(),
            Some((
                Time(5),
                Event::Softirq {
                    pcpu: PcpuId(0),
                    gen: 1
                }
            ))
        );
    }
}
