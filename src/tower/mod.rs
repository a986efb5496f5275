//! A [`tower`](https://docs.rs/tower) `Layer` and `Service` that put a [`Breaker`] in front of a
//! service: for hyper, axum, tonic and every other stack built from tower services.
//!
//! ```
//! use std::sync::Arc;
//! use hotbreaker::tower::{BreakerLayer, HttpClassifier};
//! use hotbreaker::{Breaker, CallError};
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let breaker = Arc::new(Breaker::builder().consecutive_failures(5).build()?);
//! let mut service = ServiceBuilder::new()
//!     .layer(BreakerLayer::new(Arc::clone(&breaker)).classify(HttpClassifier))
//!     .service_fn(|_request: http::Request<()>| async {
//!         Ok::<_, std::convert::Infallible>(http::Response::new("hello"))
//!     });
//! match service.ready().await?.call(http::Request::new(())).await {
//!     Ok(response) => assert_eq!(*response.body(), "hello"),
//!     Err(CallError::Rejected(rejected)) => panic!("not called: {rejected}"),
//!     Err(CallError::Failed(error)) => panic!("failed: {error}"),
//! }
//! assert_eq!(breaker.metrics().failures, 0);
//! # Ok(())
//! # }
//! ```
//!
//! # How it behaves
//!
//! - **Readiness reserves nothing.** [`poll_ready`](Service::poll_ready) asks the inner service,
//!   and the permit is taken in [`call`](Service::call): a service made ready and then dropped,
//!   or never called, holds no permit. While the breaker is open, or half-open with every
//!   probe place taken, `poll_ready` answers at once without waiting for the inner service
//!   (which may be stuck on the very dependency that is down, or on the probe itself), and
//!   `call` rejects, counted as a rejection, even if the open period has ended or a probe place
//!   come free in between (the inner service was not made ready). Such a rejection still opens
//!   the breaker again when the probes out have run past the probe timeout, as a call that
//!   asked for a permit would. A task already waiting in the inner service's `poll_ready` when
//!   the breaker opens is not woken by the opening: it learns of it at its next poll, when the
//!   inner service wakes it. The other way round, an inner service made ready by `poll_ready`
//!   whose call the breaker then turns away in `call` (the breaker opened in between, or
//!   another call took the last probe place) stays ready: whatever its readiness holds (a
//!   `ConcurrencyLimit` or `Buffer` place) is held until this service's next call or its drop,
//!   as with tower's own `Filter`. A long-lived clone that sits idle after such a rejection
//!   keeps that place from its siblings; drop the service, or call through a fresh clone per
//!   request (`oneshot`), where the inner service's capacity is shared.
//! - **Readiness errors are passed on, not counted.** An error out of the inner service's
//!   `poll_ready` comes back as [`CallError::Failed`] without a verdict: no call was made and
//!   no permit taken. A service whose readiness is where the dependency fails (one that
//!   connects in `poll_ready`) should report that failure from `call` instead, where the
//!   breaker sees it.
//! - **Cancellation is safe.** The permit (an [`OwnedPermit`]) moves into
//!   the [`ResponseFuture`]; a future dropped before it completes (a client that went away, a
//!   timeout around it, a panic elsewhere in the task) gives the permit back without a
//!   verdict, so a cancelled half-open probe never leaves the breaker stuck (with a
//!   [`slow_call`](crate::Builder::slow_call) limit, a call already judged hung while it was
//!   out stays a failure, as with [`Breaker::call_async`]). A panic out of the
//!   inner future or the classifier counts as a failure, also when something catches it and
//!   drops the future later.
//! - **Rejection is typed.** The service's error is [`CallError<E>`], the same error as
//!   [`Breaker::call`]'s: [`CallError::Rejected`] when the breaker did not let the call through,
//!   [`CallError::Failed`] with the inner service's error otherwise. Matching needs no
//!   downcast, and a rejection, which is what an open breaker does thousands of times a
//!   second, allocates nothing. Where a stack wants tower's `BoxError`, use
//!   [`CallError::into_boxed`] (`ServiceBuilder::map_err(CallError::into_boxed)`): the box
//!   downcasts to [`Rejected`] or to the inner error, as tower's own `Elapsed` and `Overloaded`
//!   do.
//! - **A classifier decides what a failure is** ([`Classify`]): by default every `Err` fails and
//!   every `Ok` succeeds; [`HttpClassifier`] counts 5xx responses and errors (timeouts, refused
//!   connections) as failures, ignores 4xx (the request was bad, not the service), and counts
//!   the rest as successes; any closure over `&Result<Response, Error>` works too.
//!
//! # Retry goes inside
//!
//! Put a retry layer *inside* the breaker (after it in `ServiceBuilder`):
//! `ServiceBuilder::new().layer(BreakerLayer::new(b)).layer(RetryLayer::new(policy))`. Retries
//! then smooth over a passing fault and the breaker sees one outcome per request, after the
//! retries; when the dependency is down, the breaker opens and rejects before any retry is
//! tried. A retry outside the breaker would hammer an open breaker and count each retry of a
//! single request as a separate failure.
//!
//! # Performance
//!
//! Per call, on top of the breaker's own check: one load of the state word in `poll_ready`, and
//! one clone and one drop of the breaker's `Arc` (for the permit that travels with the future).
//! The breaker's fields start on their own cache line, so those reference-count writes do not
//! disturb the line every call reads. The classifier is cloned into each admitted call's
//! future, since it judges the response after the service is free for the next request: the
//! two built in are empty or a copy of a few bytes, but a closure that captures an `Arc`
//! adds a reference-count write per call, and one that captures a `String` an allocation.
//! Capture a `&'static` or nothing where that matters.

mod http;

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::breaker::Breaker;
use crate::call::CallError;
use crate::clock::{Clock, QuantaClock};
use crate::permit::{Outcome, OwnedPermit, Rejected};
use crate::state::StateWord;

pub use self::http::{HttpClassifier, outcome_of_status};

/// The error type tower middleware passes around.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// Decides how the result of a call counts for the breaker.
///
/// Implemented by every `Fn(&Result<T, E>) -> Outcome`, by [`EveryErrorFails`] (the default)
/// and by [`HttpClassifier`].
///
/// # Examples
///
/// ```
/// use hotbreaker::Outcome;
/// use hotbreaker::tower::Classify;
///
/// // A gRPC-like service that reports failures in its response.
/// struct Reply { unavailable: bool }
/// let classify = |result: &Result<Reply, std::io::Error>| match result {
///     Ok(reply) if reply.unavailable => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(_) => Outcome::Failure,
/// };
/// assert_eq!(classify.classify(&Ok(Reply { unavailable: true })), Outcome::Failure);
/// ```
pub trait Classify<T, E> {
    /// How `result` counts.
    fn classify(&self, result: &Result<T, E>) -> Outcome;
}

impl<F, T, E> Classify<T, E> for F
where
    F: Fn(&Result<T, E>) -> Outcome,
{
    fn classify(&self, result: &Result<T, E>) -> Outcome {
        self(result)
    }
}

/// The default classifier: every `Ok` is a success, every `Err` a failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EveryErrorFails;

impl<T, E> Classify<T, E> for EveryErrorFails {
    fn classify(&self, result: &Result<T, E>) -> Outcome {
        crate::call::every_error_fails(result)
    }
}

/// A tower [`Layer`] that wraps services in a [`BreakerService`] sharing one breaker.
///
/// Every service the layer makes (and every clone of them) reports to the same breaker, so a
/// layer belongs to one dependency. See the [module documentation](self) for how it behaves.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use hotbreaker::Breaker;
/// use hotbreaker::tower::{BreakerLayer, HttpClassifier};
///
/// let breaker = Arc::new(Breaker::builder().failure_rate(0.5, 20).build()?);
/// let layer = BreakerLayer::new(breaker).classify(HttpClassifier);
/// # Ok::<(), hotbreaker::ConfigError>(())
/// ```
pub struct BreakerLayer<Cl = EveryErrorFails, C: Clock = QuantaClock> {
    breaker: Arc<Breaker<C>>,
    classifier: Cl,
}

impl<C: Clock> BreakerLayer<EveryErrorFails, C> {
    /// A layer reporting to `breaker`, counting every `Err` as a failure.
    pub fn new(breaker: Arc<Breaker<C>>) -> Self {
        BreakerLayer {
            breaker,
            classifier: EveryErrorFails,
        }
    }
}

impl<Cl, C: Clock> BreakerLayer<Cl, C> {
    /// Uses `classifier` to decide how each response or error counts.
    pub fn classify<K>(self, classifier: K) -> BreakerLayer<K, C> {
        BreakerLayer {
            breaker: self.breaker,
            classifier,
        }
    }

    /// The breaker the layer's services report to.
    pub fn breaker(&self) -> &Arc<Breaker<C>> {
        &self.breaker
    }
}

impl<S, Cl: Clone, C: Clock> Layer<S> for BreakerLayer<Cl, C> {
    type Service = BreakerService<S, Cl, C>;

    fn layer(&self, inner: S) -> Self::Service {
        BreakerService::new(inner, Arc::clone(&self.breaker)).classify(self.classifier.clone())
    }
}

impl<Cl: Clone, C: Clock> Clone for BreakerLayer<Cl, C> {
    fn clone(&self) -> Self {
        BreakerLayer {
            breaker: Arc::clone(&self.breaker),
            classifier: self.classifier.clone(),
        }
    }
}

impl<Cl: fmt::Debug, C: Clock> fmt::Debug for BreakerLayer<Cl, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerLayer")
            .field("breaker", &self.breaker)
            .field("classifier", &self.classifier)
            .finish()
    }
}

/// A tower [`Service`] that calls its inner service only when its breaker lets the call
/// through, and reports the classified result to the breaker.
///
/// Made by [`BreakerLayer`] or [`BreakerService::new`]. See the [module documentation](self)
/// for how it behaves.
pub struct BreakerService<S, Cl = EveryErrorFails, C: Clock = QuantaClock> {
    inner: S,
    breaker: Arc<Breaker<C>>,
    classifier: Cl,
    /// `poll_ready` found the breaker open and answered without polling `inner`: the next
    /// `call` must not call `inner` (it was not made ready), and rejects.
    shedding: bool,
}

impl<S, C: Clock> BreakerService<S, EveryErrorFails, C> {
    /// Wraps `inner`, reporting to `breaker` and counting every `Err` as a failure.
    pub fn new(inner: S, breaker: Arc<Breaker<C>>) -> Self {
        BreakerService {
            inner,
            breaker,
            classifier: EveryErrorFails,
            shedding: false,
        }
    }
}

impl<S, Cl, C: Clock> BreakerService<S, Cl, C> {
    /// Uses `classifier` to decide how each response or error counts.
    pub fn classify<K>(self, classifier: K) -> BreakerService<S, K, C> {
        BreakerService {
            inner: self.inner,
            breaker: self.breaker,
            classifier,
            shedding: self.shedding,
        }
    }

    /// The breaker this service reports to.
    pub fn breaker(&self) -> &Arc<Breaker<C>> {
        &self.breaker
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Req, Cl, C> Service<Req> for BreakerService<S, Cl, C>
where
    S: Service<Req>,
    Cl: Classify<S::Response, S::Error> + Clone,
    C: Clock,
{
    type Response = S::Response;
    type Error = CallError<S::Error>;
    type Future = ResponseFuture<S::Future, Cl, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Only a peek: no permit is taken here, so nothing can leak if `call` never comes.
        if self.breaker.sheds() {
            self.shedding = true;
            return Poll::Ready(Ok(()));
        }
        self.shedding = false;
        self.inner.poll_ready(cx).map_err(CallError::Failed)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let kind = if std::mem::take(&mut self.shedding) {
            // `poll_ready` found the breaker turning calls away and did not make `inner`
            // ready, so `inner` must not be called even if the open period has ended or a
            // probe place come free since: rejected, and counted as such, without a permit.
            Kind::Rejected {
                rejected: self.breaker.shed(),
            }
        } else {
            match self.breaker.try_acquire_owned_noting_quiet() {
                Ok((mut permit, admitted_quiet)) => {
                    // The inner service's `call` is the dependency's code too: a panic out of
                    // it drops the permit as a failure. Set back before the first poll.
                    permit.set_fails_if_dropped(true);
                    let future = self.inner.call(request);
                    permit.set_fails_if_dropped(false);
                    Kind::Called {
                        future,
                        verdict: Some(Verdict {
                            permit,
                            classifier: self.classifier.clone(),
                            admitted_quiet,
                        }),
                    }
                }
                Err(rejected) => Kind::Rejected { rejected },
            }
        };
        ResponseFuture { kind }
    }
}

impl<S: Clone, Cl: Clone, C: Clock> Clone for BreakerService<S, Cl, C> {
    fn clone(&self) -> Self {
        BreakerService {
            inner: self.inner.clone(),
            breaker: Arc::clone(&self.breaker),
            classifier: self.classifier.clone(),
            // A clone has not been made ready (tower's contract for clones).
            shedding: false,
        }
    }
}

impl<S: fmt::Debug, Cl: fmt::Debug, C: Clock> fmt::Debug for BreakerService<S, Cl, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerService")
            .field("inner", &self.inner)
            .field("breaker", &self.breaker)
            .field("classifier", &self.classifier)
            .finish()
    }
}

pin_project! {
    /// The future of a [`BreakerService`] call: the inner service's future with the permit
    /// that admitted it, or a rejection.
    ///
    /// Dropped before it completes, it gives the permit back without a verdict. A panic while
    /// it polls the inner future counts as a failure when the future is dropped, which may be
    /// after something caught the panic; a panic of the classifier, as it unwinds.
    pub struct ResponseFuture<F, Cl, C: Clock> {
        #[pin]
        kind: Kind<F, Cl, C>,
    }
}

pin_project! {
    #[project = KindProjection]
    enum Kind<F, Cl, C: Clock> {
        Called {
            #[pin]
            future: F,
            // Taken when the verdict is recorded.
            verdict: Option<Verdict<Cl, C>>,
        },
        Rejected {
            rejected: Rejected,
        },
    }
}

/// What a call that went through needs to record its verdict when its future completes.
struct Verdict<Cl, C: Clock> {
    permit: OwnedPermit<C>,
    classifier: Cl,
    /// The state word the permit was admitted under, if it was quiet.
    admitted_quiet: Option<StateWord>,
}

impl<F, Cl, C, T, E> Future for ResponseFuture<F, Cl, C>
where
    F: Future<Output = Result<T, E>>,
    Cl: Classify<T, E>,
    C: Clock,
{
    type Output = Result<T, CallError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProjection::Rejected { rejected } => {
                Poll::Ready(Err(CallError::Rejected(*rejected)))
            }
            KindProjection::Called { future, verdict } => {
                // While the inner future runs, a panic out of it drops the permit as a
                // failure; between polls, a drop (cancelled, or dropped by a panic elsewhere)
                // gives it back.
                if let Some(verdict) = verdict.as_mut() {
                    verdict.permit.set_fails_if_dropped(true);
                }
                let polled = future.poll(cx);
                let result = match polled {
                    Poll::Ready(result) => result,
                    Poll::Pending => {
                        if let Some(verdict) = verdict.as_mut() {
                            verdict.permit.set_fails_if_dropped(false);
                        }
                        return Poll::Pending;
                    }
                };
                if let Some(verdict) = verdict.take() {
                    // Still set to fail: a panic in the classifier counts as a failure.
                    let outcome = verdict.classifier.classify(&result);
                    // A success into a window that is still clean skips it, as in
                    // `Breaker::call` (`quiet.rs`).
                    verdict
                        .permit
                        .record_unless_quiet(outcome, verdict.admitted_quiet);
                }
                Poll::Ready(result.map_err(CallError::Failed))
            }
        }
    }
}

impl<F, Cl, C: Clock> fmt::Debug for ResponseFuture<F, Cl, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ResponseFuture");
        match &self.kind {
            Kind::Called { verdict, .. } => s.field("pending", &verdict.is_some()),
            Kind::Rejected { rejected } => s.field("rejected", rejected),
        };
        s.finish_non_exhaustive()
    }
}

impl<E: Into<BoxError>> CallError<E> {
    /// Converts into tower's `BoxError`, unwrapped: the box holds the [`Rejected`] or the
    /// inner error itself, so `error.is::<Rejected>()` and the inner error's own downcasts work
    /// as they do for tower's `Elapsed` and `Overloaded`. Allocates for a rejection.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{CallError, Rejected};
    ///
    /// let error: CallError<std::io::Error> = CallError::Failed(std::io::ErrorKind::TimedOut.into());
    /// let boxed = error.into_boxed();
    /// assert!(boxed.is::<std::io::Error>());
    /// assert!(!boxed.is::<Rejected>());
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub fn into_boxed(self) -> BoxError {
        match self {
            CallError::Rejected(rejected) => Box::new(rejected),
            CallError::Failed(error) => error.into(),
        }
    }
}
