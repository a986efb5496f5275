//! Arbitrary builder settings: an error naming the bad one, or a breaker that works.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hotbreaker::testing::fuzz_configuration(data));
