//! Round-robin (Xen 2.0): the behaviours 1, 2 and 18 of
//! `docs/reference/xen-behaviours.md`.

mod common;
use common::*;

fn host(pcpus: u32, globals: &str, duration_s: f64, doms: &[(&str, &str)]) -> String {
    let mut s = format!(
        "[host]\npcpus = {pcpus}\n[scheduler]\nname = \"rrobin\"\n{globals}\n[run]\nduration_s = {duration_s}\n"
    );
    for (name, wl) in doms {
        s.push_str(&format!(
            "[[domain]]\nname = \"{name}\"\n[domain.workload]\n{wl}\n"
        ));
    }
    s
}

const HOG: &str = "kind = \"cpu-hog\"";

/// Three equal hogs on two PCPUs: Xen 2.0 placement (vm1 → 0, vm2 → 1,
/// vm3 → 0), no balancing, 10 ms turns: 100/50/50, to within the one
/// unfinished slice at the end (10 ms of 10 s).
#[test]
fn three_hogs_on_two_pcpus_split_100_50_50() {
    let sim = run_sim(&host(
        2,
        "",
        10.0,
        &[("vm1", HOG), ("vm2", HOG), ("vm3", HOG)],
    ));
    assert_eq!(
        [
            pcpu_of(&sim, "vm1", 0),
            pcpu_of(&sim, "vm2", 0),
            pcpu_of(&sim, "vm3", 0)
        ],
        [0, 1, 0]
    );
    assert_near("vm2", sim_cpu_pct(&sim, "vm2"), 100.0, 0.1);
    assert_near("vm1", sim_cpu_pct(&sim, "vm1"), 50.0, 0.1);
    assert_near("vm3", sim_cpu_pct(&sim, "vm3"), 50.0, 0.1);
}

/// Fixed slices: 10 ms by default (100 switches per second between two
/// hogs), `rr_slice` otherwise, also when changed at run time.
#[test]
fn fixed_slices() {
    let sim = run_sim(&host(1, "", 10.0, &[("a", HOG), ("b", HOG)]));
    let n = switches(&sim, "a") + switches(&sim, "b");
    assert!((999..=1001).contains(&n), "{n}");
    let sim = run_sim(&host(
        1,
        "rr_slice = 5000000",
        10.0,
        &[("a", HOG), ("b", HOG)],
    ));
    let n = switches(&sim, "a") + switches(&sim, "b");
    assert!((1999..=2001).contains(&n), "{n}");
    let toml = format!(
        "{}\n[[action]]\nat_s = 5\nrr_slice = 2000000\n",
        host(1, "", 10.0, &[("a", HOG), ("b", HOG)])
    );
    let sim = run_sim(&toml);
    let n = switches(&sim, "a") + switches(&sim, "b");
    assert!((2998..=3002).contains(&n), "500 + 2500: {n}");
}

/// Wakers go to the head of the queue but never preempt a busy PCPU: a
/// domain that wakes every 50 ms behind two hogs waits for the current slice
/// to end (up to 10 ms, a few ms typically), then runs before the hog
/// queued ahead of it (never 20 ms). On an idle PCPU it runs at once.
#[test]
fn wakers_go_to_the_head_without_preempting() {
    let io = "kind = \"duty-cycle\"\nutil_pct = 2\nperiod_ms = 50";
    let sim = run_sim(&host(1, "", 10.0, &[("a", HOG), ("b", HOG), ("io", io)]));
    let lat = &dom_summary(&sim, "io")["vcpus"][0]["wake_latency_us"];
    assert!(
        lat["max"].as_f64().unwrap() <= 10_000.0,
        "never more than one slice: {lat}"
    );
    assert!(
        lat["mean"].as_f64().unwrap() > 1000.0,
        "no preemption: {lat}"
    );
    assert_near("io gets its demand", sim_cpu_pct(&sim, "io"), 2.0, 0.01);

    let sim = run_sim(
        &host(2, "", 10.0, &[("hog", HOG), ("io", io)])
            .replace("name = \"io\"\n", "name = \"io\"\naffinity = [1]\n"),
    );
    assert_eq!(pcpu_of(&sim, "io", 0), 1);
    let lat = &dom_summary(&sim, "io")["vcpus"][0]["wake_latency_us"];
    assert!(
        lat["max"].as_f64().unwrap() < 1.0,
        "idle PCPU tickled: {lat}"
    );
}

#[test]
fn parameter_validation() {
    let e = rejected(&host(1, "rr_slice = 0", 1.0, &[("a", HOG)]));
    assert_eq!(e.path, "scheduler.rr_slice");
    let e = rejected(
        &host(1, "", 1.0, &[("a", HOG)]).replace("name = \"a\"\n", "name = \"a\"\nweight = 2\n"),
    );
    assert!(e.message.contains("no per-domain 'weight'"), "{e}");
}

#[test]
fn invariants_hold() {
    for globals in ["", "rr_slice = 3000000"] {
        for pcpus in [1, 3] {
            check_invariants(&mixed_flat("rrobin", globals, pcpus, [""; 5]), 250_000);
        }
    }
}
