//! vmsched-core: a discrete-event simulator of hypervisor VCPU scheduling.
//!
//! It simulates a virtualised host — physical CPUs with their topology,
//! domains with virtual CPUs, the guests' work — under a VCPU scheduler that
//! behaves as Xen's own does, and measures what an operator or a paper would:
//! CPU shares, allocation error, wake-up latency, application metrics.
//!
//! The crate has no Python in it. The usual entry points:
//!
//! ```
//! use vmsched_core::{Scenario, Simulation};
//! let sc = Scenario::from_toml_str(r#"
//!     [host]
//!     pcpus = 1
//!     [scheduler]
//!     name = "credit"
//!     [run]
//!     duration_s = 2
//!     [[domain]]
//!     name = "a"
//!     weight = 512
//!     [domain.workload]
//!     kind = "cpu-hog"
//!     [[domain]]
//!     name = "b"
//!     weight = 256
//!     [domain.workload]
//!     kind = "cpu-hog"
//! "#).unwrap();
//! let mut sim = Simulation::new(&sc).unwrap();
//! sim.run().unwrap();
//! let summary = sim.summary(0.0);
//! let a = summary["domains"][0]["cpu_pct"].as_f64().unwrap();
//! assert!(a > 60.0);
//! ```

pub mod bench;
pub mod cluster;
pub mod cpumask;
pub mod domain;
pub mod engine;
pub mod error;
pub mod host;
pub mod ids;
pub mod io;
pub mod metrics;
pub mod params;
pub mod rng;
pub mod scenario;
pub mod sched;
pub mod time;
pub mod trace;
pub mod workload;

pub use cluster::{Cluster, ClusterScenario};
pub use engine::{Progress, Simulation, SummaryParts};
pub use error::{ScenarioError, SimError};
pub use scenario::Scenario;
pub use time::Time;

/// Every scheduler (built-in or registered at run time) and workload with
/// its parameters, as JSON (for
/// `vmsched schedulers`, the docs and the Python API).
pub fn catalogue() -> serde_json::Value {
    let schedulers: Vec<_> = sched::all().iter().map(|s| s.to_json()).collect();
    let workloads: Vec<_> = workload::registry()
        .iter()
        .map(|w| {
            serde_json::json!({
                "kind": w.kind,
                "summary": w.summary,
                "metrics": w.metrics,
                "params": w.params.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let profiles: Vec<_> = host::BUILTIN_PROFILES.iter().map(|(n, _)| *n).collect();
    serde_json::json!({"schedulers": schedulers, "workloads": workloads, "profiles": profiles})
}
