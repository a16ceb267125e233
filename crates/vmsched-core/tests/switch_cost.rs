//! The indirect cost of a switch and the scheduler's run time
//! (`engine/switch.rs`, `docs/switch-cost.md`): off, they change nothing;
//! on, the lazy return from idle is free, a migrated VCPU refills its whole
//! working set, and a guest that alternates more often with Dom0 spends
//! more CPU per request.

mod common;
use common::*;
use serde_json::Value as Json;

/// The `cherkasova2007` profile's numbers as they were before the switch
/// model, plus `extra` keys.
fn profile(extra: &str) -> String {
    format!(
        r#"
[host.profile]
name = "test"
ctx_switch_ns = 8000
ipi_latency_ns = 4000
io_batch_ns = 30000
net_rx_ns = 18000
net_tx_ns = 18000
guest_pkt_ns = 12000
web_request_ns = 480000
nic_latency_us = 60.0
{extra}
"#
    )
}

const OFF: &str = r#"
lazy_idle_switch = false
switch_refill_ns = 0
cache_line_bytes = 32
l2_lines = 8192
l2_fill_ns = 0
l3_lines = 0
l3_fill_ns = 0
sched_invoke_ns = 0
sched_queue_op_ns = 0
"#;

const ON: &str = r#"
lazy_idle_switch = true
switch_refill_ns = 9000
cache_line_bytes = 32
l2_lines = 8192
l2_fill_ns = 150
sched_invoke_ns = 2000
sched_queue_op_ns = 300
"#;

/// Dom0 (the driver domain, `d0`) and a guest (`d1`) on `pcpus` PCPUs.
fn web_host(sched: &str, pcpus: u32, prof: &str, d0: &str, d1: &str, secs: f64) -> String {
    format!(
        r#"
[host]
pcpus = {pcpus}
{prof}
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
name = "web"
[domain.workload]
{d1}
[[domain]]
name = "hog"
[domain.workload]
kind = "cpu-hog"
"#
    )
}

fn cost(s: &Json, dom: &str, key: &str) -> f64 {
    domain(s, dom)["switch_cost"][key].as_f64().unwrap()
}

#[test]
fn every_key_at_its_off_value_changes_nothing() {
    // The same runs without the new keys, and with each at its off value
    // and the workloads' footprint keys set: bit for bit the same summary.
    for (sched, pcpus) in [("credit", 2), ("sedf", 1), ("bvt", 1), ("credit2", 2)] {
        let d1 = "kind = \"web-server\"\nrate = 600";
        let before = run(&web_host(
            sched,
            pcpus,
            &profile(""),
            "kind = \"idle\"",
            d1,
            3.0,
        ));
        let fp = "\nworking_set_kb = 300\nstream_fill_lines_per_us = 5";
        let after = run(&web_host(
            sched,
            pcpus,
            &profile(OFF),
            &format!("kind = \"idle\"{fp}"),
            &format!("{d1}{fp}"),
            3.0,
        ));
        assert_eq!(before, after, "{sched}");
        for dom in ["dom0", "web", "hog"] {
            // A dispatch cut short within its switch pays only part of it.
            let most = cost(&after, dom, "real_switches") * 8e-6;
            let direct = cost(&after, dom, "direct_s");
            assert!(
                direct <= most + 1e-9 && direct >= 0.9 * most,
                "{sched} {dom}"
            );
            for key in ["tlb_refill_s", "cache_refill_s", "sched_s"] {
                assert_eq!(cost(&after, dom, key), 0.0, "{sched} {dom} {key}");
            }
            assert_eq!(cost(&after, dom, "lazy_returns"), 0.0);
        }
    }
}

/// One domain alone on one PCPU, busy 1 ms in every 4: every dispatch is a
/// return from idle to the VCPU still loaded there.
fn alone(extra: &str) -> Json {
    run(&format!(
        r#"
[host]
pcpus = 1
{}
[scheduler]
name = "credit"
[run]
duration_s = 2
[[domain]]
name = "vm"
[domain.workload]
kind = "duty-cycle"
util_pct = 25
period_ms = 4
"#,
        profile(extra)
    ))
}

#[test]
fn return_from_idle_to_the_loaded_vcpu_costs_nothing() {
    let lazy = alone(ON);
    let eager = alone(&ON.replace("lazy_idle_switch = true", "lazy_idle_switch = false"));
    // Lazy: only the very first dispatch switches; every return is free of
    // switch, refill and cache costs, and still counts as an execution.
    assert_eq!(cost(&lazy, "vm", "real_switches"), 1.0);
    let returns = cost(&lazy, "vm", "lazy_returns");
    assert!(returns > 400.0, "{returns} returns from idle");
    let execs = domain(&lazy, "vm")["xenmon"]["exec_per_s"]
        .as_f64()
        .unwrap()
        * 2.0;
    assert!((execs - (returns + 1.0)).abs() < 0.5, "{execs} executions");
    assert!((cost(&lazy, "vm", "direct_s") - 8e-6).abs() < 1e-12);
    assert!((cost(&lazy, "vm", "tlb_refill_s") - 9e-6).abs() < 1e-12);
    // The first (cold) dispatch refills the whole default 16 KB working
    // set: 512 lines of 32 bytes at 150 ns.
    assert!((cost(&lazy, "vm", "cache_refill_s") - 512.0 * 150e-9).abs() < 1e-12);
    // Eager: every dispatch pays the switch and the refill (the cache
    // part stays nothing: nothing else ran in between).
    let n = cost(&eager, "vm", "real_switches");
    assert_eq!(cost(&eager, "vm", "lazy_returns"), 0.0);
    assert!((cost(&eager, "vm", "direct_s") - n * 8e-6).abs() < 1e-9);
    assert!((cost(&eager, "vm", "tlb_refill_s") - n * 9e-6).abs() < 1e-9);
    assert!((cost(&eager, "vm", "cache_refill_s") - 512.0 * 150e-9).abs() < 1e-12);
    // The difference is CPU the VCPU spent: 17 µs per return.
    let cpu = |s: &Json| domain(s, "vm")["cpu_s"].as_f64().unwrap();
    let extra = cpu(&eager) - cpu(&lazy);
    assert!(
        (extra - (n - 1.0) * 17e-6).abs() < 20e-6,
        "eager spent {extra} s more over {n} dispatches"
    );
}

/// A CPU hog with a 64 KB working set alone on a 2-PCPU host, pinned to
/// PCPU 0, and from 1 s on (if `moved`) to PCPU 1.
fn pinned_hog(moved: bool) -> Json {
    let action = if moved {
        "[[action]]\nat_s = 1.0\ndomain = \"vm\"\naffinity = [1]\n"
    } else {
        ""
    };
    run(&format!(
        r#"
[host]
pcpus = 2
{}
[scheduler]
name = "credit"
[run]
duration_s = 2
[[domain]]
name = "vm"
affinity = [0]
[domain.workload]
kind = "cpu-hog"
working_set_kb = 64
{action}
"#,
        profile(ON)
    ))
}

#[test]
fn a_migrated_vcpu_pays_its_whole_working_set() {
    let stay = pinned_hog(false);
    let moved = pinned_hog(true);
    let whole = 64.0 * 1024.0 / 32.0 * 150e-9;
    // Staying, it pays its working set once (the cold start)...
    assert!((cost(&stay, "vm", "cache_refill_s") - whole).abs() < 1e-12);
    // ...moved, once more: on PCPU 1 nothing of it is resident.
    assert_eq!(domain(&moved, "vm")["vcpus"][0]["migrations"], 1);
    assert!((cost(&moved, "vm", "cache_refill_s") - 2.0 * whole).abs() < 1e-12);
}

/// Guest CPU per request when Dom0 (a CPU hog besides its backend) and the
/// web guest take turns every `slice_us` under round-robin.
fn cpu_per_request(slice_us: u64, extra: &str) -> f64 {
    let s = run(&format!(
        r#"
[host]
pcpus = 1
{}
[scheduler]
name = "rrobin"
rr_slice = {}
[run]
duration_s = 3
warmup_s = 0.5
[[domain]]
name = "dom0"
[domain.workload]
kind = "cpu-hog"
stream_fill_lines_per_us = 4
[[domain]]
name = "web"
[domain.workload]
kind = "web-server"
clients = 8
"#,
        profile(extra),
        slice_us * 1000
    ));
    let web = domain(&s, "web");
    let done = web["workload"]["completed"].as_f64().unwrap();
    assert!(done > 100.0, "{done} requests at slice {slice_us} µs");
    web["cpu_s"].as_f64().unwrap() / done
}

#[test]
fn guest_cpu_per_request_grows_as_alternation_with_dom0_quickens() {
    let per_req: Vec<f64> = [5000, 1000, 300, 100]
        .iter()
        .map(|&x| cpu_per_request(x, ON))
        .collect();
    for w in per_req.windows(2) {
        assert!(
            w[1] > w[0] * 1.02,
            "CPU per request {per_req:?} (slices 5000..100 µs)"
        );
    }
    // Without the switch model the same alternation costs far less.
    let off_100 = cpu_per_request(100, OFF);
    assert!(per_req[3] > off_100 * 1.1, "{} vs {off_100}", per_req[3]);
}

#[test]
fn scheduler_time_is_charged_to_the_dispatched_vcpu() {
    let only_sched = ON
        .replace("lazy_idle_switch = true", "lazy_idle_switch = false")
        .replace("switch_refill_ns = 9000", "switch_refill_ns = 0")
        .replace("l2_fill_ns = 150", "l2_fill_ns = 0");
    let s = run(&web_host(
        "credit",
        1,
        &profile(&only_sched),
        "kind = \"idle\"",
        "kind = \"web-server\"\nrate = 300",
        2.0,
    ));
    // Every dispatch paid at least the decision; queue operations add more.
    for dom in ["dom0", "web", "hog"] {
        let n = cost(&s, dom, "real_switches");
        let sched = cost(&s, dom, "sched_s");
        assert!(n > 10.0, "{dom}: {n} dispatches");
        assert!(
            sched >= 0.9 * n * 2e-6,
            "{dom}: {sched} s over {n} dispatches"
        );
        assert!(sched < n * 2e-5, "{dom}: {sched} s over {n} dispatches");
    }
}

/// Two CPU hogs taking turns every `slice_us` under round-robin on one PCPU:
/// `big` with a working set of the whole 256 KB L2 (8 192 lines, 1.23 ms to
/// refill at 150 ns a line), `small` with 16 KB that streams 4 lines a µs.
fn short_quanta(slice_us: u64) -> Json {
    run(&format!(
        r#"
[host]
pcpus = 1
{}
[scheduler]
name = "rrobin"
rr_slice = {}
[run]
duration_s = 1
[[domain]]
name = "big"
[domain.workload]
kind = "cpu-hog"
working_set_kb = 256
stream_fill_lines_per_us = 0
[[domain]]
name = "small"
[domain.workload]
kind = "cpu-hog"
working_set_kb = 16
stream_fill_lines_per_us = 4
"#,
        profile(ON),
        slice_us * 1000
    ))
}

/// CPU a domain spent on its own work: its CPU less what it paid on switches.
fn useful_s(s: &Json, dom: &str) -> f64 {
    let paid: f64 = ["direct_s", "tlb_refill_s", "cache_refill_s", "sched_s"]
        .iter()
        .map(|k| cost(s, dom, k))
        .sum();
    domain(s, dom)["cpu_s"].as_f64().unwrap() - paid
}

#[test]
fn a_vcpu_whose_quanta_are_shorter_than_its_refill_still_progresses() {
    // 400 µs quanta bring in at most 2 667 of the big hog's 8 192 lines: its
    // first runs are all refill, the lines stay and the rest is paid on the
    // next runs, and then its work progresses.
    let s = short_quanta(400);
    let big = useful_s(&s, "big");
    let cpu = domain(&s, "big")["cpu_s"].as_f64().unwrap();
    assert!(cpu > 0.45, "big hog ran {cpu} s");
    // Each quantum the small hog brings in about 2 000 lines (its 1 600
    // streamed and its own refill), of which the big hog then refills about
    // 1 800: some 270 µs of each 400 µs quantum.
    assert!(
        big > 0.3 * cpu,
        "big hog: {big} s of work in {cpu} s of CPU"
    );
    // In steady state what it refills per dispatch is what the small hog
    // brought in during one quantum (its streamed lines and its own
    // refill), far below its whole working set.
    let per_dispatch = cost(&s, "big", "cache_refill_s") / cost(&s, "big", "real_switches");
    let whole = 8192.0 * 150e-9;
    assert!(per_dispatch < 0.5 * whole, "{per_dispatch} s per dispatch");
    // Bounded by the run: no quantum brings in more lines than it has time
    // for, so the small hog never refills more than 400 µs of the big
    // hog's lines could have evicted of its own 512.
    let small_per = cost(&s, "small", "cache_refill_s") / cost(&s, "small", "real_switches");
    let evictable = 512.0 * (1.0 - (-(400e-6 / 150e-9 + 400.0 * 4.0) / 8192.0f64).exp()) * 150e-9;
    assert!(small_per <= evictable * 1.01, "{small_per} > {evictable}");
}

/// A domain alone on one PCPU capped so that its runs end inside its first
/// refill: the lines it did not bring in are paid at its next dispatch, a
/// lazy return from idle, and only those.
#[test]
fn a_lazy_return_pays_only_the_refill_left_unpaid() {
    let s = run(&format!(
        r#"
[host]
pcpus = 1
{}
[scheduler]
name = "credit"
[run]
duration_s = 2
[[domain]]
name = "vm"
cap = 10
[domain.workload]
kind = "cpu-hog"
working_set_kb = 256
"#,
        profile(ON)
    ));
    assert_eq!(cost(&s, "vm", "real_switches"), 1.0);
    assert!(cost(&s, "vm", "lazy_returns") > 5.0);
    // Its whole working set once (it was cold), never more: nothing else
    // ran to evict it.
    let whole = 8192.0 * 150e-9;
    assert!((cost(&s, "vm", "cache_refill_s") - whole).abs() < 1e-9);
}
