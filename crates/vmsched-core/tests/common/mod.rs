//! Helpers shared by the integration tests: build and run scenarios, read
//! results, and read the Credit scheduler's state from its `dump()`.
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

/// Build a simulation.
pub fn sim(toml: &str) -> Simulation {
    Simulation::new(&scenario(toml)).expect("simulation builds")
}

/// Run a scenario to the end and return its summary (`wall_s` = 0).
pub fn run(toml: &str) -> Json {
    let mut s = sim(toml);
    s.run().expect("run succeeds");
    s.summary(0.0)
}

/// The summary object of domain `name`.
pub fn dom<'a>(summary: &'a Json, name: &str) -> &'a Json {
    summary["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no domain {name}"))
}

/// CPU % of domain `name` (100 = one PCPU).
pub fn cpu(summary: &Json, name: &str) -> f64 {
    dom(summary, name)["cpu_pct"].as_f64().unwrap()
}

/// VCPU 0 of domain `name`.
pub fn vcpu0<'a>(summary: &'a Json, name: &str) -> &'a Json {
    &dom(summary, name)["vcpus"][0]
}

/// A Credit scheduler counter.
pub fn counter(summary: &Json, name: &str) -> u64 {
    summary["scheduler_counters"][name].as_u64().unwrap()
}

/// One VCPU as Credit's `dump()` shows it.
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
    let dump = s.dump();
    let mut out = Vec::new();
    for line in dump.lines().filter(|l| l.starts_with("vcpu ")) {
        let field = |k: &str| -> &str {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{k}=")))
                .unwrap_or_else(|| panic!("no {k} in {line}"))
        };
        out.push(CreditVcpu {
            pri: field("pri").to_string(),
            credit: field("credit").parse().unwrap(),
            last: field("last").parse().unwrap(),
            active: field("active") == "1",
            parked: field("parked") == "1",
        });
    }
    out
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
