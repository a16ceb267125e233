//! `duty-cycle`: busy `util_pct` % of every `period_ms`, idle the rest.
//!
//! At the start of each period each of `threads` threads receives
//! `util_pct/100 × period` of CPU work. Work not finished by the next period
//! start is carried over (the backlog grows: the guest is starved), and the
//! period counts as a missed deadline. An optional random `phase` staggers
//! domains so that they do not all wake at the same instant.

use super::{GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::time::{secs_f64, Time};
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "duty-cycle",
    summary: "Busy util_pct % of each period_ms, idle the rest (e.g. a VM that is 20 % loaded).",
    params: &[
        ParamSpec {
            name: "util_pct",
            unit: "%",
            kind: ParamKind::Float { min: 0.0, max: 100.0 },
            default: Default::Required,
            scope: ParamScope::Workload,
            doc: "CPU demand per thread as a share of the period.",
        },
        ParamSpec {
            name: "period_ms",
            unit: "ms",
            kind: ParamKind::Float { min: 0.01, max: 3_600_000.0 },
            default: Default::Float(100.0),
            scope: ParamScope::Workload,
            doc: "Length of one busy/idle cycle.",
        },
        ParamSpec {
            name: "threads",
            unit: "",
            kind: ParamKind::Int { min: 0, max: 4096 },
            default: Default::Int(0),
            scope: ParamScope::Workload,
            doc: "Threads with this duty cycle; 0 means one per VCPU.",
        },
        ParamSpec {
            name: "random_phase",
            unit: "",
            kind: ParamKind::Bool,
            default: Default::Bool(true),
            scope: ParamScope::Workload,
            doc: "Start at a random offset within the first period (from the domain's seeded stream).",
        },
    ],
    metrics: &["periods", "missed_periods", "outstanding_items"],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        let period_ns = secs_f64(p.float("period_ms") / 1000.0).max(1);
        Box::new(DutyCycle {
            period_ns,
            busy_ns: (period_ns as f64 * p.float("util_pct") / 100.0).round() as u64,
            threads: p.int("threads") as u32,
            random_phase: p.bool("random_phase"),
            outstanding: 0,
            periods: 0,
            missed: 0,
        })
    },
    jobs: None,
};

struct DutyCycle {
    period_ns: u64,
    busy_ns: u64,
    threads: u32,
    random_phase: bool,
    /// Items queued or in progress.
    outstanding: u64,
    periods: u64,
    missed: u64,
}

impl Workload for DutyCycle {
    fn kind(&self) -> &'static str {
        "duty-cycle"
    }

    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        let phase = if self.random_phase {
            rng.below(self.period_ns)
        } else {
            0
        };
        g.arm_timer(g.now().after(phase), 0);
    }

    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {
        self.periods += 1;
        if self.outstanding > 0 {
            self.missed += 1;
        }
        if self.busy_ns > 0 {
            let n = if self.threads == 0 {
                g.nvcpus()
            } else {
                self.threads
            };
            for _ in 0..n {
                g.push(WorkItem {
                    remaining_ns: self.busy_ns,
                    tag: 0,
                });
                self.outstanding += 1;
            }
        }
        g.arm_timer(g.now().after(self.period_ns), 0);
    }

    fn work_done(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, _tag: u32) {
        self.outstanding -= 1;
    }

    fn reset_metrics(&mut self, _now: Time) {
        self.periods = 0;
        self.missed = 0;
    }

    fn metrics(&self, _now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("periods".into(), self.periods.into());
        m.insert("missed_periods".into(), self.missed.into());
        m.insert("outstanding_items".into(), self.outstanding.into());
        m
    }
}
