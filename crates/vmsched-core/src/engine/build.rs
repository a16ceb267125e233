//! Construction: from a validated scenario to a host at t = 0.
//!
//! The PCPUs, the domains and their VCPUs (affinity masks shared by index),
//! the I/O state and the switch-cost model are laid out first; then the
//! scheduler is built from its registration (or supplied by the caller) and
//! the workloads from theirs. `boot` then creates everything in Xen's order
//! (scheduler, then each domain and its VCPUs, placed as
//! `sched_select_initial_cpu` does), starts the guests, and queues the
//! run's fixed events: end of warm-up, actions, end.

use super::{switch, Event, EventQueue, Pcpu, Simulation, World};
use crate::cpumask::CpuMask;
use crate::domain::{Domain, RunState, Vcpu};
use crate::error::SimError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::io::IoState;
use crate::metrics::Series;
use crate::rng::{stream_key, Rng};
use crate::scenario::{DomainAdmin, Scenario};
use crate::sched::{self, SchedCtx, Scheduler};
use crate::time::Time;
use crate::workload::{self, Workload};

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
        let all = topo.all();
        let mut masks = vec![all];
        let mut mask_id = |m: &Option<CpuMask>| -> u16 {
            match m {
                None => 0,
                Some(m) => {
                    // What lets a scheduler take a host-sized mask out of it
                    // (`CpuMask::sized`): the scenario validated it.
                    assert!(m.is_subset(&all), "affinity {m:?} beyond the host");
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
            &topo,
            vcpus.iter().map(|v| {
                let d = &scenario.domains[v.dom.idx()];
                switch::footprint_of(&d.workload, driver == Some(v.dom))
            }),
        );
        let any_soft = vcpus.iter().any(|v| v.soft_mask != 0);
        let world = World {
            now: Time::ZERO,
            queue: {
                #[allow(unused_mut)]
                let mut q = EventQueue::default();
                // With feature `queue-trace` a simulation's queue records
                // its operations from the first (set-up's) push on.
                #[cfg(feature = "queue-trace")]
                q.record();
                q
            },
            topo,
            platform: scenario.host.platform.clone(),
            pcpus: vec![Pcpu::default(); npcpus],
            vcpus,
            doms,
            masks,
            any_soft,
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
        let sched = sched.unwrap_or_else(|| info.build(&scenario.scheduler.params, npcpus));
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
                self.sched.insert_vcpu(&mut SchedCtx::new(&mut self.w), v);
                self.drain_deferred();
                // VCPU i is created after VCPU i−1's PCPU as it is once the
                // scheduler has placed it (`d->vcpu[i-1]->processor`).
                prev = Some(self.w.vcpus[vi as usize].processor);
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

    /// Make this simulation host number `host` of a cluster whose hosts and
    /// domains `dir` names.
    pub(crate) fn join_cluster(&mut self, host: u32, dir: std::sync::Arc<crate::io::Directory>) {
        self.w.io.host = host;
        self.w.directory = dir;
    }
}
