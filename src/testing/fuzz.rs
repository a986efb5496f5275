//! The fuzz targets' harnesses: each decodes its input from raw bytes and panics when the
//! breaker breaks a promise. The targets in `fuzz/` call them with what libFuzzer generates;
//! `tests/fuzz_corpus.rs` calls them with every saved input, so a finding stays a test.
//!
//! Decoding never fails: an input that runs out of bytes reads as zeros (that is what
//! [`Unstructured`] does), so every byte string is a valid input and the fuzzer spends no time
//! on rejected ones.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use arbitrary::{Result as DecodeResult, Unstructured};

use super::differential::{Layout, Op, run_differential_laid_out};
use super::model::ModelConfig;
use crate::{
    Breaker, Builder, MAX_CONSECUTIVE, MAX_OPEN_DURATION, MAX_PROBES, MAX_STRIPES, MAX_WINDOW,
    ManualClock, Outcome, Permit, State, Transition, Trigger,
};

/// Most operations one input runs: enough to walk every transition several times, few enough
/// that one run stays under a millisecond.
const MAX_OPS: usize = 400;

/// A breaker and the reference model, on one configuration and one operation sequence, must
/// decide alike at every step ([`run_differential_laid_out`]).
///
/// The configuration is decoded within the builder's ranges (small windows and durations,
/// where the interesting transitions are close together); `fuzz_configuration` covers the
/// rest of the range.
///
/// # Panics
///
/// On the first disagreement, with the configuration, the operations and what differed.
pub fn fuzz_differential(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let (config, ops) = decode_config(&mut u)
        .and_then(|config| Ok((config, decode_ops(&mut u, MAX_OPS)?)))
        .unwrap_or_else(|_| (small_config_default(), Vec::new()));
    // Inputs of odd length run on the stripe that threads without one of their own share (the
    // length, so that the decoding of saved inputs stays as it was).
    let shared_stripe = data.len() % 2 == 1;
    for (windows, per_thread_windows, count_successes) in [
        ("one window", false, true),
        ("a window per thread", true, true),
        ("successes not counted", false, false),
    ] {
        let layout = Layout {
            per_thread_windows,
            count_successes,
            shared_stripe,
            ..Layout::default()
        };
        match run_differential_laid_out(&config, layout, &ops) {
            Ok(true) => {}
            Ok(false) => panic!("the builder refused a configuration in range: {config:?}"),
            Err(mismatch) => panic!(
                "{windows}: {mismatch}\nconfig: {config:?}\nlayout: {layout:?}\nops: {ops:?}"
            ),
        }
    }
}

/// Arbitrary values for every builder setting, NaN and infinities included: the builder must
/// return an error exactly when a setting is out of its documented range, and never panic. A
/// breaker it builds must then agree with the reference model on a short operation sequence.
///
/// # Panics
///
/// When the builder panics, accepts a setting out of range, refuses one in range, or builds a
/// breaker that disagrees with the reference model.
pub fn fuzz_configuration(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let settings = RawSettings::decode(&mut u).unwrap_or_default();
    let ops = decode_ops(&mut u, 64).unwrap_or_default();
    let built = settings
        .apply(Breaker::builder())
        .clock(ManualClock::new())
        .build();
    match (built, settings.expected()) {
        (Ok(breaker), Ok(model)) => {
            assert!(breaker.memory_footprint() > 0);
            // The same settings again, now through the differential harness, with the ops;
            // inputs of odd length on the stripe that threads without one share.
            let layout = Layout {
                stripes: settings.stripes,
                failure_records: settings.failure_records,
                per_thread_windows: settings.per_thread_windows,
                count_successes: true,
                shared_stripe: data.len() % 2 == 1,
                turns: None,
            };
            match run_differential_laid_out(&model, layout, &ops) {
                Ok(true) => {}
                Ok(false) => {
                    panic!("the harness's builder refused what this one built: {settings:?}")
                }
                Err(mismatch) => panic!("{mismatch}\nsettings: {settings:?}\nops: {ops:?}"),
            }
        }
        (Err(error), Err(field)) => {
            assert_eq!(error.field(), field, "{error} for {settings:?}");
            assert!(!error.to_string().is_empty());
        }
        (Ok(_), Err(field)) => panic!("built, but {field} is out of range: {settings:?}"),
        (Err(error), Ok(_)) => panic!("refused a valid configuration ({error}): {settings:?}"),
    }
}

/// Splits decoded operations over two real threads sharing one breaker and clock, and checks
/// what must hold however they interleave: no more probes out than allowed, every permit
/// counted once by how it ended, transitions that chain, counters that agree with the
/// transitions, a quiet bit that is never left set over a failure, and a breaker that is not
/// stuck when the threads are done.
///
/// The input's length picks the breaker's kind beside its configuration: stripes enough for
/// one thread or both, whether it counts successes, and one window or one per thread. A
/// breaker that does not count successes lets `call`'s healthy successes skip the window while
/// the state word is quiet (`src/quiet.rs`); one that counts them records every success, so
/// that each permit can be matched to its counter.
///
/// # Panics
///
/// When one of those fails.
pub fn fuzz_two_threads(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let decoded = decode_config(&mut u).and_then(|config| {
        let first = decode_ops(&mut u, MAX_OPS / 2)?;
        let second = decode_ops(&mut u, MAX_OPS / 2)?;
        Ok((config, [first, second]))
    });
    let (config, lists) = decoded.unwrap_or_else(|_| (small_config_default(), Default::default()));
    let clock = ManualClock::new();
    // A channel rather than a shared vector: the listener runs on both threads, and the
    // events are read only after both have joined.
    let (send_event, events) = mpsc::channel::<Transition>();
    let counts_successes = (data.len() / 3).is_multiple_of(2);
    let breaker = config
        .builder()
        .count_successes(counts_successes)
        .per_thread_windows((data.len() / 6) % 2 == 1)
        .stripes(1 + (data.len() % 3)) // 1: one thread shares; 2, 3: both own a stripe
        .on_transition(move |t| {
            send_event
                .send(*t)
                .expect("the receiver outlives the breaker")
        })
        .clock(clock.clone())
        .build()
        .expect("configuration in range");
    let tally = Tally::new(config);
    std::thread::scope(|scope| {
        for ops in &lists {
            let (breaker, clock, tally) = (&breaker, &clock, &tally);
            scope.spawn(move || run_thread(breaker, clock, ops, tally));
        }
    });
    let seen = *tally.configs.lock().unwrap();

    let metrics = breaker.metrics();
    let granted = |n: usize| tally.granted[n].load(Ordering::Relaxed);
    // A success recorded too late is counted as a failure, and as a slow call; a call judged
    // while still out (hung) is one too, whatever its end said.
    assert!(metrics.hung_calls <= metrics.slow_calls, "{metrics:?}");
    assert!(
        metrics.slow_calls - metrics.hung_calls <= granted(0),
        "{metrics:?}"
    );
    assert!(
        seen.any_slow_call_limit || metrics.slow_calls == 0,
        "slow calls without a limit: {metrics:?}"
    );
    // By how each permit ended: success (known only when counted), failure, ignored, released.
    let ended = [
        // A success recorded too late is a slow call; one judged while still out is a hung
        // call, whatever its end said.
        metrics
            .successes
            .map(|successes| successes + metrics.slow_calls - metrics.hung_calls),
        Some(metrics.failures - metrics.slow_calls),
        Some(metrics.ignored),
        Some(metrics.released),
    ];
    assert_eq!(metrics.successes.is_some(), counts_successes, "{metrics:?}");
    if counts_successes {
        assert_eq!(
            ended.iter().flatten().sum::<u64>() + metrics.hung_calls,
            (0..4).map(granted).sum::<u64>(),
            "every permit ends in exactly one counter: {metrics:?}"
        );
    }
    if metrics.hung_calls == 0 && !seen.any_slow_call_limit {
        for (kind, count) in ended.iter().enumerate() {
            if let Some(count) = count {
                assert_eq!(
                    *count,
                    granted(kind),
                    "every permit ends in the counter of its verdict ({kind}): {metrics:?}"
                );
            }
        }
    } else {
        // Calls a sweep took (judged hung, or released with their generation) end with a
        // verdict that is not counted again.
        for (kind, count) in ended.iter().enumerate() {
            if let Some(count) = count {
                assert!(*count <= granted(kind) + metrics.released, "{metrics:?}");
            }
        }
    }
    assert_eq!(metrics.rejected, tally.rejected.load(Ordering::Relaxed));
    assert_eq!(metrics.probes_out, 0, "every permit has ended: {metrics:?}");

    // The transitions, put in generation order, must form one chain from closed.
    let mut events: Vec<Transition> = events.try_iter().collect();
    let state = super::assert_one_chain(&mut events);
    let count = |to: State| {
        events
            .iter()
            .filter(|e| e.to == to && e.trigger != Trigger::Manual)
            .count() as u64
    };
    assert_eq!(
        (metrics.openings, metrics.half_openings, metrics.closings),
        (
            count(State::Open),
            count(State::HalfOpen),
            count(State::Closed)
        ),
        "counters disagree with the transitions announced"
    );
    let reported = match (state, metrics.state) {
        (State::Open, State::HalfOpen) => State::Open, // the open period has ended
        (_, reported) => reported,
    };
    assert_eq!(
        reported, state,
        "the state is not where the last transition left it"
    );
    if state == State::Closed {
        assert!(
            metrics.window_failures <= metrics.window_calls,
            "{metrics:?}"
        );
    }
    // The quiet bit says every window is clean: nothing in view for a rule to judge.
    if super::is_quiet(&breaker) {
        assert_eq!(
            (metrics.window_failures, metrics.consecutive_failures),
            (0, 0),
            "the quiet bit is set over a failure: {metrics:?}"
        );
    }

    // Not stuck: with every permit ended and the open period over, a call gets through. (The
    // end of an open period is kept in whole microseconds, rounded up: hence the extra one.
    // An opening from `OpenFor`, or one backed off after failed probes, may be longer than
    // the configured one, and a reconfiguration may have lengthened it.)
    let longest_opening = seen
        .longest_opening
        .max(Duration::from_micros(u64::from(LONGEST_OPEN_FOR)));
    clock.advance(longest_opening + Duration::from_micros(1));
    if !matches!(state, State::ForcedOpen) {
        assert!(
            breaker.try_acquire().is_ok(),
            "stuck in {state}: {metrics:?}"
        );
    }
}

/// What the two threads of [`fuzz_two_threads`] were granted, by how the permit ended
/// (success, failure, ignore, release), how often they were rejected, and the configurations
/// they put in force.
struct Tally {
    granted: [AtomicU64; 4],
    rejected: AtomicU64,
    /// The most probes any configuration in force allowed, raised before a reconfiguration
    /// applies, so that a thread that finds more probes out than that has found a bug
    /// (`SeqCst`: a test's bookkeeping, ordered with the breaker's own atomics).
    most_probes: AtomicU32,
    configs: Mutex<ConfigsSeen>,
    /// The failure records the breaker keeps, which no rule put in force may look back past.
    failure_records: u32,
}

/// The configurations a run of [`fuzz_two_threads`] put in force: the one in force now, and
/// what the checks after the run need of all of them.
#[derive(Debug, Clone, Copy)]
struct ConfigsSeen {
    in_force: ModelConfig,
    any_slow_call_limit: bool,
    /// The longest open period one of them can open for, backed off or not.
    longest_opening: Duration,
}

impl ConfigsSeen {
    fn seeing(mut self, config: ModelConfig) -> Self {
        self.in_force = config;
        self.any_slow_call_limit |= config.slow_call.is_some();
        self.longest_opening = self
            .longest_opening
            .max(config.open_duration)
            .max(config.open_backoff.map_or(Duration::ZERO, |(_, max)| max));
        self
    }
}

impl Tally {
    fn new(config: ModelConfig) -> Self {
        let none = ConfigsSeen {
            in_force: config,
            any_slow_call_limit: false,
            longest_opening: Duration::ZERO,
        };
        Tally {
            granted: Default::default(),
            rejected: AtomicU64::new(0),
            most_probes: AtomicU32::new(config.half_open_probes),
            configs: Mutex::new(none.seeing(config)),
            failure_records: super::differential::failure_records_by_default(&config),
        }
    }

    /// Puts in force on `breaker` the variation of the configuration in force that `pick`
    /// chooses beside the rules ([`Op::Reconfigure`]), racing the other thread's calls.
    fn reconfigure(&self, breaker: &Breaker<ManualClock>, pick: u8) {
        self.put_in_force(breaker, |in_force| {
            super::differential::varied_beside_the_rules(in_force, pick)
        });
    }

    /// Puts in force on `breaker` the variation of the configuration in force that `pick`
    /// chooses, a rule included ([`Op::ReconfigureAndReset`]'s), without a reset, racing the
    /// other thread's calls.
    fn reconfigure_rules(&self, breaker: &Breaker<ManualClock>, pick: u8) {
        self.put_in_force(breaker, |in_force| {
            super::differential::varied(in_force, pick, self.failure_records)
        });
    }

    /// Puts in force on `breaker` what `vary` makes of the configuration in force, noting it
    /// first (the probes it allows before any call can find them out).
    fn put_in_force(
        &self,
        breaker: &Breaker<ManualClock>,
        vary: impl FnOnce(&ModelConfig) -> ModelConfig,
    ) {
        let mut seen = self.configs.lock().unwrap();
        let next = vary(&seen.in_force);
        self.most_probes
            .fetch_max(next.half_open_probes, Ordering::SeqCst);
        *seen = seen.seeing(next);
        if let Err(refused) = super::differential::reconfigure(breaker, &next, false) {
            panic!("{refused}");
        }
    }
}

fn run_thread(breaker: &Breaker<ManualClock>, clock: &ManualClock, ops: &[Op], tally: &Tally) {
    let end = |permit: Permit<'_, ManualClock>, how: usize| {
        match how {
            0 => permit.success(),
            1 => permit.failure(),
            2 => permit.ignore(),
            _ => drop(permit),
        }
        tally.granted[how].fetch_add(1, Ordering::Relaxed);
    };
    let mut held = Vec::new();
    for &op in ops {
        match op {
            Op::Acquire => match breaker.try_acquire() {
                Ok(permit) => {
                    let out = breaker.metrics().probes_out;
                    let allowed = tally.most_probes.load(Ordering::SeqCst);
                    assert!(out <= allowed, "{out} probes out, {allowed} allowed");
                    held.push(permit);
                }
                Err(_) => {
                    tally.rejected.fetch_add(1, Ordering::Relaxed);
                }
            },
            Op::Record(index, outcome) if !held.is_empty() => {
                let permit = held.swap_remove(index % held.len());
                end(permit, outcome as usize);
            }
            Op::Release(index) if !held.is_empty() => end(held.swap_remove(index % held.len()), 3),
            Op::Record(..) | Op::Release(_) => {}
            Op::Call(outcome) => match breaker.call_with(|_| outcome, || Ok::<(), ()>(())) {
                Ok(()) => {
                    tally.granted[outcome as usize].fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    tally.rejected.fetch_add(1, Ordering::Relaxed);
                }
            },
            Op::Advance(micros) => clock.advance(Duration::from_micros(u64::from(micros))),
            Op::AdvanceNanos(nanos) => clock.advance(Duration::from_nanos(u64::from(nanos))),
            Op::AdvanceToTimeWrap(micros) => {
                let now = crate::Clock::now_nanos(clock);
                clock.advance(super::differential::to_before_time_wrap(now, micros));
            }
            // No model here to name the moments ahead: a step of up to 30 µs, to the
            // nanosecond.
            Op::AdvanceToBoundary(index) => {
                clock.advance(Duration::from_nanos(index as u64 % 30_000 + 1));
            }
            // No model here to vary the configuration by: the one in force again, racing the
            // other thread's calls, then a reset.
            Op::ReconfigureAndReset(_) => {
                breaker
                    .reconfigure(breaker.config())
                    .expect("the configuration in force is valid");
                breaker.reset();
            }
            Op::Reconfigure(pick) => tally.reconfigure(breaker, pick),
            // No model here to say whether the breaker is closed: the rules change whatever
            // its state, racing the other thread's calls, which the checks after the run hold
            // to their promises all the same.
            Op::ReconfigureUnlessClosed(pick) | Op::ReconfigureRulesWhileClosed(pick) => {
                tally.reconfigure_rules(breaker, pick);
            }
            Op::ForceOpen => breaker.force_open(),
            Op::ForceClosed => breaker.force_closed(),
            Op::Reset => breaker.reset(),
            Op::OpenFor(micros) => {
                let _ = breaker.open_for(Duration::from_micros(u64::from(micros)));
            }
            Op::EndOpenPeriod => {
                breaker.end_open_period();
            }
        }
    }
    for permit in held {
        end(permit, 2);
    }
}

/// A configuration inside the builder's ranges, small enough that a few hundred operations
/// walk through every state.
fn decode_config(u: &mut Unstructured<'_>) -> DecodeResult<ModelConfig> {
    const THRESHOLDS: [f64; 12] = [
        0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.5, 0.6, 0.7, 0.75, 0.9, 1.0,
    ];
    let failure_rate = if u.ratio(4, 5)? {
        let threshold = if u.arbitrary()? {
            *u.choose(&THRESHOLDS)?
        } else {
            f64::from(u.int_in_range(1u32..=1000)?) / 1000.0
        };
        let window = u.int_in_range(1u32..=40)?;
        // 0 leaves it unset (`ModelConfig::failure_rate`).
        let minimum = u.int_in_range(0..=window)?;
        Some((threshold, window, minimum))
    } else {
        None
    };
    let consecutive_failures = if u.arbitrary()? {
        Some(u.int_in_range(1u32..=8)?)
    } else {
        None
    };
    let open_duration = Duration::from_nanos(u.int_in_range(1_000u64..=60_000)?);
    Ok(ModelConfig {
        failure_rate,
        consecutive_failures,
        open_duration,
        half_open_probes: u.int_in_range(1u32..=4)?,
        success_threshold: u.int_in_range(1u32..=4)?,
        slow_call: if u.arbitrary()? {
            Some(Duration::from_nanos(u.int_in_range(1u64..=40_000)?))
        } else {
            None
        },
        probe_timeout: if u.arbitrary()? {
            Some(Duration::from_nanos(u.int_in_range(1u64..=40_000)?))
        } else {
            None
        },
        open_backoff: if u.arbitrary()? {
            // Multipliers from 1 to 4 in hundredths, and a longest period of up to 20 times
            // the first: several rounds back off before the longest is reached.
            let multiplier = f64::from(u.int_in_range(100u32..=400)?) / 100.0;
            let max = open_duration * u.int_in_range(1u32..=20)?;
            Some((multiplier, max))
        } else {
            None
        },
    })
}

fn small_config_default() -> ModelConfig {
    ModelConfig {
        open_backoff: None,
        failure_rate: None,
        consecutive_failures: Some(1),
        open_duration: Duration::from_micros(10),
        half_open_probes: 1,
        success_threshold: 1,
        slow_call: None,
        probe_timeout: None,
    }
}

/// The longest opening an [`Op::OpenFor`] asks for, in microseconds.
const LONGEST_OPEN_FOR: u32 = 30;

/// Up to `max` operations, weighted so that permits are asked for and ended about as often as
/// each other, the clock moves often, and manual transitions are rare.
fn decode_ops(u: &mut Unstructured<'_>, max: usize) -> DecodeResult<Vec<Op>> {
    let mut ops = Vec::new();
    while ops.len() < max && !u.is_empty() {
        let op = match u.int_in_range(0u8..=99)? {
            0..=21 => Op::Acquire,
            22..=29 => Op::Call(match u.int_in_range(0u8..=9)? {
                0..=5 => Outcome::Success,
                6..=8 => Outcome::Failure,
                _ => Outcome::Ignore,
            }),
            30..=53 => Op::Record(usize::from(u.arbitrary::<u8>()?), Outcome::Success),
            54..=67 => Op::Record(usize::from(u.arbitrary::<u8>()?), Outcome::Failure),
            68..=71 => Op::Record(usize::from(u.arbitrary::<u8>()?), Outcome::Ignore),
            72..=77 => Op::Release(usize::from(u.arbitrary::<u8>()?)),
            78..=90 => Op::Advance(u.int_in_range(1u32..=30)?),
            91..=92 => Op::AdvanceToBoundary(usize::from(u.arbitrary::<u8>()?)),
            93..=94 => Op::AdvanceNanos(u.int_in_range(1u32..=999)?),
            // Split so that inputs saved before `Reconfigure`, `ReconfigureUnlessClosed` and
            // `ReconfigureRulesWhileClosed` came still decode as they did but for them.
            95 => match u.arbitrary::<u8>()? {
                0..=95 => Op::Reset,
                96..=111 => Op::ReconfigureUnlessClosed(u.arbitrary()?),
                112..=127 => Op::ReconfigureRulesWhileClosed(u.arbitrary()?),
                128..=191 => Op::Reconfigure(u.arbitrary()?),
                pick => Op::ReconfigureAndReset(pick),
            },
            96 => Op::OpenFor(u.int_in_range(1..=LONGEST_OPEN_FOR)?),
            97 => Op::ForceOpen,
            98 => Op::EndOpenPeriod,
            _ => Op::ForceClosed,
        };
        ops.push(op);
    }
    Ok(ops)
}

/// Everything [`fuzz_configuration`] hands the builder; `None` leaves a setting alone.
#[derive(Debug, Default, Clone, Copy)]
struct RawSettings {
    failure_rate: Option<(f64, usize)>,
    minimum_calls: Option<usize>,
    consecutive_failures: Option<usize>,
    open_duration: Option<Duration>,
    half_open_probes: Option<usize>,
    success_threshold: Option<usize>,
    stripes: Option<usize>,
    failure_records: Option<usize>,
    slow_call: Option<Duration>,
    probe_timeout: Option<Duration>,
    open_backoff: Option<(f64, Duration)>,
    per_thread_windows: bool,
}

impl RawSettings {
    fn decode(u: &mut Unstructured<'_>) -> DecodeResult<Self> {
        Ok(RawSettings {
            failure_rate: if u.arbitrary()? {
                Some((threshold(u)?, count(u, MAX_WINDOW)?))
            } else {
                None
            },
            minimum_calls: option(u, |u| count(u, MAX_WINDOW))?,
            consecutive_failures: option(u, |u| count(u, MAX_CONSECUTIVE))?,
            open_duration: option(u, duration)?,
            half_open_probes: option(u, |u| count(u, MAX_PROBES))?,
            success_threshold: option(u, |u| count(u, MAX_PROBES))?,
            stripes: option(u, |u| count(u, MAX_STRIPES))?,
            failure_records: option(u, |u| count(u, MAX_WINDOW))?,
            slow_call: option(u, duration)?,
            probe_timeout: option(u, duration)?,
            open_backoff: option(u, |u| Ok((multiplier(u)?, duration(u)?)))?,
            per_thread_windows: u.arbitrary()?,
        })
    }

    fn apply(&self, mut builder: Builder) -> Builder {
        if let Some((threshold, window)) = self.failure_rate {
            builder = builder.failure_rate(threshold, window);
        }
        if let Some(calls) = self.minimum_calls {
            builder = builder.minimum_calls(calls);
        }
        if let Some(failures) = self.consecutive_failures {
            builder = builder.consecutive_failures(failures);
        }
        if let Some(duration) = self.open_duration {
            builder = builder.open_duration(duration);
        }
        if let Some(probes) = self.half_open_probes {
            builder = builder.half_open_probes(probes);
        }
        if let Some(successes) = self.success_threshold {
            builder = builder.success_threshold(successes);
        }
        if let Some(stripes) = self.stripes {
            builder = builder.stripes(stripes);
        }
        if let Some(records) = self.failure_records {
            builder = builder.failure_records(records);
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
        builder.per_thread_windows(self.per_thread_windows)
    }

    /// The builder's documented rules, written out independently of it: the equivalent
    /// reference-model configuration, or the field the builder must name in its error.
    fn expected(&self) -> Result<ModelConfig, &'static str> {
        let within = |value: usize, max: u32| (1..=max as usize).contains(&value);
        if let Some(failures) = self.consecutive_failures {
            if !within(failures, MAX_CONSECUTIVE) {
                return Err("consecutive_failures");
            }
        }
        let rate = match (self.failure_rate, self.consecutive_failures) {
            (Some(rate), _) => Some(rate),
            (None, None) => Some((
                crate::DEFAULT_FAILURE_RATE.0,
                crate::DEFAULT_FAILURE_RATE.1 as usize,
            )),
            (None, Some(_)) if self.minimum_calls.is_some() => return Err("minimum_calls"),
            (None, Some(_)) => None,
        };
        let failure_rate = match rate {
            Some((threshold, window)) => {
                if !(threshold > 0.0 && threshold <= 1.0) {
                    return Err("failure_rate.threshold");
                }
                if !within(window, MAX_WINDOW) {
                    return Err("failure_rate.window");
                }
                let minimum = self.minimum_calls.unwrap_or(window);
                if minimum == 0 || minimum > window {
                    return Err("failure_rate.minimum_calls");
                }
                Some((threshold, window as u32, minimum as u32))
            }
            None => None,
        };
        let open_duration = self.open_duration.unwrap_or(crate::DEFAULT_OPEN_DURATION);
        if open_duration < Duration::from_micros(1) || open_duration > MAX_OPEN_DURATION {
            return Err("open_duration");
        }
        if let Some((multiplier, max)) = self.open_backoff {
            if !(multiplier.is_finite() && multiplier >= 1.0) {
                return Err("open_backoff.multiplier");
            }
            if max < open_duration || max > MAX_OPEN_DURATION {
                return Err("open_backoff.max");
            }
        }
        if !self.stripes.is_none_or(|n| within(n, MAX_STRIPES)) {
            return Err("stripes");
        }
        if let Some(records) = self.failure_records {
            let rate_window = failure_rate.map_or(0, |(_, window, _)| window as usize);
            let looked_back = rate_window.max(self.consecutive_failures.unwrap_or(0));
            if !within(records, MAX_WINDOW) || records < looked_back {
                return Err("failure_records");
            }
        }
        let half_open_probes = self.half_open_probes.unwrap_or(1);
        if !within(half_open_probes, MAX_PROBES) {
            return Err("half_open_probes");
        }
        let success_threshold = self.success_threshold.unwrap_or(1);
        if !within(success_threshold, MAX_PROBES) {
            return Err("success_threshold");
        }
        if self.slow_call.is_some_and(|limit| limit.is_zero()) {
            return Err("slow_call");
        }
        if self
            .probe_timeout
            .is_some_and(|timeout| timeout.is_zero() || timeout > crate::MAX_PROBE_TIMEOUT)
        {
            return Err("probe_timeout");
        }
        Ok(ModelConfig {
            failure_rate,
            consecutive_failures: self.consecutive_failures.map(|n| n as u32),
            open_duration,
            half_open_probes: half_open_probes as u32,
            success_threshold: success_threshold as u32,
            slow_call: self.slow_call,
            probe_timeout: self.probe_timeout,
            open_backoff: self.open_backoff,
        })
    }
}

fn option<T>(
    u: &mut Unstructured<'_>,
    decode: impl FnOnce(&mut Unstructured<'_>) -> DecodeResult<T>,
) -> DecodeResult<Option<T>> {
    Ok(if u.arbitrary()? {
        Some(decode(u)?)
    } else {
        None
    })
}

/// Any `f64`, with the edges (NaN, infinities, zeros, the ends of `(0, 1]` and just past
/// them) drawn far more often than chance would draw them.
fn threshold(u: &mut Unstructured<'_>) -> DecodeResult<f64> {
    const EDGES: [f64; 12] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        f64::MIN_POSITIVE,
        1.0,
        1.0 + f64::EPSILON,
        1.0 - f64::EPSILON / 2.0,
        -1.0,
        0.15,
    ];
    match u.int_in_range(0u8..=3)? {
        0 => u.choose(&EDGES).copied(),
        1 => u.arbitrary(),
        _ => Ok(f64::from(u.int_in_range(0u32..=1001)?) / 1000.0),
    }
}

/// Any `f64` for the back-off's multiplier, with the edges of its range (finite, at least 1)
/// drawn often, and small multipliers most.
fn multiplier(u: &mut Unstructured<'_>) -> DecodeResult<f64> {
    const EDGES: [f64; 9] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        1.0 - f64::EPSILON / 2.0,
        1.0,
        1.0 + f64::EPSILON,
        1e300,
        f64::MAX,
    ];
    match u.int_in_range(0u8..=3)? {
        0 => u.choose(&EDGES).copied(),
        1 => u.arbitrary(),
        _ => Ok(f64::from(u.int_in_range(90u32..=400)?) / 100.0),
    }
}

/// Any `usize`, with the edges of `1..=max` (and of `u32`) drawn often, and small values most.
fn count(u: &mut Unstructured<'_>, max: u32) -> DecodeResult<usize> {
    let max = max as usize;
    let edges = [
        0,
        1,
        2,
        max - 1,
        max,
        max + 1,
        u32::MAX as usize,
        u32::MAX as usize + 1,
        usize::MAX,
    ];
    match u.int_in_range(0u8..=3)? {
        0 => u.choose(&edges).copied(),
        1 => u.arbitrary(),
        _ => Ok(usize::from(u.int_in_range(0u8..=40)?)),
    }
}

/// Any duration, with the edges of `1 µs ..= MAX_OPEN_DURATION` drawn often.
fn duration(u: &mut Unstructured<'_>) -> DecodeResult<Duration> {
    let max = MAX_OPEN_DURATION;
    let edges = [
        Duration::ZERO,
        Duration::from_nanos(999),
        Duration::from_micros(1),
        max,
        max + Duration::from_nanos(1),
        Duration::MAX,
    ];
    match u.int_in_range(0u8..=3)? {
        0 => u.choose(&edges).copied(),
        1 => Ok(Duration::new(
            u.arbitrary()?,
            u.int_in_range(0..=999_999_999)?,
        )),
        _ => Ok(Duration::from_micros(u.int_in_range(1..=100_000)?)),
    }
}
