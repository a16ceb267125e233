//! Helpers shared by the scheduler test files: building and running
//! scenarios, reading shares, and the generic invariants every scheduler
//! must keep (exact accounting, one PCPU per VCPU, determinism).
#![allow(dead_code)] // each test file uses a different subset

use vmsched_core::{Scenario, Simulation, Time};

/// Parse a scenario, failing the test with the validation message.
pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("scenario rejected: {e}\n{toml}"))
}

/// The validation error of a scenario that must be rejected.
pub fn rejected(toml: &str) -> vmsched_core::ScenarioError {
    match Scenario::from_toml_str(toml) {
        Ok(_) => panic!("scenario accepted but must be rejected:\n{toml}"),
        Err(e) => e,
    }
}

/// Run a scenario to the end; the engine's own checks (a VCPU on two PCPUs,
/// a non-runnable or out-of-affinity choice) make `run` fail.
pub fn run(toml: &str) -> Simulation {
    let mut sim = Simulation::new(&scenario(toml)).expect("simulation builds");
    sim.run().unwrap_or_else(|e| panic!("run failed: {e}"));
    sim
}

/// A domain's VCPU ids.
pub fn vcpus_of(sim: &Simulation, dom: &str) -> std::ops::Range<usize> {
    let d = sim
        .domains()
        .iter()
        .find(|d| d.name == dom)
        .unwrap_or_else(|| panic!("no domain {dom}"));
    d.first_vcpu as usize..(d.first_vcpu + d.nvcpus) as usize
}

/// Nanoseconds a domain has run up to the last event processed.
pub fn running_ns(sim: &Simulation, dom: &str) -> u64 {
    running_ns_at(sim, dom, sim.now())
}

/// Nanoseconds a domain has run up to `t`, after `sim.run_until(t)`: no
/// event lies between the last one processed and `t`, so the current
/// states extend exactly to `t`.
pub fn running_ns_at(sim: &Simulation, dom: &str, t: Time) -> u64 {
    assert!(
        t >= sim.now(),
        "{t:?} is before the last event {:?}",
        sim.now()
    );
    vcpus_of(sim, dom)
        .map(|v| sim.vcpus()[v].state_ns_at(t)[0])
        .sum()
}

/// A domain's CPU share of the measured time, in % of one PCPU.
pub fn cpu_pct(sim: &Simulation, dom: &str) -> f64 {
    running_ns(sim, dom) as f64 * 100.0 / sim.measured_ns() as f64
}

/// Context switches onto PCPUs of a domain's VCPUs.
pub fn switches(sim: &Simulation, dom: &str) -> u64 {
    vcpus_of(sim, dom)
        .map(|v| sim.vcpus()[v].context_switches)
        .sum()
}

/// The PCPU a domain's VCPU `i` was placed on (its processor).
pub fn pcpu_of(sim: &Simulation, dom: &str, i: usize) -> u32 {
    sim.vcpus()[vcpus_of(sim, dom).start + i].processor.0
}

/// A scheduler counter from the summary.
pub fn counter(sim: &Simulation, name: &str) -> u64 {
    sim.summary(0.0)["scheduler_counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// A domain's summary object.
pub fn dom_summary(sim: &Simulation, dom: &str) -> serde_json::Value {
    sim.summary(0.0)["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == dom)
        .cloned()
        .unwrap_or_else(|| panic!("no domain {dom}"))
}

/// `|a - b| <= tol`, with a message naming what was compared.
pub fn assert_near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:.4}, expected {want:.4} ± {tol}"
    );
}

/// The generic invariants, checked on one scenario:
///
/// * the run completes (the engine rejects a VCPU chosen on two PCPUs, a
///   non-runnable VCPU, or one outside its hard affinity);
/// * at every `step_ns` boundary, each PCPU's current VCPU is distinct and
///   marked as running there;
/// * every VCPU's running + runnable + blocked + offline time equals the
///   measured time exactly, and the VCPUs' running time equals the PCPUs'
///   busy time;
/// * a second run gives an identical summary (determinism).
pub fn check_invariants(toml: &str, step_ns: u64) {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).expect("simulation builds");
    let mut t = 0;
    loop {
        t += step_ns;
        let prog = sim
            .run_until(Time(t))
            .unwrap_or_else(|e| panic!("run failed at {t} ns: {e}"));
        let mut seen = vec![false; sim.vcpus().len()];
        for (p, pc) in sim.pcpus().iter().enumerate() {
            if let Some(v) = pc.current {
                assert!(!seen[v.idx()], "vcpu {v} current on two PCPUs at {t} ns");
                seen[v.idx()] = true;
                assert_eq!(
                    sim.vcpus()[v.idx()].running_on.map(|x| x.0),
                    Some(p as u32),
                    "vcpu {v} is current on pcpu {p} but not marked running there at {t} ns"
                );
            }
        }
        for (i, vc) in sim.vcpus().iter().enumerate() {
            if let Some(p) = vc.running_on {
                assert_eq!(
                    sim.pcpus()[p.idx()].current.map(|x| x.idx()),
                    Some(i),
                    "vcpu {i} marked running but not current"
                );
            }
        }
        if prog.finished {
            break;
        }
    }
    let now = sim.now();
    let elapsed = sim.measured_ns();
    let mut running = 0u64;
    for (i, vc) in sim.vcpus().iter().enumerate() {
        let s = vc.state_ns_at(now);
        assert_eq!(
            s.iter().sum::<u64>(),
            elapsed,
            "vcpu {i}: states {s:?} do not sum to {elapsed} ns"
        );
        running += s[0];
    }
    let summary = sim.summary(0.0);
    let busy_ns: f64 = summary["host"]["pcpus_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["busy_pct"].as_f64().unwrap() * elapsed as f64 / 100.0)
        .sum();
    // busy_pct is a float derived from integer ns; 1 ns per PCPU of rounding.
    let npcpus = sim.pcpus().len() as f64;
    assert!(
        (busy_ns - running as f64).abs() <= npcpus,
        "PCPU busy time {busy_ns} ns differs from VCPU running time {running} ns"
    );
    let again = run(toml).summary(0.0);
    assert_eq!(summary, again, "two runs of the same scenario differ");
}

/// A mixed scenario for the invariants: hogs, duty cycles at several
/// periods, a transient load, a multi-VCPU domain and a pinned one, on
/// `pcpus` PCPUs under `sched` with extra `[scheduler]` lines and per-domain
/// `[domain.sched]` tables (`""` for none).
pub fn mixed(sched: &str, globals: &str, pcpus: u32, dom_sched: [&str; 5]) -> String {
    let sched_table = |s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("[domain.sched]\n{s}\n")
        }
    };
    format!(
        r#"
        [host]
        pcpus = {pcpus}
        [scheduler]
        name = "{sched}"
        {globals}
        [run]
        duration_s = 3
        seed = 7
        [[domain]]
        name = "dom0"
        vcpus = 2
        {s0}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 15
        period_ms = 7
        [[domain]]
        name = "hog"
        {s1}
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "io"
        {s2}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 3
        period_ms = 1.3
        [[domain]]
        name = "burst"
        vcpus = 2
        {s3}
        [domain.workload]
        kind = "transient"
        on_ms = 170
        off_ms = 230
        [[domain]]
        name = "pinned"
        affinity = [{last}]
        {s4}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 60
        period_ms = 40
        "#,
        s0 = sched_table(dom_sched[0]),
        s1 = sched_table(dom_sched[1]),
        s2 = sched_table(dom_sched[2]),
        s3 = sched_table(dom_sched[3]),
        s4 = sched_table(dom_sched[4]),
        last = pcpus - 1,
    )
}
