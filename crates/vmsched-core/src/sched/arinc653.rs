//! ARINC 653: Xen's cyclic-executive scheduler (Xen 4.1+, from DornerWorks).
//!
//! Design. A fixed schedule table of minor frames (domain, VCPU, runtime)
//! runs back to back, in table order, and repeats every major frame; time
//! left after the last entry is idle. When a minor frame starts, its VCPU
//! runs if it is awake and runnable; otherwise the PCPU idles for the rest of
//! that frame: a slot is never given to anyone else. A domain not named in
//! the table never runs. There are no priorities, no weights and no load
//! balancing, and a VCPU never migrates.
//!
//! One table serves the whole pool (since 4.4). Every PCPU walks the same
//! sequence of minor frames, but only the PCPU that hosts the slot's VCPU
//! runs it; the others idle. Xen's commit message calls this "not multicore
//! ARINC 653": on a multi-PCPU host VCPUs are serialised, and the intended
//! use is a one-PCPU pool. vmsched mirrors Xen and does not reject larger
//! hosts; the multi-PCPU behaviour is Xen's.
//!
//! The table is `schedule` in `[scheduler]` (Xen installs it with a sysctl
//! that has no `xl` command; the usual tool is DornerWorks' `a653_sched`):
//!
//! ```toml
//! [scheduler]
//! name = "arinc653"
//! major_frame_ms = 30          # optional; default: the sum of the runtimes
//! schedule = [
//!   { domain = "vm1", runtime_ms = 10 },
//!   { domain = "vm2", vcpu = 0, runtime_ms = 10 },
//! ]
//! ```
//!
//! Without `schedule`, Xen's default applies: one 10 ms frame per VCPU of
//! domain 0 (the scenario's first domain), so no guest ever runs. Since 4.21
//! a late major frame keeps the frame grid (before, the frame restarted "now"
//! and drifted); in 4.21 alone the default table also ends in a 10 ms idle
//! frame.
//!
//! Deviations from Xen: no tasklets or cpupools; domains are named, not
//! identified by UUID; entries are checked against the scenario's domains
//! and VCPUs (Xen lets an unresolved entry run idle). `xen_version` starts
//! at 4.4 (the 4.1 – 4.3 single-PCPU code is not modelled). See
//! `docs/schedulers/arinc653.md`.
//!
//! Hooks: `init` (install the table), `init_domain`, `insert_vcpu` (default
//! table entries), `wake`, `sleep`, `do_schedule`, `pick_cpu`, `adjust_global`
//! (install a new table).

use super::{Decision, SchedCtx, Scheduler, SchedulerInfo};
use super::{Allocation, FrameTable};
use crate::error::ScenarioError;
use crate::ids::{DomId, PcpuId, VcpuId};
use crate::params::{Default, ParamKind, ParamScope, ParamSpec, Params, Version};
use crate::scenario::{ActionWhat, Scenario};
use crate::time::{secs_f64, Time, NS_PER_MS};

/// Most entries in a schedule (`ARINC653_MAX_DOMAINS_PER_SCHEDULE`).
const MAX_ENTRIES: usize = 64;
/// Frame length of each default entry, and idle re-check period with no table (ns).
const DEFAULT_TIMESLICE_NS: u64 = 10 * NS_PER_MS;

const CURRENT: Version = Version::new(4, 22);

const ENTRY_FIELDS: &[ParamSpec] = &[
    ParamSpec {
        name: "domain",
        unit: "",
        kind: ParamKind::Name,
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Domain whose VCPU runs in this minor frame.",
    },
    ParamSpec {
        name: "vcpu",
        unit: "",
        kind: ParamKind::Int { min: 0, max: 4095 },
        default: Default::Int(0),
        scope: ParamScope::Global,
        doc: "Which of the domain's VCPUs.",
    },
    ParamSpec {
        name: "runtime_ms",
        unit: "ms",
        kind: ParamKind::Float {
            min: 0.000001,
            max: 3_600_000.0,
        },
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Length of the minor frame.",
    },
];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "schedule",
        unit: "",
        kind: ParamKind::TableList(ENTRY_FIELDS),
        default: Default::EmptyList,
        scope: ParamScope::Global,
        doc: "Minor frames in order: {domain, vcpu, runtime_ms}; 1 to 64 entries. Empty: Xen's default (domain 0's VCPUs, 10 ms each).",
    },
    ParamSpec {
        name: "major_frame_ms",
        unit: "ms",
        kind: ParamKind::Float { min: 0.0, max: 3_600_000.0 },
        default: Default::Float(0.0),
        scope: ParamScope::Global,
        doc: "Length of the major frame, >= the sum of the runtimes; 0 = that sum.",
    },
    ParamSpec {
        name: "xen_version",
        unit: "",
        kind: ParamKind::Version {
            min: Version::new(4, 4),
            max: CURRENT,
        },
        default: Default::Str("4.22"),
        scope: ParamScope::Global,
        doc: "Xen release whose ARINC 653 behaviour to reproduce (before \"4.21\": drifting major frames).",
    },
];

/// The counters [`Scheduler::counters`] reports in the summary (name, meaning).
pub const COUNTERS: &[(&str, &str)] = &[
    ("table_entries", "entries in the schedule table"),
    ("major_frame_ns", "length of the major frame (ns)"),
    ("major_frames", "major frames started"),
    ("idle_slot_decisions", "decisions that left a PCPU idle in a slot whose VCPU could not run"),
];

/// The registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo::new(
    "arinc653",
    "ARINC 653",
    PARAMS,
    |p, _| Box::new(Arinc653::new(p)),
)
.about(
    "Xen's ARINC 653 scheduler: a fixed cyclic table of minor frames; unused slots stay idle.",
    "Xen 4.1 - current (DornerWorks)",
)
.with_allocation(Allocation {
    rule: "a minor frame of A % x 10 ms per domain in a 10 ms major frame (schedule = [{domain, runtime_ms}], major_frame_ms = 10)",
    since: "4.4",
    domain: &[],
    frames: Some(FrameTable {
        table: "schedule",
        domain_field: "domain",
        length_field: "runtime_ms",
        major_frame: "major_frame_ms",
        major_frame_len: 10.0,
        unit: "ms",
    }),
})
.with_check_global(check_global)
.with_check_scenario(check_scenario)
.with_check_domain_ops(check_domain_ops)
.with_counters(COUNTERS);

fn ms_to_ns(ms: f64) -> u64 {
    secs_f64(ms / 1000.0)
}

/// The table as Xen's `arinc653_sched_set` validates it (domains are checked
/// by [`check_scenario`]).
fn check_global(p: &Params, path: &str) -> Result<(), ScenarioError> {
    let entries = p.table_list("schedule");
    let major = p.float("major_frame_ms");
    if entries.is_empty() {
        if p.is_explicit("major_frame_ms") {
            return Err(ScenarioError::new(
                format!("{path}.major_frame_ms"),
                "is given without a schedule; expected a schedule table with it (the default table sets its own major frame)",
            ));
        }
        return Ok(());
    }
    if entries.len() > MAX_ENTRIES {
        return Err(ScenarioError::new(
            format!("{path}.schedule"),
            format!("has {} entries; expected 1 to {MAX_ENTRIES}", entries.len()),
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        if ms_to_ns(e.float("runtime_ms")) == 0 {
            return Err(ScenarioError::new(
                format!("{path}.schedule[{i}].runtime_ms"),
                format!(
                    "{} ms rounds to 0 ns; expected a positive runtime",
                    e.float("runtime_ms")
                ),
            ));
        }
    }
    let total: u64 = entries
        .iter()
        .map(|e| ms_to_ns(e.float("runtime_ms")))
        .sum();
    if p.is_explicit("major_frame_ms") && ms_to_ns(major) < total {
        return Err(ScenarioError::new(
            format!("{path}.major_frame_ms"),
            format!(
                "{major} ms is shorter than the minor frames together ({} ms); expected major_frame_ms >= the sum of runtime_ms",
                total as f64 / NS_PER_MS as f64
            ),
        ));
    }
    Ok(())
}

/// ARINC 653 ignores hard affinity (`a653sched_pick_resource` keeps a VCPU
/// on its PCPU whatever its affinity says), so an `xl vcpu-pin` would leave
/// a VCPU running outside its new affinity: rejected rather than simulated
/// with a meaning the engine cannot keep.
pub(crate) fn check_domain_ops(
    ops: &crate::scenario::DomainOps,
    path: &str,
) -> Result<(), ScenarioError> {
    if ops.affinity.is_some() {
        return Err(ScenarioError::new(
            format!("{path}.affinity"),
            "cannot be changed under arinc653: Xen's ARINC 653 scheduler ignores hard affinity (a VCPU stays on its PCPU); expected no affinity in actions with this scheduler",
        ));
    }
    Ok(())
}

/// Every table (in `[scheduler]` and in actions) must name existing domains
/// and VCPUs, and the release cannot change at run time.
pub fn check_scenario(sc: &Scenario) -> Result<(), ScenarioError> {
    super::reject_boot_changes(sc, &["xen_version"])?;
    let mut tables = vec![("scheduler".to_string(), &sc.scheduler.params)];
    for (i, a) in sc.actions.iter().enumerate() {
        if let ActionWhat::Global { params } = &a.what {
            tables.push((format!("action[{i}]"), params));
        }
    }
    for (path, params) in tables {
        for (i, e) in params.table_list("schedule").iter().enumerate() {
            let name = e.str("domain");
            let Some(d) = sc.domains.iter().find(|d| d.name == name) else {
                let known: Vec<&str> = sc.domains.iter().map(|d| d.name.as_str()).collect();
                return Err(ScenarioError::new(
                    format!("{path}.schedule[{i}].domain"),
                    format!(
                        "unknown domain \"{name}\"; expected one of {}{}",
                        known.join(", "),
                        crate::error::suggestion(name, known.iter().copied())
                    ),
                ));
            };
            let vcpu = e.int("vcpu");
            if vcpu >= i64::from(d.vcpus) {
                return Err(ScenarioError::new(
                    format!("{path}.schedule[{i}].vcpu"),
                    format!(
                        "{vcpu} does not exist; domain \"{name}\" has VCPUs 0..={}",
                        d.vcpus - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A table by domain name: (domain, VCPU number, runtime in ns) per minor
/// frame, and the major frame in ns.
type NamedTable = (Vec<(String, u32, u64)>, u64);

/// One minor frame.
#[derive(Clone, Debug)]
struct Entry {
    /// Domain and VCPU number the frame belongs to (Xen: UUID and vcpu_id).
    dom: DomId,
    vcpu: u32,
    runtime_ns: u64,
    /// The resolved VCPU, once it exists.
    resolved: Option<VcpuId>,
}

/// The ARINC 653 scheduler's state.
pub struct Arinc653 {
    version: Version,
    /// The table from the scenario (`None`: Xen's default table).
    configured: Option<NamedTable>,
    /// A table was installed (the default entries for domain 0 stop).
    installed: bool,
    table: Vec<Entry>,
    major_frame_ns: u64,
    next_major_frame: Time,
    /// Index of the current minor frame, shared by every PCPU of the pool.
    index: usize,
    next_switch: Time,
    awake: Vec<bool>,
    stat_major_frames: u64,
    stat_idle_slots: u64,
}

impl Arinc653 {
    /// An ARINC 653 scheduler with validated global parameters.
    pub fn new(p: &Params) -> Arinc653 {
        Arinc653 {
            version: p.version("xen_version"),
            configured: Self::table_of(p),
            installed: false,
            table: Vec::new(),
            major_frame_ns: 0,
            next_major_frame: Time::ZERO,
            index: 0,
            next_switch: Time::ZERO,
            awake: Vec::new(),
            stat_major_frames: 0,
            stat_idle_slots: 0,
        }
    }

    /// The table a parameter set describes, by domain name.
    fn table_of(p: &Params) -> Option<NamedTable> {
        let entries = p.table_list("schedule");
        if entries.is_empty() {
            return None;
        }
        let list: Vec<(String, u32, u64)> = entries
            .iter()
            .map(|e| {
                (
                    e.str("domain").to_string(),
                    e.int("vcpu") as u32,
                    ms_to_ns(e.float("runtime_ms")),
                )
            })
            .collect();
        let total = list.iter().map(|e| e.2).sum();
        let major = match ms_to_ns(p.float("major_frame_ms")) {
            0 => total,
            m => m,
        };
        Some((list, major))
    }

    /// `arinc653_sched_set`: install a table; the next major frame starts now.
    fn install(&mut self, ctx: &SchedCtx, list: &[(String, u32, u64)], major: u64) {
        self.table = list
            .iter()
            .map(|(name, vcpu, runtime)| {
                let dom = (0..ctx.ndomains() as u32)
                    .map(DomId)
                    .find(|&d| ctx.domain_name(d) == name)
                    .expect("checked by check_scenario");
                Entry {
                    dom,
                    vcpu: *vcpu,
                    runtime_ns: *runtime,
                    resolved: None,
                }
            })
            .collect();
        self.major_frame_ns = major;
        self.installed = true;
        self.resolve(ctx);
        self.next_major_frame = ctx.now();
    }

    /// `update_schedule_units`: point each entry at its VCPU, if it exists yet.
    fn resolve(&mut self, ctx: &SchedCtx) {
        for e in &mut self.table {
            e.resolved = ctx.vcpus_of(e.dom).find(|&v| ctx.vcpu_index(v) == e.vcpu);
        }
    }

    /// Advance the shared frame state to `now`; Xen's start of `a653sched_do_schedule`.
    fn advance(&mut self, now: Time) {
        let n = self.table.len();
        if n == 0 {
            self.next_major_frame = now.after(DEFAULT_TIMESLICE_NS);
        } else if self.version >= Version::new(4, 21) {
            if now >= self.next_major_frame {
                // Stay on the frame grid even when late.
                let rem = now.since(self.next_major_frame) % self.major_frame_ns;
                let start = Time(now.0 - rem);
                self.index = 0;
                self.next_major_frame = start.after(self.major_frame_ns);
                self.next_switch = start.after(self.table[0].runtime_ns);
                self.stat_major_frames += 1;
            }
            while now >= self.next_switch {
                self.index += 1;
                if self.index >= n {
                    break;
                }
                self.next_switch = self.next_switch.after(self.table[self.index].runtime_ns);
            }
        } else if now >= self.next_major_frame {
            // Before 4.21 a new major frame starts "now": the grid drifts.
            self.index = 0;
            self.next_major_frame = now.after(self.major_frame_ns);
            self.next_switch = now.after(self.table[0].runtime_ns);
            self.stat_major_frames += 1;
        } else {
            while now >= self.next_switch && self.index < n {
                self.index += 1;
                // Xen reads the entry past the end here; the overrun is
                // replaced just below, so only real entries matter.
                let extra = self.table.get(self.index).map_or(0, |e| e.runtime_ns);
                self.next_switch = self.next_switch.after(extra);
            }
        }
        if self.index >= n {
            self.next_switch = self.next_major_frame;
        }
    }
}

impl Scheduler for Arinc653 {
    fn name(&self) -> &'static str {
        "arinc653"
    }

    fn init(&mut self, ctx: &mut SchedCtx) {
        self.awake = vec![false; ctx.nvcpus()];
        if let Some((list, major)) = self.configured.take() {
            self.install(ctx, &list, major);
        } else if self.version == Version::new(4, 21) {
            // f2927d8343 starts the default major frame at 10 ms and adds 10 ms
            // per domain-0 VCPU, which leaves a trailing idle frame.
            self.major_frame_ns = DEFAULT_TIMESLICE_NS;
        }
    }

    fn init_domain(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    /// Domain 0's VCPUs join the default table as they are created
    /// (only while no table has been installed).
    fn insert_vcpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if !self.installed && ctx.domain_of(v) == DomId(0) && self.table.len() < MAX_ENTRIES {
            self.table.push(Entry {
                dom: DomId(0),
                vcpu: ctx.vcpu_index(v),
                runtime_ns: DEFAULT_TIMESLICE_NS,
                resolved: Some(v),
            });
            self.major_frame_ns += DEFAULT_TIMESLICE_NS;
        }
        self.resolve(ctx);
    }

    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.awake[v.idx()] = true;
        ctx.tickle(ctx.processor(v));
    }

    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        self.awake[v.idx()] = false;
        let p = ctx.processor(v);
        if ctx.current(p) == Some(v) {
            ctx.tickle(p);
        }
    }

    fn do_schedule(&mut self, ctx: &mut SchedCtx, cpu: PcpuId) -> Decision {
        let now = ctx.now();
        self.advance(now);
        let slot = self.table.get(self.index).and_then(|e| e.resolved);
        let mine = slot.filter(|&v| ctx.processor(v) == cpu);
        let next = mine.filter(|&v| self.awake[v.idx()] && ctx.is_runnable(v));
        if mine.is_some() && next.is_none() {
            self.stat_idle_slots += 1;
        }
        Decision {
            next,
            slice_ns: Some(self.next_switch.since(now)),
            migrated: false,
        }
    }

    /// `a653sched_pick_resource`: stay (every PCPU is in the pool).
    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        ctx.processor(v)
    }

    fn adjust(&mut self, _ctx: &mut SchedCtx, _dom: DomId, _params: &Params) {}

    /// Install a new table (what `a653_sched` does at run time). As in Xen
    /// nobody is tickled: each PCPU starts the new major frame at its next
    /// decision, when its current minor frame ends.
    fn adjust_global(&mut self, ctx: &mut SchedCtx, params: &Params) {
        if let Some((list, major)) = Self::table_of(params) {
            self.install(ctx, &list, major);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("table_entries", self.table.len() as u64),
            ("major_frame_ns", self.major_frame_ns),
            ("major_frames", self.stat_major_frames),
            ("idle_slot_decisions", self.stat_idle_slots),
        ]
    }

    fn dump(&self, ctx: &SchedCtx) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "major_frame={} ns next_major={} index={} next_switch={}",
            self.major_frame_ns, self.next_major_frame.0, self.index, self.next_switch.0
        );
        for (i, e) in self.table.iter().enumerate() {
            let _ = writeln!(
                s,
                "  [{i}] {}.v{} {} ns -> {:?}",
                ctx.domain_name(e.dom),
                e.vcpu,
                e.runtime_ns,
                e.resolved.map(|v| v.0)
            );
        }
        s
    }
}
