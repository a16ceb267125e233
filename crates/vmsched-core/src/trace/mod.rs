//! Traces of what the scheduler does, streamed to disk while the run goes on.
//!
//! Two formats, documented exactly in `docs/trace.md`:
//! - [`ftrace`]: the Linux ftrace text format (`sched_switch`,
//!   `sched_waking`/`sched_wakeup` lines, one CPU per PCPU), which the
//!   Perfetto UI opens as per-CPU lanes;
//! - [`xentrace`]: Xen's binary trace records (`struct t_rec`) with the
//!   per-PCPU windows `xentrace` writes, for `xenalyze` and `xentrace_format`.
//!
//! The engine calls a [`TraceSink`] at two places only: each time a PCPU's
//! scheduler has decided ([`TraceSink::schedule`]: a context switch, or the
//! same VCPU, or idle, continuing, followed by the scheduler's declared
//! counters, [`TraceSink::counters`]), and each time a VCPU's run state
//! changes ([`TraceSink::runstate`]). Everything a format records is derived
//! from these. With no sink installed the engine pays one test of an
//! `Option` at each of the two places.
//!
//! A sink writes through a `BufWriter` into a temporary file next to the
//! final one ([`AtomicFile`]) and renames it when the trace is finished, so a
//! trace file is whole or absent. Nothing of the trace is kept in memory
//! beyond the write buffer (and, for xentrace, the current per-PCPU window of
//! at most [`xentrace::WINDOW_BYTES`]).

pub mod ftrace;
pub mod xentrace;

use crate::domain::{Domain, RunState, Vcpu};
use crate::ids::{PcpuId, VcpuId};
use crate::time::Time;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The host as it is when tracing starts (the start of measurement).
pub struct TraceStart<'a> {
    /// Simulated time now.
    pub now: Time,
    /// The scheduler's name.
    pub scheduler: &'a str,
    /// Every domain, in id order.
    pub domains: &'a [Domain],
    /// Every VCPU, in id order.
    pub vcpus: &'a [Vcpu],
    /// For each PCPU: the VCPU it runs (`None` = idle) and since when.
    pub pcpus: Vec<(Option<VcpuId>, Time)>,
    /// The counters the scheduler declares in its registration (name,
    /// what it counts), in its order.
    pub counters: Vec<(&'static str, &'static str)>,
}

/// The scheduler's counters ([`crate::sched::Scheduler::counters`]) as they
/// are after a decision of `pcpu`, or at the end of the trace: every
/// counter, cumulative since the start of the run, as the summary's
/// `scheduler_counters` gives them at the end. A sink writes those that
/// changed since it last wrote them (all of them the first time).
pub struct CounterEvent<'a> {
    pub now: Time,
    pub pcpu: PcpuId,
    /// (name, value), in the scheduler's order.
    pub counters: &'a [(&'static str, u64)],
}

/// A PCPU's scheduler has decided: `prev` → `next` (a context switch), or
/// `prev == next` (the same VCPU, or idle, continues).
pub struct SchedEvent<'a> {
    pub now: Time,
    pub pcpu: PcpuId,
    /// What the PCPU ran until now (`None` = idle).
    pub prev: Option<VcpuId>,
    /// What it runs from now (`None` = idle).
    pub next: Option<VcpuId>,
    /// The slice the scheduler gave (`None`: no timer, Xen's `-1`).
    pub slice_ns: Option<u64>,
    /// Every VCPU as it is *before* the switch: `prev` is still running
    /// (its flags say what it becomes: [`Vcpu::off_cpu_state`]) and `next`
    /// is still in the state it is leaving.
    pub vcpus: &'a [Vcpu],
}

/// A VCPU's run state changed. Changes to and from `Running` are also
/// reported, but they happen only at a context switch, which
/// [`TraceSink::schedule`] has already reported: formats record them there.
pub struct RunstateEvent<'a> {
    pub now: Time,
    /// The PCPU whose code made the change, if one did (`None`: the
    /// toolstack, or a guest timer).
    pub cpu: Option<PcpuId>,
    pub vcpu: VcpuId,
    /// The state it left.
    pub old: RunState,
    /// The VCPU after the change (`v.state` is the new state).
    pub v: &'a Vcpu,
}

impl RunstateEvent<'_> {
    /// Whether a context switch reported this change already.
    #[inline]
    pub fn at_switch(&self) -> bool {
        self.old == RunState::Running || self.v.state == RunState::Running
    }

    /// The PCPU the change is recorded on: the one whose code made it, or
    /// else the VCPU's own.
    #[inline]
    pub fn record_cpu(&self) -> PcpuId {
        self.cpu.unwrap_or(self.v.processor)
    }
}

/// Receives the scheduling events of a run, from the start of measurement.
///
/// Hooks return nothing: a sink that fails to write keeps the first error,
/// stops writing and reports the error from [`TraceSink::finish`].
pub trait TraceSink: Send {
    /// Tracing starts; called once, before any other hook.
    fn begin(&mut self, start: &TraceStart<'_>);
    /// A PCPU's scheduler decided (see [`SchedEvent`]).
    fn schedule(&mut self, ev: &SchedEvent<'_>);
    /// A VCPU's run state changed (see [`RunstateEvent`]).
    fn runstate(&mut self, ev: &RunstateEvent<'_>);
    /// The scheduler's counters after a decision, and once more when the
    /// trace ends (see [`CounterEvent`]). Default: not recorded.
    fn counters(&mut self, _ev: &CounterEvent<'_>) {}
    /// Tracing ends: write what is left and make the output whole (for files:
    /// flush and rename into place), or report the first error, in which case
    /// the output is removed.
    fn finish(self: Box<Self>) -> Result<(), TraceError>;
}

/// A trace file that could not be written.
#[derive(Debug)]
pub struct TraceError {
    /// The trace file.
    pub path: PathBuf,
    pub error: io::Error,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot be written ({})",
            self.path.display(),
            self.error
        )
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Several sinks fed the same events (e.g. `trace.txt` and `trace.xentrace`).
pub struct Tee(pub Vec<Box<dyn TraceSink>>);

impl TraceSink for Tee {
    fn begin(&mut self, start: &TraceStart<'_>) {
        for s in &mut self.0 {
            s.begin(start);
        }
    }
    fn schedule(&mut self, ev: &SchedEvent<'_>) {
        for s in &mut self.0 {
            s.schedule(ev);
        }
    }
    fn runstate(&mut self, ev: &RunstateEvent<'_>) {
        for s in &mut self.0 {
            s.runstate(ev);
        }
    }
    fn counters(&mut self, ev: &CounterEvent<'_>) {
        for s in &mut self.0 {
            s.counters(ev);
        }
    }
    /// Finishes every sink (each file is whole or absent on its own) and
    /// reports the first error.
    fn finish(self: Box<Self>) -> Result<(), TraceError> {
        let mut first = Ok(());
        for s in self.0 {
            let r = s.finish();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

/// The sinks for the files asked for: the ftrace text at `text`, the
/// xentrace binary at `xentrace`. Each file is created now (under a
/// temporary name), so an unwritable place is reported before the run.
/// `None` if neither is asked for.
pub fn to_files(
    text: Option<&Path>,
    xentrace: Option<&Path>,
) -> Result<Option<Box<dyn TraceSink>>, TraceError> {
    let mut sinks: Vec<Box<dyn TraceSink>> = Vec::new();
    if let Some(p) = text {
        sinks.push(Box::new(ftrace::Ftrace::new(AtomicFile::create(p)?)));
    }
    if let Some(p) = xentrace {
        sinks.push(Box::new(xentrace::Xentrace::new(AtomicFile::create(p)?)));
    }
    Ok(match sinks.len() {
        0 => None,
        1 => sinks.pop(),
        _ => Some(Box::new(Tee(sinks))),
    })
}

// ------------------------------------------------------------------ naming

/// The pid a VCPU has in `trace.txt`: 100 + its host-wide VCPU id (VCPUs are
/// numbered in domain order from 0), so it is stable for a scenario and never
/// 0, the idle task's pid.
#[inline]
pub fn vcpu_pid(v: VcpuId) -> u32 {
    100 + v.0
}

/// A VCPU's name in traces: `<domain>.v<n>`, with any `=` in the domain name
/// written `_` (ftrace's `key=value` fields could not be split otherwise;
/// domain names never hold white space).
pub fn vcpu_comm(domain: &str, index: u32) -> String {
    let name: String = domain
        .chars()
        .map(|c| {
            if c == '=' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect();
    format!("{name}.v{index}")
}

/// Every VCPU's `comm`, in VCPU id order.
pub(crate) fn vcpu_comms(domains: &[Domain], vcpus: &[Vcpu]) -> Vec<String> {
    vcpus
        .iter()
        .map(|v| vcpu_comm(&domains[v.dom.idx()].name, v.index))
        .collect()
}

// ------------------------------------------------------------- atomic file

/// Size of the write buffer of a trace file.
pub const WRITE_BUFFER_BYTES: usize = 256 * 1024;

static TMP_SERIAL: AtomicU64 = AtomicU64::new(0);

/// A file written under a temporary name in its final folder and renamed
/// into place by [`AtomicFile::commit`]; dropped without a commit, the
/// temporary file is removed. Writes go through a `BufWriter`.
pub struct AtomicFile {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    /// Create the temporary file for `path` (`.NAME.PID-N.tmp` beside it).
    pub fn create(path: &Path) -> Result<AtomicFile, TraceError> {
        let fail = |error| TraceError {
            path: path.to_path_buf(),
            error,
        };
        let name = path
            .file_name()
            .ok_or_else(|| fail(io::Error::other("not a file name")))?;
        if path.is_dir() {
            return Err(fail(io::Error::other("it is a folder")));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        loop {
            let n = TMP_SERIAL.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(
                ".{}.{}-{n}.tmp",
                name.to_string_lossy(),
                std::process::id()
            ));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => {
                    return Ok(AtomicFile {
                        out: Some(BufWriter::with_capacity(WRITE_BUFFER_BYTES, f)),
                        tmp,
                        path: path.to_path_buf(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(e)),
            }
        }
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flush and rename into place.
    pub fn commit(mut self) -> Result<(), TraceError> {
        let out = self.out.take().expect("not yet committed");
        let done = out.into_inner().map_err(|e| e.into_error()).and_then(|f| {
            drop(f);
            fs::rename(&self.tmp, &self.path)
        });
        match done {
            Ok(()) => {
                // Nothing left to remove.
                self.tmp = PathBuf::new();
                Ok(())
            }
            Err(error) => Err(TraceError {
                path: self.path.clone(),
                error,
            }),
        }
    }

    /// Give up: remove the temporary file (what dropping does).
    pub fn discard(self) {}
}

impl Write for AtomicFile {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("not committed").write(buf)
    }
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.as_mut().expect("not committed").write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            // Close before removing; errors do not matter here.
            drop(self.out.take());
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Where a format writes: anything `Write`, and for files the commit.
pub trait Output: Write + Send {
    /// The output is complete: make it whole (files: flush and rename).
    fn finish(self) -> Result<(), TraceError>;
    /// The output failed: `error` happened writing it; clean up and report.
    fn fail(self, error: io::Error) -> TraceError;
}

impl Output for AtomicFile {
    fn finish(self) -> Result<(), TraceError> {
        self.commit()
    }
    fn fail(self, error: io::Error) -> TraceError {
        let path = self.path.clone();
        self.discard();
        TraceError { path, error }
    }
}

/// In-memory output, for tests and for callers that want the bytes.
impl Output for Vec<u8> {
    fn finish(self) -> Result<(), TraceError> {
        Ok(())
    }
    fn fail(self, error: io::Error) -> TraceError {
        TraceError {
            path: PathBuf::new(),
            error,
        }
    }
}

/// A sink that records nothing (for measuring the cost of the hooks alone).
pub struct NullSink;

impl TraceSink for NullSink {
    fn begin(&mut self, _: &TraceStart<'_>) {}
    fn schedule(&mut self, _: &SchedEvent<'_>) {}
    fn runstate(&mut self, _: &RunstateEvent<'_>) {}
    fn finish(self: Box<Self>) -> Result<(), TraceError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("vmsched-trace-unit-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let d = scratch("commit");
        let p = d.join("t.txt");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"hello\n").unwrap();
        assert!(!p.exists(), "nothing at the final path before the commit");
        assert_eq!(entries(&d).len(), 1, "one temporary file");
        assert!(entries(&d)[0].starts_with(".t.txt."));
        f.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello\n");
        assert_eq!(entries(&d), vec!["t.txt".to_string()]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn atomic_file_dropped_or_failed_leaves_nothing() {
        let d = scratch("drop");
        let p = d.join("t.txt");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(&[b'x'; 1 << 20]).unwrap();
        drop(f);
        assert!(entries(&d).is_empty());
        let f = AtomicFile::create(&p).unwrap();
        let e = f.fail(io::Error::other("disk full"));
        assert_eq!(e.path, p);
        assert!(entries(&d).is_empty());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unwritable_places_are_reported_at_creation() {
        let d = scratch("bad");
        let e = AtomicFile::create(&d.join("no-such-folder").join("t.txt"))
            .err()
            .expect("missing folder");
        assert_eq!(e.error.kind(), io::ErrorKind::NotFound);
        fs::create_dir(d.join("t.txt")).unwrap();
        let e = AtomicFile::create(&d.join("t.txt"))
            .err()
            .expect("a folder");
        assert!(e.to_string().contains("it is a folder"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn names_and_pids() {
        assert_eq!(vcpu_comm("dom1", 0), "dom1.v0");
        assert_eq!(vcpu_comm("a=b", 3), "a_b.v3");
        assert_eq!(vcpu_pid(VcpuId(0)), 100);
        assert_eq!(vcpu_pid(VcpuId(7)), 107);
    }
}
