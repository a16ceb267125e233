//! Administration: what the toolstack (`xl`) does to a running host.
//!
//! Scenario `[[action]]`s and [`Simulation::adjust_domain`] change a
//! domain's scheduler parameters, pin its VCPUs, take VCPUs on- and
//! offline, and pause or unpause it, in the order `xl` would. The toolstack
//! runs on no simulated PCPU, so every reschedule it causes is a remote one.
//! Each change reaches the scheduler through the same hooks as in Xen
//! (`adjust`, `sleep`/`wake` via `vcpu_sleep_nosync`/`vcpu_wake`, the
//! migration protocol for a new affinity), never through a side door.

use super::{Simulation, Timer};
use crate::domain::{WorkItem, URGENT};
use crate::error::SimError;
use crate::ids::{DomId, VcpuId};
use crate::params::Params;
use crate::scenario::{Action, ActionWhat, DomainOps};
use crate::sched::{Deferred, SchedCtx};

impl Simulation {
    pub(super) fn apply_action(&mut self, index: usize) {
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
            self.w.queue.cancel(Timer::Work(VcpuId(vi)));
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
        // What lets a scheduler take a host-sized mask out of it
        // (`CpuMask::sized`): the action was validated against the host.
        assert!(
            mask.is_subset(&self.w.topo.all()),
            "affinity {mask:?} beyond the host"
        );
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
}
