//! `oltp`: a sysbench-OLTP-like database server: `threads` client threads,
//! each running transactions back to back.
//!
//! A transaction is `queries` queries, each taking an equal share of the
//! transaction's CPU; a query misses the buffer pool with probability
//! `1 − buffer_pool / table size` and then waits for one random 16 KiB page
//! read; the transaction ends with a commit, one sequential 16 KiB write to
//! the log. The table's size is `rows × row_bytes`.

use super::wparam as p;
use super::{latency_ms, rate, GuestCtx, IoKind, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::metrics::ResponseHistogram;
use crate::params::{Default, ParamKind, Params};
use crate::time::Time;
use serde_json::{Map, Value as Json};

const PAGE: u64 = 16 * 1024;
/// The log lives past the table's pages on the disk.
const LOG_BASE: u64 = 1 << 50;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "oltp",
    summary: "A sysbench-OLTP-like database: client threads running transactions of CPU, page reads and a log commit.",
    params: &[
        p("threads", "", ParamKind::Int { min: 1, max: 4096 }, Default::Int(4), "Client threads (sysbench --num-threads)."),
        p("rows", "", ParamKind::Int { min: 1, max: 1 << 40 }, Default::Int(1_000_000), "Rows in the test table (sysbench --oltp-table-size)."),
        p("row_bytes", "bytes", ParamKind::Int { min: 1, max: 1 << 20 }, Default::Int(250), "Bytes per row, indexes included."),
        p("buffer_pool_mb", "MiB", ParamKind::Float { min: 0.0, max: 1_048_576.0 }, Default::Float(1024.0), "Database page cache; queries on pages outside it read from disk."),
        p("queries", "", ParamKind::Int { min: 1, max: 10_000 }, Default::Int(14), "Queries per transaction (sysbench OLTP: 10 point selects and 4 ranges)."),
        p("txn_cpu_us", "µs", ParamKind::Float { min: 0.0, max: 1e9 }, Default::Float(0.0), "Database CPU per transaction; 0 takes the platform profile's oltp_txn_ns."),
    ],
    metrics: &["transactions_s", "transactions", "disk_reads", "txn_ms"],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let table = p.int("rows") as u64 * p.int("row_bytes") as u64;
        let pool = (p.float("buffer_pool_mb") * 1024.0 * 1024.0) as u64;
        let miss = if table == 0 { 0.0 } else { (1.0 - pool as f64 / table as f64).max(0.0) };
        let threads = p.int("threads") as usize;
        Box::new(Oltp {
            threads,
            pages: table.div_ceil(PAGE).max(1),
            miss,
            queries: p.int("queries") as u32,
            txn_cpu_ns: (p.float("txn_cpu_us") * 1e3).round() as u64,
            state: vec![Thread::default(); threads],
            log_pos: 0,
            txns: 0,
            reads: 0,
            latency: ResponseHistogram::default(),
            from: Time::ZERO,
        })
    },
};

#[derive(Clone, Copy, Debug, Default)]
struct Thread {
    /// Queries done in the current transaction.
    query: u32,
    started: Time,
}

struct Oltp {
    threads: usize,
    pages: u64,
    miss: f64,
    queries: u32,
    txn_cpu_ns: u64,
    state: Vec<Thread>,
    log_pos: u64,
    txns: u64,
    reads: u64,
    latency: ResponseHistogram,
    from: Time,
}

impl Oltp {
    /// One query's CPU: an equal share of the transaction's, varying with
    /// the profile's `request_cpu_cv`.
    fn query_cpu(&self, g: &mut GuestCtx) -> u64 {
        let txn = if self.txn_cpu_ns > 0 {
            self.txn_cpu_ns
        } else {
            g.io_costs().oltp_txn_ns
        };
        g.request_cpu_ns((txn / self.queries as u64).max(1)).max(1)
    }

    fn run_query(&mut self, g: &mut GuestCtx, t: usize) {
        let cpu = self.query_cpu(g);
        g.push(WorkItem {
            remaining_ns: cpu,
            tag: t as u32,
        });
    }

    fn begin(&mut self, g: &mut GuestCtx, t: usize) {
        self.state[t] = Thread {
            query: 0,
            started: g.now(),
        };
        self.run_query(g, t);
    }
}

impl Workload for Oltp {
    fn kind(&self) -> &'static str {
        "oltp"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        for t in 0..self.threads {
            self.begin(g, t);
        }
    }

    fn work_done(&mut self, g: &mut GuestCtx, rng: &mut Rng, _vcpu: u32, tag: u32) {
        let t = tag as usize;
        self.state[t].query += 1;
        let token = t as u64;
        if self.miss > 0.0 && rng.uniform() < self.miss {
            self.reads += 1;
            let page = rng.below(self.pages);
            g.disk_io(false, page * PAGE, PAGE, token);
        } else if self.state[t].query >= self.queries {
            let off = LOG_BASE + self.log_pos;
            self.log_pos += PAGE;
            g.disk_io(true, off, PAGE, token);
        } else {
            self.run_query(g, t);
        }
    }

    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, token: u64) {
        let t = token as usize;
        match kind {
            IoKind::DiskWrite => {
                // Committed.
                let st = self.state[t];
                if st.started >= self.from {
                    self.txns += 1;
                    self.latency.record(g.now().since(st.started));
                }
                self.begin(g, t);
            }
            _ => {
                if self.state[t].query >= self.queries {
                    let off = LOG_BASE + self.log_pos;
                    self.log_pos += PAGE;
                    g.disk_io(true, off, PAGE, token);
                } else {
                    let cpu = self.query_cpu(g) + g.disk_cpu_ns(1);
                    g.push(WorkItem {
                        remaining_ns: cpu,
                        tag: t as u32,
                    });
                }
            }
        }
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.txns = 0;
        self.reads = 0;
        self.latency.clear();
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "transactions_s".into(),
            rate(self.txns, self.from, now).into(),
        );
        m.insert("transactions".into(), self.txns.into());
        m.insert("disk_reads".into(), self.reads.into());
        m.insert("txn_ms".into(), latency_ms(&self.latency));
        m
    }
}
