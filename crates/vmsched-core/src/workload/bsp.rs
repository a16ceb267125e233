//! `bsp`: one process of a bulk-synchronous parallel job (NAS SP / LU-like),
//! each process in its own domain, on one host or across a cluster.
//!
//! Every iteration the process computes for `compute_ms`, sends a message of
//! `message_bytes` to each of its `peers` (domains named `dom` on this host
//! or `host/dom` on another host of a cluster) and waits until every peer's
//! message of the same iteration has arrived and been processed; then the
//! next iteration starts. After `iterations` the process is done and its
//! domain halts.
//!
//! Guest CPU: the compute phase, plus `guest_pkt_ns` per packet of each
//! message sent (at the end of the compute item), plus the same per packet
//! of each message received, in interrupt context (ahead of the compute
//! work). The messages travel as any domain-to-domain traffic does: through
//! the driver domain's backends and bridge on one host, through both hosts'
//! driver domains and NICs across hosts.
//!
//! A peer can never be more than one iteration ahead when the peer lists
//! are symmetric (it needs this process's message to finish its own
//! iteration), but with one-way lists it can run ahead freely: arrivals are
//! counted per iteration, however far ahead.

use super::wparam as p;
use super::{latency_ms, GuestCtx, PeerRef, Rng, Workload, WorkloadInfo};
use crate::domain::{WorkItem, TAG_MASK};
use crate::error::ScenarioError;
use crate::io::{packets, Endpoint};
use crate::metrics::ResponseHistogram;
use crate::params::{Default, ParamKind, Params};
use crate::time::{secs_f64, Time, NS_PER_S};
use serde_json::{json, Map, Value as Json};
use std::collections::VecDeque;

/// At most this many iterations (their numbers travel in work-item tags).
const MAX_ITERATIONS: i64 = 100_000_000;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "bsp",
    summary: "One process of a bulk-synchronous parallel job (NAS SP/LU-like): compute, exchange with peers, wait for all.",
    params: &[
        p(
            "peers",
            "",
            ParamKind::NameList,
            Default::EmptyList,
            "The job's other processes this one exchanges with each iteration: domain names, or host/domain in a cluster.",
        ),
        p(
            "iterations",
            "",
            ParamKind::Int { min: 0, max: MAX_ITERATIONS },
            Default::Int(100),
            "Iterations of compute-then-exchange in the job.",
        ),
        p(
            "compute_ms",
            "ms",
            ParamKind::Float { min: 0.0, max: 1e9 },
            Default::Float(10.0),
            "CPU time of one iteration's compute phase on an uncontended PCPU.",
        ),
        p(
            "message_bytes",
            "bytes",
            ParamKind::Int { min: 1, max: 1 << 34 },
            Default::Int(65536),
            "Size of the message sent to each peer per iteration (LU-like: 40; SP-like: hundreds of KB).",
        ),
    ],
    metrics: &[
        "completion_s",
        "iterations_done",
        "iteration_ms",
        "waiting_s",
    ],
    check,
    io: true,
    peers,
    make: |p: &Params| {
        Box::new(Bsp {
            peers: p
                .name_list("peers")
                .iter()
                .map(|s| super::split_peer(s))
                .collect(),
            ends: Vec::new(),
            iterations: p.int("iterations") as u64,
            compute_ns: secs_f64(p.float("compute_ms") / 1000.0),
            message_bytes: p.int("message_bytes") as u64,
            iter: 0,
            sent: false,
            received: VecDeque::new(),
            done_at: None,
            iter_start: Time::ZERO,
            wait_since: None,
            wait_ns: 0,
            iteration: ResponseHistogram::default(),
        })
    },
    jobs: Some(jobs),
};

fn check(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let list = p.name_list("peers");
    for (i, s) in list.iter().enumerate() {
        if list[..i].contains(s) {
            return Err(ScenarioError::new(
                format!("{}[{i}]", crate::params::join_path(path, "peers")),
                format!("\"{s}\" is listed twice; expected each peer once"),
            ));
        }
    }
    Ok(())
}

fn peers(p: &Params) -> Vec<PeerRef> {
    p.name_list("peers")
        .iter()
        .map(|s| {
            let (h, d) = super::split_peer(s);
            ("peers", h, d)
        })
        .collect()
}

/// Work item tag of the compute phase (receptions carry their iteration).
const COMPUTE: u32 = TAG_MASK;
/// Work item tag of a reception that does not count (from a domain that is
/// not a peer, or after the job ended).
const UNCOUNTED: u32 = TAG_MASK - 1;

struct Bsp {
    peers: Vec<(Option<String>, String)>,
    /// The peers as endpoints (resolved at the start).
    ends: Vec<Endpoint>,
    iterations: u64,
    compute_ns: u64,
    message_bytes: u64,
    /// The iteration under way (0-based).
    iter: u64,
    /// This iteration's messages are sent.
    sent: bool,
    /// Messages processed per iteration, from `iter` on.
    received: VecDeque<u32>,
    done_at: Option<Time>,
    iter_start: Time,
    /// Since when the process has been waiting for its peers.
    wait_since: Option<Time>,
    wait_ns: u64,
    /// Duration of each completed iteration.
    iteration: ResponseHistogram,
}

impl Bsp {
    fn pkt_cost(&self, g: &GuestCtx) -> u64 {
        packets(self.message_bytes, g.mss()) as u64 * g.io_costs().guest_pkt_ns
    }

    fn begin_iteration(&mut self, g: &mut GuestCtx) {
        self.iter_start = g.now();
        let send = self.pkt_cost(g) * self.ends.len() as u64;
        g.push(WorkItem {
            remaining_ns: self.compute_ns + send,
            tag: COMPUTE,
        });
    }

    /// Go on while this iteration is complete: sent, and every peer's
    /// message processed.
    fn advance(&mut self, g: &mut GuestCtx) {
        let now = g.now();
        while self.sent && self.received.front().copied().unwrap_or(0) as usize >= self.ends.len() {
            if let Some(t) = self.wait_since.take() {
                self.wait_ns += now.since(t);
            }
            self.iteration.record(now.since(self.iter_start));
            self.received.pop_front();
            self.iter += 1;
            self.sent = false;
            if self.iter >= self.iterations {
                self.done_at = Some(now);
                return;
            }
            self.begin_iteration(g);
        }
        if self.sent && self.wait_since.is_none() {
            self.wait_since = Some(now);
        }
    }
}

impl Workload for Bsp {
    fn kind(&self) -> &'static str {
        "bsp"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        self.ends = self
            .peers
            .iter()
            .map(|(h, d)| {
                g.domain(h.as_deref(), d)
                    .expect("peers are checked when the scenario is loaded")
            })
            .collect();
        if self.iterations == 0 {
            self.done_at = Some(g.now());
        } else {
            self.begin_iteration(g);
        }
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if tag == UNCOUNTED {
            return;
        }
        if tag == COMPUTE {
            for i in 0..self.ends.len() {
                let to = self.ends[i];
                g.send_to(to, self.message_bytes, self.iter);
            }
            self.sent = true;
        } else {
            let k = (u64::from(tag) - self.iter) as usize;
            if self.received.len() <= k {
                self.received.resize(k + 1, 0);
            }
            self.received[k] += 1;
        }
        self.advance(g);
    }

    fn message(&mut self, g: &mut GuestCtx, _rng: &mut Rng, from: Endpoint, token: u64) {
        let counts = self.ends.contains(&from) && token >= self.iter && self.done_at.is_none();
        let cost = self.pkt_cost(g);
        g.push_urgent(WorkItem {
            remaining_ns: cost,
            tag: if counts { token as u32 } else { UNCOUNTED },
        });
    }

    // The job's metrics cover it from its start at t = 0, warm-up included:
    // a completion time is a property of the whole job.
    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "completion_s".into(),
            self.done_at
                .map_or(Json::Null, |t| (t.0 as f64 / NS_PER_S as f64).into()),
        );
        m.insert("iterations_done".into(), self.iter.into());
        m.insert("iteration_ms".into(), latency_ms(&self.iteration));
        let waiting = self.wait_ns + self.wait_since.map_or(0, |t| now.since(t));
        m.insert(
            "waiting_s".into(),
            (waiting as f64 / NS_PER_S as f64).into(),
        );
        m
    }
}

/// The bsp jobs among `procs` (each: the host it is on, its name, its
/// workload parameters and its metrics): groups of processes joined by
/// their peer lists. A job completes when its last process does.
/// `label_hosts`: name processes `host/domain` (a cluster) rather than
/// `domain`.
fn jobs(procs: &[super::JobProcess], label_hosts: bool) -> Json {
    let n = procs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, (host, _, params, _)) in procs.iter().enumerate() {
        for s in params.name_list("peers") {
            let (h, d) = super::split_peer(s);
            let h = h.as_deref().unwrap_or(host);
            if let Some(j) = procs.iter().position(|(ph, pd, _, _)| *ph == h && *pd == d) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut out = Vec::new();
    for r in 0..n {
        if root(&mut parent, r) != r {
            continue;
        }
        let members: Vec<usize> = (0..n).filter(|&i| root(&mut parent, i) == r).collect();
        let label = |i: usize| {
            if label_hosts {
                format!("{}/{}", procs[i].0, procs[i].1)
            } else {
                procs[i].1.to_string()
            }
        };
        let completion = members
            .iter()
            .map(|&i| procs[i].3["completion_s"].as_f64())
            .try_fold(0.0f64, |acc, c| c.map(|c| acc.max(c)));
        let done = members
            .iter()
            .filter_map(|&i| procs[i].3["iterations_done"].as_u64())
            .min()
            .unwrap_or(0);
        out.push(json!({
            "kind": "bsp",
            "processes": members.iter().map(|&i| label(i)).collect::<Vec<_>>(),
            "completion_s": completion,
            "iterations_done": done,
        }));
    }
    Json::Array(out)
}
