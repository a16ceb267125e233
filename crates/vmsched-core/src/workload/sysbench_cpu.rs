//! `sysbench-cpu`: N threads each doing a fixed amount of CPU work
//! (`sysbench cpu --threads=N`); reports the completion time.
//!
//! The guest OS time-slices its threads over its VCPUs: a thread runs for at
//! most `guest_slice_ms` and then goes to the back of the guest run queue, as a
//! guest kernel's scheduler would rotate them. The benchmark starts at
//! `start_s` and, with `repeat = true`, starts again as soon as it finishes.

use super::{GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::time::{secs_f64, Time, NS_PER_S};
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "sysbench-cpu",
    summary: "N threads each doing a fixed amount of CPU work; reports completion time.",
    params: &[
        ParamSpec {
            name: "threads",
            unit: "",
            kind: ParamKind::Int { min: 1, max: 4096 },
            default: Default::Int(1),
            scope: ParamScope::Workload,
            doc: "Worker threads (sysbench --threads).",
        },
        ParamSpec {
            name: "work_ms",
            unit: "ms",
            kind: ParamKind::Float {
                min: 0.001,
                max: 1e9,
            },
            default: Default::Float(10_000.0),
            scope: ParamScope::Workload,
            doc: "CPU time each thread needs on an uncontended PCPU.",
        },
        ParamSpec {
            name: "start_s",
            unit: "s",
            kind: ParamKind::Float { min: 0.0, max: 1e9 },
            default: Default::Float(0.0),
            scope: ParamScope::Workload,
            doc: "When the benchmark starts.",
        },
        ParamSpec {
            name: "repeat",
            unit: "",
            kind: ParamKind::Bool,
            default: Default::Bool(false),
            scope: ParamScope::Workload,
            doc: "Start again as soon as all threads finish.",
        },
        ParamSpec {
            name: "guest_slice_ms",
            unit: "ms",
            kind: ParamKind::Float {
                min: 0.01,
                max: 1e6,
            },
            default: Default::Float(4.0),
            scope: ParamScope::Workload,
            doc: "Guest scheduler time slice: how long a thread runs before the guest rotates it.",
        },
    ],
    metrics: &[
        "runs_completed",
        "completion_s",
        "mean_completion_s",
        "threads_done",
    ],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(SysbenchCpu {
            threads: p.int("threads") as u32,
            work_ns: secs_f64(p.float("work_ms") / 1000.0).max(1),
            start_ns: secs_f64(p.float("start_s")),
            repeat: p.bool("repeat"),
            slice_ns: secs_f64(p.float("guest_slice_ms") / 1000.0).max(1),
            left: Vec::new(),
            started_at: Time::ZERO,
            done_threads: 0,
            completions_ns: Vec::new(),
            threads_done_total: 0,
        })
    },
    jobs: None,
};

struct SysbenchCpu {
    threads: u32,
    work_ns: u64,
    start_ns: u64,
    repeat: bool,
    slice_ns: u64,
    /// Work left per thread in the current run.
    left: Vec<u64>,
    started_at: Time,
    done_threads: u32,
    completions_ns: Vec<u64>,
    threads_done_total: u64,
}

impl SysbenchCpu {
    fn begin(&mut self, g: &mut GuestCtx) {
        self.started_at = g.now();
        self.done_threads = 0;
        self.left = vec![self.work_ns; self.threads as usize];
        for t in 0..self.threads {
            self.queue_chunk(g, t);
        }
    }

    fn queue_chunk(&mut self, g: &mut GuestCtx, thread: u32) {
        let chunk = self.left[thread as usize].min(self.slice_ns);
        self.left[thread as usize] -= chunk;
        g.push(WorkItem {
            remaining_ns: chunk,
            tag: thread,
        });
    }
}

impl Workload for SysbenchCpu {
    fn kind(&self) -> &'static str {
        "sysbench-cpu"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        if self.start_ns == 0 {
            self.begin(g);
        } else {
            g.arm_timer(Time(self.start_ns), 0);
        }
    }

    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {
        self.begin(g);
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if self.left[tag as usize] > 0 {
            self.queue_chunk(g, tag);
            return;
        }
        self.done_threads += 1;
        self.threads_done_total += 1;
        if self.done_threads == self.threads {
            self.completions_ns.push(g.now().since(self.started_at));
            if self.repeat {
                self.begin(g);
            }
        }
    }

    fn reset_metrics(&mut self, _now: Time) {
        self.completions_ns.clear();
        self.threads_done_total = 0;
    }

    fn metrics(&self, _now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        let s = |ns: u64| ns as f64 / NS_PER_S as f64;
        m.insert("runs_completed".into(), self.completions_ns.len().into());
        m.insert(
            "completion_s".into(),
            self.completions_ns.first().map(|&c| s(c)).into(),
        );
        let mean = if self.completions_ns.is_empty() {
            None
        } else {
            Some(
                self.completions_ns.iter().map(|&c| s(c)).sum::<f64>()
                    / self.completions_ns.len() as f64,
            )
        };
        m.insert("mean_completion_s".into(), mean.into());
        m.insert("threads_done".into(), self.threads_done_total.into());
        m
    }
}
