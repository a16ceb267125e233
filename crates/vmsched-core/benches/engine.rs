//! Criterion benchmarks of the engine on the standard scenarios
//! (the same ones `vmsched bench` runs), and of tracing on them: with the
//! hooks feeding a sink that records nothing (`null-sink`, the cost of the
//! hooks alone) and writing both trace files (`files`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use vmsched_core::bench::{standard, BenchCase};
use vmsched_core::trace::{self, NullSink};
use vmsched_core::Simulation;

fn engine(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    for case in standard(true) {
        let BenchCase { name, scenario, .. } = case;
        let mut probe = Simulation::new(&scenario).unwrap();
        probe.run().unwrap();
        g.throughput(Throughput::Elements(probe.events()));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut sim = Simulation::new(&scenario).unwrap();
                sim.run().unwrap();
                sim.events()
            })
        });
    }
    g.finish();
}

fn tracing(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("vmsched-bench-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (text, xen) = (dir.join("trace.txt"), dir.join("trace.xentrace"));
    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    for case in standard(true) {
        let BenchCase { name, scenario, .. } = case;
        let mut probe = Simulation::new(&scenario).unwrap();
        probe.run().unwrap();
        g.throughput(Throughput::Elements(probe.events()));
        g.bench_function(format!("{name}/null-sink"), |b| {
            b.iter(|| {
                let mut sim = Simulation::new(&scenario).unwrap();
                sim.set_trace(Box::new(NullSink));
                sim.run().unwrap();
                sim.finish_trace().unwrap();
                sim.events()
            })
        });
        g.bench_function(format!("{name}/files"), |b| {
            b.iter(|| {
                let mut sim = Simulation::new(&scenario).unwrap();
                let sink = trace::to_files(Some(&text), Some(&xen)).unwrap().unwrap();
                sim.set_trace(sink);
                sim.run().unwrap();
                sim.finish_trace().unwrap();
                sim.events()
            })
        });
    }
    g.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, engine, tracing);
criterion_main!(benches);
