//! Async calls under tokio: a future dropped mid-call gives its permit back.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use hotbreaker::{Breaker, CallError, ManualClock, State};

#[path = "support/bursty_outcomes.rs"]
mod bursty_outcomes;
use bursty_outcomes::{bursty_failures, judged_by_rate_and_run};

fn tripped_breaker() -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    (Arc::new(breaker), clock)
}

#[tokio::test]
async fn results_are_recorded() {
    let breaker = Breaker::builder().consecutive_failures(2).build().unwrap();
    assert_eq!(breaker.call_async(async { Ok::<_, ()>(7) }).await, Ok(7));
    assert_eq!(
        breaker.call_async(async { Err::<(), _>("down") }).await,
        Err(CallError::Failed("down"))
    );
    let _ = breaker.call_async(async { Err::<(), _>("down") }).await;
    assert!(
        breaker
            .call_async(async { Ok::<_, ()>(()) })
            .await
            .unwrap_err()
            .is_rejected()
    );
}

#[tokio::test]
async fn a_cancelled_probe_does_not_leave_the_breaker_stuck() {
    let (breaker, _clock) = tripped_breaker();
    // The probe's call hangs and its caller gives up.
    let hung = breaker.call_async(pending::<Result<(), ()>>());
    assert!(
        tokio::time::timeout(Duration::from_millis(5), hung)
            .await
            .is_err()
    );
    assert_eq!(breaker.metrics().released, 1);
    // The next caller probes, and closes the breaker.
    assert_eq!(breaker.call_async(async { Ok::<_, ()>(()) }).await, Ok(()));
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test]
async fn owned_permits_move_into_spawned_tasks() {
    let (breaker, _clock) = tripped_breaker();
    let permit = breaker.try_acquire_owned().unwrap();
    assert!(permit.is_probe());
    let task = tokio::spawn(async move {
        pending::<()>().await;
        permit.success();
    });
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    // The aborted task dropped the permit: the probe place is free again.
    breaker.try_acquire_owned().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_panic_of_the_classifier_counts_as_a_failure() {
    use std::future::Future;
    let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    let mut call = Box::pin(breaker.call_async_with(
        |_: &Result<(), ()>| -> hotbreaker::Outcome { panic!("a bug in the classifier") },
        async { Ok::<(), ()>(()) },
    ));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = call.as_mut().poll(&mut cx);
    }));
    assert!(caught.is_err());
    drop(call);
    let m = breaker.metrics();
    assert_eq!((m.failures, m.released), (1, 0), "{m:?}");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn call_async_with_counts_as_its_classifier_says() {
    use hotbreaker::Outcome;
    let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    let ignore_4xx = |result: &Result<(), u16>| match result {
        Err(400..=499) => Outcome::Ignore,
        Err(_) => Outcome::Failure,
        Ok(_) => Outcome::Success,
    };
    let _ = breaker
        .call_async_with(ignore_4xx, async { Err::<(), u16>(404) })
        .await;
    assert_eq!(breaker.state(), State::Closed, "a 404 is ignored");
    assert_eq!(breaker.metrics().failures, 0);
}

/// The same outcomes through `call` on one breaker and `call_async` on another, sharing a
/// clock: after every call both answer alike and show the same metrics. A success admitted
/// while the window is clean skips it on both (`quiet.rs`); one that must age a failure is
/// recorded on both, or the failures it should push out would trip the async breaker early.
#[tokio::test]
async fn call_async_judges_every_outcome_as_call_does() {
    let clock = ManualClock::new();
    let (sync, asynced) = (
        judged_by_rate_and_run(&clock),
        judged_by_rate_and_run(&clock),
    );
    let mut openings = 0;
    for (step, fails) in bursty_failures(5_000).enumerate() {
        let outcome = move || if fails { Err("down") } else { Ok(step) };
        let by_call = sync.call(outcome);
        let by_async = asynced.call_async(async move { outcome() }).await;
        assert_eq!(by_call, by_async, "call {step}");
        assert_eq!(sync.metrics(), asynced.metrics(), "after call {step}");
        if by_call.as_ref().is_err_and(CallError::is_rejected) {
            clock.advance(Duration::from_millis(100));
        }
        openings = sync.metrics().openings;
    }
    assert!(
        openings > 3,
        "the sequence trips the breakers ({openings} openings)"
    );
}
