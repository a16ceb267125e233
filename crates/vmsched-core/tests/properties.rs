//! Invariants of the engine and of every scheduler, property-tested over
//! random scenarios (`docs/testing.md`).
//!
//! **Generator.** A scenario is drawn from the scheduler's own parameter
//! declarations (`sched::registry()`): every global and per-domain parameter
//! is left at its default or given a value from its declared range (time
//! parameters up to a horizon the runs can observe; versions from the Xen
//! releases inside the declared range). Small per-scheduler hooks add what a
//! declaration cannot say: cross-parameter constraints (SEDF slice ≤ period,
//! RTDS budget ≤ period, Atropos period/slice/latency together, the ARINC 653
//! schedule table naming the generated domains) and biases that make each
//! scheduler's own guarantee testable often (extratime off, caps). Whatever
//! the scenario validation still rejects (a parameter a release does not have,
//! a rate limit longer than the slice, ...) is repaired generically by
//! dropping the parameter the error names. A scheduler added to the registry
//! is therefore generated without further work; `every_scheduler_is_tested`
//! fails until it is listed below.
//!
//! Hosts are random topologies (sockets × cores × threads, 1–8 PCPUs) and
//! sometimes a custom platform profile; 1–6 domains of 1–3 VCPUs with random
//! hard and soft affinity and random workloads (cpu-hog, duty-cycle,
//! sysbench-cpu, transient, idle); random warm-up.
//!
//! **Properties, every scheduler.** Checked at many instants while stepping
//! with `run_until` (random, irregular steps, plus the instants where the
//! scheduler switches): no VCPU on two PCPUs and the PCPU and VCPU records
//! agree; every VCPU's state is the one its flags imply; every VCPU's
//! running + runnable + blocked + offline equals the elapsed time exactly.
//! After the run: no `SimError::Internal`; the measured time is the run
//! minus the warm-up; per VCPU the four states sum to it exactly; busy PCPU
//! time equals VCPU running time; and a second, unstepped run gives an
//! identical summary (apart from `wall_s`): same scenario and seed, same
//! result, and cutting a run into steps changes nothing.
//!
//! **Properties, per scheduler** (where its documentation promises them):
//! see [`Guarantees`]. Case counts: `PROPTEST_CASES` overrides the default
//! of each test (`PROPTEST_CASES=5000 cargo test --release --test
//! properties` for a long run; see docs/testing.md).

mod common;
use common::{at_ms, sim};
use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::{json, Map, Value as Json};
use std::fmt;
use vmsched_core::domain::RunState;
use vmsched_core::params::{ParamKind, ParamScope, ParamSpec, Version};
use vmsched_core::sched::{self, SchedulerInfo};
use vmsched_core::time::{secs_f64, NS_PER_MS, NS_PER_US};
use vmsched_core::{Scenario, Simulation, Time};

// ---------------------------------------------------------------------------
// Case counts
// ---------------------------------------------------------------------------

/// Cases per test: `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // A failing case is expensive to shrink; a few hundred steps find a small one.
        max_shrink_iters: 400,
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

/// Default cases per scheduler in the generic test (about 2–4 s each on
/// one core of the CI machine; see docs/testing.md).
const CASES_PER_SCHEDULER: u32 = 48;

// ---------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------

/// Every Xen release a `xen_version` may name, oldest first; a scheduler's
/// declared range selects its own.
const RELEASES: &[&str] = &[
    "2.0", "3.0", "3.0.1", "3.0.2", "3.0.3", "3.0.4", "3.1", "3.2", "3.3", "3.4", "4.0", "4.1",
    "4.2", "4.3", "4.4", "4.5", "4.6", "4.7", "4.8", "4.9", "4.10", "4.11", "4.12", "4.13", "4.14",
    "4.15", "4.16", "4.17", "4.18", "4.19", "4.20", "4.21", "4.22",
];

/// Longest value drawn for a time parameter: runs last 0.1–1.5 s, so longer
/// periods or slices would leave little to observe. (The declared maximum is
/// still drawn when it is below this.)
const HORIZON_NS: f64 = 300e6;

/// Shortest and longest run drawn (ms).
const DURATION_MS: (u32, u32) = (100, 1500);

fn ns_per_unit(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "us" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

/// `min + r` with `r` of a uniformly drawn bit length: small offsets as often
/// as large ones.
fn log_offset(min: i64, max: i64) -> BoxedStrategy<i64> {
    let span = (max as i128 - min as i128) as u64;
    let bits = 64 - span.leading_zeros();
    (0..=bits, any::<u64>())
        .prop_map(move |(b, r)| {
            let mask = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
            (min as i128 + (r & mask).min(span) as i128) as i64
        })
        .boxed()
}

/// An integer in `min..=max`: the ends, the default, uniform, and
/// log-spread values (around 0 when the range spans it).
fn int_in(min: i64, max: i64, default: Option<i64>) -> BoxedStrategy<i64> {
    let mut opts: Vec<(u32, BoxedStrategy<i64>)> = vec![
        (1, Just(min).boxed()),
        (1, Just(max).boxed()),
        (2, (min..=max).boxed()),
    ];
    if min < 0 && max > 0 {
        opts.push((2, log_offset(0, max)));
        opts.push((2, log_offset(0, -min).prop_map(|x| -x).boxed()));
    } else {
        opts.push((4, log_offset(min, max)));
    }
    if let Some(d) = default.filter(|d| (min..=max).contains(d)) {
        opts.push((1, Just(d).boxed()));
    }
    Union::new_weighted(opts).boxed()
}

/// Round to 3 decimals (µs precision for ms values).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A number in `lo..=hi` (lo > 0), log-uniform, to 3 decimals.
fn log_float(lo: f64, hi: f64) -> BoxedStrategy<f64> {
    (0.0f64..=1.0)
        .prop_map(move |u| round3(lo * (hi / lo).powf(u)).clamp(lo, hi))
        .boxed()
}

fn float_in(min: f64, max: f64, default: Option<f64>) -> BoxedStrategy<f64> {
    let lo = min.max(1e-3);
    let mut opts: Vec<(u32, BoxedStrategy<f64>)> = vec![
        (1, Just(min).boxed()),
        (1, Just(max).boxed()),
        (4, log_float(lo.min(max), max)),
    ];
    if let Some(d) = default.filter(|d| (min..=max).contains(d)) {
        opts.push((1, Just(d).boxed()));
    }
    Union::new_weighted(opts).boxed()
}

/// A value for one declared parameter, or `None` for kinds a hook must draw
/// (names, tables).
fn value_of(spec: &ParamSpec) -> Option<BoxedStrategy<Json>> {
    use vmsched_core::params::Default as D;
    let horizon = ns_per_unit(spec.unit).map(|k| HORIZON_NS / k);
    Some(match &spec.kind {
        ParamKind::Int { min, max } => {
            let max = match horizon {
                Some(h) => (*max).min((h as i64).max(*min)),
                None => *max,
            };
            let default = match spec.default {
                D::Int(i) => Some(i),
                _ => None,
            };
            int_in(*min, max, default).prop_map(Json::from).boxed()
        }
        ParamKind::Float { min, max } => {
            let max = match horizon {
                Some(h) => max.min(h.max(*min)),
                None => *max,
            };
            let default = match spec.default {
                D::Float(f) => Some(f),
                _ => None,
            };
            float_in(*min, max, default).prop_map(Json::from).boxed()
        }
        ParamKind::Bool => any::<bool>().prop_map(Json::from).boxed(),
        ParamKind::Choice(c) => prop::sample::select(c.to_vec())
            .prop_map(Json::from)
            .boxed(),
        ParamKind::Version { min, max } => {
            let (min, max) = (*min, *max);
            let ok: Vec<&'static str> = RELEASES
                .iter()
                .copied()
                .filter(|r| Version::parse(r).unwrap().within(min, max))
                .collect();
            assert!(!ok.is_empty(), "no known release in {min}..{max}");
            prop::sample::select(ok).prop_map(Json::from).boxed()
        }
        ParamKind::FloatList { .. }
        | ParamKind::Name
        | ParamKind::NameList
        | ParamKind::TableList(_) => return None,
    })
}

/// Random values for the declared parameters of one scope: each is left at
/// its default (absent) or given explicitly, with even odds.
fn params_of(specs: &'static [ParamSpec], scope: ParamScope) -> BoxedStrategy<Map<String, Json>> {
    let parts: Vec<BoxedStrategy<Option<(String, Json)>>> = specs
        .iter()
        .filter(|s| s.scope == scope)
        .filter_map(|s| {
            let name = s.name.to_string();
            value_of(s).map(|v| {
                prop_oneof![Just(None), v.prop_map(move |j| Some((name.clone(), j))),].boxed()
            })
        })
        .collect();
    parts
        .prop_map(|v| v.into_iter().flatten().collect::<Map<String, Json>>())
        .boxed()
}

/// Every topology of 1–8 PCPUs.
fn topologies() -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    for s in 1..=8u32 {
        for c in 1..=8u32 {
            for t in 1..=8u32 {
                if s * c * t <= 8 {
                    out.push((s, c, t));
                }
            }
        }
    }
    out.sort_by_key(|&(s, c, t)| (s * c * t, s, t));
    out
}

fn topology(sched: &str) -> BoxedStrategy<(u32, u32, u32)> {
    let all = prop::sample::select(topologies());
    if sched == "arinc653" {
        // Its docs recommend a one-PCPU pool; multi-PCPU hosts are allowed
        // (Xen serialises the VCPUs there).
        prop_oneof![1 => Just((1, 1, 1)), 1 => all].boxed()
    } else {
        all.boxed()
    }
}

/// A platform: the default profile, or random costs from the declaration.
fn profile() -> BoxedStrategy<Option<Json>> {
    prop_oneof![
        3 => Just(None),
        1 => params_of(vmsched_core::host::PROFILE_PARAMS, ParamScope::Global).prop_map(|mut m| {
            // Both numbers are required in a custom profile.
            m.entry("ctx_switch_ns").or_insert(json!(2000));
            m.entry("ipi_latency_ns").or_insert(json!(1500));
            // TCP options come in 32-bit words.
            if let Some(n) = m.get("tcp_options_bytes").and_then(Json::as_u64) {
                m.insert("tcp_options_bytes".into(), json!(n / 4 * 4));
            }
            Some(Json::Object(m))
        }),
    ]
    .boxed()
}

fn workload() -> BoxedStrategy<Json> {
    prop_oneof![
        3 => (0u32..=4).prop_map(|t| if t <= 2 {
            json!({"kind": "cpu-hog"})
        } else {
            json!({"kind": "cpu-hog", "threads": t - 2})
        }),
        3 => (0u32..=100, log_float(0.05, 200.0), 0u32..=3, any::<bool>()).prop_map(
            |(u, p, t, r)| json!({"kind": "duty-cycle", "util_pct": u, "period_ms": p, "threads": t, "random_phase": r})
        ),
        2 => (1u32..=4, log_float(0.01, 500.0), 0u32..=300, any::<bool>(), log_float(0.05, 10.0)).prop_map(
            |(t, w, s, r, g)| json!({"kind": "sysbench-cpu", "threads": t, "work_ms": w,
                                     "start_s": f64::from(s) / 1000.0, "repeat": r, "guest_slice_ms": g})
        ),
        2 => (log_float(0.1, 300.0), log_float(0.1, 300.0), 0u32..=200, 0u32..=3).prop_map(
            |(on, off, o, t)| json!({"kind": "transient", "on_ms": on, "off_ms": off, "offset_ms": o, "threads": t})
        ),
        1 => Just(json!({"kind": "idle"})),
    ]
    .boxed()
}

/// A domain as drawn, before the per-scheduler hooks.
/// ARINC 653 table entries (domain index, VCPU, runtime ms) and the idle time
/// at the end of the major frame (ms), if any.
type ArincTable = (Vec<(usize, u32, f64)>, Option<f64>);
/// Work-conservation snapshot: time, running ns, runnable ns, runnable flags.
type Snapshot = (u64, Vec<u64>, Vec<u64>, Vec<bool>);

#[derive(Clone, Debug)]
struct RawDom {
    vcpus: u32,
    affinity: Option<Vec<u32>>,
    soft: Option<Vec<u32>>,
    sched: Map<String, Json>,
    workload: Json,
    /// Randomness for the hooks.
    r: u64,
}

fn mask_list(bits: u32, n: u32) -> Vec<u32> {
    (0..n).filter(|p| bits & (1 << p) != 0).collect()
}

fn domain(info: &'static SchedulerInfo, npcpus: u32) -> BoxedStrategy<RawDom> {
    let full = (1u32 << npcpus) - 1;
    (
        1u32..=3,
        prop_oneof![2 => Just(None), 1 => (1u32..=full).prop_map(Some)],
        prop_oneof![3 => Just(None), 1 => (1u32..=full).prop_map(Some)],
        params_of(info.params, ParamScope::Domain),
        workload(),
        any::<u64>(),
    )
        .prop_map(move |(vcpus, hard, soft, sched, workload, r)| RawDom {
            vcpus,
            affinity: hard.map(|b| mask_list(b, npcpus)),
            soft: soft.map(|b| mask_list(b, npcpus)),
            sched,
            workload,
            r,
        })
        .boxed()
}

/// Everything drawn for one case.
#[derive(Clone, Debug)]
struct Raw {
    topo: (u32, u32, u32),
    profile: Option<Json>,
    duration_ms: u32,
    warm: u32,
    seed: u64,
    step_us: u32,
    globals: Map<String, Json>,
    r: u64,
    doms: Vec<RawDom>,
    /// ARINC 653 schedule table: (domain index, VCPU, runtime ms) entries and
    /// the extra idle time at the end of the major frame (ms), if any.
    table: Option<ArincTable>,
}

/// A generated case: the scenario tree (after the hooks and the repair) and
/// how to step through it.
#[derive(Clone)]
struct Case {
    tree: Json,
    sc: Scenario,
    step_ns: u64,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = toml::to_string(&self.tree).unwrap_or_else(|_| self.tree.to_string());
        write!(f, "step {} ns, scenario:\n{text}", self.step_ns)
    }
}

impl Case {
    fn sched(&self) -> &str {
        &self.sc.scheduler.name
    }
    fn global(&self) -> &vmsched_core::params::Params {
        &self.sc.scheduler.params
    }
    fn version_at_least(&self, major: u16, minor: u16) -> bool {
        self.global().version("xen_version") >= Version::new(major, minor)
    }
    fn npcpus(&self) -> usize {
        self.sc.host.topology.npcpus()
    }
}

fn case(info: &'static SchedulerInfo) -> BoxedStrategy<Case> {
    (
        topology(info.name),
        profile(),
        DURATION_MS.0..=DURATION_MS.1,
        0u32..=2,
        0u64..1000,
        log_offset(50, 5000),
    )
        .prop_flat_map(move |(topo, profile, duration_ms, warm, seed, step_us)| {
            let n = topo.0 * topo.1 * topo.2;
            (
                Just((topo, profile, duration_ms, warm, seed, step_us as u32)),
                params_of(info.params, ParamScope::Global),
                any::<u64>(),
                prop::collection::vec(domain(info, n), 1..=6),
            )
        })
        .prop_flat_map(move |(head, globals, r, doms)| {
            let table = if info.name == "arinc653" {
                arinc_table(&doms)
            } else {
                Just(None).boxed()
            };
            (Just((head, globals, r, doms)), table)
        })
        .prop_map(
            move |(
                ((topo, profile, duration_ms, warm, seed, step_us), globals, r, doms),
                table,
            )| {
                build(
                    info,
                    Raw {
                        topo,
                        profile,
                        duration_ms,
                        warm,
                        seed,
                        step_us,
                        globals,
                        r,
                        doms,
                        table,
                    },
                )
            },
        )
        .boxed()
}

/// An ARINC 653 schedule table over the drawn domains (sometimes none: Xen's
/// default table of domain 0's VCPUs).
#[allow(clippy::type_complexity)]
fn arinc_table(doms: &[RawDom]) -> BoxedStrategy<Option<(Vec<(usize, u32, f64)>, Option<f64>)>> {
    let vcpus: Vec<u32> = doms.iter().map(|d| d.vcpus).collect();
    let nd = doms.len();
    let entry =
        (0..nd, 0u32..3, log_float(0.05, 30.0)).prop_map(move |(d, v, rt)| (d, v % vcpus[d], rt));
    prop_oneof![
        1 => Just(None),
        5 => (
            prop::collection::vec(entry, 1..=8),
            prop_oneof![Just(None), (0.0f64..30.0).prop_map(|x| Some(round3(x)))],
        )
            .prop_map(Some),
    ]
    .boxed()
}

/// Credit and the proposals built on it: Credit's parameters, accounting,
/// caps and their checks.
const CREDIT_FAMILY: &[&str] = &["credit", "credit-enhanced", "credit-dynweight"];

/// Per-scheduler knowledge the declarations cannot carry, for the global
/// parameters: cross-parameter constraints worth keeping rather than
/// repairing away. `r` is randomness for the hook's choices.
fn fix_globals(sched: &str, g: &mut Map<String, Json>, r: u64) {
    if CREDIT_FAMILY.contains(&sched) {
        // The cap property is checked where ticks fall on accounting
        // instants (slice a multiple of 3 ms or under 3 ms): make that common.
        if let Some(t) = g.get("tslice_ms").and_then(Json::as_i64) {
            if r.is_multiple_of(2) && t >= 3 {
                g.insert("tslice_ms".into(), json!(t / 3 * 3));
            }
        }
        let t = g.get("tslice_ms").and_then(Json::as_i64).unwrap_or(30);
        if let Some(rl) = g.get("ratelimit_us").and_then(Json::as_i64) {
            let rl = if rl > 0 && rl < 100 { 100 } else { rl };
            g.insert("ratelimit_us".into(), json!(rl.min(t * 1000)));
        }
    }
}

/// Per-scheduler hook for one domain's parameters (see [`fix_globals`]).
fn fix_domain(sched: &str, g: &Map<String, Json>, d: &mut Map<String, Json>, r: u64) {
    let num = |d: &Map<String, Json>, k: &str| d.get(k).and_then(Json::as_f64);
    match sched {
        "sedf" | "sedf-comm" => match r % 5 {
            // Best effort (the creation default), perhaps with latency/extratime.
            0 => {
                for k in ["period", "slice", "weight"] {
                    d.remove(k);
                }
                if d.get("extratime") == Some(&json!(false)) {
                    d.remove("extratime");
                }
            }
            // Weight mode (xl sched-sedf -w).
            1 => {
                d.remove("period");
                d.remove("slice");
                if d.get("weight").and_then(Json::as_i64).unwrap_or(0) == 0 {
                    d.insert("weight".into(), json!(1 + (r / 5) % 100));
                }
            }
            // Time-driven; in mode 3 without extra time (the hard cap).
            2 | 3 => {
                d.remove("weight");
                let period = num(d, "period")
                    .filter(|&p| p >= 0.01)
                    .unwrap_or(1.0 + ((r / 5) % 100) as f64);
                let slice = num(d, "slice")
                    .filter(|&s| s >= 0.005)
                    .unwrap_or(round3(period * (1 + (r / 500) % 100) as f64 / 100.0));
                let (period, slice) = if slice > period {
                    (slice, period)
                } else {
                    (period, slice)
                };
                d.insert("period".into(), json!(period));
                d.insert("slice".into(), json!(slice.max(0.005)));
                if r % 5 == 3 {
                    d.insert("extratime".into(), json!(false));
                }
            }
            // As drawn (the repair removes what validation rejects).
            _ => {}
        },
        "rtds" => {
            let period = d.get("period").and_then(Json::as_i64);
            let budget = d.get("budget").and_then(Json::as_i64);
            match (period, budget) {
                (Some(p), Some(b)) if b > p => {
                    d.insert("period".into(), json!(b));
                    d.insert("budget".into(), json!(p));
                }
                (Some(p), None) if p < 4000 => {
                    let b = (p * (1 + (r % 100) as i64) / 100).max(10);
                    d.insert("budget".into(), json!(b));
                }
                (None, Some(b)) if b > 10_000 => {
                    d.insert("period".into(), json!(b));
                }
                _ => {}
            }
            let pre_extratime = g
                .get("xen_version")
                .and_then(Json::as_str)
                .is_some_and(|v| Version::parse(v).unwrap() < Version::new(4, 10));
            if pre_extratime {
                d.remove("extratime");
            } else if (r / 100).is_multiple_of(3) {
                d.insert("extratime".into(), json!(false));
            }
        }
        "atropos" => {
            const T: [&str; 3] = ["period", "slice", "latency"];
            if r.is_multiple_of(3) {
                for k in T {
                    d.remove(k);
                }
            } else {
                // Periods of at least 10 µs: Xen 2.0 advances a late
                // period one period at a time, so a 1 ns period costs a
                // million loop rounds per millisecond of lateness (in Xen
                // as here): right, but too slow for many cases.
                let get = |k: &str, dflt: i64| d.get(k).and_then(Json::as_i64).unwrap_or(dflt);
                let period = get("period", 1_000_000 * (1 + ((r / 3) % 200) as i64)).max(10_000);
                let slice = get("slice", period * ((r / 600) % 101) as i64 / 100).min(period);
                let latency = get("latency", period / 2).clamp(10_000, period);
                d.insert("period".into(), json!(period));
                d.insert("slice".into(), json!(slice));
                d.insert("latency".into(), json!(latency));
            }
        }
        _ => {}
    }
}

/// The smallest explicit time parameter of the scheduler (ns), if any.
fn shortest_time_param(info: &SchedulerInfo, tree: &Json) -> Option<f64> {
    let mut best: Option<f64> = None;
    let mut see = |table: &Json| {
        for spec in info.params {
            let (Some(k), Some(v)) = (ns_per_unit(spec.unit), table.get(spec.name)) else {
                continue;
            };
            if let Some(x) = v.as_f64().filter(|&x| x > 0.0) {
                best = Some(best.map_or(x * k, |b: f64| b.min(x * k)));
            }
        }
    };
    see(&tree["scheduler"]);
    for d in tree["domain"].as_array().unwrap() {
        if let Some(s) = d.get("sched") {
            see(s);
        }
    }
    best
}

/// Drop the parameter a validation error names (or, if it is not given
/// explicitly, the whole table it belongs to). Returns false if there is
/// nothing left to drop.
fn drop_at(tree: &mut Json, path: &str) -> bool {
    let mut parts: Vec<String> = Vec::new();
    for seg in path.split('.') {
        match seg.split_once('[') {
            Some((name, rest)) => {
                parts.push(name.to_string());
                parts.push(rest.trim_end_matches(']').to_string());
            }
            None => parts.push(seg.to_string()),
        }
    }
    let (key, parent) = parts.split_last().expect("non-empty path");
    let mut node = &mut *tree;
    for p in parent {
        node = match p.parse::<usize>() {
            Ok(i) => &mut node[i],
            Err(_) => &mut node[p.as_str()],
        };
    }
    if let Some(t) = node.as_object_mut() {
        if t.remove(key).is_some() {
            return true;
        }
        // The value at fault is a default: drop the table's explicit values.
        let keep = |k: &str| k == "name";
        let before = t.len();
        t.retain(|k, _| keep(k));
        return t.len() < before;
    }
    false
}

/// Assemble the scenario tree, apply the hooks, repair what validation
/// still rejects, and bound the run length by the scheduler's time scale.
fn build(info: &'static SchedulerInfo, mut raw: Raw) -> Case {
    fix_globals(info.name, &mut raw.globals, raw.r);
    let names: Vec<String> = (0..raw.doms.len())
        .map(|i| {
            // Half the time the first domain is "dom0" (a driver domain):
            // SEDF and Atropos give it Xen's Domain-0 defaults.
            if i == 0 && raw.r.is_multiple_of(2) {
                "dom0".to_string()
            } else {
                format!("d{i}")
            }
        })
        .collect();
    let mut scheduler = raw.globals.clone();
    scheduler.insert("name".into(), json!(info.name));
    if let Some((entries, idle_ms)) = &raw.table {
        let list: Vec<Json> = entries
            .iter()
            .map(|&(d, v, rt)| json!({"domain": names[d], "vcpu": v, "runtime_ms": rt}))
            .collect();
        scheduler.insert("schedule".into(), Json::Array(list));
        if let Some(idle) = idle_ms {
            let sum: f64 = entries.iter().map(|e| e.2).sum();
            scheduler.insert("major_frame_ms".into(), json!(round3(sum + idle + 0.001)));
        }
    }
    let mut doms = Vec::new();
    for (i, d) in raw.doms.iter_mut().enumerate() {
        fix_domain(info.name, &raw.globals, &mut d.sched, d.r);
        let mut t = Map::new();
        t.insert("name".into(), json!(names[i]));
        t.insert("vcpus".into(), json!(d.vcpus));
        if let Some(a) = &d.affinity {
            t.insert("affinity".into(), json!(a));
        }
        if let Some(a) = &d.soft {
            t.insert("soft_affinity".into(), json!(a));
        }
        if !d.sched.is_empty() {
            t.insert("sched".into(), Json::Object(d.sched.clone()));
        }
        t.insert("workload".into(), d.workload.clone());
        doms.push(Json::Object(t));
    }
    let (s, c, th) = raw.topo;
    let mut host = json!({"topology": {"sockets": s, "cores": c, "threads": th}});
    if let Some(p) = &raw.profile {
        host["profile"] = p.clone();
    }
    let mut tree = json!({
        "host": host,
        "scheduler": scheduler,
        "run": {},
        "domain": doms,
    });
    // Keep the number of events bounded: a run lasts at most 200 000 times
    // the scheduler's shortest time parameter (at least 50 ms).
    let mut duration_ns = u64::from(raw.duration_ms) * NS_PER_MS;
    if let Some(ts) = shortest_time_param(info, &tree) {
        duration_ns = duration_ns.min(((ts * 200_000.0) as u64).max(50 * NS_PER_MS));
    }
    let warmup_ns = duration_ns / 10 * [0, 1, 3][raw.warm as usize];
    tree["run"] = json!({
        "duration_s": duration_ns as f64 / 1e9,
        "warmup_s": warmup_ns as f64 / 1e9,
        "seed": raw.seed,
        "sample_ms": 100,
    });
    for _ in 0..100 {
        match Scenario::from_json(&tree) {
            Ok(sc) => {
                return Case {
                    tree,
                    sc,
                    step_ns: u64::from(raw.step_us) * NS_PER_US,
                }
            }
            Err(e) => {
                if !drop_at(&mut tree, &e.path) {
                    panic!("the generator made a scenario it cannot repair: {e}\n{tree:#}");
                }
            }
        }
    }
    panic!("the generator could not repair {tree:#}");
}

// ---------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// The engine's records agree at instant `at` (after `run_until(at)`): no
/// VCPU on two PCPUs, PCPU and VCPU views agree, states are the ones the
/// flags imply, and every VCPU's accounting covers the elapsed time exactly.
fn check_world(sim: &Simulation, at: u64) -> Result<(), TestCaseError> {
    let measure_from = sim.now().ns() - sim.measured_ns();
    let mut on: Vec<Option<usize>> = vec![None; sim.vcpus().len()];
    for (pi, pc) in sim.pcpus().iter().enumerate() {
        if let Some(v) = pc.current {
            if let Some(other) = on[v.idx()] {
                return Err(fail(format!(
                    "at {at} ns VCPU {v} is on PCPUs {other} and {pi}"
                )));
            }
            on[v.idx()] = Some(pi);
        }
    }
    for (vi, v) in sim.vcpus().iter().enumerate() {
        prop_assert_eq!(
            v.running_on.map(|p| p.idx()),
            on[vi],
            "at {} ns VCPU {} thinks it runs on {:?}",
            at,
            vi,
            v.running_on
        );
        prop_assert_eq!(
            v.state,
            v.implied_state(),
            "at {} ns VCPU {} is accounted as {:?}",
            at,
            vi,
            v.state
        );
        let s = v.state_ns_at(Time(at));
        prop_assert_eq!(
            s.iter().sum::<u64>(),
            at - measure_from,
            "at {} ns VCPU {}: states {:?} do not sum to the elapsed time",
            at,
            vi,
            s
        );
    }
    Ok(())
}

/// Per VCPU the four states sum to the measured time; busy PCPU time equals
/// VCPU running time (to the float rounding of `busy_pct`).
fn check_summary(s: &Json, measured_ns: u64) -> Result<(), TestCaseError> {
    let mut running = 0u64;
    for d in s["domains"].as_array().unwrap() {
        for v in d["vcpus"].as_array().unwrap() {
            let parts = ["running_ns", "runnable_ns", "blocked_ns", "offline_ns"]
                .map(|k| v[k].as_u64().unwrap());
            prop_assert_eq!(
                parts.iter().sum::<u64>(),
                measured_ns,
                "{}.v{}: {:?}",
                d["name"],
                v["vcpu"],
                parts
            );
            running += parts[0];
        }
    }
    let busy: f64 = s["host"]["pcpus_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["busy_pct"].as_f64().unwrap() / 100.0 * measured_ns as f64)
        .sum();
    let npcpus = s["host"]["pcpus"].as_u64().unwrap() as f64;
    prop_assert!(
        (busy - running as f64).abs() <= 1e-9 * npcpus * measured_ns as f64 + 1.0,
        "busy PCPU time {} != VCPU running time {}",
        busy,
        running
    );
    Ok(())
}

fn without_wall(mut s: Json) -> Json {
    s.as_object_mut().unwrap().remove("wall_s");
    s
}

/// Cumulative running time of every VCPU at an instant of the measured period.
struct Sample {
    at: u64,
    running: Vec<u64>,
}

/// Check `running(b) − running(a) ≤ bound(v, a, b)` for VCPU `v` over many
/// windows between samples: consecutive ones, doubling distances, and from
/// the first sample to every other.
fn check_windows(
    samples: &[Sample],
    v: usize,
    what: &str,
    bound: impl Fn(u64, u64) -> f64,
) -> Result<(), TestCaseError> {
    let n = samples.len();
    let check = |i: usize, j: usize| -> Result<(), TestCaseError> {
        let (a, b) = (&samples[i], &samples[j]);
        let ran = b.running[v] - a.running[v];
        let lim = bound(a.at, b.at);
        if ran as f64 > lim {
            return Err(fail(format!(
                "{what}: VCPU {v} ran {ran} ns in [{}, {}] ns, more than the bound {lim:.0} ns",
                a.at, b.at
            )));
        }
        Ok(())
    };
    for i in 0..n {
        let mut d = 1;
        while i + d < n {
            check(i, i + d)?;
            d *= 2;
        }
        if i > 0 {
            check(0, i)?;
        }
    }
    Ok(())
}

fn ms_ns(ms: f64) -> u64 {
    secs_f64(ms / 1000.0)
}

/// The guarantees a scheduler documents, checked on one case.
///
/// * **credit, credit-enhanced, credit-dynweight** — caps hold within the
///   bound derived at `credit_caps` (the proposals change the choice or the
///   weights, not how a capped domain earns, is charged or is parked).
/// * **credit2, mcredit2** — caps hold within the bound derived at
///   [`credit2_cap_bound`] (budgets do not depend on weights).
/// * **rtds** — a VCPU without extratime (every VCPU before 4.10) runs at
///   most `budget` in every period of its `k × period` grid
///   (docs/schedulers/rtds.md) — one budget more per
///   window when other VCPUs have extratime (see `finish`); VCPUs with
///   extratime are work-conserving on hosts without hard affinity
///   ([`WorkConservation`]).
/// * **sedf, sedf-comm** — a time-driven VCPU with extratime off runs at
///   most `slice` per period ([`sedf_cap_bound`]); under sedf-comm with I/O
///   accounting, except the driver domain, which is credited the time it
///   works for guests.
/// * **null** — each PCPU only ever runs one VCPU, so no more VCPUs run than
///   there are PCPUs; VCPUs never move.
/// * **arinc653** — a VCPU runs only inside its own minor frames (so a domain
///   the table does not name never runs), only on its own PCPU.
/// * **bvt, rrobin** — work-conserving per PCPU ([`WorkConservation`]).
/// * **sedf, sedf-comm, bvt, atropos, rrobin** (and null, arinc653) — VCPUs never move
///   between PCPUs: placement at creation decides everything.
struct Guarantees<'a> {
    c: &'a Case,
    /// First VCPU of each domain.
    first: Vec<usize>,
    /// Domain of each VCPU.
    dom: Vec<usize>,
    samples: Vec<Sample>,
    /// null: the one VCPU each PCPU has run.
    owner: Vec<Option<usize>>,
    /// arinc653: the frame grid.
    frames: Option<Frames>,
    wc: Option<WorkConservation>,
}

/// The ARINC 653 frame grid: minor frames (VCPU id, start offset, length)
/// within a major frame of `major` ns, starting at `origin`.
struct Frames {
    entries: Vec<(usize, u64, u64)>,
    major: u64,
    origin: u64,
}

impl Frames {
    /// The VCPU whose frame covers instant `t`, if any.
    fn owner_at(&self, t: u64) -> Option<usize> {
        if t < self.origin {
            return None;
        }
        let phase = (t - self.origin) % self.major;
        self.entries
            .iter()
            .find(|&&(_, off, len)| phase >= off && phase < off + len)
            .map(|e| e.0)
    }

    /// Time of `[a, b)` inside `v`'s own frames.
    fn allowed(&self, v: usize, a: u64, b: u64) -> u64 {
        let a = a.max(self.origin);
        if b <= a {
            return 0;
        }
        let mut total = 0;
        let mut k = (a - self.origin) / self.major;
        loop {
            let base = self.origin + k * self.major;
            if base >= b {
                break;
            }
            for &(w, off, len) in &self.entries {
                if w == v {
                    let (s, e) = (base + off, base + off + len);
                    total += e.min(b).saturating_sub(s.max(a));
                }
            }
            k += 1;
        }
        total
    }
}

/// Work conservation: a PCPU does not stay idle while a VCPU that may run
/// there waits, for longer than `bound_ns`.
///
/// A stretch is counted only on evidence that it was continuous between two
/// instants: the PCPU was idle at both and made no scheduling decision in
/// between (its `schedules` count did not change), and some VCPU that may
/// run there was runnable at both and waited all the time in between (its
/// runnable time grew by exactly the interval). So a reported stretch really
/// happened; stretches shorter than a step can be missed.
struct WorkConservation {
    /// Per PCPU (`true`) or global (`false`): per PCPU, a VCPU counts for the
    /// PCPU it is placed on (schedulers without balancing between PCPUs);
    /// global, for every PCPU in its hard affinity.
    per_pcpu: bool,
    /// Which VCPUs the scheduler promises to serve this way.
    eligible: Vec<bool>,
    bound_ns: u64,
    why: &'static str,
    /// Per PCPU: start of the current continuous stretch.
    since: Vec<Option<u64>>,
    prev: Option<Snapshot>,
}

impl WorkConservation {
    fn may_run(&self, c: &Case, sim: &Simulation, v: usize, p: usize, dom: usize) -> bool {
        if self.per_pcpu {
            sim.vcpus()[v].processor.idx() == p
        } else {
            c.sc.domains[dom]
                .affinity
                .is_none_or(|m| m.test(vmsched_core::ids::PcpuId(p as u32)))
        }
    }

    fn observe(
        &mut self,
        c: &Case,
        sim: &Simulation,
        doms: &[usize],
        at: u64,
    ) -> Result<(), TestCaseError> {
        let np = sim.pcpus().len();
        let schedules: Vec<u64> = sim.pcpus().iter().map(|p| p.schedules).collect();
        let runnable: Vec<u64> = sim
            .vcpus()
            .iter()
            .map(|v| v.state_ns_at(Time(at))[RunState::Runnable as usize])
            .collect();
        let waiting: Vec<bool> = sim
            .vcpus()
            .iter()
            .enumerate()
            .map(|(i, v)| self.eligible[i] && v.state == RunState::Runnable)
            .collect();
        for p in 0..np {
            let idle = sim.pcpus()[p].current.is_none();
            let cond = idle
                && (0..waiting.len()).any(|v| waiting[v] && self.may_run(c, sim, v, p, doms[v]));
            if !cond {
                self.since[p] = None;
                continue;
            }
            let continuous = match &self.prev {
                Some((t0, sch0, run0, idle0)) => {
                    idle0[p]
                        && sch0[p] == schedules[p]
                        && (0..waiting.len()).any(|v| {
                            waiting[v]
                                && self.may_run(c, sim, v, p, doms[v])
                                && runnable[v].checked_sub(run0[v]) == Some(at - t0)
                        })
                }
                None => false,
            };
            if !continuous {
                self.since[p] = Some(at);
            }
            let start = *self.since[p].get_or_insert(at);
            if at - start > self.bound_ns {
                return Err(fail(format!(
                    "PCPU {p} idle from {start} to {at} ns while a VCPU that may run there waits \
                     (bound {} ns: {})",
                    self.bound_ns, self.why
                )));
            }
        }
        let idle: Vec<bool> = sim.pcpus().iter().map(|p| p.current.is_none()).collect();
        self.prev = Some((at, schedules, runnable, idle));
        Ok(())
    }
}

/// Schedulers that never move a VCPU from the PCPU it was placed on.
const STATIC_PLACEMENT: &[&str] = &[
    "sedf",
    "sedf-comm",
    "bvt",
    "atropos",
    "rrobin",
    "null",
    "arinc653",
];

impl<'a> Guarantees<'a> {
    fn new(c: &'a Case) -> Result<Guarantees<'a>, TestCaseError> {
        let mut first = Vec::new();
        let mut dom = Vec::new();
        for (d, spec) in c.sc.domains.iter().enumerate() {
            first.push(dom.len());
            for _ in 0..spec.vcpus {
                dom.push(d);
            }
        }
        let _nv = dom.len();
        let ipi = c.sc.host.platform.ipi_latency_ns;
        let wc = match c.sched() {
            // A waking VCPU goes on its own PCPU's queue and tickles that
            // PCPU when it is idle (docs/schedulers/bvt.md: "BVT is
            // work-conserving"; rrobin.md: "only an idle PCPU is tickled"),
            // and a decision picks idle only when the queue is empty. The
            // tickle is local or one IPI away: bound = the IPI latency.
            //
            // BVT, not for warping domains: a warped VCPU's effective
            // virtual time avt − warpvalue is 32-bit and can wrap to exactly
            // 2^32 − 1, the value Xen's bvt_do_schedule starts its scan
            // from with a strict `<`, so that VCPU is never picked, even on
            // an idle PCPU (as coded; found by this test, see
            // `bvt_warp_to_vt_max_never_runs` in sched_bvt.rs).
            "bvt" | "rrobin" => Some(WorkConservation {
                per_pcpu: true,
                eligible: dom
                    .iter()
                    .map(|&d| {
                        let p = &c.sc.domains[d].sched;
                        c.sched() == "rrobin" || !(p.bool("warpback") && p.int("warpvalue") != 0)
                    })
                    .collect(),
                bound_ns: ipi,
                why: "a waker tickles its idle PCPU: one IPI",
                since: vec![None; c.npcpus()],
                prev: None,
            }),
            // RTDS with extratime (4.10+), on hosts where every VCPU may
            // run everywhere: such a VCPU is always on the global run queue
            // when runnable and not running (it is never depleted), and
            // every insertion (wake, re-queue after preemption,
            // replenishment of a depleted VCPU) tickles an idle untickled
            // PCPU if there is one (docs/schedulers/rtds.md). A tickled PCPU decides
            // within one IPI and takes the first queued VCPU, so it is busy
            // afterwards. A PCPU that was already tickled for another VCPU
            // may take that one instead, leaving ours to a PCPU tickled
            // later: each hop of this chain costs one IPI and consumes one
            // idle PCPU, so the wait is at most (PCPUs) × IPI latency.
            //
            // Not with hard affinity: tickling is one-shot and a tickled
            // PCPU takes the first queued VCPU *it* may run (Xen's
            // runq_tickle and runq_pick, docs/schedulers/rtds.md), so a tickle
            // can be consumed by a VCPU other than the one that sent it,
            // and a VCPU whose own tickle was consumed that way waits with
            // idle PCPUs of its affinity until the next scheduling event
            // (found by this test: a pinned VCPU ahead in the queue takes
            // the PCPU an unpinned waker tickled; Xen does the same).
            "rtds"
                if c.version_at_least(4, 10)
                    && c.sc
                        .domains
                        .iter()
                        .all(|d| d.affinity.is_none_or(|m| m.count() as usize == c.npcpus())) =>
            {
                let eligible: Vec<bool> = dom
                    .iter()
                    .map(|&d| c.sc.domains[d].sched.bool("extratime"))
                    .collect();
                Some(WorkConservation {
                    per_pcpu: false,
                    eligible,
                    bound_ns: c.npcpus() as u64 * ipi,
                    why: "extratime VCPUs are always queued and tickle an idle PCPU: a chain of at most one IPI per PCPU",
                    since: vec![None; c.npcpus()],
                    prev: None,
                })
            }
            _ => None,
        };
        let frames = if c.sched() == "arinc653" {
            Some(arinc_frames(c, &first)?)
        } else {
            None
        };
        Ok(Guarantees {
            c,
            first,
            dom,
            samples: Vec::new(),
            owner: vec![None; c.npcpus()],
            frames,
            wc,
        })
    }

    /// Instants worth stepping to besides the regular steps: where the
    /// scheduler's guarantee is tight.
    fn extra_instants(&self) -> Vec<u64> {
        let end = self.c.sc.run.duration_ns;
        let mut out = vec![self.c.sc.run.warmup_ns];
        if let Some(f) = &self.frames {
            // Both sides of every minor-frame boundary.
            let mut k = 0;
            'outer: loop {
                let base = f.origin + k * f.major;
                for &(_, off, len) in &f.entries {
                    for t in [base + off, base + off + len] {
                        if t > end || out.len() > 4000 {
                            break 'outer;
                        }
                        out.push(t);
                        out.push(t.saturating_sub(1));
                    }
                }
                k += 1;
            }
        }
        if self.c.sched() == "rtds" {
            // The period grid of capped VCPUs.
            for (d, spec) in self.c.sc.domains.iter().enumerate() {
                if rtds_capped(self.c, d) {
                    let p = spec.sched.int("period") as u64 * NS_PER_US;
                    if p >= 100 * NS_PER_US {
                        let mut t = self.c.sc.run.warmup_ns / p * p;
                        while t <= end && out.len() < 4000 {
                            out.push(t);
                            t += p;
                        }
                    }
                }
            }
        }
        out
    }

    fn observe(&mut self, sim: &Simulation, at: u64) -> Result<(), TestCaseError> {
        if at >= self.c.sc.run.warmup_ns {
            self.samples.push(Sample {
                at,
                running: sim
                    .vcpus()
                    .iter()
                    .map(|v| v.state_ns_at(Time(at))[RunState::Running as usize])
                    .collect(),
            });
        }
        match self.c.sched() {
            "null" => {
                for (p, pc) in sim.pcpus().iter().enumerate() {
                    if let Some(v) = pc.current {
                        let o = self.owner[p].get_or_insert(v.idx());
                        prop_assert_eq!(
                            *o,
                            v.idx(),
                            "null: PCPU {} runs VCPU {} at {} ns but ran VCPU {} before",
                            p,
                            v.idx(),
                            at,
                            *o
                        );
                    }
                }
            }
            // At the very end the run stops before the switches due at
            // that instant: the last instant shows the frame before.
            "arinc653" if at < self.c.sc.run.duration_ns => {
                let f = self.frames.as_ref().unwrap();
                for (p, pc) in sim.pcpus().iter().enumerate() {
                    if let Some(v) = pc.current {
                        prop_assert_eq!(
                            f.owner_at(at),
                            Some(v.idx()),
                            "arinc653: PCPU {} runs VCPU {} at {} ns, outside its minor frames",
                            p,
                            v.idx(),
                            at
                        );
                    }
                }
            }
            _ => {}
        }
        if let Some(wc) = &mut self.wc {
            wc.observe(self.c, sim, &self.dom, at)?;
        }
        Ok(())
    }

    fn finish(&self, sim: &Simulation, summary: &Json) -> Result<(), TestCaseError> {
        let c = self.c;
        let vcpus = sim.vcpus();
        if STATIC_PLACEMENT.contains(&c.sched()) {
            for (i, v) in vcpus.iter().enumerate() {
                prop_assert_eq!(
                    v.migrations,
                    0,
                    "{}: VCPU {} moved between PCPUs",
                    c.sched(),
                    i
                );
            }
        }
        match c.sched() {
            // The proposals change which VCPU runs (Enhanced) or the weights
            // (dynamic weights), never how credit is earned against a cap,
            // charged, or parked: the bound's derivation holds unchanged.
            "credit" | "credit-enhanced" | "credit-dynweight" => self.credit_caps(summary)?,
            // Mcredit2 changes weights only; budgets are weight-independent.
            "credit2" | "mcredit2" => {
                for d in 0..c.sc.domains.len() {
                    if let Some(bound) = credit2_cap_bound(c, d) {
                        self.check_domain_windows(d, "credit2 cap", &bound)?;
                    }
                }
            }
            "rtds" => {
                // Without extratime a VCPU's budget is refilled only by
                // update_deadline (replenishment, or a wake after its
                // deadline), which moves the deadline to the next point of
                // its k·period grid after now; so at most one refill per
                // grid period, and between refills it runs at most
                // `budget` (the slice is the remaining budget). If every
                // VCPU is replenished exactly at its deadline, a grid
                // period [kP, (k+1)P) thus holds at most `budget`: the
                // tight bound, budget × (grid periods [a, b] overlaps).
                //
                // That needs the replenishment queue in deadline order,
                // which holds only while every priority level is 0. Xen
                // orders it like the run queue, by (level, deadline), and
                // an extratime VCPU's level rises in place while it is
                // queued (deadline_queue_insert/compare_unit_priority;
                // rtds.md "as-coded"), so the timer can be armed for a
                // later deadline at the head and replenishments behind it
                // come late. A VCPU then runs on a stale budget past its
                // deadline and, waking later, gets a fresh one in the same
                // grid period (found by this test). The refill argument
                // still holds, with the budget held at the window's start
                // on top: budget × (grid periods overlapped + 1).
                let all_level_0 = (0..c.sc.domains.len()).all(|d| rtds_capped(c, d));
                let extra = u64::from(!all_level_0);
                for (v, &d) in self.dom.iter().enumerate() {
                    if rtds_capped(c, d) {
                        let spec = &c.sc.domains[d].sched;
                        let p = spec.int("period") as u64 * NS_PER_US;
                        let b = spec.int("budget") as u64 * NS_PER_US;
                        check_windows(&self.samples, v, "rtds budget/period", |a, e| {
                            ((e.div_ceil(p) - a / p).max(1) + extra) as f64 * b as f64
                        })?;
                    }
                }
            }
            "sedf" | "sedf-comm" => {
                let counter = |k: &str| summary["scheduler_counters"][k].as_u64().unwrap();
                let quanta = counter("extra_quanta_penalty") + counter("behind_schedule");
                // With I/O accounting the driver domain's reservation is not
                // charged for time it works for guests (sedf-comm.md).
                let credited = c.sched() == "sedf-comm" && c.global().bool("io_accounting");
                for (v, &d) in self.dom.iter().enumerate() {
                    if credited && c.sc.domains[d].driver {
                        continue;
                    }
                    if let Some(bound) = sedf_cap_bound(c, d, quanta) {
                        check_windows(&self.samples, v, "sedf slice/period", |a, b| bound(b - a))?;
                    }
                }
            }
            "null" => {
                let ran: Vec<usize> = (0..vcpus.len())
                    .filter(|&v| {
                        vcpus[v].state_ns_at(sim.now())[0] > 0 || self.owner.contains(&Some(v))
                    })
                    .collect();
                prop_assert!(
                    ran.len() <= c.npcpus(),
                    "null: {} VCPUs ran ({:?}) on {} PCPUs",
                    ran.len(),
                    ran,
                    c.npcpus()
                );
            }
            "arinc653" => {
                let f = self.frames.as_ref().unwrap();
                for v in 0..vcpus.len() {
                    for w in self.samples.windows(2) {
                        let ran = w[1].running[v] - w[0].running[v];
                        let allowed = f.allowed(v, w[0].at, w[1].at);
                        prop_assert!(
                            ran <= allowed,
                            "arinc653: VCPU {} ran {} ns in [{}, {}] ns but its frames cover {} ns",
                            v,
                            ran,
                            w[0].at,
                            w[1].at,
                            allowed
                        );
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// All VCPUs of domain `d` together over the sample windows.
    fn check_domain_windows(
        &self,
        d: usize,
        what: &str,
        bound: &dyn Fn(u64) -> f64,
    ) -> Result<(), TestCaseError> {
        let n = self.c.sc.domains[d].vcpus as usize;
        let first = self.first[d];
        let sum: Vec<Sample> = self
            .samples
            .iter()
            .map(|s| Sample {
                at: s.at,
                running: vec![s.running[first..first + n].iter().sum()],
            })
            .collect();
        check_windows(&sum, 0, &format!("{what} of domain {d}"), |a, b| {
            bound(b - a)
        })
    }

    /// Credit caps hold (Xen 4.0+, where credit is burnt by time; before 4.0
    /// a VCPU that is never running at a tick is never charged, so a capped
    /// domain can exceed its cap: see the tick-evasion test in
    /// credit_behaviours.rs).
    ///
    /// Checked where the 10 ms-style ticks fall on the accounting instants
    /// (tslice a multiple of 3 ms, or under 3 ms with one tick per slice):
    /// accounting runs after the ticks due at the same instant, so it sees
    /// every running VCPU charged up to that instant. (With misaligned ticks
    /// accounting can see a running VCPU's credit up to one tick stale; the
    /// −cpt clamp can then forgive up to one tick's worth per parking.)
    ///
    /// Bound. Per accounting period P (= tslice), a capped domain with `n`
    /// active VCPUs and cap `c` % earns at most n · ⌈⌈c·10·P_ms/100⌉ / n⌉ ≤
    /// c·P_ms/10 + n credits (1 credit = 0.1 ms of running), i.e. it may run
    /// at most c % of P plus n·0.1 ms. A VCPU is charged exactly for the time
    /// it runs (rounded down to 0.1 ms; the remainder carries over), so over
    /// a measured stretch of K periods its running time is at most what it
    /// earned plus what it had at the start and minus what it has at the end.
    /// At the start it can hold at most one slice of credit (cpt = 10·P_ms;
    /// above that it goes inactive, halving it). At the end its credit is at
    /// least −2·cpt: clamped to −cpt at the last accounting, then at most one
    /// period of running since. The −cpt clamp forgives debt only when a
    /// VCPU that was not parked ran a whole period while earning less than
    /// its cap share, and then by at most the difference, so it never lets
    /// the domain run past its cap share. A parked VCPU does not run, and
    /// (accounting seeing it charged up to the instant it is parked) is not
    /// charged afterwards either. Hence running ≤ K·(c·P/100 + n·0.1 ms) +
    /// n·(3·cpt credits + 0.1 ms), with K ≤ measured/P + 1.
    ///
    /// Only domains whose VCPUs are busy whenever they run are checked:
    /// cpu-hog, and transient whose bursts last at least a tick (P/3). A VCPU
    /// that always blocks between ticks is never caught running at one, so it
    /// never becomes active, and only active VCPUs are parked
    /// (docs/schedulers/credit.md; behaviour C5), which lets it exceed its
    /// cap. A transient load with bursts shorter than a tick does that when
    /// its cycle keeps step with the ticks, which resume on whole tick
    /// periods when an idle PCPU wakes (`csched_tick_resume`): 1.477 ms on
    /// and 5.194 ms off is three cycles per two 10-ms ticks, drifting 13 µs
    /// per 20 ms, and ran 20 % of the PCPU under a 1 % cap for 1.4 s with no
    /// tick seeing it (`a_burst_between_ticks_escapes_the_cap`).
    fn credit_caps(&self, summary: &Json) -> Result<(), TestCaseError> {
        let c = self.c;
        let t = c.global().int("tslice_ms");
        let p_ms = if c.version_at_least(4, 2) { t } else { 30 } as f64;
        if !c.version_at_least(4, 0) || !(p_ms < 3.0 || p_ms as i64 % 3 == 0) {
            return Ok(());
        }
        let measured_ms = summary["measured_s"].as_f64().unwrap() * 1000.0;
        for (i, d) in c.sc.domains.iter().enumerate() {
            let cap = d.sched.int("cap");
            let busy = match d.workload.kind.as_str() {
                "cpu-hog" => true,
                "transient" => d.workload.params.float("on_ms") >= p_ms / 3.0,
                _ => false,
            };
            if cap == 0 || !busy {
                continue;
            }
            let n = f64::from(d.vcpus);
            let k = measured_ms / p_ms + 1.0;
            let cpt_ms = p_ms; // cpt credits × 0.1 ms
            let bound_ms = k * (cap as f64 * p_ms / 100.0 + n * 0.1) + n * (3.0 * cpt_ms + 0.1);
            let ran_ms = summary["domains"][i]["cpu_s"].as_f64().unwrap() * 1000.0;
            prop_assert!(
                ran_ms <= bound_ms,
                "credit: domain {} cap {} ran {:.2} ms > bound {:.2} ms over {:.0} ms",
                i,
                cap,
                ran_ms,
                bound_ms,
                measured_ms
            );
        }
        Ok(())
    }
}

/// RTDS: does domain `d` run without extratime (a hard cap)?
fn rtds_capped(c: &Case, d: usize) -> bool {
    !c.version_at_least(4, 10) || !c.sc.domains[d].sched.bool("extratime")
}

/// Credit2 caps (4.10+), per domain, over a window of `w` ns.
///
/// Bound. A capped domain's budget lives in a pool plus the quotas its VCPUs
/// hold; a VCPU runs only while it holds budget, and is charged exactly for
/// the time it runs. Write B for pool + held quotas. Running in a window
/// equals B at its start − B at its end + what replenishments added in it.
/// * Replenishment (every `cap_period_ms` P, from the domain's own timer)
///   adds tot = P·cap/100 and clamps the pool to tot when positive, so each
///   adds at most tot; a window of length w sees at most ⌊w/P⌋ + 1.
/// * B ≤ tot + n·quota at any time: the pool is at most tot after a
///   replenishment, grabbing and returning only move budget between the pool
///   and the VCPUs, and a VCPU holds at most one quota, max(tot/n, 500 µs).
/// * B ≥ −n·O: a VCPU runs past its quota only because a slice is never
///   shorter than the minimum timer (500 µs) and the rate limit
///   (docs/schedulers/credit2.md; Xen's csched2_runtime applies the minimum after the budget), so it
///   overruns by at most O = max(500 µs, ratelimit); its debt goes to the
///   pool, which must be positive again before any VCPU gets budget.
///
/// Hence running ≤ (⌊w/P⌋ + 1)·tot + tot + n·quota + n·O.
fn credit2_cap_bound(c: &Case, d: usize) -> Option<impl Fn(u64) -> f64> {
    let spec = &c.sc.domains[d];
    let cap = spec.sched.int("cap") as u64;
    if cap == 0 || !c.version_at_least(4, 10) {
        return None;
    }
    let g = c.global();
    let period = g.int("cap_period_ms") as u64 * NS_PER_MS;
    let tot = period * cap / 100;
    let n = u64::from(spec.vcpus);
    let quota = (tot / n).max(500 * NS_PER_US);
    let overrun = (g.int("ratelimit_us") as u64 * NS_PER_US).max(500 * NS_PER_US);
    Some(move |w: u64| ((w / period + 1) * tot + tot + n * quota + n * overrun) as f64)
}

/// SEDF: a time-driven VCPU with extratime off, over a window of `w` ns.
///
/// Bound. Such a VCPU runs in reserved (EDF) time only while on its PCPU's
/// run queue, i.e. inside its current period [deadline − period, deadline)
/// with slice left; its periods never overlap (every deadline move — slice
/// used, deadline miss, short or long block — starts the next period at or
/// after the end of the last). So each period holds at most `slice` of EDF
/// time, and a window of length w overlaps at most ⌈w/period⌉ + 1 periods.
/// With the latency-hint variant a long-block waker's period is scaled to
/// its latency and the slice in proportion (slice/period never grows), so
/// then the bound is w·slice/period + 2·(largest slice).
///
/// Documented exceptions (docs/schedulers/sedf.md; behaviour 7): a short-blocking VCPU gets
/// penalty extra time, one 500 µs quantum (3.0.3+) or quanta until its loss is
/// repaid (earlier), even with extratime off; and a decision that finds the
/// run queue head "seriously behind schedule" runs it one quantum. Both are
/// counted (`extra_quanta_penalty`, `behind_schedule`, over all VCPUs), and
/// each allows one quantum more.
fn sedf_cap_bound(c: &Case, d: usize, quanta: u64) -> Option<impl Fn(u64) -> f64> {
    let p = &c.sc.domains[d].sched;
    let timed = p.is_explicit("period") || p.is_explicit("slice");
    if !timed || p.bool("extratime") || p.int("weight") != 0 {
        return None;
    }
    let period = ms_ns(p.float("period")) as f64;
    let slice = ms_ns(p.float("slice")) as f64;
    let latency = ms_ns(p.float("latency")) as f64;
    let scaled = c.global().bool("latency_hint") && latency > 0.0;
    let allowance = quanta as f64 * 500_000.0;
    Some(move |w: u64| {
        let w = w as f64;
        if scaled {
            let smax = slice.max((latency * slice / period).floor());
            w * slice / period + 2.0 * smax + allowance
        } else {
            ((w / period).ceil() + 1.0) * slice + allowance
        }
    })
}

/// The ARINC 653 table as the scheduler runs it, and where its grid starts.
/// From 4.21 frames stay on the grid from time 0; before, the first major
/// frame starts at the first decision (docs/schedulers/arinc653.md), found here by
/// bisection over fresh runs (runs are deterministic).
fn arinc_frames(c: &Case, first: &[usize]) -> Result<Frames, TestCaseError> {
    let g = c.global();
    let table = g.table_list("schedule");
    let mut entries = Vec::new();
    let mut off = 0;
    let major = if table.is_empty() {
        // Xen's default: 10 ms per VCPU of domain 0; in 4.21 a trailing
        // 10 ms idle frame.
        for v in 0..c.sc.domains[0].vcpus as usize {
            entries.push((first[0] + v, off, 10 * NS_PER_MS));
            off += 10 * NS_PER_MS;
        }
        off + if g.version("xen_version") == Version::new(4, 21) {
            10 * NS_PER_MS
        } else {
            0
        }
    } else {
        for e in table {
            let d =
                c.sc.domains
                    .iter()
                    .position(|x| x.name == e.str("domain"))
                    .unwrap();
            let len = ms_ns(e.float("runtime_ms"));
            entries.push((first[d] + e.int("vcpu") as usize, off, len));
            off += len;
        }
        match ms_ns(g.float("major_frame_ms")) {
            0 => off,
            m => m,
        }
    };
    let origin = if c.version_at_least(4, 21) {
        0
    } else {
        let mut sc = c.sc.clone();
        sc.run.warmup_ns = 0;
        let decided = |t: u64| -> bool {
            let mut s = Simulation::new(&sc).unwrap();
            s.run_until(Time(t)).unwrap();
            s.pcpus().iter().any(|p| p.schedules > 0)
        };
        let end = sc.run.duration_ns;
        if !decided(end) {
            end + 1
        } else {
            // Exponential search for a bracket, then bisection.
            let mut hi = NS_PER_US;
            while hi < end && !decided(hi) {
                hi *= 2;
            }
            let mut lo = hi / 2;
            let mut hi = hi.min(end);
            if decided(lo) {
                lo = 0;
            }
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if decided(mid) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        }
    };
    Ok(Frames {
        entries,
        major,
        origin,
    })
}

/// Every property on one case.
fn check_case(c: &Case) -> Result<(), TestCaseError> {
    let sc = &c.sc;
    let end = sc.run.duration_ns;
    let mut g = Guarantees::new(c)?;
    let mut instants = g.extra_instants();
    // Irregular steps: step, step/3, 2·step, ...
    let mut t = 0;
    let mut k = 0;
    while t < end {
        t += [c.step_ns, (c.step_ns / 3).max(1), 2 * c.step_ns][k % 3];
        k += 1;
        instants.push(t.min(end));
    }
    instants.sort_unstable();
    instants.dedup();
    let mut sim = Simulation::new(sc).map_err(|e| fail(format!("cannot build: {e}")))?;
    for &at in &instants {
        let p = sim
            .run_until(Time(at))
            .map_err(|e| fail(format!("run failed before {at} ns: {e}")))?;
        check_world(&sim, at)?;
        g.observe(&sim, at)?;
        if p.finished {
            break;
        }
    }
    sim.run().map_err(|e| fail(format!("run failed: {e}")))?;
    prop_assert_eq!(sim.measured_ns(), end - sc.run.warmup_ns);
    let summary = without_wall(sim.summary(0.0));
    check_summary(&summary, sim.measured_ns())?;
    g.finish(&sim, &summary)?;
    // Same scenario and seed, run without steps: the same summary.
    let mut again = Simulation::new(sc).unwrap();
    again
        .run()
        .map_err(|e| fail(format!("second run failed: {e}")))?;
    prop_assert!(
        without_wall(again.summary(1.0)) == summary,
        "two runs of the same scenario differ (the first was stepped)"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

fn info(name: &str) -> &'static SchedulerInfo {
    sched::find(name).expect("registered")
}

/// One property test per scheduler (so they run in parallel and a failure
/// names its scheduler).
macro_rules! every_scheduler {
    ($($test:ident => $name:literal),* $(,)?) => {
        /// Schedulers with a generic property test.
        const TESTED: &[&str] = &[$($name),*];
        proptest! {
            #![proptest_config(config(CASES_PER_SCHEDULER))]
            $(
                #[test]
                fn $test(c in case(info($name))) {
                    check_case(&c)?;
                }
            )*
        }
    };
}

every_scheduler! {
    invariants_credit => "credit",
    invariants_credit2 => "credit2",
    invariants_rtds => "rtds",
    invariants_null => "null",
    invariants_arinc653 => "arinc653",
    invariants_sedf => "sedf",
    invariants_sedf_comm => "sedf-comm",
    invariants_bvt => "bvt",
    invariants_atropos => "atropos",
    invariants_rrobin => "rrobin",
    invariants_credit_enhanced => "credit-enhanced",
    invariants_credit_dynweight => "credit-dynweight",
    invariants_mcredit2 => "mcredit2",
}

/// A scheduler added to the registry gets the generic properties at once,
/// without a line here: the ones not listed in `every_scheduler!` (which
/// only spreads the built-ins over parallel tests) are checked here.
#[test]
fn invariants_unlisted_schedulers() {
    use proptest::test_runner::TestRunner;
    for info in sched::registry() {
        if TESTED.contains(&info.name) {
            continue;
        }
        let mut runner = TestRunner::new(config(CASES_PER_SCHEDULER));
        runner
            .run(&case(info), |c| check_case(&c))
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
    }
}

/// The tutorial's Rust scheduler (`docs/tutorial/wrr.rs`, the code of
/// docs/write-a-scheduler.md), compiled here as a child of a module that
/// offers what `crate::sched` offers, as it is when saved in `src/sched/`
/// (its `crate::ids` and `crate::params` are the two modules below).
#[path = "../../../docs/tutorial"]
mod tutorial_sched {
    pub use vmsched_core::sched::*;
    pub mod wrr;
}
mod ids {
    pub use vmsched_core::ids::*;
}
mod params {
    pub use vmsched_core::params::*;
}

/// What the tutorial says `cargo test --test properties` does for a
/// scheduler saved in `src/sched/` and listed: the generic properties hold
/// for the tutorial's Rust scheduler (registered at run time here; that
/// listing it works as documented is `tests/test_write_a_scheduler.py`'s).
#[test]
fn invariants_tutorial_rust_scheduler() {
    use proptest::test_runner::TestRunner;
    let info = sched::register_external(tutorial_sched::wrr::INFO).expect("a new name");
    let mut runner = TestRunner::new(config(CASES_PER_SCHEDULER));
    runner
        .run(&case(info), |c| check_case(&c))
        .unwrap_or_else(|e| panic!("{}: {e}", info.name));
}

/// The generator draws every scheduler's declared parameters, versions across
/// each declared range, and valid scenarios only.
#[test]
fn generator_covers_declared_parameters() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    for info in sched::registry() {
        let mut runner = TestRunner::deterministic();
        let strat = case(info);
        let mut seen: std::collections::BTreeSet<String> = Default::default();
        for _ in 0..300 {
            let c = strat.new_tree(&mut runner).unwrap().current();
            if let Some(t) = c.tree["scheduler"].as_object() {
                seen.extend(t.keys().cloned());
            }
            for d in c.tree["domain"].as_array().unwrap() {
                if let Some(t) = d.get("sched").and_then(Json::as_object) {
                    seen.extend(t.keys().cloned());
                }
            }
        }
        for spec in info.params {
            assert!(
                seen.contains(spec.name),
                "{}: parameter {} never drawn",
                info.name,
                spec.name
            );
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Work conservation for Credit (current release), where it applies:
    /// only CPU hogs, every VCPU may run on every PCPU. Credit does not poll,
    /// so an idle PCPU can coexist with a waiting VCPU, but not for long: the
    /// VCPU running where VCPUs wait is found at its PCPU's tick with work
    /// queued behind it, and `cpu_pick` (which never keeps a VCPU on a PCPU
    /// with queued work while an idle PCPU exists) pushes it to an idle PCPU.
    /// The first tick may only re-activate a VCPU that had gone inactive (no
    /// push then), so each push comes within two tick periods; a push may
    /// bounce off a PCPU that balanced less than `lb_ratelimit` (1 ms) ago,
    /// and involves two IPIs. Each push fills one idle PCPU, and at most
    /// P − 1 can be idle while a VCPU waits, so a stretch with an idle PCPU
    /// and a waiting VCPU lasts at most (P − 1) · (2 τ + 1 ms + 2 IPIs),
    /// plus one sampling step (0.5 ms) of uncertainty.
    #[test]
    fn credit_is_work_conserving_for_hogs(
        topo in prop_oneof![Just((1u32, 2u32, 1u32)), Just((1, 3, 1)), Just((1, 2, 2)), Just((2, 2, 1))],
        hogs in 1usize..=8,
        weights in prop::collection::vec(prop_oneof![Just(256u32), 1u32..=1024], 8),
        tslice_ms in 3u32..=60,
    ) {
        let mut toml = format!(
            "[host]\n[host.topology]\nsockets = {}\ncores = {}\nthreads = {}\n[scheduler]\nname = \"credit\"\ntslice_ms = {tslice_ms}\nratelimit_us = 0\n[run]\nduration_s = 2\n",
            topo.0, topo.1, topo.2
        );
        for (i, w) in weights.iter().take(hogs).enumerate() {
            toml += &format!("[[domain]]\nname = \"h{i}\"\nweight = {w}\n[domain.workload]\nkind = \"cpu-hog\"\n");
        }
        let tick_ms = if tslice_ms < 3 { tslice_ms as f64 } else { (tslice_ms * 1000 / 3) as f64 / 1000.0 };
        let npcpus = (topo.0 * topo.1 * topo.2) as f64;
        let bound_ms = (npcpus - 1.0) * (2.0 * tick_ms + 1.0 + 2.0 * 0.0015) + 0.5;
        let mut s = sim(&toml);
        let step = 0.5;
        let mut since: Option<f64> = None;
        let mut t = step;
        while t <= 2000.0 {
            s.run_until(at_ms(t)).unwrap();
            let idle = s.pcpus().iter().any(|p| p.current.is_none());
            let waiting = s.vcpus().iter().any(|v| v.state == RunState::Runnable);
            if idle && waiting {
                let start = *since.get_or_insert(t);
                prop_assert!(t - start <= bound_ms, "a PCPU idle while a hog waits for {} ms (bound {bound_ms})\n{toml}", t - start);
            } else {
                since = None;
            }
            t += step;
        }
    }
}
