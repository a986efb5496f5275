//! Manual transitions racing the calls.

#![cfg(loom)]

mod common;

use loom::sync::Arc;

use common::{Events, OPEN, Role, check_each_order, small, spawn_in, trip_and_wait};
use hotbreaker::testing::{self, assert_one_chain};
use hotbreaker::{Breaker, ManualClock, State, Trigger};

/// `force_open` and `reset` race a failure; two failures in a row would trip.
///
/// Checks that the transitions form one chain (each from the state the one before went to,
/// in generation order, ending in the state the breaker reports), and that a closed breaker's
/// window holds the failure exactly when its permit belongs to the final closed generation.
///
/// Catches: a manual transition that is not a compare-and-swap (two transitions from the same
/// state, a broken chain), a reset that does not empty the window before its swap (the old
/// failure stays in view), and a failure from before a manual transition counted after it.
/// (A reset that skips `Window::begin` alone is no bug: the window's tag and `word_for` set
/// it aside anyway.) Also a failure into a full window that does not check, once the
/// window's tag matches, that its generation is current (tried in
/// `Window::record_failure_in_full`): under loom's 1-bit tag, a failure of the first closed
/// generation lands in the window of the last.
#[test]
fn force_open_and_reset_race_a_failure() {
    check_each_order(2, 3, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(2).on_transition(events.listener()));
        let caller: Role<Option<u32>> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let permit = breaker.try_acquire().ok()?;
                let generation = permit.generation();
                permit.failure();
                Some(generation)
            })
        };
        let forcer: Role<Option<u32>> = {
            let breaker = breaker.clone();
            Box::new(move || {
                breaker.force_open();
                None
            })
        };
        let resetter: Role<Option<u32>> = {
            let breaker = breaker.clone();
            Box::new(move || {
                breaker.reset();
                None
            })
        };
        let permit_generation = spawn_in(order, vec![caller, forcer, resetter])[0];

        let mut events = events.take();
        let state = assert_one_chain(&mut events);
        assert_eq!(events.len(), 2, "two manual transitions: {events:?}");
        let metrics = breaker.metrics();
        assert_eq!(metrics.state, state);
        assert_eq!(metrics.openings, 0);
        if state == State::Closed {
            let final_generation = events.len() as u32;
            let counted = u32::from(permit_generation == Some(final_generation));
            assert_eq!(
                metrics.consecutive_failures, counted,
                "{metrics:?}, permit {permit_generation:?}"
            );
        }
    });
}

/// The role that opens `breaker` from outside (`open_for`) and says whether it did.
fn opener(breaker: &Arc<Breaker<ManualClock>>) -> Role<bool> {
    let breaker = Arc::clone(breaker);
    Box::new(move || breaker.open_for(OPEN).unwrap())
}

/// The role of a call that fails (tripping a breaker of `consecutive_failures(1)`) and says
/// whether it was let through.
fn failing_caller(breaker: &Arc<Breaker<ManualClock>>) -> Role<bool> {
    let breaker = Arc::clone(breaker);
    Box::new(move || breaker.try_acquire().map(|p| p.failure()).is_ok())
}

/// `open_for` (an opening decided elsewhere) races a failure that trips the breaker.
///
/// Checks that exactly one of them opens it: one opening, one transition, from `Closed`, and
/// the breaker open.
///
/// Catches: an external opening that is not a compare-and-swap from the state it checked (it
/// opens a breaker the trip opened already: two openings, or a chain that leaves `Open` for
/// `Open` twice), and one that opens a breaker in any state.
#[test]
fn open_for_races_a_trip() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        let caller = failing_caller(&breaker);
        let opener = opener(&breaker);
        let [admitted, opened] = spawn_in(order, vec![caller, opener])[..] else {
            unreachable!("two roles")
        };

        let mut events = events.take();
        let state = assert_one_chain(&mut events);
        assert_eq!(state, State::Open, "{events:?}");
        assert_eq!(events.len(), 1, "one opening: {events:?}");
        assert_eq!(breaker.metrics().openings, 1);
        // The opener reports whether it opened; if it did, the failure came after (rejected,
        // or its verdict stale).
        let by_trip = events[0].trigger != Trigger::External;
        assert_eq!(opened, !by_trip, "{events:?}");
        assert!(
            admitted || opened,
            "a rejected call means the opener came first"
        );
    });
}

/// A follower applies an opening from its store (`open_from_store`) while a failure trips the
/// breaker and a second follower looks at the mark of generation 1, the opening both race to
/// make.
///
/// Checks that generation 1 is marked exactly when the opening that made it came from the
/// store, both after the threads and as the looking follower saw it while they ran: a mark
/// it saw names an opening from the store, never the trip (which followers must publish).
///
/// Catches: a mark written before the swap, with the generation the opener expected to make
/// (the trip takes that generation, and its opening is never published), and one written
/// whether or not the opener's swap succeeded.
#[test]
fn an_opening_from_a_store_is_marked_and_a_trip_never_is() {
    check_each_order(2, 3, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        let caller = failing_caller(&breaker);
        let from_store: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || testing::open_from_store(&breaker, OPEN).is_some())
        };
        let looker: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || testing::opened_from_store(&breaker, 1))
        };
        let [_, opened, seen_marked] = spawn_in(order, vec![caller, from_store, looker])[..] else {
            unreachable!("three roles")
        };

        let mut events = events.take();
        assert_eq!(assert_one_chain(&mut events), State::Open, "{events:?}");
        assert_eq!(events.len(), 1, "one opening: {events:?}");
        let by_store = events[0].trigger == Trigger::External;
        assert_eq!(opened, by_store, "{events:?}");
        assert_eq!(
            testing::opened_from_store(&breaker, 1),
            by_store,
            "{events:?}"
        );
        assert!(
            !seen_marked || by_store,
            "a follower saw the trip marked: {events:?}"
        );
    });
}

/// `open_for` races the first call after an open period, a probe whose success would close
/// the breaker.
///
/// Checks that the breaker ends open whatever the order (opened before the probe was
/// admitted, opened while it was out and its verdict stale, or opened after it closed the
/// breaker), with the transitions one chain and the last of them the external opening.
///
/// Catches: an external opening that loses to the closing without noticing (the breaker ends
/// closed although `open_for` came last), and a probe verdict counted after the opening.
#[test]
fn open_for_races_a_closing_probe() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        trip_and_wait(&breaker, &clock);
        let prober: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(probe) => {
                    assert!(probe.is_probe());
                    probe.success();
                    true
                }
                Err(_) => false, // the opener came first
            })
        };
        let opener = opener(&breaker);
        let [probed, opened] = spawn_in(order, vec![prober, opener])[..] else {
            unreachable!("two roles")
        };

        let mut events = events.take();
        let state = assert_one_chain(&mut events);
        assert_eq!(state, State::Open, "{events:?}");
        assert!(
            opened,
            "closed or half-open, the opener opens it: {events:?}"
        );
        assert_eq!(breaker.state(), State::Open);
        let last = events.last().unwrap();
        assert_eq!(last.trigger, Trigger::External, "{events:?}");
        let half_opened = events.iter().any(|e| e.to == State::HalfOpen);
        assert_eq!(probed, half_opened, "{events:?}");
    });
}
