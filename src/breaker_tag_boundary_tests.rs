//! Generation-boundary tests: the state word is moved to a chosen generation by a direct store
//! followed by a reset (a real closing into that generation), which is what 2^31 or 2^32
//! transitions would leave, without making them. Every other word (the open streak, the
//! stripes' window counts) keeps what the generations before left in it.

use super::*;
use crate::ManualClock;

/// Closes `breaker` (closed, idle) into `generation`, as `generation` transitions would.
fn start_at(breaker: &Breaker<ManualClock>, generation: u32) {
    let word = StateWord(breaker.control.state.load(Ordering::Acquire));
    let before = StateWord::new(State::Closed, generation.wrapping_sub(1))
        .with_counting(word.counts_successes())
        .with_timing(word.times_calls());
    breaker.control.state.store(before.0, Ordering::Release);
    breaker.reset();
    assert_eq!(
        StateWord(breaker.control.state.load(Ordering::Acquire)).generation(),
        generation
    );
}

fn open_for(breaker: &Breaker<ManualClock>) -> Duration {
    let rejected = breaker.try_acquire().expect_err("open");
    assert_eq!(rejected.state(), State::Open);
    rejected.retry_after().expect("an open period")
}

/// Opens for 10 s, doubling after each failed probe round in a row; trips at a failure.
fn backing_off() -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(10))
        .open_backoff(2.0, Duration::from_secs(3600))
        .clock(clock.clone())
        .build()
        .unwrap();
    (breaker, clock)
}

/// Closes into `start`, trips, then fails `rounds` probe rounds in a row: the period of
/// each opening that follows a failed round.
fn periods_after_failed_rounds(
    breaker: &Breaker<ManualClock>,
    clock: &ManualClock,
    start: u32,
    rounds: usize,
) -> Vec<Duration> {
    start_at(breaker, start);
    breaker.try_acquire().unwrap().failure();
    let mut periods = Vec::new();
    let mut open = open_for(breaker);
    for _ in 0..rounds {
        clock.advance(open);
        breaker.try_acquire().expect("a probe").failure();
        open = open_for(breaker);
        periods.push(open);
    }
    periods
}

const BACKED_OFF: [Duration; 3] = [
    Duration::from_secs(20),
    Duration::from_secs(40),
    Duration::from_secs(80),
];

/// `OpenStreak` starts as "generation 0, count 0". After the generation wraps, a probe
/// failing in half-open generation u32::MAX read that as "another probe of this round
/// already counted it, as 0 rounds": the failed round opened for the base period.
#[test]
fn the_first_failed_round_at_the_generation_wrap_is_backed_off() {
    let (breaker, clock) = backing_off();
    assert_eq!(
        periods_after_failed_rounds(&breaker, &clock, 100, 1),
        BACKED_OFF[..1]
    );
    // Closed u32::MAX - 2, open u32::MAX - 1, half-open u32::MAX, reopened in 0.
    let (breaker, clock) = backing_off();
    assert_eq!(
        periods_after_failed_rounds(&breaker, &clock, u32::MAX - 2, 1),
        BACKED_OFF[..1],
        "the failed round at the wrap was counted as none"
    );
}

/// The count for open generation 0 must be written over the initial word, which also
/// says "generation 0": skipped, the next round backed off from nothing.
#[test]
fn the_round_after_the_generation_wrap_backs_off_from_the_one_before() {
    let (breaker, clock) = backing_off();
    // Reopened in 0 after half-open u32::MAX, then in 2 after half-open 1.
    assert_eq!(
        periods_after_failed_rounds(&breaker, &clock, u32::MAX - 2, 3),
        BACKED_OFF,
    );
}

/// A count published for open generation `g` is still there `2^32` transitions later if
/// no failed round wrote since: it must neither be read as this round's nor keep this
/// round's count out.
#[test]
fn a_count_published_2_pow_32_transitions_ago_is_not_this_rounds() {
    let (breaker, clock) = backing_off();
    // Counts for 103 (one round) and 105 (two).
    assert_eq!(
        periods_after_failed_rounds(&breaker, &clock, 100, 2),
        BACKED_OFF[..2]
    );
    // Generation 102 again, 2^32 transitions on (as far as the streak can tell): open
    // 103, half-open 104 after a trip, reopened in 105 after its first failed round.
    assert_eq!(
        periods_after_failed_rounds(&breaker, &clock, 102, 2),
        BACKED_OFF[..2],
        "the streak of 2^32 transitions ago was read as this one"
    );
}

/// A stripe's window count keeps its full generation. Compared in serial arithmetic, one
/// last written 2^31 generations ago read as *newer* than the current generation, and
/// every success it was asked to count was dropped ("ours is over"). For the shared
/// stripe, which every success of a filling window goes through, the window never counted
/// a success: the rate rule saw failures only.
#[test]
fn a_shared_stripe_last_written_2_pow_31_generations_ago_still_counts() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .failure_rate(0.6, 10)
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().success(); // the shared stripe counts generation 0
    start_at(&breaker, 1 << 31);
    for _ in 0..10 {
        breaker.try_acquire().unwrap().success();
        breaker.try_acquire().unwrap().failure();
    }
    let m = breaker.metrics();
    assert!(
        m.state == State::Closed && m.window_calls == 10 && m.window_failures == 5,
        "half the calls failed, below 0.6, yet: {m:?}"
    );
}

/// The same for a thread's own stripe, which counts the successes that age a failure: a
/// success dropped there leaves two failures looking consecutive.
#[test]
fn an_owned_stripe_last_written_2_pow_31_generations_ago_still_counts() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(2)
        .stripes(64) // one of its own for this test's thread
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.stripes.register_thread();
    assert!(
        breaker.stripes.thread_stripe().is_some(),
        "the test thread shares the stripe of threads without one"
    );
    // A failure, then a success that ages it: this thread's stripe counts generation 0.
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().success();
    start_at(&breaker, 1 << 31);
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    let m = breaker.metrics();
    assert!(
        m.state == State::Closed && m.consecutive_failures == 1,
        "a success came between the two failures, yet: {m:?}"
    );
}
