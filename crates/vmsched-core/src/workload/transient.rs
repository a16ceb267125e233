//! `transient`: CPU-bound load that appears and disappears on a schedule.
//!
//! Either periodic (on for `on_ms`, off for `off_ms`, starting after
//! `offset_ms`) or an explicit list of toggle instants `schedule_s`
//! (`[on, off, on, off, ...]`). While on, `threads` busy loops run (default:
//! one per VCPU); when the load goes off the loops exit, and VCPUs halt.

use super::{GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::{WorkItem, FOREVER};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::time::{secs_f64, Time, NS_PER_S};
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "transient",
    summary: "CPU-bound load that switches on and off on a schedule.",
    params: &[
        ParamSpec {
            name: "threads",
            unit: "",
            kind: ParamKind::Int { min: 0, max: 4096 },
            default: Default::Int(0),
            scope: ParamScope::Workload,
            doc: "Busy loops while on; 0 means one per VCPU.",
        },
        ParamSpec {
            name: "on_ms",
            unit: "ms",
            kind: ParamKind::Float { min: 0.001, max: 1e9 },
            default: Default::Float(1000.0),
            scope: ParamScope::Workload,
            doc: "Periodic mode: how long the load stays on.",
        },
        ParamSpec {
            name: "off_ms",
            unit: "ms",
            kind: ParamKind::Float { min: 0.001, max: 1e9 },
            default: Default::Float(1000.0),
            scope: ParamScope::Workload,
            doc: "Periodic mode: how long the load stays off.",
        },
        ParamSpec {
            name: "offset_ms",
            unit: "ms",
            kind: ParamKind::Float { min: 0.0, max: 1e9 },
            default: Default::Float(0.0),
            scope: ParamScope::Workload,
            doc: "Periodic mode: when the load first switches on.",
        },
        ParamSpec {
            name: "schedule_s",
            unit: "s",
            kind: ParamKind::FloatList { min: 0.0, max: 1e9 },
            default: Default::FloatList(&[]),
            scope: ParamScope::Workload,
            doc: "Explicit toggle instants [on, off, on, ...], increasing; overrides the periodic mode.",
        },
    ],
    metrics: &["on_time_s", "switches"],
    check: check_schedule,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(Transient {
            threads: p.int("threads") as u32,
            on_ns: secs_f64(p.float("on_ms") / 1000.0).max(1),
            off_ns: secs_f64(p.float("off_ms") / 1000.0).max(1),
            offset_ns: secs_f64(p.float("offset_ms") / 1000.0),
            schedule: p.float_list("schedule_s").iter().map(|&s| secs_f64(s)).collect(),
            next_toggle: 0,
            on: false,
            on_since: Time::ZERO,
            on_ns_total: 0,
            switches: 0,
            measure_from: Time::ZERO,
        })
    },
    jobs: None,
};

fn check_schedule(p: &Params, path: &str) -> Result<(), crate::error::ScenarioError> {
    let s = p.float_list("schedule_s");
    for i in 1..s.len() {
        if s[i] <= s[i - 1] {
            return Err(crate::error::ScenarioError::new(
                format!("{path}.schedule_s[{i}]"),
                format!(
                    "{} is not after {}; expected increasing toggle times",
                    s[i],
                    s[i - 1]
                ),
            ));
        }
    }
    Ok(())
}

struct Transient {
    threads: u32,
    on_ns: u64,
    off_ns: u64,
    offset_ns: u64,
    schedule: Vec<u64>,
    next_toggle: usize,
    on: bool,
    on_since: Time,
    on_ns_total: u64,
    switches: u64,
    measure_from: Time,
}

impl Transient {
    fn toggle(&mut self, g: &mut GuestCtx) {
        self.switches += 1;
        if self.on {
            self.on = false;
            self.on_ns_total += g.now().since(self.on_since.max(self.measure_from));
            g.cancel_all_work();
        } else {
            self.on = true;
            self.on_since = g.now();
            let n = if self.threads == 0 {
                g.nvcpus()
            } else {
                self.threads
            };
            for _ in 0..n {
                g.push(WorkItem {
                    remaining_ns: FOREVER,
                    tag: 0,
                });
            }
        }
    }

    fn arm_next(&mut self, g: &mut GuestCtx) {
        if self.schedule.is_empty() {
            let d = if self.on { self.on_ns } else { self.off_ns };
            g.arm_timer(g.now().after(d), 0);
        } else if let Some(&t) = self.schedule.get(self.next_toggle) {
            self.next_toggle += 1;
            g.arm_timer(Time(t.max(g.now().ns())), 0);
        }
    }
}

impl Workload for Transient {
    fn kind(&self) -> &'static str {
        "transient"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        if self.schedule.is_empty() {
            g.arm_timer(Time(self.offset_ns), 0);
        } else {
            self.arm_next(g);
        }
    }

    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {
        self.toggle(g);
        self.arm_next(g);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.on_ns_total = 0;
        self.switches = 0;
        self.measure_from = now;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut on = self.on_ns_total;
        if self.on {
            on += now.since(self.on_since.max(self.measure_from));
        }
        let mut m = Map::new();
        m.insert("on_time_s".into(), (on as f64 / NS_PER_S as f64).into());
        m.insert("switches".into(), self.switches.into());
        m
    }
}
