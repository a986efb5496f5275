//! The probe timeout: a call that finds every probe place taken, and the newest probe out
//! longer than the timeout, opens the breaker again. Raced by the probes' own admissions and
//! verdicts.

#![cfg(loom)]

mod common;

use common::{Events, OPEN, Role, check_each_order, small, spawn_in, trip_and_wait};
use hotbreaker::testing::assert_one_chain;
use hotbreaker::{Rejected, State, Trigger};

/// What the prober thread ended with: the generation of the second probe, if it got one.
type SecondProbe = Option<u32>;

/// One probe place. Thread A asks for a probe, lets it stay out past the timeout (moves the
/// clock by twice it), ends it without a verdict, and asks for a second probe, which it keeps
/// out. Thread B asks once, at any point of that: it may take the first probe itself, find
/// the place taken by a probe still young, find the first probe overdue and open the breaker
/// again, take the freed place, or find the second, young, probe out.
///
/// Checks that a second probe granted to A in half-open generation `g` is never followed by a
/// reopening out of `g` for a timed-out probe (its probe was young), that a call which
/// reopened is rejected as open for a full period, and that the transitions chain.
///
/// Catches: a reopening whose compare-and-swap is from a word that looks the same after a
/// probe ended and another was admitted (no admission count in the state word: B read the
/// first probe out and overdue, A ended it and was admitted again, and B's swap still
/// succeeded); and an admission that records its time after its swap rather than before (B
/// saw the second probe counted out, read the first one's time, and reopened).
#[test]
fn a_young_probe_is_never_given_up_on() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = small(|b| {
            b.consecutive_failures(1)
                .probe_timeout(OPEN)
                .on_transition(events.listener())
        });
        trip_and_wait(&breaker, &clock);

        let prober: Role<(SecondProbe, Option<Rejected>)> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(first) = breaker.try_acquire() else {
                    return (None, None); // B took the first probe
                };
                clock.advance(2 * OPEN);
                first.ignore();
                match breaker.try_acquire() {
                    Ok(second) => {
                        let generation = second.generation();
                        std::mem::forget(second); // kept out
                        (Some(generation), None)
                    }
                    Err(rejected) => (None, Some(rejected)),
                }
            })
        };
        let caller: Role<(SecondProbe, Option<Rejected>)> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    std::mem::forget(permit); // a probe, kept out
                    (None, None)
                }
                Err(rejected) => (None, Some(rejected)),
            })
        };
        let results = spawn_in(order, vec![prober, caller]);
        let (second, _) = results[0];
        let (_, caller_rejected) = results[1];

        let mut transitions = events.take();
        assert_one_chain(&mut transitions);
        let reopened: Vec<_> = transitions
            .iter()
            .filter(|t| t.trigger == Trigger::ProbesTimedOut)
            .collect();
        assert!(reopened.len() <= 1, "{transitions:?}");
        if let (Some(generation), Some(reopening)) = (second, reopened.first()) {
            assert_ne!(
                reopening.generation,
                generation.wrapping_add(1),
                "gave up on the probe of generation {generation}, admitted young: {transitions:?}"
            );
        }
        if let Some(reopening) = reopened.first() {
            assert_eq!(reopening.open_for, Some(OPEN));
            let rejected = caller_rejected.expect("only B's call can find the probe overdue");
            assert_eq!(
                (rejected.state(), rejected.retry_after()),
                (State::Open, Some(OPEN)),
                "the call that reopened is rejected for a full period"
            );
        }
    });
}
