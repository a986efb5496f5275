//! Calling through the breaker: acquire, call, classify, record, in one step.

use std::error::Error;
use std::fmt;

use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::permit::{Outcome, Rejected};
use crate::state::StateWord;

/// The error of a call made through [`Breaker::call`]: either the breaker did not let it
/// through, or the call itself failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError<E> {
    /// The breaker rejected the call; the dependency was not called.
    Rejected(Rejected),
    /// The call was made and returned this error.
    Failed(E),
}

impl<E> CallError<E> {
    /// Whether the breaker rejected the call.
    pub fn is_rejected(&self) -> bool {
        matches!(self, CallError::Rejected(_))
    }

    /// The call's own error, if it was made.
    pub fn into_failed(self) -> Option<E> {
        match self {
            CallError::Failed(error) => Some(error),
            CallError::Rejected(_) => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Rejected(rejected) => rejected.fmt(f),
            CallError::Failed(error) => error.fmt(f),
        }
    }
}

// Transparent, as `Display` is: the message is already the rejection's or the call's own, so
// naming that same error as the source would print it twice in every report that walks the
// chain ("connection refused: connection refused"). The chain goes on from the call's error.
impl<E: Error + 'static> Error for CallError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            CallError::Rejected(_) => None,
            CallError::Failed(error) => error.source(),
        }
    }
}

/// Classifies every `Ok` as a success and every `Err` as a failure.
pub fn every_error_fails<T, E>(result: &Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

impl<C: Clock> Breaker<C> {
    /// Calls `f` if the breaker lets it through, and records its result: `Ok` as a success,
    /// `Err` as a failure. A panic in `f` counts as a failure and goes on unwinding.
    ///
    /// # Errors
    ///
    /// [`CallError::Rejected`] if the breaker did not let the call through (`f` was not
    /// called), [`CallError::Failed`] with `f`'s error otherwise.
    ///
    /// # Panics
    ///
    /// If `f` panics (counted as a failure first), or a transition listener panics at a
    /// transition this call makes (see [`Builder::on_transition`](crate::Builder::on_transition));
    /// the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, CallError};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(2).build().unwrap();
    /// for _ in 0..2 {
    ///     let _ = breaker.call(|| Err::<(), _>("connection refused"));
    /// }
    /// match breaker.call(|| Ok::<_, &str>("reply")) {
    ///     Err(CallError::Rejected(rejected)) => println!("{rejected}"),
    ///     other => panic!("expected a rejection, got {other:?}"),
    /// }
    /// ```
    #[inline(always)]
    pub fn call<T, E>(&self, f: impl FnOnce() -> Result<T, E>) -> Result<T, CallError<E>> {
        self.call_with(every_error_fails, f)
    }

    /// Like [`call`](Breaker::call), with `classify` deciding how each result counts: an error
    /// that says nothing about the dependency's health (a 400 Bad Request) can be
    /// [`Outcome::Ignore`]d, and an `Ok` carrying a failure (an HTTP 503 in a response) can be
    /// an [`Outcome::Failure`]. A panic in `f` or in `classify` counts as a failure.
    ///
    /// # Errors
    ///
    /// As for [`call`](Breaker::call); how the result was classified does not change it.
    ///
    /// # Panics
    ///
    /// If `f` or `classify` panics (counted as a failure first), or a transition listener
    /// panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Outcome};
    ///
    /// let breaker = Breaker::builder().consecutive_failures(1).build().unwrap();
    /// let status_of = |result: &Result<u16, u16>| match result {
    ///     Ok(_) => Outcome::Success,
    ///     Err(400..=499) => Outcome::Ignore, // the request was bad, not the service
    ///     Err(_) => Outcome::Failure,
    /// };
    /// let _ = breaker.call_with(status_of, || Err::<u16, u16>(400));
    /// assert!(breaker.call_with(status_of, || Ok::<u16, u16>(200)).is_ok(), "a 400 does not trip");
    /// ```
    #[inline(always)]
    pub fn call_with<T, E>(
        &self,
        classify: impl FnOnce(&Result<T, E>) -> Outcome,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, CallError<E>> {
        // Only the healthy case is inlined into the caller, where the compiler knows the
        // permit's kind and keeps nothing but the closed-success path; every other state goes
        // through one out-of-line function. Without the split the whole of it was too big to
        // inline, and every healthy call paid a function call with a full register save.
        match self.try_acquire_healthy_word() {
            Ok((mut permit, word)) => {
                // A panic out of `f` or `classify` drops the permit: a failure.
                permit.set_fails_if_dropped(true);
                let result = f();
                let outcome = classify(&result);
                // The window still clean (`quiet.rs`): the success changes nothing, and the
                // state word, already in this core's cache, is all this call reads again.
                permit.record_unless_quiet(outcome, word.is_quiet().then_some(word));
                result.map_err(CallError::Failed)
            }
            // An open breaker's rejection first, through a small function of its own: inside
            // `call_unhealthy` it paid that function's register saves too.
            Err(word) => match self.rejection_while_open(word) {
                Some(rejected) => Err(CallError::Rejected(rejected)),
                None => self.call_unhealthy(word, classify, f),
            },
        }
    }

    /// [`call_with`](Breaker::call_with) for a state word that is not the healthy case.
    /// `#[cold]` tells the caller's branch which way is common, so that the healthy call
    /// runs straight through without a taken jump.
    #[cold]
    #[inline(never)]
    fn call_unhealthy<T, E>(
        &self,
        word: StateWord,
        classify: impl FnOnce(&Result<T, E>) -> Outcome,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, CallError<E>> {
        let mut permit = self
            .acquire_counting_rejection(word)
            .map_err(CallError::Rejected)?;
        permit.set_fails_if_dropped(true);
        let result = f();
        permit.record(classify(&result));
        result.map_err(CallError::Failed)
    }

    /// Calls `f` through the breaker and, when it is rejected or fails, answers with
    /// `fallback` instead (a cached value, a default).
    ///
    /// # Panics
    ///
    /// As [`call`](Breaker::call): if `f` panics (counted as a failure first), or a transition
    /// listener panics at a transition this call makes; and if `fallback` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::Breaker;
    ///
    /// let breaker = Breaker::builder().build().unwrap();
    /// let name = breaker.call_or_else(|| Err::<String, _>("timeout"), |_error| "unknown".to_string());
    /// assert_eq!(name, "unknown");
    /// ```
    #[inline]
    pub fn call_or_else<T, E>(
        &self,
        f: impl FnOnce() -> Result<T, E>,
        fallback: impl FnOnce(CallError<E>) -> T,
    ) -> T {
        self.call(f).unwrap_or_else(fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;

    /// The messages an error reporter prints: the error, then each source in turn.
    fn report(error: &dyn Error) -> Vec<String> {
        let mut lines = vec![error.to_string()];
        let mut source = error.source();
        while let Some(next) = source {
            lines.push(next.to_string());
            source = next.source();
        }
        lines
    }

    /// An error with a cause of its own, as a client's error wraps the I/O error under it.
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("request failed")
        }
    }

    impl Error for Outer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_report_names_each_error_of_the_chain_once() {
        let failed: CallError<Outer> =
            CallError::Failed(Outer(std::io::ErrorKind::ConnectionRefused.into()));
        assert_eq!(
            report(&failed),
            ["request failed", "connection refused"],
            "the call's own chain, each message once"
        );
        let rejected: CallError<Outer> =
            CallError::Rejected(Rejected::new(State::ForcedOpen, None));
        assert_eq!(report(&rejected), ["circuit breaker is forced open"]);
    }
}
