//! Disk workloads: `disk-read` (dd reading a file block by block) and
//! `iozone` (sequential or random reads or writes of records, direct I/O).
//!
//! Each disk request costs the guest `guest_disk_ns` of CPU (its block front
//! end, issue plus completion), charged before the request is issued. Sizes
//! in KiB (1024 bytes), and throughputs in KB/s with KB = 1024 bytes, as
//! IOzone reports them.

use super::wparam as p;
use super::{rate, GuestCtx, IoKind, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::params::{Default, ParamKind, Params};
use crate::time::Time;
use serde_json::{Map, Value as Json};

const KIB: u64 = 1024;

pub(super) const DISK_READ: WorkloadInfo = WorkloadInfo {
    kind: "disk-read",
    summary: "dd reading a file in blocks, one at a time, through the page cache's read-ahead.",
    params: &[
        p(
            "block_kb",
            "KiB",
            ParamKind::Float { min: 0.5, max: 1_048_576.0 },
            Default::Float(1.0),
            "Block size (dd bs=).",
        ),
        p(
            "blocks",
            "",
            ParamKind::Int { min: 0, max: 1 << 40 },
            Default::Int(1000),
            "Blocks per dd run (count=); the run repeats from the file's start; 0 reads on forever.",
        ),
        p(
            "readahead_kb",
            "KiB",
            ParamKind::Float { min: 0.0, max: 1_048_576.0 },
            Default::Float(128.0),
            "Guest read-ahead: a block missing from the page cache fetches this much; 0 sends every block to the disk.",
        ),
    ],
    metrics: &["throughput_kb_s", "requests", "runs"],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let block = ((p.float("block_kb") * KIB as f64).round() as u64).max(1);
        let ra = (p.float("readahead_kb") * KIB as f64).round() as u64;
        Box::new(DiskRead {
            block,
            blocks: p.int("blocks") as u64,
            fetch: ra.max(block),
            pos: 0,
            cached_to: 0,
            done_in_run: 0,
            bytes: 0,
            requests: 0,
            runs: 0,
            from: Time::ZERO,
        })
    },
    jobs: None,
};

/// Tags.
const ISSUE: u32 = 0;
const COPY: u32 = 1;

struct DiskRead {
    block: u64,
    blocks: u64,
    /// Bytes one disk request fetches (read-ahead, at least a block).
    fetch: u64,
    /// File offset of the next block.
    pos: u64,
    /// The page cache holds the file up to here.
    cached_to: u64,
    done_in_run: u64,
    bytes: u64,
    requests: u64,
    runs: u64,
    from: Time,
}

impl DiskRead {
    /// dd asks for the block at `pos`.
    fn next(&mut self, g: &mut GuestCtx) {
        if self.blocks > 0 && self.done_in_run == self.blocks {
            // The run is over; dd starts again on the same file (cold cache).
            self.runs += 1;
            self.done_in_run = 0;
            self.pos = 0;
            self.cached_to = 0;
        }
        if self.pos + self.block <= self.cached_to {
            // A page-cache hit: a copy to user space.
            let c = g.io_costs().guest_disk_ns;
            g.push(WorkItem {
                remaining_ns: (c / 4).max(1),
                tag: COPY,
            });
        } else {
            let c = g.disk_cpu_ns(1);
            g.push(WorkItem {
                remaining_ns: c,
                tag: ISSUE,
            });
        }
    }

    fn block_done(&mut self, g: &mut GuestCtx) {
        self.pos += self.block;
        self.done_in_run += 1;
        if g.now() >= self.from {
            self.bytes += self.block;
        }
        self.next(g);
    }
}

impl Workload for DiskRead {
    fn kind(&self) -> &'static str {
        "disk-read"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        self.next(g);
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if tag == COPY {
            self.block_done(g);
        } else {
            let start = self.cached_to.max(self.pos);
            let len = self.fetch.max(self.pos + self.block - start);
            self.requests += 1;
            g.disk_io(false, start, len, start + len);
        }
    }

    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, token: u64) {
        debug_assert_eq!(kind, IoKind::DiskRead);
        self.cached_to = token;
        self.block_done(g);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.bytes = 0;
        self.requests = 0;
        self.runs = 0;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "throughput_kb_s".into(),
            (rate(self.bytes, self.from, now) / KIB as f64).into(),
        );
        m.insert("requests".into(), self.requests.into());
        m.insert("runs".into(), self.runs.into());
        m
    }
}

pub(super) const IOZONE: WorkloadInfo = WorkloadInfo {
    kind: "iozone",
    summary: "IOzone with direct I/O: sequential or random reads or writes of records over a file.",
    params: &[
        p(
            "mode",
            "",
            ParamKind::Choice(&["seq-read", "seq-write", "rand-read", "rand-write"]),
            Default::Str("seq-read"),
            "The IOzone test: S-Read, S-Write, R-Read or R-Write.",
        ),
        p(
            "record_kb",
            "KiB",
            ParamKind::Float { min: 4.0, max: 1_048_576.0 },
            Default::Float(1024.0),
            "Record length (iozone -r).",
        ),
        p(
            "file_mb",
            "MiB",
            ParamKind::Float { min: 0.004, max: 16_777_216.0 },
            Default::Float(512.0),
            "File size (iozone -s); the test repeats over the file.",
        ),
        p(
            "max_request_kb",
            "KiB",
            ParamKind::Float { min: 4.0, max: 1_048_576.0 },
            Default::Float(44.0),
            "Largest request the guest's block front end issues (11 segments of 4 KiB without indirect descriptors); a record is split into requests issued together.",
        ),
        p(
            "native_request_kb",
            "KiB",
            ParamKind::Float { min: 4.0, max: 1_048_576.0 },
            Default::Float(512.0),
            "Largest request when the driver domain itself runs IOzone (Linux max_sectors_kb).",
        ),
        p(
            "queue_depth",
            "",
            ParamKind::Int { min: 0, max: 1_000_000 },
            Default::Int(0),
            "Requests of a record in flight at once; 0 = all of them together (Linux's direct I/O submits a call's bios before waiting), 1 = one at a time (a synchronous stream of single requests: the guest's VCPU runs its front end to issue each next one).",
        ),
    ],
    metrics: &["throughput_kb_s", "records", "requests"],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let mode = p.str("mode");
        Box::new(Iozone {
            write: mode.ends_with("write"),
            random: mode.starts_with("rand"),
            record: ((p.float("record_kb") * KIB as f64).round() as u64).max(1),
            file: ((p.float("file_mb") * (KIB * KIB) as f64).round() as u64).max(1),
            max_req: ((p.float("max_request_kb") * KIB as f64).round() as u64).max(1),
            native_req: ((p.float("native_request_kb") * KIB as f64).round() as u64).max(1),
            queue_depth: p.int("queue_depth") as u32,
            pos: 0,
            issued_to: 0,
            outstanding: 0,
            bytes: 0,
            records: 0,
            requests: 0,
            from: Time::ZERO,
        })
    },
    jobs: None,
};

/// IOzone's work items: a record's first requests, and one later request.
const RECORD: u32 = 0;
const NEXT_REQUEST: u32 = 1;

struct Iozone {
    write: bool,
    random: bool,
    record: u64,
    file: u64,
    max_req: u64,
    native_req: u64,
    /// Requests in flight at once (0: the whole record).
    queue_depth: u32,
    /// Offset of the current record.
    pos: u64,
    /// Bytes of the current record issued so far.
    issued_to: u64,
    /// Requests of the current record issued and not yet completed.
    outstanding: u32,
    bytes: u64,
    records: u64,
    requests: u64,
    from: Time,
}

impl Iozone {
    fn chunk(&self, g: &GuestCtx) -> u64 {
        if g.is_driver() {
            self.native_req
        } else {
            self.max_req
        }
    }

    /// Start the next record: its CPU (one front-end cost per request) first.
    fn next_record(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        let records = (self.file / self.record).max(1);
        self.pos = if self.random {
            rng.below(records) * self.record
        } else {
            let next = self.pos + self.record;
            if next + self.record > self.file {
                0
            } else {
                next
            }
        };
        self.push_record_cpu(g);
    }

    /// The guest's front-end CPU for the requests issued when a record starts:
    /// all of them together (queue depth 0), or the first `queue_depth`; each
    /// later one is issued by the guest as an earlier one completes.
    fn push_record_cpu(&self, g: &mut GuestCtx) {
        let mut nreq = self.record.div_ceil(self.chunk(g));
        if self.queue_depth > 0 {
            nreq = nreq.min(u64::from(self.queue_depth));
        }
        let cpu = g.disk_cpu_ns(nreq);
        g.push(WorkItem {
            remaining_ns: cpu,
            tag: RECORD,
        });
    }

    /// Issue the current record's next requests, up to the queue depth.
    fn issue(&mut self, g: &mut GuestCtx) {
        let chunk = self.chunk(g);
        while self.issued_to < self.record
            && (self.queue_depth == 0 || self.outstanding < self.queue_depth)
        {
            let len = chunk.min(self.record - self.issued_to);
            g.disk_io(self.write, self.pos + self.issued_to, len, 0);
            self.outstanding += 1;
            self.requests += 1;
            self.issued_to += len;
        }
    }
}

impl Workload for Iozone {
    fn kind(&self) -> &'static str {
        "iozone"
    }

    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng) {
        // The first sequential record is at offset 0.
        self.pos = self.file;
        if !self.random {
            self.pos = 0;
            self.push_record_cpu(g);
        } else {
            self.next_record(g, rng);
        }
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        if tag == RECORD {
            self.issued_to = 0;
        }
        self.issue(g);
    }

    fn io_done(&mut self, g: &mut GuestCtx, rng: &mut Rng, _kind: IoKind, _token: u64) {
        self.outstanding -= 1;
        if self.issued_to < self.record {
            // A request of the record is still to go (queue depth 1 or more):
            // the guest's front end issues it when its VCPU runs.
            let cpu = g.disk_cpu_ns(1);
            g.push(WorkItem {
                remaining_ns: cpu,
                tag: NEXT_REQUEST,
            });
            return;
        }
        if self.outstanding > 0 {
            return;
        }
        if g.now() >= self.from {
            self.bytes += self.record;
            self.records += 1;
        }
        self.next_record(g, rng);
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.bytes = 0;
        self.records = 0;
        self.requests = 0;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "throughput_kb_s".into(),
            (rate(self.bytes, self.from, now) / KIB as f64).into(),
        );
        m.insert("records".into(), self.records.into());
        m.insert("requests".into(), self.requests.into());
        m
    }
}
