//! Reconfiguration racing the calls.

#![cfg(loom)]

mod common;

use common::{Events, OPEN, Role, check_each_order, small, spawn_in};
use hotbreaker::{Config, State};

/// A reconfiguration that turns success counting on races a probe (its admission, which makes
/// the breaker half-open, and its success, which closes it).
///
/// Counting is a bit in the state word that reconfiguration sets with a compare-and-swap
/// keeping everything else, while the probe's verdict closes the breaker with another. Checks
/// that neither is lost: the breaker ends closed in the generation after the probe's (one
/// closing, announced once), and counts successes from then on.
///
/// Catches: setting the bit with a plain store of a word read earlier (the closing is undone:
/// the breaker stays half-open with its probe gone, or the generation goes back), and a
/// transition that rebuilds the word without the bit (counting silently switched off again).
#[test]
fn switching_counting_on_races_a_closing_probe() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        breaker.try_acquire().unwrap().failure();
        clock.advance(OPEN);
        let prober: Role<u32> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let probe = breaker.try_acquire().expect("the open period is over");
                let generation = probe.generation();
                probe.success();
                generation
            })
        };
        let reconfigurer: Role<u32> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let config = Config {
                    count_successes: true,
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
                0
            })
        };
        let probe_generation = spawn_in(order, vec![prober, reconfigurer])[0];

        let metrics = breaker.metrics();
        assert_eq!(metrics.state, State::Closed, "{metrics:?}");
        assert_eq!(metrics.closings, 1);
        let closings: Vec<_> = events
            .take()
            .into_iter()
            .filter(|e| e.to == State::Closed)
            .collect();
        assert_eq!(closings.len(), 1, "{closings:?}");
        assert_eq!(closings[0].generation, probe_generation + 1);
        // Counting is on: the next success is counted.
        let before = metrics.successes.expect("counting is on");
        breaker.try_acquire().unwrap().success();
        assert_eq!(breaker.metrics().successes, Some(before + 1));
    });
}
