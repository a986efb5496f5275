//! Calls that hang: a sweep at a later call judges a timed closed call out longer than the
//! slow-call limit, racing the call's own end and other calls' entries.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{Role, check_each_order, small, spawn_in};
use hotbreaker::{Breaker, ManualClock, State};
use loom::sync::Arc;

/// The slow-call limit of these models; they move the clock by multiples of it.
const LIMIT: Duration = Duration::from_millis(10);
/// Out this long, a call is due for judgement: its bucket (at most half the limit wide) has
/// ended and the limit has passed since.
const DUE: Duration = Duration::from_millis(16);

/// Thread A makes a call, lets it hang past its due time (moves the clock), and then ends it
/// with a success (slow, by now); thread B makes a call at any point of that, and its admission
/// sweeps if A's call is due by then. Either the end takes the call out of its bucket first and
/// counts it as a slow success, or the sweep takes it first and judges it hung, and the end
/// records nothing.
///
/// Checks that each call is counted exactly once, and A's as a slow call, whichever comes
/// first.
///
/// Catches: a sweep that reads a bucket's count and then writes the bucket taken with a plain
/// store rather than a compare-and-swap from what it read (tried: the end and the sweep both
/// counted the call, two failures).
#[test]
fn a_hung_call_is_counted_once_by_its_end_or_by_a_sweep() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| {
            b.consecutive_failures(5)
                .slow_call(LIMIT)
                .count_successes(true)
        });
        let hanger: Role<()> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let permit = breaker.try_acquire().unwrap();
                clock.advance(DUE);
                permit.success();
            })
        };
        let caller: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.try_acquire().unwrap().success())
        };
        spawn_in(order, vec![hanger, caller]);

        // B's call is slow too if A moved the clock while it was out.
        let metrics = breaker.metrics();
        assert_eq!(
            metrics.successes.unwrap() + metrics.failures,
            2,
            "a call counted twice or not at all: {metrics:?}"
        );
        assert_eq!(metrics.failures, metrics.slow_calls, "{metrics:?}");
        assert!(metrics.failures >= 1, "A's call was not slow: {metrics:?}");
        assert!(metrics.hung_calls <= 1, "{metrics:?}");
    });
}

/// A call is out past its due time. Thread A makes a call and keeps it out: it opens a new
/// bucket and lowers the breaker's due time to that bucket's. Thread B makes a call at the
/// same moment, whose admission sweeps: it judges the first call and leaves the due time of
/// the buckets it saw. Then, once A's call is due as well, one more call sweeps.
///
/// Checks that A's call is judged by that last sweep: the due time that B's sweep leaves, and
/// A's lowering of it, never hide A's bucket.
///
/// The breaker has one stripe, which the main thread owns, so that A and B share the common
/// stripe: B's own call, entered after its sweep at the same time as A's, then joins A's
/// bucket instead of opening one of its own with the same due time, whose lowering would
/// hide a due time lost by the sweep. (With a stripe each, the model missed the first bug
/// below at every bound tried, up to four preemptions.)
///
/// Catches:
/// - a sweep that stores the due time it computed instead of lowering the stored one to it
///   (`fetch_min`): A enters after B read the common stripe and lowers the due time before B
///   stores it (tried: one hung call, the kept call never judged);
/// - an entry that opens a bucket without lowering the due time (tried: the first call was
///   never judged).
///
/// Does not catch a claim or a lowering with relaxed ordering (tried, both at once, up to four
/// preemptions: 44,679 executions): no sweep here claims a due time that A or B lowered. Each
/// lowers it only after its own admission found it claimed (or claimed it), and every sweep
/// leaves a due time past the threads' clock, so the one claim that A and B can make reads the
/// main thread's lowering, which the spawn already orders before them.
/// `a_bucket_opened_before_a_claim_is_seen_by_its_sweep` catches both. The argument for the
/// orderings is written at `sweep_calls_out`.
#[test]
fn a_bucket_opened_during_a_sweep_is_swept_when_due() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(5).slow_call(LIMIT).stripes(1));
        std::mem::forget(breaker.try_acquire().unwrap());
        clock.advance(DUE);

        let keeper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || std::mem::forget(breaker.try_acquire().unwrap()))
        };
        let caller: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.try_acquire().unwrap().success())
        };
        spawn_in(order, vec![keeper, caller]);
        assert_eq!(
            breaker.metrics().hung_calls,
            1,
            "the first call was not judged"
        );

        clock.advance(DUE);
        breaker.try_acquire().unwrap().success();
        let metrics = breaker.metrics();
        assert_eq!(
            metrics.hung_calls, 2,
            "the kept call was never judged: {metrics:?}"
        );
    });
}

/// Thread A makes a call at time zero and keeps it out: it opens a bucket and lowers the
/// breaker's due time to that bucket's. Thread B moves the clock past that due time and makes
/// a call, whose admission sweeps if the due time it finds is lowered: the claim then reads
/// A's lowering. Then one more call, at the same time, sweeps if the due time says so.
///
/// Checks that A's call, if issued at time zero (A reads the clock after its call), is judged
/// hung by B's sweep or by the last call's: a sweep that claims the due time A lowered sees
/// A's bucket; if B does not claim it, the due time still calls the last call to sweep.
///
/// Only the due time orders A's entry before B's sweep. B moves the clock itself: a
/// read-modify-write that reads the main thread's time, not A's, so B's readings of the clock
/// do not synchronize with A. (When A moved the clock after its call instead, B's sweep, which
/// must read the new time to find A's bucket due, synchronized with A through the clock and
/// saw the entry whatever the due time's orderings: tried, both relaxed, 179 executions, no
/// failure.) A and B take a slot and a stripe each, and claiming a slot releases nothing. B's
/// own call opens a bucket due after the last call, so its lowering cannot make up for A's
/// bucket missed by B's sweep.
///
/// Catches, each alone and both together, with no preemption needed:
/// - a claim whose success ordering is relaxed: B's sweep reads A's place in the ring as
///   still free, leaves the due time at `u64::MAX`, and B's call then lowers it to a time
///   after the last call (tried: the kept call was never judged, 0 hung calls);
/// - an entry that lowers the due time with relaxed ordering (tried: the same).
///
/// Passes with the weakest orderings the argument at `sweep_calls_out` needs: an acquire
/// claim and a release lowering.
#[test]
fn a_bucket_opened_before_a_claim_is_seen_by_its_sweep() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(5).slow_call(LIMIT));

        let keeper: Role<Duration> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                std::mem::forget(breaker.try_acquire().unwrap());
                // Zero: the call read zero too, before this.
                clock.elapsed()
            })
        };
        let sweeper: Role<Duration> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                clock.advance(DUE);
                breaker.try_acquire().unwrap().success();
                DUE
            })
        };
        let kept_at = spawn_in(order, vec![keeper, sweeper])[0];

        breaker.try_acquire().unwrap().success();
        let metrics = breaker.metrics();
        if kept_at.is_zero() {
            assert_eq!(
                metrics.hung_calls, 1,
                "the kept call was never judged: {metrics:?}"
            );
        } else {
            // Issued at zero or at B's time, when it is not due yet.
            assert!(metrics.hung_calls <= 1, "{metrics:?}");
        }
    });
}

/// A call is out past its due time. Thread A makes a call, whose admission sweeps and judges
/// the hung call (a hung call, a slow call and a failure); thread B takes a metrics snapshot
/// meanwhile.
///
/// Checks that a snapshot never shows more hung calls than slow calls, nor more slow calls
/// than failures (each a part of the next, as the metrics document), for calls judged by a
/// sweep as for those judged at their end
/// (`a_snapshot_never_shows_more_slow_calls_than_failures`).
///
/// Catches: the sweep adding to the hung count with relaxed ordering, or `metrics` reading it
/// after the stripes (tried, both: a snapshot with 1 hung call and 0 slow calls); and the
/// sweep adding the hung calls to the slow calls with relaxed ordering (`count_hung_calls`;
/// tried: a snapshot with 1 slow call and 0 failures, the failure's count read stale).
#[test]
fn a_snapshot_during_a_sweep_never_shows_a_part_above_its_whole() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(5).slow_call(LIMIT));
        std::mem::forget(breaker.try_acquire().unwrap());
        clock.advance(DUE);

        let sweeper: Role<(u64, u64, u64)> = {
            let breaker = breaker.clone();
            Box::new(move || {
                breaker.try_acquire().unwrap().success();
                (0, 0, 0)
            })
        };
        let reader: Role<(u64, u64, u64)> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let metrics = breaker.metrics();
                (metrics.hung_calls, metrics.slow_calls, metrics.failures)
            })
        };
        let results = spawn_in(order, vec![sweeper, reader]);
        let (hung, slow, failures) = results[1];
        assert!(
            hung <= slow,
            "a snapshot with {hung} hung and {slow} slow calls"
        );
        assert!(
            slow <= failures,
            "a snapshot with {slow} slow calls and {failures} failures"
        );
    });
}

/// Thread A makes a timed call and ends it with a success after the slow-call limit (it moves
/// the clock while the call is out): a slow call, counted as a failure. Thread B takes a
/// metrics snapshot meanwhile.
///
/// Checks that a snapshot never shows more slow calls than failures (slow calls are a part of
/// the failures, as the metrics document).
///
/// Catches: the verdict counting the slow call before the failure, or `metrics` reading the
/// failures before the slow calls (tried, each: a snapshot with 1 slow call and 0 failures);
/// and the slow call's count added with relaxed ordering, or read so (tried, each: the same
/// snapshot, the failure's count read stale).
#[test]
fn a_snapshot_never_shows_more_slow_calls_than_failures() {
    a_slow_call_beside_a_snapshot(None);
}

/// Thread A makes a call that ends past the limit while thread B takes a metrics snapshot,
/// on a breaker of the default stripes, or of `stripes` stripes the first of which the main
/// thread takes. No snapshot shows more slow calls than failures, and both count the call at
/// the end.
fn a_slow_call_beside_a_snapshot(stripes: Option<usize>) {
    check_each_order(2, 2, move |order| {
        let (breaker, clock) = small(move |b| {
            let b = b.consecutive_failures(5).slow_call(LIMIT);
            match stripes {
                Some(stripes) => b.stripes(stripes),
                None => b,
            }
        });
        if stripes.is_some() {
            let _ = breaker.config(); // the main thread takes the first stripe
        }
        let slow: Role<(u64, u64)> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let permit = breaker.try_acquire().unwrap();
                clock.advance(DUE);
                permit.success();
                (0, 0)
            })
        };
        let reader: Role<(u64, u64)> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let metrics = breaker.metrics();
                (metrics.slow_calls, metrics.failures)
            })
        };
        let results = spawn_in(order, vec![slow, reader]);
        let (slow, failures) = results[1];
        assert!(
            slow <= failures,
            "a snapshot with {slow} slow calls and {failures} failures"
        );
        let metrics = breaker.metrics();
        assert_eq!(
            (metrics.slow_calls, metrics.failures),
            (1, 1),
            "{metrics:?}"
        );
    });
}

/// A call of the first closed generation is out past its due time. Thread A makes a call,
/// whose admission sweeps; thread B resets the breaker and then makes a call that fails. A's
/// sweep may read the state word before the reset and B's bucket after B entered it.
///
/// Checks that B's failure counts whenever B's call belongs to the final generation: the
/// breaker ends closed with a run of one.
///
/// Catches: a sweep that takes every bucket of a generation other than the one it read as
/// ended (tried: B's bucket is released under it, and B's end finds it taken and records
/// nothing, a run of 0). The same check without the release on entering or the acquire on
/// the sweep's read of a bucket is caught by the next model, not this one: here the hung
/// call's record in the window synchronizes the sweep with B's reset first.
#[test]
fn a_sweep_leaves_the_bucket_of_a_generation_begun_since_it_read_the_state() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(2).slow_call(LIMIT));
        std::mem::forget(breaker.try_acquire().unwrap()); // out, in generation 0
        a_sweep_races_a_reset_and_a_failure(order, &breaker, &clock);
    });
}

/// With a call of generation 0 hung in `breaker`: thread A's call sweeps it (the clock is
/// moved past its limit first), while thread B resets the breaker and fails a call of
/// generation 1. Checks that B's failure counts, a run of one, and the breaker stays closed.
fn a_sweep_races_a_reset_and_a_failure(
    order: &[usize],
    breaker: &Arc<Breaker<ManualClock>>,
    clock: &ManualClock,
) {
    clock.advance(DUE);
    let sweeper: Role<Option<u32>> = {
        let breaker = breaker.clone();
        Box::new(move || {
            drop(breaker.try_acquire());
            None
        })
    };
    let resetter: Role<Option<u32>> = {
        let breaker = breaker.clone();
        Box::new(move || {
            breaker.reset();
            let permit = breaker.try_acquire().unwrap();
            let generation = permit.generation();
            // The call is out: let the other thread run here without spending one of the
            // model's preemptions on it (the race needs three otherwise).
            loom::thread::yield_now();
            permit.failure();
            Some(generation)
        })
    };
    let generation = spawn_in(order, vec![sweeper, resetter])[1];
    let metrics = breaker.metrics();
    assert_eq!(metrics.state, State::Closed, "{metrics:?}");
    assert_eq!(generation, Some(1));
    assert_eq!(metrics.consecutive_failures, 1, "{metrics:?}");
}

/// `a_sweep_leaves_the_bucket_of_a_generation_begun_since_it_read_the_state` with the hung
/// call and B's call in one stripe: the breaker has one stripe, which the main thread owns,
/// and the hung call is issued by a thread without one, as A and B are: all three share the
/// shared stripe. A's sweep then reads B's bucket before it records the hung call it took in
/// the window; in the model above, the hung call sat in the main thread's stripe, swept and
/// recorded first, and that record synchronized A with B's reset through the window word,
/// which hid the bug below.
///
/// Checks the same: B's failure counts, a run of one.
///
/// Catches: an entry whose compare-and-swap opening the bucket is relaxed (tried: alone, and
/// with the joining one; the joining one alone would need a second call of generation 1), or
/// a sweep whose read of a bucket is (tried: the load and the failed swap's reload): A reads B's bucket of generation 1, its second read of the state word still finds
/// generation 0, and it takes the bucket as one of an ended generation; B's end finds it
/// taken and records nothing, a run of 0.
#[test]
fn a_sweep_leaves_a_later_generations_bucket_in_the_stripe_it_judges() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.stripes(1).consecutive_failures(2).slow_call(LIMIT));
        // The main thread takes the one owned stripe (an empty bucket, freed by the sweep).
        breaker.try_acquire().unwrap().ignore();
        {
            let breaker = breaker.clone();
            loom::thread::spawn(move || {
                std::mem::forget(breaker.try_acquire().unwrap()); // out, in generation 0
            })
            .join()
            .unwrap();
        }
        a_sweep_races_a_reset_and_a_failure(order, &breaker, &clock);
    });
}

/// Thread A makes a timed call, lets it hang past its due time (moves the clock), and then
/// drops its permit without a verdict; thread B makes a call at any point of that, and its
/// admission sweeps if A's call is due by then. Either the drop takes the call out of its
/// bucket first and counts it as released, or the sweep takes it first and judges it hung,
/// and the drop counts nothing.
///
/// Checks that A's call is counted exactly once, as released or as hung.
///
/// Catches: a dropped permit that gives its admission back without leaving the calls out
/// (`Breaker::release` skipping `leave_calls_out`; tried: the call is counted as released
/// and then swept as hung, a failure of a call that never ended).
#[test]
fn a_dropped_call_is_counted_once_by_its_drop_or_by_a_sweep() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(5).slow_call(LIMIT));
        let dropper: Role<()> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let permit = breaker.try_acquire().unwrap();
                clock.advance(DUE);
                drop(permit);
            })
        };
        let sweeper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.try_acquire().unwrap().ignore())
        };
        spawn_in(order, vec![dropper, sweeper]);
        let metrics = breaker.metrics();
        assert_eq!(
            metrics.released + metrics.hung_calls,
            1,
            "A's call counted once: {metrics:?}"
        );
    });
}

/// [`a_snapshot_never_shows_more_slow_calls_than_failures`] with one stripe, which the main
/// thread takes first: thread A's slow call is counted in the shared stripe, with atomic
/// read-modify-writes, while thread B takes a metrics snapshot.
///
/// Checks that a snapshot never shows more slow calls than failures on the shared stripe too.
///
/// Catches: the shared stripe's add dropping the ordering `add_after` asks for (tried:
/// `fetch_add(amount, Relaxed)` in `add_ordered`'s shared arm; a snapshot with 1 slow call
/// and 0 failures, the failure's count read stale). The owned-stripe models above do not
/// reach that arm.
#[test]
fn a_snapshot_never_shows_more_slow_calls_than_failures_on_the_shared_stripe() {
    a_slow_call_beside_a_snapshot(Some(1));
}
