//! Admission to call the dependency, and the verdict that ends it.

use std::error::Error;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::Duration;

use crate::breaker::Breaker;
use crate::calls_out::OutTicket;
use crate::clock::Clock;
use crate::state::{State, StateWord};

/// How a call's outcome counts for the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The dependency worked. Ages failures out of the window; a successful probe counts
    /// towards closing.
    Success,
    /// The dependency failed (a 5xx, a timeout, a refused connection). Counts towards tripping;
    /// a failed probe reopens the breaker.
    Failure,
    /// Says nothing about the dependency's health (a 400 Bad Request, a cancelled call): not
    /// recorded by any rule. A probe that ends this way frees its place for another.
    Ignore,
}

/// Which kind of admission a permit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PermitKind {
    /// An ordinary call of a closed breaker; its outcome feeds the window.
    Closed,
    /// The same, from a breaker that counts successes in its metrics.
    ClosedCounted,
    /// One of the limited calls of a half-open breaker; `counted` if the breaker counted
    /// successes when it was admitted.
    Probe { counted: bool },
    /// A call let through by [`Breaker::force_closed`]; counted in the metrics only, its
    /// success only if the breaker counted successes when it was admitted.
    Forced { counted: bool },
}

impl PermitKind {
    /// Whether this is a half-open probe.
    pub(crate) fn is_probe(self) -> bool {
        matches!(self, PermitKind::Probe { .. })
    }

    /// Whether a success of this permit counts in `Metrics::successes`: decided by the
    /// `count_successes` in force when it was admitted, as `reconfigure` documents.
    pub(crate) fn counts_success(self) -> bool {
        match self {
            PermitKind::Closed => false,
            PermitKind::ClosedCounted => true,
            PermitKind::Probe { counted } | PermitKind::Forced { counted } => counted,
        }
    }
}

/// When a timed permit was issued, on the breaker's clock, and where its call waits to be
/// judged if it hangs (`calls_out.rs`; [`OutTicket::NONE`] for probes, forced calls, and calls
/// that found no place).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) issued_at: u64,
    pub(crate) ticket: OutTicket,
}

/// Permission to make one call, from [`Breaker::try_acquire`].
///
/// End it with [`success`](Permit::success), [`failure`](Permit::failure) or
/// [`ignore`](Permit::ignore). A permit dropped without a verdict gives its admission back and
/// counts as nothing (in half-open, another call may then probe), also when a panic drops it:
/// the breaker cannot tell a panic of the call from one elsewhere (in async code, a sibling
/// branch of a `join!` that panics drops every call in flight). Calls made through
/// [`Breaker::call`], [`Breaker::call_async`] or the tower layer do know: there a panic out
/// of the dependency's code, or out of the classifier, counts as a failure.
///
/// A verdict on a permit from before a state transition (the breaker tripped, or closed, while
/// the call was out) is counted in the metrics but does not touch the new state. (With a
/// [`slow_call`](crate::Builder::slow_call) limit, a closed call of an ended generation that
/// a sweep finds still out is counted as released then, and its verdict is not counted again;
/// and a call still out when its bucket falls due, between the limit and one and a half times
/// the limit after its admission, is a hung call at the next call admitted, whatever its end:
/// see [`Builder::slow_call`](crate::Builder::slow_call).)
///
/// # Examples
///
/// ```
/// use hotbreaker::Breaker;
///
/// let breaker = Breaker::builder().consecutive_failures(3).build().unwrap();
/// match breaker.try_acquire() {
///     Ok(permit) => match "42".parse::<u32>() {
///         Ok(_) => permit.success(),
///         Err(_) => permit.failure(),
///     },
///     Err(rejected) => eprintln!("not calling: {rejected}"),
/// }
///
/// // A permit dropped without a verdict (the caller gave up) counts as released, not as a
/// // success or a failure.
/// drop(breaker.try_acquire().unwrap());
/// let metrics = breaker.metrics();
/// assert_eq!((metrics.failures, metrics.released), (0, 1));
/// ```
#[must_use = "a permit dropped at once gives its admission back; call the dependency, then record the outcome"]
pub struct Permit<'a, C: Clock> {
    breaker: &'a Breaker<C>,
    generation: u32,
    kind: PermitKind,
    /// When the permit was issued, if the breaker times calls (`slow_call`); `None` on the
    /// healthy path, where nothing is timed.
    timing: Option<Timing>,
    /// Whether dropping the permit records a failure rather than giving the admission back:
    /// set by the breaker's own call paths while the dependency's code runs, so that a panic
    /// out of that code, and only that, counts against the dependency.
    fails_if_dropped: bool,
}

impl<'a, C: Clock> Permit<'a, C> {
    #[inline(always)]
    pub(crate) fn new(
        breaker: &'a Breaker<C>,
        generation: u32,
        kind: PermitKind,
        timing: Option<Timing>,
    ) -> Self {
        Permit {
            breaker,
            generation,
            kind,
            timing,
            fails_if_dropped: false,
        }
    }

    /// Makes dropping this permit record a failure (`true`) or give the admission back
    /// (`false`, as every permit starts): see `fails_if_dropped`.
    #[inline(always)]
    pub(crate) fn set_fails_if_dropped(&mut self, fails: bool) {
        self.fails_if_dropped = fails;
    }

    /// Records that the call succeeded.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    #[inline]
    pub fn success(self) {
        self.record(Outcome::Success);
    }

    /// Records that the call failed.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    #[inline]
    pub fn failure(self) {
        self.record(Outcome::Failure);
    }

    /// Records that the call's outcome says nothing about the dependency.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    #[inline]
    pub fn ignore(self) {
        self.record(Outcome::Ignore);
    }

    /// Records `outcome`. With a [`slow_call`](crate::Builder::slow_call) limit, a success
    /// recorded longer than that after the permit was issued counts as a failure, and a call
    /// already counted as slow while it was still out records nothing more.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    #[inline]
    pub fn record(self, outcome: Outcome) {
        let permit = ManuallyDrop::new(self);
        permit
            .breaker
            .end_with(permit.generation, permit.kind, permit.timing, outcome);
    }

    /// Whether this permit is a half-open probe.
    pub fn is_probe(&self) -> bool {
        self.kind.is_probe()
    }

    /// The breaker generation the permit was issued in.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Ends a closed permit whose success changes nothing (`quiet.rs`): recording it would
    /// only have found the window clean. Nothing is counted, as for such a success.
    #[inline(always)]
    pub(crate) fn end_unrecorded(self) {
        debug_assert!(self.kind == PermitKind::Closed && self.timing.is_none());
        let _ = ManuallyDrop::new(self);
    }

    /// Records `outcome`, unless it is a success of a permit admitted under the quiet state
    /// word `admitted_quiet` (from [`Breaker::try_acquire_noting_quiet`]) and the state word
    /// is still that word: the window is clean, and the success changes nothing (`quiet.rs`).
    #[inline(always)]
    pub(crate) fn record_unless_quiet(self, outcome: Outcome, admitted_quiet: Option<StateWord>) {
        if self.breaker.skips_window(outcome, admitted_quiet) {
            self.end_unrecorded();
        } else {
            let permit = ManuallyDrop::new(self);
            permit.breaker.end_after_quiet_check(
                permit.generation,
                permit.kind,
                permit.timing,
                outcome,
            );
        }
    }

    /// Hands the admission over to another permit type, without ending it.
    pub(crate) fn into_parts(self) -> (u32, PermitKind, Option<Timing>) {
        let permit = ManuallyDrop::new(self);
        (permit.generation, permit.kind, permit.timing)
    }
}

impl<C: Clock> Drop for Permit<'_, C> {
    fn drop(&mut self) {
        if self.fails_if_dropped {
            self.breaker
                .end_with(self.generation, self.kind, self.timing, Outcome::Failure);
        } else {
            self.breaker
                .release(self.generation, self.kind, self.timing);
        }
    }
}

impl<C: Clock> fmt::Debug for Permit<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("generation", &self.generation)
            .field("probe", &self.is_probe())
            .field("timed", &self.timing.is_some())
            .finish_non_exhaustive()
    }
}

/// A [`Permit`] that owns a reference to its breaker, from [`Breaker::try_acquire_owned`]:
/// for futures and services that must be `'static`, such as a tower `Service`'s response
/// future. Ends like a [`Permit`]; dropped without a verdict (a cancelled future) it gives its
/// admission back.
#[must_use = "a permit dropped at once gives its admission back; call the dependency, then record the outcome"]
pub struct OwnedPermit<C: Clock> {
    breaker: Arc<Breaker<C>>,
    generation: u32,
    kind: PermitKind,
    /// As for [`Permit`].
    timing: Option<Timing>,
    ended: bool,
    /// As for [`Permit`].
    fails_if_dropped: bool,
}

impl<C: Clock> OwnedPermit<C> {
    pub(crate) fn new(
        breaker: Arc<Breaker<C>>,
        generation: u32,
        kind: PermitKind,
        timing: Option<Timing>,
    ) -> Self {
        OwnedPermit {
            breaker,
            generation,
            kind,
            timing,
            ended: false,
            fails_if_dropped: false,
        }
    }

    /// As [`Permit::set_fails_if_dropped`].
    #[cfg(feature = "tower")]
    pub(crate) fn set_fails_if_dropped(&mut self, fails: bool) {
        self.fails_if_dropped = fails;
    }

    /// Records that the call succeeded.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn success(self) {
        self.record(Outcome::Success);
    }

    /// Records that the call failed.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn failure(self) {
        self.record(Outcome::Failure);
    }

    /// Records that the call's outcome says nothing about the dependency.
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn ignore(self) {
        self.record(Outcome::Ignore);
    }

    /// Records `outcome`; a slow success counts as a failure, as for [`Permit::record`].
    ///
    /// # Panics
    ///
    /// If a transition listener panics at a transition this call makes (see
    /// [`Builder::on_transition`](crate::Builder::on_transition)); the transition stands.
    pub fn record(mut self, outcome: Outcome) {
        self.ended = true;
        self.breaker
            .end_with(self.generation, self.kind, self.timing, outcome);
    }

    /// [`Permit::record_unless_quiet`], for a permit from
    /// [`Breaker::try_acquire_owned_noting_quiet`].
    #[cfg(feature = "tower")]
    pub(crate) fn record_unless_quiet(
        mut self,
        outcome: Outcome,
        admitted_quiet: Option<StateWord>,
    ) {
        self.ended = true;
        if self.breaker.skips_window(outcome, admitted_quiet) {
            debug_assert!(self.kind == PermitKind::Closed && self.timing.is_none());
        } else {
            self.breaker
                .end_after_quiet_check(self.generation, self.kind, self.timing, outcome);
        }
    }

    /// Whether this permit is a half-open probe.
    pub fn is_probe(&self) -> bool {
        self.kind.is_probe()
    }

    /// The breaker generation the permit was issued in.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The breaker this permit belongs to.
    pub fn breaker(&self) -> &Arc<Breaker<C>> {
        &self.breaker
    }
}

impl<C: Clock> Drop for OwnedPermit<C> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if self.fails_if_dropped {
            self.breaker
                .end_with(self.generation, self.kind, self.timing, Outcome::Failure);
        } else {
            self.breaker
                .release(self.generation, self.kind, self.timing);
        }
    }
}

impl<C: Clock> fmt::Debug for OwnedPermit<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("generation", &self.generation)
            .field("probe", &self.is_probe())
            .field("timed", &self.timing.is_some())
            .finish_non_exhaustive()
    }
}

/// The breaker did not let a call through.
///
/// Built without allocating, and 8 bytes, so that a `Result` carrying it comes back in
/// registers: cheap to return on every rejected call.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rejected {
    /// The time until a probe may pass, in nanoseconds (61 bits, saturating), above the state's
    /// 3-bit code.
    packed: u64,
}

const REJECTED_STATE_BITS: u32 = 3;

impl Rejected {
    #[inline]
    pub(crate) fn new(state: State, retry_after: Option<Duration>) -> Self {
        let nanos = retry_after
            .map_or(0, crate::clock::saturating_nanos)
            .min(u64::MAX >> REJECTED_STATE_BITS);
        Rejected {
            packed: nanos << REJECTED_STATE_BITS | state_code(state),
        }
    }

    /// The state that rejected the call: [`State::Open`], [`State::HalfOpen`] (all probes
    /// out) or [`State::ForcedOpen`].
    pub fn state(&self) -> State {
        match self.packed & ((1 << REJECTED_STATE_BITS) - 1) {
            0 => State::Closed,
            1 => State::Open,
            2 => State::HalfOpen,
            3 => State::ForcedOpen,
            _ => State::ForcedClosed,
        }
    }

    /// When open: how long until the open period ends and a probe may pass.
    ///
    /// Never longer than what is left. Where the rejection was decided from the clock's bound
    /// on its time ([`Clock::upper_bound_nanos`]; the
    /// default clock's on Linux), it is short by as much as that bound is late: tens of
    /// milliseconds at most (eight scheduler ticks and one more, 33 ms at 250 Hz), so a caller
    /// that waits it out may be turned away once more, never kept waiting past the end.
    pub fn retry_after(&self) -> Option<Duration> {
        (self.state() == State::Open)
            .then(|| Duration::from_nanos(self.packed >> REJECTED_STATE_BITS))
    }
}

fn state_code(state: State) -> u64 {
    match state {
        State::Closed => 0,
        State::Open => 1,
        State::HalfOpen => 2,
        State::ForcedOpen => 3,
        State::ForcedClosed => 4,
    }
}

impl fmt::Debug for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejected")
            .field("state", &self.state())
            .field("retry_after", &self.retry_after())
            .finish()
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.state(), self.retry_after()) {
            (State::Open, Some(after)) => {
                write!(f, "circuit breaker is open; a probe may pass in {after:?}")
            }
            (State::HalfOpen, _) => {
                f.write_str("circuit breaker is half-open and its probes are out")
            }
            (State::ForcedOpen, _) => f.write_str("circuit breaker is forced open"),
            (state, _) => write!(f, "circuit breaker rejected the call ({state})"),
        }
    }
}

impl Error for Rejected {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallError;

    #[test]
    fn a_rejection_keeps_its_state_and_time_in_eight_bytes() {
        let open = Rejected::new(State::Open, Some(Duration::new(3, 999_999_999)));
        assert_eq!(
            (open.state(), open.retry_after()),
            (State::Open, Some(Duration::new(3, 999_999_999)))
        );
        let half_open = Rejected::new(State::HalfOpen, None);
        assert_eq!(
            (half_open.state(), half_open.retry_after()),
            (State::HalfOpen, None)
        );
        let forever = Rejected::new(State::Open, Some(Duration::MAX));
        assert_eq!(
            forever.retry_after(),
            Some(Duration::from_nanos(u64::MAX >> REJECTED_STATE_BITS))
        );
        // Small enough that `call`'s result comes back in two registers.
        assert_eq!(std::mem::size_of::<Rejected>(), 8);
        assert_eq!(std::mem::size_of::<Result<u64, CallError<u32>>>(), 16);
    }
}
