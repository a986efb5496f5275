//! The real `hotbreaker::Breaker` guarding the event flow, on simulated time.

use std::time::Duration;

use hotbreaker::{Breaker, ConfigError, ManualClock};

use super::rule::Rule;

/// One round of the model on the breaker's clock (100 rounds = 1 s).
const ROUND_MILLIS: u64 = 10;

/// The clock reading at the start of `rounds` rounds.
pub fn rounds_to_time(rounds: u64) -> Duration {
    Duration::from_millis(ROUND_MILLIS * rounds)
}

/// The breaker for a rule, or `None` for the run without one. One probe in half-open and one
/// successful probe to close, as in the lesson.
///
/// # Errors
/// When the breaker refuses the configuration (its error names the field).
pub fn breaker_for(
    rule: Rule,
    open_rounds: u64,
    clock: &ManualClock,
) -> Result<Option<Breaker<ManualClock>>, ConfigError> {
    let builder = Breaker::builder();
    let builder = match rule {
        Rule::None => return Ok(None),
        Rule::Consecutive { failures } => builder.consecutive_failures(failures),
        Rule::Rate { threshold, window } => builder.failure_rate(threshold, window),
    };
    builder
        .open_duration(rounds_to_time(open_rounds))
        .half_open_probes(1)
        .success_threshold(1)
        .clock(clock.clone())
        .build()
        .map(Some)
}
