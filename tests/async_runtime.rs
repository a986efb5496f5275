//! Async use beyond `tests/async_call.rs`: futures that are `Send` and spawn on a multi-thread
//! runtime, and where a timeout must go for a hung call to count as a failure.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use hotbreaker::{Breaker, CallError, State};

fn assert_send<T: Send>(_: &T) {}

#[test]
fn calls_and_owned_permits_are_send() {
    let breaker = Arc::new(Breaker::builder().build().unwrap());
    let call = breaker.call_async(async { Ok::<_, std::io::Error>(1) });
    assert_send(&call);
    let classified = breaker.call_async_with(
        |result: &Result<u8, u8>| {
            if result.is_ok() {
                hotbreaker::Outcome::Success
            } else {
                hotbreaker::Outcome::Ignore
            }
        },
        async { Ok(1) },
    );
    assert_send(&classified);
    let permit = breaker.try_acquire_owned().unwrap();
    assert_send(&permit);
    permit.success();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_tasks_share_one_breaker() {
    // Each task fails one call in ten. However the tasks interleave, 20 recorded calls cannot
    // hold 10 failures: a task's second failure in the window brings 9 of its successes with
    // it, so 10 failures from 8 tasks need at least 10 * 10 - 9 * 8 = 28 calls. So the breaker
    // never trips and every call is made.
    let breaker = Arc::new(
        Breaker::builder()
            .failure_rate(0.5, 20)
            .count_successes(true)
            .build()
            .unwrap(),
    );
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let breaker = Arc::clone(&breaker);
            tokio::spawn(async move {
                for i in 0..500 {
                    let fails = (i + task) % 10 == 0;
                    let _ = breaker
                        .call_async(async move {
                            tokio::task::yield_now().await;
                            if fails { Err("503") } else { Ok(()) }
                        })
                        .await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let m = breaker.metrics();
    assert_eq!(m.permitted().unwrap() + m.rejected, 8 * 500);
    assert_eq!(m.successes.unwrap() + m.failures, 8 * 500);
    assert_eq!(m.failures, 8 * 50);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "a tenth of failures stays under a half"
    );
}

#[tokio::test]
async fn a_timeout_inside_the_call_counts_as_a_failure_and_outside_as_nothing() {
    let breaker = Breaker::builder().consecutive_failures(2).build().unwrap();
    let hung = || pending::<Result<(), std::io::Error>>();

    // Outside: the caller gives up, the permit is released without a verdict. A dependency that
    // hangs would never trip the breaker this way.
    for _ in 0..3 {
        let outside = tokio::time::timeout(Duration::from_millis(1), breaker.call_async(hung()));
        assert!(outside.await.is_err());
    }
    assert_eq!(
        (breaker.metrics().released, breaker.metrics().failures),
        (3, 0)
    );
    assert_eq!(breaker.state(), State::Closed);

    // Inside: the timeout is the call's result, and counts as a failure.
    for _ in 0..2 {
        let inside = breaker
            .call_async(async { tokio::time::timeout(Duration::from_millis(1), hung()).await? })
            .await;
        assert!(matches!(inside, Err(CallError::Failed(_))), "{inside:?}");
    }
    assert_eq!(breaker.metrics().failures, 2);
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn a_panic_elsewhere_in_the_task_gives_the_permit_of_a_call_in_flight_back() {
    let breaker = Arc::new(Breaker::builder().consecutive_failures(1).build().unwrap());
    let (started, start) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn({
        let breaker = Arc::clone(&breaker);
        async move {
            let in_flight = breaker.call_async(pending::<Result<(), std::io::Error>>());
            let other_branch = async move {
                let _ = start.await;
                panic!("a bug elsewhere in the request handler");
            };
            let _ = tokio::join!(in_flight, other_branch);
        }
    });
    started.send(()).unwrap();
    assert!(task.await.unwrap_err().is_panic());
    let metrics = breaker.metrics();
    assert_eq!((metrics.failures, metrics.released), (0, 1), "{metrics:?}");
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_panic_of_the_future_counts_as_a_failure_when_caught_around_the_poll() {
    let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    let mut call = Box::pin(breaker.call_async(async {
        panic!("a bug in the dependency's client");
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    }));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = call.as_mut().poll(&mut cx);
    }));
    assert!(caught.is_err());
    drop(call);
    let metrics = breaker.metrics();
    assert_eq!((metrics.failures, metrics.released), (1, 0), "{metrics:?}");
    assert_eq!(breaker.state(), State::Open);
}
