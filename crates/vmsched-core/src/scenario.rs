//! The typed scenario and its validation.
//!
//! A scenario arrives as a JSON-like tree (parsed from TOML by the Python
//! front end or by [`Scenario::from_toml_str`], or built as Python objects) and
//! is checked completely before anything is simulated. Every error names the
//! field path, the value found and what was expected; unknown keys get a
//! did-you-mean.

use crate::cpumask::{CpuMask, MAX_PCPUS};
use crate::error::{suggestion, ScenarioError};
use crate::host::{Platform, Topology};
use crate::ids::DomId;
use crate::params::{self, join_path, show, Default, ParamKind, ParamScope, ParamSpec, Params};
use crate::sched::{self, SchedulerInfo};
use crate::time::{secs_f64, NS_PER_MS};
use crate::workload;
use serde_json::{Map, Value as Json};

/// `[host]`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSpec {
    pub topology: Topology,
    pub platform: Platform,
}

/// `[scheduler]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedSpec {
    pub name: String,
    /// Global parameters (defaults filled in).
    pub params: Params,
}

/// `[run]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub seed: u64,
    pub sample_ns: u64,
}

/// `[domain.workload]`.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub kind: String,
    pub params: Params,
    /// The cache footprint keys every kind takes (`workload/footprint.rs`).
    pub footprint: workload::footprint::Footprint,
}

/// One `[[domain]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DomainSpec {
    pub name: String,
    pub vcpus: u32,
    pub driver: bool,
    /// Hard affinity (`None` = all PCPUs).
    pub affinity: Option<CpuMask>,
    /// Soft affinity (`None` = all PCPUs).
    pub soft_affinity: Option<CpuMask>,
    /// Per-domain scheduler parameters (defaults filled in).
    pub sched: Params,
    pub workload: WorkloadSpec,
}

/// What a timed action changes.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionWhat {
    /// One domain: its scheduler parameters (the complete new set, or
    /// `None` if the action sets none) and the toolstack operations on it.
    /// Applied in this order: parameters, affinity, hotplug, pause.
    Domain {
        dom: DomId,
        params: Option<Params>,
        ops: DomainOps,
    },
    /// The pool-wide parameters: the complete new set.
    Global { params: Params },
}

/// Toolstack operations on a domain besides its scheduler parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DomainOps {
    /// `xl vcpu-pin DOM all CPUS`: the new hard affinity of every VCPU.
    pub affinity: Option<CpuMask>,
    /// `xl vcpu-set DOM N`: VCPUs `0..N` online, the others offline.
    pub vcpus_online: Option<u32>,
    /// `xl pause DOM` (true) or `xl unpause DOM` (false).
    pub pause: Option<bool>,
}

/// The keys of a domain action that are toolstack operations, not scheduler
/// parameters.
pub const DOMAIN_OP_KEYS: &[&str] = &["pause", "vcpus_online", "affinity"];

/// Most nested toolstack pauses Xen accepts on one domain
/// (`domain_pause_by_systemcontroller` fails with EOVERFLOW at 255).
pub const MAX_TOOLSTACK_PAUSES: u32 = 254;

/// A domain as the toolstack sees it at some instant: what validating the
/// next action on it needs.
#[derive(Clone, Debug, PartialEq)]
pub struct DomainAdmin {
    /// Its scheduler parameters (complete set).
    pub params: Params,
    /// Toolstack pauses not yet undone.
    pub pauses: u32,
    /// VCPUs online (`0..vcpus_online`).
    pub vcpus_online: u32,
}

impl DomainAdmin {
    /// Every domain of `sc` as it is created.
    pub fn initial(sc: &Scenario) -> Vec<DomainAdmin> {
        sc.domains
            .iter()
            .map(|d| DomainAdmin {
                params: d.sched.clone(),
                pauses: 0,
                vcpus_online: d.vcpus,
            })
            .collect()
    }

    /// Record a validated action.
    pub fn apply(&mut self, params: &Option<Params>, ops: &DomainOps) {
        if let Some(p) = params {
            self.params = p.clone();
        }
        if let Some(n) = ops.vcpus_online {
            self.vcpus_online = n;
        }
        match ops.pause {
            Some(true) => self.pauses += 1,
            Some(false) => self.pauses -= 1,
            None => {}
        }
    }
}

/// One `[[action]]`: what `xl` does at `at_s`.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub at_ns: u64,
    pub what: ActionWhat,
}

/// A complete, validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub title: String,
    pub host: HostSpec,
    pub scheduler: SchedSpec,
    pub run: RunSpec,
    pub domains: Vec<DomainSpec>,
    pub actions: Vec<Action>,
    /// The input tree, for echoing into results.
    pub source: Json,
}

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "nothing",
        Json::Bool(_) => "a boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a table",
    }
}

fn as_table<'a>(v: &'a Json, path: &str) -> Result<&'a Map<String, Json>, ScenarioError> {
    v.as_object().ok_or_else(|| {
        err(
            path,
            format!(
                "{} is {}; expected a table ([{path}])",
                show(v),
                type_name(v)
            ),
        )
    })
}

fn check_keys(t: &Map<String, Json>, path: &str, known: &[&str]) -> Result<(), ScenarioError> {
    for k in t.keys() {
        if !known.contains(&k.as_str()) {
            return Err(err(
                join_path(path, k),
                format!(
                    "unknown key '{}'; expected one of {}{}",
                    k.escape_debug(),
                    known.join(", "),
                    suggestion(k, known.iter().copied())
                ),
            ));
        }
    }
    Ok(())
}

/// A spec used only to validate one scalar field of the scenario.
fn field(name: &'static str, unit: &'static str, kind: ParamKind) -> ParamSpec {
    ParamSpec {
        name,
        unit,
        kind,
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "",
    }
}

fn get_int(
    t: &Map<String, Json>,
    path: &str,
    key: &'static str,
    min: i64,
    max: i64,
    unit: &'static str,
) -> Result<Option<i64>, ScenarioError> {
    match t.get(key) {
        None => Ok(None),
        Some(v) => match params::validate_one(
            &field(key, unit, ParamKind::Int { min, max }),
            v,
            &join_path(path, key),
        )? {
            params::Value::Int(i) => Ok(Some(i)),
            _ => unreachable!(),
        },
    }
}

fn get_float(
    t: &Map<String, Json>,
    path: &str,
    key: &'static str,
    min: f64,
    max: f64,
    unit: &'static str,
) -> Result<Option<f64>, ScenarioError> {
    match t.get(key) {
        None => Ok(None),
        Some(v) => match params::validate_one(
            &field(key, unit, ParamKind::Float { min, max }),
            v,
            &join_path(path, key),
        )? {
            params::Value::Float(f) => Ok(Some(f)),
            _ => unreachable!(),
        },
    }
}

fn get_bool(
    t: &Map<String, Json>,
    path: &str,
    key: &'static str,
) -> Result<Option<bool>, ScenarioError> {
    match t.get(key) {
        None => Ok(None),
        Some(Json::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(err(
            join_path(path, key),
            format!("{} is {}; expected true or false", show(v), type_name(v)),
        )),
    }
}

fn get_str<'a>(
    t: &'a Map<String, Json>,
    path: &str,
    key: &str,
) -> Result<Option<&'a str>, ScenarioError> {
    match t.get(key) {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(v) => Err(err(
            join_path(path, key),
            format!("{} is {}; expected a string", show(v), type_name(v)),
        )),
    }
}

/// Parse an affinity: a list of PCPU numbers, or xl's `cpus=` syntax
/// (`"0-3,6"`, `"all"`, with `^N` to exclude).
pub fn parse_affinity(v: &Json, path: &str, npcpus: usize) -> Result<CpuMask, ScenarioError> {
    let mut m = CpuMask::empty();
    let range_err = |what: String| {
        err(
            path,
            format!("{what}; expected PCPU numbers in 0..={} (a list such as [0, 1] or a string such as \"0-3,^2\")", npcpus - 1),
        )
    };
    match v {
        Json::Array(a) => {
            for x in a {
                let Some(i) = x.as_u64() else {
                    return Err(range_err(format!("{} is not a PCPU number", show(x))));
                };
                if i as usize >= npcpus {
                    return Err(range_err(format!(
                        "PCPU {i} does not exist on this {npcpus}-PCPU host"
                    )));
                }
                m.set(crate::ids::PcpuId(i as u32));
            }
        }
        Json::String(s) => {
            for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (neg, body) = match part.strip_prefix('^') {
                    Some(b) => (true, b),
                    None => (false, part),
                };
                let (lo, hi) = if body == "all" {
                    (0, npcpus - 1)
                } else if let Some((a, b)) = body.split_once('-') {
                    let a: usize = a
                        .trim()
                        .parse()
                        .map_err(|_| range_err(format!("\"{part}\" is not a PCPU range")))?;
                    let b: usize = b
                        .trim()
                        .parse()
                        .map_err(|_| range_err(format!("\"{part}\" is not a PCPU range")))?;
                    (a, b)
                } else {
                    let a: usize = body
                        .parse()
                        .map_err(|_| range_err(format!("\"{part}\" is not a PCPU number")))?;
                    (a, a)
                };
                if lo > hi || hi >= npcpus {
                    return Err(range_err(format!(
                        "\"{part}\" is outside this {npcpus}-PCPU host"
                    )));
                }
                for i in lo..=hi {
                    let p = crate::ids::PcpuId(i as u32);
                    if neg {
                        m.clear(p);
                    } else {
                        m.set(p);
                    }
                }
            }
        }
        other => {
            return Err(range_err(format!(
                "{} is {}",
                show(other),
                type_name(other)
            )));
        }
    }
    if m.is_empty() {
        return Err(range_err("the set is empty".into()));
    }
    Ok(m)
}

fn parse_host(v: Option<&Json>) -> Result<HostSpec, ScenarioError> {
    let Some(v) = v else {
        return Err(err(
            "host",
            "is missing; expected a [host] table with pcpus = N or [host.topology]",
        ));
    };
    let t = as_table(v, "host")?;
    check_keys(
        t,
        "host",
        &["pcpus", "topology", "profile", "nic", "disk", "memory_mb"],
    )?;
    // Not simulated: the total xentop's MEM(%) is relative to (`vmsched top`).
    get_int(t, "host", "memory_mb", 1, MAX_MEMORY_MB, "MB")?;
    let max = MAX_PCPUS as i64;
    let topology = match (t.get("pcpus"), t.get("topology")) {
        (Some(_), Some(_)) => {
            return Err(err(
                "host.pcpus",
                "is given together with [host.topology]; expected one or the other",
            ))
        }
        (Some(_), None) => Topology::flat(get_int(t, "host", "pcpus", 1, max, "")?.unwrap() as u32),
        (None, Some(tv)) => {
            let tt = as_table(tv, "host.topology")?;
            check_keys(tt, "host.topology", &["sockets", "cores", "threads"])?;
            let p = "host.topology";
            let sockets = get_int(tt, p, "sockets", 1, 64, "")?.unwrap_or(1);
            let cores = get_int(tt, p, "cores", 1, max, "")?.ok_or_else(|| {
                err(
                    "host.topology.cores",
                    "is missing; expected the number of cores per socket",
                )
            })?;
            let threads = get_int(tt, p, "threads", 1, 8, "")?.unwrap_or(1);
            let n = sockets * cores * threads;
            if n > max {
                return Err(err(p, format!("{sockets} sockets × {cores} cores × {threads} threads = {n} PCPUs; expected at most {max}")));
            }
            Topology::new(sockets as u32, cores as u32, threads as u32)
        }
        (None, None) => {
            return Err(err(
                "host.pcpus",
                "is missing; expected pcpus = N or a [host.topology] table",
            ))
        }
    };
    let mut overrides = Vec::new();
    for dev in ["nic", "disk"] {
        if let Some(v) = t.get(dev) {
            overrides.push((dev, as_table(v, &format!("host.{dev}"))?));
        }
    }
    let platform = match t.get("profile") {
        None => Platform::with_overrides(
            "default".into(),
            Platform::builtin_table("default", "host.profile")?,
            &overrides,
            "host.profile",
        )?,
        Some(Json::String(s)) => Platform::with_overrides(
            s.clone(),
            Platform::builtin_table(s, "host.profile")?,
            &overrides,
            "host.profile",
        )?,
        Some(Json::Object(o)) => {
            let name = match o.get("name") {
                Some(Json::String(n)) => n.clone(),
                _ => "custom".into(),
            };
            // Checks the name and the numbers as given, then applies overrides.
            Platform::from_table(o, "host.profile")?;
            Platform::with_overrides(name, o.clone(), &overrides, "host.profile")?
        }
        Some(other) => {
            return Err(err(
                "host.profile",
                format!(
                    "{} is {}; expected a profile name or a table of costs",
                    show(other),
                    type_name(other)
                ),
            ))
        }
    };
    Ok(HostSpec { topology, platform })
}

fn parse_run(v: Option<&Json>) -> Result<RunSpec, ScenarioError> {
    let empty = Map::new();
    let t = match v {
        None => &empty,
        Some(v) => as_table(v, "run")?,
    };
    check_keys(t, "run", &["duration_s", "warmup_s", "seed", "sample_ms"])?;
    let duration = get_float(t, "run", "duration_s", 0.001, 1e7, "s")?.unwrap_or(60.0);
    let warmup = get_float(t, "run", "warmup_s", 0.0, 1e7, "s")?.unwrap_or(0.0);
    if warmup >= duration {
        return Err(err("run.warmup_s", format!("{warmup} is not less than run.duration_s ({duration}); expected a warm-up shorter than the run")));
    }
    let seed = get_int(t, "run", "seed", 0, i64::MAX, "")?.unwrap_or(1) as u64;
    let sample_ms = get_float(t, "run", "sample_ms", 0.1, 1e9, "ms")?.unwrap_or(1000.0);
    Ok(RunSpec {
        duration_ns: secs_f64(duration),
        warmup_ns: secs_f64(warmup),
        seed,
        sample_ns: ((sample_ms * NS_PER_MS as f64).round() as u64).max(1),
    })
}

fn parse_scheduler(v: Option<&Json>) -> Result<(&'static SchedulerInfo, Params), ScenarioError> {
    let Some(v) = v else {
        return Err(err("scheduler", "is missing; expected a [scheduler] table with name = \"credit\" (or another scheduler)"));
    };
    let t = as_table(v, "scheduler")?;
    let known: Vec<&str> = sched::all().iter().map(|s| s.name).collect();
    let name = get_str(t, "scheduler", "name")?.ok_or_else(|| {
        err(
            "scheduler.name",
            format!("is missing; expected one of {}", known.join(", ")),
        )
    })?;
    let info = sched::find(name).ok_or_else(|| {
        err(
            "scheduler.name",
            format!(
                "unknown scheduler \"{}\"; expected one of {}{}",
                name.escape_debug(),
                known.join(", "),
                suggestion(name, known.iter().copied())
            ),
        )
    })?;
    let mut rest = t.clone();
    rest.remove("name");
    let globals = validate_sched_params(info, ParamScope::Global, &rest, "scheduler")?;
    (info.check_global)(&globals, "scheduler")?;
    Ok((info, globals))
}

/// Validate scheduler parameters of one scope; a parameter of the other scope
/// or of another scheduler gets a message saying where it belongs.
fn validate_sched_params(
    info: &SchedulerInfo,
    scope: ParamScope,
    t: &Map<String, Json>,
    path: &str,
) -> Result<Params, ScenarioError> {
    let specs = info.params_of(scope);
    for k in t.keys() {
        if specs.iter().any(|s| s.name == k) {
            continue;
        }
        let p = join_path(path, k);
        if info.params.iter().any(|s| s.name == k) {
            let place = match scope {
                ParamScope::Global => "per domain, in [domain.sched]",
                _ => "pool-wide, in [scheduler]",
            };
            return Err(err(
                p,
                format!("'{k}' is a {} parameter set {place}", info.name),
            ));
        }
        if let Some(other) = sched::all()
            .into_iter()
            .find(|o| o.name != info.name && o.params.iter().any(|s| s.name == k))
        {
            return Err(err(
                p,
                format!(
                    "'{k}' belongs to the {} scheduler, not {}; {} takes {}",
                    other.name,
                    info.name,
                    info.name,
                    names(&specs)
                ),
            ));
        }
    }
    params::validate(&specs, t, path, &format!("the {} scheduler", info.name))
}

fn names(specs: &[ParamSpec]) -> String {
    if specs.is_empty() {
        "no parameters here".into()
    } else {
        specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
    }
}

const DOMAIN_KEYS: &[&str] = &[
    "name",
    "vcpus",
    "weight",
    "cap",
    "driver",
    "affinity",
    "soft_affinity",
    "sched",
    "workload",
    "memory_mb",
];

/// Most memory a domain or host may be given (`memory_mb`, 1 PiB): far
/// beyond any host, small enough that the kilobytes xentop shows fit in u64.
const MAX_MEMORY_MB: i64 = 1 << 30;

fn parse_domain(
    v: &Json,
    i: usize,
    npcpus: usize,
    info: &SchedulerInfo,
    globals: &Params,
) -> Result<DomainSpec, ScenarioError> {
    let path = format!("domain[{i}]");
    let t = as_table(v, &path)?;
    check_keys(t, &path, DOMAIN_KEYS)?;
    let name = get_str(t, &path, "name")?.ok_or_else(|| {
        err(
            join_path(&path, "name"),
            "is missing; expected a name such as \"vm1\"",
        )
    })?;
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(err(
            join_path(&path, "name"),
            format!("\"{name}\" is not allowed; expected a non-empty name without spaces"),
        ));
    }
    let vcpus = get_int(t, &path, "vcpus", 1, MAX_PCPUS as i64, "")?.unwrap_or(1) as u32;
    // The domain's memory is not simulated; it is what `vmsched top` shows
    // in xentop's MEM(k) and MAXMEM(k) columns.
    get_int(t, &path, "memory_mb", 0, MAX_MEMORY_MB, "MB")?;
    let driver = get_bool(t, &path, "driver")?.unwrap_or(name == "dom0" || name == "Domain-0");
    let affinity = t
        .get("affinity")
        .map(|a| parse_affinity(a, &join_path(&path, "affinity"), npcpus))
        .transpose()?;
    let soft_affinity = t
        .get("soft_affinity")
        .map(|a| parse_affinity(a, &join_path(&path, "soft_affinity"), npcpus))
        .transpose()?;
    // weight/cap at the domain level are shorthand for [domain.sched].
    let sched_path = join_path(&path, "sched");
    let mut sched_table = match t.get("sched") {
        None => Map::new(),
        Some(s) => as_table(s, &sched_path)?.clone(),
    };
    for key in ["weight", "cap"] {
        if let Some(val) = t.get(key) {
            if sched_table.contains_key(key) {
                return Err(err(
                    join_path(&path, key),
                    format!("is given both here and in [domain.sched]; expected one {key}"),
                ));
            }
            if !info
                .params
                .iter()
                .any(|s| s.name == key && s.scope == ParamScope::Domain)
            {
                return Err(err(
                    join_path(&path, key),
                    format!(
                        "the {} scheduler has no per-domain '{key}'; it takes {}",
                        info.name,
                        names(&info.params_of(ParamScope::Domain))
                    ),
                ));
            }
            sched_table.insert(key.to_string(), val.clone());
        }
    }
    let sched = validate_sched_params(info, ParamScope::Domain, &sched_table, &sched_path)?;
    (info.check_domain)(globals, &sched, &sched_path)?;
    let wpath = join_path(&path, "workload");
    let workload = match t.get("workload") {
        None => return Err(err(wpath, "is missing; expected a [domain.workload] table with kind = \"cpu-hog\" (or another workload)")),
        Some(w) => parse_workload(w, &wpath)?,
    };
    Ok(DomainSpec {
        name: name.to_string(),
        vcpus,
        driver,
        affinity,
        soft_affinity,
        sched,
        workload,
    })
}

fn parse_workload(v: &Json, path: &str) -> Result<WorkloadSpec, ScenarioError> {
    let t = as_table(v, path)?;
    let known: Vec<&str> = workload::registry().iter().map(|w| w.kind).collect();
    let kind = get_str(t, path, "kind")?.ok_or_else(|| {
        err(
            join_path(path, "kind"),
            format!("is missing; expected one of {}", known.join(", ")),
        )
    })?;
    let info = workload::find(kind).ok_or_else(|| {
        err(
            join_path(path, "kind"),
            format!(
                "unknown workload \"{}\"; expected one of {}{}",
                kind.escape_debug(),
                known.join(", "),
                suggestion(kind, known.iter().copied())
            ),
        )
    })?;
    let mut rest = t.clone();
    rest.remove("kind");
    let footprint = workload::footprint::take(&mut rest, path)?;
    let params = params::validate(info.params, &rest, path, &format!("the {kind} workload"))?;
    (info.check)(&params, path)?;
    Ok(WorkloadSpec {
        kind: kind.to_string(),
        params,
        footprint,
    })
}

/// Resolve a run-time change of a domain's scheduler parameters: the domain,
/// and its complete new parameter set.
pub fn domain_adjustment(
    sc: &Scenario,
    current: &[Params],
    dom_name: &str,
    changes: &Map<String, Json>,
    path: &str,
) -> Result<(DomId, Params), ScenarioError> {
    let info = sched::find(&sc.scheduler.name).expect("validated");
    let Some(d) = sc.domains.iter().position(|d| d.name == dom_name) else {
        let known: Vec<&str> = sc.domains.iter().map(|d| d.name.as_str()).collect();
        return Err(err(
            join_path(path, "domain"),
            format!(
                "unknown domain \"{dom_name}\"; expected one of {}{}",
                known.join(", "),
                suggestion(dom_name, known.iter().copied())
            ),
        ));
    };
    let specs = info.params_of(ParamScope::Domain);
    let checked = validate_sched_params(info, ParamScope::Domain, changes, path)?;
    let mut new = current[d].clone();
    for (k, _) in changes {
        let spec = specs.iter().find(|s| s.name == k).expect("validated");
        new.set(
            spec.name,
            checked.iter().find(|(n, _)| n == k).unwrap().1.clone(),
        );
    }
    (info.check_domain)(&sc.scheduler.params, &new, path)?;
    Ok((DomId(d as u32), new))
}

/// Resolve and validate one action on domain `dom_name` (scheduler
/// parameters and toolstack operations together), given every domain's
/// state just before it. `path` locates the action (`action[3]`).
pub fn domain_action(
    sc: &Scenario,
    state: &[DomainAdmin],
    dom_name: &str,
    changes: &Map<String, Json>,
    path: &str,
) -> Result<(DomId, Option<Params>, DomainOps), ScenarioError> {
    let info = sched::find(&sc.scheduler.name).expect("validated");
    let Some(d) = sc.domains.iter().position(|d| d.name == dom_name) else {
        let known: Vec<&str> = sc.domains.iter().map(|d| d.name.as_str()).collect();
        return Err(err(
            join_path(path, "domain"),
            format!(
                "unknown domain \"{dom_name}\"; expected one of {}{}",
                known.join(", "),
                suggestion(dom_name, known.iter().copied())
            ),
        ));
    };
    let mut sched_changes = Map::new();
    let mut op_changes = Map::new();
    for (k, v) in changes {
        if DOMAIN_OP_KEYS.contains(&k.as_str()) {
            op_changes.insert(k.clone(), v.clone());
        } else if info.params.iter().any(|s| s.name == k)
            || sched::all()
                .into_iter()
                .any(|o| o.params.iter().any(|s| s.name == k))
        {
            // Scheduler parameters, of this scope or not: validation below
            // says where a misplaced one belongs.
            sched_changes.insert(k.clone(), v.clone());
        } else {
            let domain_params = info.params_of(ParamScope::Domain);
            let mut known: Vec<&str> = vec!["at_s", "domain"];
            known.extend(DOMAIN_OP_KEYS);
            known.extend(domain_params.iter().map(|s| s.name));
            return Err(err(
                join_path(path, k),
                format!(
                    "unknown key '{k}'; expected at_s, domain, {} or a per-domain parameter of the {} scheduler ({}){}",
                    DOMAIN_OP_KEYS.join(", "),
                    info.name,
                    if domain_params.is_empty() {
                        "it has none".to_string()
                    } else {
                        names(&domain_params)
                    },
                    suggestion(k, known.iter().copied())
                ),
            ));
        }
    }
    let params = if sched_changes.is_empty() {
        None
    } else {
        let current: Vec<Params> = state.iter().map(|s| s.params.clone()).collect();
        Some(domain_adjustment(sc, &current, dom_name, &sched_changes, path)?.1)
    };
    let spec = &sc.domains[d];
    let now = &state[d];
    let mut ops = DomainOps::default();
    if let Some(a) = op_changes.get("affinity") {
        ops.affinity = Some(parse_affinity(
            a,
            &join_path(path, "affinity"),
            sc.host.topology.npcpus(),
        )?);
    }
    if let Some(v) = op_changes.get("vcpus_online") {
        let p = join_path(path, "vcpus_online");
        let expected = format!(
            "expected 1..={n} ({name} has {n} VCPU{s}; xl vcpu-set can neither exceed that nor take the last VCPU down)",
            n = spec.vcpus,
            name = spec.name,
            s = if spec.vcpus == 1 { "" } else { "s" }
        );
        let n = match v.as_i64() {
            Some(n) if v.is_i64() || v.is_u64() => n,
            _ => {
                return Err(err(
                    p,
                    format!("{} is {}; {expected}", show(v), type_name(v)),
                ))
            }
        };
        if n < 1 || n > i64::from(spec.vcpus) {
            return Err(err(p, format!("{n} is out of range; {expected}")));
        }
        ops.vcpus_online = Some(n as u32);
    }
    if let Some(v) = op_changes.get("pause") {
        let p = join_path(path, "pause");
        match v {
            Json::Bool(true) if now.pauses >= MAX_TOOLSTACK_PAUSES => {
                return Err(err(
                    p,
                    format!(
                        "true would pause {} a {}th time; expected at most {MAX_TOOLSTACK_PAUSES} nested pauses (Xen refuses more with EOVERFLOW)",
                        spec.name,
                        MAX_TOOLSTACK_PAUSES + 1
                    ),
                ))
            }
            Json::Bool(false) if now.pauses == 0 => {
                return Err(err(
                    p,
                    format!(
                        "false (xl unpause) but {} is not paused then; expected an earlier action with pause = true on it (Xen refuses to unpause a domain the toolstack has not paused)",
                        spec.name
                    ),
                ))
            }
            Json::Bool(b) => ops.pause = Some(*b),
            other => {
                return Err(err(
                    p,
                    format!(
                        "{} is {}; expected true (xl pause) or false (xl unpause)",
                        show(other),
                        type_name(other)
                    ),
                ))
            }
        }
    }
    (info.check_domain_ops)(&ops, path)?;
    Ok((DomId(d as u32), params, ops))
}

fn parse_actions(
    v: Option<&Json>,
    sc: &Scenario,
    info: &SchedulerInfo,
) -> Result<Vec<Action>, ScenarioError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let arr = v.as_array().ok_or_else(|| {
        err(
            "action",
            format!(
                "{} is {}; expected a list of [[action]] tables",
                show(v),
                type_name(v)
            ),
        )
    })?;
    let mut current = DomainAdmin::initial(sc);
    let mut global = sc.scheduler.params.clone();
    let mut out = Vec::new();
    let mut last_at = 0u64;
    for (i, a) in arr.iter().enumerate() {
        let path = format!("action[{i}]");
        let t = as_table(a, &path)?;
        let at = get_float(t, &path, "at_s", 0.0, 1e7, "s")?.ok_or_else(|| {
            err(
                join_path(&path, "at_s"),
                "is missing; expected the time of the action in seconds",
            )
        })?;
        let at_ns = secs_f64(at);
        if at_ns >= sc.run.duration_ns {
            return Err(err(
                join_path(&path, "at_s"),
                format!("{at} is not within the run; expected less than run.duration_s"),
            ));
        }
        if at_ns < last_at {
            return Err(err(
                join_path(&path, "at_s"),
                format!(
                    "{at} is earlier than the action before it; expected actions in time order"
                ),
            ));
        }
        last_at = at_ns;
        let mut changes = t.clone();
        changes.remove("at_s");
        let dom = changes.remove("domain");
        if changes.is_empty() {
            return Err(err(
                &path,
                "changes nothing; expected at least one parameter to set, or pause, vcpus_online or affinity with a domain",
            ));
        }
        let what = match dom {
            Some(Json::String(name)) => {
                let (dom, params, ops) = domain_action(sc, &current, &name, &changes, &path)?;
                current[dom.idx()].apply(&params, &ops);
                ActionWhat::Domain { dom, params, ops }
            }
            Some(other) => {
                return Err(err(
                    join_path(&path, "domain"),
                    format!(
                        "{} is {}; expected a domain name",
                        show(&other),
                        type_name(&other)
                    ),
                ));
            }
            None => {
                if let Some(k) = DOMAIN_OP_KEYS.iter().find(|k| changes.contains_key(**k)) {
                    return Err(err(
                        join_path(&path, k),
                        format!(
                            "acts on one domain ({}), but this action has no domain; expected domain = \"NAME\" in the same action",
                            match *k {
                                "pause" => "xl pause / xl unpause DOMAIN",
                                "vcpus_online" => "xl vcpu-set DOMAIN N",
                                _ => "xl vcpu-pin DOMAIN all CPUS",
                            }
                        ),
                    ));
                }
                let checked = validate_sched_params(info, ParamScope::Global, &changes, &path)?;
                for (k, _) in &changes {
                    let (n, v) = checked.iter().find(|(n, _)| n == k).unwrap();
                    global.set(n, v.clone());
                }
                (info.check_global)(&global, &path)?;
                ActionWhat::Global {
                    params: global.clone(),
                }
            }
        };
        out.push(Action { at_ns, what });
    }
    Ok(out)
}

impl Scenario {
    /// Validate a scenario tree.
    pub fn from_json(v: &Json) -> Result<Scenario, ScenarioError> {
        Scenario::from_json_in(v, None)
    }

    /// Validate one host's scenario tree; `cluster` is the cluster's
    /// directory and this host's name when the host is part of one (its
    /// workloads may then name other hosts' domains).
    pub fn from_json_in(
        v: &Json,
        cluster: Option<(&crate::io::Directory, &str)>,
    ) -> Result<Scenario, ScenarioError> {
        let t = as_table(v, "")?;
        check_keys(
            t,
            "",
            &[
                "title",
                "description",
                "host",
                "scheduler",
                "run",
                "domain",
                "action",
            ],
        )?;
        let title = get_str(t, "", "title")?.unwrap_or("").to_string();
        get_str(t, "", "description")?;
        let host = parse_host(t.get("host"))?;
        let (info, globals) = parse_scheduler(t.get("scheduler"))?;
        let run = parse_run(t.get("run"))?;
        let doms = match t.get("domain") {
            None => {
                return Err(err(
                    "domain",
                    "is missing; expected at least one [[domain]]",
                ))
            }
            Some(Json::Array(a)) if a.is_empty() => {
                return Err(err("domain", "is empty; expected at least one [[domain]]"))
            }
            Some(Json::Array(a)) => a,
            Some(other) => {
                return Err(err(
                    "domain",
                    format!(
                        "{} is {}; expected a list of [[domain]] tables",
                        show(other),
                        type_name(other)
                    ),
                ))
            }
        };
        let npcpus = host.topology.npcpus();
        let mut domains = Vec::with_capacity(doms.len());
        for (i, d) in doms.iter().enumerate() {
            let spec = parse_domain(d, i, npcpus, info, &globals)?;
            if domains.iter().any(|o: &DomainSpec| o.name == spec.name) {
                return Err(err(
                    format!("domain[{i}].name"),
                    format!(
                        "\"{}\" is used by an earlier domain; expected unique names",
                        spec.name
                    ),
                ));
            }
            domains.push(spec);
        }
        if !domains.iter().any(|d| d.driver) {
            if let Some((i, d)) = domains
                .iter()
                .enumerate()
                .find(|(_, d)| workload::find(&d.workload.kind).is_some_and(|w| w.io))
            {
                return Err(err(
                    format!("domain[{i}].workload.kind"),
                    format!(
                        "\"{}\" does I/O, which passes through a driver domain, but no domain is one; \
                         expected a domain named dom0 or one with driver = true",
                        d.workload.kind
                    ),
                ));
            }
        }
        match cluster {
            None => {
                let names: Vec<String> = domains.iter().map(|d| d.name.clone()).collect();
                let dir = crate::io::Directory {
                    hosts: vec![(String::new(), names)],
                };
                check_peers(&domains, &dir, None, "")?;
            }
            Some((dir, me)) => check_peers(&domains, dir, Some(me), "")?,
        }
        let total_vcpus: u64 = domains.iter().map(|d| u64::from(d.vcpus)).sum();
        if total_vcpus > 1 << 20 {
            return Err(err(
                "domain",
                format!("{total_vcpus} VCPUs in all; expected at most {}", 1 << 20),
            ));
        }
        let mut sc = Scenario {
            title,
            host,
            scheduler: SchedSpec {
                name: info.name.to_string(),
                params: globals,
            },
            run,
            domains,
            actions: Vec::new(),
            source: v.clone(),
        };
        sc.actions = parse_actions(t.get("action"), &sc, info)?;
        sched::check_scenario(&sc)?;
        Ok(sc)
    }

    /// Parse and validate TOML text (Rust users and benchmarks; the Python
    /// front end parses TOML itself to report syntax errors with their line).
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_json(&json_from_toml(text)?)
    }
}

/// The deepest nesting of tables and lists a scenario may have (a real one
/// is five levels deep; the Python front end applies the same limit).
pub const MAX_DEPTH: usize = 64;

/// Scenario or profile TOML text as the JSON tree validation reads, refusing
/// at their path what JSON cannot carry: NaN and infinities, TOML dates and
/// times, nesting deeper than [`MAX_DEPTH`]. A syntax error is one line.
pub fn json_from_toml(text: &str) -> Result<Json, ScenarioError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let msg = e.message().replace(['\n', '\r'], " ");
        let at = e
            .span()
            .map(|r| {
                let line = text[..r.start.min(text.len())].matches('\n').count() + 1;
                format!(" (at line {line})")
            })
            .unwrap_or_default();
        err("", format!("TOML syntax error: {msg}{at}"))
    })?;
    toml_to_json(&toml::Value::Table(table), "", 0)
}

fn toml_to_json(v: &toml::Value, path: &str, depth: usize) -> Result<Json, ScenarioError> {
    use toml::Value as T;
    if depth > MAX_DEPTH {
        return Err(err(
            path,
            format!("is nested more than {MAX_DEPTH} tables or lists deep; expected at most {MAX_DEPTH} levels"),
        ));
    }
    Ok(match v {
        T::String(s) => Json::String(s.clone()),
        T::Integer(i) => Json::from(*i),
        T::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None => {
                return Err(err(
                    path,
                    format!("{f} is not a finite number; expected a finite number"),
                ))
            }
        },
        T::Boolean(b) => Json::Bool(*b),
        T::Datetime(d) => {
            return Err(err(
                path,
                format!(
                    "{d} is a TOML date or time; expected a string, number, boolean, list or table"
                ),
            ))
        }
        T::Array(a) => Json::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| toml_to_json(x, &format!("{path}[{i}]"), depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        T::Table(t) => Json::Object(
            t.iter()
                .map(|(k, x)| Ok((k.clone(), toml_to_json(x, &join_path(path, k), depth + 1)?)))
                .collect::<Result<_, ScenarioError>>()?,
        ),
    })
}

/// Check that every peer the domains' workloads name exists: on this host
/// (`host = None` in a peer reference) or on a host of `dir` (a cluster;
/// `this_host` is the name of the host these domains are on, `None` outside
/// a cluster). `prefix` is prepended to error paths (e.g. `host[1].`).
pub fn check_peers(
    domains: &[DomainSpec],
    dir: &crate::io::Directory,
    this_host: Option<&str>,
    prefix: &str,
) -> Result<(), ScenarioError> {
    let local: Vec<&str> = domains.iter().map(|d| d.name.as_str()).collect();
    for (i, d) in domains.iter().enumerate() {
        let Some(info) = workload::find(&d.workload.kind) else {
            continue;
        };
        for (param, host, dom) in (info.peers)(&d.workload.params) {
            let path = format!("{prefix}domain[{i}].workload.{param}");
            let candidates: Vec<&str> = match (&host, this_host) {
                (None, _) => local.clone(),
                (Some(h), None) => {
                    return Err(err(
                        path,
                        format!(
                            "names host \"{h}\", but this scenario has one host; \
                             expected a domain of this host, or a cluster scenario with [[host]] tables"
                        ),
                    ))
                }
                (Some(h), Some(_)) => match dir.hosts.iter().find(|(n, _)| n == h) {
                    Some((_, doms)) => doms.iter().map(|s| s.as_str()).collect(),
                    None => {
                        let hosts: Vec<&str> = dir.hosts.iter().map(|(n, _)| n.as_str()).collect();
                        return Err(err(
                            path,
                            format!(
                                "names host \"{h}\", which does not exist; expected one of {}{}",
                                hosts.join(", "),
                                suggestion(h, hosts.iter().copied())
                            ),
                        ));
                    }
                },
            };
            let same_host = host.is_none() || host.as_deref() == this_host;
            if same_host && dom == d.name {
                return Err(err(
                    path,
                    format!("\"{dom}\" is the domain itself; expected another domain"),
                ));
            }
            if !candidates.contains(&dom.as_str()) {
                return Err(err(
                    path,
                    format!(
                        "\"{dom}\" is not a domain{}; expected one of {}{}",
                        host.as_ref()
                            .map(|h| format!(" of host {h}"))
                            .unwrap_or_default(),
                        candidates.join(", "),
                        suggestion(&dom, candidates.iter().copied())
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
        [host]
        pcpus = 2
        [scheduler]
        name = "credit"
        [run]
        duration_s = 1
        [[domain]]
        name = "vm1"
        weight = 512
        [domain.workload]
        kind = "cpu-hog"
    "#;

    #[test]
    fn valid_scenario_parses() {
        let s = Scenario::from_toml_str(OK).unwrap();
        assert_eq!(s.domains[0].sched.int("weight"), 512);
        assert_eq!(s.host.topology.npcpus(), 2);
        assert_eq!(s.run.sample_ns, 1_000_000_000);
    }

    #[test]
    fn unknown_scheduler_lists_known_ones() {
        let e = Scenario::from_toml_str(&OK.replace("\"credit\"", "\"credti\"")).unwrap_err();
        assert_eq!(e.path, "scheduler.name");
        assert!(e.message.contains("did you mean 'credit'"), "{e}");
    }

    #[test]
    fn unknown_top_level_key_suggests() {
        let e = Scenario::from_toml_str(&format!("{OK}\n[hosts]\nx=1")).unwrap_err();
        assert_eq!(e.path, "hosts");
        assert!(e.message.contains("did you mean 'host'"), "{e}");
    }

    #[test]
    fn out_of_range_weight() {
        let e = Scenario::from_toml_str(&OK.replace("weight = 512", "weight = 0")).unwrap_err();
        assert_eq!(e.path, "domain[0].sched.weight");
        assert!(e.message.contains("0 is out of range"), "{e}");
    }

    #[test]
    fn global_param_in_domain_is_explained() {
        // A pool-wide parameter written among the domain's own keys. (This
        // test used to insert it before [run], i.e. into [scheduler], where it
        // is valid, so the test could not pass.)
        let e = Scenario::from_toml_str(&OK.replace("weight = 512", "weight = 512\ntslice_ms = 5"))
            .unwrap_err();
        assert_eq!(e.path, "domain[0].tslice_ms");
        assert!(e.message.contains("unknown key 'tslice_ms'"), "{e}");
        let e = Scenario::from_toml_str(&OK.replace(
            "weight = 512",
            "weight = 512\n[domain.sched]\ntslice_ms = 3",
        ))
        .unwrap_err();
        assert!(e.message.contains("pool-wide, in [scheduler]"), "{e}");
    }

    #[test]
    fn affinity_syntax() {
        let m = parse_affinity(&Json::from("0-3,^2"), "a", 8).unwrap();
        assert_eq!(m.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 1, 3]);
        assert!(parse_affinity(&Json::from("9"), "a", 8).is_err());
        assert!(parse_affinity(&serde_json::json!([]), "a", 8).is_err());
    }
}
