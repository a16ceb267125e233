//! The scheduler contract and the registry of schedulers.
//!
//! A scheduler implements [`Scheduler`], whose hooks mirror Xen's
//! `struct scheduler` / `sched_ops`, so an algorithm reads the same here as in
//! Xen. The engine calls the hooks; a hook acts on the world only through the
//! [`SchedCtx`] it is given (read the clock, topology and VCPU states; tickle
//! PCPUs; arm its own timers; pause, unpause or migrate VCPUs). It cannot touch
//! guest work or devices.
//!
//! The engine guarantees: a VCPU runs on at most one PCPU; `do_schedule` is the
//! only way a PCPU changes what it runs; blocking calls no hook (the scheduler
//! sees the previous VCPU no longer runnable in `do_schedule`, as in Xen).
//!
//! Hooks in order of a VCPU's life:
//!
//! | hook | called when |
//! |---|---|
//! | [`Scheduler::init`] | the host is built (PCPUs known) |
//! | [`Scheduler::init_domain`] | a domain is created, with its validated parameters |
//! | [`Scheduler::insert_vcpu`] | a VCPU joins the scheduler (it is not runnable yet) |
//! | [`Scheduler::wake`] | a VCPU becomes runnable (work arrived, unpaused, migrated, back online with work) |
//! | [`Scheduler::do_schedule`] | a PCPU must choose what to run |
//! | [`Scheduler::context_saved`] | the previous VCPU is off the PCPU |
//! | [`Scheduler::sleep`] | a VCPU is paused, parked, taken offline or being migrated |
//! | [`Scheduler::yield_`] | the running VCPU yields |
//! | [`Scheduler::pick_cpu`] | a VCPU is being placed (migration) |
//! | [`Scheduler::timer`] | a timer the scheduler armed fires |
//! | [`Scheduler::adjust`] / [`Scheduler::adjust_global`] | parameters change at run time |
//! | [`Scheduler::remove_vcpu`] | a VCPU leaves (domain destroyed; not hot-unplug, which is `sleep`) |
//!
//! A scheduler that extends another (the research proposals built on Credit
//! and Credit2) holds it as a field, forwards the hooks it does not change
//! with `forward_hooks!`, and reaches into it only through the methods its
//! parent module offers (the variants are child modules of the scheduler
//! they extend).

/// The parameter declarations of a scheduler built on another: the base
/// scheduler's (`$base`, a `&[ParamSpec]` const) followed by its own
/// (`$own`), as one `&'static [ParamSpec]`, each declaration written once.
macro_rules! extended_params {
    ($base:expr, $own:expr) => {{
        const N: usize = $base.len() + $own.len();
        const ALL: [crate::params::ParamSpec; N] = crate::params::concat($base, $own);
        &ALL
    }};
}

/// Forward the listed [`Scheduler`] hooks unchanged to the scheduler held in
/// field `$inner`: a scheduler built on another by composition (Mcredit2 on
/// Credit2, the Credit variants on Credit) writes only the hooks it changes.
/// Usage, inside `impl Scheduler for X`: `forward_hooks!(inner: wake, sleep);`.
/// (Defined before the scheduler modules, which see it by textual scope.)
macro_rules! forward_hooks {
    ($inner:ident: $($hook:ident),* $(,)?) => {
        $( forward_hooks!(@hook $inner $hook); )*
    };
    (@hook $inner:ident init) => {
        fn init(&mut self, ctx: &mut SchedCtx) {
            Scheduler::init(&mut self.$inner, ctx)
        }
    };
    (@hook $inner:ident init_domain) => {
        fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
            Scheduler::init_domain(&mut self.$inner, ctx, dom, params)
        }
    };
    (@hook $inner:ident insert_vcpu) => {
        fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::insert_vcpu(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident remove_vcpu) => {
        fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::remove_vcpu(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident wake) => {
        fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::wake(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident sleep) => {
        fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::sleep(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident yield_) => {
        fn yield_(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::yield_(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident do_schedule) => {
        fn do_schedule(&mut self, ctx: &mut SchedCtx, pcpu: PcpuId) -> Decision {
            Scheduler::do_schedule(&mut self.$inner, ctx, pcpu)
        }
    };
    (@hook $inner:ident context_saved) => {
        fn context_saved(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
            Scheduler::context_saved(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident pick_cpu) => {
        fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
            Scheduler::pick_cpu(&mut self.$inner, ctx, v)
        }
    };
    (@hook $inner:ident migrate) => {
        fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
            Scheduler::migrate(&mut self.$inner, ctx, v, to)
        }
    };
    (@hook $inner:ident timer) => {
        fn timer(&mut self, ctx: &mut SchedCtx, id: u32) {
            Scheduler::timer(&mut self.$inner, ctx, id)
        }
    };
    (@hook $inner:ident adjust) => {
        fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params) {
            Scheduler::adjust(&mut self.$inner, ctx, dom, params)
        }
    };
    (@hook $inner:ident adjust_global) => {
        fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
            Scheduler::adjust_global(&mut self.$inner, ctx, params)
        }
    };
}

pub mod placement;
pub mod runq;

pub use runq::RunQueues;

use crate::cpumask::CpuMask;
use crate::domain::Vcpu;
use crate::engine::World;
use crate::error::ScenarioError;
use crate::host::{Platform, Topology};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{ParamScope, ParamSpec, Params};
use crate::time::Time;

/// What `do_schedule` decided for a PCPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The VCPU to run, or `None` for the idle VCPU.
    pub next: Option<VcpuId>,
    /// Length of the slice in ns; `None` arms no timer (Xen's `-1`, idle).
    pub slice_ns: Option<u64>,
    /// The chosen VCPU was taken from another PCPU's queue.
    pub migrated: bool,
}

impl Decision {
    /// Run the idle VCPU, with no timer.
    pub const IDLE: Decision = Decision {
        next: None,
        slice_ns: None,
        migrated: false,
    };
}

/// Default turn of [`Scheduler::slice_ns`]: 10 ms (Xen 2.0's round-robin's).
pub const DEFAULT_SLICE_NS: u64 = 10_000_000;

/// A VM scheduler. See the module documentation for the contract.
///
/// Every hook has a default body. A scheduler that keeps its runnable VCPUs
/// in per-PCPU FIFOs returns them from [`Scheduler::run_queues`], and the
/// defaults of `insert_vcpu`, `remove_vcpu`, `wake`, `sleep`, `do_schedule`
/// and `migrate` run it as a round-robin ([`runq`] says exactly how): it
/// writes only the hooks where it differs, and [`Scheduler::slice_ns`] for
/// the length of a turn. A scheduler with its own queues (every built-in
/// but the simplest) writes `wake`, `sleep` and `do_schedule` itself; their
/// defaults stop the run, naming the hook, if it has neither.
pub trait Scheduler: Send {
    /// The name it is registered under, for messages. Default: empty, and
    /// messages use the name the scenario gives it.
    fn name(&self) -> &'static str {
        ""
    }

    /// The scheduler's per-PCPU FIFOs, if it keeps its runnable VCPUs in
    /// [`RunQueues`]: the default hooks then work on them. Default: none.
    fn run_queues(&mut self) -> Option<&mut RunQueues> {
        None
    }

    /// The slice the default `do_schedule` gives `v` (ns). Default:
    /// [`DEFAULT_SLICE_NS`].
    fn slice_ns(&self, _v: VcpuId) -> u64 {
        DEFAULT_SLICE_NS
    }

    /// The host is built: `ctx.npcpus()` PCPUs exist. Arm periodic timers here.
    fn init(&mut self, _ctx: &mut SchedCtx) {}

    /// A domain is created with its validated per-domain parameters.
    fn init_domain(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    /// A VCPU joins. Its `processor` holds the engine's initial placement; the
    /// scheduler may change it with [`SchedCtx::set_processor`]. It is not
    /// runnable yet (it is woken when its guest gets work). Default: with
    /// [`RunQueues`], the least loaded PCPU of its hard affinity
    /// ([`RunQueues::place`]); without, the engine's placement.
    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if let Some(q) = self.run_queues() {
            q.place(ctx, v);
        }
    }

    /// A VCPU leaves the scheduler (its domain is destroyed). It is neither
    /// running nor runnable. Hot-unplug (`xl vcpu-set`) does not remove a
    /// VCPU: as in Xen it stays inserted and the scheduler hears `sleep`.
    /// Default: with [`RunQueues`], [`RunQueues::forget`].
    fn remove_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if let Some(q) = self.run_queues() {
            q.forget(ctx, v);
        }
    }

    /// `v` became runnable. May be called while `v` is still running (Xen
    /// calls wake regardless); a scheduler checks and returns early.
    /// Default: [`RunQueues::wake`].
    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match self.run_queues() {
            Some(q) => q.wake(ctx, v),
            None => ctx.fail(no_queues(self.name(), "wake")),
        }
    }

    /// `v` stopped being runnable for a reason other than blocking (pause,
    /// parking, migration, going offline). If it is running, tickle its
    /// PCPU; if queued, dequeue it. For `xl pause` and hotplug the engine
    /// calls it, as Xen's `vcpu_sleep_nosync` does, whenever `v` is not
    /// runnable after the change, even if it already was not (blocked or
    /// paused): it must then do nothing harmful. Default: [`RunQueues::sleep`].
    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match self.run_queues() {
            Some(q) => q.sleep(ctx, v),
            None => ctx.fail(no_queues(self.name(), "sleep")),
        }
    }

    /// The running VCPU `v` yields; a `do_schedule` on its PCPU follows at once.
    fn yield_(&mut self, _ctx: &mut SchedCtx, _v: VcpuId) {}

    /// PCPU `pcpu` must choose. `ctx.current(pcpu)` is the previous VCPU
    /// (`None` if idle); `ctx.is_runnable(prev)` tells whether it may continue.
    /// Default: [`RunQueues::next`] for [`Scheduler::slice_ns`].
    fn do_schedule(&mut self, ctx: &mut SchedCtx, pcpu: PcpuId) -> Decision {
        let next = match self.run_queues() {
            Some(q) => q.next(ctx, pcpu),
            None => {
                ctx.fail(no_queues(self.name(), "do_schedule"));
                return Decision::IDLE;
            }
        };
        RunQueues::decision(next, next.map_or(0, |v| self.slice_ns(v)))
    }

    /// `v` has been switched off its PCPU.
    fn context_saved(&mut self, _ctx: &mut SchedCtx, _v: VcpuId) {}

    /// Choose a PCPU for `v` (migration). By default `v` stays where it is
    /// if its hard affinity allows, else goes to the first PCPU it allows.
    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        placement::stay_or_first_allowed(ctx, v)
    }

    /// Move `v`'s bookkeeping to `to` (after `pick_cpu`, during a migration).
    /// Default: [`RunQueues::moved`] with [`RunQueues`], else set its processor.
    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        match self.run_queues() {
            Some(q) => q.moved(ctx, v, to),
            None => ctx.set_processor(v, to),
        }
    }

    /// A timer armed with [`SchedCtx::arm_timer`] fired.
    fn timer(&mut self, _ctx: &mut SchedCtx, _id: u32) {}

    /// Change a domain's parameters at run time (`xl sched-* -d`). `params`
    /// holds the complete new set, already validated against the declaration.
    fn adjust(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    /// Change pool-wide parameters at run time (`xl sched-* -s`).
    fn adjust_global(&mut self, _ctx: &mut SchedCtx, _params: &Params) {}

    /// Scheduler-specific counters for the summary (name, value).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Human-readable state, for debugging.
    fn dump(&self, _ctx: &SchedCtx) -> String {
        String::new()
    }

    /// The scheduler's state as data, for tests and tools (what [`dump`]
    /// shows as text, without parsing it). Empty by default.
    ///
    /// [`dump`]: Scheduler::dump
    fn state(&self, _ctx: &SchedCtx) -> SchedState {
        SchedState::default()
    }
}

/// Why a default hook cannot run: the scheduler keeps no [`RunQueues`]
/// and does not write the hook.
fn no_queues(name: &str, hook: &str) -> String {
    let who = if name.is_empty() {
        "the scheduler".to_string()
    } else {
        format!("scheduler {name}")
    };
    format!(
        "{who} writes no {hook} hook and keeps no run queues (Scheduler::run_queues); expected one of the two"
    )
}

/// A scheduler's state as data ([`Scheduler::state`]): scheduler-wide
/// values, then one record per PCPU, per domain and per VCPU (indexed by
/// id), each a map from the field's name (as [`Scheduler::dump`] names it)
/// to its value. Which fields exist is the scheduler's to say, on its page.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SchedState {
    /// Scheduler-wide values.
    pub global: serde_json::Map<String, serde_json::Value>,
    /// Per PCPU, by id (`runq`: the VCPU ids queued, in order).
    pub pcpus: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Per domain, by id.
    pub domains: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Per VCPU, by id.
    pub vcpus: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl SchedState {
    /// One record from a JSON object (`json!({"credit": 3, ...})`).
    pub fn record(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        match v {
            serde_json::Value::Object(m) => m,
            _ => panic!("a state record is a JSON object"),
        }
    }

    /// Integer field `key` of VCPU `v` (panics if absent: for tests).
    pub fn vcpu_int(&self, v: usize, key: &str) -> i64 {
        field(&self.vcpus, v, key)
            .as_i64()
            .expect("an integer field")
    }

    /// Integer field `key` of domain `d` (panics if absent: for tests).
    pub fn domain_int(&self, d: usize, key: &str) -> i64 {
        field(&self.domains, d, key)
            .as_i64()
            .expect("an integer field")
    }
}

fn field<'a>(
    records: &'a [serde_json::Map<String, serde_json::Value>],
    i: usize,
    key: &str,
) -> &'a serde_json::Value {
    records
        .get(i)
        .and_then(|r| r.get(key))
        .unwrap_or_else(|| panic!("no field {key} in record {i}"))
}

/// Operations a hook asks for that run further hooks; the engine performs
/// them as soon as the current hook returns, at the same simulated instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deferred {
    Pause(VcpuId),
    Unpause(VcpuId),
    Migrate(VcpuId),
}

/// What a scheduler hook may see and do.
pub struct SchedCtx<'a> {
    pub(crate) w: &'a mut World,
}

impl<'a> SchedCtx<'a> {
    pub(crate) fn new(w: &'a mut World) -> SchedCtx<'a> {
        SchedCtx { w }
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.w.now
    }

    /// The run's random stream for the scheduler's component `name` (seeded
    /// from the run's seed, as every stream is: `crate::rng`).
    pub fn rng(&self, name: &str) -> crate::rng::Rng {
        crate::rng::Rng::new(self.w.seed, crate::rng::stream_key(name))
    }

    /// Host topology.
    #[inline]
    pub fn topology(&self) -> &Topology {
        &self.w.topo
    }

    /// Platform costs.
    #[inline]
    pub fn platform(&self) -> &Platform {
        &self.w.platform
    }

    /// Count one insertion into or removal from a run queue, done by the
    /// code running on the current PCPU: the profile's
    /// `sched_queue_op_ns` is charged for it at that PCPU's next decision
    /// (`docs/switch-cost.md`). Schedulers call it where they touch their
    /// run queues.
    #[inline]
    pub fn count_queue_op(&self) {
        if let Some(p) = self.w.local {
            self.w.switch.queue_op(p);
        }
    }

    /// The I/O counters of domain `dom` so far (packets and bytes it
    /// received and sent, disk requests, I/O events its backend handled;
    /// reset at the end of warm-up). What a communication-aware scheduler
    /// reads; as in Xen, where such a scheduler counts the event-channel
    /// notifications and page flips it sees, it may observe, not act on I/O.
    #[inline]
    pub fn io_stats(&self, dom: DomId) -> &crate::io::IoStats {
        &self.w.io.stats[dom.idx()]
    }

    /// The driver domain, if the host has one.
    #[inline]
    pub fn driver_domain(&self) -> Option<DomId> {
        self.w.io.driver
    }

    /// Number of PCPUs.
    #[inline]
    pub fn npcpus(&self) -> usize {
        self.w.pcpus.len()
    }

    /// Number of VCPUs on the host.
    #[inline]
    pub fn nvcpus(&self) -> usize {
        self.w.vcpus.len()
    }

    /// Number of domains.
    #[inline]
    pub fn ndomains(&self) -> usize {
        self.w.doms.len()
    }

    /// The PCPU executing this hook, if the hook runs on one.
    #[inline]
    pub fn local(&self) -> Option<PcpuId> {
        self.w.local
    }

    /// What `p` is running (`None` = idle).
    #[inline]
    pub fn current(&self, p: PcpuId) -> Option<VcpuId> {
        self.w.pcpus[p.idx()].current
    }

    #[inline]
    fn vcpu(&self, v: VcpuId) -> &Vcpu {
        &self.w.vcpus[v.idx()]
    }

    /// May `v` run (not blocked, paused, migrating or offline)?
    #[inline]
    pub fn is_runnable(&self, v: VcpuId) -> bool {
        self.vcpu(v).runnable()
    }

    /// The PCPU `v` is running on right now.
    #[inline]
    pub fn running_on(&self, v: VcpuId) -> Option<PcpuId> {
        self.vcpu(v).running_on
    }

    /// `v`'s processor: where it runs, last ran or is queued.
    #[inline]
    pub fn processor(&self, v: VcpuId) -> PcpuId {
        self.vcpu(v).processor
    }

    /// Set `v`'s processor (stealing, placement).
    #[inline]
    pub fn set_processor(&mut self, v: VcpuId, p: PcpuId) {
        self.w.vcpus[v.idx()].processor = p;
    }

    /// The domain `v` belongs to.
    #[inline]
    pub fn domain_of(&self, v: VcpuId) -> DomId {
        self.vcpu(v).dom
    }

    /// `v`'s number within its domain.
    #[inline]
    pub fn vcpu_index(&self, v: VcpuId) -> u32 {
        self.vcpu(v).index
    }

    /// The VCPUs of domain `d`.
    pub fn vcpus_of(&self, d: DomId) -> impl Iterator<Item = VcpuId> {
        let dom = &self.w.doms[d.idx()];
        (dom.first_vcpu..dom.first_vcpu + dom.nvcpus).map(VcpuId)
    }

    /// Domain `d`'s name.
    pub fn domain_name(&self, d: DomId) -> &str {
        &self.w.doms[d.idx()].name
    }

    /// Is `d` a driver domain?
    pub fn is_driver(&self, d: DomId) -> bool {
        self.w.doms[d.idx()].driver
    }

    /// `v`'s hard affinity (where it may run).
    #[inline]
    pub fn hard_affinity(&self, v: VcpuId) -> &CpuMask {
        &self.w.masks[self.vcpu(v).hard_mask as usize]
    }

    /// `v`'s soft affinity (where it prefers to run).
    #[inline]
    pub fn soft_affinity(&self, v: VcpuId) -> &CpuMask {
        &self.w.masks[self.vcpu(v).soft_mask as usize]
    }

    /// May any VCPU have a soft affinity? When false, [`Self::has_soft_affinity`]
    /// is false for every VCPU for the whole run (soft masks never change
    /// after the world is built), and a scheduler may skip a soft-affinity
    /// balancing step without looking at any VCPU: the step would find nothing.
    #[inline]
    pub fn any_soft_affinity(&self) -> bool {
        self.w.any_soft
    }

    /// Xen's "has soft affinity": soft affinity is effective (it restricts hard
    /// affinity and intersects it) and does not cover every PCPU.
    #[inline]
    pub fn has_soft_affinity(&self, v: VcpuId) -> bool {
        // Mask 0 is every PCPU: a soft affinity that covers the host is not effective.
        if !self.w.any_soft || self.vcpu(v).soft_mask == 0 {
            return false;
        }
        let hard = self.hard_affinity(v);
        let soft = self.soft_affinity(v);
        let all = self.w.topo.all();
        !hard.is_subset(soft) && soft.intersects(hard) && !all.is_subset(soft)
    }

    /// Raise SCHEDULE_SOFTIRQ on `p`: at once if `p` is the PCPU executing
    /// this hook, otherwise after the platform's IPI latency.
    #[inline]
    pub fn tickle(&mut self, p: PcpuId) {
        let delay = if self.w.local == Some(p) {
            0
        } else {
            self.w.platform.ipi_latency_ns
        };
        self.w.raise_softirq(p, delay);
    }

    /// Arm scheduler timer `id` (a small integer of the scheduler's choosing)
    /// to fire at `at` on PCPU `home`, replacing any earlier arming of `id`.
    #[inline]
    pub fn arm_timer(&mut self, id: u32, at: Time, home: PcpuId) {
        self.w.arm_sched_timer(id, at, home, false);
    }

    /// Like [`SchedCtx::arm_timer`], but the timer fires after every other
    /// event due at the same instant (ticks, slice ends, wake-ups), so it
    /// sees their effects.
    #[inline]
    pub fn arm_timer_late(&mut self, id: u32, at: Time, home: PcpuId) {
        self.w.arm_sched_timer(id, at, home, true);
    }

    /// Disarm scheduler timer `id`.
    #[inline]
    pub fn cancel_timer(&mut self, id: u32) {
        self.w.cancel_sched_timer(id);
    }

    /// Would `v` become runnable if one of its own pauses were lifted? (It
    /// is not blocked, migrating, offline or paused with its domain, and this
    /// is its only pause.)
    pub fn unpause_would_wake(&self, v: VcpuId) -> bool {
        let vc = self.vcpu(v);
        vc.pause_count == 1 && vc.domain_pause == 0 && !vc.blocked && !vc.migrating && vc.online
    }

    /// Is `v` online (not taken down by VCPU hotplug, Xen's `is_vcpu_online`)?
    /// An offline VCPU stays inserted in the scheduler; only a scheduler
    /// that treats offlining apart from pausing (null) needs to ask.
    #[inline]
    pub fn is_online(&self, v: VcpuId) -> bool {
        self.vcpu(v).online
    }

    /// Pause `v` (e.g. parking by a cap). The engine then calls `sleep(v)`.
    pub fn pause(&mut self, v: VcpuId) {
        self.w.deferred.push(Deferred::Pause(v));
    }

    /// Undo one [`SchedCtx::pause`]. The engine calls `wake(v)` if `v` becomes runnable.
    pub fn unpause(&mut self, v: VcpuId) {
        self.w.deferred.push(Deferred::Unpause(v));
    }

    /// Stop the run: the scheduler cannot go on (a scheduler defined outside
    /// this crate whose code failed, or returned something it must not).
    /// The run ends after the current event with an error carrying `why`;
    /// only the first such error is kept.
    pub fn fail(&mut self, why: String) {
        self.w.violation(why);
    }

    /// Start migrating `v` (Xen's `_VPF_migrating` + sleep): once it is off its
    /// PCPU the engine calls `pick_cpu`, `migrate` and `wake`.
    pub fn migrate(&mut self, v: VcpuId) {
        self.w.deferred.push(Deferred::Migrate(v));
    }
}

/// Builds a scheduler from its validated global parameters, for a host of
/// the given number of PCPUs (a scheduler that keeps PCPU masks sizes them
/// to the host with `sized_scheduler!`).
pub type SchedulerFactory = fn(&Params, usize) -> Box<dyn Scheduler>;

/// A scheduler generic over its mask width, built at the width a host of
/// `$npcpus` PCPUs needs: one word up to 64 PCPUs, the widest beyond
/// ([`crate::cpumask::words_for`]). `$make` builds it with the width named
/// `$w`: `sized_scheduler!(n, W => Credit::<W>::new(p))`. The two widths are
/// the only ones compiled.
macro_rules! sized_scheduler {
    ($npcpus:expr, $w:ident => $make:expr) => {
        match $crate::cpumask::words_for($npcpus) {
            1 => {
                const $w: usize = 1;
                Box::new($make) as Box<dyn $crate::sched::Scheduler>
            }
            _ => {
                const $w: usize = $crate::cpumask::MAX_WORDS;
                Box::new($make) as Box<dyn $crate::sched::Scheduler>
            }
        }
    };
}

/// Builds a scheduler defined outside this crate (a Python class, through
/// the bindings) from its validated global parameters.
pub type ExternalFactory = dyn Fn(&Params) -> Box<dyn Scheduler> + Send + Sync;
/// Cross-parameter check of a domain's parameters.
pub type DomainCheck = fn(&Params, &Params, &str) -> Result<(), ScenarioError>;
/// Cross-parameter check of a scheduler's global parameters.
pub type GlobalCheck = fn(&Params, &str) -> Result<(), ScenarioError>;
/// Check of the scheduler's parameters against the whole scenario (a
/// parameter that names a domain, a boot-time parameter an action changes).
pub type ScenarioCheck = fn(&crate::scenario::Scenario) -> Result<(), ScenarioError>;
/// Toolstack operations (`xl pause`, hotplug, pinning) the scheduler cannot
/// honour, checked for every domain action.
pub type DomainOpsCheck = fn(&crate::scenario::DomainOps, &str) -> Result<(), ScenarioError>;

/// How one parameter of an [`Allocation`] is set for a domain allotted A %
/// of one PCPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AllocValue {
    /// A % of this quantity (in the parameter's `unit`): `cap = A % of 100`,
    /// `slice = A % of 10 ms`.
    Share(f64),
    /// This value whatever A is (the period the share is taken of).
    Fixed(f64),
    /// A switch (`extratime = false`).
    Flag(bool),
}

/// One parameter an [`Allocation`] sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocParam {
    /// The parameter, as the scheduler declares it.
    pub name: &'static str,
    /// The unit `value` is written in (converted to the declared unit).
    pub unit: &'static str,
    /// Its value for an allocation of A %.
    pub value: AllocValue,
    /// First Xen release that has the parameter (`""`: every release).
    pub since: &'static str,
}

/// How "A % of one PCPU and never more" is written in a scheduler's own
/// parameters: what ALERT configures, and what a reproduction means by a
/// capped domain. Configuration, never a correction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Allocation {
    /// The rule in words, as the scheduler's own tool would set it.
    pub rule: &'static str,
    /// First Xen release in which the scheduler can hold a domain to an
    /// allocation this way (`""` for a scheduler without releases).
    pub since: &'static str,
    /// Per-domain parameters (`[domain.sched]`).
    pub domain: &'static [AllocParam],
    /// Or, for a scheduler that allots time in a pool-wide table of frames
    /// (ARINC 653), how each domain's frame is written there.
    pub frames: Option<FrameTable>,
}

/// A pool-wide cyclic table in which each domain gets a frame of A % of a
/// fixed major frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameTable {
    /// The global list parameter holding the table.
    pub table: &'static str,
    /// The entry field naming the domain.
    pub domain_field: &'static str,
    /// The entry field holding the frame's length.
    pub length_field: &'static str,
    /// The global parameter holding the major frame's length.
    pub major_frame: &'static str,
    /// The major frame's length, in `unit`.
    pub major_frame_len: f64,
    /// The unit of the lengths.
    pub unit: &'static str,
}

/// How a reproduction gives domains CPU in proportion to relative weights
/// (work-conserving); with the scheduler's [`Allocation`] it caps them too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shares {
    /// `param = round(base × w / w_ref)` (Credit's weight).
    Weight {
        /// The weight parameter.
        param: &'static str,
        /// The reference domain's value.
        base: f64,
    },
    /// `param = round(base × w_ref / w)`: a parameter inversely proportional
    /// to the share (BVT's `mcuadv`).
    InverseWeight {
        /// The parameter.
        param: &'static str,
        /// The reference domain's value.
        base: f64,
    },
    /// A reservation of `period`, `slice = period × w / Σw`, with `extra`
    /// on in work-conserving mode (SEDF).
    Reservation {
        /// The period parameter.
        period: &'static str,
        /// The slice parameter.
        slice: &'static str,
        /// The switch giving a domain slack beyond its slice.
        extra: &'static str,
    },
}

/// Everything a scheduler declares about itself: its registry entry. Each
/// scheduler's file holds one (built with [`SchedulerInfo::new`] and the
/// `with_*` methods), the list in `schedulers!` names its module, and
/// nothing else names it.
#[derive(Clone, Copy)]
pub struct SchedulerInfo {
    /// Registry name, as in `[scheduler] name = ...`.
    pub name: &'static str,
    /// Its name in reports and figures (`Credit2`).
    pub title: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it comes from (Xen versions, paper).
    pub origin: &'static str,
    /// Whether it can limit a domain below what it could use (NWC mode):
    /// exactly when it declares an [`Allocation`].
    pub can_cap: bool,
    /// How it holds a domain to an allocation, if it can.
    pub allocation: Option<Allocation>,
    /// How it gives domains proportional shares, if it can.
    pub shares: Option<Shares>,
    /// Every parameter, global and per domain.
    pub params: &'static [ParamSpec],
    /// Constructor.
    pub make: SchedulerFactory,
    /// Constructor of a scheduler defined outside this crate (used instead
    /// of `make`).
    pub external: Option<&'static ExternalFactory>,
    /// Cross-parameter check for one domain.
    pub check_domain: DomainCheck,
    /// Cross-parameter check of the global parameters.
    pub check_global: GlobalCheck,
    /// Check against the whole scenario.
    pub check_scenario: ScenarioCheck,
    /// Toolstack operations it refuses.
    pub check_domain_ops: DomainOpsCheck,
    /// The counters its [`Scheduler::counters`] reports in the summary,
    /// each with what it counts (its own, after `base_counters`).
    pub counters: &'static [(&'static str, &'static str)],
    /// The counters of the scheduler it extends, reported first.
    pub base_counters: &'static [(&'static str, &'static str)],
}

/// A check that accepts everything.
pub fn accept_domain(_g: &Params, _p: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

/// A check that accepts everything.
pub fn accept_global(_g: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

/// A check that accepts every scenario.
pub fn accept_scenario(_sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    Ok(())
}

/// A check that accepts every toolstack operation.
pub fn accept_domain_ops(
    _ops: &crate::scenario::DomainOps,
    _path: &str,
) -> Result<(), ScenarioError> {
    Ok(())
}

/// The `make` of an external entry: never called, [`SchedulerInfo::build`]
/// uses the external factory.
fn external_only(_p: &Params, _npcpus: usize) -> Box<dyn Scheduler> {
    unreachable!("an external scheduler is built by its external factory")
}

impl SchedulerInfo {
    /// A registry entry with what every scheduler must say; the rest keeps
    /// the defaults (no caps, no shares, every check accepting, no
    /// counters) unless a `with_*` method sets it.
    pub const fn new(
        name: &'static str,
        title: &'static str,
        params: &'static [ParamSpec],
        make: SchedulerFactory,
    ) -> SchedulerInfo {
        SchedulerInfo {
            name,
            title,
            summary: "",
            origin: "",
            can_cap: false,
            allocation: None,
            shares: None,
            params,
            make,
            external: None,
            check_domain: accept_domain,
            check_global: accept_global,
            check_scenario: accept_scenario,
            check_domain_ops: accept_domain_ops,
            counters: &[],
            base_counters: &[],
        }
    }

    /// The entry of a scheduler built outside this crate by `make`.
    pub fn external(
        name: &'static str,
        params: &'static [ParamSpec],
        make: &'static ExternalFactory,
    ) -> SchedulerInfo {
        SchedulerInfo {
            external: Some(make),
            ..SchedulerInfo::new(name, name, params, external_only)
        }
    }

    /// What it is, in one line, and where it comes from.
    pub const fn about(mut self, summary: &'static str, origin: &'static str) -> SchedulerInfo {
        self.summary = summary;
        self.origin = origin;
        self
    }

    /// It can cap, this way.
    pub const fn with_allocation(mut self, a: Allocation) -> SchedulerInfo {
        self.can_cap = true;
        self.allocation = Some(a);
        self
    }

    /// It gives proportional shares this way.
    pub const fn with_shares(mut self, s: Shares) -> SchedulerInfo {
        self.shares = Some(s);
        self
    }

    /// Its cross-parameter check of one domain.
    pub const fn with_check_domain(mut self, f: DomainCheck) -> SchedulerInfo {
        self.check_domain = f;
        self
    }

    /// Its cross-parameter check of the global parameters.
    pub const fn with_check_global(mut self, f: GlobalCheck) -> SchedulerInfo {
        self.check_global = f;
        self
    }

    /// Its check against the whole scenario.
    pub const fn with_check_scenario(mut self, f: ScenarioCheck) -> SchedulerInfo {
        self.check_scenario = f;
        self
    }

    /// The toolstack operations it refuses.
    pub const fn with_check_domain_ops(mut self, f: DomainOpsCheck) -> SchedulerInfo {
        self.check_domain_ops = f;
        self
    }

    /// The counters it reports.
    pub const fn with_counters(
        mut self,
        counters: &'static [(&'static str, &'static str)],
    ) -> SchedulerInfo {
        self.counters = counters;
        self
    }

    /// The counters it reports: those of the scheduler it extends
    /// (`base`), then its own.
    pub const fn with_counters_after(
        mut self,
        base: &'static [(&'static str, &'static str)],
        own: &'static [(&'static str, &'static str)],
    ) -> SchedulerInfo {
        self.base_counters = base;
        self.counters = own;
        self
    }

    /// Every counter it declares (name, meaning), in the order reported.
    pub fn declared_counters(&self) -> impl Iterator<Item = &(&'static str, &'static str)> {
        self.base_counters.iter().chain(self.counters)
    }

    /// Parameters of one scope.
    pub fn params_of(&self, scope: ParamScope) -> Vec<ParamSpec> {
        self.params
            .iter()
            .filter(|p| p.scope == scope)
            .cloned()
            .collect()
    }

    /// Build the scheduler from validated global parameters, for a host of
    /// `npcpus` PCPUs.
    pub fn build(&self, params: &Params, npcpus: usize) -> Box<dyn Scheduler> {
        match self.external {
            Some(make) => make(params),
            None => (self.make)(params, npcpus),
        }
    }

    /// The entry as JSON, for the catalogue.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let alloc = self.allocation.map(|a| {
            let domain: Vec<_> = a
                .domain
                .iter()
                .map(|p| {
                    let (kind, value) = match p.value {
                        AllocValue::Share(x) => ("share_of", json!(x)),
                        AllocValue::Fixed(x) => ("fixed", json!(x)),
                        AllocValue::Flag(b) => ("flag", json!(b)),
                    };
                    json!({"name": p.name, "unit": p.unit, kind: value, "since": p.since})
                })
                .collect();
            let frames = a.frames.map(|f| {
                json!({
                    "table": f.table,
                    "domain_field": f.domain_field,
                    "length_field": f.length_field,
                    "major_frame": f.major_frame,
                    "major_frame_len": f.major_frame_len,
                    "unit": f.unit,
                })
            });
            json!({"rule": a.rule, "since": a.since, "domain": domain, "frames": frames})
        });
        let shares = self.shares.map(|s| match s {
            Shares::Weight { param, base } => {
                json!({"kind": "weight", "param": param, "base": base})
            }
            Shares::InverseWeight { param, base } => {
                json!({"kind": "inverse-weight", "param": param, "base": base})
            }
            Shares::Reservation {
                period,
                slice,
                extra,
            } => json!({"kind": "reservation", "period": period, "slice": slice, "extra": extra}),
        });
        let counters: Vec<_> = self
            .declared_counters()
            .map(|(n, d)| json!({"name": n, "doc": d}))
            .collect();
        json!({
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "origin": self.origin,
            "builtin": self.external.is_none(),
            "can_cap": self.can_cap,
            "allocation": alloc,
            "shares": shares,
            "counters": counters,
            "params": self.params.iter().map(|p| p.to_json()).collect::<Vec<_>>(),
        })
    }
}

/// The scheduler modules, listed once: each becomes a module of this one and
/// an entry of [`registry`], in listing order. Schedulers built on another
/// are child modules of it, listed as `parent::child` after the others.
macro_rules! schedulers {
    ($($m:ident),* ; $($parent:ident :: $child:ident),* $(,)?) => {
        $(pub mod $m;)*

        /// Every built-in scheduler, in listing order.
        pub fn registry() -> &'static [SchedulerInfo] {
            static REGISTRY: &[SchedulerInfo] = &[$($m::INFO,)* $($parent::$child::INFO,)*];
            REGISTRY
        }
    };
}

// The one list of schedulers: a new one is its own file plus its name here.
schedulers! {
    credit, credit2, rtds, null, arinc653, sedf, sedf_comm, bvt, atropos, rrobin;
    credit::enhanced, credit::dynweight, credit2::mcredit2,
}

/// The tutorial's Rust scheduler (`docs/write-a-scheduler.md`), compiled and
/// run by the tests without being listed.
#[cfg(test)]
#[path = "../../../../docs/tutorial/wrr.rs"]
mod tutorial_wrr;

/// Schedulers registered at run time from outside this crate (Python
/// classes, through the bindings), newest last.
static EXTERNAL: std::sync::RwLock<Vec<&'static SchedulerInfo>> =
    std::sync::RwLock::new(Vec::new());

/// Register a scheduler defined outside this crate under `info.name`
/// (replacing an earlier one of that name); a built-in's name is refused.
/// The entry lives as long as the process (a loaded class stays loaded).
pub fn register_external(info: SchedulerInfo) -> Result<&'static SchedulerInfo, String> {
    if registry().iter().any(|s| s.name == info.name) {
        return Err(format!(
            "\"{}\" is a built-in scheduler's name; expected another name",
            info.name
        ));
    }
    let leaked: &'static SchedulerInfo = Box::leak(Box::new(info));
    let mut ext = EXTERNAL.write().unwrap_or_else(|e| e.into_inner());
    ext.retain(|s| s.name != leaked.name);
    ext.push(leaked);
    Ok(leaked)
}

/// Remove the scheduler registered at run time under `name`; returns
/// whether there was one. A simulation already built with it keeps it (the
/// entry itself lives as long as the process).
pub fn unregister_external(name: &str) -> bool {
    let mut ext = EXTERNAL.write().unwrap_or_else(|e| e.into_inner());
    let before = ext.len();
    ext.retain(|s| s.name != name);
    ext.len() != before
}

/// Every scheduler: the built-ins, then those registered at run time.
pub fn all() -> Vec<&'static SchedulerInfo> {
    let mut out: Vec<&'static SchedulerInfo> = registry().iter().collect();
    out.extend(EXTERNAL.read().unwrap_or_else(|e| e.into_inner()).iter());
    out
}

/// The checks of the scenario's scheduler that need the whole scenario, run
/// once the domains and actions are parsed (the scheduler's own declaration).
pub fn check_scenario(sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    match find(&sc.scheduler.name) {
        Some(info) => (info.check_scenario)(sc),
        None => Ok(()),
    }
}

/// Reject `[[action]]`s that change parameters fixed at boot (Xen reads
/// them once, from the command line or the release itself).
pub(crate) fn reject_boot_changes(
    sc: &crate::scenario::Scenario,
    boot_only: &[&str],
) -> Result<(), ScenarioError> {
    for (i, a) in sc.actions.iter().enumerate() {
        let crate::scenario::ActionWhat::Global { params } = &a.what else {
            continue;
        };
        for (name, v) in params.iter() {
            let boot = sc
                .scheduler
                .params
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b);
            if boot_only.contains(&name) && boot != Some(v) {
                return Err(ScenarioError::new(
                    format!("action[{i}].{name}"),
                    format!(
                        "cannot change at run time: it is fixed when {} starts (a boot option or the Xen release); expected it only in [scheduler]",
                        sc.scheduler.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Look a scheduler up by name (a built-in, or one registered at run time).
pub fn find(name: &str) -> Option<&'static SchedulerInfo> {
    registry().iter().find(|s| s.name == name).or_else(|| {
        EXTERNAL
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .rev()
            .find(|s| s.name == name)
            .copied()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scheduler is its own file plus its registration: the tutorial's,
    /// registered at run time instead of listed, runs by name like a built-in.
    #[test]
    fn the_tutorials_rust_scheduler_runs_by_name() {
        register_external(tutorial_wrr::INFO).expect("a new name");
        let sc = crate::Scenario::from_toml_str(
            "[host]\npcpus = 1\n[scheduler]\nname = \"wrr\"\n[run]\nduration_s = 3\n\
             [[domain]]\nname = \"big\"\nweight = 512\n[domain.workload]\nkind = \"cpu-hog\"\n\
             [[domain]]\nname = \"small\"\n[domain.workload]\nkind = \"cpu-hog\"\n",
        )
        .expect("valid");
        let mut sim = crate::Simulation::new(&sc).expect("builds");
        sim.run().expect("runs");
        let s = sim.summary(0.0);
        let cpu = |i: usize| s["domains"][i]["cpu_pct"].as_f64().unwrap();
        // Turns of 20 ms and 10 ms: two thirds and one third of the PCPU.
        assert!((cpu(0) - 200.0 / 3.0).abs() < 1.0, "{}", cpu(0));
        assert!((cpu(1) - 100.0 / 3.0).abs() < 1.0, "{}", cpu(1));
    }

    /// Every built-in declares, in its registration, exactly the counters
    /// it reports (names and order), each with what it counts.
    #[test]
    fn every_scheduler_declares_the_counters_it_reports() {
        for s in registry() {
            let global = crate::params::validate(
                &s.params_of(ParamScope::Global),
                &Default::default(),
                "scheduler",
                s.name,
            )
            .expect("the defaults are valid");
            for npcpus in [2, crate::cpumask::MAX_PCPUS] {
                let sched = s.build(&global, npcpus);
                let reported: Vec<&str> = sched.counters().iter().map(|c| c.0).collect();
                let declared: Vec<&str> = s.declared_counters().map(|c| c.0).collect();
                assert_eq!(reported, declared, "{}", s.name);
            }
            assert!(s.declared_counters().all(|c| !c.1.is_empty()), "{}", s.name);
        }
    }

    /// Every built-in declares it can cap exactly when it says how.
    #[test]
    fn can_cap_is_declared_with_an_allocation() {
        for s in registry() {
            assert_eq!(s.can_cap, s.allocation.is_some(), "{}", s.name);
            assert!(!s.title.is_empty() && !s.summary.is_empty(), "{}", s.name);
        }
    }
}
