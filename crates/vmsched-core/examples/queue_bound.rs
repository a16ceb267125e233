//! The event queue's share of a run, and the bound a priority queue sets on
//! the engine: `cargo run --release --features queue-trace --example
//! queue_bound [-- CASE [SECONDS]]` (default `512pcpu-2048dom-mixed`, its full
//! 20 s; CASE is a standard case's name).
//!
//! Runs the case once recording every operation on its event queue (pushes
//! by class, cancels, pops), then prints:
//! - events per simulated second and the operation mix per popped event
//!   (pushes, re-arms of a pending timer, cancel calls and those that
//!   removed a pending timer), and the pops by kind;
//! - the queue's size over the run (per operation: mean, median, 90th
//!   percentile, maximum), how far ahead pushes are due, and how many share
//!   one instant;
//! - the same operations replayed, in CPU time per popped event, with
//!   nothing else done, through (a) the engine's own queue (`EventQueue`);
//!   (b) the standard library's binary heap of the same 128-bit keys, a
//!   cancelled timer left in place and skipped when it comes up; (d) the
//!   engine's heap without positions, cancelled timers skipped; (e) a
//!   timing wheel, cancelled timers skipped; (0) reading the log alone
//!   (included in the four); and (c) the bare loop of `vmsched bench`
//!   (`bench::bare_heap_loop`: one pop and one push per step, nothing
//!   cancelled) at the mean size. (d) and (e) are checked to pop what (a)
//!   pops;
//! - what each allows: events/s, and × real time at this case's events per
//!   simulated second.
//!
//! CPU time is the thread's own (`/proc/thread-self/schedstat`), so the
//! figures hold on a shared machine; each replay is repeated and the fastest
//! taken. docs/testing.md ("The bound at 512 PCPUs") has the figures.
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vmsched_core::engine::{Event, EventQueue, QueueOp, Timer};
use vmsched_core::{bench, Simulation, Time};

/// This thread's CPU time in seconds.
fn cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    let ns: u64 = s
        .split_whitespace()
        .next()
        .and_then(|x| x.parse().ok())
        .expect("a number");
    ns as f64 * 1e-9
}

/// The best of `n` CPU times of `f`.
fn best_of(n: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..n {
        let c0 = cpu_s();
        let sum = f();
        best = best.min(cpu_s() - c0);
        assert_ne!(sum, u64::MAX, "keep the work observable");
    }
    best
}

fn timer_of(ev: Event) -> Option<Timer> {
    match ev {
        Event::Softirq { pcpu, .. } => Some(Timer::Softirq(pcpu)),
        Event::SliceEnd { pcpu, .. } => Some(Timer::Slice(pcpu)),
        Event::SchedTimer { id, .. } => Some(Timer::Sched(id)),
        Event::WorkDone { vcpu, .. } => Some(Timer::Work(vcpu)),
        _ => None,
    }
}

fn timer_slot(t: Timer) -> usize {
    let (kind, index) = match t {
        Timer::Softirq(p) => (0, p.0),
        Timer::Slice(p) => (1, p.0),
        Timer::Sched(id) => (2, id),
        Timer::Work(v) => (3, v.0),
    };
    ((index as usize) << 2) | kind
}

/// (a) The engine's own queue, alone.
fn replay_engine_queue(ops: &[QueueOp]) -> u64 {
    let mut q = EventQueue::default();
    let mut sum = 0u64;
    for op in ops {
        match *op {
            QueueOp::Push { t, class: 0, ev } => q.push(t, ev),
            QueueOp::Push { t, class: 1, ev } => q.push_late(t, ev),
            QueueOp::Push { t, ev, .. } => q.push_softirq(t, ev),
            QueueOp::Cancel(timer) => q.cancel(timer),
            QueueOp::Pop => {
                let (t, _) = q.pop().expect("the recorded pop");
                sum = sum.wrapping_add(t.0);
            }
        }
    }
    sum
}

/// (b) The standard library's heap for the mix: 128-bit keys (time, class,
/// sequence) as the engine's, a stale timer skipped when popped.
fn replay_lazy_heap(ops: &[QueueOp], slots: usize) -> u64 {
    let mut heap: BinaryHeap<Reverse<(u128, u32, u32)>> = BinaryHeap::with_capacity(1 << 16);
    let mut gen = vec![0u32; slots];
    let mut seq = 0u64;
    let mut sum = 0u64;
    for op in ops {
        match *op {
            QueueOp::Push { t, class, ev } => {
                seq += 1;
                let rank = (u128::from(t.0) << 64) | (u128::from(class) << 62) | u128::from(seq);
                let (s, g) = match timer_of(ev) {
                    Some(tm) => {
                        let s = timer_slot(tm);
                        gen[s] += 1;
                        (s as u32, gen[s])
                    }
                    None => (u32::MAX, 0),
                };
                heap.push(Reverse((rank, s, g)));
            }
            QueueOp::Cancel(timer) => gen[timer_slot(timer)] += 1,
            QueueOp::Pop => loop {
                let Reverse((rank, s, g)) = heap.pop().expect("the recorded pop");
                if s == u32::MAX || gen[s as usize] == g {
                    sum = sum.wrapping_add((rank >> 64) as u64);
                    break;
                }
            },
        }
    }
    sum
}

/// (d) A candidate for the engine: its own heap (hole at the root,
/// branchless child choice, 24-byte entries) without positions: a
/// cancelled or re-armed timer stays in the heap and is skipped when it
/// comes up (the timer's table holds the sequence number of its live
/// instance).
#[derive(Clone, Copy)]
struct E {
    time: u64,
    word: u64,
    a: u32,
}
impl E {
    #[inline]
    fn rank(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.word)
    }
}
#[derive(Default)]
struct Lazy {
    heap: Vec<E>,
    hole: bool,
    seq: u64,
    live: Vec<u64>,
}
impl Lazy {
    #[inline]
    fn push(&mut self, t: u64, class: u64, slot: Option<usize>) {
        self.seq += 1;
        let word = (class << 62) | (self.seq << 4) | u64::from(slot.is_some());
        let a = if let Some(s) = slot {
            if s >= self.live.len() {
                self.live.resize(s + 1, 0);
            }
            self.live[s] = self.seq;
            s as u32
        } else {
            0
        };
        let e = E { time: t, word, a };
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
        } else {
            let mut i = self.heap.len();
            self.heap.push(e);
            let r = e.rank();
            while i > 0 {
                let p = (i - 1) / 2;
                if r >= self.heap[p].rank() {
                    break;
                }
                self.heap[i] = self.heap[p];
                i = p;
            }
            self.heap[i] = e;
        }
    }
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: E) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        let r = e.rank();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = l + (l + 1 < n && heap[l + 1].rank() < heap[l].rank()) as usize;
            if heap[c].rank() >= r {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = e;
    }
    #[inline]
    fn cancel(&mut self, s: usize) {
        if let Some(x) = self.live.get_mut(s) {
            *x = 0;
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<u64> {
        loop {
            if self.hole {
                self.hole = false;
                let last = self.heap.pop()?;
                if !self.heap.is_empty() {
                    self.sift_down(0, last);
                }
            }
            let top = *self.heap.first()?;
            self.hole = true;
            if top.word & 1 == 1 {
                let s = top.a as usize;
                if self.live[s] != (top.word << 2) >> 6 {
                    continue;
                }
                self.live[s] = 0;
            }
            return Some(top.time);
        }
    }
}

/// A prototype queue the log is replayed through: (d) and (e).
trait Replayable {
    fn push(&mut self, t: u64, class: u64, slot: Option<usize>);
    fn cancel(&mut self, s: usize);
    fn pop(&mut self) -> Option<u64>;
}

impl Replayable for Lazy {
    fn push(&mut self, t: u64, class: u64, slot: Option<usize>) {
        Lazy::push(self, t, class, slot)
    }
    fn cancel(&mut self, s: usize) {
        Lazy::cancel(self, s)
    }
    fn pop(&mut self) -> Option<u64> {
        Lazy::pop(self)
    }
}

impl Replayable for Wheel {
    fn push(&mut self, t: u64, class: u64, slot: Option<usize>) {
        Wheel::push(self, t, class, slot)
    }
    fn cancel(&mut self, s: usize) {
        Wheel::cancel(self, s)
    }
    fn pop(&mut self) -> Option<u64> {
        Wheel::pop(self)
    }
}

/// The log through the prototype `q`: the sum of the popped times.
fn replay_through<Q: Replayable>(mut q: Q, ops: &[QueueOp]) -> u64 {
    let mut sum = 0u64;
    for op in ops {
        match *op {
            QueueOp::Push { t, class, ev } => {
                q.push(t.0, u64::from(class), timer_of(ev).map(timer_slot));
            }
            QueueOp::Cancel(timer) => q.cancel(timer_slot(timer)),
            QueueOp::Pop => {
                let t = q.pop().expect("the recorded pop");
                sum = sum.wrapping_add(t);
            }
        }
    }
    sum
}

fn replay_lazy_engine_heap(ops: &[QueueOp]) -> u64 {
    replay_through(Lazy::default(), ops)
}

/// (e) A timing wheel: buckets of 2^SHIFT ns, WHEEL of them ahead of the
/// last popped time, each a vector sorted by key (most pushes append); a
/// bitmap of the buckets in use finds the next; an entry due beyond the
/// wheel goes to a binary heap, whose top competes with the wheel's at each
/// pop. Cancelled timers are skipped when popped, as in (d).
const SHIFT: u32 = 14;
const WHEEL: usize = 1 << 14;
struct Wheel {
    buckets: Vec<(usize, Vec<E>)>,
    used: Vec<u64>,
    far: BinaryHeap<Reverse<(u128, u32, u32)>>,
    now_bucket: u64,
    seq: u64,
    live: Vec<u64>,
}
impl Wheel {
    fn new() -> Wheel {
        Wheel {
            buckets: (0..WHEEL).map(|_| (0, Vec::new())).collect(),
            used: vec![0; WHEEL / 64],
            far: BinaryHeap::new(),
            now_bucket: 0,
            seq: 0,
            live: Vec::new(),
        }
    }
    #[inline]
    fn push(&mut self, t: u64, class: u64, slot: Option<usize>) {
        self.seq += 1;
        let word = (class << 62) | (self.seq << 4) | u64::from(slot.is_some());
        let a = if let Some(s) = slot {
            if s >= self.live.len() {
                self.live.resize(s + 1, 0);
            }
            self.live[s] = self.seq;
            s as u32
        } else {
            0
        };
        let e = E { time: t, word, a };
        let tb = t >> SHIFT;
        debug_assert!(tb >= self.now_bucket);
        if tb - self.now_bucket < WHEEL as u64 {
            let i = tb as usize & (WHEEL - 1);
            let (head, v) = &mut self.buckets[i];
            if v.len() == *head {
                v.clear();
                *head = 0;
                self.used[i / 64] |= 1 << (i % 64);
                v.push(e);
            } else if v.last().expect("in use").rank() < e.rank() {
                v.push(e);
            } else {
                let r = e.rank();
                let p = *head + v[*head..].partition_point(|x| x.rank() < r);
                v.insert(p, e);
            }
        } else {
            self.far.push(Reverse((e.rank(), a, 0)));
        }
    }
    #[inline]
    fn cancel(&mut self, s: usize) {
        if let Some(x) = self.live.get_mut(s) {
            *x = 0;
        }
    }
    /// The bucket in use nearest ahead of the last popped time's.
    #[inline]
    fn next_used(&self) -> Option<usize> {
        let start = self.now_bucket as usize & (WHEEL - 1);
        let (w0, b0) = (start / 64, start % 64);
        let m = self.used[w0] & (!0u64 << b0);
        if m != 0 {
            return Some(w0 * 64 + m.trailing_zeros() as usize);
        }
        let words = WHEEL / 64;
        for k in 1..=words {
            let w = (w0 + k) % words;
            let m = self.used[w];
            if m != 0 {
                return Some(w * 64 + m.trailing_zeros() as usize);
            }
        }
        None
    }
    #[inline]
    fn pop(&mut self) -> Option<u64> {
        loop {
            let near = self.next_used();
            let near_rank = near.map(|i| {
                let (h, v) = &self.buckets[i];
                v[*h].rank()
            });
            let far_rank = self.far.peek().map(|Reverse((r, _, _))| *r);
            let (e, from_far) = match (near_rank, far_rank) {
                (Some(n), Some(f)) if f < n => (None, true),
                (Some(_), _) => (near, false),
                (None, Some(_)) => (None, true),
                (None, None) => return None,
            };
            let top = if from_far {
                let Reverse((r, a, _)) = self.far.pop().expect("peeked");
                E {
                    time: (r >> 64) as u64,
                    word: r as u64,
                    a,
                }
            } else {
                let i = e.expect("near");
                let (h, v) = &mut self.buckets[i];
                let top = v[*h];
                *h += 1;
                if *h == v.len() {
                    v.clear();
                    *h = 0;
                    self.used[i / 64] &= !(1 << (i % 64));
                }
                top
            };
            self.now_bucket = top.time >> SHIFT;
            if top.word & 1 == 1 {
                let s = top.a as usize;
                if self.live[s] != (top.word << 2) >> 6 {
                    continue;
                }
                self.live[s] = 0;
            }
            return Some(top.time);
        }
    }
}

fn replay_wheel(ops: &[QueueOp]) -> u64 {
    replay_through(Wheel::new(), ops)
}

/// (0) The replay's own cost: reading and dispatching the operations.
fn replay_nothing(ops: &[QueueOp]) -> u64 {
    let mut sum = 0u64;
    for op in ops {
        match *op {
            QueueOp::Push { t, class, ev } => {
                sum = sum.wrapping_add(
                    t.0 ^ u64::from(class) ^ timer_of(ev).map_or(0, timer_slot) as u64,
                );
            }
            QueueOp::Cancel(timer) => sum = sum.wrapping_add(timer_slot(timer) as u64),
            QueueOp::Pop => sum = sum.rotate_left(1),
        }
    }
    std::hint::black_box(sum)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args
        .first()
        .cloned()
        .unwrap_or("512pcpu-2048dom-mixed".into());
    let mut case = bench::standard(false)
        .into_iter()
        .find(|c| c.name == name)
        .expect("a standard case's name");
    if let Some(s) = args.get(1) {
        let secs: f64 = s.parse().expect("seconds");
        case.scenario.run.duration_ns = (secs * 1e9) as u64;
    }
    let sim_s = case.scenario.run.duration_ns as f64 * 1e-9;
    let mut sim = Simulation::new(&case.scenario).expect("builds");
    // The set-up's own pushes (first events of every timer) are part of the trace.
    let c0 = cpu_s();
    sim.run_until(Time(case.scenario.run.duration_ns))
        .expect("runs");
    let engine_cpu = cpu_s() - c0;
    let ops = sim.take_queue_trace();
    let events = sim.events();

    // The mix and the size, from the trace (a mirror of which timers are pending).
    let slots = ops
        .iter()
        .filter_map(|op| match *op {
            QueueOp::Push { ev, .. } => timer_of(ev).map(timer_slot),
            QueueOp::Cancel(t) => Some(timer_slot(t)),
            QueueOp::Pop => None,
        })
        .max()
        .unwrap_or(0)
        + 1;
    let mut pending = vec![false; slots];
    let (mut pushes, mut rearms, mut cancels, mut cancel_calls, mut pops) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut len = 0usize;
    let mut sizes: Vec<usize> = Vec::with_capacity(ops.len());
    // Which timer each pop took: the replay through the engine's queue tells.
    let mut q = EventQueue::default();
    let mut now = 0u64;
    let mut by_kind: std::collections::BTreeMap<&str, u64> = Default::default();
    let mut delays: Vec<u64> = Vec::with_capacity(ops.len());
    for op in &ops {
        match *op {
            QueueOp::Push { t, class, ev } => {
                delays.push(t.0 - now.min(t.0));
                pushes += 1;
                len += 1;
                if let Some(tm) = timer_of(ev) {
                    let s = timer_slot(tm);
                    if pending[s] {
                        rearms += 1;
                        len -= 1;
                    }
                    pending[s] = true;
                }
                match class {
                    0 => q.push(t, ev),
                    1 => q.push_late(t, ev),
                    _ => q.push_softirq(t, ev),
                }
            }
            QueueOp::Cancel(tm) => {
                cancel_calls += 1;
                let s = timer_slot(tm);
                if pending[s] {
                    cancels += 1;
                    len -= 1;
                    pending[s] = false;
                }
                q.cancel(tm);
            }
            QueueOp::Pop => {
                pops += 1;
                len -= 1;
                let (t, ev) = q.pop().expect("the recorded pop");
                now = t.0;
                let kind = match ev {
                    Event::Softirq { .. } => "softirq",
                    Event::SliceEnd { .. } => "slice end",
                    Event::SchedTimer { .. } => "scheduler timer",
                    Event::WorkDone { .. } => "work done",
                    Event::WorkloadTimer { .. } => "workload timer",
                    Event::Io { .. } => "I/O",
                    _ => "other",
                };
                *by_kind.entry(kind).or_default() += 1;
                if let Some(tm) = timer_of(ev) {
                    pending[timer_slot(tm)] = false;
                }
            }
        }
        assert_eq!(len, q.len(), "the mirror follows the queue");
        sizes.push(len);
    }
    drop(q);
    let mean = sizes.iter().map(|&s| s as f64).sum::<f64>() / sizes.len() as f64;
    sizes.sort_unstable();
    let pct = |p: f64| sizes[((sizes.len() - 1) as f64 * p) as usize];
    let per_ev = |n: u64| n as f64 / pops as f64;
    println!(
        "{name}: {sim_s} simulated s, {events} events ({:.0} per simulated s), {pops} pops",
        events as f64 / sim_s
    );
    println!(
        "engine (this build records its queue): {:.3} CPU s, {:.2} M events/s, {:.0}x real time",
        engine_cpu,
        events as f64 / engine_cpu / 1e6,
        sim_s / engine_cpu
    );
    println!(
        "per popped event: {:.3} pushes ({:.3} re-arming a pending timer), {:.3} cancel calls \
         ({:.3} removing a pending timer)",
        per_ev(pushes),
        per_ev(rearms),
        per_ev(cancel_calls),
        per_ev(cancels)
    );
    println!(
        "queue size per operation: mean {:.0}, median {}, 90th percentile {}, max {}",
        mean,
        pct(0.5),
        pct(0.9),
        sizes[sizes.len() - 1]
    );
    drop(sizes);
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|(k, n)| format!("{k} {:.1} %", 100.0 * *n as f64 / pops as f64))
        .collect();
    println!("pops by kind: {}", kinds.join(", "));
    delays.sort_unstable();
    let dq = |p: f64| delays[((delays.len() - 1) as f64 * p) as usize] as f64 * 1e-3;
    println!(
        "push delay (due time - last popped) in µs: {:.1} % due now; 10th {:.1}, median {:.1}, 90th {:.1}, 99th {:.1}, max {:.1}",
        100.0 * delays.iter().filter(|&&d| d == 0).count() as f64 / delays.len() as f64,
        dq(0.1),
        dq(0.5),
        dq(0.9),
        dq(0.99),
        dq(1.0)
    );
    let mut times: Vec<u64> = ops
        .iter()
        .filter_map(|op| match *op {
            QueueOp::Push { t, .. } => Some(t.0),
            _ => None,
        })
        .collect();
    times.sort_unstable();
    let (mut run, mut max_run, mut distinct) = (0usize, 0usize, 0usize);
    for i in 0..times.len() {
        if i == 0 || times[i] != times[i - 1] {
            distinct += 1;
            run = 0;
        }
        run += 1;
        max_run = max_run.max(run);
    }
    println!(
        "pushed due times: {} pushes at {distinct} distinct instants, at most {max_run} at one instant",
        times.len()
    );
    drop(times);
    drop(delays);

    let need = events as f64 / sim_s; // events per second per 1x real time
    let report = |what: &str, cpu: f64, n: u64| {
        let rate = n as f64 / cpu;
        println!(
            "{what}: {:.1} ns per event, {:.1} M events/s, {:.0}x real time with nothing else per event",
            cpu / n as f64 * 1e9,
            rate / 1e6,
            rate / need
        );
    };
    let a = best_of(3, || replay_engine_queue(&ops));
    report("(a) the engine's queue alone, this trace", a, pops);
    let b = best_of(3, || replay_lazy_heap(&ops, slots));
    report(
        "(b) bare std heap, same keys and mix, stale skipped",
        b,
        pops,
    );
    let d = best_of(3, || replay_lazy_engine_heap(&ops));
    report(
        "(d) the engine's heap, cancelled timers skipped when popped",
        d,
        pops,
    );
    assert_eq!(
        replay_lazy_engine_heap(&ops),
        replay_engine_queue(&ops),
        "(d) pops what (a) pops"
    );
    let e = best_of(3, || replay_wheel(&ops));
    report(
        "(e) a timing wheel, cancelled timers skipped when popped",
        e,
        pops,
    );
    assert_eq!(
        replay_wheel(&ops),
        replay_engine_queue(&ops),
        "(e) pops what (a) pops"
    );
    let z = best_of(3, || replay_nothing(&ops));
    report(
        "(0) reading the trace alone (included in (a), (b), (d), (e))",
        z,
        pops,
    );
    let size = mean.round().max(1.0) as usize;
    let steps = pops.max(1_000_000);
    let c = best_of(3, || bench::bare_heap_loop(size, steps));
    report(&format!("(c) bench's bare loop at size {size}"), c, steps);
    println!(
        "200x real time needs {:.1} M events/s ({:.1} ns per event) at this case's events per simulated second",
        200.0 * need / 1e6,
        1e9 / (200.0 * need)
    );
}
