//! `streaming`: a media server streaming at a constant rate to buffered
//! remote clients (Govindan et al.'s streaming server).
//!
//! The server has one thread per client. Each thread sends a data unit
//! (`chunk_kb`) every `chunk_kb / rate_mbit` seconds: when a unit falls due
//! the thread needs `chunk_cpu_us` of CPU plus `guest_pkt_ns` per packet,
//! then hands the unit to the network (through the driver domain and the
//! NIC). A thread that falls behind sends its overdue units back to back
//! until it has caught up. The clients' due times are spread evenly over
//! one interval, so that the threads do not all wake at once.
//!
//! Each client is a remote peer beyond the NIC with a playback buffer of
//! `buffer_mb`. It starts playing, at `rate_mbit`, once the buffer holds
//! `buffer_mb`; when the buffer runs empty (an underrun: a playback
//! discontinuity) it stops and waits until the buffer is full again. The
//! buffer's level is tracked exactly (in bit·ns), so an underrun is found
//! at the instant it happens, whenever the next unit arrives.

use super::wparam as p;
use super::{latency_ms, rate, GuestCtx, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::io::packets;
use crate::metrics::ResponseHistogram;
use crate::params::{Default, ParamKind, Params};
use crate::time::{secs_f64, Time, NS_PER_S};
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "streaming",
    summary: "A media server streaming at a constant rate to buffered clients; counts playback discontinuities.",
    params: &[
        p(
            "clients",
            "",
            ParamKind::Int { min: 1, max: 100_000 },
            Default::Int(1),
            "Clients, each streamed to by its own server thread.",
        ),
        p(
            "rate_mbit",
            "Mbit/s",
            ParamKind::Float { min: 0.001, max: 100_000.0 },
            Default::Float(3.0),
            "Stream rate per client: the server's sending rate and the client's playback rate.",
        ),
        p(
            "buffer_mb",
            "MiB",
            ParamKind::Float { min: 0.001, max: 1_048_576.0 },
            Default::Float(8.0),
            "Client buffer; playback starts, and resumes after an underrun, when it is full.",
        ),
        p(
            "chunk_kb",
            "KiB",
            ParamKind::Float { min: 0.1, max: 1_048_576.0 },
            Default::Float(64.0),
            "Data unit the server sends at a time.",
        ),
        p(
            "chunk_cpu_us",
            "µs",
            ParamKind::Float { min: 0.0, max: 10_000_000.0 },
            Default::Float(100.0),
            "Server CPU per data unit besides packet handling (reading and framing it).",
        ),
        p(
            "slo_discontinuities",
            "",
            ParamKind::Int { min: 0, max: 1_000_000_000 },
            Default::Int(1),
            "A client is within the SLO with at most this many playback discontinuities.",
        ),
    ],
    metrics: &[
        "underruns",
        "underruns_total",
        "underruns_mean",
        "clients_within_slo",
        "transmit_ms",
        "throughput_mbit_s",
        "chunks",
        "stalled_s",
        "startup_s",
    ],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let clients = p.int("clients") as usize;
        let chunk_bytes = (p.float("chunk_kb") * 1024.0).round().max(1.0) as u64;
        Box::new(Streaming {
            rate_bps: (p.float("rate_mbit") * 1e6).round().max(1.0) as u64,
            capacity: u128::from((p.float("buffer_mb") * 1024.0 * 1024.0).round() as u64)
                * BIT_NS_PER_BYTE,
            chunk_bytes,
            chunk_cpu_ns: secs_f64(p.float("chunk_cpu_us") / 1e6),
            slo: p.int("slo_discontinuities") as u64,
            clients: vec![Client::default(); clients],
            transmit: ResponseHistogram::default(),
            chunks: 0,
            bytes: 0,
            from: Time::ZERO,
        })
    },
    jobs: None,
};

/// A byte in the buffer, in bit·ns (the unit a rate in bit/s drains per ns).
const BIT_NS_PER_BYTE: u128 = 8 * NS_PER_S as u128;

/// One client and its server thread.
#[derive(Clone, Debug, Default)]
struct Client {
    // The server thread.
    /// The next data unit to fall due.
    next_due: u64,
    /// Units due and not yet taken up by the thread.
    backlog: u64,
    /// The thread is working on a unit (the next one sent is `sent`).
    busy: bool,
    sent: u64,
    // The client.
    /// Units received.
    received: u64,
    /// Data in the buffer, bit·ns.
    level: u128,
    playing: bool,
    /// When `level` was last brought up to date.
    last: Time,
    /// When playback first started.
    started: Option<Time>,
    underruns: u64,
    /// When the current stall (after an underrun) began.
    stall_from: Option<Time>,
    stalled_ns: u64,
}

struct Streaming {
    rate_bps: u64,
    /// Buffer size, bit·ns.
    capacity: u128,
    chunk_bytes: u64,
    chunk_cpu_ns: u64,
    slo: u64,
    clients: Vec<Client>,
    /// From a unit falling due to its last byte reaching the client.
    transmit: ResponseHistogram,
    chunks: u64,
    bytes: u64,
    from: Time,
}

/// What draining a playing buffer from `c.last` to `t` finds: `Some(when)`
/// it ran empty, or `None` and the level left.
fn drain(c: &Client, rate_bps: u64, t: Time) -> Result<u128, Time> {
    let used = u128::from(rate_bps) * u128::from(t.since(c.last));
    if used > c.level {
        let empty_after = c.level.div_ceil(u128::from(rate_bps)) as u64;
        Err(c.last.after(empty_after))
    } else {
        Ok(c.level - used)
    }
}

impl Streaming {
    /// When unit `seq` of client `c` falls due: the clients' phases are
    /// spread evenly over one interval; exact in integer ns.
    fn due(&self, c: usize, seq: u64) -> Time {
        let bits_ns = u128::from(self.chunk_bytes) * BIT_NS_PER_BYTE;
        let n = self.clients.len() as u128;
        let rate = u128::from(self.rate_bps);
        let phase = c as u128 * bits_ns / (rate * n);
        Time((phase + u128::from(seq) * bits_ns / rate) as u64)
    }

    fn start_unit(&mut self, g: &mut GuestCtx, c: usize) {
        let cl = &mut self.clients[c];
        cl.backlog -= 1;
        cl.busy = true;
        let pkts = u64::from(packets(self.chunk_bytes, g.mss()));
        g.push(WorkItem {
            remaining_ns: self.chunk_cpu_ns + pkts * g.io_costs().guest_pkt_ns,
            tag: c as u32,
        });
    }
}

impl Workload for Streaming {
    fn kind(&self) -> &'static str {
        "streaming"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        for c in 0..self.clients.len() {
            let at = self.due(c, 0);
            g.arm_timer(at, c as u32);
        }
    }

    /// A unit of client `c` falls due.
    fn timer(&mut self, g: &mut GuestCtx, _rng: &mut Rng, token: u32) {
        let c = token as usize;
        let cl = &mut self.clients[c];
        cl.backlog += 1;
        cl.next_due += 1;
        let busy = cl.busy;
        let next = self.due(c, self.clients[c].next_due);
        g.arm_timer(next, token);
        if !busy {
            self.start_unit(g, c);
        }
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        let c = tag as usize;
        let cl = &mut self.clients[c];
        let seq = cl.sent;
        cl.sent += 1;
        cl.busy = false;
        g.net_send(self.chunk_bytes, ((c as u64) << 32) | (seq & 0xffff_ffff));
        if self.clients[c].backlog > 0 {
            self.start_unit(g, c);
        }
    }

    /// A unit reached its client.
    fn peer_recv(&mut self, g: &mut GuestCtx, _rng: &mut Rng, token: u64) {
        let now = g.now();
        let c = (token >> 32) as usize;
        // A client's units arrive in order (one backend, one link, both FIFO).
        let seq = self.clients[c].received;
        self.clients[c].received += 1;
        debug_assert_eq!(seq & 0xffff_ffff, token & 0xffff_ffff, "units in order");
        let due = self.due(c, seq);
        if due >= self.from {
            self.transmit.record(now.since(due));
            self.chunks += 1;
            self.bytes += self.chunk_bytes;
        }
        let (rate_bps, capacity, add, from) = (
            self.rate_bps,
            self.capacity,
            u128::from(self.chunk_bytes) * BIT_NS_PER_BYTE,
            self.from,
        );
        let cl = &mut self.clients[c];
        if cl.playing {
            match drain(cl, rate_bps, now) {
                Ok(level) => cl.level = level,
                Err(empty_at) => {
                    if empty_at >= from {
                        cl.underruns += 1;
                    }
                    cl.stall_from = Some(empty_at);
                    cl.level = 0;
                    cl.playing = false;
                }
            }
        }
        cl.last = now;
        cl.level += add;
        if !cl.playing && cl.level >= capacity {
            cl.playing = true;
            cl.started.get_or_insert(now);
            if let Some(s) = cl.stall_from.take() {
                cl.stalled_ns += now.since(s.max(from));
            }
        }
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.transmit.clear();
        self.chunks = 0;
        self.bytes = 0;
        for c in &mut self.clients {
            c.underruns = 0;
            c.stalled_ns = 0;
        }
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut underruns = Vec::with_capacity(self.clients.len());
        let mut stalled = 0u64;
        let mut startups = Vec::new();
        for c in &self.clients {
            let (mut u, mut st) = (c.underruns, c.stalled_ns);
            let mut stall_from = c.stall_from;
            if c.playing {
                if let Err(t) = drain(c, self.rate_bps, now) {
                    if t >= self.from {
                        u += 1;
                    }
                    stall_from = Some(t);
                }
            }
            if let Some(s) = stall_from {
                st += now.since(s.max(self.from));
            }
            underruns.push(u);
            stalled += st;
            if let Some(t) = c.started {
                startups.push(t.as_secs_f64());
            }
        }
        let total: u64 = underruns.iter().sum();
        let n = self.clients.len() as f64;
        let mut m = Map::new();
        m.insert(
            "clients_within_slo".into(),
            underruns.iter().filter(|&&u| u <= self.slo).count().into(),
        );
        m.insert("underruns_total".into(), total.into());
        m.insert("underruns_mean".into(), (total as f64 / n).into());
        m.insert("underruns".into(), underruns.into());
        m.insert("transmit_ms".into(), latency_ms(&self.transmit));
        m.insert(
            "throughput_mbit_s".into(),
            (rate(self.bytes, self.from, now) * 8.0 / 1e6).into(),
        );
        m.insert("chunks".into(), self.chunks.into());
        m.insert(
            "stalled_s".into(),
            (stalled as f64 / NS_PER_S as f64).into(),
        );
        m.insert(
            "startup_s".into(),
            if startups.is_empty() {
                Json::Null
            } else {
                (startups.iter().sum::<f64>() / startups.len() as f64).into()
            },
        );
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_playing_buffer_drains_at_the_stream_rate_exactly() {
        // 1 Mbit/s from 1000 bytes: empty after exactly 8 ms.
        let c = Client {
            level: 1000 * BIT_NS_PER_BYTE,
            playing: true,
            last: Time(5_000_000),
            ..Client::default()
        };
        assert_eq!(
            drain(&c, 1_000_000, Time(13_000_000)),
            Ok(0),
            "empty at the instant the next unit arrives: no underrun"
        );
        assert_eq!(
            drain(&c, 1_000_000, Time(9_000_000)),
            Ok(500 * BIT_NS_PER_BYTE)
        );
        assert_eq!(
            drain(&c, 1_000_000, Time(13_000_001)),
            Err(Time(13_000_000))
        );
    }

    #[test]
    fn units_fall_due_at_the_stream_rate_with_spread_phases() {
        let s = Streaming {
            rate_bps: 3_000_000,
            capacity: 0,
            chunk_bytes: 65_536,
            chunk_cpu_ns: 0,
            slo: 1,
            clients: vec![Client::default(); 4],
            transmit: ResponseHistogram::default(),
            chunks: 0,
            bytes: 0,
            from: Time::ZERO,
        };
        // 524,288 bits at 3 Mbit/s: 174.762666… ms per unit.
        assert_eq!(s.due(0, 0), Time(0));
        assert_eq!(s.due(0, 3), Time(524_288_000));
        assert_eq!(s.due(1, 0), Time(43_690_666));
        assert_eq!(s.due(3, 3), Time(131_072_000 + 524_288_000));
    }
}
