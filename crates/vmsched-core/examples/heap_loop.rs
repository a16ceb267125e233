//! The yardstick for the engine's event loop: the engine on a standard case
//! (default `three-hogs-2pcpu`, full length), then a bare binary-heap loop
//! (the standard library's `BinaryHeap` of 24-byte entries, as the engine's
//! are: time, sequence word, payload) at the engine's mean queue size, with
//! nothing else to do per event: each step pops the earliest entry and pushes
//! one a pseudo-random delay later, so the heap keeps its size. Prints both
//! rates and the engine's fraction of the bare loop:
//! `cargo run --release --example heap_loop [-- CASE]`.
use std::time::Instant;
use vmsched_core::{bench, Simulation, Time};

/// The bare loop (`bench::bare_heap_loop`): `steps` pop+push on a heap of
/// `size`; events per second.
fn bare_heap(size: usize, steps: u64) -> f64 {
    let t = Instant::now();
    let sum = bench::bare_heap_loop(size, steps);
    let rate = steps as f64 / t.elapsed().as_secs_f64();
    // Keep the loop's work observable.
    assert_ne!(sum, u64::MAX);
    rate
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or("three-hogs-2pcpu".into());
    let case = bench::standard(false)
        .into_iter()
        .find(|c| c.name == name)
        .expect("a standard case's name");
    let mut sim = Simulation::new(&case.scenario).expect("builds");
    let end = case.scenario.run.duration_ns;
    let steps = 1000u64;
    let (mut sizes, mut wall) = (0usize, 0.0);
    for i in 1..=steps {
        let t = Instant::now();
        sim.run_until(Time(end / steps * i)).expect("runs");
        wall += t.elapsed().as_secs_f64();
        sizes += sim.queue_len();
    }
    let engine = sim.events() as f64 / wall;
    let size = (sizes as f64 / steps as f64).round().max(1.0) as usize;
    let bare = bare_heap(size, sim.events().clamp(1_000_000, 100_000_000));
    println!(
        "{name}: engine {:.1} M events/s; bare heap loop of its mean queue size ({size}): \
         {:.1} M events/s; engine / bare = {:.2}",
        engine / 1e6,
        bare / 1e6,
        engine / bare
    );
}
