//! Per-event speed of schedulers against Credit on the standard benchmark
//! scenarios: `cargo run --release --example sched_speed -- [--short] [NAME...]`.
//!
//! Prints, per scenario and scheduler, simulated events, wall time, ns per
//! event and the ratio to Credit's ns per event (the limit is 3×).
use std::time::Instant;
use vmsched_core::bench::standard_for;
use vmsched_core::Simulation;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let short = args.iter().any(|a| a == "--short");
    let mut names: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    if names.is_empty() {
        names = vec!["sedf", "bvt", "atropos", "rrobin"];
    }
    names.retain(|n| *n != "credit");
    names.insert(0, "credit");
    let cases = standard_for("credit", short).len();
    println!(
        "{:<22} {:<8} {:>12} {:>9} {:>9} {:>9}",
        "scenario", "sched", "events", "wall_s", "ns/event", "x credit"
    );
    for c in 0..cases {
        let mut credit_ns = 0.0;
        for name in &names {
            let case = standard_for(name, short).swap_remove(c);
            // Best of three, to keep other load on the machine out of it.
            let mut best = f64::MAX;
            let mut events = 0;
            for _ in 0..3 {
                let mut sim = Simulation::new(&case.scenario).expect("valid scenario");
                let t = Instant::now();
                sim.run().expect("run completes");
                best = best.min(t.elapsed().as_secs_f64());
                events = sim.events();
            }
            let per = best * 1e9 / events as f64;
            if *name == "credit" {
                credit_ns = per;
            }
            println!(
                "{:<22} {:<8} {:>12} {:>9.3} {:>9.1} {:>9.2}",
                case.name,
                name,
                events,
                best,
                per,
                per / credit_ns
            );
        }
    }
}
