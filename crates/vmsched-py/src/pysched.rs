//! Schedulers written in Python: the bridge between the core's [`Scheduler`]
//! trait and an instance of a `vmsched.Scheduler` subclass.
//!
//! The Python package loads the user's class and registers it here with its
//! declarations (parameters, allocation, shares) under the name the user
//! gave it (`lottery.py:Lottery`); the core then validates and runs it like
//! any scheduler. Each hook the class overrides is called with plain
//! integers (VCPU, PCPU and domain ids); a hook it does not override keeps
//! the trait's default, without calling into Python at all. During a hook
//! the instance's `host` ([`Host`]) reads and acts on the world through the
//! hook's `SchedCtx`; outside a hook it refuses.
//!
//! Faults stop the run, never crash it and never go unnoticed: an exception
//! in a hook, a value a hook must not return, or a hook that has not
//! returned after `hook_timeout_s` of wall time (a watchdog thread then
//! raises `HookTimeout` inside it) is kept as the run's fault; the engine
//! stops after the current event and the bindings raise `SchedulerFault`
//! naming the hook, with the user's exception as its cause.

use pyo3::create_exception;
use pyo3::exceptions::{PyBaseException, PyException, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;
use vmsched_core::ids::{DomId, PcpuId, VcpuId};
use vmsched_core::params::{Default, ParamKind, ParamScope, ParamSpec, Params};
use vmsched_core::sched::{
    self, placement, Decision, SchedCtx, SchedState, Scheduler, SchedulerInfo,
};
use vmsched_core::SimError;

create_exception!(
    _core,
    SchedulerFault,
    PyException,
    "A scheduler written in Python failed: its exception (the cause), a value a hook must not return, or a hook that did not return."
);
create_exception!(
    _core,
    HookTimeout,
    PyBaseException,
    "Raised inside a scheduler hook that ran longer than its class's hook_timeout_s."
);

/// Most scheduler timer ids a Python scheduler may use (the engine keeps a
/// slot per id).
const MAX_TIMER_ID: u32 = 4096;

thread_local! {
    /// The first fault of the Python scheduler running on this thread.
    static FAULT: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

fn keep_fault(e: PyErr) {
    FAULT.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some(e);
        }
    });
}

/// The fault kept since the last call, if any (a hook that failed outside
/// the event loop: `counters` while the summary is written).
pub fn take_fault() -> Option<PyErr> {
    FAULT.with(|f| f.borrow_mut().take())
}

/// The Python error for a run that stopped with `e`, if a Python scheduler
/// caused it: the kept fault, or the engine's report of a broken contract
/// (`scheduler NAME chose ...`) naming a scheduler registered from Python.
pub fn fault_for(e: &SimError) -> Option<PyErr> {
    let SimError::Internal(m) = e else {
        return None;
    };
    if let Some(kept) = take_fault() {
        return Some(kept);
    }
    let name = m.strip_prefix("scheduler ")?.split(' ').next()?;
    let info = sched::find(name)?;
    info.external?;
    Some(SchedulerFault::new_err(format!(
        "{m} (the engine's check of what the scheduler did; docs/write-a-scheduler.md says what each hook must do)"
    )))
}

// ----- the watchdog ----------------------------------------------------------------------

/// One watchdog per process: it samples which hook call is running and
/// interrupts one that stays the same for longer than the limit.
struct Watchdog {
    /// Incremented at every hook call.
    seq: AtomicU64,
    /// A hook is running now.
    active: AtomicBool,
    /// Python's ident of the thread running hooks.
    thread: AtomicI64,
    /// The running scheduler's limit, ms.
    limit_ms: AtomicU64,
    /// The process the watchdog thread runs in (a forked worker starts its own).
    pid: AtomicU32,
}

static WATCH: Watchdog = Watchdog {
    seq: AtomicU64::new(0),
    active: AtomicBool::new(false),
    thread: AtomicI64::new(0),
    limit_ms: AtomicU64::new(10_000),
    pid: AtomicU32::new(0),
};

/// How often the watchdog looks.
const WATCH_EVERY_MS: u64 = 50;

fn start_watchdog() {
    let pid = std::process::id();
    if WATCH.pid.swap(pid, Ordering::SeqCst) == pid {
        return;
    }
    std::thread::spawn(|| {
        let (mut last, mut stuck_ms) = (u64::MAX, 0u64);
        loop {
            std::thread::sleep(Duration::from_millis(WATCH_EVERY_MS));
            let seq = WATCH.seq.load(Ordering::Acquire);
            if !WATCH.active.load(Ordering::Acquire) || seq != last {
                (last, stuck_ms) = (seq, 0);
                continue;
            }
            stuck_ms += WATCH_EVERY_MS;
            if stuck_ms < WATCH.limit_ms.load(Ordering::Relaxed) {
                continue;
            }
            stuck_ms = 0;
            Python::attach(|py| {
                // Under the GIL the hook cannot return: if it is still the
                // same call, the exception lands inside it.
                if WATCH.active.load(Ordering::Acquire) && WATCH.seq.load(Ordering::Acquire) == seq
                {
                    let exc = py.get_type::<HookTimeout>();
                    // SAFETY: a valid type object and thread ident, under the GIL.
                    unsafe {
                        pyo3::ffi::PyThreadState_SetAsyncExc(
                            WATCH.thread.load(Ordering::Relaxed) as _,
                            exc.as_ptr(),
                        );
                    }
                }
            });
        }
    });
}

// ----- the host as a hook sees it --------------------------------------------------------

/// The host as a Python scheduler's hooks see it (`self.host`): PCPUs,
/// VCPUs, domains and their state, and the actions a scheduler may take.
/// Ids are plain integers. Valid only while a hook runs.
#[pyclass(unsendable, module = "vmsched._core")]
pub struct Host {
    ctx: Cell<*mut SchedCtx<'static>>,
}

// The host lends out the hook's `&mut SchedCtx` from `&self`: a Python
// method call cannot hold a Rust borrow, and calls never overlap (one
// thread, one hook at a time, the pointer cleared when the hook returns).
#[allow(clippy::mut_from_ref)]
impl Host {
    fn ctx(&self) -> PyResult<&mut SchedCtx<'static>> {
        let p = self.ctx.get();
        if p.is_null() {
            return Err(PyValueError::new_err(
                "the host can be used only inside a scheduler hook",
            ));
        }
        // SAFETY: set from the `&mut SchedCtx` of the hook being called, which
        // the bridge does not touch until the call returns and then clears.
        Ok(unsafe { &mut *p })
    }

    fn vcpu(&self, v: i64) -> PyResult<(&mut SchedCtx<'static>, VcpuId)> {
        let ctx = self.ctx()?;
        if v < 0 || v as usize >= ctx.nvcpus() {
            return Err(PyValueError::new_err(format!(
                "vcpu {v} does not exist; expected 0..{}",
                ctx.nvcpus()
            )));
        }
        Ok((ctx, VcpuId(v as u32)))
    }

    fn pcpu(ctx: &SchedCtx, p: i64) -> PyResult<PcpuId> {
        if p < 0 || p as usize >= ctx.npcpus() {
            return Err(PyValueError::new_err(format!(
                "pcpu {p} does not exist; expected 0..{}",
                ctx.npcpus()
            )));
        }
        Ok(PcpuId(p as u32))
    }

    fn dom(&self, d: i64) -> PyResult<(&mut SchedCtx<'static>, DomId)> {
        let ctx = self.ctx()?;
        if d < 0 || d as usize >= ctx.ndomains() {
            return Err(PyValueError::new_err(format!(
                "domain {d} does not exist; expected 0..{}",
                ctx.ndomains()
            )));
        }
        Ok((ctx, DomId(d as u32)))
    }
}

#[pymethods]
impl Host {
    /// Simulated time now, ns.
    fn now(&self) -> PyResult<u64> {
        Ok(self.ctx()?.now().0)
    }

    /// Number of PCPUs.
    #[getter]
    fn npcpus(&self) -> PyResult<usize> {
        Ok(self.ctx()?.npcpus())
    }

    /// Number of VCPUs on the host (ids 0..nvcpus).
    #[getter]
    fn nvcpus(&self) -> PyResult<usize> {
        Ok(self.ctx()?.nvcpus())
    }

    /// Number of domains (ids 0..ndomains).
    #[getter]
    fn ndomains(&self) -> PyResult<usize> {
        Ok(self.ctx()?.ndomains())
    }

    /// The PCPU running this hook, or None.
    fn local(&self) -> PyResult<Option<u32>> {
        Ok(self.ctx()?.local().map(|p| p.0))
    }

    /// The VCPU `pcpu` runs, or None if it is idle.
    fn current(&self, pcpu: i64) -> PyResult<Option<u32>> {
        let ctx = self.ctx()?;
        let p = Host::pcpu(ctx, pcpu)?;
        Ok(ctx.current(p).map(|v| v.0))
    }

    /// May `vcpu` run (not blocked, paused, migrating or offline)?
    fn runnable(&self, vcpu: i64) -> PyResult<bool> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.is_runnable(v))
    }

    /// The PCPU `vcpu` runs on now, or None.
    fn running_on(&self, vcpu: i64) -> PyResult<Option<u32>> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.running_on(v).map(|p| p.0))
    }

    /// `vcpu`'s processor: where it runs, last ran or is queued.
    fn processor(&self, vcpu: i64) -> PyResult<u32> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.processor(v).0)
    }

    /// Set `vcpu`'s processor (placement; it must be in its hard affinity).
    fn set_processor(&self, vcpu: i64, pcpu: i64) -> PyResult<()> {
        let (ctx, v) = self.vcpu(vcpu)?;
        let p = Host::pcpu(ctx, pcpu)?;
        if !ctx.hard_affinity(v).test(p) {
            return Err(PyValueError::new_err(format!(
                "pcpu {pcpu} is outside vcpu {vcpu}'s hard affinity"
            )));
        }
        ctx.set_processor(v, p);
        Ok(())
    }

    /// The domain `vcpu` belongs to.
    fn domain_of(&self, vcpu: i64) -> PyResult<u32> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.domain_of(v).0)
    }

    /// `vcpu`'s number within its domain.
    fn vcpu_index(&self, vcpu: i64) -> PyResult<u32> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.vcpu_index(v))
    }

    /// The VCPUs of domain `dom`.
    fn vcpus_of(&self, dom: i64) -> PyResult<Vec<u32>> {
        let (ctx, d) = self.dom(dom)?;
        Ok(ctx.vcpus_of(d).map(|v| v.0).collect())
    }

    /// Domain `dom`'s name.
    fn domain_name(&self, dom: i64) -> PyResult<String> {
        let (ctx, d) = self.dom(dom)?;
        Ok(ctx.domain_name(d).to_string())
    }

    /// `vcpu` as people name it: `web.v1`.
    fn vcpu_name(&self, vcpu: i64) -> PyResult<String> {
        let (ctx, v) = self.vcpu(vcpu)?;
        let d = ctx.domain_of(v);
        Ok(format!("{}.v{}", ctx.domain_name(d), ctx.vcpu_index(v)))
    }

    /// Is `dom` a driver domain?
    fn is_driver(&self, dom: i64) -> PyResult<bool> {
        let (ctx, d) = self.dom(dom)?;
        Ok(ctx.is_driver(d))
    }

    /// The PCPUs `vcpu` may run on (its hard affinity).
    fn hard_affinity(&self, vcpu: i64) -> PyResult<Vec<u32>> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.hard_affinity(v).iter().map(|p| p.0).collect())
    }

    /// May `vcpu` run on `pcpu` (its hard affinity)?
    fn allowed(&self, vcpu: i64, pcpu: i64) -> PyResult<bool> {
        let (ctx, v) = self.vcpu(vcpu)?;
        let p = Host::pcpu(ctx, pcpu)?;
        Ok(ctx.hard_affinity(v).test(p))
    }

    /// Is `vcpu` online (not taken down by hotplug)?
    fn online(&self, vcpu: i64) -> PyResult<bool> {
        let (ctx, v) = self.vcpu(vcpu)?;
        Ok(ctx.is_online(v))
    }

    /// Ask `pcpu` to reschedule (at once if it runs this hook, else after
    /// the platform's IPI latency).
    fn tickle(&self, pcpu: i64) -> PyResult<()> {
        let ctx = self.ctx()?;
        let p = Host::pcpu(ctx, pcpu)?;
        ctx.tickle(p);
        Ok(())
    }

    /// Arm your timer `id` (0..4096) to fire at `at_ns` on `pcpu`; its
    /// `timer(id)` hook runs then. Re-arming replaces the earlier arming.
    fn arm_timer(&self, id: i64, at_ns: u64, pcpu: i64) -> PyResult<()> {
        let ctx = self.ctx()?;
        let p = Host::pcpu(ctx, pcpu)?;
        if !(0..MAX_TIMER_ID as i64).contains(&id) {
            return Err(PyValueError::new_err(format!(
                "timer id {id}; expected 0..{MAX_TIMER_ID}"
            )));
        }
        ctx.arm_timer(id as u32, vmsched_core::Time(at_ns), p);
        Ok(())
    }

    /// Disarm your timer `id`.
    fn cancel_timer(&self, id: i64) -> PyResult<()> {
        let ctx = self.ctx()?;
        if (0..MAX_TIMER_ID as i64).contains(&id) {
            ctx.cancel_timer(id as u32);
        }
        Ok(())
    }

    /// Pause `vcpu` (parking it, as a cap does); `sleep(vcpu)` follows.
    fn pause(&self, vcpu: i64) -> PyResult<()> {
        let (ctx, v) = self.vcpu(vcpu)?;
        ctx.pause(v);
        Ok(())
    }

    /// Undo one of your `pause(vcpu)`; `wake(vcpu)` follows if it can run.
    fn unpause(&self, vcpu: i64) -> PyResult<()> {
        let (ctx, v) = self.vcpu(vcpu)?;
        ctx.unpause(v);
        Ok(())
    }

    /// Move `vcpu` elsewhere: once it is off its PCPU, `pick_cpu`,
    /// `migrate` and `wake` follow.
    fn migrate(&self, vcpu: i64) -> PyResult<()> {
        let (ctx, v) = self.vcpu(vcpu)?;
        ctx.migrate(v);
        Ok(())
    }
}

// ----- the scheduler ---------------------------------------------------------------------

/// The hooks a class may override, in the order of [`Hooks`]' fields.
const HOOKS: &[&str] = &[
    "init",
    "init_domain",
    "insert_vcpu",
    "remove_vcpu",
    "wake",
    "sleep",
    "yield_",
    "do_schedule",
    "context_saved",
    "pick_cpu",
    "migrate",
    "timer",
    "adjust",
    "adjust_global",
];

/// The bound methods of the hooks the class overrides.
#[derive(Default)]
struct Hooks {
    init: Option<Py<PyAny>>,
    init_domain: Option<Py<PyAny>>,
    insert_vcpu: Option<Py<PyAny>>,
    remove_vcpu: Option<Py<PyAny>>,
    wake: Option<Py<PyAny>>,
    sleep: Option<Py<PyAny>>,
    yield_: Option<Py<PyAny>>,
    do_schedule: Option<Py<PyAny>>,
    context_saved: Option<Py<PyAny>>,
    pick_cpu: Option<Py<PyAny>>,
    migrate: Option<Py<PyAny>>,
    timer: Option<Py<PyAny>>,
    adjust: Option<Py<PyAny>>,
    adjust_global: Option<Py<PyAny>>,
}

/// A `vmsched.Scheduler` instance behind the core's [`Scheduler`] trait.
struct PyScheduler {
    name: &'static str,
    obj: Option<Py<PyAny>>,
    host: Py<Host>,
    hooks: Hooks,
    /// The fault that stopped it (the first one); no hook runs after it.
    failed: Option<String>,
    limit_ms: u64,
}

/// A Python value as JSON-like Python objects.
fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        J::Number(n) => match n.as_i64() {
            Some(i) => i.into_pyobject(py)?.into_any(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        J::String(s) => s.into_pyobject(py)?.into_any(),
        J::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        J::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn params_dict<'py>(py: Python<'py>, p: &Params) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &p.to_json())
}

impl PyScheduler {
    /// Call hook `hook` (if the class overrides it) with `ctx` lent to the
    /// host; `call` makes the call and reads its result. A fault is kept,
    /// the run is stopped and `None` returned.
    fn call<R>(
        &mut self,
        ctx: &mut SchedCtx,
        hook: &'static str,
        method: fn(&Hooks) -> &Option<Py<PyAny>>,
        call: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<R>,
    ) -> Option<R> {
        if self.failed.is_some() {
            return None;
        }
        let m = method(&self.hooks).as_ref()?;
        let (host, limit_ms) = (&self.host, self.limit_ms);
        let out = Python::attach(|py| {
            let host = host.bind(py).borrow();
            host.ctx.set((ctx as *mut SchedCtx).cast());
            WATCH.limit_ms.store(limit_ms, Ordering::Relaxed);
            WATCH.seq.fetch_add(1, Ordering::AcqRel);
            WATCH.active.store(true, Ordering::Release);
            let r = call(py, m.bind(py));
            WATCH.active.store(false, Ordering::Release);
            host.ctx.set(std::ptr::null_mut());
            r
        });
        match out {
            Ok(r) => Some(r),
            Err(e) => {
                let why = Python::attach(|py| self.fault(py, hook, e));
                ctx.fail(why);
                None
            }
        }
    }

    /// Keep `e`, raised by `hook`, as the run's fault; returns the message
    /// the engine stops with.
    fn fault(&mut self, py: Python<'_>, hook: &str, e: PyErr) -> String {
        let why = if e.is_instance_of::<HookTimeout>(py) {
            format!(
                "scheduler {}: hook {hook} did not return within {} s (its class's hook_timeout_s)",
                self.name,
                self.limit_ms as f64 / 1000.0
            )
        } else if e.is_instance_of::<SchedulerFault>(py) {
            format!("scheduler {}: {}", self.name, e.value(py))
        } else {
            format!(
                "scheduler {}: hook {hook} raised {}",
                self.name,
                e.value(py)
                    .repr()
                    .map(|r| r.to_string())
                    .unwrap_or_default()
            )
        };
        let kept = if e.is_instance_of::<PyKeyboardInterrupt>(py) {
            e
        } else {
            let f = SchedulerFault::new_err(why.clone());
            if !e.is_instance_of::<SchedulerFault>(py) {
                f.set_cause(py, Some(e));
            }
            f
        };
        keep_fault(kept);
        self.failed = Some(why.clone());
        why
    }

    fn vcpu_hook(&mut self, ctx: &mut SchedCtx, hook: &'static str, v: VcpuId) {
        let m: fn(&Hooks) -> &Option<Py<PyAny>> = match hook {
            "insert_vcpu" => |h| &h.insert_vcpu,
            "remove_vcpu" => |h| &h.remove_vcpu,
            "wake" => |h| &h.wake,
            "sleep" => |h| &h.sleep,
            "yield_" => |h| &h.yield_,
            _ => |h| &h.context_saved,
        };
        self.call(ctx, hook, m, |_, f| f.call1((v.0,)).map(|_| ()));
    }
}

/// A hook returned what it must not: a `SchedulerFault` saying so.
fn bad_return(hook: String, got: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    let shown = got.repr().map(|r| r.to_string()).unwrap_or_default();
    SchedulerFault::new_err(format!("{hook} returned {shown}; expected {expected}"))
}

impl Scheduler for PyScheduler {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        if let Some(why) = &self.failed {
            ctx.fail(why.clone());
            return;
        }
        self.call(ctx, "init", |h| &h.init, |_, f| f.call0().map(|_| ()));
    }

    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.call(
            ctx,
            "init_domain",
            |h| &h.init_domain,
            |py, f| f.call1((dom.0, params_dict(py, params)?)).map(|_| ()),
        );
    }

    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "insert_vcpu", v);
    }

    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "remove_vcpu", v);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "wake", v);
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "sleep", v);
    }

    fn yield_(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "yield_", v);
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, pcpu: PcpuId) -> Decision {
        let (nv, np) = (ctx.nvcpus() as u64, pcpu);
        let got = self.call(
            ctx,
            "do_schedule",
            |h| &h.do_schedule,
            |_, f| {
                let r = f.call1((pcpu.0,))?;
                let hook = || format!("do_schedule({})", pcpu.0);
                let expected = "None (idle), or (vcpu or None, slice in ns > 0 or None)";
                if r.is_none() {
                    return Ok((None, None));
                }
                let t = r
                    .cast::<PyTuple>()
                    .map_err(|_| bad_return(hook(), &r, expected))?;
                if t.len() != 2 {
                    return Err(bad_return(hook(), &r, expected));
                }
                let (a, b) = (t.get_item(0)?, t.get_item(1)?);
                let next = if a.is_none() {
                    None
                } else {
                    match a.extract::<u64>() {
                        Ok(v) if v < nv => Some(VcpuId(v as u32)),
                        _ => {
                            let e = format!("a vcpu id 0..{nv} or None first");
                            return Err(bad_return(hook(), &r, &e));
                        }
                    }
                };
                let slice = if b.is_none() {
                    None
                } else {
                    match b.extract::<u64>() {
                        Ok(s) if s > 0 => Some(s),
                        _ => {
                            let e = "a slice in whole ns > 0, or None, second";
                            return Err(bad_return(hook(), &r, e));
                        }
                    }
                };
                Ok((next, slice))
            },
        );
        let Some((next, slice_ns)) = got else {
            return Decision::IDLE;
        };
        if let Some(v) = next {
            // What the engine would refuse anyway, said in the hook's terms.
            let problem = if !ctx.is_runnable(v) {
                Some("which is not runnable".to_string())
            } else if let Some(q) = ctx.running_on(v).filter(|&q| q != np) {
                Some(format!("which runs on pcpu {q}"))
            } else if !ctx.hard_affinity(v).test(np) {
                Some("whose hard affinity excludes that pcpu".to_string())
            } else {
                None
            };
            if let Some(p) = problem {
                let d = ctx.domain_of(v);
                let who = format!("{}.v{}", ctx.domain_name(d), ctx.vcpu_index(v));
                let why = format!(
                    "scheduler {}: do_schedule({}) chose vcpu {} ({who}), {p}",
                    self.name, np.0, v.0
                );
                keep_fault(SchedulerFault::new_err(why.clone()));
                self.failed = Some(why.clone());
                ctx.fail(why);
                return Decision::IDLE;
            }
        }
        Decision {
            next,
            slice_ns,
            migrated: next.is_some_and(|v| ctx.processor(v) != np),
        }
    }

    fn context_saved(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.vcpu_hook(ctx, "context_saved", v);
    }

    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        if self.hooks.pick_cpu.is_none() {
            return placement::stay_or_first_allowed(ctx, v);
        }
        let np = ctx.npcpus() as u64;
        let got = self.call(
            ctx,
            "pick_cpu",
            |h| &h.pick_cpu,
            |_, f| {
                let r = f.call1((v.0,))?;
                match r.extract::<u64>() {
                    Ok(p) if p < np => Ok(PcpuId(p as u32)),
                    _ => Err(bad_return(
                        format!("pick_cpu({})", v.0),
                        &r,
                        &format!("a pcpu id 0..{np}"),
                    )),
                }
            },
        );
        got.unwrap_or_else(|| ctx.processor(v))
    }

    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        if self.hooks.migrate.is_none() {
            ctx.set_processor(v, to);
            return;
        }
        self.call(
            ctx,
            "migrate",
            |h| &h.migrate,
            |_, f| f.call1((v.0, to.0)).map(|_| ()),
        );
    }

    fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
        self.call(
            ctx,
            "timer",
            |h| &h.timer,
            |_, f| f.call1((id,)).map(|_| ()),
        );
    }

    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
        self.call(
            ctx,
            "adjust",
            |h| &h.adjust,
            |py, f| f.call1((dom.0, params_dict(py, params)?)).map(|_| ()),
        );
    }

    fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
        self.call(
            ctx,
            "adjust_global",
            |h| &h.adjust_global,
            |py, f| f.call1((params_dict(py, params)?,)).map(|_| ()),
        );
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let Some(obj) = &self.obj else {
            return Vec::new();
        };
        Python::attach(|py| {
            let got: PyResult<Vec<(String, u64)>> =
                obj.bind(py).call_method0("counters").and_then(|d| {
                    let d = d.cast_into::<PyDict>().map_err(|e| {
                        SchedulerFault::new_err(format!(
                            "counters() returned {}; expected a dict of name -> whole number",
                            e.into_inner()
                                .repr()
                                .map(|r| r.to_string())
                                .unwrap_or_default()
                        ))
                    })?;
                    d.iter()
                        .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
                        .collect()
                });
            match got {
                Ok(v) => v.into_iter().map(|(k, n)| (static_str(&k), n)).collect(),
                Err(e) => {
                    let why = format!(
                        "scheduler {}: counters() failed: {}",
                        self.name,
                        e.value(py)
                    );
                    let f = SchedulerFault::new_err(why);
                    f.set_cause(py, Some(e));
                    keep_fault(f);
                    Vec::new()
                }
            }
        })
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        let Some(obj) = &self.obj else {
            return String::new();
        };
        Python::attach(|py| {
            let host = self.host.bind(py).borrow();
            host.ctx
                .set((ctx as *const SchedCtx as *mut SchedCtx).cast());
            let r = obj.bind(py).call_method0("dump").and_then(|s| s.extract());
            host.ctx.set(std::ptr::null_mut());
            r.unwrap_or_else(|e| format!("dump() raised {e}"))
        })
    }

    fn state(&self, ctx: &SchedCtx) -> SchedState {
        let Some(obj) = &self.obj else {
            return SchedState::default();
        };
        Python::attach(|py| {
            let host = self.host.bind(py).borrow();
            host.ctx
                .set((ctx as *const SchedCtx as *mut SchedCtx).cast());
            let r = obj.bind(py).call_method0("state").and_then(|st| {
                let json = py.import("json")?;
                json.call_method1("dumps", (st,))?.extract::<String>()
            });
            host.ctx.set(std::ptr::null_mut());
            // A state that is not {global, pcpus, domains, vcpus} of JSON
            // values reads as empty: it is for tests, never for the run.
            r.ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default()
        })
    }
}

/// A counter's name as the summary needs it (`&'static`): each distinct
/// name is kept once per process.
fn static_str(s: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.push(n);
    n
}

/// Build one instance: `factory(host)` returns (instance, names of the hooks
/// its class overrides). A failure is kept and reported by `init`.
fn instantiate(
    name: &'static str,
    factory: &Py<PyAny>,
    limit_ms: u64,
    params: &Params,
) -> Box<dyn Scheduler> {
    Python::attach(|py| {
        // A fault left from an earlier run on this thread is not this run's.
        take_fault();
        start_watchdog();
        let ident: PyResult<i64> = py
            .import("threading")
            .and_then(|t| t.call_method0("get_ident"))
            .and_then(|i| i.extract());
        if let Ok(i) = ident {
            WATCH.thread.store(i, Ordering::Relaxed);
        }
        let host = Py::new(
            py,
            Host {
                ctx: Cell::new(std::ptr::null_mut()),
            },
        )
        .expect("a Host object");
        let mut me = PyScheduler {
            name,
            obj: None,
            host: host.clone_ref(py),
            hooks: Hooks::default(),
            failed: None,
            limit_ms,
        };
        let made = params_dict(py, params)
            .and_then(|p| factory.bind(py).call1((host, p)))
            .and_then(|r| r.extract::<(Py<PyAny>, Vec<String>)>());
        let (obj, overridden) = match made {
            Ok(x) => x,
            Err(e) => {
                me.fault(py, "__init__", e);
                return Box::new(me) as Box<dyn Scheduler>;
            }
        };
        let bound = obj.bind(py);
        let mut slots: Vec<Option<Py<PyAny>>> = HOOKS
            .iter()
            .map(|h| {
                overridden
                    .iter()
                    .any(|o| o == h)
                    .then(|| bound.getattr(*h).ok().map(|m| m.unbind()))
                    .flatten()
            })
            .collect();
        let mut take = |i: usize| slots[i].take();
        me.hooks = Hooks {
            init: take(0),
            init_domain: take(1),
            insert_vcpu: take(2),
            remove_vcpu: take(3),
            wake: take(4),
            sleep: take(5),
            yield_: take(6),
            do_schedule: take(7),
            context_saved: take(8),
            pick_cpu: take(9),
            migrate: take(10),
            timer: take(11),
            adjust: take(12),
            adjust_global: take(13),
        };
        me.obj = Some(obj);
        Box::new(me) as Box<dyn Scheduler>
    })
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// One declared parameter, from the Python declaration (a dict with name,
/// kind, default, min, max, choices, scope, unit, doc).
fn param_spec(d: &serde_json::Value) -> Result<ParamSpec, String> {
    let s = |k: &str| d.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let name = s("name");
    let f = |k: &str, dflt: f64| d.get(k).and_then(|v| v.as_f64()).unwrap_or(dflt);
    let i = |k: &str, dflt: i64| d.get(k).and_then(|v| v.as_i64()).unwrap_or(dflt);
    let (kind, default) = match s("kind").as_str() {
        "int" => (
            ParamKind::Int {
                min: i("min", i64::MIN),
                max: i("max", i64::MAX),
            },
            Default::Int(i("default", 0)),
        ),
        "float" => (
            ParamKind::Float {
                min: f("min", f64::MIN),
                max: f("max", f64::MAX),
            },
            Default::Float(f("default", 0.0)),
        ),
        "bool" => (
            ParamKind::Bool,
            Default::Bool(d.get("default").and_then(|v| v.as_bool()).unwrap_or(false)),
        ),
        "choice" => {
            let choices: Vec<&'static str> = d
                .get("choices")
                .and_then(|c| c.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(|x| leak(x.into()))
                        .collect()
                })
                .unwrap_or_default();
            (
                ParamKind::Choice(Box::leak(choices.into_boxed_slice())),
                Default::Str(leak(s("default"))),
            )
        }
        other => return Err(format!("parameter {name}: unknown kind {other:?}")),
    };
    let scope = match s("scope").as_str() {
        "global" => ParamScope::Global,
        _ => ParamScope::Domain,
    };
    Ok(ParamSpec {
        name: leak(name),
        unit: leak(s("unit")),
        kind,
        default,
        scope,
        doc: leak(s("doc")),
    })
}

/// How a Python scheduler caps (`allocation = {...}` in its class), in the
/// catalogue's own form.
fn allocation(a: &serde_json::Value) -> Result<sched::Allocation, String> {
    use sched::{AllocParam, AllocValue};
    let text = |v: &serde_json::Value, k: &str| {
        leak(v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string())
    };
    let mut domain = Vec::new();
    for p in a
        .get("domain")
        .and_then(|d| d.as_array())
        .into_iter()
        .flatten()
    {
        let value = if let Some(x) = p.get("share_of").and_then(|x| x.as_f64()) {
            AllocValue::Share(x)
        } else if let Some(x) = p.get("fixed").and_then(|x| x.as_f64()) {
            AllocValue::Fixed(x)
        } else if let Some(b) = p.get("flag").and_then(|x| x.as_bool()) {
            AllocValue::Flag(b)
        } else {
            return Err(format!(
                "allocation parameter {}: expected share_of, fixed or flag",
                text(p, "name")
            ));
        };
        domain.push(AllocParam {
            name: text(p, "name"),
            unit: text(p, "unit"),
            value,
            since: text(p, "since"),
        });
    }
    Ok(sched::Allocation {
        rule: text(a, "rule"),
        since: text(a, "since"),
        domain: Box::leak(domain.into_boxed_slice()),
        frames: None,
    })
}

/// Register a Python scheduler class under `name`. `decl` (JSON text) holds
/// its declarations: `params` (a list of parameter dicts), `title`,
/// `summary`, `can_cap`/`allocation`-free; `factory(host, params)` returns
/// (instance, overridden hook names). Raises ValueError on a bad declaration
/// or a built-in's name.
#[pyfunction]
pub fn register_scheduler(name: &str, decl: &str, factory: Py<PyAny>) -> PyResult<()> {
    let v: serde_json::Value = serde_json::from_str(decl)
        .map_err(|e| PyValueError::new_err(format!("bad declaration JSON: {e}")))?;
    let specs = v
        .get("params")
        .and_then(|p| p.as_array())
        .map(|a| a.iter().map(param_spec).collect::<Result<Vec<_>, _>>())
        .transpose()
        .map_err(PyValueError::new_err)?
        .unwrap_or_default();
    let limit_ms = (v
        .get("hook_timeout_s")
        .and_then(|x| x.as_f64())
        .unwrap_or(10.0)
        * 1000.0)
        .max(1.0) as u64;
    let name: &'static str = leak(name.to_string());
    let params: &'static [ParamSpec] = Box::leak(specs.into_boxed_slice());
    let make: &'static sched::ExternalFactory = Box::leak(Box::new(move |p: &Params| {
        instantiate(name, &factory, limit_ms, p)
    }));
    let text = |k: &str| leak(v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string());
    let mut info =
        SchedulerInfo::external(name, params, make).about(text("summary"), text("origin"));
    if !text("title").is_empty() {
        info.title = text("title");
    }
    if let Some(a) = v.get("allocation").filter(|a| !a.is_null()) {
        info = info.with_allocation(allocation(a).map_err(PyValueError::new_err)?);
    }
    sched::register_external(info).map_err(PyValueError::new_err)?;
    Ok(())
}

/// Remove the Python scheduler registered under `name` from the catalogue;
/// returns whether there was one (a built-in's name: false).
#[pyfunction]
pub fn unregister_scheduler(name: &str) -> bool {
    sched::unregister_external(name)
}

/// Add the bridge's function, class and exceptions to the `_core` module.
pub fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(register_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(unregister_scheduler, m)?)?;
    m.add_class::<Host>()?;
    m.add("SchedulerFault", m.py().get_type::<SchedulerFault>())?;
    m.add("HookTimeout", m.py().get_type::<HookTimeout>())?;
    Ok(())
}
