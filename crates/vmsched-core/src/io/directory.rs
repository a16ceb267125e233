//! Addresses across a cluster: which host and which domain a workload's
//! peer is.
//!
//! A single host is a cluster of one. Workloads name their peers by host
//! and domain name; the directory turns the names into an [`Endpoint`]
//! (the host's and the domain's indices), which is what requests carry.

use crate::ids::DomId;

/// A domain anywhere in the simulated system: on this host (`host` is this
/// host's index) or on another host of a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Host index in the cluster (0 for a single host).
    pub host: u32,
    pub dom: DomId,
}

/// The names of every host of a cluster and of their domains, for
/// workloads to find their peers by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directory {
    /// (host name, its domains' names), in host index order.
    pub hosts: Vec<(String, Vec<String>)>,
}

impl Directory {
    /// The domain `dom` of host `host`.
    pub fn find(&self, host: &str, dom: &str) -> Option<Endpoint> {
        let h = self.hosts.iter().position(|(n, _)| n == host)?;
        let d = self.hosts[h].1.iter().position(|n| n == dom)?;
        Some(Endpoint {
            host: h as u32,
            dom: DomId(d as u32),
        })
    }
}
