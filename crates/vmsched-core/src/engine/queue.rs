//! The event queue: a binary heap keyed by (time, class, sequence), of
//! 24-byte entries, from which a cancelled timer is removed.
//!
//! The sequence number is assigned at insertion, so events of one class at
//! the same instant pop in the order they were scheduled: ties are
//! deterministic. Classes order what Xen orders within one instant: timers
//! first ([`EventQueue::push`]), then timers that must see the others'
//! effects ([`EventQueue::push_late`], e.g. Credit's accounting after the
//! ticks), then SCHEDULE_SOFTIRQ ([`EventQueue::push_softirq`]), which Xen
//! serves after TIMER_SOFTIRQ.
//!
//! Four kinds of event are timers with at most one live instance each (a
//! PCPU's softirq and slice timer, a scheduler timer, a VCPU's work
//! completion): arming one again makes the pending instance stale (its
//! generation no longer matches), and so does cancelling it. The heap keeps
//! each such timer's position, so that a timer armed again replaces its stale
//! instance at once, and [`EventQueue::cancel`] removes it, as Xen's own
//! `stop_timer` takes a timer off its heap: a cancelled timer is never popped.
//! Removing an entry does not change the order of the others (keys are
//! unique), so the run's events are exactly those of a queue that kept
//! stale entries and dropped them when popped.
//!
//! One difference is visible: the run's `events` count has always included
//! the stale work completions ([`Event::WorkDone`]) that were popped and
//! dropped. So that the count stays what it was, the queue counts each work
//! completion it removes unpopped that would have been popped while events
//! were counted: after the warm-up's end (whose `events = 0` would have
//! erased it otherwise) and before the run's end ([`EventQueue::ghosts`]).
//! Keys are unique and totally ordered, so "would have been popped between
//! the two" is a comparison of keys. The due times of removed work
//! completions are also kept until a later event is popped
//! ([`EventQueue::passed_ghost`]): a run stopped part-way at `until` has
//! its clock at the last event popped, stale or not, as it always had.
//!
//! A pop leaves the root of the heap empty (a hole) rather than moving the
//! last entry there at once: an event's handler usually queues an event of
//! its own next (a periodic timer arming its next expiry), and that entry
//! then goes straight into the root and sinks, one pass instead of a sink
//! and a rise. The hole is filled before anything that needs a whole heap.
//! An event queued for the current instant (a softirq raised by a slice
//! end) takes the same path and stays in the root after one comparison, so
//! it needs no list of its own.

use crate::ids::{DomId, PcpuId, VcpuId};
use crate::time::Time;

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

/// A timer of which at most one instance is pending (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// A PCPU's SCHEDULE_SOFTIRQ ([`Event::Softirq`]).
    Softirq(PcpuId),
    /// A PCPU's slice timer ([`Event::SliceEnd`]).
    Slice(PcpuId),
    /// A scheduler timer, by id ([`Event::SchedTimer`]).
    Sched(u32),
    /// A VCPU's work completion ([`Event::WorkDone`]).
    Work(VcpuId),
}

impl Timer {
    /// Its kind (as [`Event::encode`] numbers them) and index.
    #[inline]
    fn slot(self) -> (usize, u32) {
        match self {
            Timer::Softirq(p) => (0, p.0),
            Timer::Slice(p) => (1, p.0),
            Timer::Sched(id) => (2, id),
            Timer::Work(v) => (WORK_DONE, v.0),
        }
    }
}

/// Event kinds below this are [`Timer`]s.
const TIMER_KINDS: usize = 4;
/// The kind of [`Event::WorkDone`] (counted when removed unpopped).
const WORK_DONE: usize = 3;
/// The kinds of [`Event::WarmupEnd`] and [`Event::End`], whose keys bound
/// the counted removals.
const WARMUP_END: u64 = 6;
const END: u64 = 10;

/// A queued event in 24 bytes: its time, then one word holding the class
/// (2 bits), the sequence number (58 bits) and the event's kind (4 bits),
/// then the event's two 32-bit fields. Comparing (time, word) orders events
/// by time, class and sequence: the kind, below the unique sequence number,
/// never decides.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    word: u64,
    a: u32,
    b: u32,
}

/// Where timer (`kind`, `index`) keeps its position: one flat table, the
/// kinds of one index side by side.
#[inline]
fn slot_index(kind: usize, index: u32) -> usize {
    ((index as usize) << 2) | kind
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
    fn kind(&self) -> u64 {
        self.word & ((1 << KIND_BITS) - 1)
    }

    #[inline]
    fn event(&self) -> Event {
        Event::decode(self.kind(), self.a, self.b)
    }

    /// Its key as one number (due time above class and sequence): one
    /// comparison without branches orders two entries.
    #[inline]
    fn rank(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.word)
    }

    /// Is it due before `o`?
    #[inline]
    fn before(&self, o: &Entry) -> bool {
        self.rank() < o.rank()
    }

    /// Its index in [`EventQueue::at`] if it is a [`Timer`].
    #[inline]
    fn timer_slot(&self) -> Option<usize> {
        let kind = self.kind() as usize;
        (kind < TIMER_KINDS).then(|| slot_index(kind, self.a))
    }

    /// Its key (due time, then class and sequence).
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.word)
    }
}

/// Deterministic priority queue of events.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// A binary min-heap: `heap[i]` is due no later than its children
    /// `heap[2i + 1]` and `heap[2i + 2]`. With `hole`, `heap[0]` holds
    /// nothing (its two subtrees are heaps).
    heap: Vec<Entry>,
    /// The root was popped and not refilled yet.
    hole: bool,
    seq: u64,
    /// Per timer, at [`slot_index`] of its kind and index: 1 + the heap
    /// position of its pending instance, 0 if none.
    at: Vec<u32>,
    /// Keys of the warm-up's end and of the run's end, once queued.
    warmup_end: Option<(u64, u64)>,
    run_end: Option<(u64, u64)>,
    /// Work completions removed unpopped that would have been counted.
    ghosts: u64,
    /// Keys of those removed before the run's end was queued (decided when it is).
    ghosts_pending: Vec<(u64, u64)>,
    /// Due times of removed work completions not yet passed by a popped event.
    ghost_times: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
    /// Every operation, in order, once recording is on (feature `queue-trace` only).
    #[cfg(feature = "queue-trace")]
    trace: Option<Vec<QueueOp>>,
}

/// One operation on the queue, as recorded with feature `queue-trace`
/// (replayed by the `queue_bound` example).
#[cfg(feature = "queue-trace")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOp {
    /// `push` (class 0), `push_late` (1) or `push_softirq` (2) of `ev` at `t`.
    Push { t: Time, class: u8, ev: Event },
    /// `cancel(timer)`.
    Cancel(Timer),
    /// A pop that returned an event.
    Pop,
}

impl EventQueue {
    /// Record every operation from now on (feature `queue-trace`).
    #[cfg(feature = "queue-trace")]
    pub fn record(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    /// The operations recorded since the last call (feature `queue-trace`).
    #[cfg(feature = "queue-trace")]
    pub fn take_trace(&mut self) -> Vec<QueueOp> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    #[cfg(feature = "queue-trace")]
    #[inline]
    fn log(&mut self, op: QueueOp) {
        if let Some(t) = &mut self.trace {
            t.push(op);
        }
    }

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
        #[cfg(feature = "queue-trace")]
        self.log(QueueOp::Push { t, class, ev });
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let (kind, a, b) = ev.encode();
        if (kind as usize) < TIMER_KINDS {
            let s = slot_index(kind as usize, a);
            if s >= self.at.len() {
                self.at.resize(s + 1, 0);
            }
            if self.at[s] != 0 {
                // Armed again: the pending instance is stale.
                self.remove_slot(kind as usize, a);
            }
        }
        let word = (u64::from(class) << (SEQ_BITS + KIND_BITS)) | (self.seq << KIND_BITS) | kind;
        if kind == WARMUP_END {
            self.warmup_end = Some((t.0, word));
        } else if kind == END {
            self.run_end = Some((t.0, word));
            for g in std::mem::take(&mut self.ghosts_pending) {
                self.count_ghost(g);
            }
        }
        let e = Entry {
            time: t.0,
            word,
            a,
            b,
        };
        if self.hole {
            // Into the popped root, then down to its place.
            self.hole = false;
            self.sift_down(0, e);
        } else {
            let i = self.heap.len();
            self.heap.push(e);
            self.sift_up(i);
        }
    }

    /// Fill the popped root, if empty, with the last entry (moved down to its place).
    #[inline]
    fn fill(&mut self) {
        if self.hole {
            self.hole = false;
            let last = self.heap.pop().expect("the hole's slot");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    /// Take `timer`'s pending instance, if any, off the queue.
    #[inline]
    pub fn cancel(&mut self, timer: Timer) {
        #[cfg(feature = "queue-trace")]
        self.log(QueueOp::Cancel(timer));
        let (kind, index) = timer.slot();
        self.remove_slot(kind, index);
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_due(Time(u64::MAX))
    }

    /// Remove and return the earliest event if it is due no later than
    /// `until` (`pop` after [`EventQueue::peek_time`], in one look).
    #[inline(always)]
    pub fn pop_due(&mut self, until: Time) -> Option<(Time, Event)> {
        self.fill();
        let top = *self.heap.first()?;
        if top.time > until.0 {
            return None;
        }
        if let Some(s) = top.timer_slot() {
            self.at[s] = 0;
        }
        self.hole = true;
        #[cfg(feature = "queue-trace")]
        self.log(QueueOp::Pop);
        while matches!(self.ghost_times.peek(), Some(&std::cmp::Reverse(g)) if g <= top.time) {
            self.ghost_times.pop();
        }
        Some((Time(top.time), top.event()))
    }

    /// The latest due time, no later than `until`, of the work completions
    /// removed unpopped since the last event popped: where the clock of a
    /// queue that kept them would stand after popping everything due by
    /// `until`, if that is later than the last event popped.
    pub fn passed_ghost(&mut self, until: Time) -> Option<Time> {
        let mut last = None;
        while let Some(&std::cmp::Reverse(g)) = self.ghost_times.peek() {
            if g > until.0 {
                break;
            }
            self.ghost_times.pop();
            last = Some(Time(g));
        }
        last
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if !self.hole {
            return self.heap.first().map(|e| Time(e.time));
        }
        // The earlier of the hole's two children (each a heap's top).
        let first = match (self.heap.get(1), self.heap.get(2)) {
            (Some(l), Some(r)) if r.before(l) => r,
            (Some(l), _) => l,
            (None, _) => return None,
        };
        Some(Time(first.time))
    }

    /// Work completions taken off unpopped that a queue keeping them would
    /// have popped (and the run counted) after the warm-up's end and before
    /// the run's end: added to the run's `events`, they give the count a
    /// queue that kept stale entries gave. Counted when removed, so while
    /// the run is under way this may include some not yet due.
    pub fn ghosts(&self) -> u64 {
        self.ghosts
    }

    /// Count a removed work completion of key `k` if it would have been
    /// counted (the run's end is queued).
    fn count_ghost(&mut self, k: (u64, u64)) {
        let end = self.run_end.expect("the run's end is queued");
        let after_warmup = match self.warmup_end {
            Some(w) => w < k,
            None => true,
        };
        if k < end && after_warmup {
            self.ghosts += 1;
        }
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.hole)
    }

    /// No events pending?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Remove the pending instance of timer (`kind`, `index`), if any.
    #[inline]
    fn remove_slot(&mut self, kind: usize, index: u32) {
        let s = slot_index(kind, index);
        if self.at.get(s).is_some_and(|&pos| pos != 0) {
            // Positions may move as the root is filled: read it after.
            self.fill();
            let pos = self.at[s] as usize - 1;
            let k = self.heap[pos].key();
            self.remove_at(pos);
            if kind == WORK_DONE {
                self.ghost_times.push(std::cmp::Reverse(k.0));
                if self.run_end.is_some() {
                    self.count_ghost(k);
                } else {
                    self.ghosts_pending.push(k);
                }
            }
        }
    }

    /// Remove `heap[i]`: the last entry takes its place and moves up or down.
    #[inline]
    fn remove_at(&mut self, i: usize) {
        if let Some(s) = self.heap[i].timer_slot() {
            self.at[s] = 0;
        }
        let last = self.heap.pop().expect("a queued entry");
        if i < self.heap.len() {
            if i > 0 && last.before(&self.heap[(i - 1) / 2]) {
                self.heap[i] = last;
                self.sift_up(i);
            } else {
                self.sift_down(i, last);
            }
        }
    }

    /// Move `heap[i]` up to its place (parents move down into the hole).
    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let (heap, at) = (&mut self.heap[..], &mut self.at);
        let e = heap[i];
        let rank = e.rank();
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = heap[parent];
            if rank >= p.rank() {
                break;
            }
            heap[i] = p;
            note(at, &p, i);
            i = parent;
        }
        heap[i] = e;
        note(at, &e, i);
    }

    /// Put `e` into `heap[i]`, whose entry has gone, and move it down to
    /// its place (the earlier child moves up).
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let (heap, at) = (&mut self.heap[..], &mut self.at);
        let n = heap.len();
        let rank = e.rank();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            // The earlier child, chosen without a branch: with variable
            // costs which child is earlier is a coin toss the branch
            // predictor loses half the time.
            let right = left + 1;
            let at_child = left + (right < n && heap[right].rank() < heap[left].rank()) as usize;
            let child = heap[at_child];
            // Keys are unique: not earlier means later.
            if child.rank() >= rank {
                break;
            }
            heap[i] = child;
            note(at, &child, i);
            i = at_child;
        }
        heap[i] = e;
        note(at, &e, i);
    }
}

/// Record that `e`, if it is a timer, is now at heap position `i` (its slot
/// exists: [`EventQueue::push_with`] made it).
#[inline]
fn note(at: &mut [u32], e: &Entry, i: usize) {
    if let Some(s) = e.timer_slot() {
        at[s] = i as u32 + 1;
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

    /// Against a plain model (every entry kept in a list; a stale timer is
    /// dropped when it comes due), over a long pseudo-random sequence of
    /// pushes, re-arms, cancels and pops: the same events in the same order.
    #[test]
    fn removing_cancelled_timers_keeps_every_other_event_in_order() {
        let mut q = EventQueue::default();
        // (time, class, seq, event) of every entry ever pushed, and each
        // timer's live generation.
        let mut model: Vec<(u64, u8, u64, Event)> = Vec::new();
        let mut live = std::collections::HashMap::new();
        let (mut seq, mut now, mut gen) = (0u64, 0u64, 0u32);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rand = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let timer_of = |ev: Event| match ev {
            Event::Softirq { pcpu, .. } => Some(Timer::Softirq(pcpu)),
            Event::SliceEnd { pcpu, .. } => Some(Timer::Slice(pcpu)),
            Event::SchedTimer { id, .. } => Some(Timer::Sched(id)),
            Event::WorkDone { vcpu, .. } => Some(Timer::Work(vcpu)),
            _ => None,
        };
        for _ in 0..20_000 {
            match rand(8) {
                0..=3 => {
                    gen += 1;
                    let i = rand(5) as u32;
                    let ev = match rand(6) {
                        0 => Event::Softirq {
                            pcpu: PcpuId(i),
                            gen,
                        },
                        1 => Event::SliceEnd {
                            pcpu: PcpuId(i),
                            gen,
                        },
                        2 => Event::SchedTimer { id: i, gen },
                        3 => Event::WorkDone {
                            vcpu: VcpuId(i),
                            gen,
                        },
                        4 => Event::Io { slot: gen },
                        _ => Event::WorkloadTimer {
                            dom: DomId(i),
                            token: gen,
                        },
                    };
                    let (t, class) = (now + rand(50), rand(3) as u8);
                    seq += 1;
                    match class {
                        0 => q.push(Time(t), ev),
                        1 => q.push_late(Time(t), ev),
                        _ => q.push_softirq(Time(t), ev),
                    }
                    model.push((t, class, seq, ev));
                    if let Some(tm) = timer_of(ev) {
                        live.insert(tm, gen);
                    }
                }
                4 => {
                    let i = rand(5) as u32;
                    let tm = match rand(4) {
                        0 => Timer::Softirq(PcpuId(i)),
                        1 => Timer::Slice(PcpuId(i)),
                        2 => Timer::Work(VcpuId(i)),
                        _ => Timer::Sched(i),
                    };
                    q.cancel(tm);
                    live.remove(&tm);
                }
                _ => {
                    // The model's next live event (stale timers dropped).
                    let want = loop {
                        let Some(k) = (0..model.len()).min_by_key(|&k| {
                            let (t, c, s, _) = model[k];
                            (t, c, s)
                        }) else {
                            break None;
                        };
                        let (t, _, _, ev) = model.remove(k);
                        let stale = timer_of(ev).is_some_and(|tm| {
                            let g = match ev {
                                Event::Softirq { gen, .. }
                                | Event::SliceEnd { gen, .. }
                                | Event::SchedTimer { gen, .. }
                                | Event::WorkDone { gen, .. } => gen,
                                _ => unreachable!(),
                            };
                            live.get(&tm) != Some(&g)
                        });
                        if !stale {
                            if let Some(tm) = timer_of(ev) {
                                live.remove(&tm);
                            }
                            break Some((Time(t), ev));
                        }
                    };
                    let len = q.len();
                    let peeked = q.peek_time();
                    let got = q.pop();
                    assert_eq!(got, want);
                    assert_eq!(peeked, got.map(|(t, _)| t));
                    assert_eq!(q.len(), len - usize::from(got.is_some()));
                    if let Some((t, _)) = got {
                        now = t.0;
                    }
                }
            }
        }
        assert!(q.len() <= model.len());
    }

    /// A work completion taken off unpopped counts as an event exactly when
    /// a queue keeping it would have popped it after the warm-up's end and
    /// before the run's end; its due time still moves a clock stopped by it.
    #[test]
    fn removed_work_completions_count_between_warmup_and_end() {
        let work = |v: u32, gen: u32| Event::WorkDone {
            vcpu: VcpuId(v),
            gen,
        };
        let mut q = EventQueue::default();
        // Replaced before the run's end is queued: decided when it is.
        q.push(Time(50), work(0, 1));
        q.push(Time(60), work(0, 2)); // the first one goes (due 50: counted)
        q.push(Time(10), Event::WarmupEnd);
        q.push(Time(100), Event::End);
        assert_eq!(q.ghosts(), 1);
        q.push(Time(5), work(1, 1));
        q.cancel(Timer::Work(VcpuId(1))); // due in the warm-up: not counted
        q.push(Time(100), work(2, 1));
        q.cancel(Timer::Work(VcpuId(2))); // due with the end, after it: not counted
        q.push(Time(70), work(3, 1));
        q.cancel(Timer::Work(VcpuId(3))); // counted
        q.cancel(Timer::Work(VcpuId(3))); // nothing pending: nothing counted
        assert_eq!(q.ghosts(), 2);
        assert_eq!(q.pop(), Some((Time(10), Event::WarmupEnd)));
        // The clock of a queue that kept them: the removed due at 50 and 70.
        assert_eq!(q.passed_ghost(Time(55)), Some(Time(50)));
        assert_eq!(q.passed_ghost(Time(55)), None);
        assert_eq!(q.pop(), Some((Time(60), work(0, 2))));
        assert_eq!(q.passed_ghost(Time(80)), Some(Time(70)));
        assert_eq!(q.pop(), Some((Time(100), Event::End)));
        assert_eq!(q.pop(), None);
    }

    /// `pop_due` pops exactly what `peek_time` then `pop` would: the
    /// earliest event if it is due by the bound, else nothing (and the
    /// queue is left as it was, the popped root's hole filled or not).
    #[test]
    fn pop_due_stops_at_its_bound() {
        let mut q = EventQueue::default();
        assert_eq!(q.pop_due(Time(u64::MAX)), None);
        q.push(Time(20), Event::Sample);
        q.push(Time(10), Event::Io { slot: 1 });
        q.push(Time(10), Event::Io { slot: 2 });
        assert_eq!(q.pop_due(Time(9)), None);
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop_due(Time(10)), Some((Time(10), Event::Io { slot: 1 })));
        // The root is a hole now: the bound is checked against the refilled top.
        assert_eq!(q.pop_due(Time(10)), Some((Time(10), Event::Io { slot: 2 })));
        assert_eq!(q.pop_due(Time(19)), None);
        assert_eq!(q.peek_time(), Some(Time(20)));
        q.push(Time(15), Event::End);
        assert_eq!(q.pop_due(Time(20)), Some((Time(15), Event::End)));
        assert_eq!(q.pop_due(Time(20)), Some((Time(20), Event::Sample)));
        assert_eq!(q.pop_due(Time(u64::MAX)), None);
        assert!(q.is_empty());
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
