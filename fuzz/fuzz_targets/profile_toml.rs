//! libFuzzer target: see `vmsched_fuzz::profile_toml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vmsched_fuzz::profile_toml(data));
