//! The split-driver I/O path: its mechanics, the devices, the I/O
//! workloads, the XenMon and xentop metrics, and the invariants with I/O in
//! the run (accounting, determinism).

mod common;
use common::*;
use serde_json::Value as Json;

/// A 1- or 2-PCPU host with a Dom0 (`d0` workload) and one guest (`d1`).
fn host(sched: &str, pcpus: u32, profile: &str, d0: &str, d1: &str, secs: f64) -> String {
    format!(
        r#"
[host]
pcpus = {pcpus}
profile = "{profile}"
[scheduler]
name = "{sched}"
[run]
duration_s = {secs}
warmup_s = 0.5
[[domain]]
name = "dom0"
[domain.workload]
{d0}
[[domain]]
name = "dom1"
[domain.workload]
{d1}
"#
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

#[test]
fn lone_guest_disk_reads_complete_at_the_device_rate() {
    // Sequential 1 MiB direct reads, split by the front end into 44 KiB
    // requests issued together: the disk is the bottleneck, so the guest
    // gets the media rate less the per-request overheads.
    let s = run_checked(
        &host(
            "credit",
            1,
            "thesis2015",
            r#"kind = "idle""#,
            "kind = \"iozone\"\nmode = \"seq-read\"",
            5.0,
        ),
        50,
    );
    let io = &s["host"]["io"];
    let media_kib_s = io["disk_transfer_mb_s"].as_f64().unwrap() * 1e6 / 1024.0;
    // Each of the 24 requests per record pays the controller overhead once.
    let per_req_s = 100e-6;
    let reqs_per_kib = 24.0 / 1024.0;
    let expect = 1.0 / (1.0 / media_kib_s + per_req_s * reqs_per_kib);
    let got = wl(&s, "dom1", "throughput_kb_s");
    // Never faster than the device. Between two records the disk idles for
    // one round trip through the guest's front end (24 requests × 10 µs)
    // and the backend (a batch and 24 × 8 µs each way): about 0.5 ms per
    // 21 ms record, so 2–3 % below the device's rate.
    assert!(
        got <= expect && got > 0.96 * expect,
        "throughput {got:.0} KB/s, device rate {expect:.0} KB/s"
    );
    // Every request went through the backend twice (issue, completion).
    let reqs = wl(&s, "dom1", "requests");
    let rd = domain(&s, "dom1")["xentop"]["vbd_rd"].as_f64().unwrap();
    assert!((reqs - rd).abs() <= 24.0, "{reqs} issued, {rd} completed");
}

#[test]
fn random_reads_pay_seek_and_rotation() {
    let seq = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"iozone\"\nmode = \"seq-read\"\nrecord_kb = 64",
        3.0,
    ));
    let rnd = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"iozone\"\nmode = \"rand-read\"\nrecord_kb = 64",
        3.0,
    ));
    let (a, b) = (
        wl(&seq, "dom1", "throughput_kb_s"),
        wl(&rnd, "dom1", "throughput_kb_s"),
    );
    // 64 KiB at 56.5 MB/s is ~1.2 ms; a random access adds 12 + 5.6 ms.
    assert!(a > 5.0 * b, "sequential {a:.0} vs random {b:.0} KB/s");
}

#[test]
fn a_driver_domain_scheduled_less_often_handles_more_events_per_execution() {
    // Dom0 idle: it runs whenever an event arrives. Dom0 busy with a CPU
    // hog of its own on the same PCPU: it runs less often per event (it is
    // already running, or waits its turn), so each execution drains more.
    let idle = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"web-server\"\nrate = 300",
        4.0,
    ));
    let busy = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "cpu-stress""#,
        "kind = \"web-server\"\nrate = 300",
        4.0,
    ));
    let (ei, eb) = (
        xenmon(&idle, "dom0", "exec_per_s"),
        xenmon(&busy, "dom0", "exec_per_s"),
    );
    let (ii, ib) = (
        xenmon(&idle, "dom0", "io_per_exec"),
        xenmon(&busy, "dom0", "io_per_exec"),
    );
    assert!(
        eb < ei,
        "busy Dom0 runs less often: {eb:.0} vs {ei:.0} exec/s"
    );
    assert!(
        ib > ii,
        "and handles more per execution: {ib:.1} vs {ii:.1}"
    );
    // The same I/O was done (events are conserved): ~17 packets per request.
    let (ci, cb) = (
        xenmon(&idle, "dom0", "io_count"),
        xenmon(&busy, "dom0", "io_count"),
    );
    assert!((ci - cb).abs() / ci < 0.02, "{ci} vs {cb} I/O events");
    // Batching: with a CPU-bound round-robin Dom0, the batches get larger still.
    let rr = run(&host(
        "rrobin",
        1,
        "thesis2015",
        r#"kind = "cpu-stress""#,
        "kind = \"web-server\"\nrate = 300",
        4.0,
    ));
    assert!(xenmon(&rr, "dom0", "io_per_exec") > ib);
}

#[test]
fn a_dom0_cpu_hog_cuts_guest_io_without_wake_up_preemption() {
    // Backends in softirq context (Xen 3.0's Linux): they preempt Dom0's hog
    // inside Dom0 at once, so only the hypervisor's scheduling stands
    // between a request and its service. Round-robin never preempts on a
    // wake-up: the guest's and Dom0's I/O waits for the CPU hog's slices.
    // Credit boosts the waking guest, and Dom0, running its hog, takes the
    // backend work at once. With Linux 2.6.16's read-ahead the next window
    // is on the disk while a request waits for the hog's slice, which hides
    // part of the delay: rrobin loses about half (39 514 -> 20 390 KB/s;
    // the bound of "below half" predates the ahead window, when every
    // window was a round trip of its own).
    for (sched, must_fall) in [("rrobin", true), ("credit", false)] {
        let idle = run(&host(
            sched,
            1,
            "cherkasova2007",
            r#"kind = "idle""#,
            "kind = \"disk-read\"\nblock_kb = 4",
            3.0,
        ));
        let hog = run(&host(
            sched,
            1,
            "cherkasova2007",
            r#"kind = "cpu-stress""#,
            "kind = \"disk-read\"\nblock_kb = 4",
            3.0,
        ));
        let (a, b) = (
            wl(&idle, "dom1", "throughput_kb_s"),
            wl(&hog, "dom1", "throughput_kb_s"),
        );
        if must_fall {
            assert!(
                b < 0.6 * a,
                "{sched}: {a:.0} -> {b:.0} KB/s with a Dom0 hog"
            );
        } else {
            assert!(
                b > 0.9 * a,
                "{sched}: {a:.0} -> {b:.0} KB/s with a Dom0 hog"
            );
        }
    }
}

#[test]
fn thread_backends_preempt_a_dom0_process_as_cfs_lets_them() {
    // Backends as kernel threads (current Linux). Two PCPUs, so that the
    // hypervisor never makes Dom0 and the guest wait for each other: only
    // Dom0's own scheduler stands between the backend and its hog. A light
    // backend is far behind the hog in CPU time, so CFS lets it preempt the
    // hog at once: I/O is as fast as with Dom0 idle.
    let wl = "kind = \"disk-read\"\nblock_kb = 4\nreadahead_kb = 0";
    let idle = run(&host(
        "credit",
        2,
        "thesis2015",
        r#"kind = "idle""#,
        wl,
        3.0,
    ));
    let hog = run(&host(
        "credit",
        2,
        "thesis2015",
        r#"kind = "cpu-stress""#,
        wl,
        3.0,
    ));
    let (a, b) = (wl_req(&idle), wl_req(&hog));
    assert!(b > 0.9 * a, "light backend: {a} -> {b} requests");
    // A heavy backend (3 ms of Dom0 CPU per request pass) has used as much
    // CPU as the hog: it waits for Dom0's 4 ms tick, where a softirq backend
    // would not.
    let heavy = |ctx: &str| {
        host("credit", 2, "thesis2015", r#"kind = "cpu-stress""#, wl, 3.0).replace(
            "profile = \"thesis2015\"",
            &format!(
                "profile = {{ ctx_switch_ns = 3000, ipi_latency_ns = 2000, \
                 disk_read_ns = 3000000, backend_context = \"{ctx}\" }}"
            ),
        )
    };
    let thread = wl_req(&run(&heavy("thread")));
    let softirq = wl_req(&run(&heavy("softirq")));
    assert!(
        thread < 0.9 * softirq,
        "heavy backend: thread {thread} vs softirq {softirq}"
    );
}

fn wl_req(s: &Json) -> f64 {
    wl(s, "dom1", "requests")
}

#[test]
fn tcp_stream_is_limited_by_the_link_then_by_the_window() {
    // 100 Mbit/s with 1500-byte packets and the 12-byte timestamp option:
    // a 16-KiB message (the default send socket) is 12 segments of at most
    // 1448 bytes, each with 52 + 38 bytes of headers and framing on the wire.
    let s = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        r#"kind = "tcp-stream""#,
        3.0,
    ));
    let got = wl(&s, "dom1", "throughput_mbit_s");
    let m = 16384.0;
    assert_near(
        "goodput at line rate",
        got,
        100.0 * m / (m + 12.0 * 90.0),
        0.1,
    );
    // A tiny window over a long path: window / RTT.
    let far = host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"tcp-stream\"\nrecv_socket_bytes = 16384\nsend_socket_bytes = 16384",
        3.0,
    )
    .replace("[run]", "[host.nic]\nlatency_us = 5000\n[run]");
    let s = run(&far);
    let got = wl(&s, "dom1", "throughput_mbit_s");
    let bound = 16384.0 * 8.0 / 0.010 / 1e6; // window per 10 ms round trip
    assert!(
        got < bound && got > 0.8 * bound,
        "{got:.2} vs {bound:.2} Mbit/s"
    );
    // Receive direction moves data too, and xentop sees it.
    let s = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"tcp-stream\"\ndirection = \"receive\"",
        3.0,
    ));
    assert!(wl(&s, "dom1", "throughput_mbit_s") > 90.0);
    assert!(domain(&s, "dom1")["xentop"]["nettx_kb"].as_u64().unwrap() > 25_000);
}

/// The built-in `name` profile as an inline TOML table, with `key` set to `value`.
fn profile_with(name: &str, key: &str, value: &str) -> String {
    let text = vmsched_core::host::BUILTIN_PROFILES
        .iter()
        .find(|(n, _)| *n == name)
        .expect("built-in profile")
        .1;
    let mut items: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| l.contains('=') && !l.starts_with(&format!("{key} ")))
        .map(str::to_string)
        .collect();
    items.push(format!("{key} = {value}"));
    format!("{{ {} }}", items.join(", "))
}

#[test]
fn tcp_options_set_a_link_bound_streams_goodput_ceiling() {
    // The same link-bound stream, in full segments (`granularity =
    // "segment"`), with Linux's timestamp option (the profile's 12 bytes:
    // 1448 payload bytes of every 1538 on the wire) and without options
    // (1460 of 1538).
    let scenario = |profile: &str| {
        host(
            "credit",
            1,
            "thesis2015",
            r#"kind = "idle""#,
            "kind = \"tcp-stream\"\ngranularity = \"segment\"",
            3.0,
        )
        .replace(r#"profile = "thesis2015""#, &format!("profile = {profile}"))
    };
    let with = wl(
        &run(&scenario(&profile_with(
            "thesis2015",
            "tcp_options_bytes",
            "12",
        ))),
        "dom1",
        "throughput_mbit_s",
    );
    let without = wl(
        &run(&scenario(&profile_with(
            "thesis2015",
            "tcp_options_bytes",
            "0",
        ))),
        "dom1",
        "throughput_mbit_s",
    );
    assert_near("with timestamps", with, 100.0 * 1448.0 / 1538.0, 0.3);
    assert_near("without options", without, 100.0 * 1460.0 / 1538.0, 0.3);
    // The ratio of the two is the ratio of the payload shares.
    assert_near("payload ratio", with / without, 1448.0 / 1460.0, 0.004);
}

#[test]
fn tcp_options_must_be_whole_words() {
    let s = host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        r#"kind = "tcp-stream""#,
        1.0,
    )
    .replace(
        r#"profile = "thesis2015""#,
        &format!(
            "profile = {}",
            profile_with("thesis2015", "tcp_options_bytes", "10")
        ),
    );
    let msg = rejected(&s).to_string();
    assert!(
        msg.contains("tcp_options_bytes") && msg.contains("multiple of 4"),
        "{msg}"
    );
}

#[test]
fn web_server_closed_and_open_loops() {
    // Below saturation the open loop completes what is offered.
    let s = run(&host(
        "credit",
        1,
        "cherkasova2007",
        r#"kind = "idle""#,
        "kind = \"web-server\"\nrate = 200",
        4.0,
    ));
    assert_near(
        "throughput = offered",
        wl(&s, "dom1", "throughput_req_s"),
        200.0,
        2.0,
    );
    assert_eq!(wl(&s, "dom1", "errors"), 0.0);
    // Far above saturation: refusals, and the CPU is full.
    let s = run(&host(
        "credit",
        1,
        "cherkasova2007",
        r#"kind = "idle""#,
        "kind = \"web-server\"\nrate = 5000",
        4.0,
    ));
    assert!(wl(&s, "dom1", "errors") > 0.0);
    let busy = cpu_pct(&s, "dom0") + cpu_pct(&s, "dom1");
    assert!(busy > 99.0, "saturated: {busy}");
    // Closed loop with 1 client and no think time: one request at a time.
    let s = run(&host(
        "credit",
        1,
        "cherkasova2007",
        r#"kind = "idle""#,
        "kind = \"web-server\"\nclients = 1",
        2.0,
    ));
    let tput = wl(&s, "dom1", "throughput_req_s");
    let mean_ms = domain(&s, "dom1")["workload"]["response_ms"]["mean"]
        .as_f64()
        .unwrap();
    assert_near("Little's law, N = 1", tput * mean_ms / 1000.0, 1.0, 0.02);
}

#[test]
fn oltp_is_cpu_bound_when_the_table_fits_and_disk_bound_when_it_does_not() {
    let fits = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        r#"kind = "oltp""#,
        3.0,
    ));
    assert!(cpu_pct(&fits, "dom1") > 90.0);
    let big = run(&host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        "kind = \"oltp\"\nrows = 100000000\nbuffer_pool_mb = 128",
        3.0,
    ));
    assert!(wl(&big, "dom1", "transactions_s") < 0.2 * wl(&fits, "dom1", "transactions_s"));
    assert!(wl(&big, "dom1", "disk_reads") > 0.0);
}

#[test]
fn io_runs_keep_the_invariants_and_are_deterministic() {
    for sched in [
        "credit",
        "credit2",
        "sedf",
        "sedf-comm",
        "bvt",
        "rtds",
        "null",
        "rrobin",
        "atropos",
    ] {
        let toml = format!(
            r#"
[host]
pcpus = 2
profile = "cherkasova2007"
[scheduler]
name = "{sched}"
[run]
duration_s = 1.5
warmup_s = 0.2
[[domain]]
name = "dom0"
vcpus = 2
[domain.workload]
kind = "cpu-stress"
threads = 1
[[domain]]
name = "web"
[domain.workload]
kind = "web-server"
rate = 400
[[domain]]
name = "net"
[domain.workload]
kind = "tcp-stream"
direction = "receive"
[[domain]]
name = "db"
vcpus = 2
[domain.workload]
kind = "oltp"
rows = 10000000
buffer_pool_mb = 256
"#
        );
        check_invariants(&toml, 7_000_000);
    }
}

#[test]
fn driver_domain_io_is_native() {
    // IOzone in Dom0 itself: no backend, so no driver-domain CPU per request
    // beyond its own front end's, and the larger native requests.
    let s = run(&host(
        "credit",
        1,
        "thesis2015",
        "kind = \"iozone\"\nmode = \"seq-read\"",
        r#"kind = "idle""#,
        3.0,
    ));
    assert_eq!(xenmon(&s, "dom0", "backend_batches"), 0.0);
    assert!(wl(&s, "dom0", "throughput_kb_s") > 50_000.0);
}

#[test]
fn io_without_a_driver_domain_is_rejected() {
    let e = rejected(
        r#"
[host]
pcpus = 1
[scheduler]
name = "credit"
[[domain]]
name = "a"
[domain.workload]
kind = "web-server"
rate = 10
"#,
    );
    assert_eq!(e.path, "domain[0].workload.kind");
    assert!(e.message.contains("driver domain"), "{}", e.message);
    let e = rejected(
        r#"
[host]
pcpus = 1
[host.nic]
bandwith_mbit = 10
[scheduler]
name = "credit"
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
"#,
    );
    assert_eq!(e.path, "host.nic.bandwith_mbit");
    assert!(e.message.contains("bandwidth_mbit"), "{}", e.message);
    let e = rejected(
        r#"
[host]
pcpus = 1
[host.disk]
rpm = -5
[scheduler]
name = "credit"
[[domain]]
name = "dom0"
[domain.workload]
kind = "idle"
"#,
    );
    assert_eq!(e.path, "host.disk.rpm");
}

/// A test workload: sends `n` messages of `bytes` to `peer` one at a time,
/// each after the previous one's echo returns (the peer echoes).
struct PingPong {
    peer: &'static str,
    bytes: u64,
    start: bool,
    sent: u64,
    echoed: u64,
}

impl vmsched_core::workload::Workload for PingPong {
    fn kind(&self) -> &'static str {
        "ping-pong"
    }
    fn start(
        &mut self,
        g: &mut vmsched_core::workload::GuestCtx,
        _rng: &mut vmsched_core::rng::Rng,
    ) {
        if self.start {
            let to = g.local_domain(self.peer).unwrap();
            g.send_to(to, self.bytes, 1);
            self.sent += 1;
        }
    }
    fn message(
        &mut self,
        g: &mut vmsched_core::workload::GuestCtx,
        _rng: &mut vmsched_core::rng::Rng,
        from: vmsched_core::workload::Endpoint,
        token: u64,
    ) {
        assert_eq!(Some(from), g.local_domain(self.peer), "sender identified");
        if self.start {
            self.echoed += 1;
            assert_eq!(token, self.sent);
            g.send_to(from, self.bytes, token + 1);
            self.sent += 1;
        } else {
            g.send_to(from, self.bytes, token);
        }
    }
    fn reset_metrics(&mut self, _now: vmsched_core::Time) {
        self.echoed = 0;
    }
    fn metrics(&self, _now: vmsched_core::Time) -> serde_json::Map<String, Json> {
        let mut m = serde_json::Map::new();
        m.insert("echoed".into(), self.echoed.into());
        m
    }
}

#[test]
fn domains_talk_through_the_driver_domains_bridge() {
    // The round-trip costs below are the I/O path's alone: the profile's
    // switch costs (docs/switch-cost.md) are off here.
    let toml = host(
        "credit",
        1,
        "thesis2015",
        r#"kind = "idle""#,
        r#"kind = "idle""#,
        1.0,
    )
    .replace("profile = \"thesis2015\"", &thesis_without_switch_costs())
        + "[[domain]]\nname = \"dom2\"\n[domain.workload]\nkind = \"idle\"\n";
    let sc = scenario(&toml);
    let mut sim = vmsched_core::Simulation::new_with_workloads(&sc, |i, _| match i {
        1 => Some(Box::new(PingPong {
            peer: "dom2",
            bytes: 1000,
            start: true,
            sent: 0,
            echoed: 0,
        })),
        2 => Some(Box::new(PingPong {
            peer: "dom1",
            bytes: 1000,
            start: false,
            sent: 0,
            echoed: 0,
        })),
        _ => None,
    })
    .unwrap();
    sim.run().unwrap();
    let s = sim.summary(0.0);
    let echoed = domain(&s, "dom1")["workload"]["echoed"].as_u64().unwrap();
    // Each way: the sender's backend pass and the receiver's, each a batch
    // (10 µs) plus a packet (5 µs), the guests' wake-ups and switches: a
    // round trip costs tens of µs of CPU, all on the one PCPU, and no NIC.
    // Dom0 is the bottleneck: per round trip 4 backend passes of one packet
    // (5 µs each) and 2 to 4 batch overheads (10 µs each): a reply sent
    // while its backend is still working joins a further pass of the same
    // batch. So 40–60 µs per round trip: 8,300–12,500 in the 0.5 s measured.
    assert!(
        (8_000..=12_600).contains(&echoed),
        "{echoed} round trips in 0.5 s"
    );
    let d0 = domain(&s, "dom0");
    // Dom0 handled both directions of every message: 4 backend passes.
    let ev = d0["xenmon"]["io_events"].as_f64().unwrap();
    assert!(
        (ev - 4.0 * echoed as f64).abs() <= 4.0,
        "{ev} events for {echoed}"
    );
    // Nothing went through the NIC to the outside.
    assert_eq!(
        domain(&s, "dom1")["xentop"]["nettx_kb"],
        domain(&s, "dom2")["xentop"]["netrx_kb"]
    );
}

#[test]
fn a_multi_vcpu_driver_domain_serves_every_guest() {
    // Backends are spread over Dom0's VCPUs (guest g's on VCPU g mod n) and
    // take turns on each: two saturated web guests both get served, about
    // equally, under schedulers with and without global balancing.
    for sched in ["credit", "sedf", "bvt"] {
        let toml = format!(
            r#"
[host]
pcpus = 2
profile = "cherkasova2007"
[scheduler]
name = "{sched}"
[run]
duration_s = 3
warmup_s = 0.5
[[domain]]
name = "dom0"
vcpus = 2
[domain.workload]
kind = "idle"
[[domain]]
name = "web1"
vcpus = 2
[domain.workload]
kind = "web-server"
clients = 32
[[domain]]
name = "web2"
vcpus = 2
[domain.workload]
kind = "web-server"
clients = 32
"#
        );
        let s = run(&toml);
        let (a, b) = (
            wl(&s, "web1", "throughput_req_s"),
            wl(&s, "web2", "throughput_req_s"),
        );
        assert!(a > 100.0 && b > 100.0, "{sched}: {a:.0} and {b:.0} req/s");
        assert!(
            (a - b).abs() / (a + b) < 0.25,
            "{sched}: {a:.0} vs {b:.0} req/s"
        );
        // Both Dom0 VCPUs worked.
        for v in 0..2 {
            let busy = vcpu(&s, "dom0", v)["cpu_pct"].as_f64().unwrap();
            assert!(busy > 1.0, "{sched}: dom0.v{v} ran {busy}%");
        }
    }
}

/// `profile = { ... }`: the `thesis2015` profile with the switch-cost model
/// off (`docs/switch-cost.md`).
fn thesis_without_switch_costs() -> String {
    let mut t = vmsched_core::host::Platform::builtin_table("thesis2015", "host.profile").unwrap();
    t.insert("lazy_idle_switch".into(), false.into());
    for k in [
        "switch_refill_ns",
        "l2_fill_ns",
        "l3_fill_ns",
        "sched_invoke_ns",
        "sched_queue_op_ns",
    ] {
        t.insert(k.into(), 0.into());
    }
    let fields: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("profile = {{ {} }}", fields.join(", "))
}
