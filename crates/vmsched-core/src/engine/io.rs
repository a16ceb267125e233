//! The engine's side of the I/O path: requests entering the rings, the
//! driver domain's backend passes, the devices' completions, and delivery to
//! the workloads. The state and the device models are in [`crate::io`].

use super::{Event, Simulation, World};
use crate::domain::{WorkItem, BACKEND, TAG_MASK, URGENT};
use crate::ids::DomId;
use crate::io::{packets, Endpoint, InFlight, IoKind, IoReq, Peer};
use crate::time::Time;

/// `remaining_ns` of a backend work item not yet started: its batch is
/// taken, and its cost known, when a VCPU of the driver domain starts it.
pub(super) const UNSTARTED: u64 = u64::MAX - 1;

/// The guest id in the tag of a front end's per-batch work item (an
/// engine-owned item on a guest VCPU, tagged like a backend's so that no
/// workload sees it; no domain has this id).
const FRONT_END: u32 = TAG_MASK;

impl World {
    /// Is `dom` the driver domain (its own I/O goes straight to the devices)?
    #[inline]
    pub(crate) fn is_driver(&self, dom: DomId) -> bool {
        self.io.driver == Some(dom)
    }

    /// Queue urgent `item` on the VCPU of `dom` that event channel
    /// `channel` is bound to ([`crate::domain::Domain::irq_vcpu`]).
    pub(crate) fn push_irq(&mut self, dom: DomId, channel: u32, item: WorkItem) {
        let d = &self.doms[dom.idx()];
        let v = d.first_vcpu + d.irq_vcpu(channel);
        self.vcpus[v as usize].irq.push_back(item);
        self.note_guest_work(dom);
    }

    /// Put `op` in flight until `at`.
    fn in_flight(&mut self, at: Time, op: InFlight) {
        let slot = self.io.park(op);
        self.queue.push(at.max(self.now), Event::Io { slot });
    }

    /// A request reaches the driver domain: on the guest's ring, and the
    /// event channel wakes the backend unless it is already working.
    fn signal_backend(&mut self, r: IoReq) {
        let guest = r.guest;
        if self.ring_backend(r) {
            self.wake_backend(guest);
        }
    }

    /// Put `r` on its guest's ring for the driver domain's backend; true if
    /// the backend is idle (something must wake it).
    fn ring_backend(&mut self, r: IoReq) -> bool {
        if self.io.driver.is_none() {
            // Validation rejects I/O workloads without a driver domain.
            self.violation(format!(
                "{} does I/O but the host has no driver domain",
                self.doms[r.guest.idx()].name
            ));
            return false;
        }
        let b = &mut self.io.backends[r.guest.idx()];
        b.pending.push(r);
        !b.active
    }

    /// Wake the idle backend of `guest`: an urgent work item on the driver
    /// domain's VCPU its event channel is bound to.
    fn wake_backend(&mut self, guest: DomId) {
        let Some(driver) = self.io.driver else {
            return;
        };
        let b = &mut self.io.backends[guest.idx()];
        if b.active || b.pending.is_empty() {
            return;
        }
        b.active = true;
        let item = WorkItem {
            remaining_ns: UNSTARTED,
            tag: URGENT | BACKEND | guest.0,
        };
        self.push_irq(driver, guest.0, item);
    }

    /// A driver-domain VCPU starts the backend of `guest`: it takes
    /// everything signalled so far into one batch. Returns the batch's cost:
    /// the per-batch overhead plus each item's.
    pub(super) fn begin_batch(&mut self, guest: DomId) -> u64 {
        let c = &self.platform.io;
        let b = &mut self.io.backends[guest.idx()];
        debug_assert!(b.batch.is_empty());
        std::mem::swap(&mut b.pending, &mut b.batch);
        let rng = &mut self.io.cost_rngs[guest.idx()];
        let cost: u64 = b.batch.iter().map(|r| r.backend_cost(c, rng)).sum();
        if let Some(d) = self.io.driver {
            self.io.stats[d.idx()].backend_batches += 1;
        }
        c.batch_ns + cost
    }

    /// `dom` sends `bytes` to its remote peer.
    pub(crate) fn net_send(&mut self, dom: DomId, bytes: u64, pkts: Option<u32>, token: u64) {
        let pkts = pkts
            .unwrap_or_else(|| packets(bytes, self.io.nic.mss))
            .max(1);
        let r = IoReq {
            guest: dom,
            kind: IoKind::NetTx,
            bytes,
            pkts,
            offset: 0,
            token,
            completed: false,
            peer: Peer::External,
            partial: false,
        };
        self.io.stats[dom.idx()].tx_queued_pkts += pkts as u64;
        if self.is_driver(dom) {
            self.transmit(r);
        } else {
            self.signal_backend(r);
        }
    }

    /// `dom` sends `bytes` to domain `to`: on this host over the driver
    /// domain's bridge (both backends work on it), to another host through
    /// both NICs. `to` hears of it in `Workload::message`.
    pub(crate) fn net_send_to(
        &mut self,
        dom: DomId,
        to: Endpoint,
        bytes: u64,
        pkts: Option<u32>,
        token: u64,
    ) {
        let pkts = pkts
            .unwrap_or_else(|| packets(bytes, self.io.nic.mss))
            .max(1);
        let r = IoReq {
            guest: dom,
            kind: IoKind::NetTx,
            bytes,
            pkts,
            offset: 0,
            token,
            completed: false,
            peer: Peer::Domain(to),
            partial: false,
        };
        if self.is_driver(dom) {
            self.transmit(r);
        } else {
            self.signal_backend(r);
        }
    }

    /// Put `r` on the wire towards its peer (or across the bridge).
    fn transmit(&mut self, r: IoReq) {
        if let Peer::Domain(to) = r.peer {
            let st = &mut self.io.stats[r.guest.idx()];
            st.tx_pkts += r.pkts as u64;
            st.tx_bytes += r.bytes;
            let from = Endpoint {
                host: self.io.host,
                dom: r.guest,
            };
            let rx = IoReq {
                guest: to.dom,
                kind: IoKind::NetRx,
                peer: Peer::Domain(from),
                ..r
            };
            if to.host == self.io.host {
                // Bridged in the driver domain: straight to the receiver's
                // backend (or to the driver domain itself).
                self.bridge_in(rx);
            } else {
                let now = self.now;
                let at = self.io.nic.transmit(now, r.bytes, r.pkts);
                self.io.outbox.push((at, to.host, rx));
            }
            return;
        }
        let now = self.now;
        let at = self.io.nic.transmit(now, r.bytes, r.pkts);
        let st = &mut self.io.stats[r.guest.idx()];
        st.tx_pkts += r.pkts as u64;
        st.tx_bytes += r.bytes;
        self.in_flight(
            at,
            InFlight::PeerRecv {
                dom: r.guest,
                token: r.token,
            },
        );
    }

    /// `dom`'s remote peer sends it `bytes` now.
    pub(crate) fn peer_send(&mut self, dom: DomId, bytes: u64, pkts: Option<u32>, token: u64) {
        let pkts = pkts
            .unwrap_or_else(|| packets(bytes, self.io.nic.mss))
            .max(1);
        let now = self.now;
        let r = IoReq {
            guest: dom,
            kind: IoKind::NetRx,
            bytes,
            pkts,
            offset: 0,
            token,
            completed: false,
            peer: Peer::External,
            partial: false,
        };
        if self.platform.io.fid.nic_moderated && pkts > 1 {
            // Each packet reaches the NIC when its own last bit is in.
            let start = self.io.nic.receive_start(now, bytes, pkts);
            let mss = self.io.nic.mss;
            let (mut left, mut sent) = (bytes, 0u64);
            for i in 1..=pkts {
                let b = if i == pkts { left } else { left.min(mss) };
                left -= b;
                sent += b;
                let at = start.after(self.io.nic.wire_ns(sent, i));
                let one = IoReq {
                    bytes: b,
                    pkts: 1,
                    partial: i < pkts,
                    ..r
                };
                self.in_flight(at, InFlight::NicArrive(one));
            }
            return;
        }
        let at = self.io.nic.receive(now, bytes, pkts);
        self.in_flight(at, InFlight::NicArrive(r));
    }

    /// `dom` reads or writes `bytes` at `offset` on its disk.
    pub(crate) fn disk_io(&mut self, dom: DomId, write: bool, offset: u64, bytes: u64, token: u64) {
        let r = IoReq {
            guest: dom,
            kind: if write {
                IoKind::DiskWrite
            } else {
                IoKind::DiskRead
            },
            bytes,
            pkts: 1,
            offset,
            token,
            completed: false,
            peer: Peer::External,
            partial: false,
        };
        if self.is_driver(dom) {
            self.disk_submit(r);
        } else {
            self.signal_backend(r);
        }
    }

    /// Queue `r` at the disk; start it if the disk is free (and the queue
    /// not plugged by a backend pass under way).
    fn disk_submit(&mut self, r: IoReq) {
        self.io.disk.queue.push_back(r);
        if !self.io.disk.plugged {
            self.disk_start();
        }
    }

    fn disk_start(&mut self) {
        if self.io.disk.busy() {
            return;
        }
        let Some((r, bytes)) = self.io.disk.take_next() else {
            return;
        };
        let t = self.io.disk.service_ns(&IoReq { bytes, ..r });
        let v = self.platform.io.fid.disk_service_cv;
        let t = v.draw_from(&mut self.io.cost_rngs[r.guest.idx()], t);
        self.io.disk.note_service(self.now, t);
        let at = self.now.after(t);
        self.in_flight(at, InFlight::DiskDone(r));
        // The requests merged into it complete with it.
        let mut merged = std::mem::take(&mut self.io.disk.merged);
        for m in merged.drain(..) {
            self.in_flight(at, InFlight::DiskDone(m));
        }
        self.io.disk.merged = merged;
    }

    /// A request of the one in service is done: the disk is free once all
    /// of its merged requests are.
    fn disk_part_done(&mut self) {
        self.io.disk.in_service = self.io.disk.in_service.saturating_sub(1);
        if self.io.disk.in_service == 0 {
            self.disk_start();
        }
    }
}

impl World {
    /// A network item for a domain of this host enters its driver domain
    /// (from the NIC or the bridge).
    fn bridge_in(&mut self, r: IoReq) {
        if self.is_driver(r.guest) {
            // Delivered at once; `Event::Io` with a ready slot does it in order.
            let now = self.now;
            self.in_flight(now, InFlight::Deliver(r));
        } else {
            self.signal_backend(r);
        }
    }
}

impl Simulation {
    /// A packet from another host of the cluster reaches this host's NIC
    /// port at `at` (the cluster calls this when the cluster's time reaches
    /// `at`, so packets queue at the port in the order they get there).
    pub fn inject_from_host(&mut self, at: Time, r: IoReq) {
        let (bytes, pkts) = (r.bytes, r.pkts);
        let t = self.w.io.nic.arrive(at, bytes, pkts);
        self.w.in_flight(t, InFlight::NicArrive(r));
    }

    /// Packets this host sent to other hosts since the last call.
    pub fn take_outbox(&mut self) -> Vec<(Time, u32, IoReq)> {
        std::mem::take(&mut self.w.io.outbox)
    }

    /// Something in flight arrived (`Event::Io`).
    pub(super) fn io_event(&mut self, slot: u32) {
        match self.w.io.take(slot) {
            InFlight::PeerRecv { dom, token } => {
                self.call_workload(dom, |wl, g, rng| wl.peer_recv(g, rng, token));
            }
            InFlight::NicArrive(r) => {
                if self.w.platform.io.fid.nic_moderated {
                    self.nic_hold(r);
                } else {
                    self.nic_interrupt(r);
                    self.dispatch_guest_work();
                }
            }
            InFlight::NicIrq => self.nic_irq(),
            InFlight::Deliver(r) => self.deliver(r),
            InFlight::DiskDone(mut r) => {
                self.w.disk_part_done();
                if self.w.is_driver(r.guest) {
                    self.deliver(r);
                } else {
                    // The completion interrupt reaches the driver domain;
                    // blkback passes the response back through the ring.
                    r.completed = true;
                    self.w.signal_backend(r);
                    self.dispatch_guest_work();
                }
            }
        }
    }

    /// The NIC's receive interrupt announces `r`: to the driver domain's own
    /// stack, or to the backend of the guest it is for.
    fn nic_interrupt(&mut self, r: IoReq) {
        self.w.io.stats[r.guest.idx()].rx_arrived_pkts += r.pkts as u64;
        if self.w.is_driver(r.guest) {
            self.deliver(r);
        } else {
            self.w.signal_backend(r);
        }
    }

    /// Moderated interrupts (e1000's interrupt throttling, with NAPI
    /// polling). A packet is in the receive ring as soon as it arrives: a
    /// backend pass that is running or queued takes it with the rest (the
    /// driver polls the ring while it has work, with its interrupt off).
    /// Only a packet for an idle backend needs an interrupt: at once if the
    /// last one is at least the moderation interval old, otherwise when it
    /// is; that interrupt wakes every backend with packets waiting.
    fn nic_hold(&mut self, r: IoReq) {
        self.w.io.stats[r.guest.idx()].rx_arrived_pkts += r.pkts as u64;
        if self.w.is_driver(r.guest) {
            self.w.io.nic_held.push(r);
        } else {
            let guest = r.guest;
            if !self.w.ring_backend(r) {
                return; // a pass will poll it
            }
            if !self.w.io.nic_wake.contains(&guest) {
                self.w.io.nic_wake.push(guest);
            }
        }
        let io = &mut self.w.io;
        if io.nic_irq_armed {
            return;
        }
        let interval = self.w.platform.io.fid.nic_irq_interval_ns;
        let now = self.w.now;
        let due = io.nic_last_irq.map_or(now, |t| t.after(interval));
        if due <= now {
            self.nic_irq();
        } else {
            io.nic_irq_armed = true;
            self.w.in_flight(due, InFlight::NicIrq);
        }
    }

    /// The NIC raises its receive interrupt: the driver domain's own packets
    /// reach its stack, and the idle backends with packets waiting wake.
    fn nic_irq(&mut self) {
        let io = &mut self.w.io;
        io.nic_irq_armed = false;
        io.nic_last_irq = Some(self.w.now);
        if let Some(d) = io.driver {
            io.stats[d.idx()].nic_irqs += 1;
        }
        let mut wake = std::mem::take(&mut io.nic_wake);
        for g in wake.drain(..) {
            self.w.wake_backend(g);
        }
        self.w.io.nic_wake = wake;
        let mut held = std::mem::take(&mut self.w.io.nic_held);
        for r in held.drain(..) {
            self.deliver(r);
        }
        self.w.io.nic_held = held;
        self.dispatch_guest_work();
    }

    /// The backend of `guest` finished its current work item (the batch
    /// overhead, or a pass over the items it took).
    pub(super) fn backend_step(&mut self, guest: DomId) {
        if guest.0 == FRONT_END {
            return; // a guest front end's per-batch work: nothing follows it
        }
        let driver = self.w.io.driver.expect("backends run in a driver domain");
        let b = &mut self.w.io.backends[guest.idx()];
        {
            let batch = std::mem::take(&mut b.batch);
            let events: u64 = batch.iter().map(|r| r.events()).sum();
            let flips: u64 = batch.iter().map(|r| r.flips()).sum();
            let st = &mut self.w.io.stats[driver.idx()];
            st.backend_events += events;
            st.flips += flips;
            let gst = &mut self.w.io.stats[guest.idx()];
            gst.io_events += events;
            gst.flips += flips;
            for r in &batch {
                gst.io_events_by_kind[r.kind as usize] += r.events();
            }
            if batch.iter().any(|r| r.kind == IoKind::NetRx || r.completed) {
                // The batch notifies the guest: its front end's upcall,
                // remapping, buffer refill and softirq run first, on the
                // VCPU its event channel is bound to.
                gst.frontend_batches += 1;
                let front_ns = self.w.platform.io.fid.guest_batch_ns;
                if front_ns > 0 {
                    let item = WorkItem {
                        remaining_ns: front_ns,
                        tag: URGENT | BACKEND | FRONT_END,
                    };
                    self.w.push_irq(guest, 0, item);
                }
            }
            // blkback plugs the driver domain's queue for the pass and
            // unplugs it after: the pass's requests reach the disk together
            // (and merge) when merging is on.
            let plug = self.w.io.disk.max_request > 0;
            self.w.io.disk.plugged = plug;
            for r in &batch {
                self.route_from_backend(*r);
            }
            if plug {
                self.w.io.disk.plugged = false;
                self.w.disk_start();
            }
            // Hand the buffer back for reuse.
            let b = &mut self.w.io.backends[guest.idx()];
            let mut batch = batch;
            batch.clear();
            b.batch = batch;
        }
        let b = &mut self.w.io.backends[guest.idx()];
        if b.pending.is_empty() {
            b.active = false;
            return;
        }
        // More arrived meanwhile: another pass over everything signalled
        // so far, without a new wake-up's overhead. It queues behind the
        // other backends' work on this VCPU, so that a busy guest cannot
        // starve the others (backends take turns).
        std::mem::swap(&mut b.pending, &mut b.batch);
        let cost: u64 = {
            let c = &self.w.platform.io;
            let rng = &mut self.w.io.cost_rngs[guest.idx()];
            b.batch.iter().map(|r| r.backend_cost(c, rng)).sum()
        };
        let item = WorkItem {
            remaining_ns: cost,
            tag: URGENT | BACKEND | guest.0,
        };
        self.w.push_irq(driver, guest.0, item);
    }

    /// The backend processed `r`: on to the device, or back to the guest.
    fn route_from_backend(&mut self, r: IoReq) {
        match r.kind {
            IoKind::NetTx => self.w.transmit(r),
            IoKind::NetRx => self.deliver(r),
            IoKind::DiskRead | IoKind::DiskWrite => {
                if r.completed {
                    self.deliver(r);
                } else {
                    self.w.disk_submit(r);
                }
            }
        }
    }

    /// `r` reaches its guest (an event channel to the front end).
    fn deliver(&mut self, r: IoReq) {
        let st = &mut self.w.io.stats[r.guest.idx()];
        match r.kind {
            IoKind::NetRx => {
                st.rx_pkts += r.pkts as u64;
                st.rx_bytes += r.bytes;
            }
            IoKind::DiskRead => {
                st.disk_reads += 1;
                st.disk_read_bytes += r.bytes;
            }
            IoKind::DiskWrite => {
                st.disk_writes += 1;
                st.disk_write_bytes += r.bytes;
            }
            IoKind::NetTx => unreachable!("transmissions are not delivered to guests"),
        }
        if r.partial {
            return; // the workload hears of the message with its last packet
        }
        let (kind, token) = (r.kind, r.token);
        if let Peer::Domain(from) = r.peer {
            self.call_workload(r.guest, |wl, g, rng| wl.message(g, rng, from, token));
        } else {
            self.call_workload(r.guest, |wl, g, rng| wl.io_done(g, rng, kind, token));
        }
    }
}
