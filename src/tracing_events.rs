//! One [`tracing`](https://docs.rs/tracing) event per state transition.
//!
//! Attach [`log_transitions`] when building the breaker:
//!
//! ```
//! use hotbreaker::Breaker;
//!
//! let breaker = Breaker::builder()
//!     .consecutive_failures(5)
//!     .on_transition(hotbreaker::tracing::log_transitions("payments"))
//!     .build()?;
//! # Ok::<(), hotbreaker::ConfigError>(())
//! ```
//!
//! Each event has the target `hotbreaker` and these fields:
//!
//! | field | value |
//! | --- | --- |
//! | `breaker` | the name given to [`log_transitions`] |
//! | `from`, `to` | the states, as [`State::as_str`](crate::State::as_str) writes them |
//! | `trigger` | `tripped`, `open_period_ended`, `probe_failed`, `probes_timed_out`, `probes_succeeded`, `manual` or `external` |
//! | `rule` | on a trip: `failure_rate` or `consecutive_failures` |
//! | `failures`, `calls` | on a trip: the failures the rule saw among the calls it judged, from before the transition |
//! | `successes` | on closing after probes: the successful probes |
//! | `open_for_ms` | on opening: how long the breaker stays open, in milliseconds (a number with a fraction: `0.9` for 900 µs) |
//! | `generation` | the breaker's generation after the transition, to order events |
//!
//! An opening (to `open` or `forced_open`) is a `WARN` event: it means a dependency is
//! failing. Every other transition is `INFO`. Ordinary calls emit nothing.

use crate::listener::{Transition, Trigger, TripRule};
use crate::state::State;

/// A listener that emits one event per transition of the breaker it is attached to, with
/// `breaker = name`. See the [module documentation](self) for the fields.
pub fn log_transitions(name: impl Into<String>) -> impl Fn(&Transition) + Send + Sync + 'static {
    let name: String = name.into();
    move |transition: &Transition| emit(&name, transition)
}

/// The names used in the `trigger` field.
fn trigger_name(trigger: &Trigger) -> &'static str {
    match trigger {
        Trigger::Tripped { .. } => "tripped",
        Trigger::OpenPeriodEnded => "open_period_ended",
        Trigger::ProbeFailed => "probe_failed",
        Trigger::ProbesTimedOut => "probes_timed_out",
        Trigger::ProbesSucceeded { .. } => "probes_succeeded",
        Trigger::Manual => "manual",
        Trigger::External => "external",
    }
}

fn message(to: State) -> &'static str {
    match to {
        State::Open => "circuit breaker opened",
        State::HalfOpen => "circuit breaker half-open: probing the dependency",
        State::Closed => "circuit breaker closed",
        State::ForcedOpen => "circuit breaker forced open",
        State::ForcedClosed => "circuit breaker forced closed",
    }
}

fn emit(name: &str, transition: &Transition) {
    let (rule, failures, calls) = match transition.trigger {
        Trigger::Tripped {
            rule,
            failures,
            calls,
        } => {
            let rule = match rule {
                TripRule::FailureRate => "failure_rate",
                TripRule::ConsecutiveFailures => "consecutive_failures",
            };
            (Some(rule), Some(failures), Some(calls))
        }
        _ => (None, None, None),
    };
    let successes = match transition.trigger {
        Trigger::ProbesSucceeded { successes } => Some(successes),
        _ => None,
    };
    // Fractional: a period under a millisecond (down to a microsecond is allowed) must not
    // read as 0. Whole nanoseconds over 10^6, so that 900 µs prints as 0.9, not 0.8999….
    let open_for_ms = transition.open_for.map(|d| d.as_nanos() as f64 / 1e6);
    // The level of a tracing event is fixed where it is written, hence one macro per level
    // with the same fields.
    macro_rules! event {
        ($level:ident) => {
            ::tracing::$level!(
                target: "hotbreaker",
                breaker = name,
                from = transition.from.as_str(),
                to = transition.to.as_str(),
                trigger = trigger_name(&transition.trigger),
                rule,
                failures,
                calls,
                successes,
                open_for_ms,
                generation = transition.generation,
                "{}",
                message(transition.to),
            )
        };
    }
    if matches!(transition.to, State::Open | State::ForcedOpen) {
        event!(warn);
    } else {
        event!(info);
    }
}
