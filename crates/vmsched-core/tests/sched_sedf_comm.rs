//! Communication-aware SEDF (`sedf-comm`, Govindan et al. 2009): the
//! issue's "must hold" list and the literature's claims H (54, 55, 65) in
//! direction, on one PCPU with the split-driver I/O path.
//!
//! * with every preference off it is SEDF, exactly, on I/O scenarios;
//! * a web server beside CPU-bound domains with reservations responds faster
//!   than under SEDF;
//! * the preference never costs a reservation: an always-runnable reserved
//!   domain still gets its slice in every period (so the unfairness lasts
//!   less than a period), and one without extra time never gets more;
//!   property-tested over random I/O scenarios;
//! * with I/O accounting an I/O-heavy domain's own CPU plus the driver
//!   domain's time for it stays within its reservation, and the driver
//!   domain is credited that time.

mod common;
use common::*;
use proptest::prelude::*;
use serde_json::Value as Json;
use vmsched_core::Time;

const MS: u64 = 1_000_000;

/// One PCPU: the driver domain (idle, with `[domain.sched]` lines
/// `dom0`), then `(name, [domain.sched] lines, workload lines)` for each
/// guest.
fn one_pcpu(
    sched: &str,
    globals: &str,
    profile: &str,
    secs: f64,
    warmup: f64,
    dom0: &str,
    guests: &[(&str, &str, &str)],
) -> String {
    let mut s = format!(
        "[host]\npcpus = 1\nprofile = \"{profile}\"\n[scheduler]\nname = \"{sched}\"\n{globals}\n\
         [run]\nduration_s = {secs}\nwarmup_s = {warmup}\n\
         [[domain]]\nname = \"dom0\"\n[domain.sched]\n{dom0}\n[domain.workload]\nkind = \"idle\"\n"
    );
    for (name, sched, wl) in guests {
        s += &format!("[[domain]]\nname = \"{name}\"\n");
        if !sched.is_empty() {
            s += &format!("[domain.sched]\n{sched}\n");
        }
        s += &format!("[domain.workload]\n{wl}\n");
    }
    s
}

/// A built-in profile's `net_rx_ns` (equal to its `net_tx_ns` in every
/// built-in profile), read from its TOML.
fn profile_net_ns(name: &str) -> u64 {
    let text = vmsched_core::host::BUILTIN_PROFILES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1;
    let value = |key: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.trim().strip_prefix('='))
            .and_then(|v| v.split('#').next()?.trim().parse().ok())
            .unwrap()
    };
    assert_eq!(value("net_rx_ns"), value("net_tx_ns"));
    value("net_rx_ns")
}

/// Every preference off: what SEDF does.
const PLAIN: &str = "prefer_dom0 = false\nprefer_recipient = false\nprefer_sender = false";

/// The driver domain's reservation beside the web server: 2 ms per 20 ms.
const DOM0_20: &str = "period = 20\nslice = 2";

/// The web server of claims 54/55 beside five CPU-bound domains, all with
/// the same reservation, 15 ms per 100 ms, and extratime (`hog_extra` for
/// the CPU-bound ones); the driver domain has 2 ms per 20 ms (together
/// 100 %). Poisson arrivals at `rate` req/s; warm-up 1 s of 12 s.
fn web_beside_hogs(sched: &str, globals: &str, rate: f64, seed: u64, hog_extra: bool) -> String {
    web_beside_hogs_with(sched, globals, rate, seed, hog_extra, DOM0_20)
}

/// [`web_beside_hogs`] with the driver domain's `[domain.sched]` lines.
fn web_beside_hogs_with(
    sched: &str,
    globals: &str,
    rate: f64,
    seed: u64,
    hog_extra: bool,
    dom0: &str,
) -> String {
    let web = format!("kind = \"web-server\"\nrate = {rate}\narrivals = \"poisson\"");
    let hog_sched = format!("period = 100\nslice = 15\nextratime = {hog_extra}");
    let mut guests = vec![("web", "period = 100\nslice = 15", web.as_str())];
    let names = ["hog1", "hog2", "hog3", "hog4", "hog5"];
    for n in names {
        guests.push((n, hog_sched.as_str(), "kind = \"cpu-hog\""));
    }
    one_pcpu(
        sched,
        &format!("xen_version = \"3.0.2\"\n{globals}"),
        "default",
        12.0,
        1.0,
        dom0,
        &guests,
    )
    .replace("[run]\n", &format!("[run]\nseed = {seed}\n"))
}

fn response(s: &Json, key: &str) -> f64 {
    domain(s, "web")["workload"]["response_ms"][key]
        .as_f64()
        .unwrap()
}

// ----- SEDF with every preference off ---------------------------------------------------

/// With the three preferences and the accounting off, sedf-comm makes
/// SEDF's every decision: on I/O scenarios (web server, TCP streams both
/// ways, disk and database guests, two PCPUs, reserved, best-effort and
/// capped domains) the per-domain and host results are identical, and so
/// are SEDF's own counters.
#[test]
fn with_every_preference_off_it_is_sedf() {
    let two_pcpus = |sched: &str, globals: &str| {
        one_pcpu(
            sched,
            &format!("xen_version = \"3.0.3\"\n{globals}"),
            "cherkasova2007",
            3.0,
            0.5,
            "",
            &[
                (
                    "web",
                    "period = 20\nslice = 5",
                    "kind = \"web-server\"\nrate = 300\narrivals = \"poisson\"",
                ),
                (
                    "net",
                    "period = 10\nslice = 3\nextratime = false",
                    "kind = \"tcp-stream\"\ndirection = \"receive\"",
                ),
                (
                    "db",
                    "",
                    "kind = \"oltp\"\nrows = 10000000\nbuffer_pool_mb = 256",
                ),
                ("hog", "period = 50\nslice = 10", "kind = \"cpu-hog\""),
            ],
        )
        // Two PCPUs, a CPU-bound two-VCPU driver domain and database.
        .replace("pcpus = 1", "pcpus = 2")
        .replace("name = \"dom0\"\n", "name = \"dom0\"\nvcpus = 2\n")
        .replace("name = \"db\"\n", "name = \"db\"\nvcpus = 2\n")
        .replacen("kind = \"idle\"", "kind = \"cpu-stress\"\nthreads = 1", 1)
    };
    let send_and_disk = |sched: &str, globals: &str| {
        one_pcpu(
            sched,
            &format!("xen_version = \"4.5\"\n{globals}"),
            "thesis2015",
            3.0,
            0.0,
            "period = 20\nslice = 4",
            &[
                (
                    "tx",
                    "period = 30\nslice = 6",
                    "kind = \"tcp-stream\"\ndirection = \"send\"",
                ),
                ("rd", "", "kind = \"disk-read\""),
                (
                    "io",
                    "period = 10\nslice = 2\nextratime = false",
                    "kind = \"iozone\"\nmode = \"rand-read\"",
                ),
                ("hog", "", "kind = \"cpu-hog\""),
            ],
        )
    };
    // A scenario, built for a scheduler and extra `[scheduler]` lines.
    type Make = Box<dyn Fn(&str, &str) -> String>;
    let scenarios: [(&str, Make); 3] = [
        (
            "web beside hogs",
            Box::new(|s: &str, g: &str| web_beside_hogs(s, g, 60.0, 1, true)),
        ),
        ("two PCPUs, mixed I/O", Box::new(two_pcpus)),
        ("send, disk, iozone", Box::new(send_and_disk)),
    ];
    for (what, make) in scenarios {
        let sedf = run(&make("sedf", ""));
        let comm = run(&make(
            "sedf-comm",
            &format!("{PLAIN}\nio_accounting = false"),
        ));
        assert_eq!(sedf["domains"], comm["domains"], "{what}: domains differ");
        assert_eq!(sedf["host"], comm["host"], "{what}: host differs");
        for (name, v) in sedf["scheduler_counters"].as_object().unwrap() {
            assert_eq!(
                &comm["scheduler_counters"][name], v,
                "{what}: SEDF counter {name}"
            );
        }
        assert_eq!(counter(&comm, "comm_preferred"), 0, "{what}");
        // The scenario does exercise the I/O path.
        assert!(
            domain(&sedf, "dom0")["xenmon"]["io_events"]
                .as_u64()
                .unwrap()
                > 1000,
            "{what}: too little I/O to compare"
        );
    }
}

// ----- the preference ---------------------------------------------------------------

/// Claims 54/55, in direction: a web server with the same reservation as
/// five CPU-bound neighbours (TPC-W beside five CPU-intensive domains) waits
/// for them under SEDF; preferring the domains packets wait for, within
/// their reservations, shortens its mean response time (measured: 29.4 →
/// 24.0 ms with seed 1, 29.3 → 21.5 ms with seed 2, about −18 % and −27 %;
/// the paper reports −20 % to −35 %) and its 95th percentile, at the same
/// throughput, while every neighbour keeps at least its reservation and no
/// deadline is missed.
#[test]
fn a_web_server_beside_cpu_bound_domains_responds_faster_than_under_sedf() {
    for seed in [1, 2] {
        let sedf = run(&web_beside_hogs("sedf", "", 20.0, seed, true));
        let comm = run(&web_beside_hogs("sedf-comm", "", 20.0, seed, true));
        let (m0, m1) = (response(&sedf, "mean"), response(&comm, "mean"));
        assert!(
            m1 < 0.9 * m0,
            "seed {seed}: mean response {m1:.2} ms under sedf-comm, {m0:.2} ms under SEDF"
        );
        assert!(
            response(&comm, "p95") <= response(&sedf, "p95"),
            "seed {seed}"
        );
        let tput = |s: &Json| {
            domain(s, "web")["workload"]["throughput_req_s"]
                .as_f64()
                .unwrap()
        };
        assert_near("throughput", tput(&comm), tput(&sedf), 0.5);
        for i in 1..=5 {
            let h = format!("hog{i}");
            assert!(
                cpu_pct(&comm, &h) >= 15.0 - 0.2,
                "{h}: {}",
                cpu_pct(&comm, &h)
            );
        }
        assert!(counter(&comm, "comm_preferred") > 0);
        assert_eq!(counter(&comm, "deadline_misses"), 0);
    }
}

/// Each preference is a switch of its own: with only it on, the scheduler
/// reorders (for the driver domain's backlog, the web server's packets, its
/// replies) and the run differs; with all off it never reorders. For the
/// driver domain's preference it has the guests' period (10 ms per 100 ms):
/// with its 20 ms period of the other tests, EDF already runs it ahead of
/// the guests and there is nothing to reorder for it. Preferring recipients
/// alone gives most of the improvement of the response-time test.
#[test]
fn each_preference_is_a_switch_of_its_own() {
    let only = |on: &str, dom0: &str| {
        let mut g = String::new();
        for p in ["prefer_dom0", "prefer_recipient", "prefer_sender"] {
            g += &format!("{p} = {}\n", p == on);
        }
        run(&web_beside_hogs_with("sedf-comm", &g, 60.0, 1, true, dom0))
    };
    let dom0_100 = "period = 100\nslice = 10";
    for (p, dom0) in [
        ("prefer_dom0", dom0_100),
        ("prefer_recipient", DOM0_20),
        ("prefer_sender", DOM0_20),
    ] {
        let none = run(&web_beside_hogs_with(
            "sedf-comm",
            PLAIN,
            60.0,
            1,
            true,
            dom0,
        ));
        assert_eq!(counter(&none, "comm_preferred"), 0);
        let s = only(p, dom0);
        assert!(
            counter(&s, "comm_preferred") > 0,
            "{p} alone never reordered"
        );
        assert_ne!(s["domains"], none["domains"], "{p} alone changed nothing");
    }
    let none = run(&web_beside_hogs("sedf-comm", PLAIN, 20.0, 1, true));
    let mut g = String::new();
    for p in ["prefer_dom0", "prefer_recipient", "prefer_sender"] {
        g += &format!("{p} = {}\n", p == "prefer_recipient");
    }
    let recipient = run(&web_beside_hogs("sedf-comm", &g, 20.0, 1, true));
    assert!(response(&recipient, "mean") < 0.9 * response(&none, "mean"));
}

/// The web server of [`web_beside_hogs`] (seed 1), at 60 req/s of 2 ms of
/// CPU each (12 % of the PCPU), with `web` as its `[domain.sched]` lines.
fn web_with_reservation(web: &str) -> Json {
    let wl = "kind = \"web-server\"\nrate = 60\narrivals = \"poisson\"\nrequest_cpu_us = 2000";
    let hog = "period = 100\nslice = 15\nextratime = true";
    let mut guests = vec![("web", web, wl)];
    for n in ["hog1", "hog2", "hog3", "hog4", "hog5"] {
        guests.push((n, hog, "kind = \"cpu-hog\""));
    }
    run(&one_pcpu(
        "sedf-comm",
        "xen_version = \"3.0.2\"",
        "default",
        12.0,
        1.0,
        DOM0_20,
        &guests,
    ))
}

/// `comm_not_eligible` counts the decisions at which a more
/// network-intensive VCPU than any the rule may prefer waited for its next
/// period, having received its slice in the current one: a web server needing
/// 12 % of the PCPU with a reservation of 1 ms per 100 ms (used up early in
/// every period) is passed over that way far more often than it is
/// preferred, and far more often than with a reservation that covers its
/// need (15 ms per 100 ms). The
/// count is a diagnosis: with every preference off nothing is counted.
#[test]
fn a_domain_that_has_received_its_slice_is_counted_not_eligible() {
    let small = web_with_reservation("period = 100\nslice = 1");
    let ample = web_with_reservation("period = 100\nslice = 15");
    let (n_small, n_ample) = (
        counter(&small, "comm_not_eligible"),
        counter(&ample, "comm_not_eligible"),
    );
    assert!(
        n_small > 10 * counter(&small, "comm_preferred").max(1),
        "{n_small} not eligible, {} preferred",
        counter(&small, "comm_preferred")
    );
    assert!(n_small > 5 * n_ample.max(1), "{n_small} vs {n_ample}");
    let none = run(&web_beside_hogs("sedf-comm", PLAIN, 60.0, 1, true));
    assert_eq!(counter(&none, "comm_not_eligible"), 0);
}

/// The two comparison switches, off by default, each change the decisions:
/// `prefer_in_slack` also prefers, in extra time, a more intensive VCPU
/// that has received its slice (the web server of 1 ms per 100 ms: more
/// preferred decisions, fewer passed over as not eligible, a different run);
/// `decide_on_wake` asks the PCPU to decide again when a preferable VCPU
/// wakes, so the run differs; neither costs a CPU-bound domain its slice.
#[test]
fn the_comparison_switches_change_the_decisions() {
    let with = |globals: &str| {
        let wl = "kind = \"web-server\"\nrate = 60\narrivals = \"poisson\"\nrequest_cpu_us = 2000";
        let hog = "period = 100\nslice = 15\nextratime = true";
        let mut guests = vec![("web", "period = 100\nslice = 1", wl)];
        for n in ["hog1", "hog2", "hog3", "hog4", "hog5"] {
            guests.push((n, hog, "kind = \"cpu-hog\""));
        }
        run(&one_pcpu(
            "sedf-comm",
            &format!("xen_version = \"3.0.2\"\n{globals}"),
            "default",
            12.0,
            1.0,
            DOM0_20,
            &guests,
        ))
    };
    let base = with("");
    let slack = with("prefer_in_slack = true");
    assert!(counter(&slack, "comm_preferred") > 2 * counter(&base, "comm_preferred"));
    assert!(counter(&slack, "comm_not_eligible") < counter(&base, "comm_not_eligible"));
    assert_ne!(slack["domains"], base["domains"]);
    let wake = with("decide_on_wake = true");
    assert_ne!(wake["domains"], base["domains"]);
    for s in [&slack, &wake] {
        assert_eq!(counter(s, "deadline_misses"), 0);
        for i in 1..=5 {
            let h = format!("hog{i}");
            assert!(cpu_pct(s, &h) >= 15.0 - 0.2, "{h}: {}", cpu_pct(s, &h));
        }
    }
}

/// Running sampled every `step` ns: per domain, the running ns at each sample.
fn sample(toml: &str, step: u64) -> (Vec<u64>, Vec<Vec<u64>>, Json) {
    let mut sim = sim(toml);
    let end = sim.scenario().run.duration_ns;
    let names: Vec<String> = sim.domains().iter().map(|d| d.name.clone()).collect();
    let (mut at, mut ran) = (Vec::new(), vec![Vec::new(); names.len()]);
    let mut t = 0;
    while t < end {
        t = (t + step).min(end);
        sim.run_until(Time(t)).unwrap();
        at.push(t);
        for (i, n) in names.iter().enumerate() {
            ran[i].push(running_ns_at(&sim, n, Time(t)));
        }
    }
    sim.run().unwrap();
    (at, ran, sim.summary(0.0))
}

/// Over every window of `len` ns between samples (from `from` on), the
/// least and the most a domain ran.
fn window_extremes(at: &[u64], ran: &[u64], len: u64, from: u64) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0);
    for i in 0..at.len() {
        if at[i] < from {
            continue;
        }
        if let Some(j) = (i..at.len()).find(|&j| at[j] >= at[i] + len) {
            if at[j] == at[i] + len {
                lo = lo.min(ran[j] - ran[i]);
                hi = hi.max(ran[j] - ran[i]);
            }
        }
    }
    (lo, hi)
}

/// The preference is bounded by one period: CPU-bound domains holding 15 ms
/// per 100 ms without extra time, beside the preferred web server and the
/// driver domain, get their slice in every period, exactly — any window of
/// two periods holds one whole period of theirs, so at least 15 ms, and
/// overlaps at most three, so at most 45 ms — under SEDF and sedf-comm
/// alike, with no deadline miss.
#[test]
fn the_preference_never_costs_a_reservation() {
    for sched in ["sedf", "sedf-comm"] {
        let toml = web_beside_hogs(sched, "", 60.0, 1, false);
        let (at, ran, s) = sample(&toml, MS);
        assert_eq!(counter(&s, "deadline_misses"), 0, "{sched}");
        if sched == "sedf-comm" {
            assert!(
                counter(&s, "comm_preferred") > 20,
                "{sched}: {}",
                counter(&s, "comm_preferred")
            );
        }
        for (i, d) in s["domains"].as_array().unwrap().iter().enumerate() {
            if !d["name"].as_str().unwrap().starts_with("hog") {
                continue;
            }
            // From the end of the 1 s warm-up (the counters restart there).
            let (lo, hi) = window_extremes(&at, &ran[i], 200 * MS, 1000 * MS);
            assert!(
                lo >= 15 * MS,
                "{sched} {}: {lo} ns in a 200 ms window",
                d["name"]
            );
            assert!(
                hi <= 45 * MS,
                "{sched} {}: {hi} ns in a 200 ms window",
                d["name"]
            );
        }
    }
}

/// The preference is only taken while it leaves every other reservation
/// able to meet its deadline: a busy web server (2 ms of CPU per request,
/// 300 req/s, 40 ms per 100 ms reserved) is preferred while packets wait
/// for it, but a CPU-bound domain with a short period (5 ms per 10 ms, no
/// extra time) still gets its slice in every period and misses no
/// deadline. (Preferring the web server for the rest of its slice whenever
/// it is the most intensive, without that check, makes the CPU-bound
/// domain miss about 50 deadlines in 3 s and go without CPU for whole
/// periods.)
#[test]
fn the_preference_waits_for_shorter_periods() {
    let toml = one_pcpu(
        "sedf-comm",
        "",
        "default",
        3.0,
        0.0,
        DOM0_20,
        &[
            (
                "web",
                "period = 100\nslice = 40",
                "kind = \"web-server\"\nrate = 300\narrivals = \"poisson\"\nrequest_cpu_us = 2000",
            ),
            (
                "a",
                "period = 10\nslice = 5\nextratime = false",
                "kind = \"cpu-hog\"",
            ),
        ],
    );
    let (at, ran, s) = sample(&toml, MS);
    assert!(counter(&s, "comm_preferred") > 100);
    assert!(counter(&s, "comm_no_slack") > 100);
    assert_eq!(counter(&s, "deadline_misses"), 0);
    let (lo, hi) = window_extremes(&at, &ran[2], 20 * MS, 20 * MS);
    assert!(
        lo >= 5 * MS && hi <= 15 * MS,
        "a: {lo}..{hi} ns in 20 ms windows"
    );
}

// ----- I/O accounting ---------------------------------------------------------------

/// Claim 65 (the paper's I/O accounting): with the driver domain on a low reservation (1.5 ms per
/// 20 ms, as in the paper's accounting test) an I/O-heavy guest holding
/// 2 ms per 20 ms without extra time runs its own reservation and has the
/// driver domain work for it on top: own CPU plus the driver domain's time
/// for it (its I/O events × the profile's 18 µs per packet) is well above
/// 10 %. With accounting that time comes out of its reservation: over the
/// run, own reserved time plus the driver domain's time for it is at most
/// the reservation of every period the run overlaps plus one slice still
/// being paid at the end. (Its own extra time, the penalty quanta SEDF
/// gives a short-blocking VCPU even without extratime, is SEDF's documented
/// exception, read from the scheduler's dump.)
#[test]
fn io_accounting_bounds_an_io_heavy_domain_by_its_reservation() {
    for wl in [
        "kind = \"tcp-stream\"\ndirection = \"receive\"",
        "kind = \"tcp-stream\"\ndirection = \"send\"",
        "kind = \"web-server\"\nrate = 400\narrivals = \"poisson\"",
    ] {
        let mut effective = Vec::new();
        for acct in [false, true] {
            let toml = one_pcpu(
                "sedf-comm",
                &format!("io_accounting = {acct}"),
                "cherkasova2007",
                8.0,
                0.0,
                "period = 20\nslice = 1.5",
                &[
                    ("io", "period = 20\nslice = 2\nextratime = false", wl),
                    ("hog", "", "kind = \"cpu-hog\""),
                ],
            );
            let mut sim = run_sim(&toml);
            let st = sim.sched_state();
            let s = sim.summary(0.0);
            let field = |k: &str| -> u64 { st.domain_int(1, k) as u64 };
            let own = running_ns(&sim, "io");
            let events = domain(&s, "io")["xenmon"]["io_events"].as_u64().unwrap();
            // The profile's per-packet backend cost, received or sent alike.
            let for_it = events * profile_net_ns("cherkasova2007");
            let reserved_own = own - field("extra");
            let t = sim.measured_ns();
            let bound = (t.div_ceil(20 * MS) + 1) * 2 * MS + 2 * MS;
            effective.push(reserved_own + for_it);
            if acct {
                assert!(
                    reserved_own + for_it <= bound,
                    "{wl}: own reserved {reserved_own} + driver time {for_it} > {bound} ns"
                );
                // What the scheduler charged is what the test computes, less
                // what was still owed when the run stopped.
                assert!(field("charged") <= for_it && field("charged") + 2 * MS >= for_it);
            } else {
                assert!(
                    reserved_own + for_it > bound + bound / 2,
                    "{wl}: without accounting {reserved_own} + {for_it} should exceed {bound} ns"
                );
            }
        }
        assert!(effective[1] < effective[0], "{wl}: {effective:?}");
    }
}

/// The time the driver domain spends for guests is not charged to its own
/// reservation: with 1.5 ms per 20 ms and no extra time it is held to 7.5 %
/// (plus penalty quanta) and the guest's stream is limited by it; with
/// accounting the guest pays for that time and the driver domain runs more.
#[test]
fn io_accounting_credits_the_driver_domain() {
    let run_with = |acct: bool| {
        let toml = one_pcpu(
            "sedf-comm",
            &format!("xen_version = \"4.1\"\nio_accounting = {acct}"),
            "cherkasova2007",
            6.0,
            1.0,
            "period = 20\nslice = 1.5\nextratime = false",
            &[
                (
                    "net",
                    "period = 20\nslice = 10\nextratime = false",
                    "kind = \"tcp-stream\"\ndirection = \"receive\"",
                ),
                ("hog", "", "kind = \"cpu-hog\""),
            ],
        );
        // The driver domain is CPU-bound itself, so it uses its whole slice.
        run(&toml.replacen("kind = \"idle\"", "kind = \"cpu-hog\"", 1))
    };
    let (off, on) = (run_with(false), run_with(true));
    assert!(counter(&on, "dom0_credited_ns") > 0);
    assert_eq!(counter(&off, "dom0_credited_ns"), 0);
    assert!(
        cpu_pct(&on, "dom0") > cpu_pct(&off, "dom0") + 2.0,
        "dom0 {} % with accounting, {} % without",
        cpu_pct(&on, "dom0"),
        cpu_pct(&off, "dom0")
    );
    let mbit = |s: &Json| {
        domain(s, "net")["workload"]["throughput_mbit_s"]
            .as_f64()
            .unwrap()
    };
    assert!(
        mbit(&on) > mbit(&off),
        "{} vs {} Mbit/s",
        mbit(&on),
        mbit(&off)
    );
}

// ----- parameters ---------------------------------------------------------------------

/// The switches change at run time (`[[action]]` without a domain); the
/// SEDF build options stay fixed, as for SEDF's own boot.
#[test]
fn switches_change_at_run_time_and_the_release_does_not() {
    let base = web_beside_hogs("sedf-comm", "", 60.0, 1, true);
    let off_later = format!("{base}[[action]]\nat_s = 6\n{PLAIN}\n");
    let s = run(&off_later);
    let all_on = run(&base);
    let all_off = run(&web_beside_hogs("sedf-comm", PLAIN, 60.0, 1, true));
    let r = response(&s, "mean");
    assert!(
        r > response(&all_on, "mean") && r < response(&all_off, "mean"),
        "switched off half-way: {r} ms, between {} and {}",
        response(&all_on, "mean"),
        response(&all_off, "mean")
    );
    // Accounting switched on half-way charges only the I/O from then on.
    let acct = |action: &str| {
        let toml = one_pcpu(
            "sedf-comm",
            &format!("io_accounting = {}", action.is_empty()),
            "cherkasova2007",
            8.0,
            0.0,
            "period = 20\nslice = 1.5",
            &[(
                "io",
                "period = 20\nslice = 2\nextratime = false",
                "kind = \"web-server\"\nrate = 400\narrivals = \"poisson\"",
            )],
        );
        run(&format!("{toml}{action}"))
    };
    let whole = counter(&acct(""), "io_charged_ns") as f64;
    let half = counter(
        &acct("[[action]]\nat_s = 4\nio_accounting = true\n"),
        "io_charged_ns",
    ) as f64;
    assert!(
        half > 0.4 * whole && half < 0.6 * whole,
        "charged {half} ns from 4 s on, {whole} ns over 8 s"
    );
    let e = rejected(&format!(
        "{base}[[action]]\nat_s = 6\nxen_version = \"4.1\"\n"
    ));
    assert_eq!(e.path, "action[0].xen_version", "{e}");
    // The release defaults to the one the paper modified: Dom0 gets Xen
    // 3.0.2's 15 ms per 20 ms reservation when none is given.
    let info = vmsched_core::sched::find("sedf-comm").unwrap();
    let v = info
        .params
        .iter()
        .find(|p| p.name == "xen_version")
        .unwrap();
    assert!(matches!(
        v.default,
        vmsched_core::params::Default::Str("3.0.2")
    ));
}

// ----- properties over random I/O scenarios ------------------------------------------------

/// A random guest: workload lines, and its reservation as (period ms,
/// utilisation %, extratime) or best effort.
fn guest_workload() -> impl Strategy<Value = String> {
    prop_oneof![
        (5u32..300, prop_oneof![Just(0u32), 100u32..5000]).prop_map(|(r, cpu)| format!(
            "kind = \"web-server\"\nrate = {r}\narrivals = \"poisson\"\nrequest_cpu_us = {cpu}"
        )),
        prop::sample::select(vec!["send", "receive"])
            .prop_map(|d| format!("kind = \"tcp-stream\"\ndirection = \"{d}\"")),
        Just("kind = \"disk-read\"".to_string()),
        Just("kind = \"iozone\"\nmode = \"rand-read\"".to_string()),
        Just("kind = \"oltp\"\nrows = 10000000\nbuffer_pool_mb = 64".to_string()),
        Just("kind = \"cpu-hog\"".to_string()),
    ]
}

#[derive(Clone, Debug)]
struct Guest {
    workload: String,
    /// (period ms, share of the PCPU in ‰, extratime), or best effort.
    reservation: Option<(u32, u32, bool)>,
}

fn guest() -> impl Strategy<Value = Guest> {
    (
        guest_workload(),
        prop_oneof![
            1 => Just(None),
            3 => (5u32..=100, 10u32..=400, any::<bool>()).prop_map(Some),
        ],
    )
        .prop_map(|(workload, reservation)| Guest {
            workload,
            reservation,
        })
}

#[derive(Clone, Debug)]
struct IoCase {
    profile: &'static str,
    version: &'static str,
    switches: [bool; 4],
    dom0: (u32, u32),
    guests: Vec<Guest>,
    seed: u64,
    duration_ms: u32,
}

impl IoCase {
    /// The reservations scaled to fit the PCPU (at most 100 % in all).
    fn reservations(&self) -> Vec<Option<(f64, f64, bool)>> {
        let mut all = vec![Some((self.dom0.0, self.dom0.1, true))];
        all.extend(self.guests.iter().map(|g| g.reservation));
        let total: u32 = all.iter().flatten().map(|r| r.1).sum();
        let scale = if total > 1000 {
            1000.0 / total as f64
        } else {
            1.0
        };
        all.iter()
            .map(|r| {
                r.map(|(p, u, x)| {
                    let p = p as f64;
                    // Slices to the µs, rounded down: the sum stays <= 100 %.
                    let slice = (p * u as f64 / 1000.0 * scale * 1000.0).floor() / 1000.0;
                    (p, slice.max(0.005), x)
                })
            })
            .collect()
    }

    fn toml(&self, sched: &str) -> String {
        let [d, r, s, a] = self.switches;
        let globals = format!(
            "xen_version = \"{}\"\nprefer_dom0 = {d}\nprefer_recipient = {r}\nprefer_sender = {s}\nio_accounting = {a}",
            self.version
        );
        let globals = if sched == "sedf" {
            format!("xen_version = \"{}\"", self.version)
        } else {
            globals
        };
        let res = self.reservations();
        let sched_lines = |r: &Option<(f64, f64, bool)>| match r {
            Some((p, sl, x)) => format!("period = {p}\nslice = {sl}\nextratime = {x}"),
            None => String::new(),
        };
        let names: Vec<String> = (0..self.guests.len()).map(|i| format!("g{i}")).collect();
        let lines: Vec<String> = res[1..].iter().map(sched_lines).collect();
        let guests: Vec<(&str, &str, &str)> = self
            .guests
            .iter()
            .enumerate()
            .map(|(i, g)| (names[i].as_str(), lines[i].as_str(), g.workload.as_str()))
            .collect();
        one_pcpu(
            sched,
            &globals,
            self.profile,
            self.duration_ms as f64 / 1000.0,
            0.0,
            &sched_lines(&res[0]).replace("extratime = true", ""),
            &guests,
        )
        .replace("[run]\n", &format!("[run]\nseed = {}\n", self.seed))
    }
}

fn io_case() -> impl Strategy<Value = IoCase> {
    (
        prop::sample::select(vec!["default", "cherkasova2007", "thesis2015"]),
        prop::sample::select(vec!["3.0.2", "3.0.3", "4.1", "4.5"]),
        any::<[bool; 4]>(),
        (10u32..=40, 20u32..=300),
        prop::collection::vec(guest(), 0..=2),
        (2u32..=50, 50u32..=500, any::<bool>()),
        (50u32..=300, 1000u32..=5000, 20u32..=200, 100u32..=500),
        0u64..1000,
        1000u32..=2500,
    )
        .prop_map(
            |(profile, version, switches, dom0, mut guests, hog, web, seed, duration_ms)| {
                // Always a CPU-bound domain with a reservation, whose slice
                // in every period the property checks, and a busy web server
                // (often runnable with packets waiting: the preferred one),
                // typically on a longer period.
                let (period, share, extra) = hog;
                guests.insert(
                    0,
                    Guest {
                        workload: "kind = \"cpu-hog\"".into(),
                        reservation: Some((period, share, extra)),
                    },
                );
                let (rate, cpu, wperiod, wshare) = web;
                guests.push(Guest {
                    workload: format!(
                        "kind = \"web-server\"\nrate = {rate}\narrivals = \"poisson\"\nrequest_cpu_us = {cpu}"
                    ),
                    reservation: Some((wperiod, wshare, true)),
                });
                IoCase {
                    profile,
                    version,
                    switches,
                    dom0,
                    guests,
                    seed,
                    duration_ms,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    /// Over random I/O scenarios on one PCPU with reservations of at most
    /// 100 % (random releases, profiles, switches, accounting): the
    /// invariants every scheduler keeps (accounting sums to the elapsed
    /// time, determinism, stepping changes nothing); no domain without
    /// extra time runs more than its slice per period (SEDF's bound, with
    /// its documented penalty-quantum exception), so none gets more than
    /// its slice while another's reservation is unmet; and without
    /// accounting (which credits the driver domain) no deadline is missed
    /// and a CPU-bound domain with a reservation gets its slice in every
    /// period, so any preference is paid back within the period.
    #[test]
    fn io_scenarios_keep_every_reservation(c in io_case()) {
        let toml = c.toml("sedf-comm");
        check_invariants(&toml, 3 * MS + 7);
        let (at, ran, s) = sample(&toml, MS);
        let res = c.reservations();
        let quanta = counter(&s, "extra_quanta_penalty") + counter(&s, "behind_schedule");
        let accounting = c.switches[3];
        for (i, r) in res.iter().enumerate() {
            let Some((p, sl, extra)) = *r else { continue };
            let (p, sl) = ((p * 1e6) as u64, (sl * 1e6).round() as u64);
            let name = if i == 0 { "dom0".to_string() } else { format!("g{}", i - 1) };
            let (lo, hi) = window_extremes(&at, &ran[i], 2 * p, 2 * p);
            // With accounting the driver domain is credited time beyond its slice.
            let credited = accounting && i == 0;
            if !(extra || credited) {
                let bound = 3 * sl + quanta * 500_000;
                prop_assert!(hi <= bound, "{name}: {hi} ns in a window of two periods > {bound}\n{toml}");
            }
            let hog = i > 0 && c.guests[i - 1].workload == "kind = \"cpu-hog\"";
            if hog && !accounting && lo != u64::MAX {
                prop_assert!(lo >= sl, "{name}: only {lo} ns in a window of two periods (slice {sl})\n{toml}");
            }
        }
        if !accounting {
            prop_assert_eq!(counter(&s, "deadline_misses"), 0, "{}", toml);
        }
    }
}

// ----- the penalty queue: eligible within its period ------------------------------------

/// A media server streaming to 45 clients beside seven CPU-bound domains
/// (Govindan et al.'s Fig. 8 host) on Xen 3.0.2, Dom0 with its creation
/// default (15 ms of 20); `globals` switch the preferences.
fn streaming_host(globals: &str) -> String {
    let media = "kind = \"streaming\"\nclients = 45\nrate_mbit = 3.0\nbuffer_mb = 8.0";
    let mut guests = vec![("media", "period = 20\nslice = 3.5", media)];
    let names = ["cpu1", "cpu2", "cpu3", "cpu4", "cpu5", "cpu6", "cpu7"];
    for n in names {
        guests.push((n, "period = 20\nslice = 0.125", "kind = \"cpu-hog\""));
    }
    one_pcpu(
        "sedf-comm",
        &format!("xen_version = \"3.0.2\"\n{globals}"),
        "default",
        4.0,
        0.0,
        "",
        &guests,
    )
    .replace(
        "[domain.sched]\n\n[domain.workload]\nkind = \"idle\"",
        "[domain.workload]\nkind = \"idle\"",
    )
}

/// A domain that blocked and woke inside its period has received less than
/// its slice in it (Xen 3.0.2 owes it the loss on the penalty queue), so it
/// is eligible (the paper's "so long as it has received less than its slice
/// for the ongoing period"): the I/O domains of a streaming host are
/// preferred from there, each preference gives a different run, and every
/// preferred penalty run is one of SEDF's penalty quanta.
#[test]
fn a_domain_owed_its_lost_slice_is_preferred_from_the_penalty_queue() {
    let only = |on: &[&str]| {
        let mut g = String::new();
        for p in ["prefer_dom0", "prefer_recipient", "prefer_sender"] {
            g += &format!("{p} = {}\n", on.contains(&p));
        }
        run(&streaming_host(&g))
    };
    let none = only(&[]);
    let dom0 = only(&["prefer_dom0"]);
    let sender = only(&["prefer_sender"]);
    let both = only(&["prefer_dom0", "prefer_sender"]);
    assert_eq!(counter(&none, "comm_preferred"), 0);
    for (name, s) in [("dom0", &dom0), ("sender", &sender), ("both", &both)] {
        assert!(
            counter(s, "comm_preferred_penalty") > 0,
            "{name}: no preference from the penalty queue"
        );
        assert!(counter(s, "comm_preferred_penalty") <= counter(s, "comm_preferred"));
        assert!(counter(s, "extra_quanta_penalty") >= counter(s, "comm_preferred_penalty"));
        assert_ne!(s["domains"], none["domains"], "{name} changed nothing");
    }
    assert_ne!(dom0["domains"], sender["domains"]);
    assert_ne!(dom0["domains"], both["domains"]);
    assert_ne!(sender["domains"], both["domains"]);
}
