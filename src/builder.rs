//! Configuring a breaker.

use std::fmt;
use std::time::Duration;

use crate::breaker::Breaker;
use crate::clock::{Clock, QuantaClock};
use crate::config::{
    ConfigError, FailureRate, MAX_CONSECUTIVE, MAX_OPEN_DURATION, MAX_PROBES, MAX_STRIPES,
    MAX_WINDOW, Settings,
};
use crate::listener::{Listener, Transition};

/// The failure-rate rule used when no rule is configured: half of the last 100 calls.
pub const DEFAULT_FAILURE_RATE: (f64, u32) = (0.5, 100);
/// How long the breaker stays open when not configured.
pub const DEFAULT_OPEN_DURATION: Duration = Duration::from_secs(30);

/// Builds a [`Breaker`]; see [`Breaker::builder`].
///
/// | setting | default |
/// | --- | --- |
/// | trip rule | [`failure_rate(0.5, 100)`](Builder::failure_rate) when no rule is set |
/// | [`minimum_calls`](Builder::minimum_calls) | the failure-rate window |
/// | [`open_duration`](Builder::open_duration) | 30 s |
/// | [`half_open_probes`](Builder::half_open_probes) | 1 |
/// | [`success_threshold`](Builder::success_threshold) | 1 |
/// | [`stripes`](Builder::stripes) | twice the available parallelism, a power of two in 4..=64 |
/// | [`clock`](Builder::clock) | [`QuantaClock`] |
///
/// Nothing is checked until [`build`](Builder::build), which reports the first bad setting.
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<C = QuantaClock> {
    failure_rate: Option<(f64, usize)>,
    minimum_calls: Option<usize>,
    consecutive_failures: Option<usize>,
    open_duration: Duration,
    half_open_probes: usize,
    success_threshold: usize,
    stripes: Option<usize>,
    clock: Option<C>,
    listeners: Vec<Listener>,
}

impl Builder<QuantaClock> {
    pub(crate) fn new() -> Self {
        Builder {
            failure_rate: None,
            minimum_calls: None,
            consecutive_failures: None,
            open_duration: DEFAULT_OPEN_DURATION,
            half_open_probes: 1,
            success_threshold: 1,
            stripes: None,
            clock: None,
            listeners: Vec::new(),
        }
    }
}

impl<C: Clock> Builder<C> {
    /// Trips when at least `threshold` (a share in `(0, 1]`) of the last `window` recorded calls
    /// failed. Calls whose outcome is ignored, or whose permit was dropped, are not recorded.
    ///
    /// The share is compared as a person computes it: 6 failures of 40 meet 0.15.
    pub fn failure_rate(mut self, threshold: f64, window: usize) -> Self {
        self.failure_rate = Some((threshold, window));
        self
    }

    /// Calls that must be recorded since the window was last cleared before the failure rate
    /// is judged; until the window is full the share is taken over the calls it holds.
    /// Defaults to the window size, and must not exceed it.
    pub fn minimum_calls(mut self, calls: usize) -> Self {
        self.minimum_calls = Some(calls);
        self
    }

    /// Trips after `failures` failures in a row; a success ends the run.
    pub fn consecutive_failures(mut self, failures: usize) -> Self {
        self.consecutive_failures = Some(failures);
        self
    }

    /// How long the breaker rejects calls after tripping, before it lets probes through.
    pub fn open_duration(mut self, duration: Duration) -> Self {
        self.open_duration = duration;
        self
    }

    /// How many probe calls may be out at once while half-open; the rest are rejected.
    pub fn half_open_probes(mut self, probes: usize) -> Self {
        self.half_open_probes = probes;
        self
    }

    /// How many successful probes close the breaker again; one failed probe reopens it.
    pub fn success_threshold(mut self, successes: usize) -> Self {
        self.success_threshold = successes;
        self
    }

    /// How many cache-line stripes of per-thread counters the breaker keeps.
    ///
    /// Each of the first `stripes` threads that use any breaker gets a stripe of its own and
    /// counts with plain stores; later threads share one more stripe with atomic adds. A
    /// stripe costs 128 bytes.
    pub fn stripes(mut self, stripes: usize) -> Self {
        self.stripes = Some(stripes);
        self
    }

    /// Calls `listener` after every state transition, on the thread that made it.
    ///
    /// The listener runs after the transition is published, never under a lock or inside a
    /// retry loop, so it may call back into the breaker. Transitions made at nearly the same
    /// time by different threads may reach listeners out of order; each carries its
    /// [`generation`](Transition::generation) to put them back in order.
    pub fn on_transition<F>(mut self, listener: F) -> Self
    where
        F: Fn(&Transition) + Send + Sync + 'static,
    {
        self.listeners.push(Box::new(listener));
        self
    }

    /// Uses `clock` instead of the default [`QuantaClock`].
    pub fn clock<D: Clock>(self, clock: D) -> Builder<D> {
        Builder {
            failure_rate: self.failure_rate,
            minimum_calls: self.minimum_calls,
            consecutive_failures: self.consecutive_failures,
            open_duration: self.open_duration,
            half_open_probes: self.half_open_probes,
            success_threshold: self.success_threshold,
            stripes: self.stripes,
            clock: Some(clock),
            listeners: self.listeners,
        }
    }

    /// Checks the settings and builds the breaker.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first setting out of range: a failure-rate threshold not in
    /// `(0, 1]` (or not a number), a window of 0 or above [`MAX_WINDOW`], minimum calls of 0 or
    /// above the window, 0 consecutive failures or more than [`MAX_CONSECUTIVE`], an open
    /// duration under a microsecond or above [`MAX_OPEN_DURATION`], probes or a success
    /// threshold of 0 or above [`MAX_PROBES`], or stripes of 0 or above [`MAX_STRIPES`].
    pub fn build(self) -> Result<Breaker<C>, ConfigError>
    where
        C: Default,
    {
        let settings = self.settings()?;
        let clock = self.clock.unwrap_or_default();
        Ok(Breaker::new(
            settings,
            clock,
            self.listeners.into_boxed_slice(),
        ))
    }

    fn settings(&self) -> Result<Settings, ConfigError> {
        let consecutive_failures = self
            .consecutive_failures
            .map(|n| in_range("consecutive_failures", n, 1, MAX_CONSECUTIVE))
            .transpose()?;
        let failure_rate = match (self.failure_rate, consecutive_failures) {
            (Some((threshold, window)), _) => Some(self.rate_rule(threshold, window)?),
            (None, None) => {
                Some(self.rate_rule(DEFAULT_FAILURE_RATE.0, DEFAULT_FAILURE_RATE.1 as usize)?)
            }
            (None, Some(_)) => {
                if self.minimum_calls.is_some() {
                    return Err(ConfigError::new(
                        "minimum_calls",
                        "applies to the failure-rate rule, and only consecutive_failures is set",
                    ));
                }
                None
            }
        };
        if self.open_duration < Duration::from_micros(1) || self.open_duration > MAX_OPEN_DURATION {
            return Err(ConfigError::new(
                "open_duration",
                format!(
                    "must be at least 1 µs and at most {} s, got {:?}",
                    MAX_OPEN_DURATION.as_secs(),
                    self.open_duration
                ),
            ));
        }
        let stripes = match self.stripes {
            Some(n) => in_range("stripes", n, 1, MAX_STRIPES)?,
            None => default_stripes(),
        };
        Ok(Settings {
            failure_rate,
            consecutive_failures,
            open_duration: self.open_duration,
            half_open_probes: in_range("half_open_probes", self.half_open_probes, 1, MAX_PROBES)?,
            success_threshold: in_range(
                "success_threshold",
                self.success_threshold,
                1,
                MAX_PROBES,
            )?,
            stripes,
        })
    }

    fn rate_rule(&self, threshold: f64, window: usize) -> Result<FailureRate, ConfigError> {
        // `!(x > 0.0)` rather than `x <= 0.0`, so that NaN is refused too.
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(ConfigError::new(
                "failure_rate.threshold",
                format!("must be greater than 0 and at most 1, got {threshold}"),
            ));
        }
        let window = in_range("failure_rate.window", window, 1, MAX_WINDOW)?;
        let minimum_calls = match self.minimum_calls {
            Some(calls) => in_range("minimum_calls", calls, 1, window)?,
            None => window,
        };
        Ok(FailureRate {
            threshold,
            window,
            minimum_calls,
        })
    }
}

impl<C> fmt::Debug for Builder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("failure_rate", &self.failure_rate)
            .field("minimum_calls", &self.minimum_calls)
            .field("consecutive_failures", &self.consecutive_failures)
            .field("open_duration", &self.open_duration)
            .field("half_open_probes", &self.half_open_probes)
            .field("success_threshold", &self.success_threshold)
            .field("stripes", &self.stripes)
            .field("listeners", &self.listeners.len())
            .finish_non_exhaustive()
    }
}

fn in_range(field: &'static str, value: usize, min: u32, max: u32) -> Result<u32, ConfigError> {
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
    let parallelism = 2;
    (2 * parallelism).next_power_of_two().clamp(4, 64) as u32
}
