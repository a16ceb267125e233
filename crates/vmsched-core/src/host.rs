//! The physical host: PCPU topology and the platform profile (costs).

use crate::cpumask::{CpuMask, MAX_PCPUS};
use crate::error::ScenarioError;
use crate::ids::PcpuId;
use crate::params::{self, Default, ParamKind, ParamScope, ParamSpec, Params};

/// Sockets × cores × threads. PCPU numbers run thread-fastest, so the SMT
/// siblings of a core are adjacent: `pcpu = (socket*cores + core)*threads + thread`.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    sibling: Vec<CpuMask>,
    socket: Vec<CpuMask>,
}

impl Topology {
    /// A host of `sockets × cores × threads` PCPUs.
    pub fn new(sockets: u32, cores_per_socket: u32, threads_per_core: u32) -> Topology {
        let n = (sockets * cores_per_socket * threads_per_core) as usize;
        assert!(
            (1..=MAX_PCPUS).contains(&n),
            "topology size checked by the scenario"
        );
        let mut sibling = Vec::with_capacity(n);
        let mut socket = Vec::with_capacity(n);
        for p in 0..n as u32 {
            let core_first = p - p % threads_per_core;
            let mut sm = CpuMask::empty();
            for t in 0..threads_per_core {
                sm.set(PcpuId(core_first + t));
            }
            sibling.push(sm);
            let per_socket = cores_per_socket * threads_per_core;
            let socket_first = p - p % per_socket;
            let mut km = CpuMask::empty();
            for t in 0..per_socket {
                km.set(PcpuId(socket_first + t));
            }
            socket.push(km);
        }
        Topology {
            sockets,
            cores_per_socket,
            threads_per_core,
            sibling,
            socket,
        }
    }

    /// `n` single-thread cores on one socket (`pcpus = n` in a scenario).
    pub fn flat(n: u32) -> Topology {
        Topology::new(1, n, 1)
    }

    /// Number of PCPUs.
    #[inline]
    pub fn npcpus(&self) -> usize {
        self.sibling.len()
    }

    /// All PCPUs.
    pub fn all(&self) -> CpuMask {
        CpuMask::first_n(self.npcpus())
    }

    /// The SMT threads of `p`'s core, `p` included (Xen's `sibling_mask`).
    #[inline]
    pub fn sibling_mask(&self, p: PcpuId) -> &CpuMask {
        &self.sibling[p.idx()]
    }

    /// All PCPUs of `p`'s socket (Xen's `core_mask`: the package).
    #[inline]
    pub fn socket_mask(&self, p: PcpuId) -> &CpuMask {
        &self.socket[p.idx()]
    }

    /// Socket number of `p`; vmsched models one NUMA node per socket.
    #[inline]
    pub fn socket_of(&self, p: PcpuId) -> u32 {
        p.0 / (self.cores_per_socket * self.threads_per_core)
    }

    /// Global core number of `p`.
    #[inline]
    pub fn core_of(&self, p: PcpuId) -> u32 {
        p.0 / self.threads_per_core
    }
}

/// The costs of the simulated platform. Loaded from a profile (TOML), the same
/// for every scheduler: differences between schedulers come from their
/// algorithms alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Platform {
    /// Profile name.
    pub name: String,
    /// Time a PCPU spends switching from one VCPU to another (ns). The incoming
    /// VCPU's work starts progressing only after it.
    pub ctx_switch_ns: u64,
    /// Delay from a tickle (reschedule IPI) to the target PCPU running its scheduler (ns).
    pub ipi_latency_ns: u64,
}

/// The platform profile's numbers (besides its free-text `name` and `description`).
pub const PROFILE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "ctx_switch_ns",
        unit: "ns",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Cost of switching a PCPU from one VCPU to another.",
    },
    ParamSpec {
        name: "ipi_latency_ns",
        unit: "ns",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: Default::Required,
        scope: ParamScope::Global,
        doc: "Delay from a reschedule IPI to the target PCPU's scheduler running.",
    },
];

/// Built-in profiles: (name, TOML text).
pub const BUILTIN_PROFILES: &[(&str, &str)] =
    &[("default", include_str!("../profiles/default.toml"))];

impl Platform {
    /// Build a platform from a profile table (already parsed TOML/JSON).
    pub fn from_table(
        table: &serde_json::Map<String, serde_json::Value>,
        path: &str,
    ) -> Result<Platform, ScenarioError> {
        // `name`/`description` are free text; validate the numbers only.
        let mut numeric = table.clone();
        let name = match numeric.remove("name") {
            Some(serde_json::Value::String(s)) => s,
            Some(other) => {
                return Err(ScenarioError::new(
                    params::join_path(path, "name"),
                    format!(
                        "{} is not a string; expected the profile's name",
                        params::show(&other)
                    ),
                ))
            }
            None => "custom".into(),
        };
        numeric.remove("description");
        let p: Params = params::validate(PROFILE_PARAMS, &numeric, path, "a platform profile")?;
        Ok(Platform {
            name,
            ctx_switch_ns: p.int("ctx_switch_ns") as u64,
            ipi_latency_ns: p.int("ipi_latency_ns") as u64,
        })
    }

    /// A built-in profile by name.
    pub fn builtin(name: &str, path: &str) -> Result<Platform, ScenarioError> {
        let Some((_, text)) = BUILTIN_PROFILES.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = BUILTIN_PROFILES.iter().map(|(n, _)| *n).collect();
            return Err(ScenarioError::new(
                path,
                format!(
                    "unknown profile \"{name}\"; expected one of {} or a table of costs{}",
                    known.join(", "),
                    crate::error::suggestion(name, known.iter().copied())
                ),
            ));
        };
        let table: serde_json::Map<String, serde_json::Value> =
            toml::from_str(text).expect("built-in profiles are valid TOML");
        Platform::from_table(&table, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_masks() {
        let t = Topology::new(2, 2, 2); // 8 pcpus
        assert_eq!(t.npcpus(), 8);
        assert_eq!(
            t.sibling_mask(PcpuId(3))
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(
            t.socket_mask(PcpuId(5))
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            vec![4, 5, 6, 7]
        );
        assert_eq!(t.socket_of(PcpuId(5)), 1);
        assert_eq!(t.core_of(PcpuId(5)), 2);
    }

    #[test]
    fn builtin_default_profile_loads() {
        let p = Platform::builtin("default", "host.profile").unwrap();
        assert_eq!(p.name, "default");
        assert!(p.ctx_switch_ns > 0);
        assert!(Platform::builtin("defualt", "host.profile")
            .unwrap_err()
            .message
            .contains("did you mean"));
    }
}
