//! The host's NIC and the link beyond it.
//!
//! Full duplex: each direction serialises packets at the line rate (payload
//! plus TCP/IP headers and Ethernet framing per packet), then the propagation
//! latency applies. A packet between two hosts of a cluster is serialised
//! once on the sender's link and once more on the receiver's, as a
//! store-and-forward switch does.

use super::ETHERNET_FRAMING;
use crate::host::IoCosts;
use crate::time::Time;

/// The NIC and the link beyond it: full duplex, each direction serialises
/// packets at the line rate, then the propagation latency applies.
#[derive(Clone, Debug)]
pub struct Nic {
    pub bps: u64,
    pub latency_ns: u64,
    pub mtu: u32,
    /// Payload bytes per full segment (MTU less TCP/IP headers and options).
    pub mss: u64,
    /// TCP/IP header bytes per packet, options included.
    pub header: u64,
    /// Nanoseconds per byte on the wire when the line rate divides 8·10^9
    /// bit-nanoseconds evenly (every rate of whole Mbit/s up to 8 Gbit/s
    /// that divides it: 10, 100, 1,000 Mbit/s), else 0. [`Nic::wire_ns`]
    /// then multiplies instead of dividing: the same exact quotient without
    /// a machine division (tens of cycles) on every packet.
    ns_per_byte: u64,
    tx_free: Time,
    rx_free: Time,
}

impl Nic {
    pub fn new(c: &IoCosts) -> Nic {
        Nic {
            bps: c.nic_bps.max(1),
            latency_ns: c.nic_latency_ns,
            mtu: c.mtu,
            mss: c.mss(),
            header: c.tcpip_header(),
            ns_per_byte: exact_ns_per_byte(c.nic_bps.max(1)),
            tx_free: Time::ZERO,
            rx_free: Time::ZERO,
        }
    }

    /// Time on the wire for `bytes` of payload in `pkts` packets.
    pub fn wire_ns(&self, bytes: u64, pkts: u32) -> u64 {
        let on_wire = bytes + pkts as u64 * (self.header + ETHERNET_FRAMING);
        if self.ns_per_byte > 0 {
            if let Some(ns) = on_wire.checked_mul(self.ns_per_byte) {
                return ns;
            }
        }
        // In 64 bits while the bit-nanoseconds fit them (below 2.3 GB on
        // the wire: every packet and message), the same quotient.
        match on_wire.checked_mul(8 * 1_000_000_000) {
            Some(bit_ns) => bit_ns.div_ceil(self.bps),
            None => ((on_wire as u128 * 8 * 1_000_000_000u128).div_ceil(self.bps as u128)) as u64,
        }
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

/// 8·10^9 / `bps` when that is a whole number, else 0 (see `Nic::ns_per_byte`).
fn exact_ns_per_byte(bps: u64) -> u64 {
    const BIT_NS: u64 = 8 * 1_000_000_000;
    if BIT_NS.is_multiple_of(bps) {
        BIT_NS / bps
    } else {
        0
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
    fn nic_serialises_at_line_rate() {
        let mut n = Nic::new(&costs());
        // 100 Mbit/s, MTU 1500, 12 bytes of timestamp option: a full
        // segment carries 1448 bytes of payload and is 1448 + 52 + 38 =
        // 1538 bytes on the wire = 123.04 µs.
        assert_eq!(n.mss, 1448);
        assert_eq!(n.header, 52);
        assert_eq!(n.wire_ns(1448, 1), 123_040);
        let a = n.transmit(Time::ZERO, 1448, 1);
        let b = n.transmit(Time::ZERO, 1448, 1);
        assert_eq!(
            b.since(a),
            123_040,
            "back-to-back packets queue on the link"
        );
    }

    #[test]
    fn tcp_options_shrink_the_segment_and_lengthen_its_wire_time() {
        let with = costs();
        assert_eq!(with.tcp_options, 12, "thesis2015 sends Linux's timestamps");
        let without = IoCosts {
            tcp_options: 0,
            ..with.clone()
        };
        assert_eq!(without.mss(), 1460);
        assert_eq!(with.mss(), 1448);
        let (a, b) = (Nic::new(&without), Nic::new(&with));
        // The same 1448 payload bytes: 12 more header bytes per packet,
        // 0.96 µs more at 100 Mbit/s.
        assert_eq!(a.wire_ns(1448, 1), 122_080);
        assert_eq!(b.wire_ns(1448, 1), 123_040);
        // A full segment is 1538 bytes on the wire either way.
        assert_eq!(a.wire_ns(1460, 1), 123_040);
        // 1 MB of payload: 685 segments without options, 691 with.
        let mb = 1_000_000u64;
        let (pa, pb) = (
            crate::io::packets(mb, without.mss()),
            crate::io::packets(mb, with.mss()),
        );
        assert_eq!((pa, pb), (685, 691));
        assert_eq!(a.wire_ns(mb, pa), (mb + 685 * 78) * 80);
        assert_eq!(b.wire_ns(mb, pb), (mb + 691 * 90) * 80);
    }

    /// The multiplication by whole nanoseconds per byte gives the rounded-up
    /// quotient of the division it replaces, and a rate that does not divide
    /// 8·10^9 still divides (rounding up), as does a size whose product
    /// would not fit 64 bits.
    #[test]
    fn wire_time_by_product_is_the_quotient() {
        let reference = |on_wire: u64, bps: u64| -> u64 {
            ((on_wire as u128 * 8_000_000_000u128).div_ceil(bps as u128)) as u64
        };
        for mbit in [1u64, 10, 100, 155, 622, 1000, 3000, 8000, 10_000] {
            let bps = mbit * 1_000_000;
            let mut c = costs();
            c.nic_bps = bps;
            let n = Nic::new(&c);
            assert_eq!(
                n.ns_per_byte > 0,
                8_000_000_000u64.is_multiple_of(bps),
                "{mbit}"
            );
            let per = n.header + ETHERNET_FRAMING;
            for (bytes, pkts) in [(0u64, 1u32), (1, 1), (1448, 1), (65_536, 46), (1 << 40, 7)] {
                let on_wire = bytes + pkts as u64 * per;
                assert_eq!(
                    n.wire_ns(bytes, pkts),
                    reference(on_wire, bps),
                    "{mbit} {bytes}"
                );
            }
        }
    }
}
