//! A breaker that runs for years: the end of an open period and a probe's admission are kept
//! in 48 bits of microseconds from the breaker's build (`src/tagged_time.rs`), which wrap
//! about every 8.9 years. Each test puts a period or a probe across that wrap, or far past
//! it, and checks that the breaker keeps time as it does on its first day.

use std::time::Duration;

use hotbreaker::{Breaker, MAX_OPEN_DURATION, ManualClock, State};

/// Where the breaker's kept times wrap, counted from its build.
const WRAP: Duration = Duration::from_micros(1 << 48);
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

fn one_failure_trips(open: Duration) -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(open)
        .probe_timeout(Duration::from_secs(60))
        .clock(clock.clone())
        .build()
        .unwrap();
    (breaker, clock)
}

/// Trips at the breaker's age `trip_at` and checks the period of `open` ends on its last
/// microsecond: rejected with the whole period left, rejected a microsecond before its end,
/// a probe at its end.
fn a_period_from(trip_at: Duration, open: Duration) {
    let (breaker, clock) = one_failure_trips(open);
    clock.advance(trip_at);
    breaker.try_acquire().expect("closed").failure();
    let rejected = breaker.try_acquire().expect_err("just opened");
    assert_eq!(rejected.state(), State::Open, "tripped at {trip_at:?}");
    assert_eq!(rejected.retry_after(), Some(open), "tripped at {trip_at:?}");
    clock.advance(open - Duration::from_micros(1));
    let rejected = breaker.try_acquire().expect_err("a microsecond left");
    assert_eq!(rejected.retry_after(), Some(Duration::from_micros(1)));
    clock.advance(Duration::from_micros(1));
    let probe = breaker.try_acquire().expect("the period is over");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn open_periods_end_on_time_across_and_long_after_the_wrap() {
    let second = Duration::from_secs(1);
    a_period_from(WRAP - Duration::from_micros(3), Duration::from_micros(10));
    a_period_from(WRAP - second / 2, second);
    a_period_from(WRAP - Duration::from_micros(1), second);
    a_period_from(WRAP, second);
    a_period_from(YEAR * 9, Duration::from_secs(30));
    a_period_from(YEAR * 17 / 2, MAX_OPEN_DURATION);
    a_period_from(WRAP * 3 - YEAR / 2, MAX_OPEN_DURATION);
    a_period_from(YEAR * 40, Duration::from_millis(5));
}

#[test]
fn a_probe_out_across_the_wrap_is_given_up_on_at_its_timeout_and_not_before() {
    // (when the probe is admitted, how late it may be given up on): an admission on the
    // wrap's last microsecond is kept a microsecond later, on the wrap (the value before it
    // marks a sealed word), so it is taken for a microsecond younger, never older.
    for (admitted_at, late) in [
        (WRAP - Duration::from_secs(30), Duration::ZERO),
        (WRAP - Duration::from_micros(1), Duration::from_micros(1)),
        (WRAP - Duration::from_micros(2), Duration::ZERO),
        (WRAP + Duration::from_secs(5), Duration::ZERO),
        (YEAR * 20, Duration::ZERO),
    ] {
        let (breaker, clock) = one_failure_trips(Duration::from_secs(10));
        clock.advance(admitted_at - Duration::from_secs(10));
        breaker.try_acquire().expect("closed").failure();
        clock.advance(Duration::from_secs(10));
        let _probe = breaker.try_acquire().expect("the probe");
        clock.advance(Duration::from_secs(60) + late);
        let rejected = breaker.try_acquire().expect_err("at its timeout");
        assert_eq!(
            rejected.state(),
            State::HalfOpen,
            "admitted at {admitted_at:?}"
        );
        clock.advance(Duration::from_micros(1));
        let rejected = breaker.try_acquire().expect_err("past its timeout");
        assert_eq!(rejected.state(), State::Open, "admitted at {admitted_at:?}");
        assert_eq!(rejected.retry_after(), Some(Duration::from_secs(10)));
    }
}

#[test]
fn a_period_across_the_wrap_can_be_ended_early() {
    let (breaker, clock) = one_failure_trips(Duration::from_secs(1));
    clock.advance(WRAP - Duration::from_secs(2));
    assert!(breaker.open_for(Duration::from_secs(4)).unwrap());
    clock.advance(Duration::from_secs(3));
    let rejected = breaker
        .try_acquire()
        .expect_err("a second left, past the wrap");
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(1)));
    assert!(breaker.end_open_period());
    assert!(breaker.try_acquire().expect("ended").is_probe());
}
