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

/// A large host: `pcpus` PCPUs and `domains` single-VCPU domains, every
/// fourth a CPU hog and the others at a 20 % duty cycle of 100 ms (on
/// 4 domains per PCPU: the hogs hold a quarter of the host, the duty cycles
/// want 60 % of it, so the host is over-committed and the scheduler places,
/// balances and steals). The 512-PCPU case, and the scaling series of
/// `cargo run --release --example scaling`.
pub fn mixed_host(sched: &str, pcpus: usize, domains: usize, duration_s: f64) -> String {
    let mut s = format!(
        "[host]\npcpus = {pcpus}\n[scheduler]\nname = \"{sched}\"\n[run]\nduration_s = {duration_s}\n"
    );
    for i in 0..domains {
        let workload = if i % 4 == 0 {
            "kind = \"cpu-hog\"\n".to_string()
        } else {
            "kind = \"duty-cycle\"\nutil_pct = 20\nperiod_ms = 100\n".to_string()
        };
        s.push_str(&format!(
            "[[domain]]\nname = \"vm{i}\"\n[domain.workload]\n{workload}"
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
    let (d1, d2, d3, d4) = if short {
        (100.0, 2.0, 20.0, 2.0)
    } else {
        (2000.0, 20.0, 600.0, 20.0)
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
        BenchCase {
            name: "512pcpu-2048dom-mixed",
            about: "512 PCPUs, 2,048 single-VCPU domains: a quarter CPU hogs, the rest at 20 % duty cycle",
            scenario: Scenario::from_toml_str(&mixed_host(sched, 512, 2048, d4)).expect("valid"),
        },
    ]
}

/// A case run as a user runs it: the whole `vmsched run --out` command,
/// process start to results written.
pub struct CommandCase {
    /// Short name.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// The scenario file's text (TOML).
    pub toml: String,
}

/// The whole-command cases for scheduler `sched`: three CPU hogs for one
/// simulated hour (100 s with `short`), and the 512-PCPU mixed host.
pub fn commands_for(sched: &str, short: bool) -> Vec<CommandCase> {
    let (hour, big) = if short { (100.0, 2.0) } else { (3600.0, 20.0) };
    vec![
        CommandCase {
            name: "three-hogs-1h-command",
            about: "vmsched run --out: three CPU hogs on 2 PCPUs, one simulated hour",
            toml: three_hogs(sched, hour),
        },
        CommandCase {
            name: "512pcpu-2048dom-command",
            about: "vmsched run --out: the 512-PCPU, 2,048-domain mixed host",
            toml: mixed_host(sched, 512, 2048, big),
        },
    ]
}

/// The standard cases under Credit.
pub fn standard(short: bool) -> Vec<BenchCase> {
    standard_for("credit", short)
}

/// The P-scaling series: the mixed host of [`mixed_host`] (4 single-VCPU
/// domains per PCPU) at 2, 8, 32, 128 and 512 PCPUs, each for `duration_s`
/// simulated seconds: (PCPUs, scenario TOML). Wall time per simulated
/// PCPU-second should grow no faster than log P.
pub fn scaling_for(sched: &str, duration_s: f64) -> Vec<(usize, String)> {
    [2usize, 8, 32, 128, 512]
        .into_iter()
        .map(|p| (p, mixed_host(sched, p, 4 * p, duration_s)))
        .collect()
}

/// The yardstick of the event loop: `steps` rounds of pop + push on the
/// standard library's binary heap holding `size` entries of 24 bytes (time,
/// sequence, payload: what the engine's queue holds), each pushed a
/// pseudo-random 0.1–10 ms later than the one popped, so the heap keeps its
/// size, and nothing else done per event. Returns a checksum of what was
/// popped (time it with the caller's clock; the engine's rate at the same
/// queue size over this loop's is the engine/heap ratio `vmsched bench` prints).
pub fn bare_heap_loop(size: usize, steps: u64) -> u64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap = BinaryHeap::with_capacity(size.max(1) + 1);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next_delay = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        100_000 + x % 10_000_000
    };
    let mut seq = 0u64;
    for i in 0..size.max(1) as u64 {
        seq += 1;
        heap.push(Reverse((next_delay(), seq, i)));
    }
    let mut sum = 0u64;
    for _ in 0..steps {
        let Reverse((now, _, payload)) = heap.pop().expect("never empty");
        sum = sum.wrapping_add(payload);
        seq += 1;
        heap.push(Reverse((now + next_delay(), seq, payload.wrapping_add(1))));
    }
    sum
}
