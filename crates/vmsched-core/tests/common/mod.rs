//! Helpers shared by the scheduler tests: run a scenario, check the
//! invariants every scheduler must keep, and check determinism.
//!
//! The invariants (ARCHITECTURE §9): every VCPU's state accounting sums to
//! the elapsed time exactly; a VCPU runs on at most one PCPU and a PCPU runs
//! at most one VCPU (the engine returns `Err` otherwise, and the helper also
//! cross-checks the engine's own records); busy PCPU time equals the
//! VCPUs' running time; and the same scenario gives identical results twice.

#![allow(dead_code)]

use serde_json::Value as Json;
use vmsched_core::{Scenario, Simulation, Time};

/// Parse a scenario, panicking with the validation message if it is wrong.
pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("scenario does not validate: {e}"))
}

/// Run `toml` to the end and return its summary (with `wall_s` removed, so
/// two summaries can be compared). Invariants are checked every `step_ms`
/// of simulated time.
pub fn run_checked(toml: &str, step_ms: u64) -> Json {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).expect("simulation builds");
    let end = sc.run.duration_ns;
    let step = step_ms * 1_000_000;
    let mut t = 0;
    while t < end {
        t = (t + step).min(end);
        let p = sim
            .run_until(Time(t))
            .unwrap_or_else(|e| panic!("run failed at {t} ns: {e}"));
        check_world(&sim);
        if p.finished {
            break;
        }
    }
    sim.run().expect("run finishes");
    check_world(&sim);
    let mut s = sim.summary(0.0);
    s.as_object_mut().unwrap().remove("wall_s");
    check_summary(&s, sc.run.duration_ns - sc.run.warmup_ns);
    s
}

/// Run with invariant checks every 50 ms.
pub fn run(toml: &str) -> Json {
    run_checked(toml, 50)
}

/// The engine's records agree with each other at this instant, and every
/// VCPU's accounting covers the elapsed time exactly.
pub fn check_world(sim: &Simulation) {
    let now = sim.now();
    for (i, p) in sim.pcpus().iter().enumerate() {
        if let Some(v) = p.current {
            let on = sim.vcpus()[v.idx()].running_on;
            assert_eq!(
                on.map(|q| q.idx()),
                Some(i),
                "pcpu {i} runs vcpu {v} whose running_on is {on:?}"
            );
        }
    }
    for (i, v) in sim.vcpus().iter().enumerate() {
        if let Some(p) = v.running_on {
            assert_eq!(
                sim.pcpus()[p.idx()].current.map(|x| x.idx()),
                Some(i),
                "vcpu {i} claims pcpu {p}"
            );
        }
        let s = v.state_ns_at(now);
        let total: u64 = s.iter().sum();
        assert_eq!(
            total,
            now.ns() - measured_from(sim),
            "vcpu {i}: states {s:?} do not sum to the elapsed time"
        );
    }
}

fn measured_from(sim: &Simulation) -> u64 {
    sim.now().ns() - sim.measured_ns()
}

/// Per VCPU the four states sum to the measured time; busy PCPU time equals
/// the VCPUs' running time (to float rounding of the percentages).
pub fn check_summary(s: &Json, measured_ns: u64) {
    let mut running = 0u64;
    for d in s["domains"].as_array().unwrap() {
        for v in d["vcpus"].as_array().unwrap() {
            let parts = ["running_ns", "runnable_ns", "blocked_ns", "offline_ns"]
                .map(|k| v[k].as_u64().unwrap());
            assert_eq!(
                parts.iter().sum::<u64>(),
                measured_ns,
                "{}.v{}: {parts:?}",
                d["name"],
                v["vcpu"]
            );
            running += parts[0];
        }
    }
    let busy: f64 = s["host"]["pcpus_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["busy_pct"].as_f64().unwrap() / 100.0 * measured_ns as f64)
        .sum();
    let npcpus = s["host"]["pcpus"].as_u64().unwrap() as f64;
    // busy_pct is a float percentage: allow its rounding, 1e-9 of the host's time.
    assert!(
        (busy - running as f64).abs() <= 1e-9 * npcpus * measured_ns as f64 + 1.0,
        "busy PCPU time {busy} != VCPU running time {running}"
    );
}

/// The same scenario twice gives identical summaries.
pub fn assert_deterministic(toml: &str) {
    let a = run(toml);
    let b = run(toml);
    assert_eq!(a, b, "two runs of the same scenario differ");
}

/// A domain's CPU share in % of one PCPU.
pub fn cpu_pct(s: &Json, dom: &str) -> f64 {
    domain(s, dom)["cpu_pct"].as_f64().unwrap()
}

/// A domain's entry in the summary.
pub fn domain<'a>(s: &'a Json, dom: &str) -> &'a Json {
    s["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == dom)
        .unwrap_or_else(|| panic!("no domain {dom}"))
}

/// A VCPU's entry in the summary.
pub fn vcpu<'a>(s: &'a Json, dom: &str, v: usize) -> &'a Json {
    &domain(s, dom)["vcpus"][v]
}

/// A scheduler counter.
pub fn counter(s: &Json, name: &str) -> u64 {
    s["scheduler_counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// `n` single-VCPU CPU hogs named vm1..vmN on `pcpus` PCPUs under `sched`
/// (with extra `[scheduler]` lines), run for `secs`.
pub fn hogs(sched: &str, extra: &str, pcpus: u32, n: u32, secs: f64) -> String {
    let mut s = format!("[host]\npcpus = {pcpus}\n[scheduler]\nname = \"{sched}\"\n{extra}\n[run]\nduration_s = {secs}\n");
    for i in 1..=n {
        s += &format!("[[domain]]\nname = \"vm{i}\"\n[domain.workload]\nkind = \"cpu-hog\"\n");
    }
    s
}

/// A mixed scenario for the invariant checks: SMT host, multi-VCPU domains,
/// hard and soft affinity, hogs, duty cycles, transient load and sysbench.
/// `dom_extra` is added to every domain's `[domain.sched]` table.
pub fn mixed(sched: &str, extra: &str, dom_extra: &str, secs: f64) -> String {
    format!(
        r#"
[host]
topology = {{ sockets = 2, cores = 2, threads = 2 }}
[scheduler]
name = "{sched}"
{extra}
[run]
duration_s = {secs}
seed = 7
[[domain]]
name = "dom0"
vcpus = 2
[domain.sched]
{dom_extra}
[domain.workload]
kind = "duty-cycle"
util_pct = 15
period_ms = 7
[[domain]]
name = "web"
vcpus = 3
soft_affinity = "0-3"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "duty-cycle"
util_pct = 35
period_ms = 23
[[domain]]
name = "hog"
vcpus = 2
affinity = "4-7"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "pinned"
affinity = [5]
[domain.sched]
{dom_extra}
[domain.workload]
kind = "transient"
on_ms = 40
off_ms = 60
[[domain]]
name = "batch"
vcpus = 4
[domain.sched]
{dom_extra}
[domain.workload]
kind = "sysbench-cpu"
threads = 6
work_ms = 150
repeat = true
[[domain]]
name = "idle"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "idle"
"#
    )
}
