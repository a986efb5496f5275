//! Operations split over two threads: counters, probes and transitions stay consistent.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hotbreaker::testing::fuzz_two_threads(data));
