//! The breaker's semantics as a plain sequential state machine, written to be obviously right
//! rather than fast: the window is a queue of the last outcomes, the run a counter.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{Outcome, State, TripRule};

/// The settings the model and the breaker are both built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelConfig {
    /// Failure-rate rule: threshold, window, minimum calls (0: not set, so the builder's
    /// default, the window's size).
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
    /// failure, and a closed call still out that long is judged slow at the first closed call
    /// after its bucket is due (see [`ReferenceModel`]).
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
            builder = builder.failure_rate(threshold, window as usize);
            if minimum > 0 {
                builder = builder.minimum_calls(minimum as usize);
            }
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
}

/// `config`, with the default failure-rate rule if it has no rule: what a breaker built from it
/// judges by.
pub(super) fn with_default_rule(mut config: ModelConfig) -> ModelConfig {
    if config.failure_rate.is_none() && config.consecutive_failures.is_none() {
        let (threshold, window) = crate::DEFAULT_FAILURE_RATE;
        config.failure_rate = Some((threshold, window, window));
    }
    config
}

/// `nanos` rounded up to a whole microsecond.
fn whole_micros(nanos: u64) -> u64 {
    nanos.div_ceil(1000).saturating_mul(1000)
}

/// A permit of the model: the generation it was issued in, whether it is a probe, when it was
/// issued, the slow-call limit in force then, and whether successes were counted then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPermit {
    id: u64,
    generation: u32,
    kind: Kind,
    issued_nanos: u64,
    /// The slow-call limit in force when it was issued. Issued under one, the limit in force
    /// when it ends judges it; issued without one, its verdict alone does, whatever limit
    /// comes in meanwhile.
    issued_under: Option<Duration>,
    /// Issued while successes were counted: its success counts in
    /// [`ModelCounts::successes`], whenever it ends.
    counted: bool,
}

impl ModelPermit {
    /// When it was issued, in nanoseconds of the clock.
    pub fn issued_nanos(&self) -> u64 {
        self.issued_nanos
    }

    /// The slow-call limit in force when it was issued, if any.
    pub fn issued_under(&self) -> Option<Duration> {
        self.issued_under
    }
}

/// A bucket of timed closed calls, as the breaker's ring holds it (`calls_out.rs`): it keeps
/// its place, with or without calls in it, until a sweep takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bucket {
    generation: u32,
    /// The width's log2 and the issue time's bucket number, modulo [`BUCKET_NUMBERS`].
    key: (u32, u64),
    /// The calls in it that have not ended.
    calls: Vec<u64>,
}

/// Places in the breaker's ring of buckets, per stripe (the model runs on one thread).
const PLACES: usize = 8;
/// A bucket's number is known modulo this to a sweep: it reads the latest bucket with those
/// low bits at most [`ahead`] buckets after the clock's.
const BUCKET_NUMBERS: u64 = 1 << 19;
/// A call out this many bucket widths ends without its verdict counting, and its end sweeps
/// at once.
const LONG_OUT_WIDTHS: u64 = (1 << 19) - (1 << 17);

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
    /// The id of the next permit.
    next_id: u64,
    /// Buckets of timed closed calls, each in a place of the thread's ring.
    buckets: Vec<Bucket>,
    /// Whether the successes of the permits issued from now on are counted
    /// ([`Builder::count_successes`](crate::Builder::count_successes)).
    counting: bool,
    /// Calls a sweep took (judged slow, or released with their generation): their own end
    /// records nothing.
    swept: Vec<u64>,
    /// When the next sweep is due: the earliest due time of the buckets as the last sweep left
    /// them, lowered by each bucket opened since.
    calls_out_due: u64,
    /// Counters, as in [`Metrics`](crate::Metrics).
    pub counts: ModelCounts,
    /// Every transition so far: from, to, and the open period of an opening.
    transitions: Vec<(State, State, Option<Duration>)>,
    /// Beside each transition, for a trip: the rule met, the failures it saw and the calls it
    /// judged ([`Trigger::Tripped`](crate::Trigger::Tripped)); `None` for any other.
    trip_causes: Vec<Option<(TripRule, u32, u32)>>,
}

/// The model's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ModelCounts {
    /// Successes of permits issued while successes were counted.
    pub successes: u64,
    pub failures: u64,
    pub ignored: u64,
    pub released: u64,
    pub rejected: u64,
    pub slow_calls: u64,
    pub hung_calls: u64,
    pub openings: u64,
    pub half_openings: u64,
    pub closings: u64,
}

impl ReferenceModel {
    /// A closed model with an empty window.
    pub fn new(config: ModelConfig) -> Self {
        ReferenceModel {
            config: with_default_rule(config),
            phase: Phase::Closed,
            generation: 0,
            window: VecDeque::new(),
            recorded: 0,
            run: 0,
            reopenings: 0,
            next_id: 0,
            counting: true,
            buckets: Vec::new(),
            swept: Vec::new(),
            calls_out_due: u64::MAX,
            counts: ModelCounts::default(),
            transitions: Vec::new(),
            trip_causes: Vec::new(),
        }
    }

    /// The state as [`Breaker::state`](crate::Breaker::state) reports it at `now_nanos`.
    pub fn state(&self, now_nanos: u64) -> State {
        match self.phase {
            Phase::Open { until_nanos } if now_nanos >= until_nanos => State::HalfOpen,
            phase => self.phase_state(phase),
        }
    }

    /// The state `phase` stands for, an open period taken as running.
    fn phase_state(&self, phase: Phase) -> State {
        match phase {
            Phase::Closed => State::Closed,
            Phase::Open { .. } => State::Open,
            Phase::HalfOpen { .. } => State::HalfOpen,
            Phase::ForcedOpen => State::ForcedOpen,
            Phase::ForcedClosed => State::ForcedClosed,
        }
    }

    /// When the open period ends, while open (whether or not it has ended by now).
    pub fn open_period_end(&self) -> Option<u64> {
        match self.phase {
            Phase::Open { until_nanos } => Some(until_nanos),
            _ => None,
        }
    }

    /// The moments after `now_nanos` at which a decision of the model changes with time alone,
    /// in order: the end of an open period, a sweep of the calls out falling due, the newest
    /// probe passing its timeout, and each of `held`'s closed calls passing the slow-call
    /// limit. A test that moves the clock to one of them, or just past it, finds out whether
    /// the breaker draws each line where the model does; moved at random, the clock lands on
    /// such a moment almost never.
    pub fn boundaries<'p>(
        &self,
        now_nanos: u64,
        held: impl IntoIterator<Item = &'p ModelPermit>,
    ) -> Vec<u64> {
        let nanos = crate::clock::saturating_nanos;
        let mut moments = vec![self.calls_out_due];
        match self.phase {
            Phase::Open { until_nanos } => moments.push(until_nanos),
            Phase::HalfOpen { newest, .. } => moments.extend(
                self.config
                    .probe_timeout
                    .map(|timeout| newest.saturating_add(nanos(timeout))),
            ),
            _ => {}
        }
        if let Some(limit) = self.config.slow_call {
            moments.extend(
                held.into_iter()
                    .filter(|permit| permit.issued_under.is_some())
                    .map(|permit| permit.issued_nanos.saturating_add(nanos(limit))),
            );
        }
        moments.retain(|&moment| moment > now_nanos && moment < u64::MAX);
        moments.sort_unstable();
        moments.dedup();
        moments
    }

    /// Asks to make a call at `now_nanos`; `Err` carries the state that rejected it.
    pub fn acquire(&mut self, now_nanos: u64) -> Result<ModelPermit, State> {
        let id = self.next_id;
        self.next_id += 1;
        let (issued_under, counted) = (self.config.slow_call, self.counting);
        let permit = |generation, kind| ModelPermit {
            id,
            generation,
            kind,
            issued_nanos: now_nanos,
            issued_under,
            counted,
        };
        match self.phase {
            Phase::Closed => match self.config.slow_call {
                Some(limit) => {
                    let limit = crate::clock::saturating_nanos(limit);
                    if !self.enter_call_out(id, now_nanos, limit) {
                        return self.acquire(now_nanos); // the sweep tripped it: decide again
                    }
                    Ok(permit(self.generation, Kind::Closed))
                }
                None => Ok(permit(self.generation, Kind::Closed)),
            },
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

    /// Enters closed call `id`, issued at `now` under slow-call `limit`, among the calls out,
    /// after the sweep that is due; `false` if that sweep left the breaker no longer closed.
    /// A limit too long to count in nanoseconds sweeps what is due and enters nothing.
    fn enter_call_out(&mut self, id: u64, now: u64, limit: u64) -> bool {
        if self.calls_out_due <= now && !self.sweep(now) {
            return false;
        }
        if limit == u64::MAX {
            return true;
        }
        let width = bucket_width(limit);
        // The breaker names a bucket by its number's low bits: a bucket 2^19 widths newer,
        // entered while one with the same low bits still holds a place, joins it.
        let key = (width.trailing_zeros(), (now / width) % BUCKET_NUMBERS);
        let end = end_as_read(key, now);
        let generation = self.generation;
        let held = |model: &Self| {
            model
                .buckets
                .iter()
                .position(|b| b.generation == generation && b.key == key)
        };
        if held(self).is_none() && self.buckets.len() >= PLACES {
            // No free place: the breaker sweeps at once, whatever is due, and tries again.
            self.calls_out_due = 0;
            if !self.sweep(now) {
                return false;
            }
        }
        match held(self) {
            Some(at) => self.buckets[at].calls.push(id),
            None if self.buckets.len() < PLACES => {
                self.calls_out_due = self.calls_out_due.min(end.saturating_add(limit));
                self.buckets.push(Bucket {
                    generation,
                    key,
                    calls: vec![id],
                });
            }
            None => {} // not entered: judged only when it ends
        }
        true
    }

    /// The sweep at `now`: buckets of an ended generation are freed and their calls released,
    /// buckets of this closed generation that are due are freed and their calls are slow
    /// failures, one by one until one trips the breaker, and empty buckets no call can join
    /// any more are freed. Whether the breaker is still closed after it.
    fn sweep(&mut self, now: u64) -> bool {
        let closed = self.phase == Phase::Closed;
        let limit = self
            .config
            .slow_call
            .map_or(u64::MAX, crate::clock::saturating_nanos);
        let mut next_due = u64::MAX;
        let mut hung = 0;
        let mut kept = Vec::new();
        for bucket in std::mem::take(&mut self.buckets) {
            let end = end_as_read(bucket.key, now);
            if bucket.generation != self.generation {
                self.counts.released += bucket.calls.len() as u64;
                self.swept.extend(&bucket.calls);
            } else if closed && end.saturating_add(limit) <= now {
                hung += bucket.calls.len() as u64;
                self.swept.extend(&bucket.calls);
            } else if bucket.calls.is_empty()
                && (end <= now || bucket.key.0 != bucket_width(limit).trailing_zeros())
            {
                // Freed: no call in it, and no call issued from now on belongs to it (its
                // stretch is over, or the limit now gives buckets of another width).
            } else {
                next_due = next_due.min(end.saturating_add(limit));
                kept.push(bucket);
            }
        }
        self.buckets = kept;
        self.calls_out_due = next_due;
        self.count_hung(hung, now)
    }

    /// Counts `hung` calls of this closed generation as slow failures, one by one through the
    /// rules until one trips the breaker; whether it is still closed after.
    fn count_hung(&mut self, hung: u64, now: u64) -> bool {
        self.counts.failures += hung;
        self.counts.slow_calls += hung;
        self.counts.hung_calls += hung;
        for _ in 0..hung {
            if let Some(cause) = self.judge(true) {
                self.trip(now, cause);
                return false;
            }
        }
        true
    }

    /// Takes `permit` out of the calls out as it ends at `now`: `false` if a sweep took it
    /// already, or if it has been out so long that a sweep will, and its verdict must not be
    /// recorded.
    fn leave_calls_out(&mut self, permit: ModelPermit, now: u64) -> bool {
        if let Some(at) = self.swept.iter().position(|&id| id == permit.id) {
            self.swept.swap_remove(at);
            return false;
        }
        let Some(at) = self
            .buckets
            .iter()
            .position(|bucket| bucket.calls.contains(&permit.id))
        else {
            return true; // not entered
        };
        if now.saturating_sub(permit.issued_nanos) >> self.buckets[at].key.0 < LONG_OUT_WIDTHS {
            self.buckets[at].calls.retain(|&id| id != permit.id);
            return true;
        }
        // Out too long to trust its bucket's name: it takes the whole bucket, whose calls are
        // hung (or released, if their generation is over), itself among them.
        let bucket = self.buckets.swap_remove(at);
        let taken = bucket.calls.len() as u64;
        self.swept
            .extend(bucket.calls.iter().filter(|&&id| id != permit.id));
        if bucket.generation == self.generation && self.phase == Phase::Closed {
            self.count_hung(taken, now);
        } else {
            self.counts.released += taken;
        }
        false
    }

    fn reject(&mut self, state: State) -> Result<ModelPermit, State> {
        self.counts.rejected += 1;
        Err(state)
    }

    /// Every transition so far, in order: the state it left (open, for an open period that
    /// has ended), the state it entered, and for an opening the period it opened for, as a
    /// listener is told ([`Transition`](crate::Transition)).
    pub fn transitions(&self) -> &[(State, State, Option<Duration>)] {
        &self.transitions
    }

    /// Beside each of [`transitions`](ReferenceModel::transitions), what tripped it: the rule
    /// met, the failures it saw (in the rate window, or the run's length) and the calls it
    /// judged (the rate window's calls, or the run's length), as
    /// [`Trigger::Tripped`](crate::Trigger::Tripped) tells them; `None` for a transition
    /// that is not a trip.
    pub fn trip_causes(&self) -> &[Option<(TripRule, u32, u32)>] {
        &self.trip_causes
    }

    fn enter(&mut self, phase: Phase) {
        let left = self.phase_state(self.phase);
        self.transitions.push((left, self.phase_state(phase), None));
        self.trip_causes.push(None);
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
        let after_failed_round = matches!(self.phase, Phase::HalfOpen { .. });
        let reopenings = if after_failed_round && self.config.open_backoff.is_some() {
            self.reopenings.saturating_add(1)
        } else {
            0
        };
        let period = self.backed_off(reopenings);
        self.open_until(now_nanos, period);
        self.reopenings = reopenings;
    }

    /// The open period after `reopenings` failed rounds in a row, from the documented rule:
    /// the open duration times the multiplier to that power, at least the open duration and
    /// at most the longest. Written here, not taken from the breaker's `config::backed_off`,
    /// so that a fault in that function makes the two disagree.
    fn backed_off(&self, reopenings: u32) -> Duration {
        let base = self.config.open_duration;
        let Some((multiplier, max)) = self.config.open_backoff else {
            return base;
        };
        if reopenings == 0 {
            return base;
        }
        let power = multiplier.powi(i32::try_from(reopenings).unwrap_or(i32::MAX));
        let seconds = base.as_secs_f64() * power;
        if !seconds.is_finite() || seconds >= max.as_secs_f64() {
            return max;
        }
        Duration::from_secs_f64(seconds).max(base).min(max)
    }

    /// Opens at `now_nanos` for `period`.
    fn open_until(&mut self, now_nanos: u64, period: Duration) {
        let until = now_nanos.saturating_add(crate::clock::saturating_nanos(period));
        // The breaker keeps the deadline in whole microseconds, rounded up.
        let until_nanos = until.div_ceil(1000).saturating_mul(1000);
        self.enter(Phase::Open { until_nanos });
        if let Some(opening) = self.transitions.last_mut() {
            opening.2 = Some(period);
        }
        self.counts.openings += 1;
    }

    /// Records `outcome` for `permit` at `now_nanos`.
    pub fn record(&mut self, permit: ModelPermit, outcome: Outcome, now_nanos: u64) {
        if !self.leave_calls_out(permit, now_nanos) {
            return;
        }
        // Judged by the limit in force now, if it was issued under one.
        let slow = permit.issued_under.is_some()
            && self.config.slow_call.is_some_and(|limit| {
                now_nanos.saturating_sub(permit.issued_nanos)
                    > crate::clock::saturating_nanos(limit)
            });
        let outcome = if outcome == Outcome::Success && slow {
            self.counts.slow_calls += 1;
            Outcome::Failure
        } else {
            outcome
        };
        match outcome {
            Outcome::Success => self.counts.successes += u64::from(permit.counted),
            Outcome::Failure => self.counts.failures += 1,
            Outcome::Ignore => self.counts.ignored += 1,
        }
        if permit.generation != self.generation {
            return; // stale: the breaker moved on while the call was out
        }
        match (permit.kind, self.phase, outcome) {
            (Kind::Closed, Phase::Closed, Outcome::Success | Outcome::Failure) => {
                let failed = outcome == Outcome::Failure;
                if let Some(cause) = self.judge(failed) {
                    self.trip(now_nanos, cause);
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

    /// Opens for a trip whose rule and counts are `cause`.
    fn trip(&mut self, now_nanos: u64, cause: (TripRule, u32, u32)) {
        self.open(now_nanos);
        if let Some(last) = self.trip_causes.last_mut() {
            *last = Some(cause);
        }
    }

    /// Records one outcome in the window and the run; the rule met, if one is, with the
    /// failures it saw and the calls it judged. The run is judged first, as the breaker does.
    fn judge(&mut self, failed: bool) -> Option<(TripRule, u32, u32)> {
        self.recorded += 1;
        self.run = if failed { self.run + 1 } else { 0 };
        let run_met = match self.config.consecutive_failures {
            Some(k) if self.run >= k => Some((TripRule::ConsecutiveFailures, k, k)),
            _ => None,
        };
        let mut rate_met = None;
        if let Some((threshold, window, minimum)) = self.config.failure_rate {
            // A success in a full window leaves its rate at most where the previous outcome
            // left it, so it trips nothing: the window judges only failures once full, which
            // matters once the threshold can be lowered while it is.
            let judged = failed || self.recorded <= u64::from(window);
            self.window.push_back(failed);
            if self.window.len() > window as usize {
                self.window.pop_front();
            }
            let failures = self.window.iter().filter(|&&f| f).count();
            let held = self.window.len();
            // Not set, the minimum is the window: the documented default.
            let minimum = if minimum == 0 { window } else { minimum };
            if judged
                && self.recorded >= u64::from(minimum)
                && failures as f64 / held as f64 >= threshold
            {
                rate_met = Some((TripRule::FailureRate, failures as u32, held as u32));
            }
        }
        run_met.or(rate_met)
    }

    /// Ends `permit` without a verdict, at `now_nanos`.
    pub fn release(&mut self, permit: ModelPermit, now_nanos: u64) {
        if !self.leave_calls_out(permit, now_nanos) {
            return;
        }
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
            self.open_until(now_nanos, duration);
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

    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure) to `config`, whose rules are
    /// those in force: the open duration and back-off apply from the next opening, the probe
    /// settings and the probe timeout from the next decision that reads them, and the
    /// slow-call limit judges the calls out that were issued under a limit (see
    /// [`ModelPermit`]) when they end, and the buckets of calls out at the next sweep, which
    /// the next timed call makes.
    ///
    /// # Panics
    ///
    /// If `config` changes a rule (the failure rate or the run): what the window then holds
    /// is documented on `reconfigure` case by case, and not modelled.
    pub fn reconfigure(&mut self, config: ModelConfig) {
        let next = with_default_rule(config);
        assert_eq!(
            (next.failure_rate, next.consecutive_failures),
            (self.config.failure_rate, self.config.consecutive_failures),
            "a rule changed without a reset: not modelled"
        );
        self.config = next;
        self.calls_out_due = 0;
    }

    /// Whether the model is closed and judging by its rules (not forced closed): where a
    /// rule changed without a reset is not modelled.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure) to `config`, rules included, of
    /// a breaker that is not closed: the window, cleared when it next closes, fills under the
    /// new rules exactly, as the breaker documents; the rest as after
    /// [`reconfigure`](ReferenceModel::reconfigure).
    ///
    /// # Panics
    ///
    /// If the model is closed ([`is_closed`](ReferenceModel::is_closed)).
    pub fn reconfigure_unless_closed(&mut self, config: ModelConfig) {
        assert!(
            !self.is_closed(),
            "a rule changed without a reset while closed: not modelled"
        );
        self.config = with_default_rule(config);
        self.calls_out_due = 0;
    }

    /// Whether the rate window, if there is a rate rule, holds as many calls as it is long:
    /// where a closed model follows a changed threshold or minimum
    /// ([`reconfigure_rules_while_closed`](ReferenceModel::reconfigure_rules_while_closed)).
    pub fn is_full(&self) -> bool {
        self.config
            .failure_rate
            .is_none_or(|(_, window, _)| self.recorded >= u64::from(window))
    }

    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure) to `config` of a closed breaker,
    /// without a reset, where `reconfigure` documents no departure from the new rules: the
    /// window holds what it held and judges by `config` from the next outcome on, and nothing
    /// trips until then. `config` may differ from the configuration in force in:
    ///
    /// - the run: added, removed (if a rate rule stays), or changed, at any time;
    /// - the rate rule's threshold and minimum, once the window is full
    ///   ([`is_full`](ReferenceModel::is_full)): while it fills, the breaker judges its first
    ///   calls by the rule in force when it reaches the minimum and when it fills;
    /// - the rate rule removed, if a run stays: there is then no rate window to show;
    ///
    /// and in the settings [`reconfigure`](ReferenceModel::reconfigure) takes.
    ///
    /// # Panics
    ///
    /// If the model is not closed, or `config` changes the rules in any other way: a rate
    /// rule added, its window's length changed, or its threshold or minimum changed while it
    /// fills.
    pub fn reconfigure_rules_while_closed(&mut self, config: ModelConfig) {
        assert!(
            self.is_closed(),
            "not closed: use reconfigure_unless_closed"
        );
        let next = with_default_rule(config);
        let window = |config: &ModelConfig| config.failure_rate.map(|(_, window, _)| window);
        match (self.config.failure_rate, next.failure_rate) {
            (_, None) => self.window.clear(),
            (Some(_), Some(_)) if window(&self.config) == window(&next) => assert!(
                self.is_full() || self.config.failure_rate == next.failure_rate,
                "a threshold or minimum changed while the window fills: not modelled"
            ),
            _ => panic!("a rate window added or resized while closed: not modelled"),
        }
        self.config = next;
        self.calls_out_due = 0;
    }

    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure) to `config`, then
    /// [`Breaker::reset`](crate::Breaker::reset): the window fills again from empty, judged
    /// by the new rules exactly, as the breaker documents. Calls out are judged as after
    /// [`reconfigure`](ReferenceModel::reconfigure), in a generation that has ended.
    pub fn reconfigure_and_reset(&mut self, config: ModelConfig) {
        self.config = with_default_rule(config);
        // The calls out are due by the limit: the next timed call sweeps, so that due times
        // follow a new one.
        self.calls_out_due = 0;
        self.reset();
    }

    /// Counts successes, or stops, from the next permit on: [`Breaker::reconfigure`] with
    /// `count_successes` (or the breaker built so). The successes of permits issued while
    /// counting are counted whenever they end, and the count goes on from where it stopped.
    ///
    /// [`Breaker::reconfigure`]: crate::Breaker::reconfigure
    pub fn set_counting(&mut self, on: bool) {
        self.counting = on;
    }

    /// Whether successes are counted, as [`Metrics::successes`](crate::Metrics::successes)
    /// reports them: `None` while not.
    pub fn counting(&self) -> bool {
        self.counting
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

    /// Whether `permit`'s call is out in a bucket of the current generation, for a sweep to
    /// judge if it hangs: a closed call entered when it was issued (there was a free place),
    /// not yet ended nor taken by a sweep.
    pub fn is_in_a_bucket(&self, permit: &ModelPermit) -> bool {
        self.buckets
            .iter()
            .any(|bucket| bucket.generation == self.generation && bucket.calls.contains(&permit.id))
    }

    /// Probes out while half-open.
    pub fn probes_out(&self) -> u32 {
        match self.phase {
            Phase::HalfOpen { out, .. } => out,
            _ => 0,
        }
    }
}

/// The width of the breaker's buckets of calls out under a slow-call `limit`: the largest power
/// of two no more than half the limit (1 below 4), in nanoseconds.
pub(crate) fn bucket_width(limit: u64) -> u64 {
    if limit < 4 {
        1
    } else {
        1u64 << (63 - (limit / 2).leading_zeros())
    }
}

/// How many buckets after the clock's a sweep reads a bucket as ahead (a clock difference
/// between cores) rather than wrapped: about a millisecond, from 2 to 2^16 buckets.
fn ahead(shift: u32) -> u64 {
    ((1u64 << 20) >> shift.min(63)).clamp(2, 1 << 16)
}

/// The end of the stretch of time of bucket `key` (shift, number) as a sweep at `now` reads
/// it: the latest bucket with the same number modulo [`BUCKET_NUMBERS`] and at most two
/// buckets after `now`'s (the same bucket unless it is 2^19 buckets old).
fn end_as_read((shift, number): (u32, u64), now: u64) -> u64 {
    let latest = i128::from(now >> shift) + i128::from(ahead(shift));
    let back = (latest - i128::from(number)).rem_euclid(i128::from(BUCKET_NUMBERS));
    let read = (latest - back).max(0) as u128;
    (((read + 1) << shift).min(u128::from(u64::MAX))) as u64
}
