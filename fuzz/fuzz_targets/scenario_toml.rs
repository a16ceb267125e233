//! libFuzzer target: see `vmsched_fuzz::scenario_toml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vmsched_fuzz::scenario_toml(data));
