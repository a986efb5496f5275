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
/// modulo 2^48 (about nine years) next to a tag, and a kept end is read as still ahead only
/// up to 2^46 µs (about 2.2 years) ahead of now.
pub const MAX_OPEN_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// The longest probe timeout: about a year, as for an open period. A probe's admission is kept
/// modulo 2^48 µs (`src/tagged_time.rs`), so its age reads at most about 6.7 years: a longer
/// timeout would never fire.
pub const MAX_PROBE_TIMEOUT: Duration = MAX_OPEN_DURATION;

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

/// `text` fit for a one-line message: line breaks, tabs and other control characters written
/// as escapes (`\n`), so that a key read from a file that contains them cannot break the line.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The failure-rate rule as configured: trip when at least `threshold` of the last `window`
/// recorded calls failed.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct FailureRateConfig {
    /// Share of failures that trips the breaker, in `(0, 1]`. A config file's number is the
    /// `f64` nearest to what it says, as every format reads it: one a hair above 1
    /// (`1.00000000000000001`) is 1, and one too small to tell from 0 is refused as 0.
    pub threshold: f64,
    /// Number of most recent recorded calls the share is taken over.
    pub window: usize,
    /// Calls that must be recorded since the window was last cleared before it is judged;
    /// `None` means the window size.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub minimum_calls: Option<usize>,
}

/// Longer open periods while the dependency stays down: the opening after the `k`-th failed
/// probe round in a row (a probe that failed, or probes given up on after
/// [`probe_timeout`](Config::probe_timeout)) lasts `open_duration` times `multiplier` to the
/// power `k`, at most `max`. A trip from closed, an opening made with
/// [`Breaker::open_for`](crate::Breaker::open_for) (as the openings applied from other
/// instances are, see [`shared`](crate::shared)), and a back-off switched off by
/// [`reconfigure`](crate::Breaker::reconfigure) while a probe round fails start the count
/// again. A back-off switched off and on again with no failed round in between goes on
/// counting where it was. Probes of one half-open period that fail together are one round.
///
/// # Examples
///
/// ```
/// use hotbreaker::{Breaker, ManualClock, State};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// let breaker = Breaker::builder()
///     .consecutive_failures(1)
///     .open_duration(Duration::from_secs(10))
///     .open_backoff(2.0, Duration::from_secs(30))
///     .clock(clock.clone())
///     .build()?;
/// breaker.try_acquire().unwrap().failure(); // trips: open for 10 s
/// for expected in [20, 30, 30] {
///     clock.advance(breaker.try_acquire().unwrap_err().retry_after().unwrap());
///     breaker.try_acquire().expect("a probe").failure(); // fails: open longer
///     let open_for = breaker.try_acquire().unwrap_err().retry_after().unwrap();
///     assert_eq!(open_for, Duration::from_secs(expected));
/// }
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct OpenBackoffConfig {
    /// How many times longer each failed probe round in a row makes the open period; finite
    /// and at least 1. A config file's number is the `f64` nearest to what it says: one a
    /// hair below 1 (`0.99999999999999999`) is 1.
    pub multiplier: f64,
    /// The longest open period the back-off reaches; at least `open_duration`. In a
    /// configuration file, a duration such as `"10m"`.
    #[cfg_attr(feature = "serde", serde(with = "crate::config_file::duration"))]
    pub max: Duration,
}

/// How long the open period after `reopenings` failed probe rounds in a row lasts: `base`
/// for none, else `base` times the multiplier to that power, at most the back-off's `max`.
pub(crate) fn backed_off(
    base: Duration,
    backoff: Option<OpenBackoffConfig>,
    reopenings: u32,
) -> Duration {
    let Some(backoff) = backoff else {
        return base;
    };
    if reopenings == 0 {
        return base;
    }
    // An exponent past i32 only says "at the maximum" (the multiplier is at least 1).
    let exponent = i32::try_from(reopenings).unwrap_or(i32::MAX);
    let seconds = base.as_secs_f64() * backoff.multiplier.powi(exponent);
    if seconds.is_finite() && seconds < backoff.max.as_secs_f64() {
        Duration::from_secs_f64(seconds).max(base).min(backoff.max)
    } else {
        backoff.max
    }
}

/// A breaker's settings as plain data: what [`Builder`](crate::Builder) collects, what
/// [`Breaker::reconfigure`](crate::Breaker::reconfigure) takes, and (with the `serde` feature)
/// what a configuration file holds. Checked when it is applied, not when it is made.
///
/// In a file, settings are named (`from_toml_str` and the others refuse a list of bare
/// values, at the top and for the rules inside). Deserialized as part of a program's own
/// settings, the top level follows serde's derive, which also reads a sequence by field
/// position.
///
/// # Examples
///
/// ```
/// use hotbreaker::{Breaker, Config, FailureRateConfig};
/// use std::time::Duration;
///
/// let config = Config {
///     failure_rate: Some(FailureRateConfig { threshold: 0.25, window: 40, minimum_calls: None }),
///     open_duration: Duration::from_secs(5),
///     ..Config::default()
/// };
/// let breaker = Breaker::builder().config(config).build()?;
/// assert_eq!(breaker.config(), config);
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Config {
    /// The failure-rate rule. When neither rule is set, [`DEFAULT_FAILURE_RATE`](crate::DEFAULT_FAILURE_RATE)
    /// applies.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::config_file::table::optional",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub failure_rate: Option<FailureRateConfig>,
    /// Trip after this many failures in a row.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub consecutive_failures: Option<usize>,
    /// How long the breaker rejects calls after tripping; the period ends within a
    /// microsecond after it is due, never before. In a configuration file, a human-readable
    /// duration such as `"30s"` or `"1m 30s"`.
    #[cfg_attr(feature = "serde", serde(with = "crate::config_file::duration"))]
    pub open_duration: Duration,
    /// Probe calls that may be out at once while half-open.
    pub half_open_probes: usize,
    /// Successful probes that close the breaker.
    pub success_threshold: usize,
    /// Per-thread counter stripes; `None` picks from the machine's parallelism. Fixed once a
    /// breaker is built.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub stripes: Option<usize>,
    /// Failure records to keep at least, so that a later
    /// [`reconfigure`](crate::Breaker::reconfigure) can lengthen the failure-rate window or
    /// the run up to this many calls. `None` keeps what the rules given at build time need.
    /// Must not be below that; rounded up to a power of two; 8 bytes a record. Fixed once a
    /// breaker is built.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub failure_records: Option<usize>,
    /// Give every thread a failure window of its own instead of one for the whole breaker
    /// (see [`Builder::per_thread_windows`](crate::Builder::per_thread_windows)). Off by
    /// default. Fixed once a breaker is built.
    pub per_thread_windows: bool,
    /// Count every success in the metrics, at the cost of one store to the thread's own cache
    /// line per successful call. Off by default: then a success while a filled window holds
    /// no failure is loads only, and [`Metrics::successes`](crate::Metrics::successes) is
    /// `None`.
    /// Switched on by a reconfiguration, it counts the successes from there on; a breaker that
    /// counted before, and was switched off meanwhile, adds them to what it counted then.
    pub count_successes: bool,
    /// A success recorded longer than this after its permit was issued counts as a failure
    /// (and in [`Metrics::slow_calls`](crate::Metrics::slow_calls)), and so does a closed call
    /// still out that long, judged at a later call without waiting for its end (see
    /// [`Builder::slow_call`](crate::Builder::slow_call)). `None`: how long a call takes does
    /// not matter. With a limit, every permit reads the clock when it is issued and when its
    /// success is recorded, which takes calls off the healthy path (about two clock reads per
    /// call). In a configuration file, a duration such as `"250ms"`.
    #[cfg_attr(
        feature = "serde",
        serde(
            with = "crate::config_file::optional_duration",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub slow_call: Option<Duration>,
    /// While half-open with every probe place taken, once every probe out has been out longer
    /// than this, the next call that finds no place opens the breaker again (as after a
    /// failed probe) instead of waiting for their verdicts, which will not count. `None`: a
    /// probe that never ends keeps the breaker half-open until it ends or its permit is
    /// dropped. In a configuration file, a duration such as `"5s"`.
    #[cfg_attr(
        feature = "serde",
        serde(
            with = "crate::config_file::optional_duration",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub probe_timeout: Option<Duration>,
    /// Open periods that grow while probes keep failing; `None`: every opening lasts
    /// `open_duration`. In a configuration file, `open_backoff = { multiplier = 2.0, max =
    /// "10m" }`.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::config_file::table::optional",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub open_backoff: Option<OpenBackoffConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            failure_rate: None,
            consecutive_failures: None,
            open_duration: crate::DEFAULT_OPEN_DURATION,
            half_open_probes: 1,
            success_threshold: 1,
            stripes: None,
            failure_records: None,
            per_thread_windows: false,
            count_successes: false,
            slow_call: None,
            probe_timeout: None,
            open_backoff: None,
        }
    }
}

/// The failure-rate rule, validated: trip when the share of failures among the last `window`
/// recorded calls reaches `threshold`, judged once at least `minimum_calls` calls are recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FailureRate {
    pub(crate) threshold: f64,
    pub(crate) window: u32,
    /// While fewer than `window` calls are recorded, the share is taken over the calls held.
    pub(crate) minimum_calls: u32,
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

/// A [`Config`], validated, with what can be computed from it once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub(crate) config: Config,
    pub(crate) failure_rate: Option<FailureRate>,
    /// Failures that trip a full rate window.
    pub(crate) failures_to_trip_full: u32,
    pub(crate) consecutive_failures: Option<u32>,
    pub(crate) open_duration: Duration,
    pub(crate) half_open_probes: u32,
    pub(crate) success_threshold: u32,
    pub(crate) stripes: u32,
    /// Failure records a breaker built with these settings keeps at least: `failure_records`,
    /// or what the rules need.
    pub(crate) failure_records: u32,
    /// The slow-call limit, above zero, if there is one.
    pub(crate) slow_call: Option<Duration>,
    /// The probe timeout, above zero, if there is one.
    pub(crate) probe_timeout: Option<Duration>,
    /// The open periods' back-off, checked.
    pub(crate) open_backoff: Option<OpenBackoffConfig>,
}

impl Settings {
    /// Checks every field of `config`.
    pub(crate) fn validate(config: &Config) -> Result<Settings, ConfigError> {
        let consecutive_failures = config
            .consecutive_failures
            .map(|n| in_range("consecutive_failures", n, 1, MAX_CONSECUTIVE))
            .transpose()?;
        let rate_config = match (config.failure_rate, consecutive_failures) {
            (Some(rate), _) => Some(rate),
            (None, None) => {
                let (threshold, window) = crate::DEFAULT_FAILURE_RATE;
                Some(FailureRateConfig {
                    threshold,
                    window: window as usize,
                    minimum_calls: None,
                })
            }
            (None, Some(_)) => None,
        };
        let failure_rate = rate_config.map(|rate| validate_rate(&rate)).transpose()?;
        check_open_period("open_duration", config.open_duration)?;
        let open_backoff = config
            .open_backoff
            .map(|backoff| validate_backoff(backoff, config.open_duration))
            .transpose()?;
        let stripes = match config.stripes {
            Some(n) => in_range("stripes", n, 1, MAX_STRIPES)?,
            None => default_stripes(),
        };
        let needed = records_needed(failure_rate, consecutive_failures);
        let failure_records = match config.failure_records {
            Some(n) => {
                let records = in_range("failure_records", n, 1, MAX_WINDOW.max(MAX_CONSECUTIVE))?;
                if records < needed {
                    return Err(ConfigError::new(
                        "failure_records",
                        format!(
                            "must be at least the {needed} calls the rules look back over, got {n}"
                        ),
                    ));
                }
                records
            }
            None => needed,
        };
        Ok(Settings {
            config: *config,
            failure_rate,
            failures_to_trip_full: failure_rate.map_or(0, |rate| rate.failures_needed(rate.window)),
            consecutive_failures,
            open_duration: config.open_duration,
            half_open_probes: in_range("half_open_probes", config.half_open_probes, 1, MAX_PROBES)?,
            success_threshold: in_range(
                "success_threshold",
                config.success_threshold,
                1,
                MAX_PROBES,
            )?,
            stripes,
            failure_records,
            slow_call: config
                .slow_call
                .map(|limit| above_zero("slow_call", limit))
                .transpose()?,
            probe_timeout: config
                .probe_timeout
                .map(probe_timeout_in_range)
                .transpose()?,
            open_backoff,
        })
    }

    /// How long the opening after `reopenings` failed probe rounds in a row lasts.
    pub(crate) fn open_period(&self, reopenings: u32) -> Duration {
        backed_off(self.open_duration, self.open_backoff, reopenings)
    }

    /// Failure records a rule may look back over: the most failures the rate window can hold,
    /// or the run length.
    pub(crate) fn failure_records_needed(&self) -> usize {
        records_needed(self.failure_rate, self.consecutive_failures) as usize
    }
}

fn validate_backoff(
    backoff: OpenBackoffConfig,
    open_duration: Duration,
) -> Result<OpenBackoffConfig, ConfigError> {
    let multiplier = backoff.multiplier;
    if !(multiplier.is_finite() && multiplier >= 1.0) {
        return Err(ConfigError::new(
            "open_backoff.multiplier",
            format!("must be a finite number of at least 1, got {multiplier}"),
        ));
    }
    if backoff.max < open_duration || backoff.max > MAX_OPEN_DURATION {
        return Err(ConfigError::new(
            "open_backoff.max",
            format!(
                "must be at least open_duration ({open_duration:?}) and at most {} s, got {:?}",
                MAX_OPEN_DURATION.as_secs(),
                backoff.max
            ),
        ));
    }
    Ok(backoff)
}

fn records_needed(rate: Option<FailureRate>, run: Option<u32>) -> u32 {
    let rate = rate.map_or(0, |rate| rate.window);
    rate.max(run.unwrap_or(0)).max(1)
}

fn validate_rate(rate: &FailureRateConfig) -> Result<FailureRate, ConfigError> {
    let threshold = rate.threshold;
    // `!(x > 0.0)` rather than `x <= 0.0`, so that NaN is refused too.
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(ConfigError::new(
            "failure_rate.threshold",
            if threshold == 0.0 {
                // Also what a number too small for an `f64` (`1e-400`) reads as.
                "must be greater than 0 and at most 1, got 0 (or a number too small to tell from 0)"
                    .to_owned()
            } else {
                format!("must be greater than 0 and at most 1, got {threshold}")
            },
        ));
    }
    let window = in_range("failure_rate.window", rate.window, 1, MAX_WINDOW)?;
    let minimum_calls = match rate.minimum_calls {
        Some(calls) => in_range("failure_rate.minimum_calls", calls, 1, window)?,
        None => window,
    };
    Ok(FailureRate {
        threshold,
        window,
        minimum_calls,
    })
}

/// An open period the open deadline can hold: at least a microsecond (its unit), at most
/// [`MAX_OPEN_DURATION`]. `field` names the setting or argument in the error.
pub(crate) fn check_open_period(field: &'static str, period: Duration) -> Result<(), ConfigError> {
    if period < Duration::from_micros(1) || period > MAX_OPEN_DURATION {
        return Err(ConfigError::new(
            field,
            format!(
                "must be at least 1 µs and at most {} s, got {period:?}",
                MAX_OPEN_DURATION.as_secs()
            ),
        ));
    }
    Ok(())
}

/// A duration that must be above zero: a slow-call limit of zero would make every success a
/// failure, a probe timeout of zero would give up on every probe at once.
fn above_zero(field: &'static str, duration: Duration) -> Result<Duration, ConfigError> {
    if duration.is_zero() {
        return Err(ConfigError::new(field, "must be greater than 0, got 0ns"));
    }
    Ok(duration)
}

/// A probe timeout above zero and at most [`MAX_PROBE_TIMEOUT`].
fn probe_timeout_in_range(timeout: Duration) -> Result<Duration, ConfigError> {
    if timeout > MAX_PROBE_TIMEOUT {
        return Err(ConfigError::new(
            "probe_timeout",
            format!(
                "must be at most {} s, got {timeout:?}",
                MAX_PROBE_TIMEOUT.as_secs()
            ),
        ));
    }
    above_zero("probe_timeout", timeout)
}

pub(crate) fn in_range(
    field: &'static str,
    value: usize,
    min: u32,
    max: u32,
) -> Result<u32, ConfigError> {
    match u32::try_from(value) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(ConfigError::new(
            field,
            format!("must be from {min} to {max}, got {value}"),
        )),
    }
}

fn default_stripes() -> u32 {
    #[cfg(not(loom))]
    let parallelism = std::thread::available_parallelism().map_or(1, usize::from);
    #[cfg(loom)]
    let parallelism: usize = 2;
    (2 * parallelism).next_power_of_two().clamp(4, 64) as u32
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn backoff(multiplier: f64, max: Duration) -> Option<OpenBackoffConfig> {
        Some(OpenBackoffConfig { multiplier, max })
    }

    #[test]
    fn the_back_off_multiplies_the_open_duration_per_round_up_to_its_maximum() {
        let base = Duration::from_millis(700);
        let doubling = backoff(2.0, Duration::from_secs(5));
        let periods: Vec<u128> = (0..6)
            .map(|k| backed_off(base, doubling, k).as_millis())
            .collect();
        assert_eq!(periods, [700, 1400, 2800, 5000, 5000, 5000]);
        assert_eq!(backed_off(base, None, 9), base, "no back-off");
        assert_eq!(
            backed_off(base, backoff(3.0, Duration::from_secs(60)), 1),
            Duration::from_millis(2100)
        );
    }

    #[test]
    fn extreme_back_offs_stay_between_the_open_duration_and_the_maximum() {
        let bases = [
            Duration::from_micros(1),
            Duration::from_secs(7),
            MAX_OPEN_DURATION,
        ];
        let multipliers = [1.0, 1.0 + f64::EPSILON, 1.5, 1e10, 1e300, f64::MAX];
        for base in bases {
            for max in [base, MAX_OPEN_DURATION] {
                for multiplier in multipliers {
                    let mut before = base;
                    for k in [0, 1, 2, 63, 64, 1_000, i32::MAX as u32, u32::MAX] {
                        let period = backed_off(base, backoff(multiplier, max), k);
                        assert!(
                            (base..=max).contains(&period) && period >= before,
                            "{base:?} x {multiplier}^{k} up to {max:?}: {period:?}"
                        );
                        before = period;
                    }
                }
            }
        }
    }
}
