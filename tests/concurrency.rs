//! Invariants under real threads: exact probe admission, one trip per burst of failures, no
//! trip on a healthy day, no failure lost when the dependency goes down, counters that add
//! up. These check outcomes, never timings; the exhaustive interleaving checks are the loom
//! models in `loom-tests/`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use hotbreaker::{Breaker, CallError, ManualClock, State};

const THREADS: usize = 6;

#[test]
fn half_open_admits_exactly_the_configured_probes() {
    for probes in [1, 2, 3] {
        let clock = ManualClock::new();
        let breaker = Breaker::builder()
            .consecutive_failures(1)
            .open_duration(Duration::from_millis(1))
            .half_open_probes(probes)
            .clock(clock.clone())
            .build()
            .unwrap();
        for _round in 0..200 {
            breaker.try_acquire().unwrap().failure();
            assert_eq!(breaker.state(), State::Open);
            clock.advance(Duration::from_millis(1));
            let start = Barrier::new(THREADS);
            let hold = Barrier::new(THREADS);
            let admitted = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..THREADS {
                    scope.spawn(|| {
                        start.wait();
                        let permit = breaker.try_acquire().ok();
                        if permit.is_some() {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                        hold.wait(); // every permit is still held when all have asked
                        if let Some(permit) = permit {
                            permit.ignore();
                        }
                    });
                }
            });
            assert_eq!(
                admitted.load(Ordering::Relaxed),
                probes,
                "racing callers, {probes} probes allowed"
            );
            // Close, so the next round trips from closed again.
            breaker.try_acquire().unwrap().success();
            assert_eq!(breaker.state(), State::Closed);
        }
    }
}

#[test]
fn a_burst_of_failures_trips_once() {
    for _round in 0..100 {
        let transitions = Arc::new(AtomicUsize::new(0));
        let counted = transitions.clone();
        let breaker = Breaker::builder()
            .failure_rate(0.5, 8)
            .consecutive_failures(3)
            .open_duration(Duration::from_secs(60))
            .on_transition(move |_| {
                counted.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .unwrap();
        let start = Barrier::new(THREADS);
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    let permits: Vec<_> =
                        (0..4).filter_map(|_| breaker.try_acquire().ok()).collect();
                    start.wait();
                    for permit in permits {
                        permit.failure();
                    }
                });
            }
        });
        let metrics = breaker.metrics();
        assert_eq!(metrics.state, State::Open);
        assert_eq!(metrics.openings, 1, "one burst, one opening");
        assert_eq!(
            transitions.load(Ordering::Relaxed),
            1,
            "one transition event"
        );
        assert_eq!(metrics.failures, (THREADS * 4) as u64);
    }
}

#[test]
fn every_permit_ends_in_exactly_one_counter() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .failure_rate(0.3, 20)
        .open_duration(Duration::from_micros(50))
        .half_open_probes(2)
        .count_successes(true)
        .stripes(2) // fewer stripes than threads: some threads share one
        .clock(clock.clone())
        .build()
        .unwrap();
    let granted = AtomicU64::new(0);
    let rejected = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (breaker, clock, granted, rejected) = (&breaker, &clock, &granted, &rejected);
            scope.spawn(move || {
                for i in 0..20_000usize {
                    match breaker.try_acquire() {
                        Ok(permit) => {
                            granted.fetch_add(1, Ordering::Relaxed);
                            match (i * 7 + thread) % 11 {
                                0 | 1 => permit.failure(),
                                2 => permit.ignore(),
                                3 => drop(permit),
                                _ => permit.success(),
                            }
                        }
                        Err(_) => {
                            rejected.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    if i % 64 == 0 {
                        clock.advance(Duration::from_micros(10));
                    }
                }
            });
        }
    });
    let metrics = breaker.metrics();
    assert_eq!(metrics.permitted(), Some(granted.load(Ordering::Relaxed)));
    assert_eq!(metrics.rejected, rejected.load(Ordering::Relaxed));
    assert!(
        metrics.openings > 0,
        "the failure pattern trips the breaker now and then"
    );
}

#[test]
fn a_healthy_day_with_rare_failures_never_trips() {
    // 1 call in 40 fails, the threshold is half of 20: the window must age failures out
    // while threads race, or they pile up and trip it.
    let breaker = Breaker::builder()
        .failure_rate(0.5, 20)
        .count_successes(true)
        .build()
        .unwrap();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let breaker = &breaker;
            scope.spawn(move || {
                for i in 0..100_000usize {
                    let permit = breaker.try_acquire().expect("never opens");
                    if (i + thread * 13) % 40 == 0 {
                        permit.failure()
                    } else {
                        permit.success()
                    }
                }
            });
        }
    });
    let metrics = breaker.metrics();
    assert_eq!(metrics.openings, 0);
    assert_eq!(metrics.permitted(), Some((THREADS * 100_000) as u64));
    assert!(metrics.window_failures <= 10, "{metrics:?}");
}

/// One call in this many fails on the healthy days below.
const SPARSE_EVERY: u32 = 200;

/// `calls` calls through `call`, one in [`SPARSE_EVERY`] failing, `thread`'s failures a
/// quarter of that after those of the thread before it.
fn sparse_failures_through_call(breaker: &Breaker, thread: u32, calls: u32) {
    for i in 0..calls {
        let fail = (i + thread * SPARSE_EVERY / 4).is_multiple_of(SPARSE_EVERY);
        // Opaque to the optimizer, so that each call is made as a caller's is.
        let _ = std::hint::black_box(breaker.call(|| {
            if std::hint::black_box(fail) {
                Err(i)
            } else {
                Ok(i)
            }
        }));
    }
}

#[test]
fn threads_through_call_with_sparse_failures_never_trip() {
    // The shape of a bug the quiet bit once had (`src/quiet.rs`, "The invariant"): threads on
    // one window, through `call`, whose healthy successes skip the window while the state word
    // says it is clean; each fails one call in 200, the threshold is half of 20. A failure that
    // cleared the bit only after its commit let another thread's successes, which came after
    // that thread's own failure, be skipped too: its failures then piled up at one position
    // and tripped the rule. It takes a thread paused between the commit and the clearing, so
    // four threads share the two cores of the machines this runs on; built with that order
    // back, the test failed in each of five runs, in release and in debug, within 18 rounds.
    // loom's `a_failure_over_a_dirty_window_while_another_leaves_it_clean_is_not_skipped` is
    // the exhaustive check.
    //
    // Then the same with a window per thread, whose bit says every window is clean (tried: a
    // setter that asks only that one window be clean failed in the first round).
    const CALLS: u32 = 1_000_000;
    let rounds = (0..40)
        .map(|round| (round, false))
        .chain((0..10).map(|round| (round, true)));
    for (round, per_thread_windows) in rounds {
        let breaker = Breaker::builder()
            .failure_rate(0.5, 20)
            .per_thread_windows(per_thread_windows)
            .build()
            .unwrap();
        let start = Barrier::new(4);
        std::thread::scope(|scope| {
            for thread in 0..4u32 {
                let (breaker, start) = (&breaker, &start);
                scope.spawn(move || {
                    let _ = breaker.call(|| Ok::<u32, u32>(0));
                    start.wait();
                    sparse_failures_through_call(breaker, thread, CALLS);
                });
            }
        });
        let metrics = breaker.metrics();
        assert_eq!(
            (metrics.openings, metrics.failures),
            (0, 4 * u64::from(CALLS / SPARSE_EVERY)),
            "window per thread {per_thread_windows}, round {round}: {metrics:?}"
        );
    }
}

#[test]
fn a_dependency_that_starts_failing_trips_within_a_window_of_failures() {
    // The other side of the test above: no failure may be lost either. Threads share a
    // breaker through `call`, first on a healthy day (each fails one call in 200, so the
    // window turns quiet and a failure finds it clean now and then; a run never holds more
    // than one failure of each thread), then, past a barrier, with every call failing. In any
    // order of their calls the rule is met once `trips_by` failures of the second phase are
    // recorded (half of a window of 20; a run of one more than the threads), so the last of
    // them trips at the latest; besides those, each other thread has at most one call
    // admitted before the trip and recorded after it. A failure the window dropped in a race
    // would let more through (tried: a failure that gives up after losing its commit to
    // another's, instead of retrying, let 12 through where 11 may pass, within 120 rounds of
    // the rate rule on two threads, in each of three runs; with the run rule alone, 5 where 4
    // may pass, in two runs of three).
    #[derive(Clone, Copy, Debug)]
    enum Rule {
        HalfOf20,
        RunOfOneMoreThanThreads,
    }
    impl Rule {
        fn configure(self, builder: hotbreaker::Builder, threads: usize) -> hotbreaker::Builder {
            match self {
                Rule::HalfOf20 => builder.failure_rate(0.5, 20),
                Rule::RunOfOneMoreThanThreads => builder.consecutive_failures(threads + 1),
            }
        }
        fn trips_by(self, threads: usize) -> u64 {
            match self {
                Rule::HalfOf20 => 10,
                Rule::RunOfOneMoreThanThreads => threads as u64 + 1,
            }
        }
    }
    /// Calls of each thread on the healthy day before the dependency fails.
    const HEALTHY_CALLS: u32 = 2_000;
    for rule in [Rule::HalfOf20, Rule::RunOfOneMoreThanThreads] {
        for threads in [2, 4] {
            for per_thread_windows in [false, true] {
                check_the_dependency_failing(rule, threads, per_thread_windows);
            }
        }
    }
    fn check_the_dependency_failing(rule: Rule, threads: usize, per_thread_windows: bool) {
        let trips_by = rule.trips_by(threads);
        // A window per thread trips once one thread's window meets the rule: each thread may
        // have one short of it recorded and one more admitted.
        let most_admitted = if per_thread_windows {
            trips_by * threads as u64
        } else {
            trips_by - 1 + threads as u64
        };
        for round in 0..500 {
            let builder = Breaker::builder()
                .per_thread_windows(per_thread_windows)
                .open_duration(Duration::from_secs(3600));
            let breaker = rule.configure(builder, threads).build().unwrap();
            let failing_admitted = AtomicU64::new(0);
            let start = Barrier::new(threads);
            std::thread::scope(|scope| {
                for thread in 0..threads as u32 {
                    let (breaker, start, failing_admitted) = (&breaker, &start, &failing_admitted);
                    scope.spawn(move || {
                        sparse_failures_through_call(breaker, thread, HEALTHY_CALLS);
                        start.wait();
                        let mut admitted = 0;
                        while let Err(CallError::Failed(_)) =
                            breaker.call(|| Err::<(), u32>(thread))
                        {
                            admitted += 1;
                        }
                        failing_admitted.fetch_add(admitted, Ordering::Relaxed);
                    });
                }
            });
            let metrics = breaker.metrics();
            let what = format!(
                "{rule:?}, {threads} threads, window per thread {per_thread_windows}, round {round}"
            );
            assert_eq!(
                (metrics.state, metrics.openings),
                (State::Open, 1),
                "{what}: {metrics:?}"
            );
            let admitted = failing_admitted.load(Ordering::Relaxed);
            assert_eq!(
                metrics.failures,
                threads as u64 * u64::from(HEALTHY_CALLS / SPARSE_EVERY) + admitted,
                "{what}: every admitted failure is counted"
            );
            assert!(
                admitted <= most_admitted,
                "{what}: {admitted} failing calls admitted, at most {most_admitted} may be: \
                 {metrics:?}"
            );
        }
    }
}
