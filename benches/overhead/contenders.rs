//! Everything measured side by side, behind one small trait: the bare call, `hotbreaker`, the
//! other breakers on crates.io, and a naive breaker behind a `Mutex`.
//!
//! Every contender gets the same rule where it has one: trip when half of the last `window`
//! calls failed. failsafe has no count-based window; it runs its default policy (success rate
//! over a 30 s time window, or 5 consecutive failures).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hotbreaker::{Breaker, CallError};

use crate::calls::Reply;

/// How long a tripped contender stays open: longer than any measurement.
pub const OPEN_FOR: Duration = Duration::from_secs(3600);

/// A circuit breaker (or none) that guards one call.
pub trait Guard: Sync {
    /// The name in the report.
    const NAME: &'static str;

    /// A guard that trips when half of the last `window` calls failed, and stays open for
    /// [`OPEN_FOR`].
    fn with_window(window: u32) -> Self;

    /// Runs `op` if the guard admits it and records its result; `None` when rejected.
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply>;

    /// Fails calls until the guard rejects one.
    fn trip(&self) {
        for _ in 0..1_000_000 {
            if self.run(|| Err(0)).is_none() {
                return;
            }
        }
        panic!("{} did not trip", Self::NAME);
    }
}

/// No breaker: the call alone.
pub struct Bare;

impl Guard for Bare {
    const NAME: &'static str = "bare call";

    fn with_window(_window: u32) -> Self {
        Bare
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        Some(op())
    }

    fn trip(&self) {}
}

/// A call through this crate, as the other contenders report it: the reply, or `None` when
/// rejected.
#[inline(always)]
fn run_hot(breaker: &Breaker, op: impl FnOnce() -> Reply) -> Option<Reply> {
    match breaker.call(op) {
        Ok(value) => Some(Ok(value)),
        Err(CallError::Failed(error)) => Some(Err(error)),
        Err(CallError::Rejected(_)) => None,
    }
}

/// This crate, with its default clock.
pub struct Hot(pub Breaker);

impl Guard for Hot {
    const NAME: &'static str = "hotbreaker";

    fn with_window(window: u32) -> Self {
        Hot(Breaker::builder()
            .failure_rate(0.5, window as usize)
            .open_duration(OPEN_FOR)
            .build()
            .expect("valid settings"))
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        run_hot(&self.0, op)
    }
}

/// This crate with a window per thread (`Builder::per_thread_windows`): each thread's calls
/// judged apart, one state for all.
pub struct HotPerThread(pub Breaker);

impl Guard for HotPerThread {
    const NAME: &'static str = "hotbreaker, window per thread";

    fn with_window(window: u32) -> Self {
        HotPerThread(
            Breaker::builder()
                .failure_rate(0.5, window as usize)
                .open_duration(OPEN_FOR)
                .per_thread_windows(true)
                .build()
                .expect("valid settings"),
        )
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        run_hot(&self.0, op)
    }
}

/// recloser 1.4: a ring of outcomes behind an epoch-protected state pointer.
pub struct Recloser(recloser::Recloser);

impl Guard for Recloser {
    const NAME: &'static str = "recloser";

    fn with_window(window: u32) -> Self {
        Recloser(
            recloser::Recloser::custom()
                .error_rate(0.5)
                .closed_len(window as usize)
                .half_open_len(1)
                .open_wait(OPEN_FOR)
                .build(),
        )
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        match self.0.call(op) {
            Ok(value) => Some(Ok(value)),
            Err(recloser::Error::Inner(error)) => Some(Err(error)),
            Err(recloser::Error::Rejected) => None,
        }
    }
}

type FailsafePolicy = failsafe::failure_policy::OrElse<
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>,
    failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
>;

/// failsafe 1.3: its default policy (success rate over a time window, or 5 consecutive
/// failures) behind a mutex; the backoff is constant so that it stays open.
pub struct Failsafe(failsafe::StateMachine<FailsafePolicy, ()>);

impl Guard for Failsafe {
    const NAME: &'static str = "failsafe";

    fn with_window(_window: u32) -> Self {
        use failsafe::failure_policy::{
            FailurePolicy, consecutive_failures, success_rate_over_time_window,
        };
        // failsafe's default policy and thresholds (success rate 0.8 over 30 s with at least 5
        // calls, or 5 consecutive failures), with a constant backoff instead of a jittered one.
        let backoff = failsafe::backoff::constant(OPEN_FOR);
        let policy =
            success_rate_over_time_window(0.8, 5, Duration::from_secs(30), backoff.clone())
                .or_else(consecutive_failures(5, backoff));
        Failsafe(failsafe::Config::new().failure_policy(policy).build())
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        use failsafe::CircuitBreaker;
        match self.0.call(op) {
            Ok(value) => Some(Ok(value)),
            Err(failsafe::Error::Inner(error)) => Some(Err(error)),
            Err(failsafe::Error::Rejected) => None,
        }
    }
}

/// breaker 2.0: a state machine behind a read-write lock; its `call` is async, and is polled
/// here once with a no-op waker (the operation is always ready).
pub struct BreakerCrate(breaker::CircuitBreaker);

impl Guard for BreakerCrate {
    const NAME: &'static str = "breaker";

    fn with_window(window: u32) -> Self {
        let config = breaker::CircuitBreakerConfig::builder()
            .failure_rate_threshold(0.5)
            .sliding_window_size(window)
            .minimum_calls(window)
            .consecutive_failures(u32::MAX)
            .wait_duration(OPEN_FOR)
            .half_open_max_calls(1)
            .build();
        BreakerCrate(breaker::CircuitBreaker::new(config))
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        match ready(self.0.call(|| std::future::ready(op()))) {
            Ok(value) => Some(Ok(value)),
            Err(breaker::CircuitBreakerError::Failure(error)) => Some(Err(error)),
            Err(_) => None,
        }
    }
}

/// Polls a future that is ready at once.
#[inline]
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("the operation is always ready"),
    }
}

/// The breaker one writes in an afternoon: a window of outcomes and an open deadline behind
/// one mutex, locked to admit and again to record.
pub struct Naive(Mutex<NaiveState>);

struct NaiveState {
    window: VecDeque<bool>,
    size: usize,
    failures: usize,
    open_until: Option<Instant>,
}

impl Guard for Naive {
    const NAME: &'static str = "naive Mutex";

    fn with_window(window: u32) -> Self {
        Naive(Mutex::new(NaiveState {
            window: VecDeque::with_capacity(window as usize),
            size: window as usize,
            failures: 0,
            open_until: None,
        }))
    }

    #[inline(always)]
    fn run(&self, op: impl FnOnce() -> Reply) -> Option<Reply> {
        {
            let mut state = self.0.lock().unwrap();
            if let Some(until) = state.open_until {
                if Instant::now() < until {
                    return None;
                }
                state.open_until = None; // half-open, simplified: let calls through
            }
        }
        let reply = op();
        let mut state = self.0.lock().unwrap();
        let failed = reply.is_err();
        if state.window.len() == state.size && state.window.pop_front() == Some(true) {
            state.failures -= 1;
        }
        state.window.push_back(failed);
        state.failures += usize::from(failed);
        if state.window.len() == state.size && state.failures * 2 >= state.size {
            state.open_until = Some(Instant::now() + OPEN_FOR);
            state.window.clear();
            state.failures = 0;
        }
        Some(reply)
    }
}
