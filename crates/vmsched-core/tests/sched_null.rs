//! null: behaviour 23 of `docs/reference/xen-behaviours.md` (and the
//! scheduler's page, `docs/schedulers/null.md`), what it must hold, and the invariants every scheduler keeps.

mod common;

use common::*;
use vmsched_core::{Simulation, Time};

/// Three hogs on 2 PCPUs (behaviour 3): the first two VCPUs created own a PCPU
/// each and run 100 %; the third finds no free PCPU, waits in the wait
/// queue, and never runs. No more VCPUs ever run than there are PCPUs.
#[test]
fn never_runs_more_vcpus_than_pcpus() {
    let toml = hogs("null", "", 2, 3, 5.0);
    let sc = scenario(&toml);
    let mut sim = Simulation::new(&sc).unwrap();
    for ms in (10..=5000).step_by(10) {
        sim.run_until(Time(ms * 1_000_000)).unwrap();
        let running = sim
            .vcpus()
            .iter()
            .filter(|v| v.running_on.is_some())
            .count();
        assert!(running <= 2, "{running} VCPUs running at {ms} ms");
    }
    let s = run(&toml);
    assert!(cpu_pct(&s, "vm1") > 99.99 && cpu_pct(&s, "vm2") > 99.99);
    let third = vcpu(&s, "vm3", 0);
    assert_eq!(third["running_ns"], 0);
    assert_eq!(
        third["runnable_ns"], 5_000_000_000u64,
        "it waits the whole run"
    );
    assert_eq!(counter(&s, "waiting_vcpus"), 1);
}

/// A blocked VCPU leaves its PCPU idle (docs/schedulers/null.md): nobody else may use it, not
/// even the VCPU waiting in the queue. The duty-cycle VCPU owns PCPU 0 and
/// uses 20 % of it; the waiting hog gets nothing.
#[test]
fn blocked_owner_leaves_its_pcpu_idle() {
    let toml = r#"
        [host]
        pcpus = 2
        [scheduler]
        name = "null"
        [run]
        duration_s = 5
        [[domain]]
        name = "light"
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 20
        period_ms = 10
        [[domain]]
        name = "hog1"
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "hog2"
        [domain.workload]
        kind = "cpu-hog"
    "#;
    let s = run(toml);
    assert!((cpu_pct(&s, "light") - 20.0).abs() < 0.5);
    assert!(cpu_pct(&s, "hog1") > 99.99);
    assert_eq!(cpu_pct(&s, "hog2"), 0.0);
    let pcpu0 = s["host"]["pcpus_detail"][0]["busy_pct"].as_f64().unwrap();
    assert!(
        pcpu0 < 21.0,
        "PCPU 0 idles while hog2 waits: busy {pcpu0} %"
    );
}

/// No slices and no timers: a PCPU whose VCPU never blocks decides once.
#[test]
fn no_time_slices() {
    let s = run(&hogs("null", "", 2, 2, 5.0));
    for p in 0..2 {
        assert_eq!(s["host"]["pcpus_detail"][p]["schedules"], 1);
    }
}

/// Assignment honours affinity: a VCPU pinned to PCPU 1 takes it even though
/// it is created after a VCPU that could use any PCPU.
#[test]
fn assignment_follows_affinity() {
    let toml =
        hogs("null", "", 2, 2, 1.0).replacen("name = \"vm2\"", "name = \"vm2\"\naffinity = [1]", 1);
    let s = run(&toml);
    assert!(cpu_pct(&s, "vm1") > 99.99 && cpu_pct(&s, "vm2") > 99.99);
}

#[test]
fn invariants_and_determinism() {
    assert_deterministic(&mixed_smt("null", "", "", 3.0));
    assert_deterministic(&hogs("null", "", 4, 9, 2.0));
}

#[test]
fn takes_no_parameters() {
    let e = vmsched_core::Scenario::from_toml_str(&hogs("null", "ratelimit_us = 1000", 1, 1, 1.0))
        .unwrap_err();
    assert_eq!(e.path, "scheduler.ratelimit_us");
}
