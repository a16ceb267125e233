//! libFuzzer target: see `vmsched_fuzz::scenario_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vmsched_fuzz::scenario_json(data));
