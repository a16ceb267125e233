//! How the engine scales with the host: the mixed host of `bench::mixed_host`
//! (4 single-VCPU domains per PCPU, a quarter CPU hogs) from 2 to 512 PCPUs,
//! printing wall time per simulated PCPU-second, which grows no faster than
//! log P when per-event costs do not grow with the host:
//! `cargo run --release --example scaling [-- SCHEDULER [SIMULATED_S]]`.
use std::time::Instant;
use vmsched_core::{bench, Scenario, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sched = args.first().map_or("credit", String::as_str);
    let duration_s: f64 = args
        .get(1)
        .map_or(10.0, |s| s.parse().expect("SIMULATED_S"));
    println!(
        "{sched}, {duration_s} simulated s, 4 domains per PCPU\n{:>6} {:>12} {:>9} {:>12} {:>16} {:>10}",
        "pcpus", "events", "wall_s", "x realtime", "us/PCPU-second", "/ log2 P"
    );
    for pcpus in [2usize, 8, 32, 128, 512] {
        let sc = Scenario::from_toml_str(&bench::mixed_host(sched, pcpus, 4 * pcpus, duration_s))
            .expect("valid");
        let mut sim = Simulation::new(&sc).expect("builds");
        let t = Instant::now();
        sim.run().expect("runs");
        let wall = t.elapsed().as_secs_f64();
        let per_pcpu_s = wall * 1e6 / (pcpus as f64 * duration_s);
        println!(
            "{:>6} {:>12} {:>9.3} {:>12.0} {:>16.2} {:>10.2}",
            pcpus,
            sim.events(),
            wall,
            duration_s / wall,
            per_pcpu_s,
            per_pcpu_s / (pcpus as f64).log2()
        );
    }
}
