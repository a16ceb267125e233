//! Measurement: the periodic samples of the series, and the end of warm-up
//! (all counters reset, so that summaries cover the measured part only).
//!
//! Each sample records, per VCPU and per domain, the share of the interval
//! spent running, runnable and blocked, the context switches, and the
//! domain's I/O counters, as deltas of exact cumulative accounting.

use super::{Event, Simulation};
use crate::metrics::IoCounters;

impl Simulation {
    pub(super) fn schedule_sample(&mut self) {
        let at = self.w.now.after(self.scenario.run.sample_ns);
        if at < self.end {
            self.w.queue.push(at, Event::Sample);
        }
    }

    pub(super) fn take_sample(&mut self) {
        let now = self.w.now;
        let interval = now.since(self.last_sample).max(1) as f64;
        let t = now.as_secs_f64();
        for d in 0..self.w.doms.len() {
            let (first, n) = (self.w.doms[d].first_vcpu, self.w.doms[d].nvcpus);
            let mut dom_tot = [0u64; 4];
            for vi in first..first + n {
                let vc = &self.w.vcpus[vi as usize];
                let st = vc.state_ns_at(now);
                let cur = [st[0], st[1], st[2], vc.context_switches];
                let prev = self.sample_prev[vi as usize];
                let delta: [u64; 4] = std::array::from_fn(|k| cur[k] - prev[k]);
                self.sample_prev[vi as usize] = cur;
                for k in 0..4 {
                    dom_tot[k] += delta[k];
                }
                let pct = |x: u64| (x as f64 * 100.0 / interval) as f32;
                self.series.push(
                    t,
                    d as u32,
                    (vi - first) as i32,
                    pct(delta[0]),
                    pct(delta[1]),
                    pct(delta[2]),
                    delta[3],
                );
            }
            let pct = |x: u64| (x as f64 * 100.0 / interval) as f32;
            self.series.push(
                t,
                d as u32,
                -1,
                pct(dom_tot[0]),
                pct(dom_tot[1]),
                pct(dom_tot[2]),
                dom_tot[3],
            );
            let cur = self.io_counters(d);
            let prev = std::mem::replace(&mut self.io_prev[d], cur);
            self.series
                .io
                .push(std::array::from_fn(|k| cur[k] - prev[k]));
        }
        self.last_sample = now;
    }

    /// Domain `d`'s cumulative I/O counters, as the summary reports them
    /// (XenMon's I/O count, then xentop's backend view), in
    /// [`crate::metrics::IoColumns`]' order.
    fn io_counters(&self, d: usize) -> IoCounters {
        let io = &self.w.io.stats[d];
        [
            // XenMon's I/O count, as in the summary: page flips.
            io.flips,
            io.rx_pkts,
            io.rx_bytes,
            io.tx_pkts,
            io.tx_bytes,
            io.disk_reads,
            io.disk_writes,
        ]
    }

    pub(super) fn end_warmup(&mut self) {
        self.w.flush_states();
        for vc in &mut self.w.vcpus {
            vc.state_ns = [0; 4];
            vc.context_switches = 0;
            vc.migrations = 0;
            vc.wake_latency.clear();
        }
        for pc in &mut self.w.pcpus {
            pc.idle_ns = 0;
            pc.schedules = 0;
        }
        self.w.switch.reset(self.w.now);
        for st in &mut self.w.io.stats {
            *st = Default::default();
        }
        let now = self.w.now;
        self.w.io.disk.reset_busy(now);
        for s in &mut self.sample_prev {
            *s = [0; 4];
        }
        for s in &mut self.io_prev {
            *s = [0; 7];
        }
        let now = self.w.now;
        for wl in &mut self.workloads {
            wl.reset_metrics(now);
        }
        self.measure_from = now;
        self.last_sample = now;
        self.events = 0;
        self.schedule_sample();
        self.start_pending_trace();
    }
}
