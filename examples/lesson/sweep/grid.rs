//! The rules a sweep tries: every trip rule of the grid with every open duration.

use crate::model::Rule;

/// One rule to try: when to trip, and how long to stay open.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub rule: Rule,
    pub open_rounds: u64,
}

/// Consecutive rules: K failures in a row, K from 2 (1 would trip on any failure) to 10.
pub const CONSECUTIVE: std::ops::RangeInclusive<usize> = 2..=10;
/// Rate rules: thresholds of tenths, 0.1 to 0.9 (1 would need a whole window of failures).
pub const RATE_TENTHS: std::ops::RangeInclusive<u32> = 1..=9;
pub const RATE_WINDOWS: [usize; 4] = [10, 20, 50, 100];
/// Half, once and twice the lesson's one second.
pub const OPEN_ROUNDS: [u64; 3] = [50, 100, 200];

/// The sweep's grid: consecutive rules, then rate rules by window and threshold, each with
/// every open duration.
pub fn grid() -> Vec<Candidate> {
    let consecutive = CONSECUTIVE.map(|failures| Rule::Consecutive { failures });
    let rate = RATE_WINDOWS.into_iter().flat_map(|window| {
        RATE_TENTHS.map(move |tenths| Rule::Rate {
            // A division, not 0.1 * tenths: 3 / 10 is the double nearest 0.3, as `rate:0.3/W`
            // reads it, where 0.1 * 3 is not.
            threshold: f64::from(tenths) / 10.0,
            window,
        })
    });
    consecutive
        .chain(rate)
        .flat_map(|rule| OPEN_ROUNDS.map(|open_rounds| Candidate { rule, open_rounds }))
        .collect()
}
