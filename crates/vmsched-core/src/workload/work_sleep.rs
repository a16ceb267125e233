//! `work-sleep`: threads that each do a fixed amount of CPU work, then sleep
//! for a fixed time, over and over.
//!
//! The load test of Kang & Lee 2018 (Mcredit2), their Algorithm 3: each of
//! `n` threads counts to ten million in a loop, then calls `usleep(200000)`,
//! forever. The sleep starts only when the work is done, so a thread that is
//! starved of CPU stretches its cycle instead of piling up work (unlike
//! `duty-cycle`, whose work arrives on a clock) and unlike `transient`, whose
//! busy phase ends on a clock whether or not the work got the CPU. Each
//! thread starts at its own random point of its first cycle (threads of
//! separately started domains are not in phase), drawn from the domain's
//! seeded stream.

use super::{GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::time::{secs_f64, Time};
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "work-sleep",
    summary: "Threads that each do work_ms of CPU work, then sleep sleep_ms, forever (a load test).",
    params: &[
        ParamSpec {
            name: "threads",
            unit: "",
            kind: ParamKind::Int { min: 0, max: 4096 },
            default: Default::Int(0),
            scope: ParamScope::Workload,
            doc: "Threads; 0 means one per VCPU.",
        },
        ParamSpec {
            name: "work_ms",
            unit: "ms",
            kind: ParamKind::Float {
                min: 0.001,
                max: 1e9,
            },
            default: Default::Required,
            scope: ParamScope::Workload,
            doc: "CPU work of one burst, as time on an uncontended PCPU.",
        },
        ParamSpec {
            name: "sleep_ms",
            unit: "ms",
            kind: ParamKind::Float { min: 0.0, max: 1e9 },
            default: Default::Required,
            scope: ParamScope::Workload,
            doc: "Sleep after each burst, starting when the burst's work is done.",
        },
        ParamSpec {
            name: "random_phase",
            unit: "",
            kind: ParamKind::Bool,
            default: Default::Bool(true),
            scope: ParamScope::Workload,
            doc: "Start each thread at a random offset within its first work+sleep cycle (from the domain's seeded stream).",
        },
    ],
    metrics: &["bursts", "mean_cycle_ms"],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(WorkSleep {
            work_ns: secs_f64(p.float("work_ms") / 1000.0).max(1),
            sleep_ns: secs_f64(p.float("sleep_ms") / 1000.0),
            threads: p.int("threads") as u32,
            random_phase: p.bool("random_phase"),
            burst_start: Vec::new(),
            bursts: 0,
            cycle_ns_sum: 0,
        })
    },
    jobs: None,
};

struct WorkSleep {
    work_ns: u64,
    sleep_ns: u64,
    threads: u32,
    random_phase: bool,
    /// When each thread's current burst was queued.
    burst_start: Vec<Time>,
    /// Bursts finished during the measured run.
    bursts: u64,
    /// Sum over those bursts of (burst time + sleep), ns.
    cycle_ns_sum: u64,
}

impl Workload for WorkSleep {
    fn kind(&self) -> &'static str {
        "work-sleep"
    }

    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        let n = if self.threads == 0 {
            g.nvcpus()
        } else {
            self.threads
        };
        self.burst_start = vec![g.now(); n as usize];
        for t in 0..n {
            let phase = if self.random_phase {
                rng.below(self.work_ns + self.sleep_ns)
            } else {
                0
            };
            g.arm_timer(g.now().after(phase), t);
        }
    }

    /// Thread `token` wakes from its sleep: its next burst of work.
    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, token: u32) {
        self.burst_start[token as usize] = g.now();
        g.push(WorkItem {
            remaining_ns: self.work_ns,
            tag: token,
        });
    }

    /// Thread `tag` finished its burst: it sleeps.
    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        let busy_ns = g.now().since(self.burst_start[tag as usize]);
        self.bursts += 1;
        self.cycle_ns_sum += busy_ns + self.sleep_ns;
        g.arm_timer(g.now().after(self.sleep_ns), tag);
    }

    fn reset_metrics(&mut self, _now: Time) {
        self.bursts = 0;
        self.cycle_ns_sum = 0;
    }

    fn metrics(&self, _now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("bursts".into(), self.bursts.into());
        let mean = if self.bursts > 0 {
            Json::from(self.cycle_ns_sum as f64 / self.bursts as f64 / 1e6)
        } else {
            Json::Null
        };
        m.insert("mean_cycle_ms".into(), mean);
        m
    }
}
