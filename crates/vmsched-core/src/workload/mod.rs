//! Workloads: what drives a domain's guest work.
//!
//! A workload puts [`WorkItem`]s on its domain's guest run queue, arms its own
//! timers, and reacts when an item completes (the item's continuation). Each
//! kind is one module with declared parameters and its own application
//! metrics. Randomness comes only from the workload's own seeded stream.

pub(crate) mod bsp;
mod cpu_hog;
mod disk;
mod duty_cycle;
pub mod footprint;
mod idle;
mod oltp;
mod streaming;
mod sysbench_cpu;
mod tcp_stream;
mod tiered;
mod transient;
mod web_server;
mod work_sleep;

use crate::domain::WorkItem;
use crate::engine::World;
use crate::error::ScenarioError;
use crate::ids::DomId;
pub use crate::io::{Endpoint, IoKind};
use crate::params::{ParamSpec, Params};
use crate::rng::Rng;
use crate::time::Time;
use serde_json::{Map, Value as Json};

/// What a workload may see and do, for its own domain.
pub struct GuestCtx<'a> {
    pub(crate) w: &'a mut World,
    pub(crate) dom: DomId,
}

impl GuestCtx<'_> {
    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.w.now
    }

    /// Number of VCPUs of this domain.
    pub fn nvcpus(&self) -> u32 {
        self.w.doms[self.dom.idx()].nvcpus
    }

    /// Queue `item` on the guest run queue; a halted VCPU wakes for it if every
    /// awake VCPU is busy.
    #[inline]
    pub fn push(&mut self, item: WorkItem) {
        self.w.doms[self.dom.idx()].queue.push_back(item);
        self.w.note_guest_work(self.dom);
    }

    /// Queue urgent `item` (interrupt context: a front end handling an
    /// event): it runs ahead of the guest's ordinary work and preempts it.
    #[inline]
    pub fn push_urgent(&mut self, mut item: WorkItem) {
        debug_assert!(
            item.tag <= crate::domain::TAG_MASK,
            "workload tags fit TAG_MASK"
        );
        item.tag |= crate::domain::URGENT;
        self.w.push_irq(self.dom, 0, item);
    }

    /// Send `bytes` to this domain's remote peer (through the driver
    /// domain unless this is the driver domain). The peer's side hears of it
    /// in [`Workload::peer_recv`] with `token`.
    pub fn net_send(&mut self, bytes: u64, token: u64) {
        self.w.net_send(self.dom, bytes, None, token);
    }

    /// [`GuestCtx::net_send`] with an explicit packet count (e.g. a reply
    /// plus its connection's control packets).
    pub fn net_send_packets(&mut self, bytes: u64, pkts: u32, token: u64) {
        self.w.net_send(self.dom, bytes, Some(pkts), token);
    }

    /// The remote peer sends `bytes` to this domain now; the guest hears of
    /// it in [`Workload::io_done`] with [`IoKind::NetRx`] and `token`.
    pub fn peer_send(&mut self, bytes: u64, token: u64) {
        self.w.peer_send(self.dom, bytes, None, token);
    }

    /// [`GuestCtx::peer_send`] with an explicit packet count.
    pub fn peer_send_packets(&mut self, bytes: u64, pkts: u32, token: u64) {
        self.w.peer_send(self.dom, bytes, Some(pkts), token);
    }

    /// Read (`write = false`) or write `bytes` at byte `offset` of this
    /// domain's disk; completion arrives in [`Workload::io_done`].
    pub fn disk_io(&mut self, write: bool, offset: u64, bytes: u64, token: u64) {
        self.w.disk_io(self.dom, write, offset, bytes, token);
    }

    /// Send `bytes` to domain `to` (this host's, over the driver domain's
    /// bridge, or another host's, through both NICs); `to`'s workload hears
    /// of it in [`Workload::message`] with `token`.
    pub fn send_to(&mut self, to: Endpoint, bytes: u64, token: u64) {
        self.w.net_send_to(self.dom, to, bytes, None, token);
    }

    /// This domain as an endpoint.
    pub fn me(&self) -> Endpoint {
        Endpoint {
            host: self.w.io.host,
            dom: self.dom,
        }
    }

    /// The domain called `name` on this host, if any.
    pub fn local_domain(&self, name: &str) -> Option<Endpoint> {
        self.w
            .doms
            .iter()
            .position(|d| d.name == name)
            .map(|i| Endpoint {
                host: self.w.io.host,
                dom: DomId(i as u32),
            })
    }

    /// The domain called `name` on host `host` of the cluster (or this
    /// host's, for a lone host or `host` = this host's name).
    pub fn domain(&self, host: Option<&str>, name: &str) -> Option<Endpoint> {
        match host {
            None => self.local_domain(name),
            Some(h) => self.w.directory.find(h, name),
        }
    }

    /// The platform's I/O costs (guest-side defaults of workloads).
    pub fn io_costs(&self) -> &crate::host::IoCosts {
        &self.w.platform.io
    }

    /// Guest CPU for `pkts` packets in its front end and stack: `pkts ×
    /// guest_pkt_ns`, each packet's cost drawn from the domain's cost stream
    /// when the profile's `io_cost_cv` is above 0.
    pub fn pkt_cpu_ns(&mut self, pkts: u64) -> u64 {
        let c = &self.w.platform.io;
        let rng = &mut self.w.io.cost_rngs[self.dom.idx()];
        c.fid.io_cost_cv.sum_from(rng, pkts, c.guest_pkt_ns)
    }

    /// Guest CPU for `n` disk requests in its block front end (`n ×
    /// guest_disk_ns`, varying as [`GuestCtx::pkt_cpu_ns`]).
    pub fn disk_cpu_ns(&mut self, n: u64) -> u64 {
        let c = &self.w.platform.io;
        let rng = &mut self.w.io.cost_rngs[self.dom.idx()];
        c.fid.io_cost_cv.sum_from(rng, n, c.guest_disk_ns)
    }

    /// One request's (or transaction's) application CPU of mean `mean_ns`:
    /// exactly `mean_ns`, or drawn from the domain's cost stream when the
    /// profile's `request_cpu_cv` is above 0.
    pub fn request_cpu_ns(&mut self, mean_ns: u64) -> u64 {
        let v = self.w.platform.io.fid.request_cpu_cv;
        v.draw_from(&mut self.w.io.cost_rngs[self.dom.idx()], mean_ns)
    }

    /// Is this domain the driver domain (its I/O goes straight to the devices)?
    pub fn is_driver(&self) -> bool {
        self.w.is_driver(self.dom)
    }

    /// Payload bytes per full TCP segment: the NIC's MTU less the TCP/IP
    /// headers and the platform's TCP options.
    pub fn mss(&self) -> u64 {
        self.w.io.nic.mss
    }

    /// Fire `timer(token)` at `at`.
    #[inline]
    pub fn arm_timer(&mut self, at: Time, token: u32) {
        self.w.arm_workload_timer(self.dom, at, token);
    }

    /// Drop all of this guest's work, queued and in progress (the processes
    /// exit). VCPUs left without work halt.
    pub fn cancel_all_work(&mut self) {
        self.w.cancel_guest_work(self.dom);
    }

    /// Work items waiting in the guest run queue (not on a VCPU).
    pub fn queued(&self) -> usize {
        self.w.doms[self.dom.idx()].queue.len()
    }

    /// VCPU number `vcpu` of this domain yields (`SCHEDOP_yield`): once the
    /// current callback returns, the scheduler's `yield_` runs and the VCPU's
    /// PCPU reschedules at once. Ignored if that VCPU is not running.
    pub fn yield_vcpu(&mut self, vcpu: u32) {
        let d = &self.w.doms[self.dom.idx()];
        if vcpu < d.nvcpus {
            let v = crate::ids::VcpuId(d.first_vcpu + vcpu);
            self.w.guest_yields.push(v);
        }
    }

    /// Is VCPU number `vcpu` of this domain running right now?
    pub fn is_running(&self, vcpu: u32) -> bool {
        let d = &self.w.doms[self.dom.idx()];
        vcpu < d.nvcpus
            && self.w.vcpus[(d.first_vcpu + vcpu) as usize]
                .running_on
                .is_some()
    }
}

/// A workload driving one domain.
pub trait Workload: Send {
    /// Registry name.
    fn kind(&self) -> &'static str;
    /// The run starts (t = 0): queue initial work, arm timers.
    fn start(&mut self, g: &mut GuestCtx, rng: &mut Rng);
    /// A work item completed on VCPU number `vcpu` of this domain.
    fn work_done(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _vcpu: u32, _tag: u32) {}
    /// An I/O completion or a received packet reached this guest (its
    /// front end's event channel fired).
    fn io_done(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _kind: IoKind, _token: u64) {}
    /// A message another domain sent with [`GuestCtx::send_to`] arrived.
    fn message(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _from: Endpoint, _token: u64) {}
    /// Data this domain sent with [`GuestCtx::net_send`] reached the remote peer.
    fn peer_recv(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _token: u64) {}
    /// A timer armed with [`GuestCtx::arm_timer`] fired.
    fn timer(&mut self, _g: &mut GuestCtx, _rng: &mut Rng, _token: u32) {}
    /// Warm-up ended at `now`: forget what was measured so far.
    fn reset_metrics(&mut self, _now: Time) {}
    /// Application metrics at the end of the run (`now`).
    fn metrics(&self, _now: Time) -> Map<String, Json> {
        Map::new()
    }
}

/// Builds a workload from its validated parameters.
pub type WorkloadFactory = fn(&Params) -> Box<dyn Workload>;

/// A registered workload kind.
pub struct WorkloadInfo {
    /// `kind` in `[domain.workload]`.
    pub kind: &'static str,
    /// One line: what it models.
    pub summary: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
    /// Names of the metrics it reports, with units in the name.
    pub metrics: &'static [&'static str],
    /// Constructor.
    pub make: WorkloadFactory,
    /// Cross-parameter checks a declaration cannot express.
    pub check: WorkloadCheck,
    /// Does it use the I/O path (and so need a driver domain)?
    pub io: bool,
    /// The domains its parameters name as peers, checked at load time.
    pub peers: PeerList,
    /// Whether its domains together form jobs reported in the summary's
    /// `jobs` (a parallel job's processes), and how.
    pub jobs: Option<JobsSummary>,
}

/// One process of a job: (host, domain, its workload parameters, its
/// workload metrics in the summary).
pub type JobProcess<'a> = (&'a str, &'a str, &'a Params, &'a Json);

/// Groups the processes of one workload kind into jobs, for the summary's
/// `jobs`; `label_hosts` names each process `host/domain` (a cluster).
pub type JobsSummary = fn(&[JobProcess], bool) -> Json;

/// A domain a workload's parameters name: `(parameter, host, domain)`;
/// `host` is `None` for this host.
pub type PeerRef = (&'static str, Option<String>, String);

/// Lists the peers a workload's parameters name.
pub type PeerList = fn(&Params) -> Vec<PeerRef>;

/// A peer as a workload parameter names it: `dom` (this host) or
/// `host/dom` (a host of the cluster), split at the first `/`.
pub fn split_peer(s: &str) -> (Option<String>, String) {
    match s.split_once('/') {
        Some((h, d)) => (Some(h.to_string()), d.to_string()),
        None => (None, s.to_string()),
    }
}

/// A [`PeerList`] for workloads that name no peers.
pub fn no_peers(_p: &Params) -> Vec<PeerRef> {
    Vec::new()
}

/// Cross-parameter check of a workload's parameters (`path` locates them).
pub type WorkloadCheck = fn(&Params, &str) -> Result<(), ScenarioError>;

/// A [`WorkloadCheck`] that accepts everything.
pub fn no_check(_p: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

/// Every workload kind, in listing order.
pub fn registry() -> &'static [WorkloadInfo] {
    static REGISTRY: &[WorkloadInfo] = &[
        idle::INFO,
        cpu_hog::INFO,
        cpu_hog::STRESS,
        duty_cycle::INFO,
        sysbench_cpu::INFO,
        transient::INFO,
        work_sleep::INFO,
        web_server::INFO,
        tcp_stream::INFO,
        disk::DISK_READ,
        disk::IOZONE,
        oltp::INFO,
        tiered::INFO,
        streaming::INFO,
        bsp::INFO,
    ];
    REGISTRY
}

/// The jobs formed by `procs` (each with its workload kind), as the
/// summary's `jobs` array: every kind that declares [`WorkloadInfo::jobs`]
/// groups its own processes, in registry order.
pub fn jobs(procs: &[(&str, JobProcess)], label_hosts: bool) -> Json {
    let mut out = Vec::new();
    for info in registry() {
        let Some(group) = info.jobs else { continue };
        let mine: Vec<JobProcess> = procs
            .iter()
            .filter(|(kind, _)| *kind == info.kind)
            .map(|(_, p)| *p)
            .collect();
        if let Json::Array(found) = group(&mine, label_hosts) {
            out.extend(found);
        }
    }
    Json::Array(out)
}

/// Look a workload kind up.
pub fn find(kind: &str) -> Option<&'static WorkloadInfo> {
    registry().iter().find(|w| w.kind == kind)
}

/// A workload parameter's declaration (the scope every workload's have).
pub(crate) const fn wparam(
    name: &'static str,
    unit: &'static str,
    kind: crate::params::ParamKind,
    default: crate::params::Default,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        unit,
        kind,
        default,
        scope: crate::params::ParamScope::Workload,
        doc,
    }
}

/// Percentiles of a latency histogram in milliseconds, for metrics.
pub(crate) fn latency_ms(h: &crate::metrics::ResponseHistogram) -> Json {
    let ms = |ns: f64| (ns / 1e6 * 1000.0).round() / 1000.0;
    serde_json::json!({
        "p50": ms(h.quantile_ns(0.50)),
        "p95": ms(h.quantile_ns(0.95)),
        "p99": ms(h.quantile_ns(0.99)),
        "mean": ms(h.mean_ns()),
        "max": ms(h.max_ns() as f64),
    })
}

/// Per-second rate of `n` events over the measured time ending at `now`.
pub(crate) fn rate(n: u64, from: Time, now: Time) -> f64 {
    let s = now.since(from) as f64 / 1e9;
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}
