//! What the models share: building a small breaker on a manual clock, running a model under a
//! bounded number of preemptions, recording transitions, and the sequential reference model's
//! verdict over every interleaving of the threads' operations.

#![allow(dead_code, unused_imports)] // each test binary uses part of this module

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use hotbreaker::testing::{ModelConfig, ReferenceModel};
use hotbreaker::{Breaker, Builder, ManualClock, Outcome, OwnedPermit, State, Transition};
use loom::sync::Arc;

/// Open period of every model; the models move the clock by exactly this much.
pub const OPEN: Duration = Duration::from_millis(10);

/// Runs `model` over every interleaving loom finds with at most `max_preemptions` preemptions.
///
/// `LOOM_MAX_PREEMPTIONS` (read by loom's builder) may lower the bound, never raise it: each
/// model is sized so that its bound explores it in seconds on a 2-core machine. For a deeper
/// search than CI's, `HOTBREAKER_LOOM_PREEMPTIONS` replaces every model's bound, higher or
/// lower (a run of minutes to hours).
///
/// # Panics
///
/// If `HOTBREAKER_LOOM_PREEMPTIONS` is set to anything but a whole number, so that a typo
/// does not quietly run the usual bound; and, as every model, when loom finds an interleaving
/// that fails it.
pub fn check(max_preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(match std::env::var("HOTBREAKER_LOOM_PREEMPTIONS") {
        Ok(bound) => bound.trim().parse().unwrap_or_else(|_| {
            panic!("HOTBREAKER_LOOM_PREEMPTIONS must be a whole number, not {bound:?}")
        }),
        Err(_) => builder
            .preemption_bound
            .map_or(max_preemptions, |from_env| from_env.min(max_preemptions)),
    });
    // Count the executions, so that a model that explores almost nothing shows in the output.
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = executions.clone();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model();
    });
    println!(
        "explored {} executions (preemption bound {:?})",
        executions.load(std::sync::atomic::Ordering::Relaxed),
        builder.preemption_bound
    );
}

/// Runs `model` once for each rotation of the order in which its `roles` threads are spawned;
/// the model spawns them with [`spawn_in`].
///
/// Why: loom's search (a partial-order reduction) compares each access only with the last
/// access to the same atomic. A race between an early step of the first thread and a late one
/// of the second can then go unexplored (seen here: with the tripper spawned second, loom never
/// ran the other caller between the tripper's two writes). In the rotations every pair of
/// roles is spawned both ways round: for two roles they are both orders, for three they cost
/// half of all six orders.
pub fn check_each_order<M>(max_preemptions: usize, roles: usize, model: M)
where
    M: Fn(&[usize]) + Sync + Send + Clone + 'static,
{
    for first in 0..roles {
        let order: Vec<usize> = (0..roles).map(|i| (first + i) % roles).collect();
        let model = model.clone();
        check(max_preemptions, move || model(&order));
    }
}

/// A model thread's work.
pub type Role<R> = Box<dyn FnOnce() -> R + Send + 'static>;

/// Spawns `roles` as loom threads in `order`, joins them, and returns their results in role
/// order.
pub fn spawn_in<R: Send + 'static>(order: &[usize], roles: Vec<Role<R>>) -> Vec<R> {
    let mut roles: Vec<Option<Role<R>>> = roles.into_iter().map(Some).collect();
    let handles: Vec<(usize, loom::thread::JoinHandle<R>)> = order
        .iter()
        .map(|&role| {
            (
                role,
                loom::thread::spawn(roles[role].take().expect("each role once")),
            )
        })
        .collect();
    let mut results: Vec<Option<R>> = (0..handles.len()).map(|_| None).collect();
    for (role, handle) in handles {
        results[role] = Some(handle.join().unwrap());
    }
    results.into_iter().map(|r| r.expect("joined")).collect()
}

/// A builder with two counter stripes (the state loom tracks grows with each) and the
/// manual clock.
pub fn small(
    configure: impl FnOnce(Builder) -> Builder,
) -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = configure(Breaker::builder().open_duration(OPEN).stripes(2))
        .clock(clock.clone())
        .build()
        .expect("valid configuration");
    (Arc::new(breaker), clock)
}

/// [`small`]'s breaker in a std `Arc`, which owned permits take; loom tracks the breaker's
/// atomics, not the count of its owners.
pub fn small_for_owned_permits(
    configure: impl FnOnce(Builder) -> Builder,
) -> (std::sync::Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = configure(Breaker::builder().open_duration(OPEN).stripes(2))
        .clock(clock.clone())
        .build()
        .expect("valid configuration");
    (std::sync::Arc::new(breaker), clock)
}

/// The breaker for a reference-model configuration, with `stripes` stripes.
pub fn from_model(
    config: &ModelConfig,
    stripes: usize,
) -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = config
        .builder()
        .stripes(stripes)
        .clock(clock.clone())
        .build()
        .expect("valid configuration");
    (Arc::new(breaker), clock)
}

/// The transitions a breaker announced, in the order the listeners ran.
///
/// A std mutex, not loom's: loom runs all of a model's threads on one OS thread, one at a
/// time, and the listener does nothing loom can preempt while it holds the lock, so the lock
/// is never contended; keeping it out of loom's sight keeps the explored state small.
#[derive(Clone, Default)]
pub struct Events(std::sync::Arc<Mutex<Vec<Transition>>>);

impl Events {
    pub fn listener(&self) -> impl Fn(&Transition) + Send + Sync + 'static {
        let events = self.0.clone();
        move |transition| events.lock().unwrap().push(*transition)
    }

    pub fn take(&self) -> Vec<Transition> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Trips `breaker` (configured with `consecutive_failures(1)`) and moves the clock to the end
/// of the open period, so the next call is the first probe.
pub fn trip_and_wait(breaker: &Breaker<ManualClock>, clock: &ManualClock) {
    breaker.try_acquire().expect("closed").failure();
    assert_eq!(breaker.state(), State::Open);
    clock.advance(OPEN);
}

/// One call of a closed-breaker model: ask for a permit and, if granted, end it so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Succeed,
    Fail,
    Ignore,
    /// Drop the permit without a verdict.
    Drop,
    /// `Breaker::reset`, no permit: a new closed generation.
    Reset,
}

pub use Call::{Drop as D, Fail as F, Ignore as I, Reset as R, Succeed as S};

/// Makes `call` on the breaker; whether a permit was granted (a reset always goes through).
pub fn make(breaker: &Breaker<ManualClock>, call: Call) -> bool {
    if call == Call::Reset {
        breaker.reset();
        return true;
    }
    let Ok(permit) = breaker.try_acquire() else {
        return false;
    };
    match call {
        Call::Succeed => permit.success(),
        Call::Fail => permit.failure(),
        Call::Ignore => permit.ignore(),
        Call::Drop => drop(permit),
        Call::Reset => unreachable!("handled above"),
    }
    true
}

/// The role of a thread that closes a half-open breaker and then fails: a probe that
/// succeeds, or a closed permit's success if another probe closed the breaker already, then a
/// failure of the closed generation.
pub fn success_then_failure(breaker: &Arc<Breaker<ManualClock>>) -> Role<()> {
    let breaker = breaker.clone();
    Box::new(move || {
        breaker.try_acquire().expect("a place").success();
        breaker
            .try_acquire()
            .expect("closed by one probe or the other")
            .failure();
    })
}

/// How a model makes one call: [`make`] (through permits), or another path of the breaker.
pub type Maker = fn(&Breaker<ManualClock>, Call);

/// [`make`], as a [`Maker`].
pub fn make_through_permits(breaker: &Breaker<ManualClock>, call: Call) {
    make(breaker, call);
}

/// Makes `call` through [`Breaker::call`], the path that reads the quiet bit and, finding it
/// off, sends a success to its thread's stripe before the window word (a permit's `success`
/// always goes to the window word first); a reset is a reset.
pub fn call_through(breaker: &Breaker<ManualClock>, call: Call) {
    let _ = match call {
        Call::Succeed => breaker.call(|| Ok::<(), ()>(())),
        Call::Fail => breaker.call(|| Err::<(), ()>(())),
        Call::Reset => {
            breaker.reset();
            return;
        }
        other => unreachable!("only successes, failures and resets here: {other:?}"),
    };
}

/// One role per entry of `threads`, each making that entry's calls in turn on `breaker`.
pub fn making(
    breaker: &Arc<Breaker<ManualClock>>,
    threads: &'static [&'static [Call]],
) -> Vec<Role<()>> {
    making_with(breaker, threads, make_through_permits)
}

/// [`making`], each call made by `maker`.
pub fn making_with(
    breaker: &Arc<Breaker<ManualClock>>,
    threads: &'static [&'static [Call]],
    maker: Maker,
) -> Vec<Role<()>> {
    threads
        .iter()
        .map(|&calls| {
            let breaker = breaker.clone();
            Box::new(move || {
                for &call in calls {
                    maker(&breaker, call);
                }
            }) as Role<()>
        })
        .collect()
}

/// What a model compares at the end: the state, the window as metrics report it (failures,
/// calls, consecutive failures) and the openings.
pub type Final = (State, (u32, u32, u32), u64);

/// What the breaker's metrics say, in the shape of [`Final`].
pub fn final_of(breaker: &Breaker<ManualClock>) -> Final {
    let m = breaker.metrics();
    (
        m.state,
        (m.window_failures, m.window_calls, m.consecutive_failures),
        m.openings,
    )
}

/// Every ordering of the threads' calls that keeps each thread's own order.
pub fn interleavings(threads: &[&[Call]]) -> Vec<Vec<Call>> {
    fn extend(
        threads: &[&[Call]],
        next: &mut [usize],
        prefix: &mut Vec<Call>,
        out: &mut Vec<Vec<Call>>,
    ) {
        let mut any = false;
        for t in 0..threads.len() {
            if next[t] < threads[t].len() {
                any = true;
                prefix.push(threads[t][next[t]]);
                next[t] += 1;
                extend(threads, next, prefix, out);
                next[t] -= 1;
                prefix.pop();
            }
        }
        if !any {
            out.push(prefix.clone());
        }
    }
    let mut out = Vec::new();
    extend(
        threads,
        &mut vec![0; threads.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// What the reference model ends in for each interleaving of `threads` between `before` and
/// `after`, each call taken as one atomic step at time zero.
///
/// A real call acquires and records in two steps, and another thread's trip may fall between
/// them; the stale verdict is then not counted. The model would count it or reject it instead,
/// which changes the counters but not the state, the window or the openings (the clock does
/// not move, so an open breaker stays open), and those are what [`Final`] holds.
pub fn model_finals(
    config: ModelConfig,
    before: &[Call],
    threads: &[&[Call]],
    after: &[Call],
) -> HashSet<Final> {
    interleavings(threads)
        .into_iter()
        .map(|order| {
            let mut model = ReferenceModel::new(config);
            for &call in before.iter().chain(&order).chain(after) {
                if call == Call::Reset {
                    model.reset();
                } else if let Ok(permit) = model.acquire(0) {
                    match call {
                        Call::Succeed => model.record(permit, Outcome::Success, 0),
                        Call::Fail => model.record(permit, Outcome::Failure, 0),
                        Call::Ignore => model.record(permit, Outcome::Ignore, 0),
                        Call::Drop => model.release(permit, 0),
                        Call::Reset => unreachable!("handled above"),
                    }
                }
            }
            (model.state(0), model.window(), model.counts.openings)
        })
        .collect()
}

/// Runs a closed-breaker model: `before` on the main thread, each list of `threads` on its own
/// loom thread, then `after` on the main thread; the end must be one the reference model
/// reaches for some interleaving.
pub fn check_against_model(
    max_preemptions: usize,
    config: ModelConfig,
    before: &'static [Call],
    threads: &'static [&'static [Call]],
    after: &'static [Call],
) {
    check_against_model_with(
        max_preemptions,
        config,
        before,
        threads,
        after,
        make_through_permits,
    );
}

/// [`check_against_model`], every call made by `maker`.
pub fn check_against_model_with(
    max_preemptions: usize,
    config: ModelConfig,
    before: &'static [Call],
    threads: &'static [&'static [Call]],
    after: &'static [Call],
    maker: Maker,
) {
    let allowed = model_finals(config, before, threads, after);
    check_each_order(max_preemptions, threads.len(), move |order| {
        let (breaker, _clock) = from_model(&config, 2);
        for &call in before {
            maker(&breaker, call);
        }
        spawn_in(order, making_with(&breaker, threads, maker));
        for &call in after {
            maker(&breaker, call);
        }
        assert_reached(&allowed, &breaker);
    });
}

/// Asserts that `breaker` ended in one of the `allowed` ends of the reference model.
pub fn assert_reached(allowed: &HashSet<Final>, breaker: &Breaker<ManualClock>) {
    let got = final_of(breaker);
    assert!(
        allowed.contains(&got),
        "breaker ended in {got:?}, which no interleaving of the reference model reaches: {allowed:?}"
    );
}

/// A reference-model configuration with a run rule of `length` consecutive failures only,
/// whose window starts clean (no rate rule to fill).
pub const fn run_rule(length: u32) -> ModelConfig {
    ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(length),
        ..rate(1.0, 3, 3)
    }
}

/// A reference-model configuration with a failure-rate rule only.
pub const fn rate(threshold: f64, window: u32, minimum: u32) -> ModelConfig {
    ModelConfig {
        failure_rate: Some((threshold, window, minimum)),
        consecutive_failures: None,
        open_duration: OPEN,
        half_open_probes: 1,
        success_threshold: 1,
        slow_call: None,
        probe_timeout: None,
        open_backoff: None,
    }
}

/// The role of a caller that moves the clock `wait` on, calls, and fails the call if it was
/// let through (only probes are: the breaker is open or half-open throughout).
pub fn failing_prober(
    breaker: &Arc<Breaker<ManualClock>>,
    clock: &ManualClock,
    wait: Duration,
) -> Role<bool> {
    let (breaker, clock) = (breaker.clone(), clock.clone());
    Box::new(move || {
        clock.advance(wait);
        match breaker.try_acquire() {
            Ok(probe) => {
                probe.failure();
                true
            }
            Err(_) => false,
        }
    })
}

/// A half-open breaker (built as `common::small`'s, after one failure) with its only probe
/// out, in an owned permit that a model thread can end.
pub fn half_open_with_probe_out() -> (
    std::sync::Arc<Breaker<ManualClock>>,
    OwnedPermit<ManualClock>,
) {
    let (breaker, clock) = small_for_owned_permits(|b| b.consecutive_failures(1));
    trip_and_wait(&breaker, &clock);
    let probe = breaker.try_acquire_owned().expect("the first probe");
    (breaker, probe)
}
