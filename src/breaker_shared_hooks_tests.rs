//! The hooks `shared` uses on a breaker: how it extends an opening, and when it last closed.

use super::*;
use crate::ManualClock;

fn breaker_on(clock: &ManualClock) -> Breaker<ManualClock> {
    Breaker::builder()
        .consecutive_failures(1)
        .clock(clock.clone())
        .build()
        .unwrap()
}

#[test]
fn extending_an_opening_to_an_earlier_end_changes_nothing() {
    // Another instance holding the dependency down for less than is left here must not
    // shorten this breaker's period.
    let clock = ManualClock::new();
    let breaker = breaker_on(&clock);
    assert!(breaker.open_for(Duration::from_secs(60)).unwrap());
    let (generation, left) = breaker.current_opening().unwrap();
    assert!(!breaker.extend_opening(generation, Duration::from_secs(10)));
    assert_eq!(breaker.current_opening(), Some((generation, left)));
    // A later end does extend it.
    assert!(breaker.extend_opening(generation, Duration::from_secs(120)));
    assert!(breaker.current_opening().unwrap().1 > left);
}

#[test]
fn a_reset_is_when_the_breaker_last_closed() {
    // `shared` stamps a recovery with the last closing: a reset is one, like a probe round
    // that succeeds.
    let clock = ManualClock::new();
    let breaker = breaker_on(&clock);
    clock.advance(Duration::from_secs(10));
    breaker.open_for(Duration::from_secs(60)).unwrap();
    breaker.reset();
    assert_eq!(breaker.closed_ago(), Duration::ZERO);
    clock.advance(Duration::from_secs(5));
    assert_eq!(breaker.closed_ago(), Duration::from_secs(5));
}
