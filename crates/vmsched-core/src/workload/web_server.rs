//! `web-server`: a web server serving fixed-size files to httperf-style clients.
//!
//! Clients are remote peers beyond the NIC. Each request is one short
//! connection (as httperf opens by default): the request's packets (SYN,
//! the handshake ACK, the GET, and the client's delayed ACKs of the reply,
//! one per two data packets) arrive together; the guest processes them and
//! the request (CPU: packets × `guest_pkt_ns` plus the server's per-request
//! work), then sends the reply: the file's data packets plus SYN-ACK and
//! FIN. The reply is complete when its last packet reaches the client.
//!
//! Open loop (`rate` > 0): requests arrive at fixed intervals (httperf's
//! `--rate`) or as a Poisson process. Closed loop (`clients` > 0): each
//! client sends its next request `think_ms` after its previous reply.
//! Requests beyond the server's `backlog` are refused (errors); replies
//! later than `timeout_ms` count as timeouts, not as throughput.

use super::wparam as p;
use super::{latency_ms, rate, GuestCtx, IoKind, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::error::ScenarioError;
use crate::io::packets;
use crate::metrics::LatencyHistogram;
use crate::params::{Default, ParamKind, Params};
use crate::time::Time;
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "web-server",
    summary: "A web server under httperf-style clients: fixed-size files, open or closed loop.",
    params: &[
        p(
            "rate",
            "req/s",
            ParamKind::Float { min: 0.0, max: 10_000_000.0 },
            Default::Float(0.0),
            "Offered request rate (open loop, httperf --rate); 0 for a closed loop.",
        ),
        p(
            "clients",
            "",
            ParamKind::Int { min: 0, max: 1_000_000 },
            Default::Int(0),
            "Closed-loop clients, each with one request outstanding; 0 for an open loop.",
        ),
        p(
            "arrivals",
            "",
            ParamKind::Choice(&["fixed", "poisson"]),
            Default::Str("fixed"),
            "Open-loop inter-arrival times: fixed (httperf's default) or exponential.",
        ),
        p(
            "file_kb",
            "KiB",
            ParamKind::Float { min: 0.001, max: 1_048_576.0 },
            Default::Float(10.0),
            "Size of the file each request fetches.",
        ),
        p(
            "think_ms",
            "ms",
            ParamKind::Float { min: 0.0, max: 3_600_000.0 },
            Default::Float(0.0),
            "Closed loop: a client's pause between a reply and its next request.",
        ),
        p(
            "timeout_ms",
            "ms",
            ParamKind::Float { min: 0.001, max: 3_600_000.0 },
            Default::Float(5000.0),
            "A reply later than this counts as a timeout, not as throughput (httperf --timeout).",
        ),
        p(
            "backlog",
            "",
            ParamKind::Int { min: 1, max: 1_000_000 },
            Default::Int(512),
            "Requests the server holds (accepted, not yet replied); beyond it new ones are refused.",
        ),
        p(
            "request_cpu_us",
            "µs",
            ParamKind::Float { min: 0.0, max: 10_000_000.0 },
            Default::Float(0.0),
            "Server CPU per request besides packet handling; 0 takes the platform profile's web_request_ns.",
        ),
    ],
    metrics: &[
        "throughput_req_s",
        "offered_req_s",
        "completed",
        "errors",
        "timeouts",
        "response_ms",
    ],
    check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        Box::new(WebServer {
            rate: p.float("rate"),
            clients: p.int("clients") as u32,
            poisson: p.str("arrivals") == "poisson",
            file_bytes: (p.float("file_kb") * 1024.0).round().max(1.0) as u64,
            think_ns: (p.float("think_ms") * 1e6).round() as u64,
            timeout_ns: (p.float("timeout_ms") * 1e6).round() as u64,
            backlog: p.int("backlog") as usize,
            request_cpu_ns: (p.float("request_cpu_us") * 1e3).round() as u64,
            slots: Vec::new(),
            free: Vec::new(),
            held: 0,
            sent: 0,
            completed: 0,
            errors: 0,
            timeouts: 0,
            response: LatencyHistogram::default(),
            from: Time::ZERO,
        })
    },
    jobs: None,
};

fn check(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let (r, c) = (p.float("rate"), p.int("clients"));
    if (r > 0.0) == (c > 0) {
        return Err(ScenarioError::new(
            crate::params::join_path(path, if r > 0.0 { "clients" } else { "rate" }),
            format!(
                "rate = {r} and clients = {c}; expected exactly one of them above 0 \
                 (rate for an open loop, clients for a closed loop)"
            ),
        ));
    }
    Ok(())
}

/// A request held by the server (or on its way).
#[derive(Clone, Copy, Debug)]
struct Req {
    sent_at: Time,
    /// Closed loop: the client that sent it.
    client: u32,
}

/// Timer tokens.
const ARRIVAL: u32 = u32::MAX;

struct WebServer {
    rate: f64,
    clients: u32,
    poisson: bool,
    file_bytes: u64,
    think_ns: u64,
    timeout_ns: u64,
    backlog: usize,
    request_cpu_ns: u64,
    slots: Vec<Option<Req>>,
    free: Vec<u32>,
    /// Requests the server holds (arrived, reply not yet sent).
    held: usize,
    sent: u64,
    completed: u64,
    errors: u64,
    timeouts: u64,
    response: LatencyHistogram,
    from: Time,
}

impl WebServer {
    fn data_pkts(&self, mtu: u32) -> u32 {
        packets(self.file_bytes, mtu)
    }

    /// A client sends a request now.
    fn send_request(&mut self, g: &mut GuestCtx, client: u32) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[slot as usize] = Some(Req {
            sent_at: g.now(),
            client,
        });
        self.sent += 1;
        // SYN, handshake ACK, GET, and the client's ACKs of the reply.
        let rx_pkts = 3 + self.data_pkts(g.mtu()).div_ceil(2);
        g.peer_send_packets(300, rx_pkts, slot as u64);
    }

    fn release(&mut self, g: &mut GuestCtx, slot: u32) -> Req {
        let r = self.slots[slot as usize].take().expect("live request");
        self.free.push(slot);
        if self.clients > 0 {
            let at = g.now().after(self.think_ns);
            g.arm_timer(at, r.client);
        }
        r
    }

    fn next_arrival(&self, g: &GuestCtx, rng: &mut Rng) -> Time {
        let mean = 1e9 / self.rate;
        let dt = if self.poisson {
            rng.exponential(mean)
        } else {
            mean
        };
        g.now().after(dt.round().max(1.0) as u64)
    }
}

impl Workload for WebServer {
    fn kind(&self) -> &'static str {
        "web-server"
    }

    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        if self.clients > 0 {
            for c in 0..self.clients {
                self.send_request(g, c);
            }
        } else {
            let at = self.next_arrival(g, rng);
            g.arm_timer(at, ARRIVAL);
        }
    }

    fn timer(&mut self, g: &mut GuestCtx, rng: &mut Rng, token: u32) {
        if token == ARRIVAL {
            self.send_request(g, 0);
            let at = self.next_arrival(g, rng);
            g.arm_timer(at, ARRIVAL);
        } else {
            self.send_request(g, token);
        }
    }

    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, token: u64) {
        debug_assert_eq!(kind, IoKind::NetRx);
        let slot = token as u32;
        if self.held >= self.backlog {
            // Refused: the client sees a reset.
            self.errors += 1;
            self.release(g, slot);
            return;
        }
        self.held += 1;
        let c = g.io_costs();
        let data = self.data_pkts(g.mtu()) as u64;
        let pkts = 3 + data.div_ceil(2) + data + 2;
        let work = if self.request_cpu_ns > 0 {
            self.request_cpu_ns
        } else {
            c.web_request_ns
        };
        g.push(WorkItem {
            remaining_ns: pkts * c.guest_pkt_ns + work,
            tag: slot,
        });
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        self.held -= 1;
        let pkts = self.data_pkts(g.mtu()) + 2;
        g.net_send_packets(self.file_bytes, pkts, tag as u64);
    }

    fn peer_recv(&mut self, g: &mut GuestCtx, _rng: &mut Rng, token: u64) {
        let r = self.release(g, token as u32);
        let rt = g.now().since(r.sent_at);
        if r.sent_at < self.from {
            return; // sent during warm-up
        }
        if rt > self.timeout_ns {
            self.timeouts += 1;
        } else {
            self.completed += 1;
            self.response.record(rt);
        }
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.sent = 0;
        self.completed = 0;
        self.errors = 0;
        self.timeouts = 0;
        self.response.clear();
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "throughput_req_s".into(),
            rate(self.completed, self.from, now).into(),
        );
        m.insert(
            "offered_req_s".into(),
            rate(self.sent, self.from, now).into(),
        );
        m.insert("completed".into(), self.completed.into());
        m.insert("errors".into(), self.errors.into());
        m.insert("timeouts".into(), self.timeouts.into());
        m.insert("response_ms".into(), latency_ms(&self.response));
        m
    }
}
