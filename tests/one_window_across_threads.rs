//! The one window judges the calls of every thread in the order they were made: the two
//! histories of `benches/PERFORMANCE.md` ("The least a shared window costs"), which differ
//! only in when another thread's successes came, and must end differently. Each thread here
//! is joined before the next call, so the order is known; the random version of this is the
//! differential property with steps handed between threads (`tests/differential.rs`).

use hotbreaker::{Breaker, CallError, State};

fn breaker() -> Breaker {
    Breaker::builder()
        .failure_rate(0.5, 20)
        .build()
        .expect("valid settings")
}

fn fail(breaker: &Breaker) {
    let result = breaker.call(|| Err::<(), _>("down"));
    assert!(
        matches!(result, Err(CallError::Failed(_))),
        "the failure was admitted"
    );
}

fn succeed(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        breaker.call(|| Ok::<_, ()>(())).expect("admitted");
    }
}

/// Runs `calls` on a thread of its own, to its end.
fn on_another_thread(breaker: &Breaker, calls: impl FnOnce(&Breaker) + Send) {
    std::thread::scope(|s| {
        s.spawn(|| calls(breaker));
    });
}

/// Twenty successes, then nine failures: one more failure among the last 20 calls trips.
fn nine_failures_after_twenty_successes() -> Breaker {
    let breaker = breaker();
    succeed(&breaker, 20);
    for _ in 0..9 {
        fail(&breaker);
    }
    assert_eq!(breaker.state(), State::Closed, "nine failures in 20");
    breaker
}

#[test]
fn a_tenth_failure_before_the_other_threads_successes_trips() {
    let breaker = nine_failures_after_twenty_successes();
    fail(&breaker);
    assert_eq!(breaker.state(), State::Open, "ten failures in the last 20");
}

#[test]
fn the_other_threads_successes_before_the_tenth_failure_push_the_first_out() {
    let breaker = nine_failures_after_twenty_successes();
    on_another_thread(&breaker, |breaker| succeed(breaker, 11));
    fail(&breaker);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the last 20: eight of the nine failures, the 11 successes, the tenth failure"
    );
    fail(&breaker);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "still nine: the third failure left"
    );
    let metrics = breaker.metrics();
    assert_eq!((metrics.failures, metrics.openings), (11, 0));
}
