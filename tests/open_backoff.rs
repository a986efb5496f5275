//! The open back-off: open periods that grow while probes keep failing, and start again from
//! the open duration once the breaker closes or is opened from outside.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, Builder, ManualClock, State, Transition, Trigger};

const OPEN: Duration = Duration::from_secs(10);

fn builder(clock: &ManualClock, events: &Arc<Mutex<Vec<Transition>>>) -> Builder<ManualClock> {
    let events = Arc::clone(events);
    Breaker::builder()
        .consecutive_failures(1)
        .open_duration(OPEN)
        .clock(clock.clone())
        .on_transition(move |t| events.lock().unwrap().push(*t))
}

/// A breaker whose open periods double per failed round, up to an hour.
fn doubling(clock: &ManualClock, events: &Arc<Mutex<Vec<Transition>>>) -> Breaker<ManualClock> {
    builder(clock, events)
        .open_backoff(2.0, Duration::from_secs(3600))
        .build()
        .unwrap()
}

/// A doubling breaker that tripped (open for `OPEN`) and then failed one probe round (open
/// for twice that).
fn after_one_failed_round() -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = doubling(&clock, &Arc::default());
    breaker.try_acquire().unwrap().failure();
    assert_eq!(open_for(&breaker), OPEN);
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 2);
    (breaker, clock)
}

/// How long the breaker stays open from now, as a rejected call is told.
fn open_for(breaker: &Breaker<ManualClock>) -> Duration {
    let rejected = breaker.try_acquire().expect_err("open");
    assert_eq!(rejected.state(), State::Open);
    rejected.retry_after().expect("an open period")
}

/// Waits out the open period, then fails the probe; returns the new period.
fn fail_a_round(breaker: &Breaker<ManualClock>, clock: &ManualClock) -> Duration {
    clock.advance(open_for(breaker));
    breaker.try_acquire().expect("a probe").failure();
    open_for(breaker)
}

#[test]
fn each_failed_round_lengthens_the_period_up_to_the_longest() {
    let (clock, events) = (ManualClock::new(), Arc::default());
    let breaker = builder(&clock, &events)
        .open_backoff(1.5, Duration::from_secs(40))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        open_for(&breaker),
        OPEN,
        "a trip opens for the open duration"
    );
    let periods: Vec<u64> = (0..5)
        .map(|_| fail_a_round(&breaker, &clock).as_millis() as u64)
        .collect();
    assert_eq!(periods, [15_000, 22_500, 33_750, 40_000, 40_000]);
    // Listeners are told the period each opening has.
    let events = events.lock().unwrap();
    let last = events.last().unwrap();
    assert_eq!(
        (last.trigger, last.open_for),
        (Trigger::ProbeFailed, Some(Duration::from_secs(40)))
    );
}

#[test]
fn a_close_starts_the_next_streak_from_the_open_duration() {
    let (breaker, clock) = after_one_failed_round();
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 4);
    // The dependency is back: the probe closes, then a new failure trips.
    clock.advance(open_for(&breaker));
    breaker.try_acquire().expect("a probe").success();
    assert_eq!(breaker.state(), State::Closed);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(open_for(&breaker), OPEN);
    assert_eq!(
        fail_a_round(&breaker, &clock),
        OPEN * 2,
        "not 8 x: a new streak"
    );
}

#[test]
fn an_opening_from_outside_starts_the_streak_again() {
    let (breaker, clock) = after_one_failed_round();
    // Half-open, then opened by another instance's decision for its own period.
    clock.advance(open_for(&breaker));
    let probe = breaker.try_acquire().expect("a probe");
    assert!(breaker.open_for(Duration::from_secs(5)).unwrap());
    drop(probe);
    assert_eq!(open_for(&breaker), Duration::from_secs(5));
    assert_eq!(
        fail_a_round(&breaker, &clock),
        OPEN * 2,
        "counted from the outside opening"
    );
}

#[test]
fn probes_given_up_on_count_as_a_failed_round() {
    let (clock, events) = (ManualClock::new(), Arc::default());
    let breaker = builder(&clock, &events)
        .open_backoff(3.0, Duration::from_secs(3600))
        .probe_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(OPEN);
    let hung = breaker.try_acquire().expect("a probe");
    clock.advance(Duration::from_secs(2));
    let rejected = breaker.try_acquire().expect_err("the probe is given up on");
    assert_eq!(
        rejected.retry_after(),
        Some(OPEN * 3),
        "the rejection tells the new period"
    );
    drop(hung);
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 9);
}

#[test]
fn without_a_backoff_every_opening_lasts_the_open_duration() {
    let (clock, events) = (ManualClock::new(), Arc::default());
    let breaker = builder(&clock, &events).build().unwrap();
    breaker.try_acquire().unwrap().failure();
    for _ in 0..3 {
        assert_eq!(fail_a_round(&breaker, &clock), OPEN);
    }
}

#[test]
fn a_backoff_set_by_reconfigure_applies_from_the_next_failed_round() {
    let (clock, events) = (ManualClock::new(), Arc::default());
    let breaker = builder(&clock, &events).build().unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(fail_a_round(&breaker, &clock), OPEN);
    let mut config = breaker.config();
    config.open_backoff = Some(hotbreaker::OpenBackoffConfig {
        multiplier: 2.0,
        max: Duration::from_secs(3600),
    });
    breaker.reconfigure(config).unwrap();
    // The rounds before it were not counted: this is the first the back-off sees.
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 2);
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 4);
}

#[test]
fn bad_backoffs_are_refused_naming_the_field() {
    let cases = [
        (f64::NAN, OPEN * 2, "open_backoff.multiplier"),
        (f64::INFINITY, OPEN * 2, "open_backoff.multiplier"),
        (0.5, OPEN * 2, "open_backoff.multiplier"),
        (2.0, OPEN / 2, "open_backoff.max"),
        (2.0, hotbreaker::MAX_OPEN_DURATION * 2, "open_backoff.max"),
    ];
    for (multiplier, max, field) in cases {
        let err = Breaker::builder()
            .open_duration(OPEN)
            .open_backoff(multiplier, max)
            .build()
            .unwrap_err();
        assert_eq!(err.field(), field, "{err}");
    }
    // A multiplier of 1 is allowed (no growth), and a longest period equal to the first.
    assert!(
        Breaker::builder()
            .open_duration(OPEN)
            .open_backoff(1.0, OPEN)
            .build()
            .is_ok()
    );
}

#[test]
fn a_backoff_switched_off_and_on_counts_again_from_the_start() {
    let (breaker, clock) = after_one_failed_round();
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 4);
    let with_backoff = breaker.config();
    breaker
        .reconfigure(hotbreaker::Config {
            open_backoff: None,
            ..with_backoff
        })
        .unwrap();
    assert_eq!(fail_a_round(&breaker, &clock), OPEN);
    breaker.reconfigure(with_backoff).unwrap();
    assert_eq!(
        fail_a_round(&breaker, &clock),
        OPEN * 2,
        "the count started again"
    );
}

#[test]
fn a_new_open_duration_is_multiplied_from_the_next_round() {
    let (breaker, clock) = after_one_failed_round();
    breaker
        .reconfigure(hotbreaker::Config {
            open_duration: Duration::from_secs(1),
            ..breaker.config()
        })
        .unwrap();
    // The third round in a row: the new open duration times 2 squared.
    assert_eq!(fail_a_round(&breaker, &clock), Duration::from_secs(4));
}

#[test]
fn probes_failing_in_one_round_count_it_once() {
    let (clock, events) = (ManualClock::new(), Arc::default());
    let breaker = builder(&clock, &events)
        .half_open_probes(3)
        .open_backoff(2.0, Duration::from_secs(3600))
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 2);
    clock.advance(open_for(&breaker));
    let probes: Vec<_> = (0..3)
        .map(|_| breaker.try_acquire().expect("a probe"))
        .collect();
    for probe in probes {
        probe.failure();
    }
    assert_eq!(open_for(&breaker), OPEN * 4, "one round, not three");
    assert_eq!(fail_a_round(&breaker, &clock), OPEN * 8);
}
