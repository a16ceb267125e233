//! `web-server`: a web server serving fixed-size files to httperf-style clients.
//!
//! Clients are remote peers beyond the NIC. Each request is one short
//! connection (HTTP/1.0, httperf's one call per connection). Its packets:
//! SYN, the handshake ACK, the GET, and the client's delayed ACKs of the
//! reply (one per two data packets) inbound; SYN-ACK, the file's data
//! packets and FIN outbound. The guest's CPU is `guest_pkt_ns` per packet
//! plus the server's per-request work. Two structures
//! (`exchange`):
//!
//! - `grouped` (the original model): the inbound packets arrive together,
//!   the guest processes them and the request in one item, then sends the
//!   whole reply.
//! - `tcp`: the same packets in TCP's rounds, as Linux 2.6.16 exchanges them
//!   for a short connection: SYN → SYN-ACK; ACK + GET → the first window
//!   (`initial_window` segments); the client's delayed ACKs of each window
//!   → the next window, the congestion window growing by one segment per
//!   ACK (slow start); the last window carries FIN; the client's last ACKs
//!   carry its FIN and close the connection. Each round is a separate
//!   message through the NIC and the driver domain, and the guest has
//!   nothing to do for the connection between rounds: Dom0's executions
//!   per request come out of the simulation. The handshake, the ACK rounds
//!   and the close run in the guest's interrupt context (the kernel's TCP);
//!   the GET round is the server process's work.
//!
//! The reply is complete when its last data packet reaches the client.
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
use crate::metrics::ResponseHistogram;
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
            "exchange",
            "",
            ParamKind::Choice(&["grouped", "tcp"]),
            Default::Str("grouped"),
            "grouped: a request's packets in one inbound and one outbound message; tcp: in TCP's rounds (handshake, request, data windows under slow start with delayed ACKs, close).",
        ),
        p(
            "initial_window",
            "segments",
            ParamKind::Int { min: 1, max: 1000 },
            Default::Int(3),
            "exchange = tcp: the server's initial congestion window (Linux 2.6.16: 3 segments for an MSS of 1096..1460 bytes, RFC 3390).",
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
        "connect_ms",
        "reply_response_ms",
        "reply_transfer_ms",
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
            tcp: p.str("exchange") == "tcp",
            initial_window: p.int("initial_window") as u32,
            connect: ResponseHistogram::default(),
            reply_response: ResponseHistogram::default(),
            reply_transfer: ResponseHistogram::default(),
            slots: Vec::new(),
            free: Vec::new(),
            held: 0,
            sent: 0,
            completed: 0,
            errors: 0,
            timeouts: 0,
            response: ResponseHistogram::default(),
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

/// Where a `tcp` connection is: what is in flight or being processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The client's SYN, on its way or being answered.
    Syn,
    /// The SYN-ACK, on its way to the client.
    SynAck,
    /// The client's ACK + GET, on its way or being served.
    Get,
    /// A data window, on its way to the client.
    Data,
    /// The client's ACKs of a window, on their way or being processed
    /// (the next window leaves when they are).
    Acks,
    /// The client's last ACKs and FIN, on their way or being processed.
    Fin,
}

/// A request held by the server (or on its way).
#[derive(Clone, Copy, Debug)]
struct Req {
    sent_at: Time,
    /// Closed loop: the client that sent it.
    client: u32,
    /// `tcp`: the connection's state.
    phase: Phase,
    /// `tcp`: data segments sent so far, and in the window in flight.
    sent_segs: u32,
    window_segs: u32,
    /// `tcp`: the congestion window (segments).
    cwnd: u32,
    /// `tcp`: when the GET left the client, and when the first data
    /// reached it.
    get_at: Time,
    first_data_at: Time,
    /// The server accepted it (it counts against the backlog).
    held: bool,
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
    tcp: bool,
    initial_window: u32,
    /// `tcp`: connection set-up (SYN sent to SYN-ACK received), response
    /// (GET sent to first data received) and transfer (first to last data)
    /// times, as httperf reports them.
    connect: ResponseHistogram,
    reply_response: ResponseHistogram,
    reply_transfer: ResponseHistogram,
    slots: Vec<Option<Req>>,
    free: Vec<u32>,
    /// Requests the server holds (arrived, reply not yet sent; `tcp`:
    /// connection not yet closed).
    held: usize,
    sent: u64,
    completed: u64,
    errors: u64,
    timeouts: u64,
    response: ResponseHistogram,
    from: Time,
}

impl WebServer {
    fn data_pkts(&self, mss: u64) -> u32 {
        packets(self.file_bytes, mss)
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
        let now = g.now();
        self.slots[slot as usize] = Some(Req {
            sent_at: now,
            client,
            phase: Phase::Syn,
            sent_segs: 0,
            window_segs: 0,
            cwnd: self.initial_window,
            get_at: now,
            first_data_at: now,
            held: false,
        });
        self.sent += 1;
        if self.tcp {
            g.peer_send_packets(0, 1, slot as u64);
        } else {
            // SYN, handshake ACK, GET, and the client's ACKs of the reply.
            let rx_pkts = 3 + self.data_pkts(g.mss()).div_ceil(2);
            g.peer_send_packets(300, rx_pkts, slot as u64);
        }
    }

    /// The connection of `slot` is over: forget it.
    fn free_slot(&mut self, slot: u32) -> Req {
        let r = self.slots[slot as usize].take().expect("live request");
        self.free.push(slot);
        r
    }

    /// Closed loop: the client of `r` thinks, then sends its next request.
    fn think(&self, g: &mut GuestCtx, r: &Req) {
        if self.clients > 0 {
            let at = g.now().after(self.think_ns);
            g.arm_timer(at, r.client);
        }
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

    /// The reply of `r` is complete at the client now: count it.
    fn reply_done(&mut self, now: Time, r: &Req) {
        let rt = now.since(r.sent_at);
        if r.sent_at < self.from {
            return; // sent during warm-up
        }
        if rt > self.timeout_ns {
            self.timeouts += 1;
        } else {
            self.completed += 1;
            self.response.record(rt);
            if self.tcp {
                self.reply_transfer.record(now.since(r.first_data_at));
            }
        }
    }

    fn req(&mut self, slot: u32) -> &mut Req {
        self.slots[slot as usize].as_mut().expect("live request")
    }

    /// Data segments of the next window of `slot`'s connection.
    fn next_window(&self, slot: u32, mss: u64) -> u32 {
        let r = self.slots[slot as usize].as_ref().expect("live request");
        r.cwnd.min(self.data_pkts(mss) - r.sent_segs)
    }

    /// The client's ACKs of the window just received: one per two data
    /// segments over the reply so far (delayed ACKs), so that the reply's
    /// ACKs total ⌈data / 2⌉ as in `grouped`.
    fn acks_of_window(r: &Req) -> u32 {
        r.sent_segs.div_ceil(2) - (r.sent_segs - r.window_segs).div_ceil(2)
    }

    /// `tcp`: the server sends `slot`'s next window (the last one with FIN).
    fn send_window(&mut self, g: &mut GuestCtx, slot: u32) {
        let mss = g.mss();
        let data = self.data_pkts(mss);
        let segs = self.next_window(slot, mss);
        let r = self.req(slot);
        let start = r.sent_segs as u64 * mss;
        r.sent_segs += segs;
        r.window_segs = segs;
        r.phase = Phase::Data;
        let last = r.sent_segs == data;
        let bytes = (r.sent_segs as u64 * mss).min(self.file_bytes) - start;
        g.net_send_packets(bytes, segs + u32::from(last), slot as u64);
    }

    /// `tcp`: the guest received a round of `slot`'s connection.
    fn tcp_round_in(&mut self, g: &mut GuestCtx, slot: u32) {
        let mss = g.mss();
        let r = *self.slots[slot as usize].as_ref().expect("live request");
        match r.phase {
            Phase::Syn => {
                if self.held >= self.backlog {
                    // Refused: the client sees a reset.
                    self.errors += 1;
                    let r = self.free_slot(slot);
                    self.think(g, &r);
                    return;
                }
                self.held += 1;
                self.req(slot).held = true;
                // The kernel answers the SYN: 1 packet in, 1 out.
                let cpu = g.pkt_cpu_ns(2);
                g.push_urgent(WorkItem {
                    remaining_ns: cpu,
                    tag: slot,
                });
            }
            Phase::Get => {
                // The server process accepts, reads the GET and writes the
                // reply; the first window leaves from its write.
                let w = self.next_window(slot, mss) as u64;
                let fin = u64::from(r.sent_segs as u64 + w == self.data_pkts(mss) as u64);
                let cpu = g.pkt_cpu_ns(2 + w + fin);
                let work = self.request_work(g);
                g.push(WorkItem {
                    remaining_ns: cpu + work,
                    tag: slot,
                });
            }
            Phase::Acks => {
                // The ACKs open the window: the kernel sends the next one.
                let w = self.next_window(slot, mss) as u64;
                let fin = u64::from(r.sent_segs as u64 + w == self.data_pkts(mss) as u64);
                let acks = Self::acks_of_window(&r) as u64;
                let cpu = g.pkt_cpu_ns(acks + w + fin);
                g.push_urgent(WorkItem {
                    remaining_ns: cpu,
                    tag: slot,
                });
            }
            Phase::Fin => {
                let acks = Self::acks_of_window(&r).max(1) as u64;
                let cpu = g.pkt_cpu_ns(acks);
                g.push_urgent(WorkItem {
                    remaining_ns: cpu,
                    tag: slot,
                });
            }
            Phase::SynAck | Phase::Data => unreachable!("the server is not waiting for the client"),
        }
    }

    /// `tcp`: the guest finished processing a round of `slot`'s connection.
    fn tcp_round_done(&mut self, g: &mut GuestCtx, slot: u32) {
        let r = *self.slots[slot as usize].as_ref().expect("live request");
        match r.phase {
            Phase::Syn => {
                self.req(slot).phase = Phase::SynAck;
                g.net_send_packets(0, 1, slot as u64);
            }
            Phase::Get | Phase::Acks => {
                // Slow start: the window grows by one segment per ACK.
                if r.phase == Phase::Acks {
                    self.req(slot).cwnd += Self::acks_of_window(&r);
                }
                self.send_window(g, slot);
            }
            Phase::Fin => {
                self.held -= 1;
                self.free_slot(slot);
            }
            Phase::SynAck | Phase::Data => unreachable!("no work while the client has the turn"),
        }
    }

    /// `tcp`: a message of `slot`'s connection reached the client.
    fn tcp_client_recv(&mut self, g: &mut GuestCtx, slot: u32) {
        let now = g.now();
        let data = self.data_pkts(g.mss());
        let r = *self.slots[slot as usize].as_ref().expect("live request");
        match r.phase {
            Phase::SynAck => {
                if r.sent_at >= self.from {
                    self.connect.record(now.since(r.sent_at));
                }
                let r = self.req(slot);
                r.phase = Phase::Get;
                r.get_at = now;
                g.peer_send_packets(300, 2, slot as u64);
            }
            Phase::Data => {
                if r.sent_segs == r.window_segs {
                    self.req(slot).first_data_at = now;
                    if r.sent_at >= self.from {
                        self.reply_response.record(now.since(r.get_at));
                    }
                }
                let acks = Self::acks_of_window(&r);
                if r.sent_segs == data {
                    let r = *self.req(slot);
                    self.reply_done(now, &r);
                    self.think(g, &r);
                    // Its last ACKs carry the client's FIN (alone if the
                    // last window needs no ACK of its own).
                    self.req(slot).phase = Phase::Fin;
                    g.peer_send_packets(0, acks.max(1), slot as u64);
                } else {
                    self.req(slot).phase = Phase::Acks;
                    g.peer_send_packets(0, acks, slot as u64);
                }
            }
            _ => unreachable!("the client is not waiting for the server"),
        }
    }

    fn request_work(&self, g: &mut GuestCtx) -> u64 {
        let mean = if self.request_cpu_ns > 0 {
            self.request_cpu_ns
        } else {
            g.io_costs().web_request_ns
        };
        g.request_cpu_ns(mean)
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
        if self.tcp {
            self.tcp_round_in(g, slot);
            return;
        }
        if self.held >= self.backlog {
            // Refused: the client sees a reset.
            self.errors += 1;
            let r = self.free_slot(slot);
            self.think(g, &r);
            return;
        }
        self.held += 1;
        let data = self.data_pkts(g.mss()) as u64;
        let pkts = 3 + data.div_ceil(2) + data + 2;
        let cpu = g.pkt_cpu_ns(pkts);
        let work = self.request_work(g);
        g.push(WorkItem {
            remaining_ns: cpu + work,
            tag: slot,
        });
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if self.tcp {
            self.tcp_round_done(g, tag);
            return;
        }
        self.held -= 1;
        let pkts = self.data_pkts(g.mss()) + 2;
        g.net_send_packets(self.file_bytes, pkts, tag as u64);
    }

    fn peer_recv(&mut self, g: &mut GuestCtx, _rng: &mut Rng, token: u64) {
        if self.tcp {
            self.tcp_client_recv(g, token as u32);
            return;
        }
        let r = self.free_slot(token as u32);
        self.think(g, &r);
        self.reply_done(g.now(), &r);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.sent = 0;
        self.completed = 0;
        self.errors = 0;
        self.timeouts = 0;
        self.response.clear();
        self.connect.clear();
        self.reply_response.clear();
        self.reply_transfer.clear();
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
        if self.tcp {
            m.insert("connect_ms".into(), latency_ms(&self.connect));
            m.insert("reply_response_ms".into(), latency_ms(&self.reply_response));
            m.insert("reply_transfer_ms".into(), latency_ms(&self.reply_transfer));
        }
        m
    }
}
