//! `tiered`: a TPC-W-like multi-tier request chain. One workload kind, two
//! roles: `role = "front"` in the application-tier domain and `role = "db"`
//! in the database domain.
//!
//! The front tier serves closed-loop browser clients, remote peers beyond
//! the NIC: each client sends a request, waits for the reply, thinks
//! (`think_ms`, exponential or fixed) and sends the next. A request belongs
//! to a class (drawn by weight from `classes`), which sets its application
//! CPU (`app_ms`) and the database queries it makes (`db_queries`, each
//! costing the database `db_ms` of CPU). The front tier splits the
//! request's application CPU into `db_queries + 1` equal parts: one before
//! the first query, one after each result. The queries of a request run one
//! after another (one database connection per request): the front tier
//! sends a query to the `db` domain (`send_to`: over the driver domain's
//! bridge on one host, through both hosts' NICs in a cluster), the database
//! processes it and sends the result back, and after the last part the
//! front tier sends the reply page to the client. The response time is from
//! the client sending the request to the last byte of the reply reaching it.
//!
//! Guest CPU per packet (`guest_pkt_ns`) is charged on both tiers for every
//! packet received and sent, inside the work item that handles it.
//!
//! The two tiers speak a small protocol through the messages' tokens: a
//! query carries the requesting client, its size in packets and the
//! database CPU it needs; a result carries the client and its own size in
//! packets (the database's `result_bytes`), as a real query's text and a
//! result's header do.

use super::wparam as p;
use super::{latency_ms, rate, GuestCtx, IoKind, PeerRef, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::error::ScenarioError;
use crate::io::{packets, Endpoint};
use crate::metrics::ResponseHistogram;
use crate::params::{join_path, Default, ParamKind, ParamSpec, Params};
use crate::time::{secs_f64, Time};
use serde_json::{json, Map, Value as Json};

/// Most clients (their index travels in 16 bits of a token).
const MAX_CLIENTS: i64 = (1 << 16) - 1;
/// Largest query: its packets travel in 8 bits of a token (255 packets at
/// the smallest MTU, 576 bytes, hold 136,680 bytes).
const MAX_QUERY_BYTES: i64 = 100_000;
/// Most database CPU per query: 40 bits of nanoseconds in a token.
const MAX_DB_MS: f64 = 1_000_000.0;

const CLASS_FIELDS: &[ParamSpec] = &[
    p(
        "name",
        "",
        ParamKind::Name,
        Default::Required,
        "The class's name in the metrics (TPC-W-NYU's r1, r2, r3).",
    ),
    p(
        "weight",
        "",
        ParamKind::Float { min: 0.0, max: 1e9 },
        Default::Float(1.0),
        "Relative frequency of the class in the request mix.",
    ),
    p(
        "app_ms",
        "ms",
        ParamKind::Float { min: 0.0, max: 1e6 },
        Default::Required,
        "Application-tier CPU per request, besides packet handling.",
    ),
    p(
        "db_queries",
        "",
        ParamKind::Int {
            min: 0,
            max: 10_000,
        },
        Default::Int(1),
        "Database queries per request, made one after another.",
    ),
    p(
        "db_ms",
        "ms",
        ParamKind::Float {
            min: 0.0,
            max: MAX_DB_MS,
        },
        Default::Float(0.0),
        "Database-tier CPU per query, besides packet handling.",
    ),
];

/// Parameters only the front tier takes.
const FRONT_ONLY: &[&str] = &[
    "db",
    "clients",
    "think_ms",
    "think",
    "classes",
    "request_bytes",
    "reply_bytes",
    "query_bytes",
];
/// Parameters only the database tier takes.
const DB_ONLY: &[&str] = &["result_bytes"];

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "tiered",
    summary: "A TPC-W-like multi-tier chain: closed-loop browser clients, an application tier querying a database tier.",
    params: &[
        p(
            "role",
            "",
            ParamKind::Choice(&["front", "db"]),
            Default::Required,
            "This domain's tier: front (application server, serves the clients) or db (database).",
        ),
        p(
            "db",
            "",
            ParamKind::Name,
            Default::Str(""),
            "Front: the database domain (dom, or host/dom in a cluster).",
        ),
        p(
            "clients",
            "",
            ParamKind::Int { min: 1, max: MAX_CLIENTS },
            Default::Int(10),
            "Front: concurrent browser clients, each with one request outstanding.",
        ),
        p(
            "think_ms",
            "ms",
            ParamKind::Float {
                min: 0.0,
                max: 3_600_000.0,
            },
            Default::Float(7000.0),
            "Front: a client's mean pause between a reply and its next request (TPC-W: 7 s).",
        ),
        p(
            "think",
            "",
            ParamKind::Choice(&["exponential", "fixed"]),
            Default::Str("exponential"),
            "Front: think times drawn from an exponential distribution (as TPC-W's) or all equal to think_ms.",
        ),
        p(
            "classes",
            "",
            ParamKind::TableList(CLASS_FIELDS),
            Default::EmptyList,
            "Front: request classes; [] means the built-in r1, r2, r3 mix (docs/workloads.md).",
        ),
        p(
            "request_bytes",
            "bytes",
            ParamKind::Int { min: 1, max: 1 << 30 },
            Default::Int(500),
            "Front: size of a client's request.",
        ),
        p(
            "reply_bytes",
            "bytes",
            ParamKind::Int { min: 1, max: 1 << 30 },
            Default::Int(10240),
            "Front: size of the reply page.",
        ),
        p(
            "query_bytes",
            "bytes",
            ParamKind::Int { min: 1, max: MAX_QUERY_BYTES },
            Default::Int(400),
            "Front: size of a query sent to the database.",
        ),
        p(
            "result_bytes",
            "bytes",
            ParamKind::Int { min: 1, max: 1 << 30 },
            Default::Int(2048),
            "Db: size of a query's result.",
        ),
    ],
    metrics: &[
        "throughput_req_s",
        "completed",
        "response_ms",
        "classes",
        "queries",
        "queries_s",
    ],
    check,
    io: true,
    peers,
    make,
    jobs: None,
};

fn check(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let front = p.str("role") == "front";
    let (others, other_role) = if front {
        (DB_ONLY, "db")
    } else {
        (FRONT_ONLY, "front")
    };
    for name in others {
        if p.is_explicit(name) {
            return Err(ScenarioError::new(
                join_path(path, name),
                format!(
                    "is a parameter of role = \"{other_role}\", not of role = \"{}\"",
                    p.str("role")
                ),
            ));
        }
    }
    if !front {
        return Ok(());
    }
    if !p.is_explicit("db") {
        return Err(ScenarioError::new(
            join_path(path, "db"),
            "is missing; expected the name of the database tier's domain (role = \"front\" needs one)",
        ));
    }
    let classes = p.table_list("classes");
    let cpath = join_path(path, "classes");
    for (i, c) in classes.iter().enumerate() {
        if classes[..i].iter().any(|o| o.str("name") == c.str("name")) {
            return Err(ScenarioError::new(
                format!("{cpath}[{i}].name"),
                format!(
                    "\"{}\" is used by an earlier class; expected unique names",
                    c.str("name")
                ),
            ));
        }
    }
    if !classes.is_empty() && classes.iter().all(|c| c.float("weight") == 0.0) {
        return Err(ScenarioError::new(
            cpath,
            "every class has weight 0; expected at least one above 0",
        ));
    }
    Ok(())
}

fn peers(p: &Params) -> Vec<PeerRef> {
    if p.str("role") != "front" {
        return Vec::new();
    }
    let (h, d) = super::split_peer(p.str("db"));
    vec![("db", h, d)]
}

/// One request class.
struct Class {
    name: String,
    weight: f64,
    app_ns: u64,
    queries: u32,
    db_ns: u64,
}

/// The built-in mix when `classes` is empty: light, medium and heavy
/// requests (the paper names r1, r2, r3 by service time but gives no
/// values; these are illustrative).
fn builtin_classes() -> Vec<Class> {
    let c = |name: &str, weight: f64, app_ms: f64, queries: u32, db_ms: f64| Class {
        name: name.into(),
        weight,
        app_ns: secs_f64(app_ms / 1000.0),
        queries,
        db_ns: secs_f64(db_ms / 1000.0),
    };
    vec![
        c("r1", 0.5, 2.0, 1, 1.0),
        c("r2", 0.35, 5.0, 2, 3.0),
        c("r3", 0.15, 10.0, 4, 6.0),
    ]
}

fn make(p: &Params) -> Box<dyn Workload> {
    if p.str("role") == "db" {
        return Box::new(Db {
            result_bytes: p.int("result_bytes") as u64,
            pending: Vec::new(),
            free: Vec::new(),
            queries: 0,
            from: Time::ZERO,
        });
    }
    let mut classes: Vec<Class> = p
        .table_list("classes")
        .iter()
        .map(|c| Class {
            name: c.str("name").to_string(),
            weight: c.float("weight"),
            app_ns: secs_f64(c.float("app_ms") / 1000.0),
            queries: c.int("db_queries") as u32,
            db_ns: secs_f64(c.float("db_ms") / 1000.0),
        })
        .collect();
    if classes.is_empty() {
        classes = builtin_classes();
    }
    let n = classes.len();
    let clients = p.int("clients") as usize;
    Box::new(Front {
        db: super::split_peer(p.str("db")),
        db_end: None,
        clients,
        think_ns: p.float("think_ms") * 1e6,
        exponential: p.str("think") == "exponential",
        total_weight: classes.iter().map(|c| c.weight).sum(),
        classes,
        request_bytes: p.int("request_bytes") as u64,
        reply_bytes: p.int("reply_bytes") as u64,
        query_bytes: p.int("query_bytes") as u64,
        reqs: vec![Req::default(); clients],
        completed: vec![0; n],
        response: (0..n).map(|_| ResponseHistogram::default()).collect(),
        from: Time::ZERO,
    })
}

/// Bits of a token that carry the client.
const CLIENT_BITS: u32 = 16;
// The limits fit the tokens' fields.
const _: () = assert!(MAX_CLIENTS < 1 << CLIENT_BITS);
const _: () = assert!(((MAX_DB_MS * 1e6) as u64) < 1 << 40);

/// A query's token: the client (16 bits), the query's packets (8 bits) and
/// the database CPU it needs (40 bits of ns).
fn query_token(client: u32, pkts: u32, db_ns: u64) -> u64 {
    debug_assert!(u64::from(client) < 1 << CLIENT_BITS && pkts < 256 && db_ns < 1 << 40);
    (db_ns << 24) | (u64::from(pkts) << CLIENT_BITS) | u64::from(client)
}

/// A result's token: the client (16 bits) and the result's packets (32 bits).
fn result_token(client: u32, pkts: u32) -> u64 {
    (u64::from(pkts) << CLIENT_BITS) | u64::from(client)
}

fn token_client(token: u64) -> u32 {
    (token & ((1 << CLIENT_BITS) - 1)) as u32
}

/// A client's request in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Req {
    class: u32,
    sent_at: Time,
    /// Results received so far.
    results: u32,
}

struct Front {
    db: (Option<String>, String),
    db_end: Option<Endpoint>,
    clients: usize,
    think_ns: f64,
    exponential: bool,
    classes: Vec<Class>,
    total_weight: f64,
    request_bytes: u64,
    reply_bytes: u64,
    query_bytes: u64,
    reqs: Vec<Req>,
    /// Per class: completed requests and their response times.
    completed: Vec<u64>,
    response: Vec<ResponseHistogram>,
    from: Time,
}

impl Front {
    fn think(&self, g: &mut GuestCtx, rng: &mut Rng, client: u32) {
        let t = if self.exponential {
            rng.exponential(self.think_ns)
        } else {
            self.think_ns
        };
        let at = g.now().after(t.round() as u64);
        g.arm_timer(at, client);
    }

    fn pick_class(&self, rng: &mut Rng) -> u32 {
        if self.classes.len() == 1 {
            return 0;
        }
        let mut x = rng.uniform() * self.total_weight;
        for (i, c) in self.classes.iter().enumerate() {
            if c.weight > 0.0 && x < c.weight {
                return i as u32;
            }
            x -= c.weight;
        }
        // Rounding at the top end: the last class with a weight.
        self.classes
            .iter()
            .rposition(|c| c.weight > 0.0)
            .unwrap_or(0) as u32
    }

    /// Part `k` (0..=queries) of the request's application CPU.
    fn app_part(c: &Class, k: u32) -> u64 {
        let parts = u128::from(c.queries) + 1;
        let total = u128::from(c.app_ns);
        let k = u128::from(k);
        (total * (k + 1) / parts - total * k / parts) as u64
    }

    /// Queue the work that handles `rx_pkts` packets received for `client`,
    /// runs the next part of its application CPU and sends what follows.
    fn step(&self, g: &mut GuestCtx, client: u32, rx_pkts: u32) {
        let r = self.reqs[client as usize];
        let c = &self.classes[r.class as usize];
        let tx_bytes = if r.results < c.queries {
            self.query_bytes
        } else {
            self.reply_bytes
        };
        let pkts = u64::from(rx_pkts) + u64::from(packets(tx_bytes, g.mss()));
        g.push(WorkItem {
            remaining_ns: pkts * g.io_costs().guest_pkt_ns + Self::app_part(c, r.results),
            tag: client,
        });
    }
}

impl Workload for Front {
    fn kind(&self) -> &'static str {
        "tiered"
    }

    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        let (h, d) = &self.db;
        self.db_end = Some(
            g.domain(h.as_deref(), d)
                .expect("peers are checked when the scenario is loaded"),
        );
        for c in 0..self.clients as u32 {
            self.think(g, rng, c);
        }
    }

    /// A client's think time is over: it sends its next request.
    fn timer(&mut self, g: &mut GuestCtx, rng: &mut Rng, client: u32) {
        let class = self.pick_class(rng);
        self.reqs[client as usize] = Req {
            class,
            sent_at: g.now(),
            results: 0,
        };
        g.peer_send(self.request_bytes, u64::from(client));
    }

    /// A request reached the front tier.
    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, token: u64) {
        debug_assert_eq!(kind, IoKind::NetRx);
        let pkts = packets(self.request_bytes, g.mss());
        self.step(g, token as u32, pkts);
    }

    /// A result came back from the database.
    fn message(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _from: Endpoint, token: u64) {
        let client = token_client(token);
        let pkts = (token >> CLIENT_BITS) as u32;
        self.reqs[client as usize].results += 1;
        self.step(g, client, pkts);
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, client: u32) {
        let r = self.reqs[client as usize];
        let c = &self.classes[r.class as usize];
        if r.results < c.queries {
            let to = self.db_end.expect("resolved at the start");
            let pkts = packets(self.query_bytes, g.mss());
            g.send_to(to, self.query_bytes, query_token(client, pkts, c.db_ns));
        } else {
            g.net_send(self.reply_bytes, u64::from(client));
        }
    }

    /// The reply reached its client.
    fn peer_recv(&mut self, g: &mut GuestCtx, rng: &mut Rng, token: u64) {
        let client = token as u32;
        let r = self.reqs[client as usize];
        if r.sent_at >= self.from {
            self.completed[r.class as usize] += 1;
            self.response[r.class as usize].record(g.now().since(r.sent_at));
        }
        self.think(g, rng, client);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.completed.iter_mut().for_each(|c| *c = 0);
        self.response.iter_mut().for_each(|h| h.clear());
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        let total: u64 = self.completed.iter().sum();
        let mut all = ResponseHistogram::default();
        let mut classes = Map::new();
        for (i, c) in self.classes.iter().enumerate() {
            all.merge(&self.response[i]);
            classes.insert(
                c.name.clone(),
                json!({
                    "completed": self.completed[i],
                    "throughput_req_s": rate(self.completed[i], self.from, now),
                    "response_ms": latency_ms(&self.response[i]),
                }),
            );
        }
        m.insert(
            "throughput_req_s".into(),
            rate(total, self.from, now).into(),
        );
        m.insert("completed".into(), total.into());
        m.insert("response_ms".into(), latency_ms(&all));
        m.insert("classes".into(), Json::Object(classes));
        m
    }
}

struct Db {
    result_bytes: u64,
    /// Queries being processed: who asked, and the token to answer with.
    pending: Vec<(Endpoint, u64)>,
    free: Vec<u32>,
    queries: u64,
    from: Time,
}

impl Workload for Db {
    fn kind(&self) -> &'static str {
        "tiered"
    }

    fn start(&mut self, _g: &mut GuestCtx, _rng: &mut Rng) {}

    /// A query arrived.
    fn message(&mut self, g: &mut GuestCtx, _rng: &mut Rng, from: Endpoint, token: u64) {
        let db_ns = token >> 24;
        let query_pkts = (token >> CLIENT_BITS) & 0xff;
        let out = packets(self.result_bytes, g.mss());
        let reply = result_token(token_client(token), out);
        let slot = match self.free.pop() {
            Some(s) => {
                self.pending[s as usize] = (from, reply);
                s
            }
            None => {
                self.pending.push((from, reply));
                (self.pending.len() - 1) as u32
            }
        };
        let pkts = query_pkts + u64::from(out);
        g.push(WorkItem {
            remaining_ns: pkts * g.io_costs().guest_pkt_ns + db_ns,
            tag: slot,
        });
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, slot: u32) {
        let (to, token) = self.pending[slot as usize];
        self.free.push(slot);
        if g.now() >= self.from {
            self.queries += 1;
        }
        g.send_to(to, self.result_bytes, token);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.queries = 0;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("queries".into(), self.queries.into());
        m.insert(
            "queries_s".into(),
            rate(self.queries, self.from, now).into(),
        );
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        let pkts = packets(MAX_QUERY_BYTES as u64, 576);
        assert!(pkts < 256, "{pkts} packets");
        let t = query_token(MAX_CLIENTS as u32, pkts, secs_f64(MAX_DB_MS / 1000.0));
        assert_eq!(token_client(t), MAX_CLIENTS as u32);
        assert_eq!((t >> CLIENT_BITS) & 0xff, u64::from(pkts));
        assert_eq!(t >> 24, 1_000_000_000_000);
        let r = result_token(7, u32::MAX);
        assert_eq!((token_client(r), (r >> CLIENT_BITS) as u32), (7, u32::MAX));
    }

    #[test]
    fn application_cpu_is_split_exactly() {
        let c = Class {
            name: "x".into(),
            weight: 1.0,
            app_ns: 1_000_000_007,
            queries: 3,
            db_ns: 0,
        };
        let parts: Vec<u64> = (0..=3).map(|k| Front::app_part(&c, k)).collect();
        assert_eq!(parts.iter().sum::<u64>(), c.app_ns);
        assert!(parts.iter().all(|&p| p.abs_diff(c.app_ns / 4) <= 1));
    }
}
