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
    summary: "dd reading a file in blocks through the page cache, with Linux 2.6.16's read-ahead (a current and an asynchronous ahead window).",
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
            "Blocks per dd run (count=); the run repeats from the file's start with a cold cache; 0 reads on forever.",
        ),
        p(
            "readahead_kb",
            "KiB",
            ParamKind::Float { min: 0.0, max: 1_048_576.0 },
            Default::Float(128.0),
            "The device's maximum read-ahead (Linux VM_MAX_READAHEAD, 128 KiB; rounded down to whole pages); 0 turns read-ahead off: each missing page is read alone.",
        ),
        p(
            "max_request_kb",
            "KiB",
            ParamKind::Float { min: 4.0, max: 1_048_576.0 },
            Default::Float(44.0),
            "Largest request the guest's block front end issues (blkfront: 11 segments of one 4-KiB page); a read-ahead window is split into requests of at most this size, issued together.",
        ),
        p(
            "native_request_kb",
            "KiB",
            ParamKind::Float { min: 4.0, max: 1_048_576.0 },
            Default::Float(512.0),
            "Largest request when the driver domain itself runs dd (Linux max_sectors_kb).",
        ),
    ],
    metrics: &[
        "throughput_kb_s",
        "requests",
        "windows",
        "waits",
        "runs",
    ],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let block = ((p.float("block_kb") * KIB as f64).round() as u64).max(1);
        let ra_pages = (p.float("readahead_kb") * KIB as f64 / PAGE as f64).floor() as u64;
        let req = |k: &str| ((p.float(k) * KIB as f64 / PAGE as f64).floor() as u64).max(1);
        Box::new(DiskRead {
            block,
            blocks: p.int("blocks") as u64,
            ra: Readahead::new(ra_pages),
            max_req_pages: req("max_request_kb"),
            native_req_pages: req("native_request_kb"),
            pos: 0,
            cursor: 0,
            next_index: 0,
            read_to: 0,
            uptodate_to: 0,
            done: Vec::new(),
            to_issue: Vec::new(),
            in_flight: Vec::new(),
            serial: 0,
            waiting: false,
            done_in_run: 0,
            bytes: 0,
            requests: 0,
            windows: 0,
            waits: 0,
            runs: 0,
            from: Time::ZERO,
        })
    },
    jobs: None,
};

/// Linux's page size: the page cache and read-ahead count in pages.
const PAGE: u64 = 4096;

/// Linux 2.6.16's smallest read-ahead window after a miss (VM_MIN_READAHEAD,
/// 16 KiB), in pages.
const MIN_RA_PAGES: u64 = 16 * KIB / PAGE;

/// Linux 2.6.16's per-file read-ahead state (`struct file_ra_state`, used
/// by `page_cache_readahead` in `mm/readahead.c`), in pages. The *current*
/// window is `start .. start + size`, the *ahead* window `ahead_start ..
/// ahead_start + ahead_size` (`ahead_start` 0: none). When the reader
/// first touches a page of the ahead window, the ahead window becomes the
/// current one and a new ahead window is submitted at once, without
/// waiting for it: while the reader copies one window, the next is on its
/// way from the disk.
#[derive(Clone, Debug)]
struct Readahead {
    /// The maximum window (the device's `ra_pages`; 0: read-ahead off).
    max: u64,
    start: u64,
    size: u64,
    ahead_start: u64,
    ahead_size: u64,
    /// The page the algorithm last looked at (-1 before the first read).
    prev_page: i64,
    /// A page the reader wanted was not in the page cache at all
    /// (`RA_FLAG_MISS`): the next window shrinks.
    miss: bool,
}

impl Readahead {
    fn new(max: u64) -> Readahead {
        Readahead {
            max,
            start: 0,
            size: 0,
            ahead_start: 0,
            ahead_size: 0,
            prev_page: -1,
            miss: false,
        }
    }

    /// The first window of a sequential read of `req` pages: rounded up to a
    /// power of two, then `req²` while that is at most max/64, max/4 while
    /// at most max/4, else max (`get_init_ra_size`; 1-8 pages give 32 KiB
    /// at the default 128 KiB maximum).
    fn init_size(req: u64, max: u64) -> u64 {
        let n = req.next_power_of_two();
        if n <= max / 64 {
            n * n
        } else if n <= max / 4 {
            max / 4
        } else {
            max
        }
    }

    /// The next ahead window after a current window of `cur` pages: four
    /// times it while below max/16, else twice, at most max; after a miss,
    /// two pages less (at least the minimum) (`get_next_ra_size`).
    fn next_size(&mut self, cur: u64) -> u64 {
        let n = if self.miss {
            self.miss = false;
            cur.saturating_sub(2).max(MIN_RA_PAGES)
        } else if cur < self.max / 16 {
            4 * cur
        } else {
            2 * cur
        };
        n.min(self.max)
    }

    /// A new ahead window right after the current one (`make_ahead_window`);
    /// its pages go to `out`.
    fn make_ahead(&mut self, out: &mut Vec<(u64, u64)>) {
        self.ahead_size = self.next_size(self.size);
        self.ahead_start = self.start + self.size;
        out.push((self.ahead_start, self.ahead_start + self.ahead_size));
    }

    /// A read() of `req` pages from page `offset` (`page_cache_readahead`):
    /// the page ranges to read ahead go to `out`. Returns the page at which
    /// the same read() consults the read-ahead again.
    fn on_read(&mut self, mut offset: u64, mut req: u64, out: &mut Vec<(u64, u64)>) -> u64 {
        if offset as i64 == self.prev_page {
            // The same page again (a sub-page block): look past it.
            req -= 1;
            if req > 0 {
                offset += 1;
            }
        }
        let sequential = offset as i64 == self.prev_page + 1;
        self.prev_page = offset as i64;
        let newsize = req.min(self.max);
        if newsize == 0 {
            return offset + 1;
        }
        self.prev_page += newsize as i64 - 1;
        if sequential && self.size == 0 {
            // The first sequential read: a window sized from the request.
            self.size = Self::init_size(newsize, self.max);
            self.start = offset;
            out.push((offset, offset + self.size));
            if req >= self.max {
                self.make_ahead(out);
            }
            return self.prev_page as u64 + 1;
        }
        if !sequential {
            // A seek: read-ahead off, just the pages asked for.
            *self = Readahead {
                prev_page: self.prev_page,
                ..Readahead::new(self.max)
            };
            out.push((offset, offset + newsize));
            return self.prev_page as u64 + 1;
        }
        if self.ahead_start == 0 {
            self.make_ahead(out);
        }
        if self.prev_page >= self.ahead_start as i64 {
            // The reader entered the ahead window: it becomes the current
            // one, and the next ahead window goes out now.
            self.start = self.ahead_start;
            self.size = self.ahead_size;
            self.make_ahead(out);
            self.prev_page = self
                .prev_page
                .min((self.ahead_start + self.ahead_size) as i64 - 1);
        }
        self.prev_page as u64 + 1
    }
}

/// Tags.
const ISSUE: u32 = 0;
const COPY: u32 = 1;

/// dd (`dd if=file of=/dev/null bs= count=`) reading through the page cache
/// of a Linux 2.6.16 guest. Each block is one read() call that walks its
/// pages (`do_generic_mapping_read`): where the read-ahead asked to be
/// consulted it may submit windows (split into the front end's requests,
/// each costing the guest `guest_disk_ns` before it goes out); a page
/// missing from the page cache is read alone; a page still being read
/// stalls the call until its request completes; then the block is copied
/// to user space (`guest_read_call_ns` for the read() and dd's write() to
/// /dev/null, plus `guest_copy_kb_ns` per KiB).
struct DiskRead {
    block: u64,
    blocks: u64,
    ra: Readahead,
    max_req_pages: u64,
    native_req_pages: u64,
    /// File offset of the next block.
    pos: u64,
    /// The page the current read() is at.
    cursor: u64,
    /// The page at which the current read() consults the read-ahead next.
    next_index: u64,
    /// Pages submitted to the disk (in the page cache, maybe still being
    /// read) end here.
    read_to: u64,
    /// Pages read from the disk (up to date) end here.
    uptodate_to: u64,
    /// Completed page ranges above `uptodate_to` (a request that completed
    /// ahead of an earlier one).
    done: Vec<(u64, u64)>,
    /// Requests (page ranges) whose front-end CPU is being spent.
    to_issue: Vec<(u64, u64)>,
    /// Requests in flight: serial number (the token), first page, end page.
    in_flight: Vec<(u64, u64, u64)>,
    /// Requests issued so far (tokens).
    serial: u64,
    /// The current read() waits for a page being read.
    waiting: bool,
    done_in_run: u64,
    bytes: u64,
    requests: u64,
    windows: u64,
    waits: u64,
    runs: u64,
    from: Time,
}

impl DiskRead {
    /// dd starts the read() of the block at `pos`.
    fn next(&mut self, g: &mut GuestCtx) {
        if self.blocks > 0 && self.done_in_run == self.blocks {
            // The run is over; dd starts again on the same file, its
            // pages dropped from the cache (a cold start, as the first run).
            // Requests still in flight are forgotten (their pages dropped).
            self.runs += 1;
            self.done_in_run = 0;
            self.pos = 0;
            self.read_to = 0;
            self.uptodate_to = 0;
            self.done.clear();
            self.in_flight.clear();
            self.ra = Readahead::new(self.ra.max);
        }
        self.cursor = self.pos / PAGE;
        self.next_index = self.cursor;
        self.advance(g);
    }

    /// Walk the current read()'s pages from the cursor: consult the
    /// read-ahead where it asked to be, read a page missing from the cache
    /// on its own, wait for a page still being read, and copy the block
    /// once every page is up to date.
    fn advance(&mut self, g: &mut GuestCtx) {
        let last = (self.pos + self.block).div_ceil(PAGE);
        let mut windows = Vec::new();
        while self.cursor < last {
            let index = self.cursor;
            if index == self.next_index {
                self.next_index = self.ra.on_read(index, last - index, &mut windows);
            }
            if windows.is_empty() && index >= self.read_to {
                // Not in the page cache at all (`handle_ra_miss`, then
                // `readpage`): this page is read on its own.
                self.ra.miss = true;
                windows.push((index, index + 1));
            }
            if !windows.is_empty() {
                self.submit(g, &windows);
                return;
            }
            if !self.uptodate(index) {
                if !self.waiting {
                    self.waiting = true;
                    self.waits += 1;
                }
                return;
            }
            self.cursor += 1;
        }
        self.waiting = false;
        let c = g.io_costs();
        let kb = self.block as f64 / KIB as f64;
        let ns = c.guest_read_call_ns + (c.guest_copy_kb_ns as f64 * kb).round() as u64;
        g.push(WorkItem {
            remaining_ns: ns.max(1),
            tag: COPY,
        });
    }

    /// Is page `p` read from the disk?
    fn uptodate(&self, p: u64) -> bool {
        p < self.uptodate_to || self.done.iter().any(|&(s, e)| s <= p && p < e)
    }

    /// Read the page ranges `windows` (only pages not yet in the page
    /// cache, as `__do_page_cache_readahead`), split into the front end's
    /// requests; their CPU first, then they go out together.
    fn submit(&mut self, g: &mut GuestCtx, windows: &[(u64, u64)]) {
        let chunk = if g.is_driver() {
            self.native_req_pages
        } else {
            self.max_req_pages
        };
        for &(s, e) in windows {
            let s = s.max(self.read_to);
            if s >= e {
                continue;
            }
            self.windows += 1;
            let mut p = s;
            while p < e {
                let q = (p + chunk).min(e);
                self.to_issue.push((p, q));
                p = q;
            }
            self.read_to = e;
        }
        if self.to_issue.is_empty() {
            // Everything asked for is in the cache already.
            self.advance(g);
            return;
        }
        let cpu = g.disk_cpu_ns(self.to_issue.len() as u64);
        g.push(WorkItem {
            remaining_ns: cpu,
            tag: ISSUE,
        });
    }

    /// The page range `s .. e` was read.
    fn complete(&mut self, s: u64, e: u64) {
        if s <= self.uptodate_to {
            self.uptodate_to = self.uptodate_to.max(e);
            loop {
                let to = self.uptodate_to;
                let Some(i) = self.done.iter().position(|&(a, _)| a <= to) else {
                    break;
                };
                let (_, b) = self.done.swap_remove(i);
                self.uptodate_to = to.max(b);
            }
        } else {
            self.done.push((s, e));
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
            return;
        }
        for (s, e) in std::mem::take(&mut self.to_issue) {
            self.requests += 1;
            self.serial += 1;
            self.in_flight.push((self.serial, s, e));
            g.disk_io(false, s * PAGE, (e - s) * PAGE, self.serial);
        }
        self.advance(g);
    }

    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, token: u64) {
        debug_assert_eq!(kind, IoKind::DiskRead);
        let Some(i) = self.in_flight.iter().position(|&(t, _, _)| t == token) else {
            return; // issued by an earlier run
        };
        let (_, s, e) = self.in_flight.swap_remove(i);
        self.complete(s, e);
        if self.waiting {
            self.advance(g);
        }
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.bytes = 0;
        self.requests = 0;
        self.windows = 0;
        self.waits = 0;
        self.runs = 0;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "throughput_kb_s".into(),
            (rate(self.bytes, self.from, now) / KIB as f64).into(),
        );
        m.insert("requests".into(), self.requests.into());
        m.insert("windows".into(), self.windows.into());
        m.insert("waits".into(), self.waits.into());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The page ranges Linux 2.6.16's read-ahead submits while a reader
    /// reads `pages` pages sequentially in read() calls of `req` pages,
    /// with `sub` calls per page when `req` is 1 (1-KiB blocks: 4).
    fn windows(max: u64, req: u64, sub: u64, pages: u64) -> Vec<(u64, u64, u64)> {
        let mut ra = Readahead::new(max);
        let mut out = Vec::new();
        let mut p = 0;
        while p < pages {
            for _ in 0..sub {
                let mut w = Vec::new();
                ra.on_read(p, req, &mut w);
                out.extend(w.into_iter().map(|(s, e)| (p, s, e)));
            }
            p += req;
        }
        out
    }

    #[test]
    fn one_kib_reads_open_a_32_kib_window_then_grow_ahead_windows_to_the_maximum() {
        // (page being read, window start, window end), in pages of 4 KiB.
        // The first read opens 8 pages (32 KiB) and waits for them; the
        // second page's read opens the first ahead window (16 pages)
        // without waiting; each entry into the ahead window submits the
        // next, doubling to the 32-page (128 KiB) maximum.
        assert_eq!(
            windows(32, 1, 4, 130),
            vec![
                (0, 0, 8),
                (1, 8, 24),
                (8, 24, 56),
                (24, 56, 88),
                (56, 88, 120),
                (88, 120, 152),
                (120, 152, 184),
            ]
        );
    }

    #[test]
    fn window_sizes_follow_get_init_and_get_next_ra_size() {
        // The first window: 1-8 pages give a quarter of the maximum,
        // more give the maximum; tiny requests against a large maximum
        // are squared.
        assert_eq!(Readahead::init_size(1, 32), 8);
        assert_eq!(Readahead::init_size(8, 32), 8);
        assert_eq!(Readahead::init_size(9, 32), 32);
        assert_eq!(Readahead::init_size(2, 256), 4);
        assert_eq!(Readahead::init_size(3, 256), 16);
        assert_eq!(Readahead::init_size(8, 256), 64);
        // Ahead windows: x4 below max/16, x2 above, capped; after a miss
        // two pages less, at least the 4-page minimum.
        let mut ra = Readahead::new(256);
        assert_eq!(ra.next_size(4), 16);
        assert_eq!(ra.next_size(16), 32);
        assert_eq!(ra.next_size(200), 256);
        ra.miss = true;
        assert_eq!(ra.next_size(32), 30);
        ra.miss = true;
        assert_eq!(ra.next_size(5), MIN_RA_PAGES);
    }

    #[test]
    fn a_read_as_large_as_the_maximum_submits_the_ahead_window_at_once() {
        // 128-KiB reads: the first window is the maximum, and since the
        // request is that large the ahead window goes out with it.
        assert_eq!(
            windows(32, 32, 1, 64),
            vec![(0, 0, 32), (0, 32, 64), (32, 64, 96)]
        );
    }

    #[test]
    fn no_read_ahead_submits_nothing() {
        assert!(windows(0, 1, 4, 16).is_empty());
    }
}
