//! State-transition events, and the listeners that receive them.

use std::time::Duration;

use crate::state::State;
pub use crate::window::TripRule;

/// What caused a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Trigger {
    /// A trip rule was met while closed.
    Tripped {
        /// The rule that was met.
        rule: TripRule,
        /// Failures the rule saw (in the rate window, or in the run).
        failures: u32,
        /// Calls the rule judged (the rate window's calls, or the run's length).
        calls: u32,
    },
    /// The open period ended and a call became the first probe.
    OpenPeriodEnded,
    /// A probe failed while half-open.
    ProbeFailed,
    /// Every probe out had been out longer than the probe timeout
    /// ([`Builder::probe_timeout`](crate::Builder::probe_timeout)): the breaker opened again
    /// without waiting for their verdicts.
    ProbesTimedOut,
    /// Enough probes succeeded while half-open.
    ProbesSucceeded {
        /// Successful probes in the half-open period.
        successes: u32,
    },
    /// [`force_open`](crate::Breaker::force_open), [`force_closed`](crate::Breaker::force_closed)
    /// or [`reset`](crate::Breaker::reset) was called.
    Manual,
    /// [`open_for`](crate::Breaker::open_for) was called: the opening was decided outside this
    /// breaker, for example by another instance (see [`shared`](crate::shared)).
    External,
}

/// One state transition, as passed to listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transition {
    /// The state before.
    pub from: State,
    /// The state after.
    pub to: State,
    /// The breaker's generation after the transition; it grows by one per transition
    /// (wrapping), so listeners can order events that reach them out of order.
    pub generation: u32,
    /// What caused it.
    pub trigger: Trigger,
    /// When it happened, on the breaker's clock (time since the clock's epoch).
    pub at: Duration,
    /// When the breaker opened: how long it stays open.
    pub open_for: Option<Duration>,
}

/// A listener registered with [`Builder::on_transition`](crate::Builder::on_transition).
pub(crate) type Listener = Box<dyn Fn(&Transition) + Send + Sync>;
