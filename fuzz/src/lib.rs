//! What the fuzz targets check, shared by them: any bytes given to the
//! scenario and profile parsers give a value or a one-line error, never a
//! panic; a scenario that validates can be built and simulated for a moment.
//!
//! libFuzzer reports a panic (or an abort, or a run past its time or memory
//! limit) as a crash and saves the input under `fuzz/artifacts/`.

use serde_json::Value as Json;
use vmsched_core::host::Platform;
use vmsched_core::{ClusterScenario, Scenario, ScenarioError, Simulation, Time};

/// Simulated time a validated scenario is run for (1 ms): enough to start
/// every workload and scheduler, short enough for thousands of inputs a second.
const RUN_NS: u64 = 1_000_000;

/// An error a user would see must be one line that says something.
fn one_line(e: &ScenarioError) {
    let text = e.to_string();
    assert!(!e.message.is_empty(), "empty message at {}", e.path);
    assert!(
        !text.contains(['\n', '\r']),
        "a message of several lines: {text:?}"
    );
}

/// Validate a single-host scenario; build and briefly run it if it is valid.
fn scenario(v: Result<Scenario, ScenarioError>) {
    match v {
        Ok(sc) => {
            let mut sim = Simulation::new(&sc).expect("a validated scenario builds");
            let until = Time(RUN_NS.min(sc.run.duration_ns));
            if let Err(e) = sim.run_until(until) {
                panic!("a validated scenario failed to run: {e}");
            }
        }
        Err(e) => one_line(&e),
    }
}

fn cluster(v: Result<ClusterScenario, ScenarioError>) {
    if let Err(e) = v {
        one_line(&e);
    }
}

/// Scenario TOML text, as `Scenario::from_toml_str` reads it (one host, and
/// as a cluster).
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    scenario(Scenario::from_toml_str(text));
    cluster(ClusterScenario::from_toml_str(text));
}

/// A scenario tree as JSON, the form the Python front end hands the core.
pub fn scenario_json(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Json>(data) else {
        return;
    };
    scenario(Scenario::from_json(&v));
    cluster(ClusterScenario::from_json(&v));
}

/// A platform profile table in TOML (`[host.profile]` or a profile file).
pub fn profile_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match vmsched_core::scenario::json_from_toml(text) {
        Ok(Json::Object(t)) => {
            if let Err(e) = Platform::from_table(&t, "host.profile") {
                one_line(&e);
            }
        }
        Ok(_) => {}
        Err(e) => one_line(&e),
    }
}
