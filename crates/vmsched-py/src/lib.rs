//! Python bindings: a scenario in (as JSON text), results out. No simulation
//! logic lives here. Every call is guarded so that a Rust panic becomes a
//! Python `vmsched.InternalError` that says it is a bug, never a crash.

mod pyjson;
mod pysched;
mod pytoml;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use vmsched_core::cluster::is_cluster;
use vmsched_core::trace::{self, TraceError};
use vmsched_core::{Cluster, ClusterScenario, Scenario, SimError, Simulation, Time};

create_exception!(
    _core,
    ScenarioError,
    PyException,
    "A mistake in a scenario (raised with .path and .message)."
);
create_exception!(
    _core,
    InternalError,
    PyException,
    "A bug in vmsched or in a scheduler."
);

const BUG: &str = "this is a bug in vmsched; please report it with the scenario that triggers it";

fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!(
                "internal error: {msg} ({BUG})"
            )))
        }
    }
}

fn to_py(e: SimError) -> PyErr {
    if let Some(fault) = pysched::fault_for(&e) {
        return fault;
    }
    match e {
        SimError::Scenario(s) => ScenarioError::new_err((s.path, s.message)),
        SimError::Internal(m) => InternalError::new_err(format!("internal error: {m} ({BUG})")),
    }
}

/// A trace file that cannot be written, as Python's
/// `OSError(errno, strerror, filename)`.
fn trace_to_py(e: TraceError) -> PyErr {
    let errno = e.error.raw_os_error();
    let text = e.error.to_string();
    // Rust adds " (os error N)" to the system's own words.
    let strerror = match text.rfind(" (os error ") {
        Some(i) if errno.is_some() => text[..i].to_string(),
        _ => text,
    };
    PyOSError::new_err((errno, strerror, e.path.to_string_lossy().into_owned()))
}

fn tree(json: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(json).map_err(|e| {
        InternalError::new_err(format!("bad scenario JSON from the front end: {e} ({BUG})"))
    })
}

/// A single-host scenario; a cluster is refused with a ScenarioError.
fn parse(json: &str) -> PyResult<Scenario> {
    let v = tree(json)?;
    if is_cluster(&v) {
        return Err(ScenarioError::new_err((
            "host".to_string(),
            "is a list of [[host]] tables (a cluster); this takes a single-host scenario \
             with one [host] table"
                .to_string(),
        )));
    }
    Scenario::from_json(&v).map_err(|e| to_py(e.into()))
}

fn parse_cluster(json: &str) -> PyResult<ClusterScenario> {
    ClusterScenario::from_json(&tree(json)?).map_err(|e| to_py(e.into()))
}

/// Validate a scenario (one host, or a cluster of `[[host]]` tables) given
/// as JSON text; raises ScenarioError.
#[pyfunction]
fn validate(json: &str) -> PyResult<()> {
    guarded(|| {
        if is_cluster(&tree(json)?) {
            parse_cluster(json).map(|_| ())
        } else {
            parse(json).map(|_| ())
        }
    })
}

/// Every scheduler, workload and profile with its parameters, as JSON text.
#[pyfunction]
fn catalogue() -> PyResult<String> {
    guarded(|| Ok(vmsched_core::catalogue().to_string()))
}

/// The standard benchmark scenarios for a scheduler: [(name, about, scenario JSON)].
#[pyfunction]
fn bench_cases(sched: &str, short: bool) -> PyResult<Vec<(String, String, String)>> {
    guarded(|| {
        Ok(vmsched_core::bench::standard_for(sched, short)
            .into_iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.about.to_string(),
                    c.scenario.source.to_string(),
                )
            })
            .collect())
    })
}

/// `json.dumps(obj)`'s text (default separators) laid out as
/// `json.dumps(obj, indent=2)` lays it out (`pyjson::indent`).
#[pyfunction]
fn indent_json(text: &str) -> PyResult<String> {
    guarded(|| {
        let mut out = String::new();
        pyjson::indent(text, 0, &mut out);
        Ok(out)
    })
}

/// A scenario file's TOML text as the JSON of the tree `tomllib.loads` makes
/// of it, or `None` where the file must be read by `tomllib` (`pytoml`).
#[pyfunction]
fn toml_json(text: &str, max_depth: usize) -> PyResult<Option<String>> {
    guarded(|| Ok(pytoml::to_json(text, max_depth)))
}

/// A float of the core's summary as summary.json has it (`pyjson::write_float`):
/// for the tests, which compare it with Python's `repr`.
#[pyfunction]
fn float_repr(x: f64) -> String {
    let mut out = String::new();
    pyjson::write_float(x, &mut out);
    out
}

/// Is a JSON value true as Python takes it (not null, false, 0, "", [] or {})?
fn truthy(v: Option<&serde_json::Value>) -> bool {
    use serde_json::Value;
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// A Python binary file object as an `io::Write`: each write is one call of
/// its `write`; the first error it raises is kept (`error`) for the caller
/// to raise as it is, and nothing is written after it.
struct PyWriter<'py> {
    file: Bound<'py, PyAny>,
    error: Option<PyErr>,
}

impl std::io::Write for PyWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.error.is_some() {
            // Nothing more after a failed write (a buffer's flush on drop).
            return Err(std::io::Error::other("the file's write raised"));
        }
        let bytes = PyBytes::new(self.file.py(), buf);
        match self.file.call_method1("write", (bytes,)) {
            Ok(_) => Ok(()),
            Err(e) => {
                self.error.get_or_insert(e);
                Err(std::io::Error::other("the file's write raised"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A host's summary with its domain list cut after the first `shown`, and,
/// when it had more, `_rest`: what a table shows of the others (their
/// number; their CPU, runnable and blocked shares, in order; the sum of
/// their VCPUs' context switches; whether any did I/O). Built from the
/// domains' entries one at a time (`add`), keeping only what it shows.
struct SummaryHead {
    shown: usize,
    domains: Vec<serde_json::Value>,
    count: usize,
    cpu_pct: Vec<serde_json::Value>,
    runnable_pct: Vec<serde_json::Value>,
    blocked_pct: Vec<serde_json::Value>,
    context_switches: u64,
    io: bool,
}

impl SummaryHead {
    fn new(shown: usize) -> Self {
        SummaryHead {
            shown,
            domains: Vec::new(),
            count: 0,
            cpu_pct: Vec::new(),
            runnable_pct: Vec::new(),
            blocked_pct: Vec::new(),
            context_switches: 0,
            io: false,
        }
    }

    /// The next domain's entry.
    fn add(&mut self, d: serde_json::Value) {
        use serde_json::Value;
        if self.domains.len() < self.shown {
            self.domains.push(d);
            return;
        }
        let field = |key: &str| d.get(key).cloned().unwrap_or(Value::Null);
        self.count += 1;
        self.cpu_pct.push(field("cpu_pct"));
        self.runnable_pct.push(field("runnable_pct"));
        self.blocked_pct.push(field("blocked_pct"));
        self.context_switches += d
            .get("vcpus")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("context_switches").and_then(Value::as_u64))
            .sum::<u64>();
        self.io |= truthy(d.get("xenmon").and_then(|x| x.get("io_events")));
    }

    /// The summary `top` (its `domains` empty) with the domains kept, and
    /// `_rest` when there were more.
    fn finish(self, mut top: serde_json::Value) -> serde_json::Value {
        top["domains"] = serde_json::Value::Array(self.domains);
        if self.count > 0 {
            top["_rest"] = serde_json::json!({
                "count": self.count,
                "cpu_pct": self.cpu_pct,
                "runnable_pct": self.runnable_pct,
                "blocked_pct": self.blocked_pct,
                "context_switches": self.context_switches,
                "io": self.io,
            });
        }
        top
    }
}

/// The whole-command benchmark cases for a scheduler: [(name, about, scenario TOML)].
#[pyfunction]
fn bench_commands(sched: &str, short: bool) -> PyResult<Vec<(String, String, String)>> {
    guarded(|| {
        Ok(vmsched_core::bench::commands_for(sched, short)
            .into_iter()
            .map(|c| (c.name.to_string(), c.about.to_string(), c.toml))
            .collect())
    })
}

/// The P-scaling benchmark series: [(PCPUs, scenario JSON)].
#[pyfunction]
fn bench_scaling(sched: &str, duration_s: f64) -> PyResult<Vec<(usize, String)>> {
    guarded(|| {
        Ok(vmsched_core::bench::scaling_for(sched, duration_s)
            .into_iter()
            .map(|(p, toml)| {
                let sc = vmsched_core::Scenario::from_toml_str(&toml).expect("valid");
                (p, sc.source.to_string())
            })
            .collect())
    })
}

/// The bare binary-heap loop the engine is measured against
/// (`vmsched_core::bench::bare_heap_loop`); returns its checksum.
#[pyfunction]
fn bare_heap_loop(py: Python<'_>, size: usize, steps: u64) -> u64 {
    py.detach(|| vmsched_core::bench::bare_heap_loop(size, steps))
}

/// A value stored little-endian, as Arrow and NumPy read it.
trait LeBytes: Copy {
    const SIZE: usize;
    fn put(self, out: &mut [u8]);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(f64, f32, u32, i32, u64);

/// A column as one Python `bytes`, written in place (no intermediate copy).
fn column<'py, T: LeBytes>(py: Python<'py>, v: &[T]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * T::SIZE, |buf| {
        for (out, &x) in buf.chunks_exact_mut(T::SIZE).zip(v) {
            x.put(out);
        }
        Ok(())
    })
}

/// An Arrow validity bitmap (bit i, least significant first, set when
/// `keep(i)`), padded to whole bytes.
fn bitmap<'py>(
    py: Python<'py>,
    n: usize,
    keep: impl Fn(usize) -> bool,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, n.div_ceil(8), |buf| {
        for (i, byte) in buf.iter_mut().enumerate() {
            let mut b = 0u8;
            for bit in 0..8 {
                let row = i * 8 + bit;
                if row < n && keep(row) {
                    b |= 1 << bit;
                }
            }
            *byte = b;
        }
        Ok(())
    })
}

/// A per-domain-row column spread over every row (0 on VCPU rows, which
/// the `domain_rows` bitmap marks null).
fn domain_column<'py>(py: Python<'py>, vcpu: &[i32], v: &[u64]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, vcpu.len() * 8, |buf| {
        let mut next = v.iter();
        for (out, &vc) in buf.chunks_exact_mut(8).zip(vcpu) {
            let x = if vc < 0 {
                *next.next().expect("one entry per domain row")
            } else {
                0
            };
            out.copy_from_slice(&x.to_le_bytes());
        }
        Ok(())
    })
}

/// Each row's domain name as an Arrow `large_string` column: the offsets
/// (i64, one more than rows) and the UTF-8 bytes.
fn name_column<'py>(
    py: Python<'py>,
    domain: &[u32],
    names: &[&str],
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let total: usize = domain.iter().map(|&d| names[d as usize].len()).sum();
    let offsets = PyBytes::new_with(py, (domain.len() + 1) * 8, |buf| {
        let mut at = 0i64;
        buf[..8].copy_from_slice(&at.to_le_bytes());
        for (out, &d) in buf[8..].chunks_exact_mut(8).zip(domain) {
            at += names[d as usize].len() as i64;
            out.copy_from_slice(&at.to_le_bytes());
        }
        Ok(())
    })?;
    let data = PyBytes::new_with(py, total, |buf| {
        let mut at = 0;
        for &d in domain {
            let name = names[d as usize].as_bytes();
            buf[at..at + name.len()].copy_from_slice(name);
            at += name.len();
        }
        Ok(())
    })?;
    Ok((offsets, data))
}

/// One host's time series as raw little-endian columns (the types the
/// engine keeps: f64 times, u32 domain indices, i32 VCPU numbers, f32
/// shares, u64 counts), each row's domain name as Arrow string buffers,
/// Arrow validity bitmaps of the domain rows and of the VCPU rows, the row
/// count and the domain names. Python wraps these bytes in Arrow arrays
/// without converting them (`vmsched.api`).
fn series_dict<'py>(py: Python<'py>, sim: &Simulation) -> PyResult<Bound<'py, PyDict>> {
    let s = sim.series();
    let d = PyDict::new(py);
    d.set_item("rows", s.len())?;
    d.set_item("time_s", column(py, &s.time_s)?)?;
    d.set_item("domain", column(py, &s.domain)?)?;
    d.set_item("vcpu", column(py, &s.vcpu)?)?;
    d.set_item("cpu_pct", column(py, &s.cpu_pct)?)?;
    d.set_item("runnable_pct", column(py, &s.runnable_pct)?)?;
    d.set_item("blocked_pct", column(py, &s.blocked_pct)?)?;
    d.set_item("executions", column(py, &s.executions)?)?;
    for (name, col) in s.io.named() {
        d.set_item(name, domain_column(py, &s.vcpu, col)?)?;
    }
    d.set_item("domain_rows", bitmap(py, s.len(), |i| s.vcpu[i] < 0)?)?;
    d.set_item("vcpu_rows", bitmap(py, s.len(), |i| s.vcpu[i] >= 0)?)?;
    let names: Vec<&str> = sim.domains().iter().map(|d| d.name.as_str()).collect();
    let (offsets, data) = name_column(py, &s.domain, &names)?;
    d.set_item("domain_offsets", offsets)?;
    d.set_item("domain_data", data)?;
    d.set_item("domain_names", names)?;
    Ok(d)
}

/// One simulation.
#[pyclass(unsendable)]
struct Sim {
    sim: Simulation,
}

/// One VCPU's cumulative ns per state: (domain, vcpu, running, runnable, blocked, offline).
type VcpuStateRow = (u32, u32, u64, u64, u64, u64);

#[pymethods]
impl Sim {
    #[new]
    fn new(json: &str) -> PyResult<Sim> {
        guarded(|| {
            let sc = parse(json)?;
            let sim = Simulation::new(&sc).map_err(to_py)?;
            Ok(Sim { sim })
        })
    }

    /// Simulate up to `until_ns`; returns (now_ns, end_ns, events, finished).
    fn run_until(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<(u64, u64, u64, bool)> {
        guarded(|| {
            let sim = &mut self.sim;
            let p = py.detach(|| sim.run_until(Time(until_ns))).map_err(to_py)?;
            Ok((p.now.0, p.end.0, p.events, p.finished))
        })
    }

    /// The summary as JSON text.
    fn summary(&self, wall_s: f64) -> PyResult<String> {
        guarded(|| {
            let s = self.sim.summary(wall_s).to_string();
            pysched::take_fault().map_or(Ok(s), Err)
        })
    }

    /// From one build of the summary: summary.json's bytes, the summary
    /// with `scenario` (Python's `json.dumps` text of the scenario as run)
    /// exactly as `json.dumps(summary, indent=2) + "\n"` writes the summary
    /// `vmsched.run` builds (`pyjson::summary_document`); and the summary as
    /// JSON text with its domain list cut after the first `shown`, what a
    /// table shows of the rest in `_rest` (`SummaryHead`). The summary is
    /// never held whole: each domain's entry is built, written and let go.
    fn summary_texts<'py>(
        &self,
        py: Python<'py>,
        wall_s: f64,
        scenario: &str,
        shown: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, String)> {
        guarded(|| {
            let parts = self.sim.summary_parts(wall_s);
            let mut head = SummaryHead::new(shown);
            let document = pyjson::summary_document(&parts, scenario, |_, d| head.add(d));
            pysched::take_fault().map_or(Ok(()), Err)?;
            let document = PyBytes::new(py, document.as_bytes());
            Ok((document, head.finish(parts.top).to_string()))
        })
    }

    /// [`Self::summary_texts`] with summary.json's bytes written to `file`
    /// (a binary file object, its `write` called a piece at a time) rather
    /// than returned: neither the summary nor its text is held whole. Gives
    /// the cut summary's text; an error of `write` is raised as it is.
    fn write_summary(
        &self,
        wall_s: f64,
        scenario: &str,
        shown: usize,
        file: Bound<'_, PyAny>,
    ) -> PyResult<String> {
        guarded(|| {
            let parts = self.sim.summary_parts(wall_s);
            pysched::take_fault().map_or(Ok(()), Err)?;
            let mut head = SummaryHead::new(shown);
            let mut out = PyWriter { file, error: None };
            let written = pyjson::write_summary_document(
                &parts,
                scenario,
                |_, d| head.add(d),
                |text| out.write_all(text.as_bytes()),
            );
            pysched::take_fault().map_or(Ok(()), Err)?;
            match (written, out.error) {
                (_, Some(e)) => Err(e),
                (Err(e), None) => Err(e.into()),
                (Ok(()), None) => Ok(head.finish(parts.top).to_string()),
            }
        })
    }

    /// The time series as raw little-endian columns (see `series_dict`).
    fn series<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| series_dict(py, &self.sim))
    }

    /// The time series' number of rows (`series()["rows"]`, without the columns).
    fn series_rows(&self) -> usize {
        self.sim.series().len()
    }

    /// The time series as a Parquet file, with `pandas` as its pandas
    /// metadata (`vmsched_core::metrics::write_series_parquet`), written to
    /// `file` (a binary file object: its `write` is called a column at a
    /// time, so neither the file's bytes nor the engine's columns are copied
    /// whole; an error of `write` is raised as it is).
    fn write_series_parquet(&self, pandas: &str, file: Bound<'_, PyAny>) -> PyResult<()> {
        guarded(|| {
            let names: Vec<&str> = self.sim.domains().iter().map(|d| d.name.as_str()).collect();
            let meta = [("pandas", pandas)];
            let mut out = PyWriter { file, error: None };
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut out);
            let series = self.sim.series();
            let written =
                vmsched_core::metrics::write_series_parquet(series, &names, &meta, &mut buffered)
                    .and_then(|()| buffered.flush());
            drop(buffered);
            match (written, out.error) {
                (_, Some(e)) => Err(e),
                (Err(e), None) => Err(e.into()),
                (Ok(()), None) => Ok(()),
            }
        })
    }

    /// Act on a domain now as `xl` would: `changes` is a JSON object with the
    /// keys of a domain `[[action]]` (scheduler parameters, `pause`,
    /// `vcpus_online`, `affinity`), validated the same way.
    fn adjust_domain(&mut self, domain: &str, changes: &str) -> PyResult<()> {
        guarded(|| {
            let v: serde_json::Value = serde_json::from_str(changes)
                .map_err(|e| InternalError::new_err(format!("bad JSON: {e} ({BUG})")))?;
            let m = v.as_object().cloned().unwrap_or_default();
            self.sim.adjust_domain(domain, &m).map_err(to_py)
        })
    }

    /// Trace the run from the start of measurement into `text` (ftrace text)
    /// and/or `xentrace` (Xen's binary records). The files are created now
    /// under temporary names (an unwritable place raises OSError) and appear
    /// at `finish_trace`.
    #[pyo3(signature = (text=None, xentrace=None))]
    fn set_trace(&mut self, text: Option<PathBuf>, xentrace: Option<PathBuf>) -> PyResult<()> {
        guarded(|| {
            if let Some(sink) =
                trace::to_files(text.as_deref(), xentrace.as_deref()).map_err(trace_to_py)?
            {
                self.sim.set_trace(sink);
            }
            Ok(())
        })
    }

    /// Finish the trace: its files appear whole (OSError if one cannot be
    /// written; then none of the failed file remains).
    fn finish_trace(&mut self, py: Python<'_>) -> PyResult<()> {
        guarded(|| {
            let sim = &mut self.sim;
            py.detach(|| sim.finish_trace()).map_err(trace_to_py)
        })
    }

    /// Drop the trace unfinished: its temporary files are removed.
    fn discard_trace(&mut self) -> PyResult<()> {
        guarded(|| {
            self.sim.discard_trace();
            Ok(())
        })
    }

    /// Simulated time now, ns.
    fn now_ns(&self) -> u64 {
        self.sim.now().0
    }

    /// Cumulative ns per state for every VCPU: [(domain, vcpu, running, runnable, blocked, offline)].
    fn vcpu_states(&self) -> PyResult<Vec<VcpuStateRow>> {
        guarded(|| {
            let now = self.sim.now();
            Ok(self
                .sim
                .vcpus()
                .iter()
                .map(|v| {
                    let s = v.state_ns_at(now);
                    (v.dom.0, v.index, s[0], s[1], s[2], s[3])
                })
                .collect())
        })
    }

    /// Average bytes of model state per VCPU.
    fn bytes_per_vcpu(&self) -> f64 {
        self.sim.bytes_per_vcpu()
    }

    /// Events in the queue now.
    fn queue_len(&self) -> usize {
        self.sim.queue_len()
    }

    /// The scheduler's state, for debugging.
    fn dump(&mut self) -> PyResult<String> {
        guarded(|| Ok(self.sim.dump()))
    }

    /// The scheduler's state as data, JSON text of `{global, pcpus,
    /// domains, vcpus}` (`vmsched.Sim.state()` reads it).
    fn sched_state(&mut self) -> PyResult<String> {
        guarded(|| Ok(serde_json::to_string(&self.sim.sched_state()).expect("JSON values")))
    }
}

/// A cluster of hosts joined by a network, simulated together.
#[pyclass(unsendable, name = "Cluster")]
struct ClusterSim {
    cluster: Cluster,
}

#[pymethods]
impl ClusterSim {
    #[new]
    fn new(json: &str) -> PyResult<ClusterSim> {
        guarded(|| {
            let sc = parse_cluster(json)?;
            let cluster = Cluster::new(&sc).map_err(to_py)?;
            Ok(ClusterSim { cluster })
        })
    }

    /// Simulate every host up to `until_ns`; returns (now_ns, end_ns,
    /// events, finished), `now_ns` being the host that is furthest behind.
    fn run_until(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<(u64, u64, u64, bool)> {
        guarded(|| {
            let c = &mut self.cluster;
            let p = py.detach(|| c.run_until(Time(until_ns))).map_err(to_py)?;
            Ok((p.now.0, p.end.0, p.events, p.finished))
        })
    }

    /// The cluster summary as JSON text.
    fn summary(&self, wall_s: f64) -> PyResult<String> {
        guarded(|| Ok(self.cluster.summary(wall_s).to_string()))
    }

    /// Each host's time series: [(host name, the columns of Sim.series)].
    fn series<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyDict>)>> {
        guarded(|| {
            self.cluster
                .hosts()
                .map(|(name, sim)| Ok((name.to_string(), series_dict(py, sim)?)))
                .collect()
        })
    }

    /// The hosts' names, in order.
    fn host_names(&self) -> Vec<String> {
        self.cluster.hosts().map(|(n, _)| n.to_string()).collect()
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(bench_cases, m)?)?;
    m.add_function(wrap_pyfunction!(bench_commands, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scaling, m)?)?;
    m.add_function(wrap_pyfunction!(bare_heap_loop, m)?)?;
    m.add_function(wrap_pyfunction!(indent_json, m)?)?;
    m.add_function(wrap_pyfunction!(float_repr, m)?)?;
    m.add_function(wrap_pyfunction!(toml_json, m)?)?;
    m.add_class::<Sim>()?;
    m.add_class::<ClusterSim>()?;
    pysched::add_to(m)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
