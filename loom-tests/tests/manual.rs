//! Manual transitions racing the calls.

#![cfg(loom)]

mod common;

use common::{Events, Role, check_each_order, small, spawn_in};
use hotbreaker::State;
use hotbreaker::testing::assert_one_chain;

/// `force_open` and `reset` race a failure; two failures in a row would trip.
///
/// Checks that the transitions form one chain (each from the state the one before went to,
/// in generation order, ending in the state the breaker reports), and that a closed breaker's
/// window holds the failure exactly when its permit belongs to the final closed generation.
///
/// Catches: a manual transition that is not a compare-and-swap (two transitions from the same
/// state, a broken chain), a reset that does not clear the window (the old failure stays in
/// view), and a failure from before a manual transition counted after it.
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
