//! The stealing oracle: in test builds [`Credit::load_balance`] also runs
//! the scan of every busy peer with a queue (Xen's walk, as vmsched did
//! before it kept [`Credit::steal_above_over`]) and asserts that both choose
//! the same peer and VCPU at every decision. These runs drive many steals
//! through the cases where the scan order matters: a crowded first PCPU,
//! duty cycles (idle and OVER stealers), several sockets, soft and hard
//! affinity, yielding, the pre-4.1 neighbour walk.

use crate::{Scenario, Simulation};

fn run(host: &str, globals: &str, secs: f64, doms: &[(&str, &str)]) -> u64 {
    let mut s = format!(
        "[host]\n{host}\n[scheduler]\nname = \"credit\"\n{globals}\n[run]\nduration_s = {secs}\n"
    );
    for (i, (dom, wl)) in doms.iter().enumerate() {
        s.push_str(&format!(
            "[[domain]]\nname = \"d{i}\"\n{dom}\n[domain.workload]\n{wl}\n"
        ));
    }
    let sc = Scenario::from_toml_str(&s).expect("valid scenario");
    let mut sim = Simulation::new(&sc).expect("builds");
    sim.run().expect("runs");
    sim.summary(0.0)["scheduler_counters"]["steals"]
        .as_u64()
        .expect("steals counter")
}

const HOG: &str = "kind = \"cpu-hog\"";
const DUTY: &str = "kind = \"duty-cycle\"\nutil_pct = 30\nperiod_ms = 20";

#[test]
fn same_steals_as_the_full_scan_with_hogs_on_a_crowded_pcpu() {
    let doms: Vec<(&str, &str)> = (0..192).map(|_| ("", HOG)).collect();
    for v in ["4.22", "4.17", "4.13", "4.8"] {
        let steals = run("pcpus = 48", &format!("xen_version = \"{v}\""), 2.0, &doms);
        assert!(steals > 0, "{v}: no steal compared");
    }
}

#[test]
fn same_steals_as_the_full_scan_with_duty_cycles() {
    let doms: Vec<(&str, &str)> = (0..128)
        .map(|i| ("", if i % 4 == 0 { HOG } else { DUTY }))
        .collect();
    for g in [
        "",
        "lb_ratelimit_us = 0",
        "xen_version = \"4.8\"",
        "xen_version = \"3.4\"",
    ] {
        // 4 s: domains now start spread over the PCPUs (Credit 4.8+ places
        // each at creation), so fewer steals happen early than when they
        // all started queued on PCPU 0.
        let steals = run("pcpus = 32", g, 4.0, &doms);
        assert!(steals > 100, "{g}: {steals} steals compared");
    }
}

#[test]
fn same_steals_as_the_full_scan_with_sockets_and_affinities() {
    let host = "[host.topology]\nsockets = 2\ncores = 4\nthreads = 2";
    let doms: Vec<(String, &str)> = (0..48)
        .map(|i| {
            let dom = match i % 4 {
                0 => "soft_affinity = [0, 1, 2, 3]".to_string(),
                1 => "affinity = [8, 9, 10, 11, 12]".to_string(),
                2 => "soft_affinity = [12, 13, 14, 15]\naffinity = [4, 5, 12, 13, 14, 15]".into(),
                _ => String::new(),
            };
            (dom, if i % 3 == 0 { HOG } else { DUTY })
        })
        .collect();
    let doms: Vec<(&str, &str)> = doms.iter().map(|(d, w)| (d.as_str(), *w)).collect();
    for g in [
        "",
        "xen_version = \"4.5\"",
        "xen_version = \"4.1\"",
        "smt_power_savings = true",
    ] {
        let steals = run(host, g, 2.0, &doms);
        assert!(steals > 100, "{g}: {steals} steals compared");
    }
}
