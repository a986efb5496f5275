//! No call path allocates: every path (admission, each verdict, trips, rejection, probes,
//! closing, `call`) runs under a counting allocator and must not touch the heap.

use std::time::Duration;

use hotbreaker::{Breaker, Builder, ManualClock, Outcome};

#[path = "support/counting_allocator.rs"]
mod counting_allocator;

use counting_allocator::allocations_during;

fn exercise_every_path(breaker: &Breaker<ManualClock>, clock: &ManualClock) {
    for round in 0..50 {
        for i in 0..100 {
            let permit = breaker.try_acquire().expect("closed");
            match i % 40 {
                0 => permit.failure(),
                1 => permit.ignore(),
                2 => drop(permit),
                _ => permit.success(),
            }
        }
        let _ = breaker.call_with(
            |r: &Result<(), u16>| {
                if r.is_ok() {
                    Outcome::Success
                } else {
                    Outcome::Ignore
                }
            },
            || Err(404),
        );
        // Trip, get rejected, probe, close.
        for _ in 0..5 {
            let _ = breaker.call(|| Err::<(), _>(round));
        }
        assert!(breaker.try_acquire().is_err());
        let _ = breaker.call(|| Ok::<_, ()>(()));
        clock.advance(Duration::from_millis(10));
        let probe = breaker.try_acquire().expect("probe");
        assert!(breaker.try_acquire().is_err(), "probes out");
        if round % 2 == 0 {
            drop(probe);
            breaker.try_acquire().expect("probe again").success();
        } else {
            probe.failure();
            clock.advance(Duration::from_millis(10));
            breaker
                .try_acquire()
                .expect("probe after reopening")
                .success();
        }
        let _ = breaker.metrics();
        let _ = breaker.state();
    }
    breaker.force_open();
    let _ = breaker.try_acquire();
    breaker.force_closed();
    breaker.try_acquire().unwrap().failure();
    breaker.reset();
}

/// Runs `exercise` (every path) on `threads` threads alive at once, each after `warm_up`, and
/// returns the allocations each thread made after its warm-up.
fn allocations_after_warm_up(
    threads: usize,
    build: impl Fn(ManualClock) -> Breaker<ManualClock> + Sync,
    warm_up: impl Fn(&Breaker<ManualClock>) + Sync,
    exercise: impl Fn(&Breaker<ManualClock>, &ManualClock) + Sync,
) -> Vec<usize> {
    let all_warm = std::sync::Barrier::new(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (all_warm, build, warm_up, exercise) = (&all_warm, &build, &warm_up, &exercise);
                scope.spawn(move || {
                    let clock = ManualClock::new();
                    let breaker = build(clock.clone());
                    warm_up(&breaker);
                    all_warm.wait(); // all threads alive at once: none reuses another's node
                    let allocations = allocations_during(|| exercise(&breaker, &clock));
                    assert!(breaker.metrics().openings >= 50);
                    allocations
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A thread's first call that leaves the healthy path registers the thread: it takes its
/// counter stripe, registers a thread-local destructor and claims arc-swap's node for the
/// thread, which the standard library and arc-swap may allocate for, once per thread. A failure
/// does all of that.
fn one_failure(breaker: &Breaker<ManualClock>) {
    breaker.try_acquire().unwrap().failure();
}

/// Both rules, a short open period and a listener: what the every-path tests build on.
fn both_rules() -> Builder {
    Breaker::builder()
        .failure_rate(0.5, 20)
        .consecutive_failures(5)
        .open_duration(Duration::from_millis(10))
        .on_transition(|_| {})
}

#[test]
fn no_call_path_allocates() {
    let rules = |clock| {
        both_rules()
            .count_successes(true)
            .clock(clock)
            .build()
            .unwrap()
    };
    assert_eq!(
        allocations_after_warm_up(8, rules, one_failure, exercise_every_path),
        [0; 8]
    );
}

#[test]
fn no_call_path_allocates_with_a_window_per_thread() {
    let rules = |clock| {
        both_rules()
            .per_thread_windows(true)
            .clock(clock)
            .build()
            .unwrap()
    };
    assert_eq!(
        allocations_after_warm_up(8, rules, one_failure, exercise_every_path),
        [0; 8]
    );
}

#[test]
fn no_call_path_allocates_with_calls_timed_and_hung_calls_swept() {
    let timed = |clock| {
        Breaker::builder()
            .failure_rate(0.5, 20)
            .consecutive_failures(5)
            .open_duration(Duration::from_millis(10))
            .slow_call(Duration::from_millis(1))
            .clock(clock)
            .build()
            .unwrap()
    };
    // A call that hangs past the limit, judged by the next call's sweep, then every path; the
    // rounds move the clock, so later calls sweep each ended generation's buckets.
    let with_a_hung_call = |breaker: &Breaker<ManualClock>, clock: &ManualClock| {
        let hung = breaker.try_acquire().unwrap();
        clock.advance(Duration::from_millis(2));
        exercise_every_path(breaker, clock);
        drop(hung);
        assert!(
            breaker.metrics().hung_calls >= 1,
            "no call was judged while out"
        );
    };
    let allocations = allocations_after_warm_up(4, timed, one_failure_and_back, with_a_hung_call);
    assert_eq!(allocations, [0; 4]);
}

/// [`one_failure`], then a reset, so that the exercise starts closed.
fn one_failure_and_back(breaker: &Breaker<ManualClock>) {
    one_failure(breaker);
    breaker.reset();
}

#[test]
fn no_call_path_allocates_when_the_registering_call_never_read_the_settings() {
    // A rejection registers the thread without reading the settings; the first read is a
    // later failure's, and it must find arc-swap's node already claimed.
    let rejected_once = |_: &Breaker<ManualClock>| {
        let closed = Breaker::builder()
            .clock(ManualClock::new())
            .build()
            .unwrap();
        closed.force_open();
        assert!(closed.try_acquire().is_err());
    };
    let run_only = |clock| {
        Breaker::builder()
            .consecutive_failures(5)
            .open_duration(Duration::from_millis(10))
            .clock(clock)
            .build()
            .unwrap()
    };
    assert_eq!(
        allocations_after_warm_up(8, run_only, rejected_once, exercise_every_path),
        [0; 8]
    );
}

#[test]
fn a_healthy_thread_allocates_nothing_from_its_first_call() {
    // The window starts clean (a consecutive rule only) and successes are not counted: a
    // thread that only ever succeeds never registers, and never allocates.
    let breaker = Breaker::builder().consecutive_failures(5).build().unwrap();
    let per_thread: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    allocations_during(|| {
                        for _ in 0..10_000 {
                            breaker.try_acquire().unwrap().success();
                            let _ = breaker.call(|| Ok::<_, ()>(()));
                        }
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(per_thread, [0; 4]);
}
