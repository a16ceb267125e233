//! The standard benchmark scenarios, shared by `cargo bench` and `vmsched bench`.

use crate::Scenario;

/// One benchmark scenario.
pub struct BenchCase {
    /// Short name.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    pub scenario: Scenario,
}

fn three_hogs(sched: &str, duration_s: f64) -> String {
    format!(
        r#"
        [host]
        pcpus = 2
        [scheduler]
        name = "{sched}"
        [run]
        duration_s = {duration_s}
        [[domain]]
        name = "vm1"
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "vm2"
        [domain.workload]
        kind = "cpu-hog"
        [[domain]]
        name = "vm3"
        [domain.workload]
        kind = "cpu-hog"
        "#
    )
}

fn big_host(sched: &str, duration_s: f64) -> String {
    let mut s = format!(
        "[host]\npcpus = 256\n[scheduler]\nname = \"{sched}\"\n[run]\nduration_s = {duration_s}\n"
    );
    for i in 0..1024 {
        s.push_str(&format!(
            "[[domain]]\nname = \"vm{i}\"\n[domain.workload]\nkind = \"duty-cycle\"\nutil_pct = 20\nperiod_ms = 100\n"
        ));
    }
    s
}

fn web_server(sched: &str, duration_s: f64) -> String {
    format!(
        r#"
        [host]
        pcpus = 2
        profile = "cherkasova2007"
        [scheduler]
        name = "{sched}"
        [run]
        duration_s = {duration_s}
        [[domain]]
        name = "dom0"
        vcpus = 2
        [domain.workload]
        kind = "idle"
        [[domain]]
        name = "web"
        vcpus = 2
        [domain.workload]
        kind = "web-server"
        rate = 1000
        "#
    )
}

/// The standard cases for scheduler `sched`. `short` gives run lengths
/// suitable for criterion's repeated sampling.
pub fn standard_for(sched: &str, short: bool) -> Vec<BenchCase> {
    let (d1, d2, d3) = if short {
        (100.0, 2.0, 20.0)
    } else {
        (2000.0, 20.0, 600.0)
    };
    vec![
        BenchCase {
            name: "three-hogs-2pcpu",
            about: "three CPU hogs on 2 PCPUs",
            scenario: Scenario::from_toml_str(&three_hogs(sched, d1)).expect("valid"),
        },
        BenchCase {
            name: "256pcpu-1024dom-duty",
            about: "256 PCPUs, 1,024 single-VCPU domains at 20 % duty cycle",
            scenario: Scenario::from_toml_str(&big_host(sched, d2)).expect("valid"),
        },
        BenchCase {
            name: "web-1000rps-2pcpu",
            about: "a web server at 1,000 requests/s through a 2-VCPU Dom0 on 2 PCPUs",
            scenario: Scenario::from_toml_str(&web_server(sched, d3)).expect("valid"),
        },
    ]
}

/// The standard cases under Credit.
pub fn standard(short: bool) -> Vec<BenchCase> {
    standard_for("credit", short)
}
