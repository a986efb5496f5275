//! A clock's bound on its time (`Clock::upper_bound_nanos`): an open breaker turns calls
//! away from the bound while it falls before the period's end, and reads the clock itself
//! from there, so the period ends when the clock says.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hotbreaker::{Breaker, CallError, Clock, ManualClock, QuantaClock, State};

const OPEN: Duration = Duration::from_secs(10);

/// A manual clock whose bound is `late_by` after its time, counting its exact reads.
#[derive(Clone)]
struct BoundedClock {
    time: ManualClock,
    late_by: u64,
    exact_reads: Arc<AtomicU64>,
}

impl BoundedClock {
    fn late_by(late_by: Duration) -> Self {
        BoundedClock {
            time: ManualClock::new(),
            late_by: late_by.as_nanos() as u64,
            exact_reads: Arc::new(AtomicU64::new(0)),
        }
    }

    fn exact_reads(&self) -> u64 {
        self.exact_reads.load(Ordering::Relaxed)
    }
}

/// (`Builder::build` asks for a default clock; every test here sets its own.)
impl Default for BoundedClock {
    fn default() -> Self {
        BoundedClock::late_by(Duration::ZERO)
    }
}

impl Clock for BoundedClock {
    fn now_nanos(&self) -> u64 {
        self.exact_reads.fetch_add(1, Ordering::Relaxed);
        self.time.now_nanos()
    }

    fn recheck_within(&self) -> Option<Duration> {
        self.time.recheck_within()
    }

    fn upper_bound_nanos(&self) -> Option<u64> {
        Some(self.time.now_nanos() + self.late_by)
    }
}

/// A breaker on `clock` that its first failure opens for `open`, opened.
fn tripped_for<C: Clock + Default>(clock: C, open: Duration) -> Breaker<C> {
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(open)
        .clock(clock)
        .build()
        .expect("valid settings");
    let _ = breaker.call(|| Err::<(), _>("refused"));
    assert_eq!(breaker.state(), State::Open);
    breaker
}

fn tripped(clock: &BoundedClock) -> Breaker<BoundedClock> {
    tripped_for(clock.clone(), OPEN)
}

fn rejection(result: Result<(), CallError<&str>>) -> hotbreaker::Rejected {
    match result {
        Err(CallError::Rejected(rejected)) => rejected,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn far_from_the_end_rejections_read_only_the_bound() {
    let late_by = Duration::from_millis(3);
    let clock = BoundedClock::late_by(late_by);
    let breaker = tripped(&clock);
    clock.time.advance(Duration::from_secs(4));
    let reads = clock.exact_reads();
    for _ in 0..100 {
        let rejected = rejection(breaker.call(|| Ok(())));
        // Short of the 6 s left by the bound's lateness, never over it.
        assert_eq!(
            rejected.retry_after(),
            Some(Duration::from_secs(6) - late_by)
        );
        let rejected = breaker.try_acquire().expect_err("open");
        assert_eq!(
            rejected.retry_after(),
            Some(Duration::from_secs(6) - late_by)
        );
    }
    assert_eq!(
        clock.exact_reads(),
        reads,
        "no exact read for 200 rejections"
    );
    assert_eq!(breaker.metrics().rejected, 200, "each rejection counted");
}

#[test]
fn near_the_end_the_clock_decides_and_the_period_ends_on_time() {
    let late_by = Duration::from_millis(3);
    let clock = BoundedClock::late_by(late_by);
    let breaker = tripped(&clock);
    // Within the bound's lateness of the end: the bound cannot say "not yet".
    clock.time.advance(OPEN - Duration::from_millis(1));
    let reads = clock.exact_reads();
    let rejected = rejection(breaker.call(|| Ok(())));
    assert_eq!(
        rejected.retry_after(),
        Some(Duration::from_millis(1)),
        "the exact time left"
    );
    assert!(clock.exact_reads() > reads, "the clock was read");
    // One nanosecond before the end, still open; at the end, the probe.
    clock
        .time
        .advance(Duration::from_millis(1) - Duration::from_nanos(1));
    let rejected = rejection(breaker.call(|| Ok(())));
    assert_eq!(rejected.retry_after(), Some(Duration::from_nanos(1)));
    clock.time.advance(Duration::from_nanos(1));
    assert_eq!(
        breaker.call(|| Ok::<_, &str>(())),
        Ok(()),
        "the probe passes"
    );
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_period_ended_early_is_over_whatever_the_bound_says() {
    let clock = BoundedClock::late_by(Duration::from_millis(3));
    let breaker = tripped(&clock);
    clock.time.advance(Duration::from_secs(1));
    assert!(breaker.call(|| Ok::<_, &str>(())).is_err(), "open");
    breaker.end_open_period();
    assert_eq!(
        breaker.call(|| Ok::<_, &str>(())),
        Ok(()),
        "the probe passes"
    );
}

/// The default clock on this machine: a call made once the clock, read before it, says the
/// period is over is never turned away, whichever of the bound or the clock decided.
#[test]
fn with_the_default_clock_the_period_ends_on_time() {
    let clock = QuantaClock::new();
    // Longer than the bound's lateness (eight ticks and a millisecond, 33 ms at 250 Hz), so
    // that the bound decides the rejections of most of the period.
    let period = Duration::from_millis(200);
    let breaker = tripped_for(clock.clone(), period);
    // The trip read the clock before this reading: its period ends no later than this and
    // the period.
    let tripped_by = clock.now_nanos();
    let over_from = tripped_by + period.as_nanos() as u64 + 1_000; // the deadline's µs rounding
    let mut rejections = 0u64;
    loop {
        let before = clock.now_nanos();
        match breaker.call(|| Ok::<_, &str>(())) {
            Ok(()) => break,
            Err(CallError::Rejected(rejected)) => {
                assert!(
                    before < over_from,
                    "turned away {} ns after the period's end: {rejected}",
                    before - over_from
                );
                rejections += 1;
            }
            Err(CallError::Failed(_)) => unreachable!(),
        }
        std::hint::spin_loop();
    }
    assert!(rejections > 0, "the breaker was open");
    assert_eq!(breaker.state(), State::Closed);
}
