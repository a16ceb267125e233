//! The event queue: a binary heap keyed by (time, class, sequence), of
//! 24-byte entries.
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

/// A queued event in 24 bytes: its time, then one word holding the class
/// (2 bits), the sequence number (58 bits) and the event's kind (4 bits),
/// then the event's two 32-bit fields. Comparing (time, word) orders events
/// by time, class and sequence: the kind, below the unique sequence number,
/// never decides.
#[derive(Debug)]
struct Entry {
    time: u64,
    word: u64,
    a: u32,
    b: u32,
}

/// Bits of the word holding the sequence number (2.9 × 10^17 events).
const SEQ_BITS: u32 = 58;
/// Bits below the sequence number holding the event's kind.
const KIND_BITS: u32 = 4;

impl Event {
    /// The event as (kind, a, b).
    #[inline]
    fn encode(self) -> (u64, u32, u32) {
        match self {
            Event::Softirq { pcpu, gen } => (0, pcpu.0, gen),
            Event::SliceEnd { pcpu, gen } => (1, pcpu.0, gen),
            Event::SchedTimer { id, gen } => (2, id, gen),
            Event::WorkDone { vcpu, gen } => (3, vcpu.0, gen),
            Event::WorkloadTimer { dom, token } => (4, dom.0, token),
            Event::Sample => (5, 0, 0),
            Event::WarmupEnd => (6, 0, 0),
            Event::GuestTick { vcpu } => (7, vcpu.0, 0),
            Event::Io { slot } => (8, slot, 0),
            Event::Action { index } => (9, index, 0),
            Event::End => (10, 0, 0),
        }
    }

    /// The event [`Event::encode`] gave (kind, a, b).
    #[inline]
    fn decode(kind: u64, a: u32, b: u32) -> Event {
        match kind {
            0 => Event::Softirq {
                pcpu: PcpuId(a),
                gen: b,
            },
            1 => Event::SliceEnd {
                pcpu: PcpuId(a),
                gen: b,
            },
            2 => Event::SchedTimer { id: a, gen: b },
            3 => Event::WorkDone {
                vcpu: VcpuId(a),
                gen: b,
            },
            4 => Event::WorkloadTimer {
                dom: DomId(a),
                token: b,
            },
            5 => Event::Sample,
            6 => Event::WarmupEnd,
            7 => Event::GuestTick { vcpu: VcpuId(a) },
            8 => Event::Io { slot: a },
            9 => Event::Action { index: a },
            _ => Event::End,
        }
    }
}

impl Entry {
    #[inline]
    fn event(&self) -> Event {
        Event::decode(self.word & ((1 << KIND_BITS) - 1), self.a, self.b)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.word == o.word
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
        (o.time, o.word).cmp(&(self.time, self.word))
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
        let (kind, a, b) = ev.encode();
        let word = (u64::from(class) << (SEQ_BITS + KIND_BITS)) | (self.seq << KIND_BITS) | kind;
        self.heap.push(Entry {
            time: t.0,
            word,
            a,
            b,
        });
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (Time(e.time), e.event()))
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
    fn entries_are_small_and_events_survive_the_trip() {
        assert_eq!(std::mem::size_of::<Entry>(), 24);
        let all = [
            Event::Softirq {
                pcpu: PcpuId(3),
                gen: u32::MAX,
            },
            Event::SliceEnd {
                pcpu: PcpuId(511),
                gen: 7,
            },
            Event::SchedTimer { id: 9, gen: 1 },
            Event::WorkDone {
                vcpu: VcpuId(4095),
                gen: 2,
            },
            Event::WorkloadTimer {
                dom: DomId(2047),
                token: 5,
            },
            Event::Sample,
            Event::WarmupEnd,
            Event::GuestTick { vcpu: VcpuId(1) },
            Event::Io { slot: 12 },
            Event::Action { index: 3 },
            Event::End,
        ];
        let mut q = EventQueue::default();
        for ev in all {
            q.push(Time(1), ev);
        }
        for ev in all {
            assert_eq!(q.pop(), Some((Time(1), ev)));
        }
    }

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
