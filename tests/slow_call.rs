//! The slow-call rule: a success recorded longer than `slow_call` after its permit was issued
//! counts as a failure, through every way of calling, and the rule can be switched on and off.

use std::future::Future;
use std::sync::Arc;
use std::task::Context;
use std::time::Duration;

use hotbreaker::{Breaker, Config, ConfigError, ManualClock, State};

const LIMIT: Duration = Duration::from_millis(250);
const OPEN: Duration = Duration::from_secs(1);

/// A breaker that trips on two failures in a row, with the slow-call limit, on a manual clock.
fn breaker() -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(2)
        .open_duration(OPEN)
        .slow_call(LIMIT)
        .count_successes(true)
        .clock(clock.clone())
        .build()
        .unwrap();
    (Arc::new(breaker), clock)
}

/// Successes (counted), failures and slow calls, from the metrics.
fn outcomes(breaker: &Breaker<ManualClock>) -> (Option<u64>, u64, u64) {
    let metrics = breaker.metrics();
    (metrics.successes, metrics.failures, metrics.slow_calls)
}

/// A call through `call` that succeeds after `took` on `clock`.
fn call_taking(
    breaker: &Breaker<ManualClock>,
    clock: &ManualClock,
    took: Duration,
) -> Result<&'static str, hotbreaker::CallError<()>> {
    breaker.call(|| {
        clock.advance(took);
        Ok("reply")
    })
}

#[test]
fn a_success_slower_than_the_limit_counts_as_a_failure_and_trips() {
    let (breaker, clock) = breaker();
    assert_eq!(call_taking(&breaker, &clock, LIMIT * 2), Ok("reply"));
    assert_eq!(call_taking(&breaker, &clock, LIMIT * 2), Ok("reply"));
    let metrics = breaker.metrics();
    assert_eq!(
        metrics.state,
        State::Open,
        "two slow calls in a row: {metrics:?}"
    );
    assert_eq!(outcomes(&breaker), (Some(0), 2, 2));
}

#[test]
fn a_success_within_the_limit_is_a_success() {
    let (breaker, clock) = breaker();
    for _ in 0..5 {
        assert_eq!(call_taking(&breaker, &clock, LIMIT), Ok("reply"));
        // A slow one between them never makes two in a row.
        assert_eq!(call_taking(&breaker, &clock, LIMIT * 3), Ok("reply"));
    }
    let metrics = breaker.metrics();
    assert_eq!(metrics.state, State::Closed, "{metrics:?}");
    assert_eq!(outcomes(&breaker), (Some(5), 5, 5));
}

#[test]
fn only_successes_are_judged() {
    let (breaker, clock) = breaker();
    // A quick failure and a slow one are failures alike; neither is a slow call.
    let _ = breaker.call(|| Err::<(), _>("refused"));
    let _ = breaker.call(|| {
        clock.advance(LIMIT * 4);
        Err::<(), _>("timed out")
    });
    let metrics = breaker.metrics();
    assert_eq!((metrics.failures, metrics.slow_calls), (2, 0));
    assert_eq!(metrics.state, State::Open);
}

#[test]
fn manual_and_owned_permits_are_timed_from_their_admission() {
    let (breaker, clock) = breaker();
    let permit = breaker.try_acquire().unwrap();
    clock.advance(LIMIT + Duration::from_nanos(1));
    permit.success();
    let owned = breaker.try_acquire_owned().unwrap();
    clock.advance(LIMIT + Duration::from_nanos(1));
    owned.success();
    let metrics = breaker.metrics();
    assert_eq!((metrics.slow_calls, metrics.state), (2, State::Open));
}

#[test]
fn a_slow_probe_reopens_the_breaker() {
    let (breaker, clock) = breaker();
    for _ in 0..2 {
        breaker.try_acquire().unwrap().failure();
    }
    clock.advance(OPEN);
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(call_taking(&breaker, &clock, LIMIT * 2), Ok("reply"));
    let metrics = breaker.metrics();
    assert_eq!((metrics.state, metrics.openings), (State::Open, 2));
    // A quick probe closes it.
    clock.advance(OPEN);
    assert_eq!(call_taking(&breaker, &clock, Duration::ZERO), Ok("reply"));
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_permit_dropped_without_a_verdict_is_not_judged() {
    let (breaker, clock) = breaker();
    let permit = breaker.try_acquire().unwrap();
    clock.advance(LIMIT * 10);
    drop(permit);
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.released, metrics.slow_calls, metrics.failures),
        (1, 0, 0)
    );
}

#[test]
fn reconfiguration_switches_the_rule_on_and_off() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .clock(clock.clone())
        .build()
        .unwrap();
    // Off: however long a success takes, it is a success.
    assert_eq!(
        call_taking(&breaker, &clock, Duration::from_secs(60)),
        Ok("reply")
    );
    assert_eq!(breaker.state(), State::Closed);

    let on = Config {
        slow_call: Some(LIMIT),
        ..breaker.config()
    };
    breaker.reconfigure(on).unwrap();
    assert_eq!(breaker.config().slow_call, Some(LIMIT));
    // A permit issued while the rule is on is judged by the limit in force when its verdict
    // comes: switched off meanwhile, there is none, and its success stays a success.
    let permit = breaker.try_acquire().unwrap();
    assert!(format!("{permit:?}").contains("timed: true"), "{permit:?}");
    let off = Config {
        slow_call: None,
        ..breaker.config()
    };
    breaker.reconfigure(off).unwrap();
    clock.advance(Duration::from_secs(60));
    permit.success();
    // And calls after it are not timed at all.
    assert!(format!("{:?}", breaker.try_acquire().unwrap()).contains("timed: false"));
    assert_eq!(
        call_taking(&breaker, &clock, Duration::from_secs(60)),
        Ok("reply")
    );
    assert_eq!(breaker.metrics().slow_calls, 0);

    breaker.reconfigure(on).unwrap();
    assert_eq!(call_taking(&breaker, &clock, LIMIT * 2), Ok("reply"));
    let metrics = breaker.metrics();
    assert_eq!((metrics.state, metrics.slow_calls), (State::Open, 1));
}

#[test]
fn a_limit_of_zero_is_refused() {
    let error: ConfigError = Breaker::builder()
        .slow_call(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(error.field(), "slow_call");
    assert_eq!(
        error.to_string(),
        "invalid slow_call: must be greater than 0, got 0ns"
    );
    let config = Config {
        slow_call: Some(Duration::ZERO),
        ..Config::default()
    };
    assert_eq!(config.validate().unwrap_err().field(), "slow_call");
}

#[tokio::test]
async fn async_calls_are_timed_around_the_future() {
    let (breaker, clock) = breaker();
    for _ in 0..2 {
        let clock = clock.clone();
        let reply = breaker
            .call_async(async move {
                clock.advance(LIMIT * 2);
                Ok::<_, ()>("late")
            })
            .await;
        assert_eq!(reply, Ok("late"));
    }
    let metrics = breaker.metrics();
    assert_eq!((metrics.state, metrics.slow_calls), (State::Open, 2));
}

#[test]
fn a_slow_success_is_counted_whole_before_the_opening_it_makes_is_announced() {
    let clock = ManualClock::new();
    let breaker: Arc<std::sync::OnceLock<Arc<Breaker<ManualClock>>>> = Arc::default();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let built = {
        let (breaker, seen) = (Arc::clone(&breaker), Arc::clone(&seen));
        Breaker::builder()
            .consecutive_failures(1)
            .slow_call(LIMIT)
            .clock(clock.clone())
            .on_transition(move |transition| {
                if transition.to == State::Open {
                    let metrics = breaker.get().unwrap().metrics();
                    *seen.lock().unwrap() = Some((metrics.failures, metrics.slow_calls));
                    panic!("a listener that fails");
                }
            })
            .build()
            .unwrap()
    };
    let built = Arc::new(built);
    breaker.set(Arc::clone(&built)).ok().unwrap();
    let permit = built.try_acquire().unwrap();
    clock.advance(LIMIT * 2);
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| permit.success()));
    assert!(ended.is_err(), "the listener's panic comes through");
    assert_eq!(built.state(), State::Open);
    assert_eq!(
        *seen.lock().unwrap(),
        Some((1, 1)),
        "what the listener of the opening saw: (failures, slow calls)"
    );
    let metrics = built.metrics();
    assert_eq!(
        (metrics.failures, metrics.slow_calls),
        (1, 1),
        "{metrics:?}"
    );
}

/// Polls `breaker.call_async` over a call that never ends once, so that its permit is out.
fn hanging_async_call(
    breaker: &Breaker<ManualClock>,
) -> std::pin::Pin<Box<impl Future<Output = Result<(), hotbreaker::CallError<()>>> + '_>> {
    let mut call = Box::pin(breaker.call_async(std::future::pending::<Result<(), ()>>()));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    call
}

#[test]
fn an_async_call_cancelled_past_the_limit_is_a_failure_only_once_a_later_call_judged_it() {
    let (breaker, clock) = breaker();
    // Cancelled (a timeout around the future) long after the limit, with no call in between:
    // nothing judged it while it was out, and a cancellation is no verdict.
    let call = hanging_async_call(&breaker);
    clock.advance(LIMIT * 10);
    drop(call);
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.released, metrics.failures, metrics.hung_calls),
        (1, 0, 0),
        "{metrics:?}"
    );
    // A call admitted while it is out past the limit judges it hung: cancelled after that,
    // it stays a failure and is not released as well.
    let call = hanging_async_call(&breaker);
    clock.advance(LIMIT * 2);
    breaker.try_acquire().unwrap().success();
    drop(call);
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.released, metrics.failures, metrics.hung_calls),
        (1, 1, 1),
        "{metrics:?}"
    );
}

#[test]
fn an_async_call_cancelled_after_a_hundred_thousand_limits_is_a_hung_call_with_no_later_call() {
    let (breaker, clock) = breaker();
    // So long out that its bucket's name can no longer be trusted: its own end judges it,
    // cancelled or not (`Builder::slow_call`).
    let call = hanging_async_call(&breaker);
    clock.advance(LIMIT * 200_000);
    drop(call);
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.released, metrics.failures, metrics.hung_calls),
        (0, 1, 1),
        "{metrics:?}"
    );
}
