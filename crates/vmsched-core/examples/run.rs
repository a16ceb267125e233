//! Run a scenario file and print the summary JSON: `cargo run --example run -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let sc = match vmsched_core::Scenario::from_toml_str(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let t = std::time::Instant::now();
    let mut sim = vmsched_core::Simulation::new(&sc).unwrap();
    if let Err(e) = sim.run() {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    }
    let wall = t.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&sim.summary(wall)).unwrap()
    );
}
