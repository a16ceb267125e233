//! Credit on a large host: where a new domain's VCPU starts, release by
//! release, and the stealing that spreads the rest (`docs/schedulers/credit.md`,
//! "Xen versions").

mod common;
use common::*;
use vmsched_core::{Simulation, Time};

const MS: u64 = 1_000_000;

fn hogs(pcpus: u32, domains: u32, version: &str) -> String {
    let mut s = format!(
        "[host]\npcpus = {pcpus}\n[scheduler]\nname = \"credit\"\nxen_version = \"{version}\"\n[run]\nduration_s = 1\n"
    );
    for i in 0..domains {
        s.push_str(&format!(
            "[[domain]]\nname = \"vm{i}\"\n[domain.workload]\nkind = \"cpu-hog\"\n"
        ));
    }
    s
}

fn busy(sim: &Simulation) -> usize {
    sim.pcpus().iter().filter(|p| p.current.is_some()).count()
}

/// Until 4.7 Xen creates each domain's VCPU 0 on the least-populated PCPU
/// (`default_vcpu0_location`, ties to the highest) and VCPU i on the PCPU
/// after VCPU i−1's; Credit does not move it at insert. So with at least as
/// many domains as PCPUs every PCPU is busy from the first decision, well
/// within one accounting period (30 ms), and 256 hogs on 64 PCPUs sit four
/// to a PCPU, each running within the first second.
#[test]
fn every_pcpu_busy_within_one_accounting_period() {
    for version in ["3.0.3", "4.0", "4.4", "4.7"] {
        let mut sim = Simulation::new(&scenario(&hogs(64, 256, version))).unwrap();
        sim.run_until(Time(30 * MS)).unwrap();
        assert_eq!(busy(&sim), 64, "{version}: busy PCPUs at 30 ms");
        let mut per_pcpu = [0u32; 64];
        for v in sim.vcpus() {
            per_pcpu[v.processor.idx()] += 1;
        }
        assert!(per_pcpu.iter().all(|&n| n == 4), "{version}: {per_pcpu:?}");
        sim.run().unwrap();
        let end = sim.now();
        let idle = sim
            .vcpus()
            .iter()
            .filter(|v| v.state_ns_at(end)[0] == 0)
            .count();
        assert_eq!(idle, 0, "{version}: domains that never ran in 1 s");
        assert_eq!(busy(&sim), 64, "{version}: busy PCPUs at the end");
    }
}

/// Fewer domains than PCPUs: one per PCPU, from the highest down (ties go
/// to the highest-numbered PCPU), the low PCPUs idle.
#[test]
fn fewer_domains_than_pcpus_take_one_pcpu_each() {
    let sim = run_sim(&hogs(8, 3, "4.4"));
    let placed: Vec<u32> = (0..3)
        .map(|i| pcpu_of(&sim, &format!("vm{i}"), 0))
        .collect();
    assert_eq!(placed, [7, 6, 5]);
    for i in 0..3 {
        assert_near(
            &format!("vm{i}"),
            sim_cpu_pct(&sim, &format!("vm{i}")),
            100.0,
            0.01,
        );
    }
}
