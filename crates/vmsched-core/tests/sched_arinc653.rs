//! ARINC 653: behaviour 22 of `docs/reference/xen-behaviours.md` (and
//! `docs/schedulers/arinc653.md`), what it must hold, the table's validation, and the invariants
//! every scheduler keeps.

mod common;

use common::*;

fn table(pcpus: u32, sched: &str, doms: &str, secs: f64) -> String {
    format!("[host]\npcpus = {pcpus}\n[scheduler]\nname = \"arinc653\"\n{sched}\n[run]\nduration_s = {secs}\n{doms}")
}

const HOG_AND_IDLE: &str = r#"
[[domain]]
name = "hog"
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "quiet"
[domain.workload]
kind = "idle"
"#;

/// A slot whose owner has nothing to run stays idle (docs/schedulers/arinc653.md): the hog gets
/// exactly its own 10 ms of every 20 ms frame, never the quiet domain's.
#[test]
fn slot_of_an_owner_with_nothing_to_run_stays_idle() {
    let sched = "schedule = [ { domain = \"hog\", runtime_ms = 10 }, { domain = \"quiet\", runtime_ms = 10 } ]";
    let s = run(&table(1, sched, HOG_AND_IDLE, 10.0));
    assert!(
        (cpu_pct(&s, "hog") - 50.0).abs() < 0.01,
        "{}",
        cpu_pct(&s, "hog")
    );
    let busy = s["host"]["pcpus_detail"][0]["busy_pct"].as_f64().unwrap();
    assert!(
        (busy - 50.0).abs() < 0.01,
        "the PCPU idles in the quiet slot: {busy}"
    );
}

/// Time after the last minor frame is idle too, and a domain that is not in
/// the table never runs.
#[test]
fn trailing_time_and_unlisted_domains_stay_idle() {
    let sched = "major_frame_ms = 40\nschedule = [ { domain = \"hog\", runtime_ms = 10 } ]";
    let doms = HOG_AND_IDLE.replace("kind = \"idle\"", "kind = \"cpu-hog\"");
    let s = run(&table(1, sched, &doms, 10.0));
    assert!((cpu_pct(&s, "hog") - 25.0).abs() < 0.01);
    assert_eq!(cpu_pct(&s, "quiet"), 0.0);
}

/// A VCPU that blocks inside its slot idles the rest of it, and one that
/// wakes inside its slot runs at once for what is left (docs/schedulers/arinc653.md): a 4 ms burst
/// every 40 ms, arriving at the start of the slot, runs all 4 ms in it.
#[test]
fn waking_inside_own_slot_runs_at_once() {
    let doms = r#"
[[domain]]
name = "burst"
[domain.workload]
kind = "duty-cycle"
util_pct = 10
period_ms = 40
random_phase = false
[[domain]]
name = "hog"
[domain.workload]
kind = "cpu-hog"
"#;
    let sched = "schedule = [ { domain = \"burst\", runtime_ms = 20 }, { domain = \"hog\", runtime_ms = 20 } ]";
    let s = run(&table(1, sched, doms, 4.0));
    assert!((cpu_pct(&s, "burst") - 10.0).abs() < 0.01);
    assert!(
        (cpu_pct(&s, "hog") - 50.0).abs() < 0.01,
        "the hog never gets the burst's idle 16 ms"
    );
    let lat = vcpu(&s, "burst", 0)["wake_latency_us"]["max"]
        .as_f64()
        .unwrap();
    assert!(lat < 1.0, "wakes inside its own slot: {lat} us");
}

/// Without a table Xen's default runs only domain 0's VCPUs, 10 ms each
/// (docs/schedulers/arinc653.md): guests never run.
#[test]
fn default_table_runs_only_domain_zero() {
    let s = run(&hogs("arinc653", "", 2, 3, 2.0));
    assert!(cpu_pct(&s, "vm1") > 99.99, "the first domain is domain 0");
    assert_eq!(cpu_pct(&s, "vm2"), 0.0);
    assert_eq!(cpu_pct(&s, "vm3"), 0.0);
    assert_eq!(counter(&s, "major_frame_ns"), 10_000_000);
    // 4.21 adds a trailing 10 ms idle frame to the default table.
    let s = run(&hogs("arinc653", "xen_version = \"4.21\"", 2, 3, 2.0));
    assert!((cpu_pct(&s, "vm1") - 50.0).abs() < 0.01);
}

/// Multi-PCPU hosts (docs/schedulers/arinc653.md): every PCPU walks the same frames, and a VCPU runs
/// only on its own PCPU. Both single-VCPU domains were placed on PCPU 0, so
/// they are serialised there and PCPU 1 never runs anything.
#[test]
fn multi_pcpu_host_serialises_on_the_vcpus_own_pcpu() {
    let doms = HOG_AND_IDLE.replace("kind = \"idle\"", "kind = \"cpu-hog\"");
    let sched = "schedule = [ { domain = \"hog\", runtime_ms = 10 }, { domain = \"quiet\", runtime_ms = 10 } ]";
    let s = run(&table(2, sched, &doms, 5.0));
    assert!((cpu_pct(&s, "hog") - 50.0).abs() < 0.01);
    assert!((cpu_pct(&s, "quiet") - 50.0).abs() < 0.01);
    assert_eq!(
        s["host"]["pcpus_detail"][1]["busy_pct"].as_f64().unwrap(),
        0.0
    );
}

/// Since 4.21 a late major frame stays on the grid from t = 0; before, it
/// restarts "now" (docs/schedulers/arinc653.md). The hog first wakes at 5 ms: 4.22 runs it in
/// the rest of the 0–10 ms slot (5 ms by t = 12 ms), 4.20 starts the frame at
/// 5 ms and runs it 5–12 ms.
#[test]
fn major_frame_alignment_since_4_21() {
    let doms = r#"
[[domain]]
name = "late"
[domain.workload]
kind = "transient"
offset_ms = 5
on_ms = 1000000
off_ms = 1
"#;
    let sched = "major_frame_ms = 20\nschedule = [ { domain = \"late\", runtime_ms = 10 } ]";
    for (ver, ran_ms) in [("4.22", 5.0), ("4.20", 7.0)] {
        let s = run(&table(
            1,
            &format!("{sched}\nxen_version = \"{ver}\""),
            doms,
            0.012,
        ));
        let ran = vcpu(&s, "late", 0)["running_ns"].as_f64().unwrap() / 1e6;
        assert!(
            (ran - ran_ms).abs() < 0.01,
            "xen {ver}: ran {ran} ms, expected {ran_ms}"
        );
    }
}

/// A new table installed at run time takes effect at the next decision (here
/// at once: the action falls on a frame boundary).
#[test]
fn new_table_at_run_time() {
    let doms = HOG_AND_IDLE.replace("kind = \"idle\"", "kind = \"cpu-hog\"");
    let sched = "schedule = [ { domain = \"hog\", runtime_ms = 10 } ]";
    let toml = format!(
        "{}\n[[action]]\nat_s = 1\nschedule = [ {{ domain = \"quiet\", runtime_ms = 5 }}, {{ domain = \"hog\", runtime_ms = 15 }} ]\n",
        table(1, sched, &doms, 2.0)
    );
    let s = run(&toml);
    // 1 s alone at 100 %, then 1 s at 75 %.
    assert!(
        (cpu_pct(&s, "hog") - 87.5).abs() < 0.05,
        "{}",
        cpu_pct(&s, "hog")
    );
    assert!((cpu_pct(&s, "quiet") - 12.5).abs() < 0.05);
}

#[test]
fn invariants_and_determinism() {
    let sched = r#"schedule = [
        { domain = "dom0", runtime_ms = 2 }, { domain = "dom0", vcpu = 1, runtime_ms = 2 },
        { domain = "web", runtime_ms = 3 }, { domain = "web", vcpu = 2, runtime_ms = 1.5 },
        { domain = "hog", vcpu = 1, runtime_ms = 4 }, { domain = "pinned", runtime_ms = 2 },
        { domain = "batch", vcpu = 3, runtime_ms = 5 }, { domain = "idle", runtime_ms = 1 },
    ]
    major_frame_ms = 25"#;
    for ver in ["4.22", "4.20"] {
        assert_deterministic(&mixed_smt(
            "arinc653",
            &format!("{sched}\nxen_version = \"{ver}\""),
            "",
            3.0,
        ));
    }
    assert_deterministic(&mixed_smt("arinc653", "", "", 1.0));
}

#[test]
fn bad_tables_are_rejected() {
    let bad = |sched: &str| {
        vmsched_core::Scenario::from_toml_str(&table(1, sched, HOG_AND_IDLE, 1.0)).unwrap_err()
    };
    let e = bad("schedule = [ { domain = \"hgo\", runtime_ms = 10 } ]");
    assert_eq!(e.path, "scheduler.schedule[0].domain");
    assert!(e.message.contains("did you mean 'hog'"), "{e}");
    let e = bad("schedule = [ { domain = \"hog\", vcpu = 1, runtime_ms = 10 } ]");
    assert_eq!(e.path, "scheduler.schedule[0].vcpu");
    let e = bad("major_frame_ms = 15\nschedule = [ { domain = \"hog\", runtime_ms = 10 }, { domain = \"quiet\", runtime_ms = 10 } ]");
    assert_eq!(e.path, "scheduler.major_frame_ms");
    let e = bad("schedule = [ { domain = \"hog\", runtime_ms = 0 } ]");
    assert_eq!(e.path, "scheduler.schedule[0].runtime_ms");
    let e = bad("schedule = [ { domain = \"hog\" } ]");
    assert_eq!(e.path, "scheduler.schedule[0].runtime_ms");
    let e = bad("schedule = [ { domain = \"hog\", runtime_ms = 10, weight = 3 } ]");
    assert_eq!(e.path, "scheduler.schedule[0].weight");
    let e = bad("major_frame_ms = 10");
    assert_eq!(e.path, "scheduler.major_frame_ms");
    let many: Vec<String> = (0..65)
        .map(|_| "{ domain = \"hog\", runtime_ms = 1 }".to_string())
        .collect();
    let e = bad(&format!("schedule = [ {} ]", many.join(", ")));
    assert_eq!(e.path, "scheduler.schedule");
    let e = vmsched_core::Scenario::from_toml_str(&format!(
        "{}\n[[action]]\nat_s = 0.5\nschedule = [ {{ domain = \"nobody\", runtime_ms = 1 }} ]\n",
        table(1, "", HOG_AND_IDLE, 1.0)
    ))
    .unwrap_err();
    assert_eq!(e.path, "action[0].schedule[0].domain");
}
