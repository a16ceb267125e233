//! Traces (`trace.txt`, `trace.xentrace`): what they hold agrees with the
//! run's own accounting, they start at the start of measurement, they do not
//! change the run, and a file is whole or absent.

mod common;

use common::*;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use vmsched_core::trace::xentrace::{self as xt, tsc, TSC_HZ};
use vmsched_core::trace::{self, NullSink};
use vmsched_core::Time;

const S: u64 = 1_000_000_000;

/// Credit on 3 PCPUs with a capped hog, a 2-VCPU hog and a duty cycle,
/// 1 s of warm-up; `vm2` is paused for a while and one of its VCPUs taken
/// offline, and the cap parks `vm1` (prev_state T, P and D). `vm2` has
/// PCPUs 1 and 2 to itself, so both its VCPUs run all the time and the one
/// taken offline is running then (prev_state P); `vm1` and `web` share
/// PCPU 0. (The affinities pin the placement the test needs: with Xen
/// 4.8+'s placement at creation the VCPU taken offline could be queued.)
const SCENARIO: &str = r#"
[host]
pcpus = 3
[scheduler]
name = "credit"
[run]
duration_s = 4
warmup_s = 1
[[domain]]
name = "vm1"
cap = 50
affinity = [0]
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "vm2"
vcpus = 2
affinity = [1, 2]
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "web"
affinity = [0]
[domain.workload]
kind = "duty-cycle"
util_pct = 20
period_ms = 5
[[action]]
at_s = 1.5
domain = "vm2"
pause = true
[[action]]
at_s = 2
domain = "vm2"
pause = false
[[action]]
at_s = 2.5
domain = "vm2"
vcpus_online = 1
[[action]]
at_s = 3
domain = "vm2"
vcpus_online = 2
"#;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vmsched-trace-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Run `toml` with both traces into `dir`; returns the summary.
fn traced_run(toml: &str, dir: &Path) -> serde_json::Value {
    let mut sim = sim(toml);
    let sink = trace::to_files(
        Some(&dir.join("trace.txt")),
        Some(&dir.join("trace.xentrace")),
    )
    .unwrap()
    .unwrap();
    sim.set_trace(sink);
    sim.run().unwrap();
    sim.finish_trace().unwrap();
    sim.summary(0.0)
}

fn context_switches(summary: &serde_json::Value) -> u64 {
    summary["domains"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["vcpus"].as_array().unwrap())
        .map(|v| v["context_switches"].as_u64().unwrap())
        .sum()
}

// ------------------------------------------------------------------ ftrace

#[derive(Debug)]
struct Line {
    task: (String, u32),
    cpu: u32,
    ns: u64,
    event: String,
    args: HashMap<String, String>,
}

/// Parse one event line strictly: `COMM-PID [CCC] d..2 S.UUUUUU: EVENT: k=v ...`.
fn parse_line(l: &str) -> Line {
    let (head, rest) = l.split_once(": ").unwrap_or_else(|| panic!("{l}"));
    let (event, args) = rest.split_once(": ").unwrap_or_else(|| panic!("{l}"));
    let f: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(f.len(), 4, "{l}");
    let (comm, pid) = f[0].rsplit_once('-').unwrap();
    assert!(
        f[1].starts_with('[') && f[1].ends_with(']') && f[1].len() == 5,
        "{l}"
    );
    assert_eq!(f[2], "d..2", "{l}");
    let (s, us) = f[3].split_once('.').unwrap();
    assert_eq!(us.len(), 6, "{l}");
    let mut map = HashMap::new();
    if event == "tracing_mark_write" {
        // A counter: `C|pid|name|value` (Perfetto's counter tracks).
        map.insert("mark".to_string(), args.to_string());
    }
    for kv in args.split(' ').filter(|_| event != "tracing_mark_write") {
        if kv == "==>" {
            continue;
        }
        let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("{l}"));
        map.insert(k.to_string(), v.to_string());
    }
    Line {
        task: (comm.to_string(), pid.parse().unwrap()),
        cpu: f[1][1..4].parse().unwrap(),
        ns: s.parse::<u64>().unwrap() * S + us.parse::<u64>().unwrap() * 1000,
        event: event.to_string(),
        args: map,
    }
}

#[test]
fn ftrace_text_holds_every_switch_in_consistent_per_cpu_chains() {
    let dir = scratch("ftrace");
    let summary = traced_run(SCENARIO, &dir);
    let text = fs::read_to_string(dir.join("trace.txt")).unwrap();
    assert!(text.starts_with("# tracer: nop\n"));
    let mut on_cpu: HashMap<u32, (String, u32)> = HashMap::new();
    let mut running: HashMap<u32, u32> = HashMap::new(); // pid -> cpu
    let mut last_ns: HashMap<u32, u64> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    let (mut switches, mut wakeups, mut states) = (0u64, 0u64, HashMap::new());
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let e = parse_line(l);
        assert!(e.ns >= S, "traced from the end of the 1 s warm-up: {l}");
        assert!(
            e.ns >= *last_ns.get(&e.cpu).unwrap_or(&0),
            "time order: {l}"
        );
        last_ns.insert(e.cpu, e.ns);
        if let Some(cur) = on_cpu.get(&e.cpu) {
            assert_eq!(&e.task, cur, "the task column is what the CPU runs: {l}");
        }
        match e.event.as_str() {
            "sched_switch" => {
                let a = &e.args;
                let prev = (
                    a["prev_comm"].clone(),
                    a["prev_pid"].parse::<u32>().unwrap(),
                );
                let next = (
                    a["next_comm"].clone(),
                    a["next_pid"].parse::<u32>().unwrap(),
                );
                assert_eq!(prev, e.task, "{l}");
                assert_ne!(prev, next, "{l}");
                assert_eq!(
                    (a["prev_prio"].as_str(), a["next_prio"].as_str()),
                    ("120", "120")
                );
                *states.entry(a["prev_state"].clone()).or_insert(0) += 1;
                for (comm, pid) in [&prev, &next] {
                    assert_eq!(*pid == 0, comm == "<idle>", "{l}");
                    if *pid != 0 {
                        let known = names.entry(*pid).or_insert_with(|| comm.clone());
                        assert_eq!(known, comm, "one name per pid");
                    }
                }
                // The first switch on a CPU may take off a VCPU that ran
                // there since before the trace started.
                let first = !on_cpu.contains_key(&e.cpu);
                if prev.1 != 0 {
                    let was = running.remove(&prev.1);
                    assert!(was == Some(e.cpu) || (first && was.is_none()), "{l}");
                }
                if next.1 != 0 {
                    assert_eq!(running.insert(next.1, e.cpu), None, "on two CPUs: {l}");
                    switches += 1;
                }
                on_cpu.insert(e.cpu, next);
            }
            "sched_waking" | "sched_wakeup" => {
                assert_eq!(e.args["prio"], "120");
                assert_eq!(e.args["target_cpu"].len(), 3);
                assert!(
                    !running.contains_key(&e.args["pid"].parse().unwrap()),
                    "{l}"
                );
                wakeups += 1;
            }
            "tracing_mark_write" => {
                assert!(e.args["mark"].starts_with("C|1|credit."), "{l}");
            }
            other => panic!("unexpected event {other}: {l}"),
        }
    }
    assert_eq!(switches, context_switches(&summary));
    assert!(wakeups > 100 && wakeups % 2 == 0);
    let mut seen: Vec<&str> = states.keys().map(|s| s.as_str()).collect();
    seen.sort();
    assert_eq!(seen, ["D", "P", "R", "S", "T"], "every prev_state occurs");
    let mut pids: Vec<_> = names.into_iter().collect();
    pids.sort();
    let expect = [
        (100, "vm1.v0"),
        (101, "vm2.v0"),
        (102, "vm2.v1"),
        (103, "web.v0"),
    ];
    let expect: Vec<(u32, String)> = expect.iter().map(|(p, n)| (*p, n.to_string())).collect();
    assert_eq!(pids, expect);
    fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- xentrace

#[derive(Debug, Clone)]
struct Rec {
    cpu: u32,
    event: u32,
    tsc: u64,
    extra: Vec<u32>,
}

/// Decode a xentrace file: windows behind CPU-change records, exact sizes.
fn decode(bytes: &[u8]) -> Vec<Rec> {
    let w: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(bytes.len() % 4, 0);
    let (mut i, mut out) = (0, Vec::new());
    while i < w.len() {
        assert_eq!(
            w[i],
            xt::TRC_TRACE_CPU_CHANGE | 2 << 28,
            "a window starts at word {i}"
        );
        let (cpu, size) = (w[i + 1], w[i + 2] as usize);
        assert!(size > 0 && size % 4 == 0);
        let end = i + 3 + size / 4;
        i += 3;
        while i < end {
            let h = w[i];
            assert_ne!(h & 1 << 31, 0, "every record has a TSC");
            let n = ((h >> 28) & 7) as usize;
            out.push(Rec {
                cpu,
                event: h & 0x0fff_ffff,
                tsc: u64::from(w[i + 1]) | u64::from(w[i + 2]) << 32,
                extra: w[i + 3..i + 3 + n].to_vec(),
            });
            i += 3 + n;
        }
        assert_eq!(i, end, "the window size is exact");
    }
    out
}

#[test]
fn xentrace_records_agree_with_the_runs_accounting() {
    let dir = scratch("xentrace");
    let summary = traced_run(SCENARIO, &dir);
    let recs = decode(&fs::read(dir.join("trace.xentrace")).unwrap());
    let start = tsc(Time(S));
    let end = tsc(Time(4 * S));
    let mut last: HashMap<u32, u64> = HashMap::new();
    for r in &recs {
        assert!(r.tsc >= start && r.tsc <= end);
        assert!(
            r.tsc >= *last.get(&r.cpu).unwrap_or(&0),
            "TSC order on a PCPU"
        );
        last.insert(r.cpu, r.tsc);
    }
    // The domains first.
    let adds: Vec<u32> = recs
        .iter()
        .take_while(|r| r.event == xt::TRC_SCHED_DOM_ADD)
        .map(|r| r.extra[0])
        .collect();
    assert_eq!(adds, [0, 1, 2]);
    // SWITCH to a VCPU (not the idle domain) = context switches.
    let switches = recs
        .iter()
        .filter(|r| r.event == xt::TRC_SCHED_SWITCH && r.extra[2] != xt::IDLE_DOMID)
        .count() as u64;
    assert_eq!(switches, context_switches(&summary));
    // Every SWITCH is preceded by INFPREV, INFNEXT and two runstate changes
    // naming the same VCPUs.
    for (i, r) in recs.iter().enumerate() {
        if r.event != xt::TRC_SCHED_SWITCH {
            continue;
        }
        let [prev, next, rc_prev, rc_next] =
            [&recs[i - 4], &recs[i - 3], &recs[i - 2], &recs[i - 1]];
        assert_eq!(prev.event, xt::TRC_SCHED_SWITCH_INFPREV);
        assert_eq!(next.event, xt::TRC_SCHED_SWITCH_INFNEXT);
        assert_eq!(prev.extra[..2], r.extra[..2]);
        assert_eq!(next.extra[..2], r.extra[2..]);
        assert_eq!(rc_prev.event & 0xffff_ff0f, xt::TRC_SCHED_RUNSTATE_CHANGE);
        assert_eq!((rc_prev.event >> 8) & 0xf, 0, "prev was running");
        assert_eq!(rc_next.event & 0xf0, 0, "next runs");
        assert_eq!(rc_prev.extra[0], r.extra[0] << 16 | r.extra[1]);
        assert_eq!(rc_next.extra[0], r.extra[2] << 16 | r.extra[3]);
    }
    // Rebuild each VCPU's time per state from its runstate changes: it is
    // the summary's, to the rounding of TSC ticks.
    let mut acc: HashMap<u32, ([u64; 4], u64, u32)> = HashMap::new();
    for r in &recs {
        if r.event & 0xffff_f00f != xt::TRC_SCHED_RUNSTATE_CHANGE {
            continue;
        }
        let (old, new) = ((r.event >> 8) & 0xf, (r.event >> 4) & 0xf);
        if r.extra[0] >> 16 == xt::IDLE_DOMID {
            continue;
        }
        let e = acc.entry(r.extra[0]).or_insert(([0; 4], start, old));
        assert_eq!(e.2, old, "runstate changes chain for {:x}", r.extra[0]);
        e.0[old as usize] += r.tsc - e.1;
        e.1 = r.tsc;
        e.2 = new;
    }
    assert_eq!(acc.len(), 4, "every VCPU changed state");
    for (key, (mut t, since, state)) in acc {
        t[state as usize] += end - since;
        let (d, v) = ((key >> 16) as usize, (key & 0xffff) as usize);
        let sv = &summary["domains"][d]["vcpus"][v];
        for (k, name) in ["running_ns", "runnable_ns", "blocked_ns", "offline_ns"]
            .iter()
            .enumerate()
        {
            let ns = sv[name].as_u64().unwrap() as f64;
            let from_tsc = t[k] as f64 * S as f64 / TSC_HZ as f64;
            assert!(
                (ns - from_tsc).abs() < 2000.0,
                "d{d}v{v} {name}: {ns} vs {from_tsc}"
            );
        }
    }
    for ev in [xt::TRC_SCHED_WAKE, xt::TRC_SCHED_BLOCK, xt::TRC_SCHED_SLEEP] {
        assert!(recs.iter().any(|r| r.event == ev), "{ev:x} occurs");
    }
    fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------- counters

/// The counters the scheduler declares in its registration are written into
/// both traces: in `trace.txt` as Perfetto counter lines (`C|1|credit.NAME|V`)
/// with the declarations in the header, in `trace.xentrace` as records of
/// scheduler class 7 numbered by declaration; each counter is written when it
/// changes, and its last value in either trace is the summary's.
#[test]
fn declared_counters_are_written_into_both_traces() {
    let dir = scratch("counters");
    let summary = traced_run(SCENARIO, &dir);
    let declared: Vec<&str> = vmsched_core::sched::find("credit")
        .unwrap()
        .declared_counters()
        .map(|c| c.0)
        .collect();
    assert!(declared.len() >= 3, "{declared:?}");
    let want = |name: &str| summary["scheduler_counters"][name].as_u64().unwrap();
    // trace.txt
    let text = fs::read_to_string(dir.join("trace.txt")).unwrap();
    let mut last: HashMap<String, (u64, usize)> = HashMap::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let e = parse_line(l);
        if e.event != "tracing_mark_write" {
            continue;
        }
        let f: Vec<&str> = e.args["mark"].split('|').collect();
        assert_eq!(f.len(), 4, "{l}");
        let name = f[2].strip_prefix("credit.").unwrap().to_string();
        let n = last.get(&name).map_or(0, |x| x.1) + 1;
        last.insert(name, (f[3].parse().unwrap(), n));
    }
    let mut seen: Vec<&str> = last.keys().map(|k| k.as_str()).collect();
    seen.sort();
    let mut all = declared.clone();
    all.sort();
    assert_eq!(seen, all, "every declared counter, and only those");
    for name in &declared {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# counter credit.{name} "))),
            "declared in the header: {name}"
        );
        assert_eq!(last[*name].0, want(name), "{name}: last value in trace.txt");
    }
    assert!(
        last.values().any(|&(_, n)| n > 10),
        "counters that change are written as they change: {last:?}"
    );
    // trace.xentrace
    let recs = decode(&fs::read(dir.join("trace.xentrace")).unwrap());
    let mut xlast: HashMap<usize, u64> = HashMap::new();
    for r in recs
        .iter()
        .filter(|r| r.event & !0x1ff == xt::TRC_VMSCHED_COUNTER)
    {
        assert_eq!(r.extra.len(), 2);
        let i = (r.event & 0x1ff) as usize;
        assert!(i < declared.len(), "{i}");
        xlast.insert(i, u64::from(r.extra[0]) | u64::from(r.extra[1]) << 32);
    }
    assert_eq!(xlast.len(), declared.len());
    for (i, name) in declared.iter().enumerate() {
        assert_eq!(
            xlast[&i],
            want(name),
            "{name}: last value in trace.xentrace"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------------ others

#[test]
fn tracing_changes_nothing_in_the_results() {
    let dir = scratch("same");
    let mut traced = traced_run(SCENARIO, &dir);
    let mut plain = {
        let mut s = sim(SCENARIO);
        s.run().unwrap();
        s.summary(0.0)
    };
    traced.as_object_mut().unwrap().remove("wall_s");
    plain.as_object_mut().unwrap().remove("wall_s");
    assert_eq!(traced, plain);
    let mut nulled = sim(SCENARIO);
    nulled.set_trace(Box::new(NullSink));
    nulled.run().unwrap();
    nulled.finish_trace().unwrap();
    let mut nulled = nulled.summary(0.0);
    nulled.as_object_mut().unwrap().remove("wall_s");
    assert_eq!(nulled, plain);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_appear_whole_at_the_finish_and_never_otherwise() {
    let dir = scratch("whole");
    let mut s = sim(SCENARIO);
    s.set_trace(
        trace::to_files(
            Some(&dir.join("trace.txt")),
            Some(&dir.join("trace.xentrace")),
        )
        .unwrap()
        .unwrap(),
    );
    s.run_until(Time(2 * S)).unwrap();
    let during = listing(&dir);
    assert_eq!(during.len(), 2);
    assert!(
        during
            .iter()
            .all(|n| n.starts_with('.') && n.ends_with(".tmp")),
        "{during:?}"
    );
    drop(s);
    assert!(
        listing(&dir).is_empty(),
        "a run dropped unfinished leaves nothing"
    );
    let mut s = sim(SCENARIO);
    s.set_trace(
        trace::to_files(Some(&dir.join("trace.txt")), None)
            .unwrap()
            .unwrap(),
    );
    s.run_until(Time(2 * S)).unwrap();
    s.discard_trace();
    assert!(listing(&dir).is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_set_mid_run_starts_then_and_one_finished_early_is_a_header() {
    let dir = scratch("mid");
    let mut s = sim(SCENARIO);
    s.run_until(Time(3 * S)).unwrap();
    s.set_trace(
        trace::to_files(Some(&dir.join("trace.txt")), None)
            .unwrap()
            .unwrap(),
    );
    s.run().unwrap();
    s.finish_trace().unwrap();
    let text = fs::read_to_string(dir.join("trace.txt")).unwrap();
    let first = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert!(parse_line(first).ns >= 3 * S - 1_000_000, "{first}");
    // Set during the warm-up and finished before its end: the header alone.
    let mut s = sim(SCENARIO);
    s.set_trace(
        trace::to_files(Some(&dir.join("early.txt")), None)
            .unwrap()
            .unwrap(),
    );
    s.run_until(Time(S / 2)).unwrap();
    s.finish_trace().unwrap();
    let text = fs::read_to_string(dir.join("early.txt")).unwrap();
    assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_place_fails_before_the_run() {
    let dir = scratch("unwritable");
    let e = trace::to_files(Some(&dir.join("missing").join("trace.txt")), None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("cannot be written"), "{e}");
    fs::remove_dir_all(&dir).unwrap();
}
