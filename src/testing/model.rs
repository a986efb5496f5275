//! The breaker's semantics as a plain sequential state machine, written to be obviously right
//! rather than fast: the window is a queue of the last outcomes, the run a counter.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Outcome, State};

/// The settings the model and the breaker are both built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelConfig {
    /// Failure-rate rule: threshold, window, minimum calls.
    pub failure_rate: Option<(f64, u32, u32)>,
    /// Consecutive-failures rule.
    pub consecutive_failures: Option<u32>,
    /// Open duration.
    pub open_duration: Duration,
    /// Concurrent half-open probes.
    pub half_open_probes: u32,
    /// Probe successes that close.
    pub success_threshold: u32,
    /// Slow-call limit: a success recorded longer than this after its permit counts as a
    /// failure.
    pub slow_call: Option<Duration>,
    /// Probe timeout: while half-open with every place taken, a call that finds the newest
    /// probe out longer than this opens the breaker again.
    pub probe_timeout: Option<Duration>,
    /// Open back-off: multiplier and longest open period.
    pub open_backoff: Option<(f64, Duration)>,
}

impl ModelConfig {
    /// A builder with these rules, durations and probe settings; the clock, the stripes and
    /// success counting are left to the caller.
    pub fn builder(&self) -> crate::Builder {
        let mut builder = crate::Breaker::builder()
            .open_duration(self.open_duration)
            .half_open_probes(self.half_open_probes as usize)
            .success_threshold(self.success_threshold as usize);
        if let Some((threshold, window, minimum)) = self.failure_rate {
            builder = builder
                .failure_rate(threshold, window as usize)
                .minimum_calls(minimum as usize);
        }
        if let Some(run) = self.consecutive_failures {
            builder = builder.consecutive_failures(run as usize);
        }
        if let Some(limit) = self.slow_call {
            builder = builder.slow_call(limit);
        }
        if let Some(timeout) = self.probe_timeout {
            builder = builder.probe_timeout(timeout);
        }
        if let Some((multiplier, max)) = self.open_backoff {
            builder = builder.open_backoff(multiplier, max);
        }
        builder
    }

    /// A breaker with these settings on `clock`, counting successes (the model counts every
    /// one).
    ///
    /// # Errors
    ///
    /// The builder's [`ConfigError`](crate::ConfigError) if the settings are out of range.
    pub fn build(
        &self,
        clock: crate::ManualClock,
    ) -> Result<crate::Breaker<crate::ManualClock>, crate::ConfigError> {
        self.builder().count_successes(true).clock(clock).build()
    }
}

/// `nanos` rounded up to a whole microsecond.
fn whole_micros(nanos: u64) -> u64 {
    nanos.div_ceil(1000).saturating_mul(1000)
}

/// A permit of the model: the generation it was issued in, whether it is a probe, and when it
/// was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPermit {
    generation: u32,
    kind: Kind,
    issued_nanos: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Closed,
    Probe,
    Forced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Closed,
    Open {
        until_nanos: u64,
    },
    /// `newest`: when the newest probe was admitted, rounded up to a whole microsecond as the
    /// breaker keeps it.
    HalfOpen {
        out: u32,
        successes: u32,
        newest: u64,
    },
    ForcedOpen,
    ForcedClosed,
}

/// The reference model.
#[derive(Debug, Clone)]
pub struct ReferenceModel {
    config: ModelConfig,
    phase: Phase,
    generation: u32,
    /// The last `window` recorded outcomes, `true` for a failure.
    window: VecDeque<bool>,
    /// Outcomes recorded since the window was cleared.
    recorded: u64,
    run: u32,
    /// Failed probe rounds in a row behind the current open period.
    reopenings: u32,
    /// Counters, as in [`Metrics`](crate::Metrics).
    pub counts: ModelCounts,
}

/// The model's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ModelCounts {
    pub successes: u64,
    pub failures: u64,
    pub ignored: u64,
    pub released: u64,
    pub rejected: u64,
    pub slow_calls: u64,
    pub openings: u64,
    pub half_openings: u64,
    pub closings: u64,
}

impl ReferenceModel {
    /// A closed model with an empty window.
    pub fn new(mut config: ModelConfig) -> Self {
        if config.failure_rate.is_none() && config.consecutive_failures.is_none() {
            let (threshold, window) = crate::DEFAULT_FAILURE_RATE;
            config.failure_rate = Some((threshold, window, window));
        }
        ReferenceModel {
            config,
            phase: Phase::Closed,
            generation: 0,
            window: VecDeque::new(),
            recorded: 0,
            run: 0,
            reopenings: 0,
            counts: ModelCounts::default(),
        }
    }

    /// The state as [`Breaker::state`](crate::Breaker::state) reports it at `now_nanos`.
    pub fn state(&self, now_nanos: u64) -> State {
        match self.phase {
            Phase::Closed => State::Closed,
            Phase::Open { until_nanos } if now_nanos >= until_nanos => State::HalfOpen,
            Phase::Open { .. } => State::Open,
            Phase::HalfOpen { .. } => State::HalfOpen,
            Phase::ForcedOpen => State::ForcedOpen,
            Phase::ForcedClosed => State::ForcedClosed,
        }
    }

    /// Asks to make a call at `now_nanos`; `Err` carries the state that rejected it.
    pub fn acquire(&mut self, now_nanos: u64) -> Result<ModelPermit, State> {
        let permit = |generation, kind| ModelPermit {
            generation,
            kind,
            issued_nanos: now_nanos,
        };
        match self.phase {
            Phase::Closed => Ok(permit(self.generation, Kind::Closed)),
            Phase::ForcedClosed => Ok(permit(self.generation, Kind::Forced)),
            Phase::ForcedOpen => self.reject(State::ForcedOpen),
            Phase::Open { until_nanos } if now_nanos < until_nanos => self.reject(State::Open),
            Phase::Open { .. } => {
                self.enter(Phase::HalfOpen {
                    out: 1,
                    successes: 0,
                    newest: whole_micros(now_nanos),
                });
                self.counts.half_openings += 1;
                Ok(permit(self.generation, Kind::Probe))
            }
            Phase::HalfOpen { out, newest, .. } if out >= self.config.half_open_probes => {
                let timed_out = self.config.probe_timeout.is_some_and(|timeout| {
                    now_nanos.saturating_sub(newest) > crate::clock::saturating_nanos(timeout)
                });
                if timed_out {
                    self.open(now_nanos);
                    self.reject(State::Open)
                } else {
                    self.reject(State::HalfOpen)
                }
            }
            Phase::HalfOpen { out, successes, .. } => {
                self.phase = Phase::HalfOpen {
                    out: out + 1,
                    successes,
                    newest: whole_micros(now_nanos),
                };
                Ok(permit(self.generation, Kind::Probe))
            }
        }
    }

    fn reject(&mut self, state: State) -> Result<ModelPermit, State> {
        self.counts.rejected += 1;
        Err(state)
    }

    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        self.generation = self.generation.wrapping_add(1);
        if phase == Phase::Closed {
            self.window.clear();
            self.recorded = 0;
            self.run = 0;
        }
    }

    /// Opens for the configured period: a trip, or a failed probe round (from half-open),
    /// which backs the period off one more step if the back-off is on.
    fn open(&mut self, now_nanos: u64) {
        let backoff = self
            .config
            .open_backoff
            .map(|(multiplier, max)| crate::OpenBackoffConfig { multiplier, max });
        let after_failed_round = matches!(self.phase, Phase::HalfOpen { .. });
        let reopenings = if after_failed_round && backoff.is_some() {
            self.reopenings.saturating_add(1)
        } else {
            0
        };
        let period = crate::config::backed_off(self.config.open_duration, backoff, reopenings);
        self.open_until(now_nanos.saturating_add(crate::clock::saturating_nanos(period)));
        self.reopenings = reopenings;
    }

    fn open_until(&mut self, until: u64) {
        // The breaker keeps the deadline in whole microseconds, rounded up.
        let until_nanos = until.div_ceil(1000).saturating_mul(1000);
        self.enter(Phase::Open { until_nanos });
        self.counts.openings += 1;
    }

    /// Records `outcome` for `permit` at `now_nanos`.
    pub fn record(&mut self, permit: ModelPermit, outcome: Outcome, now_nanos: u64) {
        let slow = self.config.slow_call.is_some_and(|limit| {
            now_nanos.saturating_sub(permit.issued_nanos) > crate::clock::saturating_nanos(limit)
        });
        let outcome = if outcome == Outcome::Success && slow {
            self.counts.slow_calls += 1;
            Outcome::Failure
        } else {
            outcome
        };
        match outcome {
            Outcome::Success => self.counts.successes += 1,
            Outcome::Failure => self.counts.failures += 1,
            Outcome::Ignore => self.counts.ignored += 1,
        }
        if permit.generation != self.generation {
            return; // stale: the breaker moved on while the call was out
        }
        match (permit.kind, self.phase, outcome) {
            (Kind::Closed, Phase::Closed, Outcome::Success | Outcome::Failure) => {
                let failed = outcome == Outcome::Failure;
                if self.judge(failed) {
                    self.open(now_nanos);
                }
            }
            (Kind::Probe, Phase::HalfOpen { .. }, Outcome::Failure) => self.open(now_nanos),
            (
                Kind::Probe,
                Phase::HalfOpen {
                    out,
                    successes,
                    newest,
                },
                Outcome::Success,
            ) => {
                if successes + 1 >= self.config.success_threshold {
                    self.enter(Phase::Closed);
                    self.counts.closings += 1;
                } else {
                    self.phase = Phase::HalfOpen {
                        out: out - 1,
                        successes: successes + 1,
                        newest,
                    };
                }
            }
            (
                Kind::Probe,
                Phase::HalfOpen {
                    out,
                    successes,
                    newest,
                },
                Outcome::Ignore,
            ) => {
                self.phase = Phase::HalfOpen {
                    out: out - 1,
                    successes,
                    newest,
                };
            }
            _ => {}
        }
    }

    /// Records one outcome in the window and the run; whether a rule is met.
    fn judge(&mut self, failed: bool) -> bool {
        self.recorded += 1;
        self.run = if failed { self.run + 1 } else { 0 };
        let mut trips = matches!(self.config.consecutive_failures, Some(k) if self.run >= k);
        if let Some((threshold, window, minimum)) = self.config.failure_rate {
            self.window.push_back(failed);
            if self.window.len() > window as usize {
                self.window.pop_front();
            }
            let failures = self.window.iter().filter(|&&f| f).count();
            let held = self.window.len();
            trips |=
                self.recorded >= u64::from(minimum) && failures as f64 / held as f64 >= threshold;
        }
        trips
    }

    /// Ends `permit` without a verdict.
    pub fn release(&mut self, permit: ModelPermit) {
        self.counts.released += 1;
        if permit.generation != self.generation {
            return;
        }
        if let (
            Kind::Probe,
            Phase::HalfOpen {
                out,
                successes,
                newest,
            },
        ) = (permit.kind, self.phase)
        {
            self.phase = Phase::HalfOpen {
                out: out - 1,
                successes,
                newest,
            };
        }
    }

    /// [`Breaker::open_for`](crate::Breaker::open_for) at `now_nanos`: whether it opened.
    pub fn open_for(&mut self, duration: Duration, now_nanos: u64) -> bool {
        let opens = match self.phase {
            Phase::Closed | Phase::HalfOpen { .. } => true,
            Phase::Open { until_nanos } => now_nanos >= until_nanos,
            Phase::ForcedOpen | Phase::ForcedClosed => false,
        };
        if opens {
            self.open_until(now_nanos.saturating_add(crate::clock::saturating_nanos(duration)));
            self.reopenings = 0;
        }
        opens
    }

    /// [`Breaker::end_open_period`](crate::Breaker::end_open_period) at `now_nanos`: whether
    /// it ended a running period.
    pub fn end_open_period(&mut self, now_nanos: u64) -> bool {
        match self.phase {
            Phase::Open { until_nanos } if now_nanos < until_nanos => {
                self.phase = Phase::Open {
                    until_nanos: now_nanos,
                };
                true
            }
            _ => false,
        }
    }

    /// [`Breaker::force_open`](crate::Breaker::force_open).
    pub fn force_open(&mut self) {
        self.enter(Phase::ForcedOpen);
    }

    /// [`Breaker::force_closed`](crate::Breaker::force_closed).
    pub fn force_closed(&mut self) {
        self.enter(Phase::ForcedClosed);
    }

    /// [`Breaker::reset`](crate::Breaker::reset).
    pub fn reset(&mut self) {
        self.enter(Phase::Closed);
    }

    /// Failures in the rate window, calls in it, and the current run (zero unless closed).
    pub fn window(&self) -> (u32, u32, u32) {
        if self.phase != Phase::Closed {
            return (0, 0, 0);
        }
        let failures = self.window.iter().filter(|&&f| f).count() as u32;
        (failures, self.window.len() as u32, self.run)
    }

    /// Probes out while half-open.
    pub fn probes_out(&self) -> u32 {
        match self.phase {
            Phase::HalfOpen { out, .. } => out,
            _ => 0,
        }
    }
}
