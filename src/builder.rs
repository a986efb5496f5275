//! Configuring a breaker.

use std::fmt;
use std::time::Duration;

use crate::breaker::Breaker;
use crate::clock::{Clock, QuantaClock};
use crate::config::{Config, ConfigError, FailureRateConfig, Settings};
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
/// | [`slow_call`](Builder::slow_call), [`probe_timeout`](Builder::probe_timeout) | none |
/// | [`stripes`](Builder::stripes) | twice the available parallelism, a power of two in 4..=64 |
/// | [`clock`](Builder::clock) | [`QuantaClock`] |
///
/// Nothing is checked until [`build`](Builder::build), which reports the first bad setting.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// use hotbreaker::Breaker;
///
/// let breaker = Breaker::builder()
///     .failure_rate(0.5, 20) // half of the last 20 calls
///     .minimum_calls(10)
///     .open_duration(Duration::from_secs(5))
///     .half_open_probes(2)
///     .success_threshold(2)
///     .build()?;
/// assert_eq!(breaker.config().failure_rate.map(|rate| rate.window), Some(20));
///
/// let err = Breaker::builder().failure_rate(1.5, 20).build().unwrap_err();
/// assert_eq!(err.field(), "failure_rate.threshold");
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<C = QuantaClock> {
    config: Config,
    /// Set apart from `config` so that it applies whichever order the methods are called in.
    minimum_calls: Option<usize>,
    clock: Option<C>,
    listeners: Vec<Listener>,
}

impl Builder<QuantaClock> {
    pub(crate) fn new() -> Self {
        Builder {
            config: Config::default(),
            minimum_calls: None,
            clock: None,
            listeners: Vec::new(),
        }
    }
}

impl<C: Clock> Builder<C> {
    /// Replaces every setting that [`Config`] holds with `config`'s, and any
    /// [`minimum_calls`](Builder::minimum_calls) set before; the listeners
    /// ([`on_transition`](Builder::on_transition)) and the clock set before are kept.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self.minimum_calls = None;
        self
    }

    /// Trips when at least `threshold` (a share in `(0, 1]`) of the last `window` recorded calls
    /// failed. Calls whose outcome is ignored, or whose permit was dropped, are not recorded.
    ///
    /// The share is compared as a person computes it: 6 failures of 40 meet 0.15.
    pub fn failure_rate(mut self, threshold: f64, window: usize) -> Self {
        let minimum_calls = self.config.failure_rate.and_then(|rate| rate.minimum_calls);
        self.config.failure_rate = Some(FailureRateConfig {
            threshold,
            window,
            minimum_calls,
        });
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
        self.config.consecutive_failures = Some(failures);
        self
    }

    /// How long the breaker rejects calls after tripping, before it lets probes through.
    ///
    /// Open periods end on the microsecond: within a microsecond after they are due, never
    /// before (a period of 1.5 µs from a whole microsecond ends after 2 µs).
    pub fn open_duration(mut self, duration: Duration) -> Self {
        self.config.open_duration = duration;
        self
    }

    /// Makes the open period grow while the dependency stays down: each opening after a
    /// failed probe round lasts `multiplier` times the one before, up to `max`; see
    /// [`OpenBackoffConfig`](crate::OpenBackoffConfig). `multiplier` must be finite and at
    /// least 1, `max` at least the open duration.
    pub fn open_backoff(mut self, multiplier: f64, max: Duration) -> Self {
        self.config.open_backoff = Some(crate::config::OpenBackoffConfig { multiplier, max });
        self
    }

    /// How many probe calls may be out at once while half-open; the rest are rejected.
    pub fn half_open_probes(mut self, probes: usize) -> Self {
        self.config.half_open_probes = probes;
        self
    }

    /// How many successful probes close the breaker again; one failed probe reopens it.
    pub fn success_threshold(mut self, successes: usize) -> Self {
        self.config.success_threshold = successes;
        self
    }

    /// How many cache-line stripes of per-thread counters the breaker keeps.
    ///
    /// Each of the first `stripes` threads that use any breaker gets a stripe of its own and
    /// counts with plain stores; later threads share one more stripe with atomic adds. A
    /// stripe costs 128 bytes.
    pub fn stripes(mut self, stripes: usize) -> Self {
        self.config.stripes = Some(stripes);
        self
    }

    /// Keeps at least `records` failure records, so that a later
    /// [`reconfigure`](Breaker::reconfigure) may lengthen the failure-rate window or the run
    /// of consecutive failures up to `records` calls.
    ///
    /// Without it a breaker keeps what the rules it is built with look back over (rounded up
    /// to a power of two), and a reconfiguration to a longer window is refused: the records
    /// are one allocation, and growing it under concurrent failures would put a lock or a
    /// second indirection on their path. A record is 8 bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Config, FailureRateConfig};
    ///
    /// let breaker = Breaker::builder()
    ///     .failure_rate(0.5, 20)
    ///     .failure_records(1000)
    ///     .build()?;
    /// let longer = Config {
    ///     failure_rate: Some(FailureRateConfig { threshold: 0.5, window: 1000, minimum_calls: None }),
    ///     ..breaker.config()
    /// };
    /// breaker.reconfigure(longer)?;
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn failure_records(mut self, records: usize) -> Self {
        self.config.failure_records = Some(records);
        self
    }

    /// Gives every thread a failure window of its own (off by default): the rules then judge
    /// the calls of each thread apart, and the breaker opens, for every thread, as soon as one
    /// thread's calls meet a rule.
    ///
    /// With one window for the whole breaker (the default), the rules judge the last calls of
    /// every thread together, exactly, in the order their outcomes were recorded. That costs
    /// each failure a read of every thread's counter line and a write to the window that all
    /// threads read: on the machine the README's "Performance" describes, 11-14 ns per call
    /// per thread with two threads failing one call in 40, against about 2 ns with one thread
    /// or with a window per thread.
    /// With a window per thread, a thread's outcomes touch only its own window and its own
    /// counter line while its window holds a failure, so two threads cost about what one does
    /// (the first failure into a clean window, and the success that makes a window clean
    /// again, also change the state word's quiet bit: see `src/quiet.rs`).
    ///
    /// What changes is what a rule counts:
    /// - a rate rule over `W` calls judges each thread's last `W` calls (and its minimum calls
    ///   are each thread's own), and a run of consecutive failures is a run within one thread;
    /// - so with `k` threads sharing a dependency that goes down, the breaker opens after
    ///   about the failures one thread needs, which is about `k` times as many calls in all as
    ///   with one window: choose it where each thread serves its own share of the traffic
    ///   (a thread per core), or where a few more failed calls matter less than the time;
    /// - with one thread, nothing changes: the lesson's tables come out the same.
    ///
    /// A window still filling without a failure (empty, or successes alone) is taken as full
    /// of successes once another window is full and clean and every other one is clean or
    /// filling so (the breaker is then quiet, and its healthy call reads nothing but the state
    /// word): a thread whose window had not filled by then, or that first calls the breaker
    /// after, is judged over a full window, without a minimum of calls of its own. Every
    /// closing empties every window.
    ///
    /// A thread takes its stripe, and with it its window, at its first call into any breaker,
    /// including reads such as [`Breaker::config`](crate::Breaker::config), and
    /// [`Breaker::metrics`](crate::Breaker::metrics) while the breaker is closed, and keeps it
    /// until it exits; threads beyond the [`stripes`](Builder::stripes) share one more window,
    /// whose calls are judged together. So give a breaker at least as many stripes as threads
    /// that call it, counting those that only read its metrics.
    ///
    /// A window belongs to its stripe, not to its thread. A thread that takes a stripe given
    /// back by a thread that exited continues that window as it was left: the exited
    /// thread's failures (its run, its share of the last `W` calls, its calls still out) and
    /// its calls towards the minimum count together with the new thread's own until the next
    /// closing empties every window. Emptying a window in the middle of a closed period would
    /// break the ordering the windows rely on (`src/window/mod.rs`), and the new thread's
    /// successes are what ages a window left dirty out, so that the breaker can turn quiet.
    ///
    /// An outcome counts in the window of the thread that records it: a permit recorded on
    /// another thread than the one it came from ([`OwnedPermit`](crate::OwnedPermit) sent
    /// there, an async task that moved) counts on the recording thread. A call that hangs past
    /// the [`slow_call`](Builder::slow_call) limit, which no thread records, counts in the
    /// window of the thread that issued it, whichever call finds it hung; so does one that
    /// ends after more than about 100,000 limits, which is counted as hung whoever records it
    /// (its outcome no longer finds its place among the calls out, `src/calls_out.rs`).
    ///
    /// Everything but the window is shared as before: one state, one open period, one set of
    /// probes, one set of metrics. [`Metrics::window_failures`](crate::Metrics::window_failures) and
    /// [`Metrics::window_calls`](crate::Metrics::window_calls) then sum the windows, and
    /// [`Metrics::consecutive_failures`](crate::Metrics::consecutive_failures) is the longest
    /// run of any of them. Each window takes its own failure records, so memory grows with
    /// the stripes ([`Breaker::memory_footprint`](crate::Breaker::memory_footprint)).
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, State};
    ///
    /// let breaker = Breaker::builder()
    ///     .consecutive_failures(2)
    ///     .per_thread_windows(true)
    ///     .build()?;
    /// // One failure here, one on another thread: no thread has two in a row.
    /// let _ = breaker.call(|| Err::<(), _>("down"));
    /// std::thread::scope(|s| {
    ///     s.spawn(|| breaker.call(|| Err::<(), _>("down")));
    /// });
    /// assert_eq!(breaker.state(), State::Closed);
    /// // A second one here is.
    /// let _ = breaker.call(|| Err::<(), _>("down"));
    /// assert_eq!(breaker.state(), State::Open);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn per_thread_windows(mut self, per_thread: bool) -> Self {
        self.config.per_thread_windows = per_thread;
        self
    }

    /// Counts every success in the metrics (off by default).
    ///
    /// A success while a filled window holds no failure is otherwise one load and nothing
    /// more, inlined into the caller (15 instructions per call with the bare call's 6,
    /// `.ci/instructions`). With counting on, every call also adds one to a counter in a
    /// cache line this thread owns (a plain store, no shared write), and takes the breaker's
    /// out-of-line path, several times the instructions and the time. Still no lock, no
    /// atomic read-modify-write and no clock read.
    /// [`Metrics::successes`](crate::Metrics::successes) and
    /// [`Metrics::permitted`](crate::Metrics::permitted) are `None` without it.
    pub fn count_successes(mut self, count: bool) -> Self {
        self.config.count_successes = count;
        self
    }

    /// Counts a success as a failure when it is recorded longer than `limit` after its permit
    /// was issued (off by default): a dependency that answers, but too slowly to be of use,
    /// trips the breaker like one that fails. Such calls are also counted in
    /// [`Metrics::slow_calls`](crate::Metrics::slow_calls).
    ///
    /// The time is taken on the breaker's clock, from the permit's admission to its verdict
    /// (for [`Breaker::call`] and the async and tower calls, around the call itself). Only
    /// successes are judged: a failure is a failure however long it took.
    ///
    /// A call does not have to end to be judged: calls are grouped by issue time in buckets up
    /// to half the limit wide, a bucket falls due the limit after its end, and a closed call
    /// still out then is a slow call (a failure, for every rule) at the first call admitted
    /// after that, by which time it has been out between the limit and one and a half times
    /// the limit. Its own end, if it ever comes, then records nothing more; a call that ends
    /// (or is cancelled) before its bucket falls due is judged by its end, as any other. Such calls are also counted in
    /// [`Metrics::hung_calls`](crate::Metrics::hung_calls). So a dependency that stops answering
    /// trips the breaker although no call returns; half-open probes have their own
    /// [`probe_timeout`](Builder::probe_timeout). A call that ends (or whose permit is dropped)
    /// after more than about 100,000 limits out is a hung call too, judged by its own end.
    ///
    /// The cost: every call reads the clock twice and takes the breaker's out-of-line path,
    /// with two atomic read-modify-writes on the thread's own stripe (entering and leaving
    /// the calls out), so the healthy path is no longer free. Threads beyond the
    /// [`stripes`](Builder::stripes) share one stripe and contend on it; a call that ends on
    /// another thread writes to the issuing thread's stripe. After the limit is lowered, calls
    /// already out are judged by the new limit counted from the end of their bucket (up to half
    /// the old limit wide).
    ///
    /// # Errors
    ///
    /// [`build`](Builder::build) refuses a limit of zero (field `slow_call`).
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, ManualClock};
    /// use std::time::Duration;
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::builder()
    ///     .consecutive_failures(1)
    ///     .slow_call(Duration::from_millis(250))
    ///     .clock(clock.clone())
    ///     .build()?;
    /// // The call succeeds, but takes a second: it counts as a failure and trips the breaker.
    /// let reply = breaker.call(|| {
    ///     clock.advance(Duration::from_secs(1));
    ///     Ok::<_, ()>("late")
    /// });
    /// assert_eq!(reply, Ok("late"), "the caller still gets its answer");
    /// assert!(breaker.try_acquire().is_err());
    /// assert_eq!(breaker.metrics().slow_calls, 1);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn slow_call(mut self, limit: Duration) -> Self {
        self.config.slow_call = Some(limit);
        self
    }

    /// Gives up on probes that take longer than `timeout` (off by default): while half-open
    /// with every probe place taken, once every probe out has been out longer than
    /// `timeout`, the next call that finds no place opens the breaker again, as after a
    /// failed probe ([`Trigger::ProbesTimedOut`](crate::Trigger::ProbesTimedOut)), and is
    /// rejected. Without it, a probe whose call hangs keeps the breaker half-open, rejecting
    /// every other call, until the call ends or its permit is dropped.
    ///
    /// Nothing runs in the background: the probes' age is checked by the calls that find no
    /// probe place (each reads the clock then), and the verdicts of the probes given up on
    /// do not count. A probe's admission reads the clock whether or not a timeout is set, so
    /// that one set by [`reconfigure`](Breaker::reconfigure) applies to probes already out.
    ///
    /// The age checked is that of the newest probe admitted in the half-open period, which is
    /// the youngest out while every ended probe's place is taken again. After `reconfigure`
    /// lowers `half_open_probes`, the newest may have ended while older ones fill the places:
    /// those are then given up on late, by up to one `timeout`, never early. A probe admitted
    /// after that call looked is never given up on for the older ones: from the moment the
    /// call commits to the opening, a place freed meanwhile admits no one: a call that finds
    /// it finishes the opening and is rejected as open, so that none waits on the first.
    ///
    /// # Errors
    ///
    /// [`build`](Builder::build) refuses a timeout of zero or above
    /// [`MAX_PROBE_TIMEOUT`](crate::MAX_PROBE_TIMEOUT), about a year (field `probe_timeout`):
    /// a probe's age is kept modulo 2^48 µs and never reads more than about 6.7 years, so a
    /// longer timeout would never fire.
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
    ///     .probe_timeout(Duration::from_secs(2))
    ///     .clock(clock.clone())
    ///     .build()?;
    /// breaker.try_acquire().unwrap().failure();
    /// clock.advance(Duration::from_secs(10));
    /// let hung = breaker.try_acquire().expect("the probe");
    /// assert_eq!(breaker.try_acquire().unwrap_err().state(), State::HalfOpen);
    /// clock.advance(Duration::from_secs(3));
    /// // The probe has been out for 3 s: this call opens the breaker again.
    /// assert_eq!(breaker.try_acquire().unwrap_err().state(), State::Open);
    /// drop(hung);
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.config.probe_timeout = Some(timeout);
        self
    }

    /// Calls `listener` after every state transition, on the thread that made it.
    ///
    /// The listener runs after the transition is published, never under a lock or inside a
    /// retry loop, so it may call back into the breaker. A transition that a listener makes
    /// (a `reset` when the breaker opens, say) reaches every listener after the one it was
    /// made in, on the same thread. Transitions made at nearly the same time by different
    /// threads may reach listeners out of order; each carries its
    /// [`generation`](Transition::generation) to put them back in order.
    ///
    /// # Panics
    ///
    /// A panic in `listener` reaches the caller whose call made the transition, unless that
    /// caller is already unwinding (a panic in the guarded call dropped its permit, and the
    /// failure tripped the breaker): then it is caught, as a second panic would abort the
    /// process, and the other listeners are still told. A follower of shared openings
    /// ([`shared`](crate::shared)) also catches a panic from the listeners of an opening it
    /// applies (the panic hook has printed it), so that one listener's bug does not stop the
    /// following of every breaker; the opening stands.
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
            config: self.config,
            minimum_calls: self.minimum_calls,
            clock: Some(clock),
            listeners: self.listeners,
        }
    }

    /// The configuration collected so far, as [`build`](Builder::build) would apply it.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] if `minimum_calls` was set while only `consecutive_failures` is, naming
    /// `consecutive_failures` instead when that run is itself out of range (as
    /// [`build`](Builder::build) would).
    pub fn to_config(&self) -> Result<Config, ConfigError> {
        let mut config = self.config;
        if let Some(calls) = self.minimum_calls {
            match (&mut config.failure_rate, config.consecutive_failures) {
                (Some(rate), _) => rate.minimum_calls = Some(calls),
                (None, None) => {
                    let (threshold, window) = DEFAULT_FAILURE_RATE;
                    config.failure_rate = Some(FailureRateConfig {
                        threshold,
                        window: window as usize,
                        minimum_calls: Some(calls),
                    });
                }
                (None, Some(run)) => {
                    // Named in the order `build` checks the fields: the run's own range first,
                    // then this conflict, then every later field.
                    crate::config::in_range(
                        "consecutive_failures",
                        run,
                        1,
                        crate::MAX_CONSECUTIVE,
                    )?;
                    return Err(ConfigError::new(
                        "minimum_calls",
                        format!(
                            "applies to the failure-rate rule, and only consecutive_failures is set, got {calls}"
                        ),
                    ));
                }
            }
        }
        Ok(config)
    }

    /// Checks the settings and builds the breaker.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first setting out of range: a failure-rate threshold not in
    /// `(0, 1]` (or not a number), a window of 0 or above [`MAX_WINDOW`](crate::MAX_WINDOW),
    /// minimum calls of 0 or above the window, 0 consecutive failures or more than
    /// [`MAX_CONSECUTIVE`](crate::MAX_CONSECUTIVE), an open duration under a microsecond or above
    /// [`MAX_OPEN_DURATION`](crate::MAX_OPEN_DURATION), probes or a success threshold of 0 or above
    /// [`MAX_PROBES`](crate::MAX_PROBES), stripes of 0 or above [`MAX_STRIPES`](crate::MAX_STRIPES),
    /// failure records fewer than the rules look back over or above
    /// [`MAX_WINDOW`](crate::MAX_WINDOW), a slow-call limit of zero, a probe timeout of zero or
    /// above [`MAX_PROBE_TIMEOUT`](crate::MAX_PROBE_TIMEOUT), or an open
    /// back-off whose multiplier is under 1 (or not a finite number) or whose longest period is
    /// shorter than the open duration or above [`MAX_OPEN_DURATION`](crate::MAX_OPEN_DURATION).
    /// Also `minimum_calls` set while only `consecutive_failures` is (see
    /// [`to_config`](Builder::to_config)).
    pub fn build(self) -> Result<Breaker<C>, ConfigError>
    where
        C: Default,
    {
        let settings = Settings::validate(&self.to_config()?)?;
        let clock = self.clock.unwrap_or_default();
        Ok(Breaker::new(
            settings,
            clock,
            self.listeners.into_boxed_slice(),
        ))
    }
}

impl<C> fmt::Debug for Builder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.config)
            .field("minimum_calls", &self.minimum_calls)
            .field("listeners", &self.listeners.len())
            .finish_non_exhaustive()
    }
}
