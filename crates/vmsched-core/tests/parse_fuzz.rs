//! A short fuzzing run in the tests: the repository's scenarios and profiles,
//! mutated at random (bytes flipped, inserted, deleted; lines duplicated,
//! dropped and swapped; numbers replaced by extreme ones), given to the
//! parsers. Whatever the input, the answer is a scenario or a one-line
//! error naming something, never a panic; a scenario that validates builds and
//! runs for a simulated millisecond. The long, coverage-guided run of the
//! same checks is `tools/fuzz.sh` (libFuzzer, `fuzz/`).

use proptest::prelude::*;
use std::path::Path;
use vmsched_core::{ClusterScenario, Scenario, ScenarioError, Simulation, Time};

fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [root.join("../../scenarios"), root.join("profiles")] {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            out.push(std::fs::read_to_string(f).unwrap());
        }
    }
    assert!(
        out.len() > 5,
        "the corpus is the repository's scenarios and profiles"
    );
    out
}

/// Values that have broken parsers: non-finite, huge, negative, empty, deep.
const EXTREMES: &[&str] = &[
    "nan", "inf", "-inf", "1e400", "-1", "0", "1e308", "9223372036854775807",
    "-9223372036854775808", "18446744073709551616", "\"\"", "\"/\"", "[]", "{}",
    "1979-05-27", "\"a\\nb\"", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "0.0001", "true", "\"0-511\"",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    DupLine(usize),
    DropLine(usize),
    SwapLines(usize, usize),
    Extreme(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<usize>().prop_map(Mutation::DupLine),
        any::<usize>().prop_map(Mutation::DropLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Extreme(a, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match *m {
        Mutation::Flip(i, b) if !bytes.is_empty() => {
            let i = i % bytes.len();
            bytes[i] ^= b;
            return bytes;
        }
        Mutation::Insert(i, b) => {
            bytes.insert(i % (bytes.len() + 1), b);
            return bytes;
        }
        Mutation::Delete(i, k) if !bytes.is_empty() => {
            let i = i % bytes.len();
            bytes.drain(i..(i + k).min(bytes.len()));
            return bytes;
        }
        Mutation::DupLine(i) if !lines.is_empty() => lines.insert(i % n, lines[i % n].clone()),
        Mutation::DropLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
        Mutation::Extreme(i, e) => {
            // The value of an assignment line becomes an extreme one.
            let with_values: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains(" = "))
                .collect();
            if let Some(&k) = with_values.get(i % with_values.len().max(1)) {
                let key = lines[k].split(" = ").next().unwrap().to_string();
                lines[k] = format!("{key} = {}", EXTREMES[e % EXTREMES.len()]);
            }
        }
        _ => {}
    }
    lines.join("\n").into_bytes()
}

fn one_line(e: &ScenarioError) {
    let text = e.to_string();
    assert!(!e.message.is_empty(), "an empty message at {}", e.path);
    assert!(
        !text.contains(['\n', '\r']),
        "a message of several lines: {text:?}"
    );
}

fn check(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    match Scenario::from_toml_str(text) {
        Ok(sc) => {
            let mut sim = Simulation::new(&sc).expect("a validated scenario builds");
            sim.run_until(Time(sc.run.duration_ns.min(1_000_000)))
                .expect("a validated scenario runs");
        }
        Err(e) => one_line(&e),
    }
    if let Err(e) = ClusterScenario::from_toml_str(text) {
        one_line(&e);
    }
    if let Ok(serde_json::Value::Object(t)) = vmsched_core::scenario::json_from_toml(text) {
        if let Err(e) = vmsched_core::host::Platform::from_table(&t, "host.profile") {
            one_line(&e);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenarios_give_a_scenario_or_one_line(
        pick in any::<usize>(),
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = corpus();
        let mut text = corpus[pick % corpus.len()].clone().into_bytes();
        for m in &muts {
            text = apply(&String::from_utf8_lossy(&text), m);
        }
        check(&text);
    }
}

#[test]
fn deep_nesting_and_non_finite_numbers_are_refused_at_their_field() {
    let deep = format!("x = {}1{}", "[".repeat(900), "]".repeat(900));
    let e = Scenario::from_toml_str(&deep).unwrap_err();
    one_line(&e);
    let e = Scenario::from_toml_str("[run]\nduration_s = nan\n").unwrap_err();
    assert_eq!(e.path, "run.duration_s");
    assert!(e.message.contains("NaN is not a finite number"), "{e}");
    let e = Scenario::from_toml_str("[run]\nwhen = 1979-05-27\n").unwrap_err();
    assert_eq!(e.path, "run.when");
    assert!(e.message.contains("is a TOML date or time"), "{e}");
}

/// The random run above reaches a given (line, value) pair only by chance;
/// this one tries every extreme value at every assignment of every corpus
/// file, so a message that quotes a value with a newline (a name `"a\nb"`)
/// is caught on every run, not one run in several.
#[test]
fn every_extreme_value_at_every_assignment_gives_a_scenario_or_one_line() {
    for text in corpus() {
        let lines: Vec<&str> = text.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            let Some((key, _)) = line.split_once(" = ") else {
                continue;
            };
            for value in EXTREMES {
                let mut mutated = lines.clone();
                let replaced = format!("{key} = {value}");
                mutated[k] = &replaced;
                check(mutated.join("\n").as_bytes());
            }
        }
    }
}
