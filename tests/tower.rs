//! The tower layer: rejection, classification, cancellation, readiness, and retry inside the
//! breaker.
#![cfg(feature = "tower")]

use std::convert::Infallible;
use std::future::{Future, Pending, Ready, pending, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hotbreaker::tower::{BreakerLayer, HttpClassifier};
use hotbreaker::{Breaker, CallError, ManualClock, Outcome, Rejected, State};
use tower::retry::{Policy, RetryLayer};
use tower::{Layer, Service, ServiceBuilder, ServiceExt, service_fn};

#[path = "support/bursty_outcomes.rs"]
mod bursty_outcomes;
use bursty_outcomes::{bursty_failures, judged_by_rate_and_run};

/// Generous guard against a hang; no test depends on how long anything takes.
const GUARD: Duration = Duration::from_secs(10);

fn breaker(consecutive: usize) -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(consecutive)
        .open_duration(Duration::from_secs(1))
        .count_successes(true)
        .clock(clock.clone())
        .build()
        .unwrap();
    (Arc::new(breaker), clock)
}

/// Trips `breaker` and lets its open period end: the next call is a probe.
fn half_open(breaker: &Breaker<ManualClock>, clock: &ManualClock) {
    while breaker.state() == State::Closed {
        breaker.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_secs(1));
    assert_eq!(breaker.state(), State::HalfOpen);
}

fn response(status: u16) -> http::Response<()> {
    let mut response = http::Response::new(());
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
    response
}

/// A dependency that answers each request (a status code) with that status, and counts calls.
fn dependency(
    calls: &Arc<AtomicUsize>,
) -> impl use<>
+ Service<
    u16,
    Response = http::Response<()>,
    Error = Infallible,
    Future = Ready<Result<http::Response<()>, Infallible>>,
> + Clone {
    let calls = Arc::clone(calls);
    service_fn(move |status: u16| {
        calls.fetch_add(1, Ordering::Relaxed);
        ready(Ok(response(status)))
    })
}

async fn send<S: Service<u16>>(service: &mut S, status: u16) -> Result<S::Response, S::Error> {
    tokio::time::timeout(GUARD, async { service.ready().await?.call(status).await })
        .await
        .expect("the call finished")
}

#[tokio::test]
async fn an_open_breaker_rejects_without_calling_the_service() {
    let (breaker, _clock) = breaker(2);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(HttpClassifier))
        .service(dependency(&calls));

    for _ in 0..2 {
        let reply = send(&mut service, 503)
            .await
            .expect("503 is a response, not an error");
        assert_eq!(reply.status(), 503);
    }
    assert_eq!(breaker.state(), State::Open);

    match send(&mut service, 200).await {
        Err(CallError::Rejected(rejected)) => {
            assert_eq!(rejected.state(), State::Open);
            assert_eq!(rejected.retry_after(), Some(Duration::from_secs(1)));
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::Relaxed),
        2,
        "the rejected call never reached the service"
    );
    assert_eq!(breaker.metrics().rejected, 1);
}

#[tokio::test]
async fn http_classifier_fails_5xx_ignores_4xx_and_passes_the_rest() {
    let (breaker, _clock) = breaker(3);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(HttpClassifier))
        .service(dependency(&calls));

    send(&mut service, 500).await.unwrap();
    let m = breaker.metrics();
    assert_eq!(
        (m.failures, m.ignored, m.successes),
        (1, 0, Some(0)),
        "500 fails"
    );
    assert_eq!(m.consecutive_failures, 1);

    // Any number of 404s neither trips the breaker nor ends the run of failures.
    for _ in 0..10 {
        send(&mut service, 404).await.unwrap();
    }
    let m = breaker.metrics();
    assert_eq!(
        (m.failures, m.ignored, m.successes),
        (1, 10, Some(0)),
        "404 is ignored"
    );
    assert_eq!(m.consecutive_failures, 1);
    assert_eq!(breaker.state(), State::Closed);

    send(&mut service, 200).await.unwrap();
    send(&mut service, 302).await.unwrap();
    let m = breaker.metrics();
    assert_eq!(
        (m.failures, m.ignored, m.successes),
        (1, 10, Some(2)),
        "200 and 302 succeed"
    );
    assert_eq!(m.consecutive_failures, 0);
}

#[tokio::test]
async fn errors_fail_and_closures_classify() {
    let (breaker, _clock) = breaker(1);
    // A service with its own errors, and a closure that ignores one kind of them.
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(
            |result: &Result<(), &'static str>| match result {
                Err("bad request") => Outcome::Ignore,
                Err(_) => Outcome::Failure,
                Ok(()) => Outcome::Success,
            },
        ))
        .service(service_fn(|status: u16| {
            ready(match status {
                400 => Err("bad request"),
                500 => Err("timed out"),
                _ => Ok(()),
            })
        }));

    assert_eq!(
        send(&mut service, 400).await,
        Err(CallError::Failed("bad request"))
    );
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        send(&mut service, 500).await,
        Err(CallError::Failed("timed out"))
    );
    assert_eq!(breaker.state(), State::Open);
    assert!(send(&mut service, 200).await.unwrap_err().is_rejected());
}

#[tokio::test]
async fn a_dropped_response_future_gives_its_probe_back() {
    let (breaker, clock) = breaker(1);
    half_open(&breaker, &clock);
    let hangs = Arc::new(AtomicUsize::new(1));
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)))
        .service(service_fn({
            let hangs = Arc::clone(&hangs);
            move |_: u16| {
                let hang = hangs.fetch_sub(1, Ordering::Relaxed) > 0;
                async move {
                    if hang {
                        pending::<()>().await;
                    }
                    Ok::<_, Infallible>("reply")
                }
            }
        }));

    // The probe's call hangs and its caller gives up.
    let probe = service.ready().await.unwrap().call(200);
    assert!(
        tokio::time::timeout(Duration::from_millis(5), probe)
            .await
            .is_err()
    );
    let m = breaker.metrics();
    assert_eq!(
        (m.released, m.probes_out),
        (1, 0),
        "the dropped future released its probe"
    );
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "not stuck with a probe out"
    );

    // The next caller probes and closes the breaker.
    assert_eq!(send(&mut service, 200).await, Ok("reply"));
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test]
async fn a_response_future_dropped_before_its_first_poll_releases_too() {
    let (breaker, clock) = breaker(1);
    half_open(&breaker, &clock);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(dependency(&calls));
    let future = service.ready().await.unwrap().call(200);
    assert_eq!(breaker.metrics().probes_out, 1);
    drop(future);
    assert_eq!(breaker.metrics().probes_out, 0);
    assert_eq!(send(&mut service, 200).await.unwrap().status(), 200);
    assert_eq!(breaker.state(), State::Closed);
}

/// A service that is never ready, and counts the calls it gets anyway.
#[derive(Clone, Default)]
struct NeverReady {
    calls: Arc<AtomicUsize>,
}

impl Service<u16> for NeverReady {
    type Response = ();
    type Error = Infallible;
    type Future = Pending<Result<(), Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Pending
    }

    fn call(&mut self, _request: u16) -> Self::Future {
        self.calls.fetch_add(1, Ordering::Relaxed);
        pending()
    }
}

#[tokio::test]
async fn readiness_takes_no_permit() {
    let (breaker, clock) = breaker(1);
    half_open(&breaker, &clock);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut services: Vec<_> = (0..5)
        .map(|_| BreakerLayer::new(Arc::clone(&breaker)).layer(dependency(&calls)))
        .collect();
    // Five services made ready, none called: no probe place is taken.
    for service in &mut services {
        service.ready().await.unwrap();
    }
    let m = breaker.metrics();
    assert_eq!((m.probes_out, m.released, m.rejected), (0, 0, 0));
    drop(services);
    assert_eq!(breaker.metrics().released, 0, "nothing to give back");
    // The one probe place is still free.
    assert!(breaker.try_acquire().unwrap().is_probe());
}

#[tokio::test]
async fn an_open_breaker_is_ready_at_once_even_if_the_service_is_stuck() {
    let (breaker, _clock) = breaker(1);
    breaker.try_acquire().unwrap().failure();
    let stuck = NeverReady::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(stuck.clone());
    match send(&mut service, 200).await {
        Err(CallError::Rejected(rejected)) => assert_eq!(rejected.state(), State::Open),
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(stuck.calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_service_not_made_ready_is_not_called_when_the_open_period_ends_meanwhile() {
    let (breaker, clock) = breaker(1);
    breaker.try_acquire().unwrap().failure();
    let stuck = NeverReady::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(stuck.clone());
    // Ready because the breaker is open (the inner service was not asked) ...
    tokio::time::timeout(GUARD, service.ready())
        .await
        .unwrap()
        .unwrap();
    // ... and the open period ends before the call.
    clock.advance(Duration::from_secs(1));
    let result = tokio::time::timeout(GUARD, service.call(200))
        .await
        .unwrap();
    match result {
        Err(CallError::Rejected(rejected)) => {
            assert_eq!(rejected.retry_after(), Some(Duration::ZERO))
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(
        stuck.calls.load(Ordering::Relaxed),
        0,
        "the unready service was not called"
    );
    let m = breaker.metrics();
    assert_eq!(
        (m.probes_out, m.released, m.half_openings, m.rejected),
        (0, 0, 0, 1),
        "one rejection, and no probe place taken nor half-open period started for it"
    );
    assert!(breaker.try_acquire().unwrap().is_probe());
}

/// Retries a request up to `attempts` times in all while it gets a 5xx or an error.
#[derive(Clone)]
struct Attempts(usize);

impl<B, E> Policy<u16, http::Response<B>, E> for Attempts {
    type Future = Ready<()>;

    fn retry(
        &mut self,
        _: &mut u16,
        result: &mut Result<http::Response<B>, E>,
    ) -> Option<Ready<()>> {
        let failed = result
            .as_ref()
            .map_or(true, |r| r.status().is_server_error());
        (failed && self.0 > 1).then(|| {
            self.0 -= 1;
            ready(())
        })
    }

    fn clone_request(&mut self, request: &u16) -> Option<u16> {
        Some(*request)
    }
}

#[tokio::test]
async fn retry_inside_the_breaker_counts_one_outcome_per_request() {
    let (breaker, _clock) = breaker(2);
    let attempts = Arc::new(AtomicUsize::new(0));
    let flaky_until = Arc::new(AtomicUsize::new(0));
    // Fails with a 503 while `attempts` is below `flaky_until`.
    let dependency = service_fn({
        let (attempts, flaky_until) = (Arc::clone(&attempts), Arc::clone(&flaky_until));
        move |status: u16| {
            let n = attempts.fetch_add(1, Ordering::Relaxed);
            let status = if n < flaky_until.load(Ordering::Relaxed) {
                503
            } else {
                status
            };
            ready(Ok::<_, Infallible>(response(status)))
        }
    });
    // The order the article gives: the breaker outside, the retry inside.
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(HttpClassifier))
        .layer(RetryLayer::new(Attempts(3)))
        .service(dependency);

    // A passing fault: the first attempt fails, the retry succeeds, the breaker sees a success.
    flaky_until.store(1, Ordering::Relaxed);
    assert_eq!(send(&mut service, 200).await.unwrap().status(), 200);
    assert_eq!(attempts.load(Ordering::Relaxed), 2);
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures), (Some(1), 0));

    // The dependency is down: each request spends its three attempts and counts once.
    flaky_until.store(usize::MAX, Ordering::Relaxed);
    for _ in 0..2 {
        assert_eq!(send(&mut service, 200).await.unwrap().status(), 503);
    }
    assert_eq!(attempts.load(Ordering::Relaxed), 2 + 2 * 3);
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures), (Some(1), 2));
    assert_eq!(breaker.state(), State::Open);

    // Open: the breaker rejects before any retry is tried.
    assert!(send(&mut service, 200).await.unwrap_err().is_rejected());
    assert_eq!(attempts.load(Ordering::Relaxed), 8);
}

#[tokio::test]
async fn boxed_errors_downcast_to_rejected_or_the_inner_error() {
    let (breaker, _clock) = breaker(1);
    let mut service = ServiceBuilder::new()
        .map_err(CallError::<std::io::Error>::into_boxed)
        .layer(BreakerLayer::new(Arc::clone(&breaker)))
        .service(service_fn(|_: u16| {
            ready(Err::<(), _>(std::io::Error::from(
                std::io::ErrorKind::TimedOut,
            )))
        }));
    let failed = send(&mut service, 200).await.unwrap_err();
    assert_eq!(
        failed.downcast_ref::<std::io::Error>().map(|e| e.kind()),
        Some(std::io::ErrorKind::TimedOut)
    );
    let rejected = send(&mut service, 200).await.unwrap_err();
    assert_eq!(
        rejected.downcast_ref::<Rejected>().map(|r| r.state()),
        Some(State::Open)
    );
}

#[test]
fn services_and_futures_are_send() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let (breaker, _clock) = breaker(1);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = BreakerLayer::new(breaker)
        .classify(HttpClassifier)
        .layer(dependency(&calls));
    assert_send(&service);
    let future = service.call(200);
    assert_send(&future);
}

/// An inner service whose future panics when polled.
#[derive(Clone)]
struct PanicsWhenPolled;

struct Panics;

impl std::future::Future for Panics {
    type Output = Result<(), Infallible>;

    fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("a bug in the inner service")
    }
}

impl Service<u16> for PanicsWhenPolled {
    type Response = ();
    type Error = Infallible;
    type Future = Panics;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: u16) -> Panics {
        Panics
    }
}

#[test]
fn a_panic_of_the_inner_future_counts_as_a_failure_when_caught_around_the_poll() {
    let (breaker, _) = breaker(1);
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(PanicsWhenPolled);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready());
    let mut future = Box::pin(service.call(1));
    // As `catch_unwind` around a poll does (tower-http's `CatchPanicLayer`): the future is
    // dropped after the panic is caught, when the thread is no longer panicking.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = future.as_mut().poll(&mut cx);
    }));
    assert!(caught.is_err());
    drop(future);
    let m = breaker.metrics();
    assert_eq!((m.failures, m.released), (1, 0), "{m:?}");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn a_panic_elsewhere_in_the_task_gives_the_permit_of_a_call_in_flight_back() {
    let (breaker, _) = breaker(1);
    let (started, start) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn({
        let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(ReadyButHangs);
        async move {
            service.ready().await.unwrap();
            let in_flight = service.call(200);
            let other_branch = async move {
                let _ = start.await;
                panic!("a bug elsewhere in the request handler");
            };
            let _ = tokio::join!(in_flight, other_branch);
        }
    });
    started.send(()).unwrap();
    assert!(task.await.unwrap_err().is_panic());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.released), (0, 1), "{m:?}");
    assert_eq!(breaker.state(), State::Closed);
}

/// Ready at once; its calls never complete.
#[derive(Clone)]
struct ReadyButHangs;

impl Service<u16> for ReadyButHangs {
    type Response = ();
    type Error = Infallible;
    type Future = Pending<Result<(), Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: u16) -> Self::Future {
        pending()
    }
}

/// An inner service whose `call` itself panics.
#[derive(Clone)]
struct PanicsInCall;

impl Service<u16> for PanicsInCall {
    type Response = ();
    type Error = Infallible;
    type Future = Ready<Result<(), Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: u16) -> Self::Future {
        panic!("a bug in the inner service's call")
    }
}

#[test]
fn a_panic_out_of_the_inner_call_counts_as_a_failure() {
    let (breaker, _) = breaker(1);
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(PanicsInCall);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        drop(service.call(1));
    }));
    assert!(caught.is_err());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.released), (1, 0), "{m:?}");
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn a_shed_call_names_a_state_that_rejects_even_if_the_breaker_closed_meanwhile() {
    let (breaker, _) = breaker(1);
    breaker.try_acquire().unwrap().failure();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(NeverReady::default());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(
        service.poll_ready(&mut cx).is_ready(),
        "open: ready at once"
    );
    breaker.reset();
    let rejected = match service.call(200).await {
        Err(CallError::Rejected(rejected)) => rejected,
        other => panic!("expected a rejection, got {other:?}"),
    };
    assert_eq!(rejected.state(), State::Open, "{rejected}");
    assert_eq!(rejected.retry_after(), Some(Duration::ZERO), "retry now");
    assert_eq!(breaker.metrics().rejected, 1);
}

#[tokio::test]
async fn a_shed_call_on_a_half_open_breaker_with_a_free_probe_place_says_retry_now() {
    let clock = ManualClock::new();
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(Duration::from_secs(1))
            .half_open_probes(2)
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    breaker.try_acquire().unwrap().failure();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(NeverReady::default());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(
        service.poll_ready(&mut cx).is_ready(),
        "open: ready at once"
    );
    // The period ends and another caller takes one of the two probe places.
    clock.advance(Duration::from_secs(1));
    let first_probe = breaker.try_acquire_owned().unwrap();
    let rejected = match service.call(200).await {
        Err(CallError::Rejected(rejected)) => rejected,
        other => panic!("expected a rejection, got {other:?}"),
    };
    // Not "half-open and its probes are out": a place is free, so retry now.
    assert_eq!(rejected.state(), State::Open, "{rejected}");
    assert_eq!(rejected.retry_after(), Some(Duration::ZERO), "retry now");
    assert!(breaker.try_acquire().unwrap().is_probe(), "the free place");
    drop(first_probe);
}

/// A half-open breaker whose probe is out: the probe and a stuck inner service.
fn half_open_with_its_probe_out(
    probe_timeout: Option<Duration>,
) -> (
    Arc<Breaker<ManualClock>>,
    ManualClock,
    hotbreaker::OwnedPermit<ManualClock>,
) {
    let clock = ManualClock::new();
    let mut builder = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone());
    if let Some(timeout) = probe_timeout {
        builder = builder.probe_timeout(timeout);
    }
    let breaker = Arc::new(builder.build().unwrap());
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    let probe = breaker.try_acquire_owned().unwrap();
    assert!(probe.is_probe());
    (breaker, clock, probe)
}

#[tokio::test]
async fn a_half_open_breaker_with_every_probe_out_is_ready_at_once_even_if_the_service_is_stuck() {
    let (breaker, _clock, probe) = half_open_with_its_probe_out(None);
    let stuck = NeverReady::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(stuck.clone());
    let result = tokio::time::timeout(GUARD, send(&mut service, 200))
        .await
        .expect("readiness did not wait on the stuck service");
    match result {
        Err(CallError::Rejected(rejected)) => {
            assert_eq!(rejected.state(), State::HalfOpen, "{rejected}")
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(stuck.calls.load(Ordering::Relaxed), 0);
    let m = breaker.metrics();
    assert_eq!((m.probes_out, m.rejected), (1, 1));
    // The probe's verdict still decides.
    probe.record(Outcome::Success);
    assert_eq!(breaker.state(), State::Closed);
    // Closed: readiness asks the inner service again, and waits on it.
    let waited = tokio::time::timeout(Duration::from_millis(1), service.ready()).await;
    assert!(waited.is_err(), "closed: readiness is the inner service's");
}

#[tokio::test]
async fn a_shed_call_reopens_a_breaker_whose_probe_ran_past_the_probe_timeout() {
    let (breaker, clock, probe) = half_open_with_its_probe_out(Some(Duration::from_secs(5)));
    let stuck = NeverReady::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(stuck.clone());
    // Within the timeout: turned away, still half-open.
    assert!(matches!(
        send(&mut service, 200).await,
        Err(CallError::Rejected(rejected)) if rejected.state() == State::HalfOpen
    ));
    assert_eq!(breaker.metrics().openings, 1);
    // At the timeout the probe has not yet run past it.
    clock.advance(Duration::from_secs(5));
    assert!(matches!(
        send(&mut service, 200).await,
        Err(CallError::Rejected(rejected)) if rejected.state() == State::HalfOpen
    ));
    // Past it, the shed call is the one that opens the breaker again, since no caller asks
    // for a permit any other way.
    clock.advance(Duration::from_nanos(1));
    match send(&mut service, 200).await {
        Err(CallError::Rejected(rejected)) => {
            assert_eq!(rejected.state(), State::Open, "{rejected}");
            // Opened 1 ns past a microsecond for 1 s, kept in whole microseconds.
            assert_eq!(
                rejected.retry_after(),
                Some(Duration::from_secs(1) + Duration::from_nanos(999))
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    let m = breaker.metrics();
    assert_eq!((m.state, m.openings, m.rejected), (State::Open, 2, 3));
    assert_eq!(stuck.calls.load(Ordering::Relaxed), 0);
    drop(probe);
}

/// A service whose readiness fails, as one that connects in `poll_ready` would.
#[derive(Clone, Default)]
struct ReadinessFails {
    calls: Arc<AtomicUsize>,
}

impl Service<u16> for ReadinessFails {
    type Response = ();
    type Error = &'static str;
    type Future = Ready<Result<(), &'static str>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
        Poll::Ready(Err("connection refused"))
    }

    fn call(&mut self, _request: u16) -> Self::Future {
        self.calls.fetch_add(1, Ordering::Relaxed);
        ready(Ok(()))
    }
}

#[test]
fn a_readiness_error_is_passed_on_without_a_verdict() {
    let (breaker, _) = breaker(1);
    let inner = ReadinessFails::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(inner.clone());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Err(CallError::Failed(error))) => assert_eq!(error, "connection refused"),
        other => panic!("expected the inner readiness error, got {other:?}"),
    }
    // No call was made and no permit taken: the breaker saw nothing, and one failure would
    // have tripped it.
    let m = breaker.metrics();
    assert_eq!((m.failures, m.probes_out, m.released), (0, 0, 0), "{m:?}");
    assert_eq!(m.state, State::Closed);
    assert_eq!(inner.calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_forced_open_breaker_is_ready_at_once_even_if_the_service_is_stuck() {
    let (breaker, _clock) = breaker(1);
    breaker.force_open();
    let stuck = NeverReady::default();
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(stuck.clone());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready(), "ready at once");
    match service.call(200).await {
        Err(CallError::Rejected(rejected)) => assert_eq!(rejected.state(), State::ForcedOpen),
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(stuck.calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_later_readiness_overrides_an_earlier_shed() {
    // `poll_ready` may be called again before `call`: only the last one decides.
    let (breaker, _clock) = breaker(1);
    breaker.try_acquire().unwrap().failure();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(dependency(&calls));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready(), "open: shed at once");
    breaker.reset();
    assert!(matches!(service.poll_ready(&mut cx), Poll::Ready(Ok(()))));
    let answered = service.call(200).await;
    assert_eq!(
        answered.map(|r| r.status().as_u16()).ok(),
        Some(200),
        "called"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(breaker.metrics().rejected, 0);
}

#[test]
fn the_http_classifier_fails_an_error() {
    use hotbreaker::tower::Classify;
    let timed_out: Result<http::Response<()>, std::io::Error> =
        Err(std::io::ErrorKind::TimedOut.into());
    assert_eq!(HttpClassifier.classify(&timed_out), Outcome::Failure);
}

#[test]
fn the_http_classifier_passes_informational_responses() {
    // 1xx is neither a server nor a client error: the service answered.
    for status in [100, 101, 103] {
        let status = http::StatusCode::from_u16(status).unwrap();
        assert_eq!(
            hotbreaker::tower::outcome_of_status(status),
            Outcome::Success,
            "{status}"
        );
    }
}

#[tokio::test]
async fn a_response_future_says_in_debug_whether_its_verdict_is_still_to_come() {
    let (breaker, _clock) = breaker(5);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = BreakerLayer::new(Arc::clone(&breaker)).layer(dependency(&calls));
    service.ready().await.unwrap();
    let mut future = Box::pin(service.call(200));
    assert!(
        format!("{future:?}").contains("pending: true"),
        "{future:?}"
    );
    // Polled to completion, the verdict is recorded and no longer pending.
    let waker = std::task::Waker::noop();
    let polled = future.as_mut().poll(&mut Context::from_waker(waker));
    assert!(matches!(polled, Poll::Ready(Ok(_))));
    assert!(
        format!("{future:?}").contains("pending: false"),
        "{future:?}"
    );
}

/// The same outcomes through `Breaker::call` on one breaker and the layer on another (with no
/// success counting, so that successes into a clean window skip it): after every call both
/// answer alike and show the same metrics.
#[tokio::test]
async fn the_layer_judges_every_outcome_as_call_does() {
    let clock = ManualClock::new();
    let direct = judged_by_rate_and_run(&clock);
    let layered = Arc::new(judged_by_rate_and_run(&clock));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = ServiceBuilder::new()
        .layer(BreakerLayer::new(Arc::clone(&layered)).classify(HttpClassifier))
        .service(dependency(&calls));
    for (step, fails) in bursty_failures(5_000).enumerate() {
        let status = if fails { 503 } else { 200 };
        let by_call = direct.call(|| if fails { Err(status) } else { Ok(status) });
        let by_layer = send(&mut service, status).await;
        match (&by_call, &by_layer) {
            (Ok(_), Ok(response)) => assert_eq!(response.status(), 200, "call {step}"),
            (Err(CallError::Failed(_)), Ok(response)) => {
                assert_eq!(response.status(), 503, "call {step}")
            }
            (Err(CallError::Rejected(a)), Err(CallError::Rejected(b))) => {
                assert_eq!(a, b, "call {step}")
            }
            _ => panic!("call {step}: {by_call:?} directly, {by_layer:?} through the layer"),
        }
        assert_eq!(direct.metrics(), layered.metrics(), "after call {step}");
        if by_call.as_ref().is_err_and(CallError::is_rejected) {
            clock.advance(Duration::from_millis(100));
        }
    }
    assert!(
        direct.metrics().openings > 3,
        "the sequence trips the breakers"
    );
}
