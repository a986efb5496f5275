//! Calling through the breaker from async code, with no runtime dependency.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::breaker::Breaker;
use crate::call::{CallError, every_error_fails};
use crate::clock::Clock;
use crate::permit::{Outcome, Permit};

impl<C: Clock> Breaker<C> {
    /// Awaits `future` if the breaker lets the call through, and records its result: `Ok` as a
    /// success, `Err` as a failure.
    ///
    /// The permit is held across the `.await`. If the returned future is dropped before
    /// `future` completes (a timeout, a cancelled request), the permit is dropped with it and
    /// gives its admission back, so a cancelled probe never leaves the breaker half-open for
    /// good; so does a panic elsewhere that drops it between polls (a sibling branch of a
    /// `join!`). A panic while polling `future`, or in `classify`, counts as a failure.
    ///
    /// So a timeout belongs *inside* the call, as part of `future`
    /// (`breaker.call_async(async { tokio::time::timeout(d, fetch()).await? })`): then a
    /// dependency that hangs fails the call and trips the breaker. A timeout around the
    /// returned future only cancels it, which counts as nothing. With a
    /// [`slow_call`](crate::Builder::slow_call) limit, a call still out when its bucket falls
    /// due (between the limit and one and a half times the limit after its admission) is
    /// judged a failure (a hung call) by the first call admitted after that, and stays one
    /// if it is cancelled later; cancelled before such a call came, it counts as nothing like
    /// any other cancelled call, unless it was out more than about 100,000 limits: then its
    /// own end judges it hung (see [`slow_call`](crate::Builder::slow_call)).
    ///
    /// # Errors
    ///
    /// [`CallError::Rejected`] if the breaker did not let the call through (`future` is dropped
    /// without being polled), [`CallError::Failed`] with `future`'s error otherwise.
    ///
    /// # Panics
    ///
    /// If `future` panics when polled (counted as a failure first), or a transition listener
    /// panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// # async fn fetch() -> Result<&'static str, std::io::Error> { Ok("reply") }
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use hotbreaker::{Breaker, CallError};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    /// let reply = breaker.call_async(fetch()).await;
    /// assert_eq!(reply.unwrap(), "reply");
    ///
    /// // A failure trips this breaker; the next future is dropped without being polled.
    /// let failed = breaker.call_async(async { Err::<&str, _>("timed out") }).await;
    /// assert!(matches!(failed, Err(CallError::Failed("timed out"))));
    /// let turned_away = breaker.call_async(fetch()).await;
    /// assert!(matches!(turned_away, Err(CallError::Rejected(_))));
    /// # });
    /// ```
    pub async fn call_async<T, E, F>(&self, future: F) -> Result<T, CallError<E>>
    where
        F: Future<Output = Result<T, E>>,
    {
        self.call_async_with(every_error_fails, future).await
    }

    /// Like [`call_async`](Breaker::call_async), with `classify` deciding how the result
    /// counts (see [`call_with`](Breaker::call_with)).
    ///
    /// # Errors
    ///
    /// As for [`call_async`](Breaker::call_async).
    ///
    /// # Panics
    ///
    /// As for [`call_async`](Breaker::call_async), and if `classify` panics (counted as a
    /// failure first).
    ///
    /// # Examples
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use hotbreaker::{Breaker, CallError, Outcome};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    /// // A 404 says the request was bad, not the service: it does not count.
    /// let classify = |result: &Result<&str, u16>| match result {
    ///     Err(400..=499) => Outcome::Ignore,
    ///     Err(_) => Outcome::Failure,
    ///     Ok(_) => Outcome::Success,
    /// };
    /// let missing = breaker.call_async_with(classify, async { Err(404) }).await;
    /// assert!(matches!(missing, Err(CallError::Failed(404))));
    /// assert!(breaker.try_acquire().is_ok(), "still closed");
    /// # });
    /// ```
    pub async fn call_async_with<T, E, F>(
        &self,
        classify: impl FnOnce(&Result<T, E>) -> Outcome,
        future: F,
    ) -> Result<T, CallError<E>>
    where
        F: Future<Output = Result<T, E>>,
    {
        let (mut permit, admitted_quiet) = self
            .try_acquire_noting_quiet()
            .map_err(CallError::Rejected)?;
        let result = FailsIfPollPanics {
            future: std::pin::pin!(future),
            permit: &mut permit,
        }
        .await;
        permit.set_fails_if_dropped(true); // a panic in `classify`
        // A success into a window that is still clean skips it, as in `call` (`quiet.rs`).
        permit.record_unless_quiet(classify(&result), admitted_quiet);
        result.map_err(CallError::Failed)
    }
}

/// Polls `future` with its permit set to fail if dropped, and set back after each poll: a
/// panic out of the dependency's future drops the permit as a failure, while this future
/// dropped between polls (cancelled, or dropped by a panic elsewhere) gives it back.
struct FailsIfPollPanics<'p, 'b, F, C: Clock> {
    future: Pin<&'p mut F>,
    permit: &'p mut Permit<'b, C>,
}

impl<F: Future, C: Clock> Future for FailsIfPollPanics<'_, '_, F, C> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        this.permit.set_fails_if_dropped(true);
        let polled = this.future.as_mut().poll(cx);
        this.permit.set_fails_if_dropped(false);
        polled
    }
}
