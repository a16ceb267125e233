//! Criterion benchmarks of the engine on the standard scenarios
//! (the same ones `vmsched bench` runs).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use vmsched_core::bench::{standard, BenchCase};
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

criterion_group!(benches, engine);
criterion_main!(benches);
