//! The split-driver I/O path: backends in the driver domain, the NIC, the disk.
//!
//! Guests never touch devices. A guest's transmit or disk request goes on its
//! ring and an event channel wakes the driver domain; the driver domain's
//! backend for that guest drains everything pending in one batch when it runs
//! (cost: one per-batch overhead plus a per-item cost by kind), hands the
//! requests to the devices and completed receptions back to the guest, whose
//! workload then hears of them. A driver domain that runs more often handles
//! fewer items per run and pays the per-batch overhead more often: the
//! batching is what makes the scheduling order matter.
//!
//! Backends run as *interrupt work* in the driver domain: an urgent work item
//! that takes a VCPU of the driver domain ahead of the domain's own work
//! (Linux runs netback and blkback in softirq and kernel-thread context ahead
//! of user processes). The engine owns the plumbing (`engine/io.rs`); this
//! module holds the state and the device models.

use crate::host::IoCosts;
use crate::ids::DomId;
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::rng::{stream_key, Rng};
use crate::time::Time;
use std::collections::VecDeque;

/// Profile key: the guest front end's CPU per backend batch delivered to it.
pub const PROFILE_GUEST_BATCH: ParamSpec = ParamSpec {
    name: "guest_batch_ns",
    unit: "ns",
    kind: ParamKind::Int {
        min: 0,
        max: 1_000_000_000,
    },
    default: Default::Int(0),
    scope: ParamScope::Global,
    doc: "Guest CPU per backend batch delivered to it (upcall, remap multicall, buffer refill, softirq, notify); 0 = off.",
};

/// Profile key: how received packets raise the NIC's interrupts.
pub const PROFILE_NIC_RX_IRQ: ParamSpec = ParamSpec {
    name: "nic_rx_irq",
    unit: "",
    kind: ParamKind::Choice(&["per-message", "moderated"]),
    default: Default::Str("per-message"),
    scope: ParamScope::Global,
    doc: "per-message: a message's packets arrive together and raise one interrupt; moderated: each packet arrives on its own, interrupts at most one per nic_irq_interval_us.",
};

/// Profile key: the NIC's interrupt moderation interval.
pub const PROFILE_NIC_IRQ_INTERVAL: ParamSpec = ParamSpec {
    name: "nic_irq_interval_us",
    unit: "µs",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1_000_000.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "With nic_rx_irq = moderated: least time between two receive interrupts (e1000's 1/InterruptThrottleRate); 0 = one interrupt per packet.",
};

/// Profile key: variability of the per-request application CPU.
pub const PROFILE_REQUEST_CPU_CV: ParamSpec = ParamSpec {
    name: "request_cpu_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each request's or transaction's application CPU (lognormal, mean kept); 0 = constant.",
};

/// Profile key: variability of the per-item I/O CPU costs.
pub const PROFILE_IO_COST_CV: ParamSpec = ParamSpec {
    name: "io_cost_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each packet's and disk request's CPU cost, in the backends and the front ends (lognormal, mean kept); 0 = constant.",
};

/// Profile key: variability of the disk's service times.
pub const PROFILE_DISK_SERVICE_CV: ParamSpec = ParamSpec {
    name: "disk_service_cv",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: Default::Float(0.0),
    scope: ParamScope::Global,
    doc: "Coefficient of variation of each disk request's service time (lognormal, mean kept); 0 = the deterministic seek/rotation/transfer model.",
};

/// The I/O path's fidelity settings of a platform profile. Each one's "off"
/// value (0, `per-message`) gives the model as it was before it existed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoFidelity {
    /// Guest CPU per backend batch delivered to the guest (its front end's
    /// upcall, page remapping, buffer refill, softirq and notification).
    pub guest_batch_ns: u64,
    /// Packets arrive one by one and raise moderated interrupts (instead of
    /// a message's packets arriving, and interrupting, together).
    pub nic_moderated: bool,
    /// With `nic_moderated`: least time between two receive interrupts.
    pub nic_irq_interval_ns: u64,
    /// Coefficients of variation (0 = constant costs).
    pub request_cpu_cv: f64,
    pub io_cost_cv: f64,
    pub disk_service_cv: f64,
}

impl IoFidelity {
    /// From a validated profile.
    pub fn from_params(p: &Params) -> IoFidelity {
        IoFidelity {
            guest_batch_ns: p.int("guest_batch_ns") as u64,
            nic_moderated: p.str("nic_rx_irq") == "moderated",
            nic_irq_interval_ns: (p.float("nic_irq_interval_us") * 1e3).round() as u64,
            request_cpu_cv: p.float("request_cpu_cv"),
            io_cost_cv: p.float("io_cost_cv"),
            disk_service_cv: p.float("disk_service_cv"),
        }
    }
}

/// A lognormally distributed duration with mean `mean_ns` and coefficient
/// of variation `cv`, drawn from `rng`; exactly `mean_ns` (and no draw) when
/// `cv` is 0, so that constant costs stay bit for bit what they were.
///
/// The lognormal is the usual model of service demands that are positive
/// and right-skewed (a few slow requests, most near the median): with
/// σ² = ln(1 + cv²) and μ = ln(mean) − σ²/2 its mean is `mean_ns` and its
/// standard deviation `cv × mean_ns`.
pub fn vary_ns(rng: &mut Rng, mean_ns: u64, cv: f64) -> u64 {
    if cv <= 0.0 || mean_ns == 0 {
        return mean_ns;
    }
    let s2 = (1.0 + cv * cv).ln();
    let z = standard_normal(rng);
    (mean_ns as f64 * (s2.sqrt() * z - s2 / 2.0).exp()).round() as u64
}

/// A standard normal draw (Box–Muller, one of the pair: two uniforms per draw).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]: ln is finite
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The sum of `n` independent [`vary_ns`] draws (`n` items of one cost).
pub fn vary_sum_ns(rng: &mut Rng, n: u64, mean_ns: u64, cv: f64) -> u64 {
    if cv <= 0.0 || mean_ns == 0 {
        return n * mean_ns;
    }
    (0..n).map(|_| vary_ns(rng, mean_ns, cv)).sum()
}

/// The kinds of I/O item, each with its own per-item cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum IoKind {
    /// A packet arriving for a guest.
    NetRx = 0,
    /// A packet a guest sends.
    NetTx = 1,
    /// A disk read request.
    DiskRead = 2,
    /// A disk write request.
    DiskWrite = 3,
}

impl IoKind {
    /// Is this a disk request?
    pub fn is_disk(self) -> bool {
        matches!(self, IoKind::DiskRead | IoKind::DiskWrite)
    }
}

/// Header bytes per packet besides the payload: TCP/IP headers (40) are
/// inside the MTU; Ethernet framing (preamble, header, FCS, gap: 38) is on
/// the wire.
pub const TCPIP_HEADER: u64 = 40;
/// Ethernet framing per packet on the wire.
pub const ETHERNET_FRAMING: u64 = 38;

/// A domain anywhere in the simulated system: on this host (`host` is this
/// host's index) or on another host of a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Host index in the cluster (0 for a single host).
    pub host: u32,
    pub dom: DomId,
}

/// The other end of a network item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The remote clients and servers beyond the NIC (workload peers).
    External,
    /// A domain: on this host through the driver domain's bridge, or on
    /// another host through both NICs. For a transmission, the destination;
    /// for a reception, the sender.
    Domain(Endpoint),
}

/// One request travelling through the I/O path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoReq {
    /// The guest it is for.
    pub guest: DomId,
    pub kind: IoKind,
    /// Payload bytes.
    pub bytes: u64,
    /// Packets (network) or 1 (disk).
    pub pkts: u32,
    /// Byte offset on the disk (disk requests).
    pub offset: u64,
    /// The workload's identifier, handed back on completion.
    pub token: u64,
    /// A disk request on its way back (completion), not yet delivered.
    pub completed: bool,
    /// Network items: the other end.
    pub peer: Peer,
    /// A leading packet of a message whose last packet is still to come
    /// (moderated NIC interrupts deliver packets one by one): counted and
    /// charged, but the guest's workload hears of the message only with its
    /// last packet.
    pub partial: bool,
}

impl IoReq {
    /// I/O events this item counts as: one per packet, one per disk request pass.
    #[inline]
    pub fn events(&self) -> u64 {
        self.pkts.max(1) as u64
    }

    /// Driver-domain CPU to process it; with `io_cost_cv` > 0 each packet's
    /// (or the request's) cost is drawn from `rng`.
    #[inline]
    pub fn backend_cost(&self, c: &IoCosts, rng: &mut Rng) -> u64 {
        let (n, each) = match self.kind {
            IoKind::NetRx => (self.pkts as u64, c.net_rx_ns),
            IoKind::NetTx => (self.pkts as u64, c.net_tx_ns),
            IoKind::DiskRead => (1, c.disk_read_ns),
            IoKind::DiskWrite => (1, c.disk_write_ns),
        };
        vary_sum_ns(rng, n, each, c.fid.io_cost_cv)
    }

    /// Page flips this item makes when netback passes it to the guest: one
    /// per packet received (XenMon's I/O count); 0 for anything else.
    #[inline]
    pub fn flips(&self) -> u64 {
        if self.kind == IoKind::NetRx {
            self.pkts as u64
        } else {
            0
        }
    }
}

/// Packets needed for `bytes` of payload at `mtu`.
#[inline]
pub fn packets(bytes: u64, mtu: u32) -> u32 {
    let payload = (mtu as u64).saturating_sub(TCPIP_HEADER).max(1);
    bytes.div_ceil(payload).max(1) as u32
}

/// The backend a driver domain runs for one guest (netback + blkback).
#[derive(Clone, Debug, Default)]
pub struct Backend {
    /// Items signalled and not yet taken into a batch.
    pub pending: Vec<IoReq>,
    /// The items of the pass being processed.
    pub batch: Vec<IoReq>,
    /// A backend work item exists (queued or running).
    pub active: bool,
}

/// Cumulative I/O counters of one domain (reset at the end of warm-up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Packets and payload bytes delivered to the domain.
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    /// Packets and payload bytes the domain sent (left the host).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Disk requests completed for the domain, and their bytes.
    pub disk_reads: u64,
    pub disk_read_bytes: u64,
    pub disk_writes: u64,
    pub disk_write_bytes: u64,
    /// I/O events handled on the domain's behalf by a backend.
    pub io_events: u64,
    /// The same, by kind (indexed by `IoKind as usize`): the page flips a
    /// communication-aware scheduler's accounting multiplies by per-kind costs.
    pub io_events_by_kind: [u64; 4],
    /// Packets that reached the host's NIC for the domain (the hypervisor
    /// sees each NIC interrupt), whether or not yet passed on to it.
    pub rx_arrived_pkts: u64,
    /// Packets the domain put on its transmit ring (its front end's count),
    /// whether or not yet sent.
    pub tx_queued_pkts: u64,
    /// As a driver domain: I/O events its backends processed, and batches.
    pub backend_events: u64,
    pub backend_batches: u64,
    /// Page flips netback made to the domain (packets received through its
    /// backend); as the driver domain, the flips to every guest.
    pub flips: u64,
    /// Backend batches that delivered something to the domain (each an
    /// event for its front end).
    pub frontend_batches: u64,
    /// As the host's NIC: receive interrupts raised for the domain's packets
    /// (moderated interrupts only; counted on the driver domain).
    pub nic_irqs: u64,
}

/// The NIC and the link beyond it: full duplex, each direction serialises
/// packets at the line rate, then the propagation latency applies.
#[derive(Clone, Debug)]
pub struct Nic {
    pub bps: u64,
    pub latency_ns: u64,
    pub mtu: u32,
    tx_free: Time,
    rx_free: Time,
}

impl Nic {
    pub fn new(c: &IoCosts) -> Nic {
        Nic {
            bps: c.nic_bps.max(1),
            latency_ns: c.nic_latency_ns,
            mtu: c.mtu,
            tx_free: Time::ZERO,
            rx_free: Time::ZERO,
        }
    }

    /// Time on the wire for `bytes` of payload in `pkts` packets.
    pub fn wire_ns(&self, bytes: u64, pkts: u32) -> u64 {
        let on_wire = bytes + pkts as u64 * (TCPIP_HEADER + ETHERNET_FRAMING);
        ((on_wire as u128 * 8 * 1_000_000_000u128).div_ceil(self.bps as u128)) as u64
    }

    /// Send from the host at `now`: when the last bit reaches the peer.
    pub fn transmit(&mut self, now: Time, bytes: u64, pkts: u32) -> Time {
        let start = self.tx_free.max(now);
        self.tx_free = start.after(self.wire_ns(bytes, pkts));
        self.tx_free.after(self.latency_ns)
    }

    /// A packet from another host reaches this host's switch port at `at`:
    /// when its last bit is in (the receive side serialises it again, as a
    /// store-and-forward switch does).
    pub fn arrive(&mut self, at: Time, bytes: u64, pkts: u32) -> Time {
        let start = at.max(self.rx_free);
        self.rx_free = start.after(self.wire_ns(bytes, pkts));
        self.rx_free
    }

    /// A peer sends `bytes` in `pkts` packets at `now`: reserves the link
    /// and returns when the first bit reaches the host's NIC (packet `i`'s
    /// last bit is in `wire_ns` of the first `i + 1` packets later).
    pub fn receive_start(&mut self, now: Time, bytes: u64, pkts: u32) -> Time {
        let start = now.after(self.latency_ns).max(self.rx_free);
        self.rx_free = start.after(self.wire_ns(bytes, pkts));
        start
    }

    /// A peer sends at `now`: when the last bit reaches the host's NIC.
    pub fn receive(&mut self, now: Time, bytes: u64, pkts: u32) -> Time {
        let start = now.after(self.latency_ns).max(self.rx_free);
        self.rx_free = start.after(self.wire_ns(bytes, pkts));
        self.rx_free
    }
}

/// A disk: one request in service at a time, FIFO queue. A request that
/// starts where the previous one ended is sequential (transfer only);
/// otherwise it pays an average seek and half a revolution.
#[derive(Clone, Debug)]
pub struct Disk {
    pub seek_ns: u64,
    pub rotation_ns: u64,
    pub bps: u64,
    pub request_ns: u64,
    pub queue: VecDeque<IoReq>,
    pub busy: bool,
    /// Where the head is (the end of the last request served).
    pub head: u64,
}

impl Disk {
    pub fn new(c: &IoCosts) -> Disk {
        Disk {
            seek_ns: c.disk_seek_ns,
            rotation_ns: c.disk_rotation_ns,
            bps: c.disk_bps.max(1),
            request_ns: c.disk_request_ns,
            queue: VecDeque::new(),
            busy: false,
            head: 0,
        }
    }

    /// Service time of `r` given the head position; moves the head.
    pub fn service_ns(&mut self, r: &IoReq) -> u64 {
        let positioning = if r.offset == self.head {
            0
        } else {
            self.seek_ns + self.rotation_ns
        };
        self.head = r.offset + r.bytes;
        let transfer = ((r.bytes as u128 * 1_000_000_000u128).div_ceil(self.bps as u128)) as u64;
        self.request_ns + positioning + transfer
    }
}

/// Something in flight outside any CPU: on the wire or in the disk.
#[derive(Clone, Copy, Debug)]
pub enum InFlight {
    /// Data a domain sent reaches its remote peer.
    PeerRecv { dom: DomId, token: u64 },
    /// A packet from a remote peer reaches the host's NIC.
    NicArrive(IoReq),
    /// The disk finished a request.
    DiskDone(IoReq),
    /// A network item reaches the driver domain's own stack (no backend).
    Deliver(IoReq),
    /// The NIC's moderation timer expires: it raises the receive interrupt
    /// for the packets it holds.
    NicIrq,
}

/// All I/O state of a host.
#[derive(Clone, Debug)]
pub struct IoState {
    /// The driver domain (the first domain with `driver = true`).
    pub driver: Option<DomId>,
    /// One backend per domain (used for guests of the driver domain).
    pub backends: Vec<Backend>,
    pub stats: Vec<IoStats>,
    pub nic: Nic,
    pub disk: Disk,
    /// This host's index in its cluster (0 alone).
    pub host: u32,
    /// Packets on their way to other hosts: when they reach the other
    /// host's NIC, and the item as that host receives it. The cluster moves
    /// them; a lone host never has any.
    pub outbox: Vec<(Time, u32, IoReq)>,
    /// Slab of in-flight operations; events carry the slot.
    pub slots: Vec<Option<InFlight>>,
    pub free: Vec<u32>,
    /// Moderated NIC interrupts: the driver domain's own packets and the
    /// guests whose idle backends have packets waiting for an interrupt,
    /// when the last interrupt was raised, and whether the moderation timer
    /// is armed.
    pub nic_held: Vec<IoReq>,
    pub nic_wake: Vec<DomId>,
    pub nic_last_irq: Option<Time>,
    pub nic_irq_armed: bool,
    /// Per domain: the stream that draws its variable I/O costs (its
    /// backend's, its front end's, its disk requests' service times),
    /// apart from its workload's stream so that switching variability on
    /// does not move the workload's own draws.
    pub cost_rngs: Vec<Rng>,
}

impl IoState {
    pub fn new(ndoms: usize, driver: Option<DomId>, c: &IoCosts) -> IoState {
        IoState {
            driver,
            backends: vec![Backend::default(); ndoms],
            stats: vec![IoStats::default(); ndoms],
            nic: Nic::new(c),
            disk: Disk::new(c),
            host: 0,
            outbox: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            nic_held: Vec::new(),
            nic_wake: Vec::new(),
            nic_last_irq: None,
            nic_irq_armed: false,
            cost_rngs: (0..ndoms).map(|i| Rng::new(0, i as u64)).collect(),
        }
    }

    /// Seed each domain's cost stream from the run's seed and the domain's
    /// name (the key of its workload's stream, suffixed), so that adding a
    /// domain does not change the others' draws.
    pub fn seed_costs<'a>(&mut self, seed: u64, names: impl Iterator<Item = &'a str>) {
        self.cost_rngs = names
            .map(|n| Rng::new(seed, stream_key(&format!("{n}/io-costs"))))
            .collect();
    }

    /// Keep `op` until its event fires; returns its slot.
    pub fn park(&mut self, op: InFlight) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(op);
                i
            }
            None => {
                self.slots.push(Some(op));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Take the operation of `slot` back.
    pub fn take(&mut self, slot: u32) -> InFlight {
        let op = self.slots[slot as usize]
            .take()
            .expect("an in-flight slot fires once");
        self.free.push(slot);
        op
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Platform;

    fn costs() -> IoCosts {
        Platform::builtin("thesis2015", "p").unwrap().io
    }

    #[test]
    fn packets_round_up() {
        assert_eq!(packets(1, 1500), 1);
        assert_eq!(packets(1460, 1500), 1);
        assert_eq!(packets(1461, 1500), 2);
        assert_eq!(packets(10 * 1024, 1500), 8);
    }

    #[test]
    fn nic_serialises_at_line_rate() {
        let mut n = Nic::new(&costs());
        // 100 Mbit/s: one full packet is 1538 bytes on the wire = 123.04 µs.
        assert_eq!(n.wire_ns(1460, 1), 123_040);
        let a = n.transmit(Time::ZERO, 1460, 1);
        let b = n.transmit(Time::ZERO, 1460, 1);
        assert_eq!(
            b.since(a),
            123_040,
            "back-to-back packets queue on the link"
        );
    }

    #[test]
    fn disk_sequential_vs_random() {
        let mut d = Disk::new(&costs());
        let r = |offset| IoReq {
            guest: DomId(0),
            kind: IoKind::DiskRead,
            bytes: 1 << 20,
            pkts: 1,
            offset,
            token: 0,
            completed: false,
            peer: Peer::External,
            partial: false,
        };
        let first = d.service_ns(&r(1 << 30)); // random: seek + rotation
        let seq = d.service_ns(&r((1 << 30) + (1 << 20)));
        assert_eq!(first - seq, d.seek_ns + d.rotation_ns);
        // 1 MiB at 56.5 MB/s plus 100 µs.
        assert_eq!(seq, 100_000 + (1u64 << 20) * 1_000_000_000 / 56_500_000 + 1);
    }
}

/// The names of every host of a cluster and of their domains, for
/// workloads to find their peers by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directory {
    /// (host name, its domains' names), in host index order.
    pub hosts: Vec<(String, Vec<String>)>,
}

impl Directory {
    /// The domain `dom` of host `host`.
    pub fn find(&self, host: &str, dom: &str) -> Option<Endpoint> {
        let h = self.hosts.iter().position(|(n, _)| n == host)?;
        let d = self.hosts[h].1.iter().position(|n| n == dom)?;
        Some(Endpoint {
            host: h as u32,
            dom: DomId(d as u32),
        })
    }
}
