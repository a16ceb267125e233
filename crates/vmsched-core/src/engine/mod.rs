//! The simulation engine: the world (PCPUs, VCPUs, domains), the event loop,
//! the guest work model and exact state accounting.
//!
//! One thread, one event queue, integer-nanosecond time. Cancellation is by
//! generation counters: a timer event carries the generation it was armed with
//! and a stale pop is dropped. The queue also takes a stale softirq, slice
//! or scheduler timer off at once (armed again, or cancelled here with
//! [`EventQueue::cancel`]), so that those are never popped. Randomness comes
//! only from per-workload seeded
//! streams. Same scenario + same seed ⇒ identical results.

mod io;
mod queue;
mod summary;
mod switch;
mod tracing;

pub use queue::{Event, EventQueue, Timer};

use crate::cpumask::CpuMask;
use crate::domain::{Domain, RunState, Vcpu, WorkItem, BACKEND, FOREVER, TAG_MASK, URGENT};
use crate::error::SimError;
use crate::host::{Platform, Topology};
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::io::IoState;
use crate::metrics::{IoCounters, Series};
use crate::params::Params;
use crate::rng::{stream_key, Rng};
use crate::scenario::{Action, ActionWhat, DomainAdmin, DomainOps, Scenario};
use crate::sched::{self, Deferred, SchedCtx, Scheduler};
use crate::time::Time;
use crate::trace::{RunstateEvent, SchedEvent, TraceSink};
use crate::workload::{self, GuestCtx, Workload};

/// One physical CPU.
#[derive(Clone, Debug, Default)]
pub struct Pcpu {
    /// The VCPU it runs (`None` = idle).
    pub current: Option<VcpuId>,
    /// Generation of the pending softirq event, if any.
    softirq_gen: u32,
    /// When the pending softirq is due.
    softirq_at: Option<Time>,
    /// Generation of the slice timer.
    slice_gen: u32,
    /// Accumulated idle time and since when it is idle.
    idle_ns: u64,
    idle_since: Option<Time>,
    /// Times `do_schedule` ran here.
    pub schedules: u64,
}

/// Everything the scheduler and workloads act on, apart from themselves.
pub struct World {
    pub(crate) now: Time,
    pub(crate) queue: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) platform: Platform,
    pub(crate) pcpus: Vec<Pcpu>,
    pub(crate) vcpus: Vec<Vcpu>,
    pub(crate) doms: Vec<Domain>,
    /// Affinity masks, shared by index (0 = all PCPUs).
    pub(crate) masks: Vec<CpuMask>,
    /// Generation and home PCPU of each scheduler timer id.
    sched_timers: Vec<(u32, PcpuId)>,
    pub(crate) deferred: Vec<Deferred>,
    /// Domains whose guest run queue got work during the current callback.
    guest_dirty: Vec<DomId>,
    /// VCPUs whose guest asked to yield during the current callback.
    pub(crate) guest_yields: Vec<VcpuId>,
    /// The PCPU whose code is running now, for local vs remote tickles.
    pub(crate) local: Option<PcpuId>,
    /// First invariant violation seen (the run stops with an internal error).
    fatal: Option<String>,
    /// The I/O path: backends, devices, counters.
    pub(crate) io: IoState,
    /// Every host's and domain's name (this host alone, outside a cluster).
    pub(crate) directory: std::sync::Arc<crate::io::Directory>,
    /// Where scheduling events go while a trace is taken (`trace/`).
    pub(crate) trace: Option<Box<dyn TraceSink>>,
    /// The indirect costs of switches and the scheduler's run time.
    pub(crate) switch: switch::SwitchModel,
    /// The run's seed, for the scheduler's own random streams.
    pub(crate) seed: u64,
}

impl World {
    /// Raise SCHEDULE_SOFTIRQ on `p` after `delay` ns, unless one is already
    /// due no later than that.
    pub(crate) fn raise_softirq(&mut self, p: PcpuId, delay: u64) {
        let at = self.now.after(delay);
        let pc = &mut self.pcpus[p.idx()];
        if matches!(pc.softirq_at, Some(t) if t <= at) {
            return;
        }
        pc.softirq_gen = pc.softirq_gen.wrapping_add(1);
        pc.softirq_at = Some(at);
        let gen = pc.softirq_gen;
        self.queue.push_softirq(at, Event::Softirq { pcpu: p, gen });
    }

    pub(crate) fn arm_sched_timer(&mut self, id: u32, at: Time, home: PcpuId, late: bool) {
        let i = id as usize;
        if i >= self.sched_timers.len() {
            self.sched_timers.resize(i + 1, (0, PcpuId(0)));
        }
        let slot = &mut self.sched_timers[i];
        slot.0 = slot.0.wrapping_add(1);
        slot.1 = home;
        let gen = slot.0;
        let ev = Event::SchedTimer { id, gen };
        if late {
            self.queue.push_late(at.max(self.now), ev);
        } else {
            self.queue.push(at.max(self.now), ev);
        }
    }

    pub(crate) fn cancel_sched_timer(&mut self, id: u32) {
        if let Some(slot) = self.sched_timers.get_mut(id as usize) {
            slot.0 = slot.0.wrapping_add(1);
        }
        self.queue.cancel(Timer::Sched(id));
    }

    pub(crate) fn arm_workload_timer(&mut self, dom: DomId, at: Time, token: u32) {
        self.queue
            .push(at.max(self.now), Event::WorkloadTimer { dom, token });
    }

    pub(crate) fn note_guest_work(&mut self, dom: DomId) {
        if !self.guest_dirty.contains(&dom) {
            self.guest_dirty.push(dom);
        }
    }

    /// Drop all guest work of `dom`: queued items and the items its VCPUs hold.
    pub(crate) fn cancel_guest_work(&mut self, dom: DomId) {
        let d = &mut self.doms[dom.idx()];
        d.queue.clear();
        let (first, n) = (d.first_vcpu, d.nvcpus);
        for vi in first..first + n {
            let v = &mut self.vcpus[vi as usize];
            v.irq.retain(|it| it.tag & BACKEND != 0);
            v.stashed = None;
            // Backend work (a driver domain's) is the kernel's, not the
            // guest's processes': it stays.
            if v.item.is_some_and(|it| it.tag & BACKEND != 0) {
                continue;
            }
            v.item = None;
            v.work_gen = v.work_gen.wrapping_add(1);
            if let Some(p) = v.running_on {
                // The guest halts: a local SCHEDOP_block on that PCPU.
                v.blocked = true;
                self.raise_softirq(p, 0);
            }
        }
    }

    /// Move `v`'s accounting to the state its flags imply.
    #[inline]
    fn update_state(&mut self, v: VcpuId) {
        let now = self.now;
        let vc = &mut self.vcpus[v.idx()];
        let new = vc.implied_state();
        if new != vc.state {
            let old = vc.state;
            vc.state_ns[vc.state as usize] += now.since(vc.state_since);
            vc.state = new;
            vc.state_since = now;
            if let Some(t) = self.trace.as_deref_mut() {
                t.runstate(&RunstateEvent {
                    now,
                    cpu: self.local,
                    vcpu: v,
                    old,
                    v: &self.vcpus[v.idx()],
                });
            }
        }
    }

    /// Bring the running VCPU's work item up to date.
    #[inline]
    fn settle_work(&mut self, v: VcpuId) {
        let now = self.now;
        let vc = &mut self.vcpus[v.idx()];
        if now > vc.progress_from {
            let ran = now.since(vc.progress_from);
            if let Some(it) = vc.item.as_mut() {
                if it.remaining_ns != FOREVER {
                    it.remaining_ns = it.remaining_ns.saturating_sub(ran);
                }
                if it.tag & URGENT != 0 {
                    vc.urgent_ran_ns += ran;
                } else {
                    vc.ordinary_ran_ns += ran;
                }
            }
            vc.progress_from = now;
        }
    }

    /// Give the running VCPU `v` work if it has none, and arm its completion.
    /// Returns false if the guest has nothing for it (it must halt).
    fn start_work(&mut self, v: VcpuId) -> bool {
        let vc = &mut self.vcpus[v.idx()];
        if vc.item.is_none() {
            let d = &mut self.doms[vc.dom.idx()];
            vc.item = vc
                .irq
                .pop_front()
                .or_else(|| vc.stashed.take())
                .or_else(|| d.queue.pop_front());
        }
        let Some(mut item) = vc.item else {
            return false;
        };
        if item.remaining_ns == io::UNSTARTED && item.tag & BACKEND != 0 {
            item.remaining_ns = self.begin_batch(crate::ids::DomId(item.tag & TAG_MASK));
            self.vcpus[v.idx()].item = Some(item);
        }
        let vc = &mut self.vcpus[v.idx()];
        vc.work_gen = vc.work_gen.wrapping_add(1);
        if item.remaining_ns != FOREVER {
            let at = vc.progress_from.after(item.remaining_ns);
            let gen = vc.work_gen;
            self.queue.push(at, Event::WorkDone { vcpu: v, gen });
        }
        true
    }

    fn flush_states(&mut self) {
        for i in 0..self.vcpus.len() {
            let now = self.now;
            let vc = &mut self.vcpus[i];
            vc.state_ns[vc.state as usize] += now.since(vc.state_since);
            vc.state_since = now;
        }
        let now = self.now;
        for pc in &mut self.pcpus {
            if let Some(s) = pc.idle_since {
                pc.idle_ns += now.since(s);
                pc.idle_since = Some(now);
            }
        }
    }

    pub(crate) fn violation(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(msg);
        }
    }

    fn vcpu_name(&self, v: VcpuId) -> String {
        let vc = &self.vcpus[v.idx()];
        format!("{}.v{}", self.doms[vc.dom.idx()].name, vc.index)
    }
}

/// How far a run has got (for progress bars and live monitors).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: Time,
    pub end: Time,
    pub events: u64,
    pub finished: bool,
}

/// A simulation of one host under one scheduler.
pub struct Simulation {
    w: World,
    sched: Box<dyn Scheduler>,
    workloads: Vec<Box<dyn Workload>>,
    rngs: Vec<Rng>,
    scenario: Scenario,
    /// Each domain as the toolstack sees it (parameters, pauses, VCPUs online).
    admin: Vec<DomainAdmin>,
    global_params: Params,
    series: Series,
    /// Cumulative [running, runnable, blocked, context switches] per VCPU
    /// at the last sample.
    sample_prev: Vec<[u64; 4]>,
    /// Cumulative I/O counters per domain at the last sample.
    io_prev: Vec<IoCounters>,
    last_sample: Time,
    measure_from: Time,
    end: Time,
    events: u64,
    finished: bool,
    /// A trace sink set before the warm-up's end, installed at its end.
    trace_pending: Option<Box<dyn TraceSink>>,
}

impl Simulation {
    /// Build the host, domains, scheduler and workloads of a validated scenario.
    pub fn new(scenario: &Scenario) -> Result<Simulation, SimError> {
        Simulation::new_with_workloads(scenario, |_, _| None)
    }

    /// Like [`Simulation::new`], but `custom(index, domain)` may supply the
    /// workload of a domain instead of the scenario's `[domain.workload]`
    /// (for tests and experiments with workloads the registry does not have).
    pub fn new_with_workloads(
        scenario: &Scenario,
        custom: impl FnMut(usize, &crate::scenario::DomainSpec) -> Option<Box<dyn Workload>>,
    ) -> Result<Simulation, SimError> {
        Simulation::build(scenario, None, custom, None)
    }

    /// Build host number `host` of a cluster whose hosts and domains `dir`
    /// names (its workloads may address other hosts' domains).
    pub(crate) fn new_in_cluster(
        scenario: &Scenario,
        host: u32,
        dir: std::sync::Arc<crate::io::Directory>,
        custom: impl FnMut(usize, &crate::scenario::DomainSpec) -> Option<Box<dyn Workload>>,
    ) -> Result<Simulation, SimError> {
        Simulation::build(scenario, None, custom, Some((host, dir)))
    }

    /// Like [`Simulation::new`], but run `sched` instead of the scheduler the
    /// scenario names (a scheduler of your own, not in the registry). The
    /// scenario is still validated against the named scheduler, whose
    /// parameters `sched` receives in `init_domain` and `adjust`.
    pub fn new_with_scheduler(
        scenario: &Scenario,
        sched: Box<dyn Scheduler>,
    ) -> Result<Simulation, SimError> {
        Simulation::build(scenario, Some(sched), |_, _| None, None)
    }

    fn build(
        scenario: &Scenario,
        sched: Option<Box<dyn Scheduler>>,
        mut custom: impl FnMut(usize, &crate::scenario::DomainSpec) -> Option<Box<dyn Workload>>,
        cluster: Option<(u32, std::sync::Arc<crate::io::Directory>)>,
    ) -> Result<Simulation, SimError> {
        let info = sched::find(&scenario.scheduler.name)
            .expect("scenario validation checked the scheduler name");
        let topo = scenario.host.topology.clone();
        let npcpus = topo.npcpus();
        let mut masks = vec![topo.all()];
        let mut mask_id = |m: &Option<CpuMask>| -> u16 {
            match m {
                None => 0,
                Some(m) => {
                    if let Some(i) = masks.iter().position(|x| x == m) {
                        i as u16
                    } else {
                        masks.push(*m);
                        (masks.len() - 1) as u16
                    }
                }
            }
        };
        let mut doms = Vec::new();
        let mut vcpus = Vec::new();
        for d in &scenario.domains {
            let first = vcpus.len() as u32;
            let hard = mask_id(&d.affinity);
            let soft = mask_id(&d.soft_affinity);
            for i in 0..d.vcpus {
                vcpus.push(Vcpu {
                    dom: DomId(doms.len() as u32),
                    index: i,
                    processor: PcpuId(0),
                    hard_mask: hard,
                    soft_mask: soft,
                    running_on: None,
                    blocked: true,
                    pause_count: 0,
                    domain_pause: 0,
                    migrating: false,
                    online: true,
                    item: None,
                    stashed: None,
                    irq: Default::default(),
                    tick_armed: false,
                    urgent_ran_ns: 0,
                    ordinary_ran_ns: 0,
                    progress_from: Time::ZERO,
                    work_gen: 0,
                    state: RunState::Blocked,
                    state_since: Time::ZERO,
                    state_ns: [0; 4],
                    context_switches: 0,
                    migrations: 0,
                    last_ran_on: None,
                    woke_at: None,
                    wake_latency: Default::default(),
                });
            }
            doms.push(Domain {
                name: d.name.clone(),
                first_vcpu: first,
                nvcpus: d.vcpus,
                driver: d.driver,
                queue: Default::default(),
                online_vcpus: (0..d.vcpus).collect(),
                wake_cursor: 0,
            });
        }
        let driver = scenario
            .domains
            .iter()
            .position(|d| d.driver)
            .map(|i| DomId(i as u32));
        let mut io = IoState::new(doms.len(), driver, &scenario.host.platform.io);
        io.seed_costs(scenario.run.seed, doms.iter().map(|d| d.name.as_str()));
        let switch = switch::SwitchModel::new(
            &scenario.host.platform.switch,
            npcpus,
            npcpus / topo.threads_per_core as usize,
            topo.sockets as usize,
            vcpus.iter().map(|v| {
                let d = &scenario.domains[v.dom.idx()];
                switch::footprint_of(&d.workload, driver == Some(v.dom))
            }),
        );
        let world = World {
            now: Time::ZERO,
            queue: EventQueue::default(),
            topo,
            platform: scenario.host.platform.clone(),
            pcpus: vec![Pcpu::default(); npcpus],
            vcpus,
            doms,
            masks,
            sched_timers: Vec::new(),
            deferred: Vec::new(),
            guest_dirty: Vec::new(),
            guest_yields: Vec::new(),
            local: None,
            fatal: None,
            io,
            directory: std::sync::Arc::new(crate::io::Directory {
                hosts: vec![(
                    "host".into(),
                    scenario.domains.iter().map(|d| d.name.clone()).collect(),
                )],
            }),
            trace: None,
            switch,
            seed: scenario.run.seed,
        };
        let sched = sched.unwrap_or_else(|| info.build(&scenario.scheduler.params));
        let workloads = scenario
            .domains
            .iter()
            .enumerate()
            .map(|(i, d)| {
                custom(i, d).unwrap_or_else(|| {
                    let wi = workload::find(&d.workload.kind).expect("validated workload kind");
                    (wi.make)(&d.workload.params)
                })
            })
            .collect();
        let rngs = scenario
            .domains
            .iter()
            .map(|d| Rng::new(scenario.run.seed, stream_key(&d.name)))
            .collect();
        let nv = world.vcpus.len();
        let ndoms = world.doms.len();
        let end = Time(scenario.run.duration_ns);
        let mut sim = Simulation {
            w: world,
            sched,
            workloads,
            rngs,
            admin: DomainAdmin::initial(scenario),
            global_params: scenario.scheduler.params.clone(),
            // The input tree (`source`) is not kept: it is the largest part
            // of a scenario (over 1 KB per domain) and nothing here reads it.
            scenario: Scenario {
                title: scenario.title.clone(),
                host: scenario.host.clone(),
                scheduler: scenario.scheduler.clone(),
                run: scenario.run.clone(),
                domains: scenario.domains.clone(),
                actions: scenario.actions.clone(),
                source: serde_json::Value::Null,
            },
            series: Series::default(),
            sample_prev: vec![[0; 4]; nv],
            io_prev: vec![[0; 7]; ndoms],
            last_sample: Time::ZERO,
            measure_from: Time::ZERO,
            end,
            events: 0,
            finished: false,
            trace_pending: None,
        };
        if let Some((host, dir)) = cluster {
            sim.join_cluster(host, dir);
        }
        sim.boot();
        Ok(sim)
    }

    /// Create everything at t = 0, in Xen's order: PCPUs, then each domain
    /// in turn: its VCPUs (placed as `sched_select_initial_cpu` does, then by
    /// the scheduler's insert hook), then its guest starts, before the next
    /// domain is created. A toolstack builds and unpauses one domain
    /// (`xl create`) before it creates the next, so a scheduler that places
    /// a new VCPU by the load it sees (Credit from Xen 4.8) sees the domains
    /// created before it already awake. No time passes in between.
    fn boot(&mut self) {
        for p in 0..self.w.pcpus.len() {
            self.w.pcpus[p].idle_since = Some(Time::ZERO);
        }
        self.w.local = Some(PcpuId(0));
        self.sched.init(&mut SchedCtx::new(&mut self.w));
        for d in 0..self.w.doms.len() {
            let dom = DomId(d as u32);
            let params = self.admin[d].params.clone();
            self.sched
                .init_domain(&mut SchedCtx::new(&mut self.w), dom, &params);
            let (first, n) = (self.w.doms[d].first_vcpu, self.w.doms[d].nvcpus);
            let mut prev: Option<PcpuId> = None;
            for vi in first..first + n {
                let v = VcpuId(vi);
                let hard = self.w.masks[self.w.vcpus[vi as usize].hard_mask as usize];
                let initial = match prev {
                    None => hard.first(),
                    Some(p) => hard.cycle(p),
                }
                .expect("affinity masks are non-empty");
                self.w.vcpus[vi as usize].processor = initial;
                prev = Some(initial);
                self.sched.insert_vcpu(&mut SchedCtx::new(&mut self.w), v);
                self.drain_deferred();
            }
            // The toolstack (on no simulated PCPU) unpauses it: the guest boots.
            self.w.local = None;
            self.call_workload(dom, |wl, g, rng| wl.start(g, rng));
            self.w.local = Some(PcpuId(0));
        }
        self.w.local = None;
        let run = &self.scenario.run;
        if run.warmup_ns > 0 {
            self.w.queue.push(Time(run.warmup_ns), Event::WarmupEnd);
        } else {
            self.schedule_sample();
        }
        for (i, a) in self.scenario.actions.iter().enumerate() {
            self.w
                .queue
                .push(Time(a.at_ns), Event::Action { index: i as u32 });
        }
        self.w.queue.push(self.end, Event::End);
    }

    fn schedule_sample(&mut self) {
        let at = self.w.now.after(self.scenario.run.sample_ns);
        if at < self.end {
            self.w.queue.push(at, Event::Sample);
        }
    }

    /// Run a workload callback, then wake VCPUs for any work it queued.
    fn call_workload(
        &mut self,
        dom: DomId,
        f: impl FnOnce(&mut dyn Workload, &mut GuestCtx, &mut Rng),
    ) {
        let d = dom.idx();
        {
            let mut g = GuestCtx {
                w: &mut self.w,
                dom,
            };
            f(self.workloads[d].as_mut(), &mut g, &mut self.rngs[d]);
        }
        self.dispatch_guest_work();
        self.guest_yields();
    }

    /// `SCHEDOP_yield` from running VCPUs: the scheduler's `yield_`, then a
    /// local reschedule on the VCPU's PCPU.
    fn guest_yields(&mut self) {
        let yields = std::mem::take(&mut self.w.guest_yields);
        for v in yields {
            let Some(p) = self.w.vcpus[v.idx()].running_on else {
                continue;
            };
            let saved = self.w.local;
            self.w.local = Some(p);
            self.sched.yield_(&mut SchedCtx::new(&mut self.w), v);
            self.w.raise_softirq(p, 0);
            self.w.local = saved;
            self.drain_deferred();
        }
    }

    /// For each domain that got work: wake halted VCPUs while there is more
    /// queued work than awake VCPUs free to take it (the guest OS sends an IPI
    /// to an idle VCPU).
    fn dispatch_guest_work(&mut self) {
        while let Some(dom) = self.w.guest_dirty.pop() {
            let d = &self.w.doms[dom.idx()];
            let (first, n) = (d.first_vcpu, d.nvcpus);
            let queued = d.queue.len();
            let mut free = 0usize;
            for vi in first..first + n {
                let v = &self.w.vcpus[vi as usize];
                if v.item.is_none() && !v.blocked && v.online {
                    free += 1;
                }
            }
            let mut cursor = self.w.doms[dom.idx()].wake_cursor;
            let mut tries = 0;
            while free < queued && tries < n {
                let vi = first + cursor % n;
                cursor = cursor.wrapping_add(1);
                tries += 1;
                let v = &self.w.vcpus[vi as usize];
                if v.blocked && v.online {
                    free += 1;
                    self.wake_vcpu(VcpuId(vi));
                }
            }
            self.w.doms[dom.idx()].wake_cursor = cursor % n.max(1);
            for vi in first..first + n {
                if !self.w.vcpus[vi as usize].irq.is_empty() {
                    self.interrupt_vcpu(VcpuId(vi));
                }
            }
        }
    }

    /// Urgent work is queued for VCPU `v`. Halted, it wakes; already in
    /// interrupt context or free, it takes the work when it gets to it;
    /// holding ordinary work, the urgent work preempts that work, which
    /// resumes after it: at once for interrupt context (the profile's
    /// `backend_context = "softirq"`); for kernel threads (`"thread"`) at
    /// once if the guest's CFS would preempt on the wake-up
    /// ([`Simulation::cfs_wakeup_preempts`]), else at its next scheduler tick.
    fn interrupt_vcpu(&mut self, v: VcpuId) {
        let vc = &self.w.vcpus[v.idx()];
        if !vc.online {
            return;
        }
        if vc.blocked {
            self.wake_vcpu(v);
            return;
        }
        if !matches!(vc.item, Some(it) if it.tag & URGENT == 0) {
            return;
        }
        let tick = self.w.platform.io.guest_tick_ns;
        if self.w.platform.io.backend_thread && tick > 0 && !self.cfs_wakeup_preempts(v) {
            let vc = &self.w.vcpus[v.idx()];
            if !vc.tick_armed {
                let now = self.w.now.0;
                let at = Time((now / tick + 1) * tick);
                self.w.vcpus[v.idx()].tick_armed = true;
                self.w.queue.push(at, Event::GuestTick { vcpu: v });
            }
        } else {
            self.preempt_for_irq(v);
        }
    }

    /// Does the guest's scheduler (Linux CFS) let a kernel thread woken on
    /// `v` preempt the process running there at once? CFS places a woken
    /// sleeper at most half its latency target (3 ms) behind the running
    /// process's virtual runtime and preempts when the sleeper is more than
    /// the wake-up granularity (1 ms) behind; both are scaled by 1 + log2 of
    /// the CPUs (at most 8). A backend that uses little CPU is always that far behind and
    /// preempts at once; one that has used as much CPU as the process waits
    /// for the tick. vmsched compares the CPU time `v` gave to urgent and to
    /// ordinary work.
    fn cfs_wakeup_preempts(&mut self, v: VcpuId) -> bool {
        if self.w.vcpus[v.idx()].running_on.is_some() {
            self.w.settle_work(v);
        }
        // Linux's defaults: sched_latency 6 ms (a sleeper is placed at most
        // half of it behind) and sched_wakeup_granularity 1 ms, both scaled
        // by 1 + log2(CPUs) up to 8 CPUs.
        const SLEEPER_BONUS_NS: u64 = 3_000_000;
        const WAKEUP_GRAN_NS: u64 = 1_000_000;
        let vc = &self.w.vcpus[v.idx()];
        let ncpus = self.w.doms[vc.dom.idx()].online_vcpus.len().clamp(1, 8) as u64;
        let factor = 1 + ncpus.ilog2() as u64;
        let gran = WAKEUP_GRAN_NS * factor;
        let sleeper = vc
            .urgent_ran_ns
            .max(vc.ordinary_ran_ns.saturating_sub(SLEEPER_BONUS_NS * factor));
        vc.ordinary_ran_ns.saturating_sub(sleeper) > gran
    }

    /// The guest preempts `v`'s ordinary work for its urgent work.
    fn preempt_for_irq(&mut self, v: VcpuId) {
        let vc = &self.w.vcpus[v.idx()];
        if vc.irq.is_empty() || !matches!(vc.item, Some(it) if it.tag & URGENT == 0) {
            return;
        }
        let running = vc.running_on.is_some();
        if running {
            self.w.settle_work(v);
        }
        let vc = &mut self.w.vcpus[v.idx()];
        vc.stashed = vc.item.take();
        vc.work_gen = vc.work_gen.wrapping_add(1);
        if running {
            self.w.start_work(v);
        }
    }

    /// A halted VCPU gets work: it becomes runnable and the scheduler hears of it.
    fn wake_vcpu(&mut self, v: VcpuId) {
        let vc = &mut self.w.vcpus[v.idx()];
        if !vc.blocked {
            return;
        }
        vc.blocked = false;
        if vc.running_on.is_none() {
            vc.woke_at = Some(self.w.now);
        }
        self.w.update_state(v);
        if self.w.vcpus[v.idx()].runnable() {
            self.w.local = Some(self.w.vcpus[v.idx()].processor);
            self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
            self.w.local = None;
            self.drain_deferred();
        }
    }

    /// Perform the operations hooks asked for, until none are left.
    fn drain_deferred(&mut self) {
        while !self.w.deferred.is_empty() {
            let op = self.w.deferred.remove(0);
            match op {
                Deferred::Pause(v) => {
                    let was = self.w.vcpus[v.idx()].runnable();
                    self.w.vcpus[v.idx()].pause_count += 1;
                    self.w.update_state(v);
                    if was {
                        self.sched.sleep(&mut SchedCtx::new(&mut self.w), v);
                    }
                }
                Deferred::Unpause(v) => {
                    let vc = &mut self.w.vcpus[v.idx()];
                    if vc.pause_count == 0 {
                        self.w.violation(format!(
                            "scheduler {} unpaused {} which was not paused",
                            self.sched.name(),
                            self.w.vcpu_name(v)
                        ));
                        continue;
                    }
                    vc.pause_count -= 1;
                    self.w.update_state(v);
                    if self.w.vcpus[v.idx()].runnable() {
                        self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
                    }
                }
                Deferred::Migrate(v) => {
                    let vc = &mut self.w.vcpus[v.idx()];
                    if vc.migrating {
                        continue;
                    }
                    let was = vc.runnable();
                    vc.migrating = true;
                    if was {
                        self.sched.sleep(&mut SchedCtx::new(&mut self.w), v);
                    }
                    if self.w.vcpus[v.idx()].running_on.is_none() {
                        self.finish_migration(v);
                    }
                }
            }
        }
    }

    /// Xen's `sched_unit_migrate_finish`: pick, move, wake.
    fn finish_migration(&mut self, v: VcpuId) {
        let to = self.sched.pick_cpu(&mut SchedCtx::new(&mut self.w), v);
        if !self.w.masks[self.w.vcpus[v.idx()].hard_mask as usize].test(to) {
            let name = self.w.vcpu_name(v);
            self.w.violation(format!(
                "scheduler {} placed {name} on pcpu {to}, outside its hard affinity",
                self.sched.name()
            ));
        }
        self.sched.migrate(&mut SchedCtx::new(&mut self.w), v, to);
        self.w.vcpus[v.idx()].migrating = false;
        self.w.update_state(v);
        if self.w.vcpus[v.idx()].runnable() {
            self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
        }
        self.drain_deferred();
    }

    /// SCHEDULE_SOFTIRQ on `p`: ask the scheduler, switch, arm the slice timer.
    fn schedule(&mut self, p: PcpuId) {
        let pi = p.idx();
        {
            let pc = &mut self.w.pcpus[pi];
            pc.softirq_gen = pc.softirq_gen.wrapping_add(1);
            pc.softirq_at = None;
            pc.slice_gen = pc.slice_gen.wrapping_add(1);
            pc.schedules += 1;
        }
        self.w.queue.cancel(Timer::Slice(p));
        let now = self.w.now;
        let prev = self.w.pcpus[pi].current;
        if let Some(v) = prev {
            self.w.settle_work(v);
        }
        self.w.local = Some(p);
        let d = self.sched.do_schedule(&mut SchedCtx::new(&mut self.w), p);
        self.check_decision(p, prev, &d);
        if self.w.fatal.is_some() {
            return;
        }
        if let Some(t) = self.w.trace.as_deref_mut() {
            t.schedule(&SchedEvent {
                now,
                pcpu: p,
                prev,
                next: d.next,
                slice_ns: d.slice_ns,
                vcpus: &self.w.vcpus,
            });
        }
        let sched_ns = self.w.switch.take_sched_ns(p);
        if d.next != prev {
            if let Some(v) = prev {
                self.w.switch_out(v, p);
                let vc = &mut self.w.vcpus[v.idx()];
                vc.running_on = None;
                vc.work_gen = vc.work_gen.wrapping_add(1);
                self.w.update_state(v);
            }
            self.w.pcpus[pi].current = d.next;
            match d.next {
                Some(n) => {
                    if let Some(s) = self.w.pcpus[pi].idle_since.take() {
                        self.w.pcpus[pi].idle_ns += now.since(s);
                    }
                    let cost = self.w.switch_in(p, n, sched_ns);
                    let vc = &mut self.w.vcpus[n.idx()];
                    vc.running_on = Some(p);
                    vc.processor = p;
                    vc.context_switches += 1;
                    if vc.last_ran_on.is_some_and(|l| l != p) {
                        vc.migrations += 1;
                    }
                    vc.last_ran_on = Some(p);
                    if let Some(w) = vc.woke_at.take() {
                        vc.wake_latency.record(now.since(w));
                    }
                    vc.progress_from = now.after(cost);
                    self.w.update_state(n);
                    if !self.w.start_work(n) {
                        // Woken for work another VCPU took: the guest halts again.
                        self.w.vcpus[n.idx()].blocked = true;
                        self.w.raise_softirq(p, 0);
                    }
                }
                None => {
                    if self.w.pcpus[pi].idle_since.is_none() {
                        self.w.pcpus[pi].idle_since = Some(now);
                    }
                }
            }
            if let Some(v) = prev {
                self.sched.context_saved(&mut SchedCtx::new(&mut self.w), v);
                self.drain_deferred();
                if self.w.vcpus[v.idx()].migrating {
                    self.finish_migration(v);
                }
            }
        } else if let Some(n) = d.next {
            // Re-picked without a switch: it keeps its work and its completion
            // event, unless it had halted and was woken again at this instant.
            // The decision's own run time delays its work (and that event).
            if sched_ns > 0 {
                let at = self.w.repick(n, sched_ns);
                self.w.vcpus[n.idx()].progress_from = at;
                if self.w.vcpus[n.idx()].item.is_some() {
                    self.w.start_work(n);
                }
            }
            if self.w.vcpus[n.idx()].item.is_none() && !self.w.start_work(n) {
                self.w.vcpus[n.idx()].blocked = true;
                self.w.raise_softirq(p, 0);
            }
        }
        self.w.local = Some(p);
        if let Some(s) = d.slice_ns {
            let gen = self.w.pcpus[pi].slice_gen;
            self.w
                .queue
                .push(now.after(s), Event::SliceEnd { pcpu: p, gen });
        }
        self.drain_deferred();
        self.w.local = None;
    }

    fn check_decision(&mut self, p: PcpuId, prev: Option<VcpuId>, d: &crate::sched::Decision) {
        let Some(n) = d.next else { return };
        let name = self.sched.name();
        if n.idx() >= self.w.vcpus.len() {
            self.w.violation(format!(
                "scheduler {name} chose vcpu id {n}, which does not exist"
            ));
            return;
        }
        let vc = &self.w.vcpus[n.idx()];
        // Names are formatted only when something is wrong (this runs at
        // every decision).
        let problem = if !vc.runnable() {
            format!("on pcpu {p} but it is not runnable")
        } else if let Some(q) = vc.running_on.filter(|&q| q != p) {
            format!("on pcpu {p} while it runs on pcpu {q}")
        } else if !self.w.masks[vc.hard_mask as usize].test(p) {
            format!("on pcpu {p}, outside its hard affinity")
        } else if prev != Some(n) && vc.running_on == Some(p) {
            let who = self.w.vcpu_name(n);
            self.w.violation(format!(
                "engine: {who} marked running on pcpu {p} but not current"
            ));
            return;
        } else {
            return;
        };
        let who = self.w.vcpu_name(n);
        self.w
            .violation(format!("scheduler {name} chose {who} {problem}"));
    }

    /// The running VCPU's work item completed.
    fn work_done(&mut self, v: VcpuId, gen: u32) {
        let vc = &self.w.vcpus[v.idx()];
        if vc.work_gen != gen || vc.running_on.is_none() {
            return;
        }
        self.w.settle_work(v);
        let item: WorkItem = self.w.vcpus[v.idx()].item.take().expect("work item");
        let dom = self.w.vcpus[v.idx()].dom;
        let idx = self.w.vcpus[v.idx()].index;
        self.w.local = self.w.vcpus[v.idx()].running_on;
        if item.tag & BACKEND != 0 {
            self.backend_step(crate::ids::DomId(item.tag & TAG_MASK));
        } else {
            let tag = item.tag & TAG_MASK;
            self.call_workload(dom, |wl, g, rng| wl.work_done(g, rng, idx, tag));
        }
        // The continuation may have queued work for this VCPU; otherwise it halts.
        let vc = &self.w.vcpus[v.idx()];
        if vc.running_on.is_some() && vc.item.is_none() && !vc.blocked && !self.w.start_work(v) {
            let p = self.w.vcpus[v.idx()].running_on.unwrap();
            self.w.vcpus[v.idx()].blocked = true;
            self.w.raise_softirq(p, 0);
        }
        self.w.local = None;
    }

    fn take_sample(&mut self) {
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

    fn end_warmup(&mut self) {
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

    fn apply_action(&mut self, index: usize) {
        let a: Action = self.scenario.actions[index].clone();
        match &a.what {
            ActionWhat::Domain { dom, params, ops } => self.apply_domain_action(*dom, params, ops),
            ActionWhat::Global { params } => {
                self.global_params = params.clone();
                self.sched
                    .adjust_global(&mut SchedCtx::new(&mut self.w), params);
                self.drain_deferred();
            }
        }
    }

    /// What `xl` does to one domain, in this order: scheduler parameters
    /// (`xl sched-*`), hard affinity (`xl vcpu-pin`), VCPUs online (`xl
    /// vcpu-set`), pause or unpause. The toolstack runs on no simulated
    /// PCPU: every reschedule it causes is a remote one (an IPI).
    fn apply_domain_action(&mut self, dom: DomId, params: &Option<Params>, ops: &DomainOps) {
        self.admin[dom.idx()].apply(params, ops);
        let saved = self.w.local.take();
        if let Some(p) = params {
            self.sched.adjust(&mut SchedCtx::new(&mut self.w), dom, p);
            self.drain_deferred();
        }
        if let Some(m) = ops.affinity {
            self.pin_domain(dom, m);
        }
        if let Some(n) = ops.vcpus_online {
            self.set_vcpus_online(dom, n);
        }
        match ops.pause {
            Some(true) => self.pause_domain(dom),
            Some(false) => self.unpause_domain(dom),
            None => {}
        }
        self.w.local = saved;
    }

    /// Xen's `vcpu_sleep_nosync` after a toolstack or hotplug change: if `v`
    /// is not runnable now, the scheduler hears `sleep`, even if `v` was not
    /// runnable before either (Xen calls the hook whenever the VCPU is not
    /// runnable after the change).
    fn sleep_nosync(&mut self, v: VcpuId) {
        self.w.update_state(v);
        if !self.w.vcpus[v.idx()].runnable() {
            self.sched.sleep(&mut SchedCtx::new(&mut self.w), v);
            self.drain_deferred();
        }
    }

    /// Xen's `vcpu_wake`: the scheduler hears `wake` if `v` is runnable now.
    fn wake_nosync(&mut self, v: VcpuId) {
        self.w.update_state(v);
        if self.w.vcpus[v.idx()].runnable() {
            self.sched.wake(&mut SchedCtx::new(&mut self.w), v);
            self.drain_deferred();
        }
    }

    fn vcpu_ids(&self, dom: DomId) -> std::ops::Range<u32> {
        let d = &self.w.doms[dom.idx()];
        d.first_vcpu..d.first_vcpu + d.nvcpus
    }

    /// `xl pause`: one more domain pause count on every VCPU
    /// (`domain_pause`: `vcpu_sleep_nosync` on each). A running VCPU runs
    /// on until its PCPU reschedules, an IPI later.
    fn pause_domain(&mut self, dom: DomId) {
        for vi in self.vcpu_ids(dom) {
            self.w.vcpus[vi as usize].domain_pause += 1;
            self.sleep_nosync(VcpuId(vi));
        }
    }

    /// `xl unpause`: one domain pause count less; at zero every runnable
    /// VCPU wakes (`domain_unpause`). A VCPU its scheduler parked stays
    /// parked: the two counts are apart, as in Xen.
    fn unpause_domain(&mut self, dom: DomId) {
        for vi in self.vcpu_ids(dom) {
            let vc = &mut self.w.vcpus[vi as usize];
            debug_assert!(vc.domain_pause > 0, "validated: unpause of a paused domain");
            vc.domain_pause = vc.domain_pause.saturating_sub(1);
            self.wake_nosync(VcpuId(vi));
        }
    }

    /// `xl vcpu-set DOM n`. The guest takes VCPUs `n..` down (Linux CPU
    /// hot-unplug ending in `VCPUOP_down`): the work a going VCPU holds goes
    /// back to the head of the guest run queue for the VCPUs that stay, a
    /// running one is descheduled (the scheduler hears `sleep` and its PCPU
    /// reschedules an IPI later; meanwhile it runs the guest's offline path,
    /// no guest work). VCPUs `..n` that were down come up halted
    /// (`VCPUOP_up`) and wake if the guest has work for them. Offline VCPUs
    /// stay inserted in the scheduler, as in Xen (`remove_vcpu` is for
    /// destroyed domains).
    fn set_vcpus_online(&mut self, dom: DomId, n: u32) {
        let ids = self.vcpu_ids(dom);
        // Highest first, so that work put back keeps the VCPUs' order.
        for vi in ids.clone().rev() {
            let v = VcpuId(vi);
            if vi - ids.start < n || !self.w.vcpus[vi as usize].online {
                continue;
            }
            if self.w.vcpus[vi as usize].running_on.is_some() {
                self.w.settle_work(v);
            }
            let vc = &mut self.w.vcpus[vi as usize];
            vc.online = false;
            vc.blocked = true;
            vc.woke_at = None;
            vc.work_gen = vc.work_gen.wrapping_add(1);
            let stashed = vc.stashed.take();
            let mut urgent: Vec<WorkItem> = vc.irq.drain(..).collect();
            if let Some(item) = vc.item.take() {
                if item.tag & URGENT != 0 {
                    urgent.insert(0, item);
                } else {
                    self.w.doms[dom.idx()].queue.push_front(item);
                }
                self.w.note_guest_work(dom);
            }
            if let Some(item) = stashed {
                self.w.doms[dom.idx()].queue.push_front(item);
                self.w.note_guest_work(dom);
            }
            // Its event channels move to the lowest VCPU staying online.
            if !urgent.is_empty() {
                if let Some(to) = ids
                    .clone()
                    .find(|&x| x - ids.start < n && self.w.vcpus[x as usize].online)
                {
                    self.w.vcpus[to as usize].irq.extend(urgent);
                    self.w.note_guest_work(dom);
                }
            }
            self.sleep_nosync(v);
        }
        for vi in ids.clone() {
            if vi - ids.start >= n || self.w.vcpus[vi as usize].online {
                continue;
            }
            // It comes up halted (blocked is still set from going down).
            self.w.vcpus[vi as usize].online = true;
            self.w.update_state(VcpuId(vi));
            self.w.note_guest_work(dom);
        }
        // Event channels are rebound over the VCPUs now online.
        let online: Vec<u32> = ids
            .clone()
            .filter(|&vi| self.w.vcpus[vi as usize].online)
            .map(|vi| vi - ids.start)
            .collect();
        self.w.doms[dom.idx()].online_vcpus = online;
        self.dispatch_guest_work();
    }

    /// `xl vcpu-pin DOM all CPUS`: every VCPU's hard affinity becomes `mask`
    /// and, as Xen's `vcpu_set_affinity` does, its placement is re-evaluated
    /// through the migration protocol (`_VPF_migrating`, `sleep`, and once
    /// it is off its PCPU `pick_cpu`, `migrate`, `wake`).
    fn pin_domain(&mut self, dom: DomId, mask: crate::cpumask::CpuMask) {
        let idx = match self.w.masks.iter().position(|m| *m == mask) {
            Some(i) => i,
            None => {
                self.w.masks.push(mask);
                self.w.masks.len() - 1
            }
        };
        let idx = u16::try_from(idx).expect("fewer than 65536 distinct affinities");
        for vi in self.vcpu_ids(dom) {
            self.w.vcpus[vi as usize].hard_mask = idx;
            self.w.deferred.push(Deferred::Migrate(VcpuId(vi)));
            self.drain_deferred();
        }
    }

    /// Handle one event. Returns false when the run is over.
    fn step(&mut self) -> bool {
        let Some((t, ev)) = self.w.queue.pop() else {
            return false;
        };
        debug_assert!(t >= self.w.now, "time went backwards");
        self.w.now = t;
        match ev {
            Event::Softirq { pcpu, gen } => {
                if self.w.pcpus[pcpu.idx()].softirq_gen != gen {
                    return true;
                }
                self.schedule(pcpu);
            }
            Event::SliceEnd { pcpu, gen } => {
                if self.w.pcpus[pcpu.idx()].slice_gen != gen {
                    return true;
                }
                // As in Xen, the slice timer only raises SCHEDULE_SOFTIRQ: every
                // timer expiring at this same instant (queued earlier, e.g.
                // Credit's tick and accounting) runs before the scheduler does,
                // because TIMER_SOFTIRQ is served before SCHEDULE_SOFTIRQ.
                self.w.raise_softirq(pcpu, 0);
            }
            Event::SchedTimer { id, gen } => {
                let (g, home) = self.w.sched_timers[id as usize];
                if g != gen {
                    return true;
                }
                self.w.local = Some(home);
                self.sched.timer(&mut SchedCtx::new(&mut self.w), id);
                self.drain_deferred();
                self.w.local = None;
            }
            Event::WorkDone { vcpu, gen } => self.work_done(vcpu, gen),
            Event::WorkloadTimer { dom, token } => {
                self.call_workload(dom, |wl, g, rng| wl.timer(g, rng, token));
            }
            Event::Sample => {
                self.take_sample();
                self.schedule_sample();
            }
            Event::Io { slot } => self.io_event(slot),
            Event::GuestTick { vcpu } => {
                self.w.vcpus[vcpu.idx()].tick_armed = false;
                self.preempt_for_irq(vcpu);
            }
            Event::WarmupEnd => self.end_warmup(),
            Event::Action { index } => self.apply_action(index as usize),
            Event::End => {
                // The sample interval that ends with the run is not lost (a
                // shorter last interval is normalised by its own length).
                if self.w.now > self.last_sample && self.w.now > self.measure_from {
                    self.take_sample();
                }
                self.w.flush_states();
                self.finished = true;
                return false;
            }
        }
        self.events += 1;
        true
    }

    /// Simulate up to simulated time `until` (or the end of the run).
    pub fn run_until(&mut self, until: Time) -> Result<Progress, SimError> {
        while !self.finished {
            match self.w.queue.peek_time() {
                Some(t) if t <= until => {}
                _ => break,
            }
            if !self.step() {
                break;
            }
            if let Some(m) = self.w.fatal.take() {
                self.finished = true;
                return Err(SimError::Internal(m));
            }
        }
        Ok(self.progress())
    }

    /// When the next event is due (`None` once the run is over).
    pub(crate) fn next_event_time(&self) -> Option<Time> {
        if self.finished {
            None
        } else {
            self.w.queue.peek_time()
        }
    }

    /// Handle exactly one event (a cluster interleaves its hosts' events).
    pub(crate) fn step_one(&mut self) -> Result<(), SimError> {
        if !self.finished && !self.step() {
            self.finished = true;
        }
        if let Some(m) = self.w.fatal.take() {
            self.finished = true;
            return Err(SimError::Internal(m));
        }
        Ok(())
    }

    /// Make this simulation host number `host` of a cluster whose hosts and
    /// domains `dir` names.
    pub(crate) fn join_cluster(&mut self, host: u32, dir: std::sync::Arc<crate::io::Directory>) {
        self.w.io.host = host;
        self.w.directory = dir;
    }

    /// Simulate to the end.
    pub fn run(&mut self) -> Result<Progress, SimError> {
        self.run_until(Time(u64::MAX))
    }

    /// Where the run is.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.w.now,
            end: self.end,
            events: self.events,
            finished: self.finished,
        }
    }

    /// Events processed since measurement started.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events in the queue now (benchmarks compare the engine with a bare
    /// heap of this size).
    pub fn queue_len(&self) -> usize {
        self.w.queue.len()
    }

    /// The sampled series so far.
    pub fn series(&self) -> &Series {
        &self.series
    }

    /// The scenario being run, without its input tree (`source` is null:
    /// keep the [`Scenario`] the simulation was built from to echo it).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Per-VCPU state, for monitors and tests.
    pub fn vcpus(&self) -> &[Vcpu] {
        &self.w.vcpus
    }

    /// Per-PCPU state, for monitors and tests.
    pub fn pcpus(&self) -> &[Pcpu] {
        &self.w.pcpus
    }

    /// Domains, for monitors and tests.
    pub fn domains(&self) -> &[Domain] {
        &self.w.doms
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.w.now
    }

    /// The scheduler's debug dump.
    pub fn dump(&mut self) -> String {
        self.sched.dump(&SchedCtx::new(&mut self.w))
    }

    /// Act on a domain now, as `xl` would: change its scheduler parameters
    /// (`xl sched-* -d`), and/or `pause`, `vcpus_online`, `affinity`, with
    /// the keys and validation of an `[[action]]`.
    pub fn adjust_domain(
        &mut self,
        dom_name: &str,
        changes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), SimError> {
        let (dom, params, ops) = crate::scenario::domain_action(
            &self.scenario,
            &self.admin,
            dom_name,
            changes,
            "adjust",
        )?;
        self.apply_domain_action(dom, &params, &ops);
        if let Some(m) = self.w.fatal.take() {
            self.finished = true;
            return Err(SimError::Internal(m));
        }
        Ok(())
    }

    /// Bytes of heap and inline memory the model holds per VCPU (for the
    /// memory benchmark): the VCPU record, its histogram, its sample slot.
    /// A lower bound: the event queue, the scheduler's own state and the
    /// per-domain records are not counted (measure the process's RSS for
    /// the total).
    pub fn bytes_per_vcpu(&self) -> f64 {
        let n = self.w.vcpus.len().max(1);
        let inline = std::mem::size_of::<Vcpu>() + std::mem::size_of::<[u64; 4]>();
        let heap: usize = self
            .w
            .vcpus
            .iter()
            .map(|v| v.wake_latency.heap_bytes())
            .sum();
        inline as f64 + heap as f64 / n as f64
    }
}
