//! Validated settings, and the error that names what was wrong with them.
//!
//! Everything the caller configures is checked once, in [`Builder::build`](crate::Builder::build),
//! and turned into a `Copy` value. No call path checks a setting again.

use std::error::Error;
use std::fmt;
use std::time::Duration;

/// The largest failure-rate window, in calls.
///
/// The window's bookkeeping packs positions inside the window into 16 bits while it fills, and
/// keeps one 8-byte record per failure that can still be in the window.
pub const MAX_WINDOW: u32 = 32_768;

/// The largest number of consecutive failures a rule may wait for.
pub const MAX_CONSECUTIVE: u32 = 32_768;

/// The largest number of concurrent half-open probes, and of probe successes to close.
pub const MAX_PROBES: u32 = 1_023;

/// The largest number of per-thread counter stripes a breaker keeps.
pub const MAX_STRIPES: u32 = 256;

/// The longest open period: about a year. The end of an open period is kept in microseconds
/// in 48 bits next to a tag, which gives room for about nine years of clock.
pub const MAX_OPEN_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// A configuration the builder refused: which setting, and why.
///
/// # Examples
///
/// ```
/// use hotbreaker::Breaker;
///
/// let err = Breaker::builder().failure_rate(1.5, 20).build().unwrap_err();
/// assert_eq!(err.field(), "failure_rate.threshold");
/// assert_eq!(err.to_string(), "invalid failure_rate.threshold: must be greater than 0 and at most 1, got 1.5");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    field: &'static str,
    reason: String,
}

impl ConfigError {
    pub(crate) fn new(field: &'static str, reason: impl Into<String>) -> Self {
        ConfigError {
            field,
            reason: reason.into(),
        }
    }

    /// The setting that was refused, named as the builder method that sets it
    /// (`"failure_rate.window"`, `"open_duration"`, ...).
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// Why it was refused, including the value that was given.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.field, self.reason)
    }
}

impl Error for ConfigError {}

/// The failure-rate rule: trip when the share of failures among the last `window` recorded
/// calls reaches `threshold`, judged once at least `minimum_calls` calls are recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailureRate {
    /// Share of failures that trips the breaker, in `(0, 1]`.
    pub threshold: f64,
    /// Number of most recent recorded calls the share is taken over.
    pub window: u32,
    /// Calls that must be recorded (since the window was last cleared) before it is judged.
    /// While fewer than `window` calls are recorded, the share is taken over the calls held.
    pub minimum_calls: u32,
}

impl FailureRate {
    /// Fewest failures among `calls` recorded calls that reach the threshold.
    ///
    /// Decided as a person would: `failures / calls >= threshold` with both sides exact
    /// decimals, so 6 failures of 40 meet a threshold of 0.15. Dividing (rather than
    /// multiplying the threshold by `calls`, which gives 6.000000000000001 for 0.15 × 40) keeps
    /// that exact, because the quotient and the threshold are both the double nearest the
    /// same decimal.
    pub(crate) fn failures_needed(&self, calls: u32) -> u32 {
        let meets = |failures: u32| f64::from(failures) / f64::from(calls) >= self.threshold;
        // Start near the answer, then settle the last step by the exact test above.
        let mut failures = ((self.threshold * f64::from(calls)).ceil() as u32).min(calls);
        while failures > 0 && meets(failures - 1) {
            failures -= 1;
        }
        while failures < calls && !meets(failures) {
            failures += 1;
        }
        failures.max(1)
    }
}

/// Everything a breaker was configured with, validated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub(crate) failure_rate: Option<FailureRate>,
    pub(crate) consecutive_failures: Option<u32>,
    pub(crate) open_duration: Duration,
    pub(crate) half_open_probes: u32,
    pub(crate) success_threshold: u32,
    pub(crate) stripes: u32,
}

impl Settings {
    pub(crate) fn open_duration_nanos(&self) -> u64 {
        crate::clock::saturating_nanos(self.open_duration)
    }

    /// Successes that must follow the newest failure before no rule can see it any more: the
    /// rate window must have moved past it, and a consecutive run must have been broken.
    pub(crate) fn successes_to_forget_failures(&self) -> u32 {
        self.failure_rate.map_or(1, |rate| rate.window.max(1))
    }

    /// Capacity of the ring that remembers failures: every failure a rule can still look at.
    pub(crate) fn failure_ring_capacity(&self) -> usize {
        let rate = self.failure_rate.map_or(0, |rate| rate.window);
        let run = self.consecutive_failures.unwrap_or(0);
        (rate.max(run).max(1) as usize).next_power_of_two()
    }
}
