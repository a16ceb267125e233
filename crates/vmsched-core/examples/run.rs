//! Run a scenario file and print the summary JSON: `cargo run --example run -- FILE`.
//! FILE may also be a standard benchmark case's name (`bench::standard`,
//! e.g. `512pcpu-2048dom-mixed`), optionally with its length in simulated
//! seconds: `run CASE [SECONDS]` (two lengths under callgrind give the
//! instructions per event, start-up and summary cancelling out).
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run SCENARIO.toml | run CASE [SECONDS]");
    let case = vmsched_core::bench::standard(false)
        .into_iter()
        .find(|c| c.name == path);
    let sc = if let Some(mut case) = case {
        if let Some(s) = std::env::args().nth(2) {
            let secs: f64 = s.parse().expect("seconds");
            case.scenario.run.duration_ns = (secs * 1e9) as u64;
        }
        case.scenario
    } else {
        let text = std::fs::read_to_string(&path).expect("readable file");
        match vmsched_core::Scenario::from_toml_str(&text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        }
    };
    let t = std::time::Instant::now();
    let mut sim = vmsched_core::Simulation::new(&sc).unwrap();
    let c0 = thread_cpu_s();
    if let Err(e) = sim.run() {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    }
    let cpu = thread_cpu_s().zip(c0).map(|(a, b)| a - b);
    let wall = t.elapsed().as_secs_f64();
    // The engine's own rate in CPU time (on stderr: the summary stays alone on stdout).
    if let Some(cpu) = cpu.filter(|&c| c > 0.0) {
        let secs = sc.run.duration_ns as f64 * 1e-9;
        eprintln!(
            "engine: {} events in {cpu:.4} CPU s: {:.2} M events/s, {:.0}x real time",
            sim.events(),
            sim.events() as f64 / cpu / 1e6,
            secs / cpu
        );
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&sim.summary(wall)).unwrap()
    );
}

/// This thread's CPU time in seconds, where Linux tells it.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}
