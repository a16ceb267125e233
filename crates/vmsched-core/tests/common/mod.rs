//! Helpers shared by the integration tests: build and run scenarios, read
//! results, check the invariants every scheduler must keep, and read the
//! Credit scheduler's state (`Simulation::sched_state`).
//!
//! The invariants (`docs/testing.md`): every VCPU's state accounting sums to
//! the elapsed time exactly; a VCPU runs on at most one PCPU and a PCPU runs
//! at most one VCPU (the engine returns `Err` otherwise, and the helpers also
//! cross-check the engine's own records); busy PCPU time equals the VCPUs'
//! running time; and the same scenario gives identical results twice.
//!
//! Helpers named `sim_*` read a `Simulation`; the others read a summary.
#![allow(dead_code)] // each test binary uses a different subset

use serde_json::Value as Json;
use vmsched_core::domain::WorkItem;
use vmsched_core::rng::Rng;
use vmsched_core::time::{ms, NS_PER_MS};
use vmsched_core::workload::{GuestCtx, Workload};
use vmsched_core::{Scenario, Simulation, Time};

/// Parse and validate a scenario, panicking with the message if it is wrong.
pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{toml}"))
}

/// The validation error of a scenario that must be rejected.
pub fn rejected(toml: &str) -> vmsched_core::ScenarioError {
    match Scenario::from_toml_str(toml) {
        Ok(_) => panic!("scenario accepted but must be rejected:\n{toml}"),
        Err(e) => e,
    }
}

/// Build a simulation.
pub fn sim(toml: &str) -> Simulation {
    Simulation::new(&scenario(toml)).expect("simulation builds")
}

/// Run `toml` to the end and return its summary (with `wall_s` removed, so
/// two summaries can be compared). Invariants are checked every `step`
/// ns of simulated time.
pub fn run_checked_ns(toml: &str, step: u64) -> Json {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).expect("simulation builds");
    let end = sc.run.duration_ns;
    let mut t = 0;
    while t < end {
        t = (t + step).min(end);
        let p = sim
            .run_until(Time(t))
            .unwrap_or_else(|e| panic!("run failed at {t} ns: {e}"));
        check_world(&sim);
        if p.finished {
            break;
        }
    }
    sim.run().expect("run finishes");
    check_world(&sim);
    let mut s = sim.summary(0.0);
    s.as_object_mut().unwrap().remove("wall_s");
    check_summary(&s, sc.run.duration_ns - sc.run.warmup_ns);
    s
}

/// [`run_checked_ns`] with the step in milliseconds.
pub fn run_checked(toml: &str, step_ms: u64) -> Json {
    run_checked_ns(toml, step_ms * NS_PER_MS)
}

/// Run with invariant checks every 50 ms.
pub fn run(toml: &str) -> Json {
    run_checked(toml, 50)
}

/// The engine's records agree with each other at this instant, and every
/// VCPU's accounting covers the elapsed time exactly.
pub fn check_world(sim: &Simulation) {
    let now = sim.now();
    for (i, p) in sim.pcpus().iter().enumerate() {
        if let Some(v) = p.current {
            let on = sim.vcpus()[v.idx()].running_on;
            assert_eq!(
                on.map(|q| q.idx()),
                Some(i),
                "pcpu {i} runs vcpu {v} whose running_on is {on:?}"
            );
        }
    }
    for (i, v) in sim.vcpus().iter().enumerate() {
        if let Some(p) = v.running_on {
            assert_eq!(
                sim.pcpus()[p.idx()].current.map(|x| x.idx()),
                Some(i),
                "vcpu {i} claims pcpu {p}"
            );
        }
        let s = v.state_ns_at(now);
        let total: u64 = s.iter().sum();
        assert_eq!(
            total,
            now.ns() - measured_from(sim),
            "vcpu {i}: states {s:?} do not sum to the elapsed time"
        );
    }
}

fn measured_from(sim: &Simulation) -> u64 {
    sim.now().ns() - sim.measured_ns()
}

/// Per VCPU the four states sum to the measured time; busy PCPU time equals
/// the VCPUs' running time (to float rounding of the percentages).
pub fn check_summary(s: &Json, measured_ns: u64) {
    let mut running = 0u64;
    for d in s["domains"].as_array().unwrap() {
        for v in d["vcpus"].as_array().unwrap() {
            let parts = ["running_ns", "runnable_ns", "blocked_ns", "offline_ns"]
                .map(|k| v[k].as_u64().unwrap());
            assert_eq!(
                parts.iter().sum::<u64>(),
                measured_ns,
                "{}.v{}: {parts:?}",
                d["name"],
                v["vcpu"]
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
    // busy_pct is a float percentage: allow its rounding, 1e-9 of the host's time.
    assert!(
        (busy - running as f64).abs() <= 1e-9 * npcpus * measured_ns as f64 + 1.0,
        "busy PCPU time {busy} != VCPU running time {running}"
    );
}

/// The same scenario twice gives identical summaries.
pub fn assert_deterministic(toml: &str) {
    let a = run(toml);
    let b = run(toml);
    assert_eq!(a, b, "two runs of the same scenario differ");
}

/// The generic invariants on one scenario, checked every `step_ns` of
/// simulated time, plus determinism: the stepped run and an ordinary run give
/// identical summaries (so how a run is cut into steps cannot change it).
pub fn check_invariants(toml: &str, step_ns: u64) {
    let stepped = run_checked_ns(toml, step_ns);
    assert_eq!(stepped, run(toml), "two runs of the same scenario differ");
}

/// A domain's entry in the summary.
pub fn domain<'a>(s: &'a Json, dom: &str) -> &'a Json {
    s["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == dom)
        .unwrap_or_else(|| panic!("no domain {dom}"))
}

/// A domain's CPU share in % of one PCPU.
pub fn cpu_pct(s: &Json, dom: &str) -> f64 {
    domain(s, dom)["cpu_pct"].as_f64().unwrap()
}

/// A VCPU's entry in the summary.
pub fn vcpu<'a>(s: &'a Json, dom: &str, v: usize) -> &'a Json {
    &domain(s, dom)["vcpus"][v]
}

/// VCPU 0 of domain `name`.
pub fn vcpu0<'a>(summary: &'a Json, name: &str) -> &'a Json {
    &domain(summary, name)["vcpus"][0]
}

/// A scheduler counter.
pub fn counter(s: &Json, name: &str) -> u64 {
    s["scheduler_counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// Run a scenario to the end; the engine's own checks (a VCPU on two PCPUs,
/// a non-runnable or out-of-affinity choice) make `run` fail.
pub fn run_sim(toml: &str) -> Simulation {
    let mut sim = Simulation::new(&scenario(toml)).expect("simulation builds");
    sim.run().unwrap_or_else(|e| panic!("run failed: {e}"));
    sim
}

/// A domain's VCPU ids.
pub fn vcpus_of(sim: &Simulation, dom: &str) -> std::ops::Range<usize> {
    let d = sim
        .domains()
        .iter()
        .find(|d| d.name == dom)
        .unwrap_or_else(|| panic!("no domain {dom}"));
    d.first_vcpu as usize..(d.first_vcpu + d.nvcpus) as usize
}

/// Nanoseconds a domain has run up to the last event processed.
pub fn running_ns(sim: &Simulation, dom: &str) -> u64 {
    running_ns_at(sim, dom, sim.now())
}

/// Nanoseconds a domain has run up to `t`, after `sim.run_until(t)`: no
/// event lies between the last one processed and `t`, so the current
/// states extend exactly to `t`.
pub fn running_ns_at(sim: &Simulation, dom: &str, t: Time) -> u64 {
    assert!(
        t >= sim.now(),
        "{t:?} is before the last event {:?}",
        sim.now()
    );
    vcpus_of(sim, dom)
        .map(|v| sim.vcpus()[v].state_ns_at(t)[0])
        .sum()
}

/// A domain's CPU share of the measured time, in % of one PCPU.
pub fn sim_cpu_pct(sim: &Simulation, dom: &str) -> f64 {
    running_ns(sim, dom) as f64 * 100.0 / sim.measured_ns() as f64
}

/// Context switches onto PCPUs of a domain's VCPUs.
pub fn switches(sim: &Simulation, dom: &str) -> u64 {
    vcpus_of(sim, dom)
        .map(|v| sim.vcpus()[v].context_switches)
        .sum()
}

/// The PCPU a domain's VCPU `i` was placed on (its processor).
pub fn pcpu_of(sim: &Simulation, dom: &str, i: usize) -> u32 {
    sim.vcpus()[vcpus_of(sim, dom).start + i].processor.0
}

/// A scheduler counter from the summary.
pub fn sim_counter(sim: &Simulation, name: &str) -> u64 {
    sim.summary(0.0)["scheduler_counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// A domain's summary object.
pub fn dom_summary(sim: &Simulation, dom: &str) -> serde_json::Value {
    sim.summary(0.0)["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == dom)
        .cloned()
        .unwrap_or_else(|| panic!("no domain {dom}"))
}

/// `|a - b| <= tol`, with a message naming what was compared.
pub fn assert_near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:.4}, expected {want:.4} ± {tol}"
    );
}

/// `n` single-VCPU CPU hogs named vm1..vmN on `pcpus` PCPUs under `sched`
/// (with extra `[scheduler]` lines), run for `secs`.
pub fn hogs(sched: &str, extra: &str, pcpus: u32, n: u32, secs: f64) -> String {
    let mut s = format!("[host]\npcpus = {pcpus}\n[scheduler]\nname = \"{sched}\"\n{extra}\n[run]\nduration_s = {secs}\n");
    for i in 1..=n {
        s += &format!("[[domain]]\nname = \"vm{i}\"\n[domain.workload]\nkind = \"cpu-hog\"\n");
    }
    s
}

/// A mixed scenario for the invariant checks: SMT host, multi-VCPU domains,
/// hard and soft affinity, hogs, duty cycles, transient load and sysbench.
/// `dom_extra` is added to every domain's `[domain.sched]` table.
pub fn mixed_smt(sched: &str, extra: &str, dom_extra: &str, secs: f64) -> String {
    format!(
        r#"
[host]
topology = {{ sockets = 2, cores = 2, threads = 2 }}
[scheduler]
name = "{sched}"
{extra}
[run]
duration_s = {secs}
seed = 7
[[domain]]
name = "dom0"
vcpus = 2
[domain.sched]
{dom_extra}
[domain.workload]
kind = "duty-cycle"
util_pct = 15
period_ms = 7
[[domain]]
name = "web"
vcpus = 3
soft_affinity = "0-3"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "duty-cycle"
util_pct = 35
period_ms = 23
[[domain]]
name = "hog"
vcpus = 2
affinity = "4-7"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "pinned"
affinity = [5]
[domain.sched]
{dom_extra}
[domain.workload]
kind = "transient"
on_ms = 40
off_ms = 60
[[domain]]
name = "batch"
vcpus = 4
[domain.sched]
{dom_extra}
[domain.workload]
kind = "sysbench-cpu"
threads = 6
work_ms = 150
repeat = true
[[domain]]
name = "idle"
[domain.sched]
{dom_extra}
[domain.workload]
kind = "idle"
"#
    )
}

/// A mixed scenario for the invariants: hogs, duty cycles at several
/// periods, a transient load, a multi-VCPU domain and a pinned one, on
/// `pcpus` PCPUs under `sched` with extra `[scheduler]` lines and per-domain
/// `[domain.sched]` tables (`""` for none).
pub fn mixed_flat(sched: &str, globals: &str, pcpus: u32, dom_sched: [&str; 5]) -> String {
    let sched_table = |s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("[domain.sched]\n{s}\n")
        }
    };
    format!(
        r#"
        [host]
        pcpus = {pcpus}
        [scheduler]
        name = "{sched}"
        {globals}
        [run]
        duration_s = 3
        seed = 7
        [[domain]]
        name = "dom0"
        vcpus = 2
        {s0}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 15
        period_ms = 7
        [[domain]]
        name = "hog"
        {s1}
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "io"
        {s2}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 3
        period_ms = 1.3
        [[domain]]
        name = "burst"
        vcpus = 2
        {s3}
        [domain.workload]
        kind = "transient"
        on_ms = 170
        off_ms = 230
        [[domain]]
        name = "pinned"
        affinity = [{last}]
        {s4}
        [domain.workload]
        kind = "duty-cycle"
        util_pct = 60
        period_ms = 40
        "#,
        s0 = sched_table(dom_sched[0]),
        s1 = sched_table(dom_sched[1]),
        s2 = sched_table(dom_sched[2]),
        s3 = sched_table(dom_sched[3]),
        s4 = sched_table(dom_sched[4]),
        last = pcpus - 1,
    )
}

/// One VCPU of Credit's state (`Simulation::sched_state`).
#[derive(Clone, Debug, PartialEq)]
pub struct CreditVcpu {
    pub pri: String,
    pub credit: i64,
    pub last: i64,
    pub active: bool,
    pub parked: bool,
}

/// Every VCPU's Credit state, indexed by VCPU id.
pub fn credit_state(s: &mut Simulation) -> Vec<CreditVcpu> {
    let st = s.sched_state();
    (0..st.vcpus.len())
        .map(|i| {
            let flag = |k: &str| st.vcpus[i][k].as_bool().expect("a flag");
            CreditVcpu {
                pri: st.vcpus[i]["pri"].as_str().expect("a priority").to_string(),
                credit: st.vcpu_int(i, "credit"),
                last: st.vcpu_int(i, "last"),
                active: flag("active"),
                parked: flag("parked"),
            }
        })
        .collect()
}

/// What each PCPU runs (VCPU id, or None for idle).
pub fn running(s: &Simulation) -> Vec<Option<u32>> {
    s.pcpus().iter().map(|p| p.current.map(|v| v.0)).collect()
}

/// Milliseconds as simulated time.
pub fn at_ms(x: f64) -> Time {
    Time((x * NS_PER_MS as f64).round() as u64)
}

/// A CPU-bound guest that yields after every `burst_us` of CPU (it asks for
/// the next burst first, so it stays runnable).
pub struct Yielder {
    pub burst_ns: u64,
}

impl Workload for Yielder {
    fn kind(&self) -> &'static str {
        "test-yielder"
    }
    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        g.push(WorkItem {
            remaining_ns: self.burst_ns,
            tag: 0,
        });
    }
    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, vcpu: u32, _tag: u32) {
        g.push(WorkItem {
            remaining_ns: self.burst_ns,
            tag: 0,
        });
        g.yield_vcpu(vcpu);
    }
}

/// A guest that first runs `warm_ns` of CPU (at least 10 ms, so it is
/// caught at a tick and becomes active), then, from the first tick after
/// that burst completes, runs `busy_ns` starting `offset_ns` after each
/// `period_ns` boundary and blocks: with period 10 ms, an offset just after
/// a tick and `busy_ns` < 10 ms − offset, it is never running when a 10 ms
/// tick fires ("tick evasion"). With `warm_ns` = 0 it evades from the start.
pub struct TickEvader {
    pub warm_ns: u64,
    pub period_ns: u64,
    pub offset_ns: u64,
    pub busy_ns: u64,
}

impl TickEvader {
    fn arm_next_period(&self, g: &mut GuestCtx) {
        let now = g.now().ns();
        let next = (now / self.period_ns + 1) * self.period_ns + self.offset_ns;
        g.arm_timer(Time(next), 0);
    }
}

impl Workload for TickEvader {
    fn kind(&self) -> &'static str {
        "test-tick-evader"
    }
    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        if self.warm_ns > 0 {
            g.push(WorkItem {
                remaining_ns: self.warm_ns,
                tag: 0,
            });
        } else {
            self.arm_next_period(g);
        }
    }
    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if tag == 0 {
            self.arm_next_period(g);
        }
    }
    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {
        g.push(WorkItem {
            remaining_ns: self.busy_ns,
            tag: 1,
        });
        g.arm_timer(g.now().after(self.period_ns), 0);
    }
}

/// `ms(x)` re-exported for brevity.
pub fn ns_ms(x: u64) -> u64 {
    ms(x)
}

/// Parse and validate a cluster scenario, panicking with the message if it is wrong.
pub fn cluster_scenario(toml: &str) -> vmsched_core::ClusterScenario {
    vmsched_core::ClusterScenario::from_toml_str(toml)
        .unwrap_or_else(|e| panic!("bad test cluster: {e}\n{toml}"))
}

/// The validation error of a cluster scenario that must be rejected.
pub fn cluster_rejected(toml: &str) -> vmsched_core::ScenarioError {
    match vmsched_core::ClusterScenario::from_toml_str(toml) {
        Ok(_) => panic!("cluster accepted but must be rejected:\n{toml}"),
        Err(e) => e,
    }
}

/// Run a cluster to the end in steps of `step` ns, checking every host's
/// invariants after each step and each host's accounting at the end, and
/// return its summary (without `wall_s`).
pub fn cluster_run_checked_ns(toml: &str, step: u64) -> Json {
    let sc = cluster_scenario(toml);
    let mut c = vmsched_core::Cluster::new(&sc).expect("cluster builds");
    let run = &sc.hosts[0].1.run;
    let (end, measured) = (run.duration_ns, run.duration_ns - run.warmup_ns);
    let mut t = 0;
    while t < end {
        t = (t + step).min(end);
        c.run_until(Time(t))
            .unwrap_or_else(|e| panic!("cluster run failed at {t} ns: {e}"));
        for (_, sim) in c.hosts() {
            check_world(sim);
        }
    }
    let p = c.run().expect("cluster run finishes");
    assert!(p.finished, "every host reached the end");
    let mut s = c.summary(0.0);
    s.as_object_mut().unwrap().remove("wall_s");
    for h in s["hosts"].as_array().unwrap() {
        check_summary(h, measured);
    }
    s
}

/// Run a cluster with invariant checks every 50 ms.
pub fn cluster_run(toml: &str) -> Json {
    cluster_run_checked_ns(toml, 50 * NS_PER_MS)
}

/// A domain of host `host` in a cluster summary.
pub fn host_domain<'a>(s: &'a Json, host: &str, dom: &str) -> &'a Json {
    s["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["host"] == host && d["name"] == dom)
        .unwrap_or_else(|| panic!("no domain {host}/{dom}"))
}
