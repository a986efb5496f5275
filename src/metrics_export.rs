//! Breaker counters and gauges through the [`metrics`](https://docs.rs/metrics) facade,
//! labelled `breaker = <name>`.
//!
//! Nothing here runs on a call. The breaker already counts every call in per-thread stripes;
//! [`export`] (or [`Registry::export_metrics`](crate::Registry::export_metrics)) reads them
//! and adds to each counter what the breaker counted since its last export, and is meant to
//! run when the exporter scrapes (from the exporter's upkeep or scrape hook, or a timer).
//! Transitions, which are rare, are counted as they happen by the listener
//! [`count_transitions`], attached when the breaker is built.
//!
//! | metric | kind | labels | source |
//! | --- | --- | --- | --- |
//! | [`CALLS`] `hotbreaker_calls_total` | counter | `breaker`, `outcome` = `success` (with `count_successes`), `failure`, `ignored`, `released` | [`export`] |
//! | [`REJECTED`] `hotbreaker_rejected_total` | counter | `breaker` | [`export`] |
//! | [`SLOW_CALLS`] `hotbreaker_slow_calls_total` | counter, of the failures | `breaker` | [`export`] |
//! | [`HUNG_CALLS`] `hotbreaker_hung_calls_total` | counter, of the slow calls | `breaker` | [`export`] |
//! | [`STATE`] `hotbreaker_state` | gauge, 1 for the current state and 0 for the others | `breaker`, `state` | [`export`], [`count_transitions`] |
//! | [`FAILURE_RATE`] `hotbreaker_window_failure_rate` | gauge, while closed | `breaker` | [`export`] |
//! | [`TRANSITIONS`] `hotbreaker_transitions_total` | counter | `breaker`, `from`, `to` | [`count_transitions`] |
//!
//! A breaker removed from a [`Registry`] has its gauges set to 0 ([`forget`]), so that it does
//! not go on reporting its last state; its counters keep their last values, and a new breaker
//! exported under the same name (a registry's replacement, say) adds to them: the counters
//! of a name count the calls of every breaker exported under it.
//!
//! # Examples
//!
//! ```
//! use hotbreaker::{Breaker, metrics_export};
//!
//! let breaker = Breaker::builder()
//!     .consecutive_failures(5)
//!     .on_transition(metrics_export::count_transitions("payments"))
//!     .build()?;
//! // ... calls ...
//! // In the exporter's scrape hook:
//! metrics_export::export("payments", &breaker);
//! # Ok::<(), hotbreaker::ConfigError>(())
//! ```

use std::sync::Arc;

use metrics::{Unit, counter, describe_counter, describe_gauge, gauge};

use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::listener::Transition;
use crate::registry::Registry;
use crate::state::State;

/// Calls that ended, by `outcome`: `success`, `failure`, `ignored`, or `released` (the permit
/// was dropped without a verdict, such as a cancelled request). `success` only for a breaker
/// built with [`count_successes`](crate::Builder::count_successes), the one count a healthy
/// call would otherwise have to write.
pub const CALLS: &str = "hotbreaker_calls_total";
/// Calls rejected without calling the dependency.
pub const REJECTED: &str = "hotbreaker_rejected_total";
/// Successes counted as failures because they took longer than the `slow_call` limit, and
/// calls judged while still out ([`HUNG_CALLS`]); included in the `failure` outcome of
/// [`CALLS`].
pub const SLOW_CALLS: &str = "hotbreaker_slow_calls_total";
/// Calls judged slow while still out, because they were out longer than the `slow_call`
/// limit (included in [`SLOW_CALLS`]).
pub const HUNG_CALLS: &str = "hotbreaker_hung_calls_total";
/// State transitions, by `from` and `to` state.
pub const TRANSITIONS: &str = "hotbreaker_transitions_total";
/// 1 for the breaker's current `state`, 0 for the others.
pub const STATE: &str = "hotbreaker_state";
/// While closed: the share of failures in the failure-rate window, from 0 to 1.
pub const FAILURE_RATE: &str = "hotbreaker_window_failure_rate";

const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::ForcedClosed,
];

/// Describes the metrics to the installed recorder (units and help texts). Call it once after
/// installing the recorder; optional.
///
/// # Panics
///
/// If the installed recorder panics.
pub fn describe() {
    describe_counter!(
        CALLS,
        Unit::Count,
        "Calls through the circuit breaker that ended, by outcome."
    );
    describe_counter!(
        REJECTED,
        Unit::Count,
        "Calls the circuit breaker rejected without calling the dependency."
    );
    describe_counter!(
        SLOW_CALLS,
        Unit::Count,
        "Calls the circuit breaker counted as failures for being slow: successes past the slow-call limit, and calls still out past it."
    );
    describe_counter!(
        HUNG_CALLS,
        Unit::Count,
        "Calls the circuit breaker counted as slow while they were still out."
    );
    describe_counter!(
        TRANSITIONS,
        Unit::Count,
        "Circuit breaker state transitions."
    );
    describe_gauge!(
        STATE,
        "1 for the circuit breaker's current state, 0 for the others."
    );
    describe_gauge!(
        FAILURE_RATE,
        "Share of failures in the circuit breaker's failure-rate window, while closed."
    );
}

/// Sets the metrics of `breaker`, labelled `breaker = name`, from its counters: call it from
/// the exporter's scrape hook.
///
/// Each counter grows by what the breaker counted since its last export under `name` (the
/// breaker keeps what it exported under each name), so calling it often or rarely makes no
/// difference to what is counted, two exports at once count nothing twice, a new breaker
/// exported under the name of one before it adds to that one's counts rather than hide
/// under them (a counter set to a smaller absolute value would not move, or would go
/// backwards), and a breaker exported under two names (a registry's alias) counts whole
/// under each. It reads every stripe of the breaker once ([`Breaker::metrics`]) and costs
/// one recorder lookup per counter and one per state of the state gauge; the calls through
/// the breaker do no work for it.
///
/// # Panics
///
/// If the installed recorder panics. What this export had not added to the counters by then
/// is left for the next export to add.
pub fn export<C: Clock>(name: &str, breaker: &Breaker<C>) {
    let metrics = breaker.metrics();
    let totals = Exported::ALL.map(|which| match which {
        // Only if the breaker counts them (`Builder::count_successes`).
        Exported::Successes => metrics.successes,
        Exported::Failures => Some(metrics.failures),
        Exported::Ignored => Some(metrics.ignored),
        Exported::Released => Some(metrics.released),
        Exported::Rejected => Some(metrics.rejected),
        Exported::SlowCalls => Some(metrics.slow_calls),
        Exported::HungCalls => Some(metrics.hung_calls),
    });
    let exported = breaker.exported_totals();
    let mut pending = PendingRises {
        exported,
        name,
        rises: exported.rises(name, totals),
    };
    for (i, which) in Exported::ALL.into_iter().enumerate() {
        let Some(rise) = pending.rises[i] else {
            continue;
        };
        let counter = match which {
            Exported::Successes => {
                counter!(CALLS, "breaker" => name.to_owned(), "outcome" => "success")
            }
            Exported::Failures => {
                counter!(CALLS, "breaker" => name.to_owned(), "outcome" => "failure")
            }
            Exported::Ignored => {
                counter!(CALLS, "breaker" => name.to_owned(), "outcome" => "ignored")
            }
            Exported::Released => {
                counter!(CALLS, "breaker" => name.to_owned(), "outcome" => "released")
            }
            Exported::Rejected => counter!(REJECTED, "breaker" => name.to_owned()),
            Exported::SlowCalls => counter!(SLOW_CALLS, "breaker" => name.to_owned()),
            Exported::HungCalls => counter!(HUNG_CALLS, "breaker" => name.to_owned()),
        };
        counter.increment(rise);
        pending.rises[i] = None;
    }
    set_state(name, metrics.state);
    gauge!(FAILURE_RATE, "breaker" => name.to_owned()).set(metrics.failure_rate());
}

/// The rises an export took from [`ExportedTotals`] and has not added to their counters yet.
/// Dropped with some left (the recorder panicked), it gives them back, so that the next export
/// under the name adds them: [`ExportedTotals::rises`] marked them as added already.
struct PendingRises<'a> {
    exported: &'a ExportedTotals,
    name: &'a str,
    rises: [Option<u64>; 7],
}

impl Drop for PendingRises<'_> {
    fn drop(&mut self) {
        if self
            .rises
            .iter()
            .any(|rise| rise.is_some_and(|rise| rise > 0))
        {
            self.exported.give_back(self.name, self.rises);
        }
    }
}

/// The counters [`export`] adds to.
#[derive(Debug, Clone, Copy)]
enum Exported {
    Successes,
    Failures,
    Ignored,
    Released,
    Rejected,
    SlowCalls,
    HungCalls,
}

impl Exported {
    const ALL: [Exported; 7] = [
        Exported::Successes,
        Exported::Failures,
        Exported::Ignored,
        Exported::Released,
        Exported::Rejected,
        Exported::SlowCalls,
        Exported::HungCalls,
    ];
}

/// What [`export`] has added to the counters for one breaker, per name it was exported
/// under: per counter, the largest of the breaker's totals that an export read. Kept in the
/// breaker, next to its counts. A lock, taken by exports only (never by a call), so that two
/// exports under one name at once each add only what the other did not.
#[derive(Default)]
pub(crate) struct ExportedTotals(std::sync::Mutex<Vec<(String, [u64; 7])>>);

impl ExportedTotals {
    /// What an export under `name` that read `totals` adds to each counter: each total's rise
    /// above the largest read before under that name (`None` where there is no total).
    fn rises(&self, name: &str, totals: [Option<u64>; 7]) -> [Option<u64>; 7] {
        // A panic while held can only come from a push; the numbers stay whole.
        let mut exported = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let index = match exported
            .iter()
            .position(|(exported_as, _)| exported_as == name)
        {
            Some(index) => index,
            None => {
                exported.push((name.to_owned(), [0; 7]));
                exported.len() - 1
            }
        };
        let largest = &mut exported[index].1;
        std::array::from_fn(|i| {
            totals[i].map(|total| {
                let rise = total.saturating_sub(largest[i]);
                largest[i] = largest[i].max(total);
                rise
            })
        })
    }

    /// Takes back `rises` that [`rises`](Self::rises) gave an export under `name` and that
    /// never reached their counters. Each mark only ever grew by the rises it gave, so it is
    /// what reached the counters plus what exports still hold: taking the lost ones off keeps
    /// it so, whatever other exports did meanwhile, and the next export adds them once.
    fn give_back(&self, name: &str, rises: [Option<u64>; 7]) {
        let mut exported = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, largest)) = exported
            .iter_mut()
            .find(|(exported_as, _)| exported_as == name)
        {
            for (largest, rise) in largest.iter_mut().zip(rises) {
                *largest = largest.saturating_sub(rise.unwrap_or(0));
            }
        }
    }
}

/// Sets the gauges of the breaker `name` to 0: [`STATE`] for every state, and
/// [`FAILURE_RATE`]. For a breaker that is no longer exported, which would otherwise go on
/// reporting its last state (an open breaker, open for good); [`Registry::remove`] calls it.
/// Its counters keep their last values: the `metrics` facade cannot remove a series. A
/// breaker still in use after that, with [`count_transitions`] attached, sets its [`STATE`]
/// again at its next transition.
///
/// # Panics
///
/// If the installed recorder panics; the gauges not yet set keep their values.
pub fn forget(name: &str) {
    for state in STATES {
        gauge!(STATE, "breaker" => name.to_owned(), "state" => state.as_str()).set(0.0);
    }
    gauge!(FAILURE_RATE, "breaker" => name.to_owned()).set(0.0);
}

fn set_state(name: &str, current: State) {
    for state in STATES {
        let value = if state == current { 1.0 } else { 0.0 };
        gauge!(STATE, "breaker" => name.to_owned(), "state" => state.as_str()).set(value);
    }
}

/// A listener that counts transitions in [`TRANSITIONS`] and updates [`STATE`], labelled
/// `breaker = name`. Attach it when building the breaker:
/// `.on_transition(hotbreaker::metrics_export::count_transitions("payments"))`.
///
/// It runs on the thread that made the transition, once per transition, never on an ordinary
/// call. Transitions made at nearly the same time may reach it out of order, and [`STATE`] may
/// then show the older one until the next [`export`] sets it from the breaker.
///
/// Unlike the breaker's own paths, it allocates: each transition looks its counter up through
/// the `metrics` facade, which builds the labelled key, and the installed recorder may lock to
/// find it. Transitions are rare, and looking up at each one keeps counting when the recorder
/// is installed after the breaker was built.
///
/// # Panics
///
/// The listener panics if the installed recorder does, at the transition it is told of: see
/// [`Builder::on_transition`](crate::Builder::on_transition) for where that panic goes.
pub fn count_transitions(name: impl Into<String>) -> impl Fn(&Transition) + Send + Sync + 'static {
    let name: String = name.into();
    move |transition: &Transition| {
        counter!(
            TRANSITIONS,
            "breaker" => name.clone(),
            "from" => transition.from.as_str(),
            "to" => transition.to.as_str(),
        )
        .increment(1);
        set_state(&name, transition.to);
    }
}

impl<C: Clock> Registry<C> {
    /// [`export`]s the metrics of every registered breaker, labelled with its name: call it
    /// from the exporter's scrape hook.
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    ///
    /// A breaker removed while it is exported (by another thread) has its gauges set to 0
    /// after this export, not left showing the state this export read.
    ///
    /// # Panics
    ///
    /// If the installed recorder panics, as [`export`] says; the breakers not yet exported
    /// are left for the next export.
    pub fn export_metrics(&self) {
        for (name, mut breaker) in self.breakers() {
            loop {
                export(&name, &breaker);
                // `remove` takes a breaker out of the map, then sets its gauges to 0: if that
                // came before this check, the export above may have set them again after it.
                match self.get(&name) {
                    Some(current) if Arc::ptr_eq(&current, &breaker) => break,
                    Some(current) => breaker = current, // replaced meanwhile: export the new one
                    None => {
                        forget(&name);
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Totals of failures (index 1) and rejections (index 4) only.
    fn totals(failures: u64, rejected: u64) -> [Option<u64>; 7] {
        let mut totals = [None; 7];
        totals[1] = Some(failures);
        totals[4] = Some(rejected);
        totals
    }

    #[test]
    fn an_export_adds_only_the_rise_above_the_largest_total_read_before_under_its_name() {
        let exported = ExportedTotals::default();
        assert_eq!(exported.rises("a", totals(10, 3)), totals(10, 3));
        // An export that read its totals before the one above, and ends after it.
        assert_eq!(exported.rises("a", totals(8, 3)), totals(0, 0));
        assert_eq!(exported.rises("a", totals(12, 5)), totals(2, 2));
        // The same breaker under another name: counted whole there too.
        assert_eq!(exported.rises("b", totals(12, 5)), totals(12, 5));
    }

    #[test]
    fn a_rise_given_back_is_added_by_the_next_export_once() {
        let exported = ExportedTotals::default();
        let lost = exported.rises("a", totals(10, 3));
        // Another export, between the lost one's rises and its give-back.
        assert_eq!(exported.rises("a", totals(12, 3)), totals(2, 0));
        exported.give_back("a", lost);
        assert_eq!(exported.rises("a", totals(12, 3)), totals(10, 3));
        assert_eq!(exported.rises("a", totals(12, 3)), totals(0, 0));
    }
}
