//! Credit on large hosts: placement, stealing and speed from 2 to 512 PCPUs,
//! four single-VCPU domains per PCPU (CPU hogs, or 20 % duty cycles):
//! `cargo run --release --example credit_scale -- [hog|duty] [SECONDS] [XEN_VERSION] [PCPUS...]`.
//!
//! Prints, per host: PCPUs busy at 30 ms (one accounting period) and at the
//! end, domains that got no CPU in the first second, when every domain had
//! run (to the 100 ms; "-" if not by the end), work steals, × real time and
//! wall time per simulated PCPU-second.
use std::time::Instant;
use vmsched_core::{Scenario, Simulation, Time};

fn scenario(pcpus: u32, kind: &str, secs: f64, version: &str) -> String {
    let mut s = format!(
        "[host]\npcpus = {pcpus}\n[scheduler]\nname = \"credit\"\nxen_version = \"{version}\"\n[run]\nduration_s = {secs}\n"
    );
    let wl = if kind == "duty" {
        "kind = \"duty-cycle\"\nutil_pct = 20\nperiod_ms = 100\n"
    } else {
        "kind = \"cpu-hog\"\n"
    };
    for i in 0..4 * pcpus {
        s.push_str(&format!(
            "[[domain]]\nname = \"vm{i}\"\n[domain.workload]\n{wl}"
        ));
    }
    s
}

fn busy(sim: &Simulation) -> usize {
    sim.pcpus().iter().filter(|p| p.current.is_some()).count()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args.first().map_or("hog", String::as_str).to_string();
    let secs: f64 = args.get(1).map_or(10.0, |s| s.parse().expect("seconds"));
    let version = args.get(2).cloned().unwrap_or_else(|| "4.22".into());
    let mut hosts: Vec<u32> = args
        .iter()
        .skip(3)
        .map(|s| s.parse().expect("pcpus"))
        .collect();
    if hosts.is_empty() {
        hosts = vec![2, 8, 32, 128, 512];
    }
    println!(
        "{:>6} {:>7} {:>9} {:>9} {:>11} {:>10} {:>9} {:>9} {:>10} {:>12}",
        "pcpus",
        "domains",
        "busy@30ms",
        "busy@end",
        "idle-1s-dom",
        "all-ran-s",
        "steals",
        "wall_s",
        "x_real",
        "us/pcpu-s"
    );
    for p in hosts {
        let sc = Scenario::from_toml_str(&scenario(p, &kind, secs, &version)).expect("valid");
        let t = Instant::now();
        let mut sim = Simulation::new(&sc).expect("builds");
        sim.run_until(Time(30_000_000)).expect("runs");
        let busy30 = busy(&sim);
        let waiting = |sim: &Simulation, t: Time| {
            sim.vcpus()
                .iter()
                .filter(|v| v.state_ns_at(t)[0] == 0)
                .count()
        };
        sim.run_until(Time(1_000_000_000)).expect("runs");
        let starved = waiting(&sim, Time(1_000_000_000));
        let mut all_ran = (starved == 0).then_some(1.0);
        let mut now = 1_000_000_000u64;
        while all_ran.is_none() && now < (secs * 1e9) as u64 {
            now += 100_000_000;
            sim.run_until(Time(now)).expect("runs");
            if waiting(&sim, Time(now)) == 0 {
                all_ran = Some(now as f64 / 1e9);
            }
        }
        sim.run().expect("runs");
        let wall = t.elapsed().as_secs_f64();
        let s = sim.summary(wall);
        println!(
            "{:>6} {:>7} {:>9} {:>9} {:>11} {:>10} {:>9} {:>9.3} {:>10.1} {:>12.2}",
            p,
            4 * p,
            busy30,
            busy(&sim),
            starved,
            all_ran.map_or("-".to_string(), |t| format!("{t:.1}")),
            s["scheduler_counters"]["steals"],
            wall,
            secs / wall,
            wall * 1e6 / (secs * f64::from(p))
        );
    }
}
