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
//! module holds the state (here) and, one concept per file, the request
//! (`request`), the backends (`backend`), the NIC (`nic`), the disk
//! (`disk`), the fidelity keys and variable costs (`fidelity`) and the
//! cluster's addresses (`directory`).
mod backend;
mod directory;
mod disk;
pub(crate) mod fastmath;
mod fidelity;
mod nic;
mod normal;
mod request;

pub use backend::Backend;
pub use directory::{Directory, Endpoint};
pub use disk::Disk;
pub use fidelity::{
    vary_ns, vary_sum_ns, CostStream, IoFidelity, Variability, PROFILE_DISK_SERVICE_CV,
    PROFILE_GUEST_BATCH, PROFILE_IO_COST_CV, PROFILE_NIC_IRQ_INTERVAL, PROFILE_NIC_RX_IRQ,
    PROFILE_REQUEST_CPU_CV,
};
pub use nic::Nic;
pub use request::{packets, IoKind, IoReq, Peer, ETHERNET_FRAMING, TCPIP_HEADER};

use crate::host::IoCosts;
use crate::ids::DomId;
use crate::rng::{stream_key, Rng};
use crate::time::Time;

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
    pub cost_rngs: Vec<CostStream>,
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
            cost_rngs: (0..ndoms)
                .map(|i| CostStream::new(Rng::new(0, i as u64)))
                .collect(),
        }
    }

    /// Seed each domain's cost stream from the run's seed and the domain's
    /// name (the key of its workload's stream, suffixed), so that adding a
    /// domain does not change the others' draws.
    pub fn seed_costs<'a>(&mut self, seed: u64, names: impl Iterator<Item = &'a str>) {
        self.cost_rngs = names
            .map(|n| CostStream::new(Rng::new(seed, stream_key(&format!("{n}/io-costs")))))
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
