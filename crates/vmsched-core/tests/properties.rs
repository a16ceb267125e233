//! Invariants of the engine and of Credit, property-tested over random small
//! scenarios: exact state accounting, no VCPU on two PCPUs, caps, work
//! conservation, determinism.

mod common;
use common::*;
use proptest::prelude::*;
use vmsched_core::time::NS_PER_MS;
use vmsched_core::{Scenario, Simulation, Time};

/// Versions whose behaviour differs somewhere (see credit.rs `Behaviour`).
const VERSIONS: &[&str] = &[
    "3.0", "3.3", "3.4", "4.0", "4.1", "4.2", "4.5", "4.7", "4.8", "4.12", "4.13", "4.18", "4.22",
];

#[derive(Clone, Debug)]
struct Dom {
    vcpus: u32,
    weight: u32,
    cap: u32,
    /// Hard affinity as a bit set over the host's PCPUs (0 = all).
    affinity: u32,
    workload: String,
}

#[derive(Clone, Debug)]
struct Case {
    topo: (u32, u32, u32),
    version: &'static str,
    tslice_ms: u32,
    ratelimit_us: u32,
    duration_ms: u32,
    warmup_ms: u32,
    seed: u64,
    doms: Vec<Dom>,
}

impl Case {
    fn npcpus(&self) -> u32 {
        self.topo.0 * self.topo.1 * self.topo.2
    }

    fn toml(&self) -> String {
        let (s, c, t) = self.topo;
        let mut out = format!(
            "[host]\n[host.topology]\nsockets = {s}\ncores = {c}\nthreads = {t}\n[scheduler]\nname = \"credit\"\nxen_version = \"{}\"\n",
            self.version
        );
        if self.version_at_least(4, 2) {
            out += &format!(
                "tslice_ms = {}\nratelimit_us = {}\n",
                self.tslice_ms, self.ratelimit_us
            );
        }
        out += &format!(
            "[run]\nduration_s = {}\nwarmup_s = {}\nseed = {}\nsample_ms = 100\n",
            self.duration_ms as f64 / 1000.0,
            self.warmup_ms as f64 / 1000.0,
            self.seed
        );
        for (i, d) in self.doms.iter().enumerate() {
            out += &format!(
                "[[domain]]\nname = \"d{i}\"\nvcpus = {}\nweight = {}\ncap = {}\n",
                d.vcpus, d.weight, d.cap
            );
            if d.affinity != 0 {
                let cpus: Vec<String> = (0..self.npcpus())
                    .filter(|p| d.affinity & (1 << p) != 0)
                    .map(|p| p.to_string())
                    .collect();
                out += &format!("affinity = [{}]\n", cpus.join(", "));
            }
            out += &format!("[domain.workload]\n{}\n", d.workload);
        }
        out
    }

    fn version_at_least(&self, major: u16, minor: u16) -> bool {
        let v = vmsched_core::params::Version::parse(self.version).unwrap();
        v >= vmsched_core::params::Version::new(major, minor)
    }

    fn tslice_ms_effective(&self) -> u32 {
        if self.version_at_least(4, 2) {
            self.tslice_ms
        } else {
            30
        }
    }
}

fn workload() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("kind = \"cpu-hog\"".to_string()),
        (1u32..=100, 1u32..=200, any::<bool>()).prop_map(|(u, p, r)| format!(
            "kind = \"duty-cycle\"\nutil_pct = {u}\nperiod_ms = {p}\nrandom_phase = {r}"
        )),
        (1u32..=4, 1u32..=2000, any::<bool>()).prop_map(|(t, w, r)| format!(
            "kind = \"sysbench-cpu\"\nthreads = {t}\nwork_ms = {w}\nrepeat = {r}"
        )),
        (1u32..=500, 1u32..=500, 0u32..=300).prop_map(|(on, off, o)| format!(
            "kind = \"transient\"\non_ms = {on}\noff_ms = {off}\noffset_ms = {o}"
        )),
        Just("kind = \"idle\"".to_string()),
    ]
}

fn domain(npcpus: u32) -> impl Strategy<Value = Dom> {
    let full = (1u32 << npcpus) - 1;
    (
        1u32..=3,
        prop_oneof![Just(256u32), 1u32..=1024],
        prop_oneof![3 => Just(0u32), 1 => 1u32..=250],
        prop_oneof![2 => Just(0u32), 1 => 1u32..=full],
        workload(),
    )
        .prop_map(|(vcpus, weight, cap, affinity, workload)| Dom {
            vcpus,
            weight,
            cap,
            affinity,
            workload,
        })
}

fn case() -> impl Strategy<Value = Case> {
    let topo = prop_oneof![
        Just((1, 1, 1)),
        Just((1, 2, 1)),
        Just((1, 1, 2)),
        Just((2, 1, 1)),
        Just((1, 3, 1)),
        Just((1, 4, 1)),
        Just((1, 2, 2)),
        Just((2, 2, 1)),
        Just((2, 1, 2)),
    ];
    (
        topo,
        prop::sample::select(VERSIONS),
        1u32..=100,
        any::<bool>(),
        200u32..=5000,
        0u32..=2,
        any::<u64>(),
    )
        .prop_flat_map(
            |(topo, version, tslice_ms, rl_on, duration_ms, warm, seed)| {
                let n = topo.0 * topo.1 * topo.2;
                let max_rl = (tslice_ms * 1000).min(500_000);
                let rl = if rl_on && max_rl >= 100 {
                    (100u32..=max_rl).boxed()
                } else {
                    Just(0u32).boxed()
                };
                (rl, prop::collection::vec(domain(n), 1..=6)).prop_map(
                    move |(ratelimit_us, doms)| Case {
                        topo,
                        version,
                        tslice_ms,
                        ratelimit_us,
                        duration_ms,
                        warmup_ms: warm * duration_ms / 10,
                        seed: seed % 1000,
                        doms,
                    },
                )
            },
        )
}

/// Run `sc` in steps of `step_ms`, checking after every step that each PCPU
/// runs a different VCPU and that the VCPUs' and PCPUs' views agree.
fn run_checked(sc: &Scenario, step_ms: f64) -> Result<Simulation, TestCaseError> {
    let mut s = Simulation::new(sc).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut t = 0.0;
    loop {
        t += step_ms;
        let p = s
            .run_until(Time((t * NS_PER_MS as f64) as u64))
            .map_err(|e| TestCaseError::fail(format!("run failed: {e}")))?;
        let mut seen = vec![None; s.vcpus().len()];
        for (pi, pc) in s.pcpus().iter().enumerate() {
            if let Some(v) = pc.current {
                prop_assert!(
                    seen[v.idx()].is_none(),
                    "vcpu {v} on pcpus {:?} and {pi}",
                    seen[v.idx()]
                );
                seen[v.idx()] = Some(pi);
                prop_assert_eq!(s.vcpus()[v.idx()].running_on.map(|p| p.idx()), Some(pi));
            }
        }
        for (vi, v) in s.vcpus().iter().enumerate() {
            prop_assert_eq!(
                v.running_on.map(|p| p.idx()),
                seen[vi],
                "vcpu {} thinks it runs on {:?}",
                vi,
                v.running_on
            );
        }
        if p.finished {
            return Ok(s);
        }
    }
}

fn strip_wall(mut j: serde_json::Value) -> serde_json::Value {
    j["wall_s"] = serde_json::Value::Null;
    j
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Accounting is exact, no VCPU is ever on two PCPUs, the run never
    /// reports an internal error, and the same scenario and seed give the
    /// same summary.
    #[test]
    fn engine_invariants_and_determinism(c in case()) {
        let sc = Scenario::from_toml_str(&c.toml()).map_err(|e| TestCaseError::fail(format!("{e}\n{}", c.toml())))?;
        let mut s = run_checked(&sc, 3.7)?;
        let summary = s.summary(0.0);
        let measured = s.measured_ns();
        prop_assert_eq!(measured, u64::from(c.duration_ms - c.warmup_ms) * NS_PER_MS);
        for d in summary["domains"].as_array().unwrap() {
            for v in d["vcpus"].as_array().unwrap() {
                let total: u64 = ["running_ns", "runnable_ns", "blocked_ns", "offline_ns"]
                    .iter()
                    .map(|k| v[k].as_u64().unwrap())
                    .sum();
                prop_assert_eq!(total, measured, "{} vcpu {}", d["name"], v["vcpu"]);
            }
        }
        // Determinism: a fresh run, not stepped, gives the same summary.
        let mut again = Simulation::new(&sc).unwrap();
        again.run().unwrap();
        prop_assert_eq!(strip_wall(again.summary(1.0)), strip_wall(summary));
        let _ = &mut s;
    }

    /// Caps hold (Xen 4.0+, where credit is burnt by time; before 4.0 a
    /// VCPU that is never running at a tick is never charged, so a capped
    /// domain can exceed its cap: see the tick-evasion test).
    ///
    /// Checked where the 10 ms-style ticks fall on the accounting instants
    /// (tslice a multiple of 3 ms, or under 3 ms with one tick per slice):
    /// accounting runs after the ticks due at the same instant, so it sees
    /// every running VCPU charged up to that instant. (With misaligned ticks
    /// accounting can see a running VCPU's credit up to one tick stale; the
    /// −cpt clamp can then forgive up to one tick's worth per parking.)
    ///
    /// Bound. Per accounting period P (= tslice), a capped domain with `n`
    /// active VCPUs and cap `c` % earns at most n · ⌈⌈c·10·P_ms/100⌉ / n⌉ ≤
    /// c·P_ms/10 + n credits (1 credit = 0.1 ms of running), i.e. it may run
    /// at most c % of P plus n·0.1 ms. A VCPU is charged exactly for the time
    /// it runs (rounded down to 0.1 ms; the remainder carries over), so over
    /// a measured stretch of K periods its running time is at most what it
    /// earned plus what it had at the start and minus what it has at the end.
    /// At the start it can hold at most one slice of credit (cpt = 10·P_ms; above
    /// that it goes inactive, halving it). At the end its credit is at least
    /// −2·cpt: clamped to −cpt at the last accounting, then at most one
    /// period of running since. The −cpt clamp forgives debt only when a
    /// VCPU that was not parked ran a whole period while earning less than
    /// its cap share, and then by at most the difference, so it never lets
    /// the domain run past its cap share. A parked VCPU does not run, and
    /// (accounting seeing it charged up to the instant it is parked) is not
    /// charged afterwards either. Hence running ≤ K·(c·P/100 + n·0.1 ms) + n·(3·cpt credits
    /// + 0.1 ms), with K ≤ measured/P + 1.
    ///
    /// Only domains whose VCPUs are busy whenever they run (cpu-hog,
    /// transient) are checked: a VCPU that always blocks between ticks is
    /// never caught running at one, so it never becomes active, and only
    /// active VCPUs are parked (§2.6; C5), which lets it exceed its cap.
    #[test]
    fn caps_hold(c in case().prop_filter("4.0+, ticks aligned, with a capped busy domain", |c| {
        let t = c.tslice_ms_effective();
        c.version_at_least(4, 0)
            && (t < 3 || t % 3 == 0)
            && c.doms.iter().any(|d| d.cap > 0 && (d.workload.contains("cpu-hog") || d.workload.contains("transient")))
    })) {
        let sc = Scenario::from_toml_str(&c.toml()).unwrap();
        let mut s = Simulation::new(&sc).unwrap();
        s.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let summary = s.summary(0.0);
        let measured_ms = s.measured_ns() as f64 / NS_PER_MS as f64;
        let p_ms = c.tslice_ms_effective() as f64;
        for (i, d) in c.doms.iter().enumerate() {
            if d.cap == 0 || !(d.workload.contains("cpu-hog") || d.workload.contains("transient")) {
                continue;
            }
            let n = d.vcpus as f64;
            let k = measured_ms / p_ms + 1.0;
            let cpt_ms = p_ms; // cpt credits × 0.1 ms
            let bound_ms = k * (d.cap as f64 * p_ms / 100.0 + n * 0.1) + n * (3.0 * cpt_ms + 0.1);
            let ran_ms = summary["domains"][i]["cpu_s"].as_f64().unwrap() * 1000.0;
            prop_assert!(ran_ms <= bound_ms, "d{} cap {} ran {:.2} ms > bound {:.2} ms over {:.0} ms\n{}", i, d.cap, ran_ms, bound_ms, measured_ms, c.toml());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Work conservation for Credit (current release), where it applies:
    /// only CPU hogs, every VCPU may run on every PCPU. Credit does not poll,
    /// so an idle PCPU can coexist with a waiting VCPU, but not for long: the
    /// VCPU running where VCPUs wait is found at its PCPU's tick with work
    /// queued behind it, and `cpu_pick` (which never keeps a VCPU on a PCPU
    /// with queued work while an idle PCPU exists) pushes it to an idle PCPU.
    /// The first tick may only re-activate a VCPU that had gone inactive (no
    /// push then), so each push comes within two tick periods; a push may
    /// bounce off a PCPU that balanced less than `lb_ratelimit` (1 ms) ago,
    /// and involves two IPIs. Each push fills one idle PCPU, and at most
    /// P − 1 can be idle while a VCPU waits, so a stretch with an idle PCPU
    /// and a waiting VCPU lasts at most (P − 1) · (2 τ + 1 ms + 2 IPIs),
    /// plus one sampling step (0.5 ms) of uncertainty.
    #[test]
    fn credit_is_work_conserving_for_hogs(
        topo in prop_oneof![Just((1u32, 2u32, 1u32)), Just((1, 3, 1)), Just((1, 2, 2)), Just((2, 2, 1))],
        hogs in 1usize..=8,
        weights in prop::collection::vec(prop_oneof![Just(256u32), 1u32..=1024], 8),
        tslice_ms in 3u32..=60,
    ) {
        let mut toml = format!(
            "[host]\n[host.topology]\nsockets = {}\ncores = {}\nthreads = {}\n[scheduler]\nname = \"credit\"\ntslice_ms = {tslice_ms}\nratelimit_us = 0\n[run]\nduration_s = 2\n",
            topo.0, topo.1, topo.2
        );
        for (i, w) in weights.iter().take(hogs).enumerate() {
            toml += &format!("[[domain]]\nname = \"h{i}\"\nweight = {w}\n[domain.workload]\nkind = \"cpu-hog\"\n");
        }
        let tick_ms = if tslice_ms < 3 { tslice_ms as f64 } else { (tslice_ms * 1000 / 3) as f64 / 1000.0 };
        let npcpus = (topo.0 * topo.1 * topo.2) as f64;
        let bound_ms = (npcpus - 1.0) * (2.0 * tick_ms + 1.0 + 2.0 * 0.0015) + 0.5;
        let mut s = sim(&toml);
        let step = 0.5;
        let mut since: Option<f64> = None;
        let mut t = step;
        while t <= 2000.0 {
            s.run_until(at_ms(t)).unwrap();
            let idle = s.pcpus().iter().any(|p| p.current.is_none());
            let waiting = s.vcpus().iter().any(|v| v.state == vmsched_core::domain::RunState::Runnable);
            if idle && waiting {
                let start = *since.get_or_insert(t);
                prop_assert!(t - start <= bound_ms, "a PCPU idle while a hog waits for {} ms (bound {bound_ms})\n{toml}", t - start);
            } else {
                since = None;
            }
            t += step;
        }
    }
}
