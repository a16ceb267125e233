//! Several hosts joined by a network, each with its own scheduler: a cluster.
//!
//! A cluster scenario has `[[host]]` tables instead of one `[host]`: each
//! holds what a single-host scenario holds (`pcpus` or `[host.topology]`,
//! `profile`, `[host.nic]`, `[host.disk]`, `[host.scheduler]`,
//! `[[host.domain]]`, `[[host.action]]`) plus a `name`; `[run]` and `title`
//! are shared. Workloads address other hosts' domains by host and domain
//! name. A packet to another host leaves through the sender's driver domain
//! and NIC (serialised at the sender's line rate, then its latency), enters
//! the other host's NIC when it gets there (serialised again, as by a
//! store-and-forward switch, behind the packets that got there before it)
//! and its driver domain, and reaches the domain.
//!
//! The hosts' events are interleaved in time order (ties: lower host index
//! first), so the cluster is as deterministic as one host. Each host's
//! random streams are keyed by the run's seed and the host's name.

use crate::engine::Simulation;
use crate::error::{suggestion, ScenarioError, SimError};
use crate::io::{Directory, IoReq};
use crate::rng::stream_key;
use crate::scenario::DomainSpec;
use crate::scenario::Scenario;
use crate::time::Time;
use crate::workload::Workload;
use crate::Progress;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The keys of a `[[host]]` table that go to the host's own `[host]`.
const HOST_KEYS: &[&str] = &["pcpus", "topology", "profile", "nic", "disk", "memory_mb"];

/// A validated cluster scenario.
#[derive(Clone, Debug)]
pub struct ClusterScenario {
    pub title: String,
    /// Each host's name and its own (single-host) scenario.
    pub hosts: Vec<(String, Scenario)>,
    pub directory: Arc<Directory>,
    /// The input tree as given.
    pub source: Json,
}

/// Is this scenario tree a cluster (`[[host]]` tables)?
pub fn is_cluster(v: &Json) -> bool {
    matches!(v.get("host"), Some(Json::Array(_)))
}

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

/// Re-root an error path of host `i`'s scenario into the cluster's tree.
fn reroot(e: ScenarioError, i: usize) -> ScenarioError {
    let p = &e.path;
    let path = if p == "host" {
        format!("host[{i}]")
    } else if let Some(rest) = p.strip_prefix("host.") {
        format!("host[{i}].{rest}")
    } else if p.starts_with("run") || p == "title" {
        p.clone()
    } else if p.is_empty() {
        format!("host[{i}]")
    } else {
        format!("host[{i}].{p}")
    };
    ScenarioError::new(path, e.message)
}

impl ClusterScenario {
    /// Validate a cluster scenario tree.
    pub fn from_json(v: &Json) -> Result<ClusterScenario, ScenarioError> {
        let Some(t) = v.as_object() else {
            return Err(err(
                "",
                "is not a table; expected a cluster scenario's tables",
            ));
        };
        for k in t.keys() {
            if !["title", "description", "run", "host"].contains(&k.as_str()) {
                let known = ["title", "description", "run", "host"];
                return Err(err(
                    k.clone(),
                    format!(
                        "is not a key of a cluster scenario; expected one of {}{}",
                        known.join(", "),
                        suggestion(k, known.iter().copied())
                    ),
                ));
            }
        }
        let title = match t.get("title") {
            None => String::new(),
            Some(Json::String(s)) => s.clone(),
            Some(_) => {
                return Err(err(
                    "title",
                    "is not a string; expected the cluster's title",
                ))
            }
        };
        let Some(hosts) = t.get("host").and_then(Json::as_array) else {
            return Err(err(
                "host",
                "is not a list of hosts; expected [[host]] tables (a cluster scenario)",
            ));
        };
        if hosts.is_empty() {
            return Err(err("host", "is empty; expected at least one [[host]]"));
        }
        // Names first: workloads may name any host's domains.
        let mut dir = Directory::default();
        let mut trees = Vec::new();
        for (i, h) in hosts.iter().enumerate() {
            let Some(ht) = h.as_object() else {
                return Err(err(
                    format!("host[{i}]"),
                    "is not a table; expected a [[host]] table",
                ));
            };
            let name = match ht.get("name") {
                Some(Json::String(s)) if !s.is_empty() && !s.contains(char::is_whitespace) => {
                    s.clone()
                }
                Some(other) => {
                    return Err(err(
                        format!("host[{i}].name"),
                        format!(
                            "{other} is not a name; expected a non-empty string without spaces"
                        ),
                    ))
                }
                None => {
                    return Err(err(
                        format!("host[{i}].name"),
                        "is missing; expected the host's name",
                    ))
                }
            };
            if dir.hosts.iter().any(|(n, _)| *n == name) {
                return Err(err(
                    format!("host[{i}].name"),
                    format!("\"{name}\" is used by an earlier host; expected unique names"),
                ));
            }
            let mut host = Map::new();
            let mut tree = Map::new();
            for (k, val) in ht {
                match k.as_str() {
                    "name" => {}
                    k if HOST_KEYS.contains(&k) => {
                        host.insert(k.into(), val.clone());
                    }
                    "scheduler" | "domain" | "action" => {
                        tree.insert(k.clone(), val.clone());
                    }
                    other => {
                        let known: Vec<&str> = HOST_KEYS
                            .iter()
                            .copied()
                            .chain(["name", "scheduler", "domain", "action"])
                            .collect();
                        return Err(err(
                            format!("host[{i}].{other}"),
                            format!(
                                "is not a key of a [[host]]; expected one of {}{}",
                                known.join(", "),
                                suggestion(other, known.iter().copied())
                            ),
                        ));
                    }
                }
            }
            tree.insert("host".into(), Json::Object(host));
            if let Some(r) = t.get("run") {
                tree.insert("run".into(), r.clone());
            }
            tree.insert("title".into(), Json::String(format!("{title} [{name}]")));
            let doms: Vec<String> = match tree.get("domain") {
                Some(Json::Array(a)) => a
                    .iter()
                    .filter_map(|d| d.get("name").and_then(|n| n.as_str()).map(String::from))
                    .collect(),
                _ => Vec::new(),
            };
            dir.hosts.push((name, doms));
            trees.push(Json::Object(tree));
        }
        let dir = Arc::new(dir);
        let mut out = Vec::new();
        for (i, tree) in trees.iter().enumerate() {
            let name = dir.hosts[i].0.clone();
            let mut sc =
                Scenario::from_json_in(tree, Some((&dir, &name))).map_err(|e| reroot(e, i))?;
            // Hosts draw from distinct streams even with equal domain names.
            sc.run.seed ^= stream_key(&name);
            out.push((name, sc));
        }
        Ok(ClusterScenario {
            title,
            hosts: out,
            directory: dir,
            source: v.clone(),
        })
    }

    /// Parse and validate a cluster scenario in TOML.
    pub fn from_toml_str(text: &str) -> Result<ClusterScenario, ScenarioError> {
        ClusterScenario::from_json(&crate::scenario::json_from_toml(text)?)
    }
}

/// A running cluster.
pub struct Cluster {
    title: String,
    hosts: Vec<(String, Simulation)>,
    seed: u64,
    /// Packets between hosts, by when they reach the receiving host's
    /// switch port (then a sequence number): each enters its NIC at that
    /// instant, so packets from several hosts queue there in arrival order.
    wire: BTreeMap<(Time, u64), (u32, IoReq)>,
    sent: u64,
}

impl Cluster {
    /// Build every host.
    pub fn new(sc: &ClusterScenario) -> Result<Cluster, SimError> {
        Cluster::new_with_workloads(sc, |_, _, _| None)
    }

    /// Like [`Cluster::new`], but `custom(host, index, domain)` may supply
    /// the workload of domain number `index` of host number `host` instead
    /// of its `[host.domain.workload]` (for tests and experiments with
    /// workloads the registry does not have).
    pub fn new_with_workloads(
        sc: &ClusterScenario,
        mut custom: impl FnMut(usize, usize, &DomainSpec) -> Option<Box<dyn Workload>>,
    ) -> Result<Cluster, SimError> {
        let mut hosts = Vec::new();
        for (i, (name, s)) in sc.hosts.iter().enumerate() {
            let sim = Simulation::new_in_cluster(s, i as u32, sc.directory.clone(), |d, spec| {
                custom(i, d, spec)
            })?;
            hosts.push((name.clone(), sim));
        }
        let seed = sc.hosts[0].1.run.seed ^ stream_key(&sc.hosts[0].0);
        let mut c = Cluster {
            title: sc.title.clone(),
            hosts,
            seed,
            wire: BTreeMap::new(),
            sent: 0,
        };
        c.collect();
        Ok(c)
    }

    /// Put the packets the hosts sent to each other on the wire.
    fn collect(&mut self) {
        for i in 0..self.hosts.len() {
            for (at, to, r) in self.hosts[i].1.take_outbox() {
                self.wire.insert((at, self.sent), (to, r));
                self.sent += 1;
            }
        }
    }

    /// Simulate up to `until` (or the end).
    pub fn run_until(&mut self, until: Time) -> Result<Progress, SimError> {
        loop {
            let next = self
                .hosts
                .iter()
                .enumerate()
                .filter_map(|(i, (_, s))| s.next_event_time().map(|t| (t, i)))
                .min();
            let Some((t, i)) = next else {
                break; // every host has finished
            };
            // A packet reaching a port goes before a host's event at the
            // same instant.
            match self.wire.keys().next() {
                Some(&(a, _)) if a <= t && a <= until => {
                    let ((at, _), (to, r)) = self.wire.pop_first().expect("an arrival");
                    self.hosts[to as usize].1.inject_from_host(at, r);
                }
                _ if t <= until => {
                    self.hosts[i].1.step_one()?;
                    self.collect();
                }
                _ => break,
            }
        }
        Ok(self.progress())
    }

    /// Simulate to the end.
    pub fn run(&mut self) -> Result<Progress, SimError> {
        self.run_until(Time(u64::MAX))
    }

    /// Where the run is (events summed over hosts; the earliest host's time).
    pub fn progress(&self) -> Progress {
        let ps: Vec<Progress> = self.hosts.iter().map(|(_, s)| s.progress()).collect();
        Progress {
            now: ps.iter().map(|p| p.now).min().unwrap_or(Time::ZERO),
            end: ps.iter().map(|p| p.end).max().unwrap_or(Time::ZERO),
            events: ps.iter().map(|p| p.events).sum(),
            finished: ps.iter().all(|p| p.finished),
        }
    }

    /// The hosts, by name.
    pub fn hosts(&self) -> impl Iterator<Item = (&str, &Simulation)> {
        self.hosts.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// The results: each host's summary under `hosts`, and every domain
    /// (with its `host`) under `domains`.
    pub fn summary(&self, wall_s: f64) -> Json {
        let mut hosts = Vec::new();
        let mut domains = Vec::new();
        for (name, sim) in &self.hosts {
            let mut s = sim.summary(wall_s);
            // Jobs may span hosts: they are the cluster's, below.
            if let Some(o) = s.as_object_mut() {
                o.remove("jobs");
            }
            if let Some(ds) = s["domains"].as_array() {
                for d in ds {
                    let mut d = d.clone();
                    d["host"] = Json::String(name.clone());
                    domains.push(d);
                }
            }
            s["name"] = Json::String(name.clone());
            hosts.push(s);
        }
        let mut procs = Vec::new();
        for (i, (name, sim)) in self.hosts.iter().enumerate() {
            for (d, spec) in sim.scenario().domains.iter().enumerate() {
                let metrics = &hosts[i]["domains"][d]["workload"];
                let p = (
                    name.as_str(),
                    spec.name.as_str(),
                    &spec.workload.params,
                    metrics,
                );
                procs.push((spec.workload.kind.as_str(), p));
            }
        }
        let jobs = crate::workload::jobs(&procs, true);
        let first = &hosts[0];
        json!({
            "vmsched_version": env!("CARGO_PKG_VERSION"),
            "title": self.title,
            "cluster": true,
            "seed": self.seed,
            "duration_s": first["duration_s"],
            "warmup_s": first["warmup_s"],
            "measured_s": first["measured_s"],
            "events": self.progress().events,
            "wall_s": wall_s,
            "hosts": hosts,
            "domains": domains,
            "jobs": jobs,
        })
    }
}
