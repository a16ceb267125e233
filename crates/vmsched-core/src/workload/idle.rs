//! `idle`: a guest that never has work; its VCPUs stay blocked.

use super::{Rng, Workload, WorkloadInfo};
use crate::params::Params;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "idle",
    summary: "A guest with nothing to do: its VCPUs stay blocked.",
    params: &[],
    metrics: &[],
    check: super::no_check,
    io: false,
    peers: super::no_peers,
    make: |_p: &Params| Box::new(Idle),
    jobs: None,
};

struct Idle;

impl Workload for Idle {
    fn kind(&self) -> &'static str {
        "idle"
    }
    fn start(&mut self, _g: &mut super::GuestCtx, _rng: &mut Rng) {}
}
