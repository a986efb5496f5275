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

#[test]
fn an_opening_is_extended_across_the_wrap_of_the_kept_times() {
    // The kept times wrap 2^48 µs after the build (`tagged_time.rs`): an end moved from
    // before that point to after it is later, not earlier.
    let clock = ManualClock::new();
    let breaker = breaker_on(&clock);
    clock.advance(Duration::from_micros(1 << 48) - Duration::from_secs(2));
    assert!(breaker.open_for(Duration::from_secs(1)).unwrap());
    let (generation, _) = breaker.current_opening().unwrap();
    assert!(breaker.extend_opening(generation, Duration::from_secs(4)));
    assert_eq!(
        breaker.current_opening(),
        Some((generation, Duration::from_secs(4)))
    );
    assert!(
        !breaker.extend_opening(generation, Duration::from_secs(3)),
        "earlier"
    );
    clock.advance(Duration::from_secs(4) - Duration::from_micros(1));
    assert!(
        breaker.try_acquire().is_err(),
        "a microsecond left, past the wrap"
    );
    clock.advance(Duration::from_micros(1));
    assert!(breaker.try_acquire().expect("over").is_probe());
}
