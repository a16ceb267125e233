//! Xen's binary trace format (`trace.xentrace`), as `xentrace` writes it.
//!
//! Each record is Xen's `struct t_rec`, in little-endian 32-bit words:
//!
//! ```text
//! word 0     event id (bits 0..27) | extra-word count (bits 28..30) | TSC included (bit 31)
//! words 1-2  TSC, low word then high word (when bit 31 is set)
//! then       the extra (payload) words
//! ```
//!
//! `xentrace` copies each PCPU's buffer to the file a window at a time, each
//! window preceded by a `TRC_TRACE_CPU_CHANGE` record without TSC whose two
//! words are the PCPU and the window's size in bytes; this writer does the
//! same, starting a window whenever the PCPU changes (or the window reaches
//! [`WINDOW_BYTES`]), so `xenalyze` can split the file by PCPU.
//!
//! TSC values are simulated time at [`TSC_HZ`] (2.4 GHz, `xenalyze`'s
//! default `--cpu-hz`), counted from a power-on [`TSC_BOOT_NS`] before the
//! simulation's time 0: a real host's TSC counts from its power-on, so no
//! real trace starts at TSC 0, and `xenalyze` refuses one that does. Domain ids are the scenario's domain indices; the
//! idle VCPU of PCPU `n` is domain [`IDLE_DOMID`], VCPU `n`, as in Xen.
//! `docs/trace.md` lists the records written for each event.

use super::{CounterEvent, Output, RunstateEvent, SchedEvent, TraceError, TraceSink, TraceStart};
use crate::domain::{RunState, Vcpu};
use crate::ids::{PcpuId, VcpuId};
use crate::time::Time;
use std::io;

/// TSC ticks per simulated second.
pub const TSC_HZ: u64 = 2_400_000_000;

/// How long before the simulation's time 0 the host's TSC started counting
/// (its power-on): one second.
pub const TSC_BOOT_NS: u64 = 1_000_000_000;

/// The TSC value of simulated time `t`: the time since power-on
/// (`t` + [`TSC_BOOT_NS`]) at 2.4 ticks per ns, rounded down.
#[inline]
pub fn tsc(t: Time) -> u64 {
    ((u128::from(t.0) + u128::from(TSC_BOOT_NS)) * 12 / 5) as u64
}

pub const TRC_TRACE_CPU_CHANGE: u32 = 0x0001_f003;
/// Plus `old << 8 | new << 4` (states: running 0, runnable 1, blocked 2, offline 3).
pub const TRC_SCHED_RUNSTATE_CHANGE: u32 = 0x0002_1001;
pub const TRC_SCHED_CONTINUE_RUNNING: u32 = 0x0002_1002;
pub const TRC_SCHED_DOM_ADD: u32 = 0x0002_8001;
pub const TRC_SCHED_SLEEP: u32 = 0x0002_8003;
pub const TRC_SCHED_WAKE: u32 = 0x0002_8004;
pub const TRC_SCHED_BLOCK: u32 = 0x0002_8006;
pub const TRC_SCHED_SWITCH: u32 = 0x0002_800a;
pub const TRC_SCHED_SWITCH_INFPREV: u32 = 0x0002_800e;
pub const TRC_SCHED_SWITCH_INFNEXT: u32 = 0x0002_800f;
pub const TRC_SCHED_SWITCH_INFCONT: u32 = 0x0002_8011;

/// Xen's idle domain id (`DOMID_IDLE`).
pub const IDLE_DOMID: u32 = 0x7fff;
/// A duration too long for a 32-bit ns word, or no slice (Xen's `-1`).
pub const NO_TIME: u32 = u32::MAX;
/// The scheduler's counters: Xen's scheduler-specific class
/// (`TRC_SCHED_CLASS`, `0x00022000`) with scheduler id 7, which no Xen
/// scheduler uses (Credit 0, Credit2 1, ARINC 653 3, RTDS 4, null 5), plus
/// the counter's position in the scheduler's declaration (0–511).
pub const TRC_VMSCHED_COUNTER: u32 = 0x0002_2000 | 7 << 9;
/// The largest window written before a new one starts.
pub const WINDOW_BYTES: usize = 32 * 1024;

const EXTRA_SHIFT: u32 = 28;
const TSC_FLAG: u32 = 1 << 31;

/// A duration as a 32-bit ns word, saturating at [`NO_TIME`].
#[inline]
fn ns32(ns: u64) -> u32 {
    u32::try_from(ns).unwrap_or(NO_TIME)
}

/// The runstate-change event id for `old` → `new`.
#[inline]
pub fn runstate_change(old: RunState, new: RunState) -> u32 {
    TRC_SCHED_RUNSTATE_CHANGE | (old as u32) << 8 | (new as u32) << 4
}

/// Writes the xentrace records of a run into `O`.
pub struct Xentrace<O: Output> {
    out: O,
    err: Option<io::Error>,
    /// The PCPU of the window being filled, and its bytes.
    win_cpu: u32,
    win: Vec<u8>,
    /// Per PCPU: since when its idle VCPU runs, and since when it waits.
    idle_running: Vec<Time>,
    idle_waiting: Vec<Time>,
    records: u64,
    /// Each counter's value as last recorded.
    counters: Vec<Option<u64>>,
}

impl<O: Output> Xentrace<O> {
    pub fn new(out: O) -> Xentrace<O> {
        Xentrace {
            out,
            err: None,
            win_cpu: 0,
            win: Vec::with_capacity(WINDOW_BYTES + 64),
            idle_running: Vec::new(),
            idle_waiting: Vec::new(),
            records: 0,
            counters: Vec::new(),
        }
    }

    /// Records written so far (without the CPU-change records).
    pub fn records(&self) -> u64 {
        self.records
    }

    fn record(&mut self, cpu: PcpuId, now: Time, event: u32, extra: &[u32]) {
        debug_assert!(extra.len() <= 7 && event < 1 << EXTRA_SHIFT);
        if cpu.0 != self.win_cpu || self.win.len() >= WINDOW_BYTES {
            self.flush_window();
            self.win_cpu = cpu.0;
        }
        let t = tsc(now);
        let header = event | (extra.len() as u32) << EXTRA_SHIFT | TSC_FLAG;
        for w in [header, t as u32, (t >> 32) as u32].iter().chain(extra) {
            self.win.extend_from_slice(&w.to_le_bytes());
        }
        self.records += 1;
    }

    /// Write the window being filled, behind its CPU-change record.
    fn flush_window(&mut self) {
        if self.win.is_empty() || self.err.is_some() {
            self.win.clear();
            return;
        }
        let change = TRC_TRACE_CPU_CHANGE | 2 << EXTRA_SHIFT;
        let mut head = [0u8; 12];
        for (i, w) in [change, self.win_cpu, self.win.len() as u32]
            .iter()
            .enumerate()
        {
            head[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        let r = self
            .out
            .write_all(&head)
            .and_then(|()| self.out.write_all(&self.win));
        self.win.clear();
        if let Err(e) = r {
            self.err = Some(e);
        }
    }

    /// (domain, vcpu) of a VCPU, or of PCPU `p`'s idle VCPU.
    fn who(v: Option<VcpuId>, p: PcpuId, vcpus: &[Vcpu]) -> (u32, u32) {
        match v {
            Some(v) => {
                let vc = &vcpus[v.idx()];
                (vc.dom.0, vc.index)
            }
            None => (IDLE_DOMID, p.0),
        }
    }

    fn packed(d: u32, v: u32) -> u32 {
        (d & 0xffff) << 16 | (v & 0xffff)
    }
}

impl<O: Output> TraceSink for Xentrace<O> {
    fn begin(&mut self, start: &TraceStart<'_>) {
        self.idle_running = start.pcpus.iter().map(|&(_, since)| since).collect();
        self.idle_waiting = self.idle_running.clone();
        for d in 0..start.domains.len() {
            self.record(PcpuId(0), start.now, TRC_SCHED_DOM_ADD, &[d as u32]);
        }
    }

    fn counters(&mut self, ev: &CounterEvent<'_>) {
        if self.counters.len() < ev.counters.len() {
            self.counters.resize(ev.counters.len(), None);
        }
        for (i, &(_, value)) in ev.counters.iter().enumerate().take(512) {
            if self.counters[i] != Some(value) && self.err.is_none() {
                self.counters[i] = Some(value);
                let words = [value as u32, (value >> 32) as u32];
                self.record(ev.pcpu, ev.now, TRC_VMSCHED_COUNTER + i as u32, &words);
            }
        }
    }

    fn schedule(&mut self, ev: &SchedEvent<'_>) {
        if self.err.is_some() {
            return;
        }
        let (p, now, vcpus) = (ev.pcpu, ev.now, ev.vcpus);
        let (pd, pv) = Self::who(ev.prev, p, vcpus);
        let slice = ev.slice_ns.map_or(NO_TIME, ns32);
        let ran = ns32(match ev.prev {
            Some(v) => now.since(vcpus[v.idx()].state_since),
            None => now.since(self.idle_running[p.idx()]),
        });
        if ev.prev == ev.next {
            self.record(p, now, TRC_SCHED_SWITCH_INFCONT, &[pd, pv, ran, slice]);
            self.record(p, now, TRC_SCHED_CONTINUE_RUNNING, &[Self::packed(pd, pv)]);
            return;
        }
        let (nd, nv) = Self::who(ev.next, p, vcpus);
        // Where prev goes; the idle VCPU is always runnable.
        let gone = ev
            .prev
            .map_or(RunState::Runnable, |v| vcpus[v.idx()].off_cpu_state());
        match gone {
            RunState::Blocked => self.record(p, now, TRC_SCHED_BLOCK, &[pd, pv]),
            RunState::Offline => self.record(p, now, TRC_SCHED_SLEEP, &[pd, pv]),
            _ => {}
        }
        // Where next comes from, and how long it waited if it was runnable.
        let (from, waited) = match ev.next {
            Some(v) => {
                let vc = &vcpus[v.idx()];
                let waited = if vc.state == RunState::Runnable {
                    now.since(vc.state_since)
                } else {
                    0
                };
                (vc.state, waited)
            }
            None => (RunState::Runnable, now.since(self.idle_waiting[p.idx()])),
        };
        self.record(p, now, TRC_SCHED_SWITCH_INFPREV, &[pd, pv, ran]);
        self.record(
            p,
            now,
            TRC_SCHED_SWITCH_INFNEXT,
            &[nd, nv, ns32(waited), slice],
        );
        self.record(
            p,
            now,
            runstate_change(RunState::Running, gone),
            &[Self::packed(pd, pv)],
        );
        self.record(
            p,
            now,
            runstate_change(from, RunState::Running),
            &[Self::packed(nd, nv)],
        );
        self.record(p, now, TRC_SCHED_SWITCH, &[pd, pv, nd, nv]);
        if ev.prev.is_none() {
            self.idle_waiting[p.idx()] = now;
        }
        if ev.next.is_none() {
            self.idle_running[p.idx()] = now;
        }
    }

    fn runstate(&mut self, ev: &RunstateEvent<'_>) {
        if ev.at_switch() || self.err.is_some() {
            return;
        }
        let cpu = ev.record_cpu();
        let (d, v) = (ev.v.dom.0, ev.v.index);
        match (ev.old, ev.v.state) {
            (RunState::Blocked | RunState::Offline, RunState::Runnable) => {
                self.record(cpu, ev.now, TRC_SCHED_WAKE, &[d, v]);
            }
            (_, RunState::Offline) => self.record(cpu, ev.now, TRC_SCHED_SLEEP, &[d, v]),
            _ => {}
        }
        self.record(
            cpu,
            ev.now,
            runstate_change(ev.old, ev.v.state),
            &[Self::packed(d, v)],
        );
    }

    fn finish(self: Box<Self>) -> Result<(), TraceError> {
        let mut me = *self;
        me.flush_window();
        if me.err.is_none() {
            if let Err(e) = me.out.flush() {
                me.err = Some(e);
            }
        }
        match me.err {
            Some(e) => Err(me.out.fail(e)),
            None => me.out.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_is_2_4_ghz() {
        assert_eq!(tsc(Time(0)), TSC_HZ);
        assert_eq!(tsc(Time(5)), TSC_HZ + 12);
        assert_eq!(tsc(Time(1_000_000_000)), 2 * TSC_HZ);
        // Far beyond u64 ns * 12 without the 128-bit product.
        assert_eq!(
            tsc(Time(10_000_000_000_000_000)),
            24_000_000_000_000_000 + TSC_HZ
        );
    }

    #[test]
    fn runstate_change_ids_are_xens() {
        assert_eq!(
            runstate_change(RunState::Running, RunState::Runnable),
            0x0002_1011
        );
        assert_eq!(
            runstate_change(RunState::Running, RunState::Blocked),
            0x0002_1021
        );
        assert_eq!(
            runstate_change(RunState::Runnable, RunState::Running),
            0x0002_1101
        );
        assert_eq!(
            runstate_change(RunState::Blocked, RunState::Running),
            0x0002_1201
        );
        assert_eq!(
            runstate_change(RunState::Blocked, RunState::Runnable),
            0x0002_1211
        );
    }

    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn records_and_windows_have_xens_layout() {
        let mut x = Xentrace::new(Vec::new());
        x.record(PcpuId(1), Time(1_000), TRC_SCHED_WAKE, &[2, 3]);
        x.record(PcpuId(1), Time(2_000), TRC_SCHED_BLOCK, &[2, 3]);
        x.record(PcpuId(0), Time(2_000), TRC_SCHED_DOM_ADD, &[4]);
        x.flush_window();
        let w = words(&x.out);
        let wake = TRC_SCHED_WAKE | 2 << 28 | 1 << 31;
        let block = TRC_SCHED_BLOCK | 2 << 28 | 1 << 31;
        let add = TRC_SCHED_DOM_ADD | 1 << 28 | 1 << 31;
        let change = TRC_TRACE_CPU_CHANGE | 2 << 28;
        // TSC low words: 1 s after power-on (2.4e9 ticks) plus 2,400 and 4,800.
        let (t1, t2) = (2_400_002_400, 2_400_004_800);
        assert_eq!(
            w,
            vec![
                change, 1, 40, // PCPU 1's window: two records of 5 words
                wake, t1, 0, 2, 3, //
                block, t2, 0, 2, 3, //
                change, 0, 16, // PCPU 0's window: one record of 4 words
                add, t2, 0, 4,
            ]
        );
        assert_eq!(x.records(), 3);
    }

    #[test]
    fn windows_are_bounded() {
        let mut x = Xentrace::new(Vec::new());
        let n = WINDOW_BYTES / 16 * 3;
        for i in 0..n {
            x.record(PcpuId(0), Time(i as u64), TRC_SCHED_DOM_ADD, &[0]);
            assert!(x.win.len() <= WINDOW_BYTES + 16);
        }
        x.flush_window();
        let w = words(&x.out);
        // Walk the windows: each starts with a CPU change whose size is exact.
        let (mut i, mut seen) = (0, 0);
        while i < w.len() {
            assert_eq!(w[i], TRC_TRACE_CPU_CHANGE | 2 << 28);
            let size = w[i + 2] as usize;
            assert!(size <= WINDOW_BYTES + 16);
            seen += size / 16;
            i += 3 + size / 4;
        }
        assert_eq!(i, w.len());
        assert_eq!(seen, n);
    }
}
