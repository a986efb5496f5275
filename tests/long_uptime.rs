//! A breaker that runs for years: the end of an open period and a probe's admission are kept
//! in 48 bits of microseconds from the breaker's build (`src/tagged_time.rs`), which wrap
//! about every 8.9 years. Each test puts a period or a probe across that wrap, or far past
//! it, and checks that the breaker keeps time as it does on its first day.

use std::time::Duration;

use hotbreaker::{Breaker, MAX_OPEN_DURATION, MAX_PROBE_TIMEOUT, ManualClock, State};

/// Where the breaker's kept times wrap, counted from its build.
const WRAP: Duration = Duration::from_micros(1 << 48);
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

fn one_failure_trips(open: Duration) -> (Breaker<ManualClock>, ManualClock) {
    one_failure_trips_probing(open, 1, Duration::from_secs(60))
}

/// A breaker on a manual clock that opens for `open` at its first failure, then lets `probes`
/// probes out at once, each given up on after `probe_timeout`.
fn one_failure_trips_probing(
    open: Duration,
    probes: usize,
    probe_timeout: Duration,
) -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(open)
        .half_open_probes(probes)
        .probe_timeout(probe_timeout)
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

/// A breaker tripped near the top of a manual clock (`ManualClock::set` takes any time up to
/// `u64::MAX` nanoseconds), so that its period ends within a microsecond of the top, reports
/// that period. Catches the time left computed as the period's end, rounded up to a whole
/// microsecond, in nanoseconds less now: past the top, that overflows (a panic in a debug
/// build, which `cargo test` is).
#[test]
fn a_trip_near_the_top_of_the_clock_reports_its_period() {
    let (breaker, clock) = one_failure_trips(Duration::from_secs(10));
    clock.set(Duration::from_nanos(u64::MAX - 10_000_000_000 - 100));
    breaker.try_acquire().expect("closed").failure();
    assert_eq!(breaker.state(), State::Open);
    let left = breaker
        .try_acquire()
        .expect_err("just opened")
        .retry_after()
        .expect("open");
    // The end is kept in whole microseconds, rounded up.
    assert!(
        left >= Duration::from_secs(10)
            && left <= Duration::from_secs(10) + Duration::from_micros(1),
        "{left:?}"
    );
}

/// A probe admitted five years after the last admission kept (a probe that hangs holds the
/// other place, and no call comes meanwhile) is the newest, so the probe timeout counts from
/// it. Catches the later of two admissions decided by half of the 48 bits' range (4.5 years),
/// which took the five-year-old one for the later and gave the new probe up at once.
#[test]
fn a_probe_admitted_after_five_quiet_years_is_timed_from_its_own_admission() {
    let (breaker, clock) =
        one_failure_trips_probing(Duration::from_secs(10), 2, Duration::from_secs(10));
    breaker.try_acquire().expect("closed").failure();
    clock.advance(Duration::from_secs(10));
    let _hung = breaker.try_acquire().expect("the first probe");
    clock.advance(YEAR * 5);
    let _young = breaker
        .try_acquire()
        .expect("the second probe, in the other place");
    let rejected = breaker.try_acquire().expect_err("both places taken");
    assert_eq!(
        rejected.state(),
        State::HalfOpen,
        "the young probe's timeout is not up"
    );
    clock.advance(Duration::from_secs(10));
    let rejected = breaker.try_acquire().expect_err("both places taken");
    assert_eq!(
        rejected.state(),
        State::HalfOpen,
        "at its timeout, not past it"
    );
    clock.advance(Duration::from_micros(1));
    let rejected = breaker
        .try_acquire()
        .expect_err("past every probe's timeout");
    assert_eq!(rejected.state(), State::Open);
}

/// The longest probe timeout a breaker takes, `MAX_PROBE_TIMEOUT`, fires: a probe out a
/// microsecond longer is given up on, one out exactly that long is not. Catches the bound set
/// past the 6.7 years a probe's age can read (such a timeout never fires).
#[test]
fn the_longest_probe_timeout_fires() {
    let (breaker, clock) = one_failure_trips_probing(Duration::from_secs(10), 1, MAX_PROBE_TIMEOUT);
    breaker.try_acquire().expect("closed").failure();
    clock.advance(Duration::from_secs(10));
    let _probe = breaker.try_acquire().expect("the probe");
    clock.advance(MAX_PROBE_TIMEOUT);
    let rejected = breaker.try_acquire().expect_err("at its timeout");
    assert_eq!(rejected.state(), State::HalfOpen);
    clock.advance(Duration::from_micros(1));
    let rejected = breaker.try_acquire().expect_err("past its timeout");
    assert_eq!(rejected.state(), State::Open);
}

/// A probe's admission is kept with a 16-bit tag of its half-open generation. After 65,536
/// generations with no half-open period among them (resets), the next half-open period has
/// the tag of the last one, whose probe time is still kept: taken for the new period's newest
/// when it reads as later (kept 6.7 to 8.9 years before), its probe was given up on up to 2.2
/// years late. Checks, for a stale time kept 6 and 7.5 years before, that the new probe is
/// given up on at its timeout and not before.
#[test]
fn a_probe_time_65536_generations_old_is_not_taken_for_the_new_periods() {
    const TIMEOUT: Duration = Duration::from_secs(5);
    for stale_for in [YEAR * 6, YEAR * 15 / 2] {
        let (breaker, clock) = one_failure_trips_probing(Duration::from_secs(10), 1, TIMEOUT);
        breaker.try_acquire().expect("closed").failure(); // open, generation 1
        clock.advance(Duration::from_secs(10));
        drop(breaker.try_acquire().expect("the probe")); // half-open 2, its time kept
        // Closed 3 to 65,536: an operator, a health check, a feature flag over the years.
        for _ in 0..65_534 {
            breaker.reset();
        }
        clock.advance(stale_for);
        breaker.try_acquire().expect("closed").failure(); // open 65,537
        clock.advance(Duration::from_secs(10));
        let probe = breaker.try_acquire().expect("the probe"); // half-open 65,538: tag 2
        clock.advance(TIMEOUT);
        let rejected = breaker.try_acquire().expect_err("the place is taken");
        assert_eq!(
            rejected.state(),
            State::HalfOpen,
            "{stale_for:?} on: given up on before its timeout"
        );
        clock.advance(Duration::from_micros(1));
        let rejected = breaker.try_acquire().expect_err("past its timeout");
        assert_eq!(
            rejected.state(),
            State::Open,
            "{stale_for:?} on: not given up on at its timeout"
        );
        drop(probe);
    }
}
