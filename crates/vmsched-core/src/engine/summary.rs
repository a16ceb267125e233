//! The run's results as `summary.json` (one JSON object).

use super::Simulation;
use crate::domain::RunState;
use crate::ids::DomId;
use crate::time::{Time, NS_PER_S};
use serde_json::{json, Map, Value as Json};

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

impl Simulation {
    /// Measured (post-warm-up) simulated time so far, ns.
    pub fn measured_ns(&self) -> u64 {
        self.w.now.since(self.measure_from)
    }

    /// The results as the `summary.json` object. `wall_s` is the wall-clock
    /// time the caller measured for the run.
    pub fn summary(&self, wall_s: f64) -> Json {
        let parts = self.summary_parts(wall_s);
        let domains: Vec<Json> = (0..parts.domains()).map(|d| parts.domain(d)).collect();
        let mut top = parts.top;
        top["domains"] = Json::Array(domains);
        top
    }

    /// The summary in parts, for a writer that need not hold it whole (a
    /// large host's domain entries are most of it): the object with an
    /// empty `domains` list, and each domain's entry built when asked.
    pub fn summary_parts(&self, wall_s: f64) -> SummaryParts<'_> {
        let now = self.w.now;
        let elapsed = self.measured_ns();
        let workloads: Vec<Json> = (0..self.w.doms.len())
            .map(|d| {
                let mut wl = Map::new();
                wl.insert(
                    "kind".into(),
                    Json::from(self.scenario.domains[d].workload.kind.clone()),
                );
                wl.extend(self.workloads[d].metrics(now));
                Json::Object(wl)
            })
            .collect();
        let jobs = self.jobs(&workloads);
        let pcpus: Vec<Json> = self
            .w
            .pcpus
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let idle = p.idle_ns + p.idle_since.map_or(0, |s| now.since(s));
                json!({"pcpu": i, "busy_pct": 100.0 - pct(idle, elapsed), "schedules": p.schedules})
            })
            .collect();
        let mut counters = Map::new();
        for (k, v) in self.sched.counters() {
            counters.insert(k.into(), v.into());
        }
        let topo = &self.w.topo;
        let top = json!({
            "vmsched_version": env!("CARGO_PKG_VERSION"),
            "title": self.scenario.title,
            "scheduler": self.scenario.scheduler.name,
            "scheduler_params": self.global_params.to_json(),
            "scheduler_counters": counters,
            "seed": self.scenario.run.seed,
            "duration_s": self.scenario.run.duration_ns as f64 / NS_PER_S as f64,
            "warmup_s": self.scenario.run.warmup_ns as f64 / NS_PER_S as f64,
            "measured_s": elapsed as f64 / NS_PER_S as f64,
            "events": self.events(),
            "wall_s": wall_s,
            "host": {
                "pcpus": topo.npcpus(),
                "sockets": topo.sockets,
                "cores_per_socket": topo.cores_per_socket,
                "threads_per_core": topo.threads_per_core,
                "profile": self.w.platform.name,
                "ctx_switch_ns": self.w.platform.ctx_switch_ns,
                "ipi_latency_ns": self.w.platform.ipi_latency_ns,
                "pcpus_detail": pcpus,
                "io": {
                    "batch_ns": self.w.platform.io.batch_ns,
                    "net_rx_ns": self.w.platform.io.net_rx_ns,
                    "net_tx_ns": self.w.platform.io.net_tx_ns,
                    "disk_read_ns": self.w.platform.io.disk_read_ns,
                    "disk_write_ns": self.w.platform.io.disk_write_ns,
                    "guest_pkt_ns": self.w.platform.io.guest_pkt_ns,
                    "guest_disk_ns": self.w.platform.io.guest_disk_ns,
                    "nic_mbit": self.w.platform.io.nic_bps as f64 / 1e6,
                    "nic_latency_us": self.w.platform.io.nic_latency_ns as f64 / 1e3,
                    "mtu": self.w.platform.io.mtu,
                    "tcp_options_bytes": self.w.platform.io.tcp_options,
                    "disk_transfer_mb_s": self.w.platform.io.disk_bps as f64 / 1e6,
                    "disk_seek_ms": self.w.platform.io.disk_seek_ns as f64 / 1e6,
                    "disk_rotation_ms": self.w.platform.io.disk_rotation_ns as f64 / 1e6,
                    "disk_busy_pct": if elapsed > 0 {
                        100.0 * self.w.io.disk.busy_at(now) as f64 / elapsed as f64
                    } else {
                        0.0
                    },
                },
            },
            "domains": [],
            "jobs": jobs,
        });
        SummaryParts {
            sim: self,
            now,
            elapsed,
            workloads,
            top,
        }
    }

    /// The jobs among this host's domains (`workloads`: their summaries'
    /// `workload` entries), as their workloads group them.
    fn jobs(&self, workloads: &[Json]) -> Json {
        let host = self.w.directory.hosts[self.w.io.host as usize].0.as_str();
        let procs: Vec<_> = self
            .scenario
            .domains
            .iter()
            .zip(workloads)
            .map(|(d, w)| {
                let p = (host, d.name.as_str(), &d.workload.params, w);
                (d.workload.kind.as_str(), p)
            })
            .collect();
        crate::workload::jobs(&procs, false)
    }
}

/// A host's summary in parts ([`Simulation::summary_parts`]).
pub struct SummaryParts<'a> {
    sim: &'a Simulation,
    now: Time,
    elapsed: u64,
    /// Each domain's `workload` entry (the jobs need them all).
    workloads: Vec<Json>,
    /// The summary object, its `domains` an empty list.
    pub top: Json,
}

impl SummaryParts<'_> {
    /// The host's number of domains.
    pub fn domains(&self) -> usize {
        self.workloads.len()
    }

    /// Domain `d`'s entry of the summary's `domains` list.
    pub fn domain(&self, d: usize) -> Json {
        let (sim, now, elapsed) = (self.sim, self.now, self.elapsed);
        let dom = &sim.w.doms[d];
        let mut vcpus = Vec::new();
        let mut tot = [0u64; 4];
        for vi in dom.first_vcpu..dom.first_vcpu + dom.nvcpus {
            let v = &sim.w.vcpus[vi as usize];
            let s = v.state_ns_at(now);
            for k in 0..4 {
                tot[k] += s[k];
            }
            let h = &v.wake_latency;
            let us = |ns: f64| (ns / 1000.0 * 1000.0).round() / 1000.0;
            vcpus.push(json!({
                "vcpu": v.index,
                "running_ns": s[RunState::Running as usize],
                "runnable_ns": s[RunState::Runnable as usize],
                "blocked_ns": s[RunState::Blocked as usize],
                "offline_ns": s[RunState::Offline as usize],
                "cpu_pct": pct(s[0], elapsed),
                "context_switches": v.context_switches,
                "migrations": v.migrations,
                "wakeups": h.count(),
                "wake_latency_us": {
                    "p50": us(h.quantile_ns(0.50)),
                    "p95": us(h.quantile_ns(0.95)),
                    "p99": us(h.quantile_ns(0.99)),
                    "max": us(h.max_ns() as f64),
                    "mean": us(h.mean_ns()),
                },
            }));
        }
        let measured_s = elapsed as f64 / NS_PER_S as f64;
        let execs: u64 = (dom.first_vcpu..dom.first_vcpu + dom.nvcpus)
            .map(|vi| sim.w.vcpus[vi as usize].context_switches)
            .sum();
        let io = &sim.w.io.stats[d];
        // XenMon's I/O count is page flips: netback's flips to a guest,
        // and for the driver domain all of them (`IoStats::flips`).
        let io_count = io.flips;
        // Packets and disk request passes handled (the backends' work).
        let io_events = if dom.driver {
            io.backend_events + io.io_events
        } else {
            io.io_events
        };
        let per_s = |x: u64| {
            if measured_s > 0.0 {
                x as f64 / measured_s
            } else {
                0.0
            }
        };
        let xenmon = json!({
            "cpu_pct": pct(tot[0], elapsed),
            "waited_pct": pct(tot[1], elapsed),
            "blocked_pct": pct(tot[2], elapsed),
            "exec_per_s": per_s(execs),
            "io_count": io_count,
            "io_per_exec": if execs > 0 { io_count as f64 / execs as f64 } else { 0.0 },
            "io_events": io_events,
            "io_events_per_exec": if execs > 0 { io_events as f64 / execs as f64 } else { 0.0 },
            "backend_batches": io.backend_batches,
        });
        let xentop = json!({
            "cpu_s": tot[0] / NS_PER_S,
            "cpu_pct": pct(tot[0], elapsed),
            "vcpus": dom.nvcpus,
            // The backend's view, as xentop shows it: NETTX is what the
            // backend sent to the guest (the guest received it).
            "nettx_kb": io.rx_bytes / 1024,
            "netrx_kb": io.tx_bytes / 1024,
            "vbd_rd": io.disk_reads,
            "vbd_wr": io.disk_writes,
            "vbd_rsect": io.disk_read_bytes / 512,
            "vbd_wsect": io.disk_write_bytes / 512,
        });
        let (paid, real, lazy) = super::switch::domain_paid(&sim.w, DomId(d as u32), now);
        let secs = |part: super::switch::Part| paid[part as usize] as f64 / NS_PER_S as f64;
        let switch_cost = json!({
            "direct_s": secs(super::switch::Part::Direct),
            "tlb_refill_s": secs(super::switch::Part::Refill),
            "cache_refill_s": secs(super::switch::Part::Cache),
            "sched_s": secs(super::switch::Part::Sched),
            "real_switches": real,
            "lazy_returns": lazy,
        });
        json!({
            "switch_cost": switch_cost,
            "xenmon": xenmon,
            "xentop": xentop,
            "name": dom.name,
            "id": d,
            "driver": dom.driver,
            "cpu_pct": pct(tot[0], elapsed),
            "runnable_pct": pct(tot[1], elapsed),
            "blocked_pct": pct(tot[2], elapsed),
            "offline_pct": pct(tot[3], elapsed),
            "cpu_s": tot[0] as f64 / NS_PER_S as f64,
            "sched": sim.admin[d].params.to_json(),
            "workload": self.workloads[d].clone(),
            "vcpus": vcpus,
        })
    }
}
