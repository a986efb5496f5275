//! The tower service allocates nothing of its own: readiness, a call, its verdict and a
//! rejection run under a counting allocator (over an inner service that allocates nothing).
#![cfg(feature = "tower")]

use std::future::{Future, Ready, ready};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hotbreaker::tower::{BreakerLayer, BreakerService, HttpClassifier};
use hotbreaker::{Breaker, ManualClock, State};
use tower::{Layer, Service};

#[path = "support/counting_allocator.rs"]
mod counting_allocator;

use counting_allocator::allocations_during;

/// Answers each request (a status code) with that status, at once.
#[derive(Clone)]
struct Status;

impl Service<u16> for Status {
    type Response = http::Response<()>;
    type Error = std::convert::Infallible;
    type Future = Ready<Result<http::Response<()>, std::convert::Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, status: u16) -> Self::Future {
        let mut response = http::Response::new(());
        *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
        ready(Ok(response))
    }
}

/// Makes the service ready, calls it, and polls the call to its end, without a runtime.
fn send<S: Service<u16>>(service: &mut S, status: u16) -> Result<S::Response, S::Error> {
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(error)) => return Err(error),
        Poll::Pending => panic!("the service is always ready"),
    }
    let mut future = pin!(service.call(status));
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(result) => result,
        Poll::Pending => panic!("the call answers at once"),
    }
}

#[test]
fn calls_verdicts_and_rejections_allocate_nothing() {
    let clock = ManualClock::new();
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(3)
            .open_duration(Duration::from_secs(1))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let mut service: BreakerService<Status, HttpClassifier, ManualClock> =
        BreakerLayer::new(Arc::clone(&breaker))
            .classify(HttpClassifier)
            .layer(Status);
    // Warm up once per thread: the first call claims this thread's counter stripe, and the
    // first failure is the thread's first read of the settings, for which arc-swap allocates
    // its per-thread node. Neither happens again on this thread.
    send(&mut service, 200).unwrap();
    send(&mut service, 503).unwrap();
    send(&mut service, 200).unwrap();
    let allocations = allocations_during(|| {
        for round in 0..20 {
            for _ in 0..50 {
                send(&mut service, 200).unwrap();
            }
            send(&mut service, 404).unwrap();
            for _ in 0..3 {
                send(&mut service, 503).unwrap();
            }
            assert_eq!(breaker.state(), State::Open, "round {round}");
            for _ in 0..10 {
                assert!(send(&mut service, 200).unwrap_err().is_rejected());
            }
            clock.advance(Duration::from_secs(1));
            send(&mut service, 200).unwrap(); // the probe closes it
            assert_eq!(breaker.state(), State::Closed);
        }
    });
    assert_eq!(allocations, 0);
    let m = breaker.metrics();
    assert_eq!((m.rejected, m.openings, m.closings), (200, 20, 20));
}
