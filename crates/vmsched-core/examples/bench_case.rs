//! Run one standard benchmark case and print its events, for instruction
//! counts under callgrind and CPU-time pairs under `farm-bench`:
//! `cargo run --release --example bench_case -- CASE [SCHEDULER] [--short]`
//! (CASE: a name of `vmsched_core::bench::standard_for`, e.g.
//! `three-hogs-2pcpu`; SCHEDULER: default `credit`).
use vmsched_core::{bench, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let short = args.iter().any(|a| a == "--short");
    let mut names = args.iter().filter(|a| !a.starts_with("--"));
    let case = names
        .next()
        .expect("usage: bench_case CASE [SCHEDULER] [--short]");
    let sched = names.next().map_or("credit", String::as_str);
    let Some(c) = bench::standard_for(sched, short)
        .into_iter()
        .find(|c| c.name == case)
    else {
        eprintln!("unknown case {case}");
        std::process::exit(2);
    };
    let mut sim = Simulation::new(&c.scenario).expect("builds");
    sim.run().expect("runs");
    println!("{} {} events={}", sched, c.name, sim.events());
}
