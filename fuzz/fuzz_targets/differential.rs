//! The breaker and the reference model on one operation sequence must decide alike.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hotbreaker::testing::fuzz_differential(data));
