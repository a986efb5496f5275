//! Calls that hang: with a `slow_call` limit, a closed call still out longer than the limit
//! is judged slow at the next call after that, without waiting for it to end, and its own end
//! records nothing more.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, Config, ManualClock, OwnedPermit, Permit, State};

#[path = "support/hook_clock.rs"]
mod hook_clock;
use hook_clock::HookClock;

const LIMIT: Duration = Duration::from_millis(100);
/// A call out this long has been judged by the next call: the limit and a half.
const JUDGED_BY: Duration = Duration::from_millis(150);

/// A breaker that trips on three failures in a row, timing calls against [`LIMIT`].
fn breaker() -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(3)
        .slow_call(LIMIT)
        .open_duration(Duration::from_secs(10))
        .count_successes(true)
        .clock(clock.clone())
        .build()
        .unwrap();
    (breaker, clock)
}

/// Successes, failures, slow calls, hung calls, released permits.
fn counts(breaker: &Breaker<ManualClock>) -> (Option<u64>, u64, u64, u64, u64) {
    let m = breaker.metrics();
    (
        m.successes,
        m.failures,
        m.slow_calls,
        m.hung_calls,
        m.released,
    )
}

fn hold(breaker: &Breaker<ManualClock>, calls: usize) -> Vec<Permit<'_, ManualClock>> {
    (0..calls)
        .map(|_| breaker.try_acquire().expect("closed"))
        .collect()
}

#[test]
fn calls_that_hang_trip_the_breaker_before_they_end() {
    let (breaker, clock) = breaker();
    let hung = hold(&breaker, 3);
    clock.advance(JUDGED_BY);
    let rejected = breaker
        .try_acquire()
        .expect_err("the three hung calls tripped the breaker before this call was let through");
    assert_eq!(rejected.state(), State::Open);
    assert_eq!(counts(&breaker), (Some(0), 3, 3, 3, 0));
    // They end at last, one as a success: nothing more is recorded.
    let mut hung = hung.into_iter();
    hung.next().unwrap().success();
    hung.next().unwrap().failure();
    drop(hung.next().unwrap());
    assert_eq!(counts(&breaker), (Some(0), 3, 3, 3, 0));
    assert_eq!(breaker.metrics().openings, 1);
}

#[test]
fn a_call_is_not_judged_before_it_has_been_out_longer_than_the_limit() {
    let (breaker, clock) = breaker();
    let out = breaker.try_acquire().unwrap();
    clock.advance(LIMIT);
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.metrics().hung_calls,
        0,
        "judged at exactly the limit"
    );
    clock.advance(JUDGED_BY - LIMIT);
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.metrics().hung_calls,
        1,
        "not judged at the limit and a half"
    );
    out.success();
    assert_eq!(counts(&breaker), (Some(2), 1, 1, 1, 0));
}

#[test]
fn a_call_that_ends_in_time_is_judged_by_its_end_alone() {
    let (breaker, clock) = breaker();
    let quick = breaker.try_acquire().unwrap();
    let slow = breaker.try_acquire().unwrap();
    clock.advance(LIMIT / 2);
    quick.success();
    clock.advance(LIMIT);
    slow.success(); // out 150 ms: slow at its end, before any sweep
    clock.advance(JUDGED_BY * 4);
    breaker.try_acquire().unwrap().success();
    assert_eq!(counts(&breaker), (Some(2), 1, 1, 0, 0));
}

#[test]
fn a_hung_call_dropped_without_a_verdict_is_not_released_as_well() {
    let (breaker, clock) = breaker();
    let out = breaker.try_acquire().unwrap();
    clock.advance(JUDGED_BY);
    breaker.try_acquire().unwrap().success();
    drop(out);
    assert_eq!(counts(&breaker), (Some(1), 1, 1, 1, 0));
    assert_eq!(breaker.metrics().permitted(), Some(2));
}

#[test]
fn many_calls_out_from_one_thread_are_judged_as_each_hangs() {
    // An async thread with thousands of requests out to a dependency that stopped answering:
    // a call every millisecond, over more than twenty limits, through many buckets.
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .failure_rate(0.5, 100)
        .slow_call(LIMIT)
        .clock(clock.clone())
        .build()
        .unwrap();
    let mut out = Vec::new();
    let mut tripped_at = None;
    for ms in 0..3_000u64 {
        match breaker.try_acquire() {
            Ok(permit) => out.push(permit),
            Err(_) => {
                tripped_at = Some(ms);
                break;
            }
        }
        clock.advance(Duration::from_millis(1));
    }
    let tripped_at = tripped_at.expect("the hung calls never tripped the breaker");
    // The window judges once it holds 100 outcomes, here 100 hung calls: the 100th call (at
    // 99 ms) is judged after 199 ms, and by 249 ms.
    assert!(
        (200..=250).contains(&tripped_at),
        "tripped after {tripped_at} ms"
    );
    let metrics = breaker.metrics();
    // Judged: every call out longer than the limit when the last sweep ran, and no other.
    assert!(
        (100..=tripped_at - 100).contains(&metrics.hung_calls),
        "{metrics:?}"
    );
    assert_eq!(metrics.slow_calls, metrics.hung_calls);
    assert_eq!(metrics.openings, 1);
    let hung = metrics.hung_calls;
    drop(out);
    let metrics = breaker.metrics();
    assert_eq!(
        metrics.released,
        tripped_at - hung,
        "every call not judged was released: {metrics:?}"
    );
}

#[test]
fn calls_of_an_earlier_generation_are_released_not_judged() {
    let (breaker, clock) = breaker();
    let old = breaker.try_acquire().unwrap();
    breaker.reset(); // a new closed generation: the old call's verdict no longer counts
    clock.advance(JUDGED_BY);
    breaker.try_acquire().unwrap().success();
    assert_eq!(counts(&breaker), (Some(1), 0, 0, 0, 1));
    old.failure();
    assert_eq!(counts(&breaker), (Some(1), 0, 0, 0, 1));
    assert_eq!(breaker.metrics().consecutive_failures, 0);
}

#[test]
fn calls_of_eight_ended_generations_make_room_for_a_new_one() {
    // Each generation's calls fill a place of their own in the thread's ring of buckets; a
    // call that finds every place taken sweeps at once, which frees the ended ones.
    let (breaker, clock) = breaker();
    let mut old = Vec::new();
    for _ in 0..8 {
        old.push(breaker.try_acquire().unwrap());
        breaker.reset();
    }
    let held = hold(&breaker, 3);
    assert_eq!(
        breaker.metrics().released,
        8,
        "the ended calls were not swept"
    );
    clock.advance(JUDGED_BY);
    assert!(
        breaker.try_acquire().is_err(),
        "the new generation's calls found no place and were not judged"
    );
    assert_eq!(breaker.metrics().hung_calls, 3);
    drop((old, held));
}

#[test]
fn a_call_can_end_on_another_thread() {
    let (breaker, clock) = breaker();
    let hung = hold(&breaker, 2);
    let ended_in_time = breaker.try_acquire().unwrap();
    std::thread::scope(|scope| {
        scope.spawn(move || ended_in_time.success());
    });
    clock.advance(JUDGED_BY);
    std::thread::scope(|scope| {
        scope.spawn(|| breaker.try_acquire().unwrap().success());
    });
    assert_eq!(counts(&breaker), (Some(2), 2, 2, 2, 0));
    std::thread::scope(|scope| {
        scope.spawn(move || hung.into_iter().for_each(Permit::success));
    });
    assert_eq!(counts(&breaker), (Some(2), 2, 2, 2, 0));
}

#[test]
fn a_new_limit_judges_the_calls_already_out_from_the_end_of_their_bucket() {
    let (breaker, clock) = breaker();
    let config = breaker.config();
    set_limit(&breaker, Some(LIMIT * 100));
    let out = breaker.try_acquire().unwrap();
    clock.advance(JUDGED_BY);
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.metrics().hung_calls,
        0,
        "judged by the limit it was issued under"
    );
    breaker.reconfigure(config).unwrap();
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.metrics().hung_calls,
        0,
        "judged before the end of its bucket"
    );
    // Its bucket (at most half the old limit wide) has ended, and the new limit passed since.
    clock.advance(LIMIT * 50 + LIMIT);
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.metrics().hung_calls,
        1,
        "not judged by the new, shorter limit"
    );
    drop(out);
}

#[test]
fn without_a_limit_nothing_is_judged_while_out() {
    let (breaker, clock) = breaker();
    let out = breaker.try_acquire().unwrap();
    set_limit(&breaker, None);
    clock.advance(JUDGED_BY * 10);
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.metrics().hung_calls, 0);
    out.success(); // its limit is gone too: a success
    assert_eq!(counts(&breaker), (Some(2), 0, 0, 0, 0));
}

#[test]
fn probes_are_left_to_the_probe_timeout() {
    let (breaker, clock) = breaker();
    breaker.open_for(Duration::from_millis(1)).unwrap();
    clock.advance(Duration::from_millis(1));
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    clock.advance(JUDGED_BY * 10);
    assert!(breaker.try_acquire().is_err(), "the probe is still out");
    assert_eq!(breaker.metrics().hung_calls, 0);
    probe.success(); // slow at its end: the probe failed
    assert_eq!(breaker.metrics().state, State::Open);
}

/// Reconfigures `breaker` with slow-call limit `limit`, the rest as it is.
fn set_limit(breaker: &Breaker<ManualClock>, limit: Option<Duration>) {
    breaker
        .reconfigure(Config {
            slow_call: limit,
            ..breaker.config()
        })
        .unwrap();
}

/// `calls` quick calls, one bucket width (of a 1 ms limit) apart.
fn calls_a_width_apart(breaker: &Breaker<ManualClock>, clock: &ManualClock, calls: usize) {
    for _ in 0..calls {
        breaker.try_acquire().unwrap().success();
        clock.advance(Duration::from_nanos(1 << 18));
    }
}

/// A breaker with a 1 ms limit (buckets 2^18 ns wide) that never trips.
fn short_limit() -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1_000)
        .slow_call(Duration::from_millis(1))
        .count_successes(true)
        .clock(clock.clone())
        .build()
        .unwrap();
    (breaker, clock)
}

/// Calls `every` apart, every `nth` of the first half kept out for good; then checks that
/// each call kept out was judged while out, and that every call is counted once.
fn traffic_with_hung_calls(
    breaker: &Breaker<ManualClock>,
    clock: &ManualClock,
    every: Duration,
    calls: u64,
    nth: u64,
) {
    let before = breaker.metrics();
    let mut kept_out = Vec::new();
    for step in 0..calls {
        let permit = breaker.try_acquire().unwrap();
        if step < calls / 2 && step % nth == nth - 1 {
            kept_out.push(permit);
        } else {
            permit.success();
        }
        clock.advance(every);
    }
    let metrics = breaker.metrics();
    assert_eq!(
        metrics.hung_calls - before.hung_calls,
        kept_out.len() as u64,
        "calls kept out but not judged: {metrics:?}"
    );
    drop(kept_out);
    let after = breaker.metrics();
    assert_eq!(after.permitted(), Some(before.permitted().unwrap() + calls));
}

#[test]
fn a_call_left_out_through_a_long_quiet_spell_is_judged_at_the_next_call() {
    // 20 minutes is more than 2^19 buckets: the bucket's number has wrapped.
    let (breaker, clock) = short_limit();
    let hung = breaker.try_acquire().unwrap();
    clock.advance(Duration::from_secs(20 * 60));
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.metrics().hung_calls, 1);
    hung.success();
    assert_eq!(breaker.metrics().successes, Some(1));
}

#[test]
fn buckets_left_from_before_a_quiet_spell_do_not_crowd_out_new_ones() {
    let (breaker, clock) = short_limit();
    calls_a_width_apart(&breaker, &clock, 6);
    clock.advance(Duration::from_secs(20 * 60));
    traffic_with_hung_calls(&breaker, &clock, Duration::from_micros(100), 20_000, 50);
}

#[test]
fn buckets_of_the_old_width_do_not_crowd_out_new_ones_after_the_limit_grows() {
    let (breaker, clock) = short_limit();
    calls_a_width_apart(&breaker, &clock, 6);
    set_limit(&breaker, Some(Duration::from_millis(8_500)));
    // A call a millisecond for 40 s: the calls kept out in the first 20 s are all due.
    traffic_with_hung_calls(&breaker, &clock, Duration::from_millis(1), 40_000, 50);
}

#[test]
fn a_call_ending_after_its_bucket_number_wrapped_counts_every_call_once() {
    const WIDTH: u64 = 1 << 18; // of a 1 ms limit
    let (breaker, clock) = short_limit();
    let judged = breaker.try_acquire().unwrap(); // bucket 0, place 0
    clock.advance(Duration::from_nanos(6 * WIDTH));
    breaker.try_acquire().unwrap().success(); // sweeps: judged hung
    assert_eq!(breaker.metrics().hung_calls, 1);
    // Place 0 reopened seven times, by buckets 8, 16, ..., 56, each swept in turn: its reuse
    // count comes round again.
    for k in 1..=7u64 {
        clock.set_nanos(k * 8 * WIDTH);
        breaker.try_acquire().unwrap().success();
        clock.set_nanos(k * 8 * WIDTH + 6 * WIDTH);
        breaker.try_acquire().unwrap().success();
    }
    // The bucket whose low bits are those of bucket 0 again, at place 0.
    clock.set_nanos((1 << 19) * WIDTH);
    let fresh = breaker.try_acquire().unwrap();
    let before = breaker.metrics();
    // Two hours later the judged call ends. It cannot tell its old bucket from the fresh one
    // in its place, which has its name: it takes that place, and the fresh call is judged
    // hung early. Each call is still counted once: the judged call is not counted again, and
    // the fresh call's own end records nothing.
    judged.success();
    let mid = breaker.metrics();
    assert_eq!(
        mid.successes, before.successes,
        "the judged call was counted again"
    );
    assert_eq!(mid.hung_calls, before.hung_calls + 1, "{mid:?}");
    fresh.success();
    let after = breaker.metrics();
    assert_eq!(after, mid, "the fresh call was counted twice");
    assert_eq!(
        after.permitted(),
        Some(after.successes.unwrap() + after.failures),
        "{after:?}"
    );
}

#[test]
fn a_call_left_out_through_sixteen_thousand_transitions_is_released_not_judged() {
    let (breaker, clock) = short_limit();
    let old = breaker.try_acquire().unwrap();
    for _ in 0..(1 << 14) {
        breaker.reset();
    }
    clock.advance(Duration::from_millis(2));
    breaker.try_acquire().unwrap().success();
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.hung_calls, metrics.released),
        (0, 1),
        "{metrics:?}"
    );
    drop(old);
}

#[test]
fn a_call_ending_after_a_hundred_thousand_limits_is_judged_hung_at_its_end() {
    // Past 2^19 - 2^17 buckets (103 s at a 1 ms limit) its end cannot trust its bucket's
    // name: it takes its bucket's place instead, which judges it, with no later call needed.
    let (breaker, clock) = short_limit();
    let out = breaker.try_acquire().unwrap();
    clock.advance(Duration::from_secs(110));
    out.failure();
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.failures, metrics.slow_calls, metrics.hung_calls),
        (1, 1, 1),
        "{metrics:?}"
    );
    assert_eq!(metrics.permitted(), Some(1));
}

#[test]
fn a_long_out_call_ending_after_the_limit_was_removed_is_judged_hung() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .slow_call(Duration::from_millis(1))
        .clock(clock.clone())
        .build()
        .unwrap();
    let out = breaker.try_acquire().unwrap();
    set_limit(&breaker, None);
    clock.advance(Duration::from_secs(110));
    out.failure();
    // Out over 100,000 of the limit it was issued under: hung, and the failure trips.
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.failures, metrics.hung_calls),
        (1, 1),
        "{metrics:?}"
    );
    assert_eq!(metrics.state, State::Open, "the failure did not count");
}

/// A sweep reads the state word, then the buckets. A reset between the two, and a call of the
/// new generation entering a bucket the sweep reads later: that bucket is of the generation
/// now current, not of an ended one, and must not be released as ended (the call's failure
/// was then lost: its end found the bucket taken).
#[test]
fn a_sweep_leaves_the_bucket_of_a_generation_that_began_after_it_read_the_state() {
    let clock = HookClock::default();
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .slow_call(Duration::from_secs(1)) // buckets 2^28 ns wide
            .open_duration(Duration::from_secs(60))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    // Generation 0: a call that hangs, in the bucket at time 0.
    let hung = breaker.try_acquire_owned().unwrap();
    assert_eq!(hung.generation(), 0);

    // Past that bucket's due time, the next call sweeps. The sweep reads the state word
    // (closed, generation 0), then the clock once for each bucket it reads: at the second
    // reading, "another thread" resets the breaker and makes a call in generation 1, whose
    // bucket (at 2 s) the sweep reads after the first one.
    clock.set(Duration::from_secs(2));
    let fresh: Arc<Mutex<Option<OwnedPermit<HookClock>>>> = Arc::default();
    {
        let (breaker, fresh) = (Arc::clone(&breaker), Arc::clone(&fresh));
        clock.arm(2, move || {
            breaker.reset();
            *fresh.lock().unwrap() = Some(breaker.try_acquire_owned().unwrap());
        });
    }
    let sweeper = breaker.try_acquire().unwrap();
    let fresh = fresh
        .lock()
        .unwrap()
        .take()
        .expect("the hook ran in the sweep");
    assert_eq!((fresh.generation(), sweeper.generation()), (1, 1));
    drop(sweeper); // released: counts nothing
    let released_before = breaker.metrics().released;

    // The call of generation 1 fails, in time, while generation 1 is current.
    fresh.failure();
    let metrics = breaker.metrics();
    assert_eq!(metrics.state, State::Open, "{metrics:?}");
    assert_eq!(metrics.released, released_before, "{metrics:?}");
    drop(hung);
}
