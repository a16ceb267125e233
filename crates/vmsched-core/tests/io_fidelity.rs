//! The I/O path's fidelity mechanisms: web requests as TCP exchanges, NIC
//! interrupt moderation, the httperf-like open loop's errors, the guest
//! front end's per-batch work, IOzone's queue depth, cost variability.

mod common;
use common::*;
use serde_json::Value as Json;

/// The I/O path's fidelity keys and the switch-cost model at their off
/// values: each test below turns on only the mechanism it is about.
const MECHANISMS_OFF: &[(&str, &str)] = &[
    ("guest_batch_ns", "0"),
    ("nic_rx_irq", "\"per-message\""),
    ("nic_irq_interval_us", "0.0"),
    ("request_cpu_cv", "0.0"),
    ("io_cost_cv", "0.0"),
    ("disk_service_cv", "0.0"),
    ("lazy_idle_switch", "false"),
    ("switch_refill_ns", "0"),
    ("l2_fill_ns", "0"),
    ("sched_invoke_ns", "0"),
    ("sched_queue_op_ns", "0"),
];

/// The `cherkasova2007` profile as an inline table, with every mechanism of
/// `MECHANISMS_OFF` off and then `extra` lines (profile keys) setting keys.
fn profile(extra: &str) -> String {
    let text = vmsched_core::host::BUILTIN_PROFILES
        .iter()
        .find(|(n, _)| *n == "cherkasova2007")
        .unwrap()
        .1;
    let key = |line: &str| line.split('=').next().unwrap_or("").trim().to_string();
    let set: Vec<String> = extra.lines().map(key).collect();
    let mut out = String::from("[host.profile]\n");
    for line in text.lines() {
        let k = key(line);
        if !MECHANISMS_OFF.iter().any(|(m, _)| *m == k) && !set.contains(&k) {
            out += line;
            out += "\n";
        }
    }
    for (k, v) in MECHANISMS_OFF {
        if !set.iter().any(|s| s == k) {
            out += &format!("{k} = {v}\n");
        }
    }
    out + extra + "\n"
}

/// One PCPU, Credit, an idle Dom0 and a web server (`web`: its workload keys).
fn web_host(extra_profile: &str, web: &str, secs: f64) -> String {
    format!(
        r#"
[host]
pcpus = 1
{}
[scheduler]
name = "credit"
[run]
duration_s = {secs}
warmup_s = 0.5
seed = 3
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
[[domain]]
name = "web"
[domain.workload]
kind = "web-server"
file_kb = 10
{web}
"#,
        profile(extra_profile)
    )
}

fn wl(s: &Json, dom: &str, key: &str) -> f64 {
    domain(s, dom)["workload"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{dom} has no workload metric {key}: {}", domain(s, dom)))
}

fn xenmon(s: &Json, dom: &str, key: &str) -> f64 {
    domain(s, dom)["xenmon"][key].as_f64().unwrap()
}

/// Dom0's executions per completed request.
fn dom0_execs_per_req(s: &Json) -> f64 {
    xenmon(s, "dom0", "exec_per_s") / wl(s, "web", "throughput_req_s")
}

#[test]
fn tcp_rounds_wake_dom0_once_per_round() {
    // A light open loop: every message finds Dom0 idle. `grouped` moves a
    // request in one message each way (about two Dom0 executions); `tcp`
    // in four inbound rounds and three outbound windows of a 10 KiB file
    // (SYN-ACK; 3 segments; 5 + FIN), each a separate trip through Dom0.
    let grouped = run_checked(&web_host("", "rate = 100", 3.0), 50);
    let tcp = run_checked(&web_host("", "rate = 100\nexchange = \"tcp\"", 3.0), 50);
    let (g, t) = (dom0_execs_per_req(&grouped), dom0_execs_per_req(&tcp));
    assert!(
        (1.5..=2.5).contains(&g),
        "grouped: {g:.2} Dom0 executions per request"
    );
    assert!(
        (6.0..=7.5).contains(&t),
        "tcp: {t:.2} Dom0 executions per request"
    );
    // Same packets, so the same offered load is served.
    assert_near(
        "throughput",
        wl(&tcp, "web", "throughput_req_s"),
        wl(&grouped, "web", "throughput_req_s"),
        2.0,
    );
    // The guest's packet totals are unchanged: 7 in and 10 out per request.
    let rx = |s: &Json| domain(s, "web")["xentop"]["nettx_kb"].as_f64().unwrap();
    assert!(rx(&tcp) > 0.0 && rx(&grouped) > 0.0);
    // httperf's connection and reply times are reported.
    let connect = domain(&tcp, "web")["workload"]["connect_ms"]["mean"]
        .as_f64()
        .unwrap();
    assert!(
        connect > 0.1,
        "connect time {connect} ms covers a round trip"
    );
}

#[test]
fn fewer_nic_interrupts_mean_fewer_dom0_executions_per_request() {
    // Near capacity, rounds of different connections overlap.
    let web = "rate = 800\narrivals = \"poisson\"\nexchange = \"tcp\"";
    let per_req = |interval_us: f64| {
        let s = run(&web_host(
            &format!("nic_rx_irq = \"moderated\"\nnic_irq_interval_us = {interval_us}"),
            web,
            3.0,
        ));
        dom0_execs_per_req(&s)
    };
    let every_packet = per_req(0.0);
    let moderate = per_req(500.0);
    let slow = per_req(2000.0);
    assert!(
        every_packet > moderate && moderate > slow,
        "Dom0 executions per request: {every_packet:.2} (one interrupt per packet), \
         {moderate:.2} (500 µs), {slow:.2} (2 ms)"
    );
    assert!(slow > 1.0, "{slow}");
}

#[test]
fn open_loop_errors_appear_above_capacity_only() {
    // The testbed serves about 900 requests/s of 10 KiB files.
    let below = run(&web_host(
        "",
        "rate = 300\nexchange = \"tcp\"\ntimeout_ms = 1000",
        4.0,
    ));
    let above = run(&web_host(
        "",
        "rate = 3000\nexchange = \"tcp\"\ntimeout_ms = 1000\nbacklog = 128",
        4.0,
    ));
    assert_eq!(wl(&below, "web", "errors"), 0.0);
    assert_eq!(wl(&below, "web", "timeouts"), 0.0);
    assert_near(
        "reply rate below capacity",
        wl(&below, "web", "throughput_req_s"),
        300.0,
        6.0,
    );
    let lost = wl(&above, "web", "errors") + wl(&above, "web", "timeouts");
    assert!(lost > 1000.0, "above capacity: {lost} errors and timeouts");
    let served = wl(&above, "web", "throughput_req_s");
    assert!(
        served < 1500.0 && served > 300.0,
        "above capacity the reply rate saturates: {served}"
    );
}

#[test]
fn the_front_end_charges_its_per_batch_work_to_the_guest() {
    let base = run(&web_host("", "rate = 200\nexchange = \"tcp\"", 3.0));
    let front = run(&web_host(
        "guest_batch_ns = 12000",
        "rate = 200\nexchange = \"tcp\"",
        3.0,
    ));
    let per_req_us = |s: &Json| {
        domain(s, "web")["cpu_s"].as_f64().unwrap() * 1e6 / wl(s, "web", "completed").max(1.0)
    };
    let extra = per_req_us(&front) - per_req_us(&base);
    // Four inbound rounds, each delivered by its own batch at this load:
    // about 4 × 12 µs more guest CPU per request.
    assert!(
        (40.0..=56.0).contains(&extra),
        "front end: {extra:.1} µs more guest CPU per request"
    );
}

#[test]
fn variability_is_deterministic_and_keeps_the_mean() {
    let cvs = "request_cpu_cv = 0.5\nio_cost_cv = 0.3\ndisk_service_cv = 0.2";
    let toml = web_host(cvs, "rate = 500\nexchange = \"tcp\"", 3.0);
    assert_deterministic(&toml);
    let on = run(&toml);
    let off = run(&web_host("", "rate = 500\nexchange = \"tcp\"", 3.0));
    // Varying costs spread the response times ...
    let spread = |s: &Json| {
        let r = &domain(s, "web")["workload"]["response_ms"];
        r["p99"].as_f64().unwrap() / r["p50"].as_f64().unwrap()
    };
    assert!(
        spread(&on) > spread(&off),
        "{} vs {}",
        spread(&on),
        spread(&off)
    );
    // ... but keep the mean CPU per request (within sampling error).
    let per_req =
        |s: &Json| domain(s, "web")["cpu_s"].as_f64().unwrap() / wl(s, "web", "completed");
    assert_near("guest CPU per request", per_req(&on), per_req(&off), 0.03);
}

#[test]
fn iozone_one_request_at_a_time_leaves_the_disk_idle_between_requests() {
    let io = |qd: u32| {
        format!(
            r#"
[host]
pcpus = 2
profile = "thesis2015"
[scheduler]
name = "credit"
[run]
duration_s = 3
warmup_s = 0.5
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
[[domain]]
name = "dom1"
[domain.workload]
kind = "iozone"
mode = "seq-write"
queue_depth = {qd}
"#
        )
    };
    let all = run_checked(&io(0), 50);
    let one = run_checked(&io(1), 50);
    let (a, b) = (
        wl(&all, "dom1", "throughput_kb_s"),
        wl(&one, "dom1", "throughput_kb_s"),
    );
    assert!(
        b < a,
        "queue depth 1: {b:.0} KB/s; whole records: {a:.0} KB/s"
    );
    // Both issue the same 44 KiB requests.
    let size = |s: &Json| wl(s, "dom1", "throughput_kb_s") / wl(s, "dom1", "requests");
    assert!(size(&one) > 0.0 && size(&all) > 0.0);
}

#[test]
fn xenmon_counts_page_flips_to_guests_and_all_of_them_for_dom0() {
    // A web guest and a disk guest: only received packets are flipped.
    let toml = r#"
[host]
pcpus = 1
profile = "cherkasova2007"
[scheduler]
name = "credit"
[run]
duration_s = 2
warmup_s = 0.5
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
[[domain]]
name = "web"
[domain.workload]
kind = "web-server"
rate = 200
[[domain]]
name = "dd"
[domain.workload]
kind = "disk-read"
blocks = 0
"#;
    let s = run_checked(toml, 50);
    let count = |d: &str, k: &str| domain(&s, d)["xenmon"][k].as_u64().unwrap();
    let requests = wl(&s, "web", "completed") as u64;
    // 7 packets in per request (10 KiB file), a few in flight at the edges.
    let flips = count("web", "io_count");
    assert!(
        flips.abs_diff(7 * requests) <= 7 * 4,
        "{flips} flips, {requests} requests"
    );
    assert_eq!(
        count("dd", "io_count"),
        0,
        "disk requests are not page flips"
    );
    assert!(count("dd", "io_events") > 0);
    // Dom0's count is every flip; its events include the sent packets too.
    assert_eq!(count("dom0", "io_count"), flips);
    assert!(count("dom0", "io_events") > count("web", "io_events") - 1);
    let per_exec = xenmon(&s, "dom0", "io_per_exec");
    let execs = xenmon(&s, "dom0", "exec_per_s") * 1.5;
    assert!((per_exec * execs - flips as f64).abs() <= 0.01 * flips as f64);
}
