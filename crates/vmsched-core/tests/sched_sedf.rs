//! SEDF: the behaviours 1, 2 and 4–11 of `docs/reference/xen-behaviours.md`
//! and what SEDF must hold, on small hosts with exact expectations.

mod common;
use common::*;
use vmsched_core::Time;

const MS: u64 = 1_000_000;

fn three_hogs(version: &str, dom0: bool) -> String {
    let dom0 = if dom0 {
        "[[domain]]\nname = \"dom0\"\nvcpus = 2\n[domain.workload]\nkind = \"idle\"\n"
    } else {
        ""
    };
    format!(
        r#"
        [host]
        pcpus = 2
        [scheduler]
        name = "sedf"
        xen_version = "{version}"
        [run]
        duration_s = 10
        {dom0}
        [[domain]]
        name = "vm1"
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "vm2"
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "vm3"
        [domain.workload]
        kind = "cpu-hog"
        "#
    )
}

/// One PCPU, the given domains as `(name, sched table, workload table)`.
fn one_pcpu(globals: &str, duration_s: f64, doms: &[(&str, &str, &str)]) -> String {
    let mut s = format!(
        "[host]\npcpus = 1\n[scheduler]\nname = \"sedf\"\n{globals}\n[run]\nduration_s = {duration_s}\n"
    );
    for (name, sched, wl) in doms {
        s.push_str(&format!("[[domain]]\nname = \"{name}\"\n"));
        if !sched.is_empty() {
            s.push_str(&format!("[domain.sched]\n{sched}\n"));
        }
        s.push_str(&format!("[domain.workload]\n{wl}\n"));
    }
    s
}

const HOG: &str = "kind = \"cpu-hog\"";
const IDLE: &str = "kind = \"idle\"";

// ----- placement and the per-PCPU split -----------------------------------------------

/// Three equal hogs on two PCPUs: Xen 3.0 – 4.2 place vm1 on PCPU 1 (tie
/// to the highest), vm2 on PCPU 0 (fewest), vm3 on PCPU 1 (tie), and nothing
/// ever moves. Each PCPU shares out in 500 µs quanta, so the one unfinished
/// quantum at the end is the only error (0.005 % of 10 s).
#[test]
fn three_hogs_on_two_pcpus_split_100_50_50() {
    for version in ["4.2", "4.1", "3.0.2"] {
        let sim = run_sim(&three_hogs(version, false));
        assert_eq!(
            [
                pcpu_of(&sim, "vm1", 0),
                pcpu_of(&sim, "vm2", 0),
                pcpu_of(&sim, "vm3", 0)
            ],
            [1, 0, 1],
            "{version}"
        );
        assert_near(
            &format!("{version} vm2"),
            sim_cpu_pct(&sim, "vm2"),
            100.0,
            0.01,
        );
        assert_near(
            &format!("{version} vm1"),
            sim_cpu_pct(&sim, "vm1"),
            50.0,
            0.01,
        );
        assert_near(
            &format!("{version} vm3"),
            sim_cpu_pct(&sim, "vm3"),
            50.0,
            0.01,
        );
    }
}

/// Xen 4.3 – 4.5: every VCPU is placed again by SEDF's `pick_cpu` right after
/// creation (the toolstack's affinity call, a PV guest's periodic-timer
/// call), on PCPU `vcpu_id mod n`: every single-VCPU guest shares PCPU 0,
/// which they split in equal quanta, and PCPU 1 stays idle for good. A
/// guest's VCPU 1 goes to PCPU 1, beside Dom0's VCPU 1.
#[test]
fn xen43_repicks_every_vcpu_by_its_id() {
    for version in ["4.3", "4.4", "4.5"] {
        let sim = run_sim(&three_hogs(version, true));
        assert_eq!([pcpu_of(&sim, "dom0", 0), pcpu_of(&sim, "dom0", 1)], [0, 1]);
        for vm in ["vm1", "vm2", "vm3"] {
            assert_eq!(pcpu_of(&sim, vm, 0), 0, "{version} {vm}");
            assert_near(
                &format!("{version} {vm}"),
                sim_cpu_pct(&sim, vm),
                100.0 / 3.0,
                0.05,
            );
        }
    }
    let two = run_sim(
        &one_pcpu("xen_version = \"4.4\"", 0.1, &[("g", "", HOG)])
            .replace("pcpus = 1", "pcpus = 2")
            .replace("name = \"g\"\n", "name = \"g\"\nvcpus = 2\n"),
    );
    assert_eq!([pcpu_of(&two, "g", 0), pcpu_of(&two, "g", 1)], [0, 1]);
}

/// The example of docs/schedulers/placement.md: Xen 3.0, Dom0 with two VCPUs (one
/// per PCPU, idle), then G1, G2, G3: G1 → PCPU 1, G2 → PCPU 0, G3 → PCPU 1.
#[test]
fn xen30_placement_example_with_dom0() {
    let sim = run_sim(&three_hogs("3.0.2", true));
    assert_eq!([pcpu_of(&sim, "dom0", 0), pcpu_of(&sim, "dom0", 1)], [0, 1]);
    assert_eq!(
        [
            pcpu_of(&sim, "vm1", 0),
            pcpu_of(&sim, "vm2", 0),
            pcpu_of(&sim, "vm3", 0)
        ],
        [1, 0, 1]
    );
    assert_near("G2", sim_cpu_pct(&sim, "vm2"), 100.0, 0.01);
    assert_near("G1", sim_cpu_pct(&sim, "vm1"), 50.0, 0.01);
    assert_near("G3", sim_cpu_pct(&sim, "vm3"), 50.0, 0.01);
}

/// On SMT hosts only one thread per core is a candidate (behaviour 2), and
/// which one changed: Xen 3.0 takes the last thread of each core (PCPUs 3
/// and 7 on 2 cores × 4 threads), Xen 4.x the first non-primary thread
/// (PCPUs 1 and 5). Ties go to the highest candidate in both. From 4.3 the
/// re-placement by VCPU id moves them all to PCPU 0.
#[test]
fn smt_placement_by_release() {
    let toml = |version: &str| {
        let mut s = format!(
            "[host]\n[host.topology]\ncores = 2\nthreads = 4\n[scheduler]\nname = \"sedf\"\nxen_version = \"{version}\"\n[run]\nduration_s = 0.1\n"
        );
        for i in 0..4 {
            s.push_str(&format!(
                "[[domain]]\nname = \"g{i}\"\n[domain.workload]\n{HOG}\n"
            ));
        }
        s
    };
    for (version, want) in [
        ("3.0.2", [7, 3, 7, 3]),
        ("4.2", [5, 1, 5, 1]),
        ("4.5", [0, 0, 0, 0]),
    ] {
        let sim = run_sim(&toml(version));
        let got: Vec<u32> = (0..4).map(|i| pcpu_of(&sim, &format!("g{i}"), 0)).collect();
        assert_eq!(got, want, "{version}");
    }
}

// ----- extratime, caps, reservations --------------------------------------------------

/// Extratime off is a hard cap at slice/period even when the host is idle:
/// every period window gets exactly the slice, no more.
#[test]
fn extratime_off_never_exceeds_slice_over_period_on_an_idle_host() {
    let toml = r#"
        [host]
        pcpus = 2
        [scheduler]
        name = "sedf"
        [run]
        duration_s = 2
        [[domain]]
        name = "capped"
        [domain.sched]
        period = 10
        slice = 3
        extratime = false
        [domain.workload]
        kind = "cpu-hog"
    "#;
    let mut sim = vmsched_core::Simulation::new(&scenario(toml)).unwrap();
    // The first wake (t = 0) counts as a short block: the first period
    // starts at the slice, 3 ms, and then every 10 ms.
    let mut prev = 0;
    let mut t = 3 * MS;
    sim.run_until(Time(t)).unwrap();
    assert_eq!(
        running_ns_at(&sim, "capped", Time(t)),
        0,
        "nothing before the first period"
    );
    while t + 10 * MS <= 2000 * MS {
        t += 10 * MS;
        sim.run_until(Time(t)).unwrap();
        let r = running_ns_at(&sim, "capped", Time(t));
        assert_eq!(r - prev, 3 * MS, "period ending at {t} ns");
        prev = r;
    }
    sim.run().unwrap();
    let s = sim.summary(0.0);
    // The second PCPU never runs anything: the domain stays where it was placed.
    let busy: Vec<f64> = s["host"]["pcpus_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["busy_pct"].as_f64().unwrap())
        .collect();
    assert!(busy.contains(&0.0), "one PCPU idle: {busy:?}");
    assert_near("capped share", sim_cpu_pct(&sim, "capped"), 30.0, 0.2);
}

/// With extratime on, the same domain alone takes the whole PCPU.
#[test]
fn extratime_on_takes_the_slack_of_an_idle_pcpu() {
    let sim = run_sim(&one_pcpu(
        "",
        2.0,
        &[("d", "period = 10\nslice = 3\nextratime = true", HOG)],
    ));
    assert!(sim_cpu_pct(&sim, "d") > 99.9, "{}", sim_cpu_pct(&sim, "d"));
}

/// Slack goes to extratime domains only, shared by stride: a 3/10 ms domain
/// with extratime (stride 1024·10/3 = 3413) against a best-effort domain
/// (stride 2^17 = 131072) takes 131072/(131072+3413) = 97.5 % of the slack;
/// the 3/10 ms domain without extratime gets exactly its 30 %.
#[test]
fn extratime_slack_goes_to_extratime_domains_by_stride() {
    let sim = run_sim(&one_pcpu(
        "",
        10.0,
        &[
            ("xa", "period = 10\nslice = 3\nextratime = true", HOG),
            ("xoff", "period = 10\nslice = 3\nextratime = false", HOG),
            ("be", "", HOG),
        ],
    ));
    let (a, off, be) = (
        sim_cpu_pct(&sim, "xa"),
        sim_cpu_pct(&sim, "xoff"),
        sim_cpu_pct(&sim, "be"),
    );
    assert_near("no extratime: exactly its reservation", off, 30.0, 0.01);
    let slack = a - 30.0 + be;
    assert!(slack > 39.5, "slack used: {slack} (40 % minus idle holes)");
    let share = (a - 30.0) / slack;
    assert_near(
        "extratime domain's part of the slack",
        share,
        131072.0 / (131072.0 + 3413.0),
        0.01,
    );
}

/// Reservations that sum to 100 % all hold exactly, with no deadline misses;
/// with extratime and a best-effort competitor they hold as a floor.
#[test]
fn reservations_hold_when_they_sum_to_at_most_100_percent() {
    let doms = |extra: bool| {
        vec![
            (
                "a".to_string(),
                format!("period = 10\nslice = 4\nextratime = {extra}"),
            ),
            (
                "b".to_string(),
                format!("period = 20\nslice = 6\nextratime = {extra}"),
            ),
            (
                "c".to_string(),
                format!("period = 50\nslice = 15\nextratime = {extra}"),
            ),
        ]
    };
    let d = doms(false);
    let sim = run_sim(&one_pcpu(
        "",
        10.0,
        &[
            (&d[0].0, &d[0].1, HOG),
            (&d[1].0, &d[1].1, HOG),
            (&d[2].0, &d[2].1, HOG),
        ],
    ));
    assert_eq!(sim_counter(&sim, "deadline_misses"), 0);
    // The first periods start at each slice (t = 4, 6, 15 ms): at most one
    // slice of each is missing from 10 s.
    assert_near("a", sim_cpu_pct(&sim, "a"), 40.0, 0.05);
    assert_near("b", sim_cpu_pct(&sim, "b"), 30.0, 0.1);
    assert_near("c", sim_cpu_pct(&sim, "c"), 30.0, 0.2);

    let d = doms(true);
    let sim = run_sim(&one_pcpu(
        "",
        10.0,
        &[
            (&d[0].0, "period = 10\nslice = 2\nextratime = true", HOG),
            (&d[1].0, &d[1].1, HOG),
            (&d[2].0, &d[2].1, HOG),
            ("be", "", HOG),
        ],
    ));
    assert_eq!(sim_counter(&sim, "deadline_misses"), 0);
    assert!(
        sim_cpu_pct(&sim, "a") >= 19.9,
        "a {}",
        sim_cpu_pct(&sim, "a")
    );
    assert!(
        sim_cpu_pct(&sim, "b") >= 29.8,
        "b {}",
        sim_cpu_pct(&sim, "b")
    );
    assert!(
        sim_cpu_pct(&sim, "c") >= 29.7,
        "c {}",
        sim_cpu_pct(&sim, "c")
    );
    assert!(sim_cpu_pct(&sim, "be") > 0.0);
}

// ----- behaviour 4: default best effort ------------------------------------------------

/// Xen 4.2–4.5 default: every VCPU best effort, extra weight 1: CPU-bound
/// VCPUs on a PCPU share it equally in 500 µs quanta, about 2000 dispatches
/// per second.
#[test]
fn default_best_effort_shares_equally_in_500us_quanta() {
    let sim = run_sim(&one_pcpu("", 10.0, &[("a", "", HOG), ("b", "", HOG)]));
    assert_near("a", sim_cpu_pct(&sim, "a"), 50.0, 0.01);
    assert_near("b", sim_cpu_pct(&sim, "b"), 50.0, 0.01);
    let n = switches(&sim, "a") + switches(&sim, "b");
    assert!((19_990..=20_010).contains(&n), "{n} switches in 10 s");
    assert_eq!(sim_counter(&sim, "extra_quanta_util"), 20_000);
}

/// Weights with extratime (xl sched-sedf -w) share slack as stride 2^17/w.
#[test]
fn extra_weights_share_proportionally() {
    let sim = run_sim(&one_pcpu(
        "",
        10.0,
        &[("w1", "weight = 1", HOG), ("w3", "weight = 3", HOG)],
    ));
    assert_near("w1", sim_cpu_pct(&sim, "w1"), 25.0, 0.05);
    assert_near("w3", sim_cpu_pct(&sim, "w3"), 75.0, 0.05);
}

// ----- behaviour 5: Dom0 defaults by version -------------------------------------------

/// 3.0.3–4.1: Dom0 has 15 ms per 20 ms reserved plus an equal share of the
/// slack: a CPU-bound Dom0 gets 75 % + 12.5 %, the guest on its PCPU 12.5 %.
/// 4.2+: Dom0 is best effort like everyone (50/50). 3.0.0–3.0.2: Dom0's
/// extra weight is 0, so its slack stride is 1024·20/15 = 1365 against
/// 131072: the guest gets 1365/(131072+1365) of the 25 % slack.
#[test]
fn dom0_defaults_by_version() {
    // Skip the first 15 ms, before Dom0's first period starts (all slack).
    let one = |g: &str, d: &[(&str, &str, &str)]| {
        run_sim(&one_pcpu(g, 10.1, d).replace("[run]\n", "[run]\nwarmup_s = 0.1\n"))
    };
    let doms = [("dom0", "", HOG), ("guest", "", HOG)];
    let sim = one("xen_version = \"4.1\"", &doms);
    assert_near("4.1 dom0", sim_cpu_pct(&sim, "dom0"), 87.5, 0.05);
    assert_near("4.1 guest", sim_cpu_pct(&sim, "guest"), 12.5, 0.05);

    let sim = one("xen_version = \"4.2\"", &doms);
    assert_near("4.2 dom0", sim_cpu_pct(&sim, "dom0"), 50.0, 0.05);

    let sim = one("xen_version = \"3.0.2\"", &doms);
    assert_near(
        "3.0.2 guest",
        sim_cpu_pct(&sim, "guest"),
        25.0 * 1365.0 / (131072.0 + 1365.0),
        0.05,
    );

    // An idle Dom0 leaves everything to the guest.
    let sim = one(
        "xen_version = \"4.1\"",
        &[("dom0", "", IDLE), ("guest", "", HOG)],
    );
    assert!(sim_cpu_pct(&sim, "guest") > 99.9);
}

// ----- behaviour 7: short blocks punished, long blocks restart the period ---------------

/// A reserved domain (10 ms per 20 ms, no extratime) whose guest wants 2 ms
/// every 5 ms (40 %, less than its 50 % reservation) catches up at each
/// period start, halts, and wakes again inside the same period: that short
/// block forfeits the rest of the slice (one 500 µs penalty quantum is all
/// it gets), so it waits with work queued until its next period although
/// reserved time is left.
#[test]
fn short_blocks_lose_the_rest_of_the_slice() {
    let r = "period = 20\nslice = 10\nextratime = false";
    let io = "kind = \"duty-cycle\"\nutil_pct = 40\nperiod_ms = 5\nrandom_phase = false";
    let sim = run_sim(&one_pcpu("", 10.0, &[("r", r, io), ("be", "", HOG)]));
    // One short block per 20 ms period, each repaid by one penalty quantum.
    assert!(
        (495..=501).contains(&sim_counter(&sim, "short_blocks")),
        "{}",
        sim_counter(&sim, "short_blocks")
    );
    assert!(
        (495..=501).contains(&sim_counter(&sim, "extra_quanta_penalty")),
        "{}",
        sim_counter(&sim, "extra_quanta_penalty")
    );
    let d = dom_summary(&sim, "r");
    let waiting = d["runnable_pct"].as_f64().unwrap();
    assert!(
        waiting > 40.0,
        "runnable (work queued, not running) {waiting} %"
    );
    assert!(
        sim_cpu_pct(&sim, "r") < 50.0,
        "less than the reservation: {}",
        sim_cpu_pct(&sim, "r")
    );
    let missed = d["workload"]["missed_periods"].as_u64().unwrap();
    assert!(missed > 1000, "missed periods {missed}");
}

/// The same domain under each tree's short-block rule. The guest catches up
/// at each period start, halts with about 6 ms of its 10 ms slice unused,
/// and wakes 1–3 ms later inside the same period: a short block whose loss
/// is the unused slice. Xen ≤ 3.0.2 (`desched_extra_dom`) keeps the domain
/// on the penalty queue, which outranks the best-effort hog's slack, and
/// repays the loss 500 µs at a time until it is repaid; from 3.0.3
/// (`1d13b43fea`, 17 June 2006) one quantum clears it. So under 3.0.2 the
/// domain gets its demand (40 %, inside its 50 % reservation) in
/// several penalty quanta per block and its work rarely waits, and under
/// 3.0.3 one quantum per block and its work waits for the next period.
#[test]
fn short_block_rule_by_tree() {
    let r = "period = 20\nslice = 10\nextratime = false";
    let io = "kind = \"duty-cycle\"\nutil_pct = 40\nperiod_ms = 5\nrandom_phase = false";
    let mut per_block = Vec::new();
    for version in ["3.0.2", "3.0.3", "4.1"] {
        let sim = run_sim(&one_pcpu(
            &format!("xen_version = \"{version}\""),
            10.0,
            &[("r", r, io), ("be", "", HOG)],
        ));
        let blocks = sim_counter(&sim, "short_blocks");
        let pen = sim_counter(&sim, "extra_quanta_penalty");
        assert!(blocks >= 400, "{version}: short blocks {blocks}");
        let ratio = pen as f64 / blocks as f64;
        let d = dom_summary(&sim, "r");
        let waiting = d["runnable_pct"].as_f64().unwrap();
        let missed = d["workload"]["missed_periods"].as_u64().unwrap();
        if version == "3.0.2" {
            // Repaid until repaid: about 20 quanta per block (the ~10 ms
            // lost), so the work never waits long for the next period.
            assert!(
                ratio > 10.0,
                "{version}: penalty quanta per short block {ratio}"
            );
            assert!(
                waiting < 2.0,
                "{version}: runnable, not running {waiting} %"
            );
            assert!(missed < 50, "{version}: missed periods {missed}");
        } else {
            // One quantum per block, however large the loss: the rest of
            // the work waits for the next period.
            assert!((0.98..=1.01).contains(&ratio), "{version}: {ratio}");
            assert!(
                waiting > 40.0,
                "{version}: runnable, not running {waiting} %"
            );
            assert!(missed > 1000, "{version}: missed periods {missed}");
        }
        per_block.push(ratio);
    }
    assert_eq!(per_block[1], per_block[2], "3.0.3 and 4.1 share the rule");
}

/// Xen 4.2+ SEDF (`4da8a5edbd`, 4 January 2012): every domain, Dom0
/// included, is best effort (100 ms, slice 0, extratime, extra weight 1).
/// A best-effort VCPU's next period always starts in the future, so when it
/// wakes it joins the utilisation queue "in extra time"; a best-effort hog
/// running a utilisation quantum is not interrupted (`should_switch`), so
/// the waker waits for the rest of the hog's 500 µs quantum. Dom0 has no
/// reservation. Under Credit the same waker is BOOSTed and preempts the hog
/// at once (the hog has run past the ratelimit).
#[test]
fn xen44_best_effort_wake_waits_out_the_quantum() {
    let doms = |sched: &str| {
        format!(
            "[host]\npcpus = 1\n[scheduler]\nname = \"{sched}\"\n{}[run]\nduration_s = 10\n\
             [[domain]]\nname = \"dom0\"\n[domain.workload]\nkind = \"duty-cycle\"\nutil_pct = 1\nperiod_ms = 10\n\
             [[domain]]\nname = \"hog\"\n[domain.workload]\nkind = \"cpu-hog\"\n",
            if sched == "sedf" { "xen_version = \"4.4\"\n" } else { "" }
        )
    };
    let sedf = run_sim(&doms("sedf"));
    // No reservation, so no penalty (a wake after its period began is a
    // short block with nothing lost): only utilisation quanta.
    assert_eq!(sim_counter(&sedf, "extra_quanta_penalty"), 0);
    let lat = &dom_summary(&sedf, "dom0")["vcpus"][0]["wake_latency_us"];
    let (mean, max) = (lat["mean"].as_f64().unwrap(), lat["max"].as_f64().unwrap());
    assert!(max <= 500.0 + 1.0, "never more than one quantum: {lat}");
    assert!(max > 400.0, "waits for the hog's quantum: {lat}");
    assert!(mean > 100.0, "typically part of a quantum: {lat}");
    let credit = run_sim(&doms("credit"));
    let lat = &dom_summary(&credit, "dom0")["vcpus"][0]["wake_latency_us"];
    assert!(
        lat["mean"].as_f64().unwrap() < mean / 4.0,
        "Credit's BOOST preempts: {lat}"
    );
}

/// A long-block waker starts a fresh period at once (deadline now + period)
/// and preempts a reserved domain with a later deadline: no wake-up delay.
#[test]
fn long_block_wakers_restart_their_period_and_preempt() {
    let sim = run_sim(
        &one_pcpu(
            "",
            10.2,
            &[
                (
                    "rt",
                    "period = 10\nslice = 5\nextratime = false",
                    "kind = \"duty-cycle\"\nutil_pct = 2\nperiod_ms = 100",
                ),
                ("big", "period = 100\nslice = 60\nextratime = false", HOG),
                ("be", "", HOG),
            ],
        )
        // The very first wake is not a long block (Xen sets the first deadline
        // to now + slice): skip it.
        .replace("[run]\n", "[run]\nwarmup_s = 0.2\n"),
    );
    assert!(sim_counter(&sim, "long_blocks") >= 97);
    let lat = &dom_summary(&sim, "rt")["vcpus"][0]["wake_latency_us"];
    assert!(lat["max"].as_f64().unwrap() < 1.0, "wake latency {lat}");
    assert_near("rt gets its demand", sim_cpu_pct(&sim, "rt"), 2.0, 0.05);
}

// ----- behaviour 8: idle holes ---------------------------------------------------------

/// Best-effort work cannot use a gap shorter than 500 µs before the next
/// waiting period: with 9.7 ms reserved per 10 ms the 0.3 ms gaps stay idle.
#[test]
fn gaps_shorter_than_a_quantum_stay_idle() {
    let toml = one_pcpu(
        "",
        5.0,
        &[
            ("rt", "period = 10\nslice = 9.7\nextratime = false", HOG),
            ("be", "", HOG),
        ],
    )
    .replace("[run]\n", "[run]\nwarmup_s = 0.1\n");
    let sim = run_sim(&toml);
    assert_eq!(running_ns(&sim, "be"), 0, "best effort never runs");
    assert_near("rt", sim_cpu_pct(&sim, "rt"), 97.0, 0.01);
    assert!(sim_counter(&sim, "idle_holes") >= 490);
    let busy = sim.summary(0.0)["host"]["pcpus_detail"][0]["busy_pct"]
        .as_f64()
        .unwrap();
    assert_near("pcpu busy", busy, 97.0, 0.01);
}

// ----- behaviour 9: overload -----------------------------------------------------------

/// Reservations of 120 % miss deadlines; each miss re-aligns the deadline
/// to the period grid with a fresh slice, and the PCPU stays fully busy
/// (after the first 6 ms, before the first period starts). EDF serves equal
/// deadlines first come first served, so the split is uneven, but nobody
/// exceeds its slice/period.
#[test]
fn overcommitted_reservations_miss_deadlines() {
    let r = "period = 10\nslice = 6\nextratime = false";
    let toml = one_pcpu("", 5.0, &[("a", r, HOG), ("b", r, HOG)])
        .replace("[run]\n", "[run]\nwarmup_s = 0.1\n");
    let sim = run_sim(&toml);
    // 500 periods each in 5 s; the later of the two misses about one in three.
    let misses = sim_counter(&sim, "deadline_misses");
    assert!((150..=250).contains(&misses), "{misses}");
    let (a, b) = (sim_cpu_pct(&sim, "a"), sim_cpu_pct(&sim, "b"));
    assert_near("busy", a + b, 100.0, 0.01);
    // The 4.9 s window may cut one 6 ms slice at each end: 6/4900 = 0.13 %.
    assert!(a <= 60.13 && b <= 60.13, "a {a} b {b}");
}

// ----- behaviour 10: weight-driven real-time slices ------------------------------------

/// The reference's example: a pre-4.2 Dom0 reserves 15/20 ms (75 ms per
/// 100 ms); weight-driven A (w = 1) and B (w = 3) on the same PCPU get
/// 1/4 and 3/4 of 95 − 75 = 20 ms per 100 ms: 5 % and 15 %.
#[test]
fn weight_driven_slices_per_pcpu() {
    let sim = run_sim(&one_pcpu(
        "xen_version = \"4.1\"",
        10.0,
        &[
            ("dom0", "", HOG),
            ("a", "weight = 1\nextratime = false", HOG),
            ("b", "weight = 3\nextratime = false", HOG),
        ],
    ));
    assert_near("a", sim_cpu_pct(&sim, "a"), 5.0, 0.05);
    assert_near("b", sim_cpu_pct(&sim, "b"), 15.0, 0.05);
    assert_near("dom0 takes the rest", sim_cpu_pct(&sim, "dom0"), 80.0, 0.1);
}

// ----- behaviour 11: the latency hint --------------------------------------------------

/// The latency hint changes nothing in a released build; with the
/// `latency_hint` variant a long-block waker's period shortens to it.
#[test]
fn latency_hint_does_nothing_unless_the_variant_is_built() {
    let doms = |lat: &str| {
        one_pcpu(
            "LATENCY_HINT",
            5.0,
            &[
                (
                    "rt",
                    &format!("period = 40\nslice = 20\nextratime = false\nlatency = {lat}"),
                    "kind = \"duty-cycle\"\nutil_pct = 5\nperiod_ms = 97",
                ),
                ("big", "period = 100\nslice = 50\nextratime = false", HOG),
                ("be", "", HOG),
            ],
        )
    };
    let shares = |toml: &str| {
        let sim = run_sim(toml);
        (
            running_ns(&sim, "rt"),
            running_ns(&sim, "big"),
            running_ns(&sim, "be"),
            sim.summary(0.0)["scheduler_counters"].clone(),
        )
    };
    let off = |s: String| s.replace("LATENCY_HINT", "");
    let on = |s: String| s.replace("LATENCY_HINT", "latency_hint = true");
    assert_eq!(
        shares(&off(doms("0"))),
        shares(&off(doms("2"))),
        "latency ignored in released builds"
    );
    assert_ne!(
        shares(&on(doms("0"))),
        shares(&on(doms("2"))),
        "the variant uses the hint"
    );
}

// ----- parameters ---------------------------------------------------------------------

#[test]
fn cross_parameter_validation() {
    let base = |sched: &str, globals: &str| one_pcpu(globals, 1.0, &[("d", sched, HOG)]);
    let e = rejected(&base("period = 10\nslice = 20", ""));
    assert_eq!(e.path, "domain[0].sched.slice");
    assert!(e.message.contains("slice <= period"), "{e}");
    let e = rejected(&base("period = 0\nslice = 0", ""));
    assert_eq!(e.path, "domain[0].sched.period");
    let e = rejected(&base(
        "period = 0.005\nslice = 0.001",
        "xen_version = \"4.5\"",
    ));
    assert_eq!(e.path, "domain[0].sched.period", "{e}");
    // 3.0.0 had no lower limit (but slice must be > 0: Xen divided by it).
    scenario(&base(
        "period = 0.005\nslice = 0.001",
        "xen_version = \"3.0.0\"",
    ));
    let e = rejected(&base("period = 10\nslice = 0", "xen_version = \"3.0.0\""));
    assert_eq!(e.path, "domain[0].sched.slice");
    let e = rejected(&base("weight = 2\nperiod = 10\nslice = 2", ""));
    assert!(e.message.contains("weight"), "{e}");
    let e = rejected(&base("period = 10", ""));
    assert_eq!(e.path, "domain[0].sched.slice");
    assert!(e.message.contains("is missing"), "{e}");
    let e = rejected(&base("extratime = false", ""));
    assert_eq!(e.path, "domain[0].sched.extratime");
    // SEDF was removed in Xen 4.6: a later release is out of range.
    let e = rejected(&base("", "xen_version = \"4.6\""));
    assert_eq!(e.path, "scheduler.xen_version");
    assert!(e.message.contains("out of range"), "{e}");
    let e = rejected(&base("cap = 50", ""));
    assert!(e.message.contains("credit"), "cap belongs to credit: {e}");
}

/// `[[action]]`s go through `adjust` as `xl sched-sedf` would: a best-effort
/// hog capped to 3/10 ms at 1 s. As coded, the change keeps its current
/// deadline (up to one 100 ms best-effort period away), so it idles until
/// that period boundary and then runs exactly 3 ms in every 10 ms.
#[test]
fn run_time_adjustment() {
    let toml = format!(
        "{}\n[[action]]\nat_s = 1\ndomain = \"d\"\nperiod = 10\nslice = 3\nextratime = false\n",
        one_pcpu("", 2.0, &[("d", "", HOG)])
    );
    let mut sim = vmsched_core::Simulation::new(&scenario(&toml)).unwrap();
    sim.run_until(Time(1000 * MS)).unwrap();
    assert_eq!(
        running_ns_at(&sim, "d", Time(1000 * MS)),
        1000 * MS,
        "best effort alone: everything"
    );
    sim.run_until(Time(1200 * MS)).unwrap();
    let at_1200 = running_ns_at(&sim, "d", Time(1200 * MS));
    assert!(at_1200 - 1000 * MS <= 60 * MS, "{}", at_1200 - 1000 * MS);
    sim.run().unwrap();
    // 80 whole 10 ms periods; the window may cut one slice: ±3 ms.
    let share = (running_ns(&sim, "d") - at_1200) as f64 / (800 * MS) as f64 * 100.0;
    assert_near("capped after the action", share, 30.0, 0.375);
}

// ----- generic invariants -------------------------------------------------------------

#[test]
fn invariants_hold_across_versions_and_modes() {
    let dom_sched = [
        "",
        "period = 10\nslice = 3\nextratime = false",
        "weight = 2",
        "period = 30\nslice = 10\nlatency = 5",
        "",
    ];
    for globals in [
        "xen_version = \"3.0.0\"",
        "xen_version = \"4.1\"",
        "",
        "latency_hint = true",
    ] {
        for pcpus in [1, 3] {
            check_invariants(&mixed_flat("sedf", globals, pcpus, dom_sched), 250_000);
        }
    }
    check_invariants(
        &mixed_flat(
            "sedf",
            "xen_version = \"4.1\"",
            2,
            [
                "",
                "",
                "weight = 3\nextratime = false",
                "weight = 1\nextratime = false",
                "",
            ],
        ),
        250_000,
    );
}
