//! Time per event of each scheduler on the standard benchmark cases, against
//! Credit: `cargo run --release --example sched_bench [-- --short] [NAME...]`.
use std::time::Instant;
use vmsched_core::{bench, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let short = args.iter().any(|a| a == "--short");
    let mut names: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    if names.is_empty() {
        names = vmsched_core::sched::registry()
            .iter()
            .map(|s| s.name)
            .collect();
    }
    let mut credit_ns = Vec::new();
    println!(
        "{:<16} {:<22} {:>12} {:>9} {:>10} {:>9}",
        "scheduler", "case", "events", "wall_s", "ns/event", "x credit"
    );
    for name in std::iter::once("credit").chain(names.into_iter().filter(|&n| n != "credit")) {
        for (i, case) in bench::standard_for(name, short).into_iter().enumerate() {
            let t = Instant::now();
            let mut sim = Simulation::new(&case.scenario).expect("builds");
            sim.run().expect("runs");
            let wall = t.elapsed().as_secs_f64();
            let per = wall * 1e9 / sim.events().max(1) as f64;
            if name == "credit" {
                credit_ns.push(per);
            }
            println!(
                "{:<16} {:<22} {:>12} {:>9.3} {:>10.1} {:>9.2}",
                name,
                case.name,
                sim.events(),
                wall,
                per,
                per / credit_ns[i]
            );
        }
    }
}
