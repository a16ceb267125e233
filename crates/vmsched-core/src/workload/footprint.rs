//! A workload's cache footprint: the keys every `[domain.workload]` takes
//! besides its kind's own, read by the engine's switch-cost model
//! (`engine/switch.rs`, `docs/switch-cost.md`).
//!
//! `working_set_kb` is what a VCPU of the domain needs back in the cache
//! each time it resumes; `stream_fill_lines_per_us` is how many new lines it
//! brings in per µs of CPU besides (data it streams through once), which
//! evicts other VCPUs' lines. Both matter only when the profile's L2 model
//! is on (`l2_fill_ns > 0`). Left out, each takes its kind's default below,
//! and a driver domain adds its backends' footprint to its working set.

use crate::error::ScenarioError;
use crate::params::{self, Default, ParamKind, ParamSpec};
use serde_json::{Map, Value as Json};

/// The shared declaration of the footprint keys (their defaults depend on
/// the workload kind: [`default_footprint`]).
pub const FOOTPRINT_PARAMS: &[ParamSpec] = &[
    super::wparam(
        "working_set_kb",
        "KB",
        ParamKind::Float {
            min: 0.0,
            max: 1_048_576.0,
        },
        Default::Required,
        "Cache footprint a VCPU must have back each time it resumes (KB = 1024 bytes); default per kind.",
    ),
    super::wparam(
        "stream_fill_lines_per_us",
        "lines/µs",
        ParamKind::Float {
            min: 0.0,
            max: 1000.0,
        },
        Default::Required,
        "New cache lines brought in per µs of CPU (streamed data), evicting others' lines; default per kind.",
    ),
];

/// A domain's footprint as the scenario gives it (`None`: the kind's default).
#[derive(Clone, Copy, Debug, PartialEq, std::default::Default)]
pub struct Footprint {
    /// `working_set_kb`.
    pub working_set_kb: Option<f64>,
    /// `stream_fill_lines_per_us`.
    pub stream_fill_lines_per_us: Option<f64>,
}

/// The working set the driver domain's backends add to its own (KB): netback,
/// the bridge, the NIC driver, blkback and Xen's paths they enter (an
/// estimate, `docs/calibration.md`).
pub const DRIVER_BACKEND_KB: f64 = 48.0;

/// Take the footprint keys out of a `[domain.workload]` table (`rest`, the
/// table less `kind`) and validate them (`path` locates the table).
pub fn take(rest: &mut Map<String, Json>, path: &str) -> Result<Footprint, ScenarioError> {
    let mut out = Footprint::default();
    for spec in FOOTPRINT_PARAMS {
        if let Some(v) = rest.remove(spec.name) {
            let p = params::join_path(path, spec.name);
            let x = match params::validate_one(spec, &v, &p)? {
                params::Value::Float(f) => f,
                params::Value::Int(i) => i as f64,
                _ => unreachable!("footprint keys are numbers"),
            };
            match spec.name {
                "working_set_kb" => out.working_set_kb = Some(x),
                _ => out.stream_fill_lines_per_us = Some(x),
            }
        }
    }
    Ok(out)
}

/// Default `(working_set_kb, stream_fill_lines_per_us)` of a workload kind
/// (estimates; `docs/switch-cost.md` gives each one's reasoning).
pub fn default_footprint(kind: &str) -> (f64, f64) {
    match kind {
        "idle" => (0.0, 0.0),
        // Loops over a few variables: code and stack fit in L1.
        "cpu-hog" | "cpu-stress" | "duty-cycle" | "transient" | "work-sleep" | "sysbench-cpu" => {
            (16.0, 0.0)
        }
        // The kernel TCP stack, Apache and the hot file data; about 20 KB of
        // file and socket data streamed per request of ~700 µs of CPU.
        "web-server" => (128.0, 1.0),
        // Socket buffers, TCP stack: the payload streams through.
        "tcp-stream" => (64.0, 2.0),
        "streaming" => (128.0, 1.0),
        // The block front end and the page cache's pages of each request.
        "disk-read" | "iozone" => (64.0, 1.0),
        // A database's hot index and buffer pages.
        "oltp" | "tiered" => (512.0, 1.0),
        // A NAS kernel's grid slab per process.
        "bsp" => (1024.0, 2.0),
        _ => (64.0, 0.0),
    }
}
