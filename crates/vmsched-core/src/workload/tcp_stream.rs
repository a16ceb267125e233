//! `tcp-stream`: a bulk TCP transfer (iperf, netperf TCP_STREAM) between
//! the guest and a remote host, window-limited and acknowledgement-clocked.
//!
//! Data moves in messages of `message_bytes` (netperf's send size), each
//! sent in units of at most half the window (TCP segments a large send call
//! under the window; the unit is the message when it fits). At most
//! a window of bytes is unacknowledged: the receiver's socket buffer
//! (`recv_socket_bytes`, the advertised window), and when the guest sends,
//! also twice its send socket buffer (Linux doubles `SO_SNDBUF`). The
//! receiver acknowledges every message with one ACK packet per two data
//! packets (delayed ACKs).
//!
//! `direction = "send"`: the guest sends to the remote host (the thesis's
//! netperf client in DomU). The guest's CPU per message is its packets ×
//! `guest_pkt_ns`; ACKs cost it the same per packet, in interrupt context.
//! `direction = "receive"`: the remote host sends as fast as the window
//! allows; the guest processes each message in interrupt context and then
//! sends the ACKs. Throughput is payload acknowledged per second.
//!
//! `granularity = "segment"` tracks the stream as TCP clocks it instead:
//! units of two full segments, each acknowledged by one delayed ACK that
//! releases the next unit, so that every ACK is a separate message through
//! the NIC and the driver domain (the default, `message`, is the original
//! model's coarser unit).

use super::{rate, GuestCtx, IoKind, Rng, Workload, WorkloadInfo};
use crate::domain::WorkItem;
use crate::io::packets;
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::time::Time;
use serde_json::{Map, Value as Json};

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    kind: "tcp-stream",
    summary: "A bulk TCP stream (iperf / netperf TCP_STREAM) to or from a remote host, window-limited.",
    params: &[
        ParamSpec {
            name: "direction",
            unit: "",
            kind: ParamKind::Choice(&["send", "receive"]),
            default: Default::Str("send"),
            scope: ParamScope::Workload,
            doc: "send: the guest sends to the remote host; receive: the remote host sends to the guest.",
        },
        ParamSpec {
            name: "send_socket_bytes",
            unit: "bytes",
            kind: ParamKind::Int { min: 1024, max: 1 << 30 },
            default: Default::Int(16384),
            scope: ParamScope::Workload,
            doc: "Sender's socket buffer (netperf -s); in-flight data is at most twice it.",
        },
        ParamSpec {
            name: "recv_socket_bytes",
            unit: "bytes",
            kind: ParamKind::Int { min: 1024, max: 1 << 30 },
            default: Default::Int(87380),
            scope: ParamScope::Workload,
            doc: "Receiver's socket buffer (netperf -S): the advertised window.",
        },
        ParamSpec {
            name: "message_bytes",
            unit: "bytes",
            kind: ParamKind::Int { min: 0, max: 1 << 30 },
            default: Default::Int(0),
            scope: ParamScope::Workload,
            doc: "Bytes per send call (netperf -m); 0 means the send socket size.",
        },
        ParamSpec {
            name: "granularity",
            unit: "",
            kind: ParamKind::Choice(&["message", "segment"]),
            default: Default::Str("message"),
            scope: ParamScope::Workload,
            doc: "message: units of a message (at most half the window), their ACKs together; segment: units of two segments, each acknowledged by its own delayed ACK (TCP's ACK clocking).",
        },
    ],
    metrics: &["throughput_mbit_s", "bytes", "messages"],
    check: super::no_check,
    io: true,
    peers: super::no_peers,
    make: |p: &Params| {
        let send_buf = p.int("send_socket_bytes") as u64;
        let recv_buf = p.int("recv_socket_bytes") as u64;
        let msg = match p.int("message_bytes") as u64 {
            0 => send_buf,
            m => m,
        };
        let send = p.str("direction") == "send";
        let window = if send {
            recv_buf.min(2 * send_buf)
        } else {
            recv_buf
        };
        // TCP moves a send call's data in segments under the window, not
        // whole: the unit tracked here is the message or, for messages larger
        // than half the window, half the window (so that acknowledgements of
        // one unit arrive while the next is in flight, as with TCP's ACK
        // clocking), and never less than one full segment (raised to the
        // MSS at the start, when the platform's segment size is known).
        let unit = msg.min(window / 2);
        Box::new(TcpStream {
            segments: p.str("granularity") == "segment",
            send,
            msg: unit,
            window,
            inflight: 0,
            sending: false,
            bytes: 0,
            messages: 0,
            from: Time::ZERO,
        })
    },
    jobs: None,
};

/// Work item tags.
const SEND: u32 = 0;
const ACK_RX: u32 = 1;
const DATA_RX: u32 = 2;

struct TcpStream {
    /// Units of two segments (set at the start, when the MSS is known).
    segments: bool,
    send: bool,
    msg: u64,
    window: u64,
    /// Unacknowledged bytes.
    inflight: u64,
    /// The guest's sender thread is preparing a message (send direction).
    sending: bool,
    bytes: u64,
    messages: u64,
    from: Time,
}

impl TcpStream {
    fn ack_pkts(&self, mss: u64) -> u32 {
        packets(self.msg, mss).div_ceil(2)
    }

    /// Send direction: the sender thread prepares the next message if the
    /// window has room.
    fn try_send(&mut self, g: &mut GuestCtx) {
        if self.sending || self.inflight + self.msg > self.window {
            return;
        }
        self.sending = true;
        let cost = g.pkt_cpu_ns(packets(self.msg, g.mss()) as u64);
        g.push(WorkItem {
            remaining_ns: cost,
            tag: SEND,
        });
    }

    /// Receive direction: the remote host sends while the window has room.
    fn peer_fill(&mut self, g: &mut GuestCtx) {
        while self.inflight + self.msg <= self.window {
            self.inflight += self.msg;
            g.peer_send(self.msg, 0);
        }
    }

    fn acked(&mut self, now: Time) {
        self.inflight -= self.msg;
        if now >= self.from {
            self.bytes += self.msg;
            self.messages += 1;
        }
    }
}

impl Workload for TcpStream {
    fn kind(&self) -> &'static str {
        "tcp-stream"
    }

    fn start(&mut self, g: &mut GuestCtx, _rng: &mut Rng) {
        let mss = g.mss();
        self.msg = self.msg.max(mss);
        self.window = self.window.max(self.msg);
        if self.segments {
            // Two full segments per delayed ACK, never more than the window.
            self.msg = (2 * mss).min(self.window);
        }
        if self.send {
            self.try_send(g);
        } else {
            self.peer_fill(g);
        }
    }

    fn work_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, tag: u32) {
        match tag {
            SEND => {
                self.sending = false;
                self.inflight += self.msg;
                g.net_send(self.msg, 0);
                self.try_send(g);
            }
            ACK_RX => {}
            DATA_RX => {
                // The application read the message: acknowledge it.
                let pkts = self.ack_pkts(g.mss());
                g.net_send_packets(0, pkts, 0);
            }
            _ => unreachable!("tcp-stream tags"),
        }
    }

    fn io_done(&mut self, g: &mut GuestCtx, _rng: &mut Rng, kind: IoKind, _token: u64) {
        debug_assert_eq!(kind, IoKind::NetRx);
        if self.send {
            // ACKs from the remote host open the window.
            let pkts = self.ack_pkts(g.mss()) as u64;
            let cpu = g.pkt_cpu_ns(pkts);
            g.push_urgent(WorkItem {
                remaining_ns: cpu,
                tag: ACK_RX,
            });
            self.acked(g.now());
            self.try_send(g);
        } else {
            let pkts = packets(self.msg, g.mss()) as u64;
            let cpu = g.pkt_cpu_ns(pkts);
            g.push_urgent(WorkItem {
                remaining_ns: cpu,
                tag: DATA_RX,
            });
        }
    }

    fn peer_recv(&mut self, g: &mut GuestCtx, _rng: &mut Rng, _token: u64) {
        if self.send {
            // A message reached the remote host: its ACKs come back.
            let pkts = self.ack_pkts(g.mss());
            g.peer_send_packets(0, pkts, 0);
        } else {
            // The guest's ACK reached the sender.
            self.acked(g.now());
            self.peer_fill(g);
        }
    }

    fn reset_metrics(&mut self, now: Time) {
        self.from = now;
        self.bytes = 0;
        self.messages = 0;
    }

    fn metrics(&self, now: Time) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert(
            "throughput_mbit_s".into(),
            (rate(self.bytes, self.from, now) * 8.0 / 1e6).into(),
        );
        m.insert("bytes".into(), self.bytes.into());
        m.insert("messages".into(), self.messages.into());
        m
    }
}
