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

pub mod arinc653;
pub mod atropos;
pub mod bvt;
pub mod credit;
pub mod credit2;
pub mod null;
pub mod placement;
pub mod rrobin;
pub mod rtds;
pub mod sedf;
pub mod sedf_comm;

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

/// A VM scheduler. See the module documentation for the contract.
pub trait Scheduler: Send {
    /// The registry name (`credit`, `credit2`, ...).
    fn name(&self) -> &'static str;

    /// The host is built: `ctx.npcpus()` PCPUs exist. Arm periodic timers here.
    fn init(&mut self, ctx: &mut SchedCtx);

    /// A domain is created with its validated per-domain parameters.
    fn init_domain(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params);

    /// A VCPU joins. Its `processor` holds the engine's initial placement; the
    /// scheduler may change it with [`SchedCtx::set_processor`]. It is not
    /// runnable yet (it is woken when its guest gets work).
    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId);

    /// A VCPU leaves the scheduler (its domain is destroyed). It is neither
    /// running nor runnable. Hot-unplug (`xl vcpu-set`) does not remove a
    /// VCPU: as in Xen it stays inserted and the scheduler hears `sleep`.
    fn remove_vcpu(&mut self, _ctx: &mut SchedCtx, _v: VcpuId) {}

    /// `v` became runnable. May be called while `v` is still running (Xen
    /// calls wake regardless); a scheduler checks and returns early.
    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId);

    /// `v` stopped being runnable for a reason other than blocking (pause,
    /// parking, migration, going offline). If it is running, tickle its
    /// PCPU; if queued, dequeue it. For `xl pause` and hotplug the engine
    /// calls it, as Xen's `vcpu_sleep_nosync` does, whenever `v` is not
    /// runnable after the change, even if it already was not (blocked or
    /// paused): it must then do nothing harmful.
    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId);

    /// The running VCPU `v` yields; a `do_schedule` on its PCPU follows at once.
    fn yield_(&mut self, _ctx: &mut SchedCtx, _v: VcpuId) {}

    /// PCPU `pcpu` must choose. `ctx.current(pcpu)` is the previous VCPU
    /// (`None` if idle); `ctx.is_runnable(prev)` tells whether it may continue.
    fn do_schedule(&mut self, ctx: &mut SchedCtx, pcpu: PcpuId) -> Decision;

    /// `v` has been switched off its PCPU.
    fn context_saved(&mut self, _ctx: &mut SchedCtx, _v: VcpuId) {}

    /// Choose a PCPU for `v` (insert and migration).
    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId;

    /// Move `v`'s bookkeeping to `to` (after `pick_cpu`, during a migration).
    fn migrate(&mut self, ctx: &mut SchedCtx, v: VcpuId, to: PcpuId) {
        ctx.set_processor(v, to);
    }

    /// A timer armed with [`SchedCtx::arm_timer`] fired.
    fn timer(&mut self, _ctx: &mut SchedCtx, _id: u32) {}

    /// Change a domain's parameters at run time (`xl sched-* -d`). `params`
    /// holds the complete new set, already validated against the declaration.
    fn adjust(&mut self, ctx: &mut SchedCtx, dom: DomId, params: &Params);

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

    /// Xen's "has soft affinity": soft affinity is effective (it restricts hard
    /// affinity and intersects it) and does not cover every PCPU.
    pub fn has_soft_affinity(&self, v: VcpuId) -> bool {
        // Mask 0 is every PCPU: a soft affinity that covers the host is not effective.
        if self.vcpu(v).soft_mask == 0 {
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

    /// Start migrating `v` (Xen's `_VPF_migrating` + sleep): once it is off its
    /// PCPU the engine calls `pick_cpu`, `migrate` and `wake`.
    pub fn migrate(&mut self, v: VcpuId) {
        self.w.deferred.push(Deferred::Migrate(v));
    }
}

/// Builds a scheduler from its validated global parameters.
pub type SchedulerFactory = fn(&Params) -> Box<dyn Scheduler>;
/// Cross-parameter check of a domain's parameters.
pub type DomainCheck = fn(&Params, &Params, &str) -> Result<(), ScenarioError>;

/// A registered scheduler.
pub struct SchedulerInfo {
    /// Registry name, as in `[scheduler] name = ...`.
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it comes from (Xen versions, paper).
    pub origin: &'static str,
    /// Whether it can limit a domain below what it could use (NWC mode).
    pub can_cap: bool,
    /// Every parameter, global and per domain.
    pub params: &'static [ParamSpec],
    /// Constructor.
    pub make: SchedulerFactory,
    /// Cross-parameter check for one domain.
    pub check_domain: DomainCheck,
    /// Cross-parameter check of the global parameters.
    pub check_global: GlobalCheck,
}

/// Cross-parameter check of a scheduler's global parameters.
pub type GlobalCheck = fn(&Params, &str) -> Result<(), ScenarioError>;

/// A check that accepts everything.
pub fn accept_domain(_g: &Params, _p: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

/// A check that accepts everything.
pub fn accept_global(_g: &Params, _path: &str) -> Result<(), ScenarioError> {
    Ok(())
}

impl SchedulerInfo {
    /// Parameters of one scope.
    pub fn params_of(&self, scope: ParamScope) -> Vec<ParamSpec> {
        self.params
            .iter()
            .filter(|p| p.scope == scope)
            .cloned()
            .collect()
    }
}

/// Every scheduler vmsched knows, in listing order.
pub fn registry() -> &'static [SchedulerInfo] {
    static REGISTRY: &[SchedulerInfo] = &[
        credit::INFO,
        credit2::INFO,
        rtds::INFO,
        null::INFO,
        arinc653::INFO,
        sedf::INFO,
        sedf_comm::INFO,
        bvt::INFO,
        atropos::INFO,
        rrobin::INFO,
        credit::enhanced::INFO,
        credit::dynweight::INFO,
        credit2::mcredit2::INFO,
    ];
    REGISTRY
}

/// Checks of scheduler parameters that need the whole scenario (a parameter
/// that names a domain), run once the domains and actions are parsed.
pub fn check_scenario(sc: &crate::scenario::Scenario) -> Result<(), ScenarioError> {
    match sc.scheduler.name.as_str() {
        "credit2" | "mcredit2" => credit2::check_scenario(sc),
        "rtds" => rtds::check_scenario(sc),
        "arinc653" => arinc653::check_scenario(sc),
        "sedf-comm" => sedf_comm::check_scenario(sc),
        _ => Ok(()),
    }
}

/// Toolstack operations a scheduler cannot honour, checked for every domain
/// action (at load time and live).
pub(crate) fn check_domain_ops(
    sched: &str,
    ops: &crate::scenario::DomainOps,
    path: &str,
) -> Result<(), ScenarioError> {
    match sched {
        "arinc653" => arinc653::check_domain_ops(ops, path),
        _ => Ok(()),
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

/// Look a scheduler up by name.
pub fn find(name: &str) -> Option<&'static SchedulerInfo> {
    registry().iter().find(|s| s.name == name)
}
