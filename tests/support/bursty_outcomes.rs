//! A fixed sequence of outcomes for comparing two ways of calling through a breaker, and the
//! breaker to compare them on: mostly successes, with bursts of failures now and then, so
//! that a rate window fills, ages its failures out and trips.

use std::time::Duration;

use hotbreaker::{Breaker, ManualClock};

/// A breaker on `clock` with a rate rule over 20 calls and a run of 6, open for a second,
/// counting no successes (so that a success into a clean window may skip it).
pub fn judged_by_rate_and_run(clock: &ManualClock) -> Breaker<ManualClock> {
    Breaker::builder()
        .failure_rate(0.5, 20)
        .consecutive_failures(6)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .expect("valid settings")
}

/// Whether each call of the sequence fails, for `calls` calls: about 4 % failures, and 45 %
/// in the first 100 calls of every 400. The same on every run (a xorshift from a fixed seed).
pub fn bursty_failures(calls: u32) -> impl Iterator<Item = bool> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    (0..calls).map(move |call| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % 100 < if call % 400 < 100 { 45 } else { 4 }
    })
}
