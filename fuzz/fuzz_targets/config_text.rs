//! Arbitrary text read as a configuration file, for one breaker or a registry, in each format:
//! a configuration that works or a one-line error, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hotbreaker::testing::fuzz_config_text(data));
