//! Write your own scheduler: a round-robin VCPU scheduler in thirty lines,
//! run on three CPU hogs sharing two PCPUs. `cargo run --release --example round_robin`
//! (docs/architecture.md walks through it).
use std::collections::VecDeque;
use vmsched_core::ids::{PcpuId, VcpuId};
use vmsched_core::sched::{Decision, SchedCtx, Scheduler};
use vmsched_core::{Scenario, Simulation};

/// One global FIFO of runnable VCPUs; each runs for `slice_ns`, then goes to the back.
struct RoundRobin {
    queue: VecDeque<VcpuId>,
    slice_ns: u64,
}

impl Scheduler for RoundRobin {
    fn wake(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        if ctx.running_on(v).is_some() || self.queue.contains(&v) {
            return; // Xen calls wake even for a running VCPU
        }
        self.queue.push_back(v);
        // Tickle every idle PCPU it may run on (idle PCPUs have no timer); one
        // takes it, the others find nothing and idle again. (Tickling only the
        // first idle PCPU would tickle the same one for simultaneous wakes.)
        for p in (0..ctx.npcpus() as u32).map(PcpuId) {
            if ctx.current(p).is_none() && ctx.hard_affinity(v).test(p) {
                ctx.tickle(p);
            }
        }
    }
    fn sleep(&mut self, ctx: &mut SchedCtx, v: VcpuId) {
        match ctx.running_on(v) {
            Some(p) => ctx.tickle(p), // it leaves at that PCPU's next decision
            None => self.queue.retain(|&x| x != v),
        }
    }
    fn do_schedule(&mut self, ctx: &mut SchedCtx, pcpu: PcpuId) -> Decision {
        if let Some(prev) = ctx.current(pcpu).filter(|&p| ctx.is_runnable(p)) {
            self.queue.push_back(prev); // preempted (or re-picked below if alone)
        }
        let Some(i) = self
            .queue
            .iter()
            .position(|&v| ctx.hard_affinity(v).test(pcpu))
        else {
            return Decision::IDLE;
        };
        let next = self.queue.remove(i).expect("found above");
        Decision {
            next: Some(next),
            slice_ns: Some(self.slice_ns),
            migrated: ctx.processor(next) != pcpu,
        }
    }
    fn pick_cpu(&mut self, ctx: &mut SchedCtx, v: VcpuId) -> PcpuId {
        ctx.processor(v)
    }
}

fn main() {
    let mut toml =
        String::from("[host]\npcpus = 2\n[scheduler]\nname = \"credit\"\n[run]\nduration_s = 10\n");
    for name in ["a", "b", "c"] {
        toml += &format!("[[domain]]\nname = \"{name}\"\n[domain.workload]\nkind = \"cpu-hog\"\n");
    }
    let scenario = Scenario::from_toml_str(&toml).expect("valid scenario");
    let rr = RoundRobin {
        queue: VecDeque::new(),
        slice_ns: 10_000_000,
    };
    let mut sim = Simulation::new_with_scheduler(&scenario, Box::new(rr)).expect("builds");
    sim.run().expect("runs");
    let summary = sim.summary(0.0);
    for d in summary["domains"].as_array().unwrap() {
        let pct = d["cpu_pct"].as_f64().unwrap();
        println!("{}: {pct:.1} % of a PCPU", d["name"].as_str().unwrap());
        assert!(
            (pct - 200.0 / 3.0).abs() < 1.0,
            "round robin shares the two PCPUs equally"
        );
    }
}
