//! State-transition events, and the listeners that receive them.

use std::cell::Cell;
use std::time::Duration;

use crate::state::State;
use crate::sync::thread_local_cell;
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

/// How many breakers' listeners one thread can be running at once, each called from a
/// listener of the one before, and still have every transition reach them in order. Deeper
/// than that, a transition made by a listener reaches the listeners at once, possibly before
/// the transition that led to it.
const NESTED_BREAKERS: usize = 4;

thread_local_cell! {
    /// The breakers (by address) whose listeners this thread is running; 0 is a free place.
    static TELLING: Cell<[usize; NESTED_BREAKERS]> = Cell::new([0; NESTED_BREAKERS]);
}
/// How many transitions made by listeners one thread can hold back at once. Past that, a
/// transition is told at once, possibly before the one that led to it.
const HELD_BACK_PLACES: usize = 8;

/// Held-back transitions, oldest first, and free places (`None`) after them.
type HeldBack = [Option<(usize, Transition)>; HELD_BACK_PLACES];

thread_local_cell! {
    /// Transitions that a listener made on this thread while the breaker's listeners were
    /// hearing an earlier one, held back until they have heard it: breaker and transition. A
    /// fixed array with no destructor, so that it is there until the thread's very end (a
    /// transition made by another thread-local's destructor is held back like any other)
    /// and holding back never allocates.
    static HELD_BACK: Cell<HeldBack> = Cell::new([None; HELD_BACK_PLACES]);
}

/// Tells `listeners`, the listeners of the breaker at address `breaker`, of `transition`.
///
/// A listener may make a transition of the same breaker (a `reset` when it opens, say). Told
/// at once, the listeners after it would hear the new transition before the one they are
/// hearing, so one thread's transitions would reach them out of order and a listener that
/// keeps the last state (a gauge, a log) would end on the wrong one. So a transition made
/// while this thread runs the breaker's listeners is held back and told after them, in the
/// order made. A panicking listener drops what was held back for its breaker, as it drops
/// the rest of its own transition's telling.
pub(crate) fn tell(listeners: &[Listener], breaker: usize, transition: &Transition) {
    let tell_now = |transition: &Transition| {
        for listener in listeners {
            if std::thread::panicking() {
                // A panic in the call dropped its permit, and the failure made this transition:
                // a listener panicking now would be a panic during a panic, which aborts the
                // process. The panic hook has reported it; the unwinding goes on.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    listener(transition);
                }));
            } else {
                listener(transition);
            }
        }
    };
    let Ok(telling) = TELLING.try_with(Cell::get) else {
        return tell_now(transition);
    };
    if telling.contains(&breaker) {
        if !hold_back(breaker, transition) {
            tell_now(transition);
        }
        return;
    }
    let Some(place) = telling.iter().position(|&running| running == 0) else {
        return tell_now(transition);
    };
    let mut marked = telling;
    marked[place] = breaker;
    TELLING.with(|telling| telling.set(marked));
    let _done = DoneTelling { breaker, place };
    tell_now(transition);
    while let Some(next) = take_held_back(breaker) {
        tell_now(&next);
    }
}

/// Holds `transition` of `breaker` back; whether there was a place for it.
fn hold_back(breaker: usize, transition: &Transition) -> bool {
    HELD_BACK
        .try_with(|held| {
            let mut places = held.get();
            let Some(free) = places.iter().position(Option::is_none) else {
                return false;
            };
            places[free] = Some((breaker, *transition));
            held.set(places);
            true
        })
        .unwrap_or(false)
}

/// The oldest transition held back for `breaker`, taken out.
fn take_held_back(breaker: usize) -> Option<Transition> {
    HELD_BACK
        .try_with(|held| {
            let mut places = held.get();
            let index = places
                .iter()
                .position(|place| matches!(place, Some((of, _)) if *of == breaker))?;
            let taken = places[index].map(|(_, transition)| transition);
            // The later ones move up a place: oldest first, free places last.
            places[index..].rotate_left(1);
            places[HELD_BACK_PLACES - 1] = None;
            held.set(places);
            taken
        })
        .ok()
        .flatten()
}

/// Frees a breaker's place in [`TELLING`] when its listeners are done, or have panicked, and
/// drops what is still held back for it (only a panic leaves any).
struct DoneTelling {
    breaker: usize,
    place: usize,
}

impl Drop for DoneTelling {
    fn drop(&mut self) {
        let _ = TELLING.try_with(|telling| {
            let mut marks = telling.get();
            marks[self.place] = 0;
            telling.set(marks);
        });
        while take_held_back(self.breaker).is_some() {}
    }
}
