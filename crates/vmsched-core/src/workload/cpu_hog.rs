//! `cpu-hog`: CPU-hungry loops that never block (the ALERT benchmark's load).
//!
//! `threads` loops (default: one per VCPU), each an infinite work item.

use super::{GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::{WorkItem, FOREVER};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};

const THREADS: &[ParamSpec] = &[ParamSpec {
    name: "threads",
    unit: "",
    kind: ParamKind::Int { min: 0, max: 4096 },
    default: Default::Int(0),
    scope: ParamScope::Workload,
    doc: "Number of busy loops; 0 means one per VCPU.",
}];

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "cpu-hog",
    summary: "CPU-bound loops that never block (as in ALERT); one per VCPU by default.",
    params: THREADS,
    metrics: &[],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(CpuHog {
            threads: p.int("threads") as u32,
            kind: "cpu-hog",
        })
    },
    jobs: None,
};

/// The Isolation Benchmark Suite's CPU-intensive test (integer and floating
/// point loops), as the 2015 thesis runs it in Dom0: to the scheduler, the
/// same never-blocking loops as `cpu-hog`.
pub(super) const STRESS: WorkloadInfo = WorkloadInfo {
    kind: "cpu-stress",
    summary:
        "The IBS CPU-intensive test (never-blocking loops), e.g. in Dom0; one per VCPU by default.",
    params: THREADS,
    metrics: &[],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(CpuHog {
            threads: p.int("threads") as u32,
            kind: "cpu-stress",
        })
    },
    jobs: None,
};

struct CpuHog {
    threads: u32,
    kind: &'static str,
}

impl Workload for CpuHog {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
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
