//! Domains and VCPUs: run states with exact accounting, and the guest work model.
//!
//! A guest is modelled by the work it asks its VCPUs to do. Each domain has a
//! guest run queue of [`WorkItem`]s; a VCPU holds at most one item at a time
//! (the guest thread it is running). A VCPU is runnable exactly when its guest
//! has work for it; when the guest has none the VCPU blocks (the guest halts),
//! and it wakes when work arrives. Work preempted by the hypervisor keeps its
//! remaining demand and resumes when the VCPU runs again.

use crate::ids::{DomId, PcpuId};
use crate::metrics::LatencyHistogram;
use crate::time::Time;
use std::collections::VecDeque;

/// CPU demand that never completes (a CPU-bound loop).
pub const FOREVER: u64 = u64::MAX;

/// Tag bit of urgent (interrupt-context) work items.
pub const URGENT: u32 = 1 << 31;
/// Tag bit of the I/O backends' work items (the engine's own, never a workload's).
pub const BACKEND: u32 = 1 << 30;
/// Tag bits a workload may use.
pub const TAG_MASK: u32 = BACKEND - 1;

/// A piece of guest work: CPU demand plus a tag the workload uses to know
/// what to do when it completes (its continuation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItem {
    /// CPU time still needed, ns ([`FOREVER`] for a loop that never ends).
    pub remaining_ns: u64,
    /// Workload-defined continuation tag.
    pub tag: u32,
}

/// The state a VCPU is in; every nanosecond is accounted to exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RunState {
    /// On a PCPU.
    Running = 0,
    /// Ready and waiting for a PCPU (xentop's "waited", VMware's "CPU ready").
    Runnable = 1,
    /// Halted: its guest has nothing for it to do.
    Blocked = 2,
    /// Paused (administratively, or parked by a cap) or offline.
    Offline = 3,
}

/// One virtual CPU.
#[derive(Clone, Debug)]
pub struct Vcpu {
    /// Owning domain.
    pub dom: DomId,
    /// Number within the domain (`vcpu` in output, `<domain>.v<n>` in traces).
    pub index: u32,
    /// The PCPU it runs on, or last ran on, or is queued for (Xen's `processor`).
    pub processor: PcpuId,
    /// Index of its hard-affinity mask in the world's mask table.
    pub hard_mask: u16,
    /// Index of its soft-affinity mask in the world's mask table.
    pub soft_mask: u16,
    /// The PCPU it is running on right now.
    pub running_on: Option<PcpuId>,
    /// Halted by its guest (no work).
    pub blocked: bool,
    /// The VCPU's own pause count (Xen's `v->pause_count`: parking by a
    /// scheduler's cap). Runnable only at 0.
    pub pause_count: u16,
    /// Its domain's pause count (Xen's `d->pause_count`: `xl pause`, one
    /// count per toolstack pause, the same on every VCPU of the domain).
    /// Kept apart from `pause_count`, as in Xen, so that an administrator's
    /// pause and a scheduler's parking never lift each other. Runnable only at 0.
    pub domain_pause: u16,
    /// Being migrated (Xen's `_VPF_migrating`): not runnable until moved.
    pub migrating: bool,
    /// Online (VCPU hotplug, `xl vcpu-set`; Xen's `_VPF_down` cleared). An
    /// offline VCPU stays known to the scheduler (inserted), as in Xen.
    pub online: bool,
    /// The guest work it holds.
    pub item: Option<WorkItem>,
    /// Ordinary work interrupted by urgent (interrupt) work, resumed after it.
    pub stashed: Option<WorkItem>,
    /// Urgent work (interrupt and softirq context, or kernel threads: I/O
    /// backends and front ends) for the event channels bound to this VCPU,
    /// taken ahead of the guest's run queue.
    pub irq: VecDeque<WorkItem>,
    /// A guest scheduler tick is armed to let that urgent work preempt.
    pub tick_armed: bool,
    /// CPU time it spent on urgent and on ordinary work (the guest
    /// scheduler's view of its kernel threads against its processes).
    pub urgent_ran_ns: u64,
    pub ordinary_ran_ns: u64,
    /// Work progresses from this instant (switch-in time plus switch cost).
    pub progress_from: Time,
    /// Generation of its pending work-completion event.
    pub work_gen: u32,
    /// Current run state and when it was entered.
    pub state: RunState,
    pub state_since: Time,
    /// Accumulated ns per [`RunState`] (indexed by `RunState as usize`).
    pub state_ns: [u64; 4],
    /// Times switched onto a PCPU.
    pub context_switches: u64,
    /// Times it started running on a PCPU other than the one it last ran on.
    pub migrations: u64,
    /// The PCPU it last ran on.
    pub last_ran_on: Option<PcpuId>,
    /// When it last woke from blocked, until it next runs.
    pub woke_at: Option<Time>,
    /// Wake-to-run latencies.
    pub wake_latency: LatencyHistogram,
}

impl Vcpu {
    /// May a scheduler run it? (Xen's `vcpu_runnable`.)
    #[inline]
    pub fn runnable(&self) -> bool {
        !self.blocked
            && self.pause_count == 0
            && self.domain_pause == 0
            && !self.migrating
            && self.online
    }

    /// The run state its flags imply. As Xen's runstate: a halted VCPU is
    /// Blocked even while paused (blocked takes precedence over paused), an
    /// offline one is Offline whatever its guest did.
    #[inline]
    pub fn implied_state(&self) -> RunState {
        if self.running_on.is_some() {
            RunState::Running
        } else {
            self.off_cpu_state()
        }
    }

    /// The run state its flags imply once it is off its PCPU: what a
    /// running VCPU becomes when it is descheduled now.
    #[inline]
    pub fn off_cpu_state(&self) -> RunState {
        if self.blocked && self.online {
            RunState::Blocked
        } else if self.pause_count > 0 || self.domain_pause > 0 || !self.online {
            RunState::Offline
        } else {
            RunState::Runnable
        }
    }

    /// Accumulated ns in each state up to `now`, including the current stretch.
    #[inline]
    pub fn state_ns_at(&self, now: Time) -> [u64; 4] {
        let mut s = self.state_ns;
        s[self.state as usize] += now.since(self.state_since);
        s
    }
}

impl Domain {
    /// The VCPU (number within the domain) that event channel `channel` is
    /// bound to: the guest's own front ends use channel 0 (VCPU 0, where
    /// Linux binds event channels by default); a driver domain's backend for
    /// guest `g` uses channel `g`, so that backends spread over its online
    /// VCPUs round-robin, as irqbalance spreads them. A VCPU going offline
    /// hands its channels to the others.
    #[inline]
    pub fn irq_vcpu(&self, channel: u32) -> u32 {
        match self.online_vcpus.len() {
            0 => 0,
            n => self.online_vcpus[channel as usize % n],
        }
    }
}

/// One domain (virtual machine).
#[derive(Clone, Debug)]
pub struct Domain {
    /// Name from the scenario.
    pub name: String,
    /// The first of its VCPUs' ids; they are contiguous.
    pub first_vcpu: u32,
    /// Number of VCPUs.
    pub nvcpus: u32,
    /// A driver domain (hosts backends; Domain 0 by default).
    pub driver: bool,
    /// The guest run queue: work not yet taken by a VCPU.
    pub queue: VecDeque<WorkItem>,
    /// Its online VCPUs' numbers, lowest first: event channel `c` is bound
    /// to the `c mod n`-th of them (see [`Domain::irq_vcpu`]).
    pub online_vcpus: Vec<u32>,
    /// Where the guest starts looking for a halted VCPU to wake.
    pub wake_cursor: u32,
}
