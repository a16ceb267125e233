//! One request on its way through the I/O path, and how big it is on the
//! wire.
//!
//! A request is a network message (some packets, to or from a peer) or a
//! disk request (one read or write at an offset). It carries its guest, its
//! kind, its size and the workload's token from the guest's ring through the
//! backend and the device and back, so that the workload hears of exactly
//! what it asked for. Its kind selects its per-item CPU cost.

use super::CostStream;
use super::Endpoint;
use crate::host::IoCosts;
use crate::ids::DomId;

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

/// Header bytes per packet besides the payload: the fixed TCP and IPv4
/// headers (20 + 20) are inside the MTU, and so are the TCP options the
/// platform's stack sends on every segment (`tcp_options_bytes`, see
/// [`crate::host::IoCosts::tcpip_header`]); Ethernet framing (preamble,
/// header, FCS, gap: 38) is on the wire besides.
pub const TCPIP_HEADER: u64 = 40;

/// Ethernet framing per packet on the wire.
pub const ETHERNET_FRAMING: u64 = 38;

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
    pub fn backend_cost(&self, c: &IoCosts, costs: &mut CostStream) -> u64 {
        let (n, each) = match self.kind {
            IoKind::NetRx => (self.pkts as u64, c.net_rx_ns),
            IoKind::NetTx => (self.pkts as u64, c.net_tx_ns),
            IoKind::DiskRead => (1, c.disk_read_ns),
            IoKind::DiskWrite => (1, c.disk_write_ns),
        };
        c.fid.io_cost_cv.sum_from(costs, n, each)
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

/// Packets needed for `bytes` of payload in segments of at most `mss`
/// payload bytes ([`crate::host::IoCosts::mss`]).
#[inline]
pub fn packets(bytes: u64, mss: u64) -> u32 {
    bytes.div_ceil(mss.max(1)).max(1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_up() {
        assert_eq!(packets(1, 1460), 1);
        assert_eq!(packets(1460, 1460), 1);
        assert_eq!(packets(1461, 1460), 2);
        assert_eq!(packets(10 * 1024, 1460), 8);
        // With 12 bytes of timestamp option the MSS is 1448.
        assert_eq!(packets(1448, 1448), 1);
        assert_eq!(packets(1460, 1448), 2);
        assert_eq!(packets(100 * 1448, 1448), 100);
        assert_eq!(packets(100 * 1460, 1448), 101);
    }
}
