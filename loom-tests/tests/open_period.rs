//! Ending an open period early (`end_open_period`, and the follower's `end_opening` of one
//! generation) racing the calls and the transitions that move the breaker on.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{Events, OPEN, Role, check_each_order, failing_prober, small, spawn_in};
use hotbreaker::testing::{self, assert_one_chain};
use hotbreaker::{Breaker, ManualClock, State, Trigger};
use loom::sync::Arc;

/// Asserts that a call made now is rejected by an open period that runs for all of `OPEN`
/// from now: the opening that was just made is intact, neither ended nor shortened.
fn assert_fresh_period(breaker: &Breaker<ManualClock>, what: &str) {
    match breaker.try_acquire() {
        Ok(permit) => panic!("{what}: a call got {permit:?} while the new period runs"),
        Err(rejected) => {
            assert_eq!(rejected.state(), State::Open, "{what}");
            assert_eq!(
                rejected.retry_after(),
                Some(OPEN),
                "{what}: the new period was moved"
            );
        }
    }
}

/// The role of a follower that ends the opening of `generation` it applied, whatever the
/// breaker did since; returns what `end_opening` did.
fn follower_ending(breaker: &Arc<Breaker<ManualClock>>, generation: u32) -> Role<bool> {
    let breaker = breaker.clone();
    Box::new(move || testing::end_opening(&breaker, generation))
}

/// A follower ends the opening of generation 1 while the breaker moves on from it: the
/// period runs out (or the follower ends it), a call probes, and the probe fails, opening
/// generation 3 with a period of its own.
///
/// Thread A is the follower: `end_opening(1)`. Thread B calls at the time of the trip; if it
/// is rejected (A has not ended the period yet), it moves the clock to the end of the period
/// and calls again. Either call is the probe, and it fails. The clock moves inside B so that
/// A may read it before (period 1 running: A goes on to the compare-and-swap, which is the
/// race) or after (period over: A stops at its first check); moved before the threads start,
/// A would never get past that first check.
///
/// Checks that the chain is Closed -> Open -> HalfOpen -> Open, that the last opening's
/// period is intact (a call now is rejected with all of `OPEN` left), and that a probe at
/// the time of the trip means A returned true (nothing else ends period 1 early).
///
/// Catches: an `end_opening` that ends whatever opening is current rather than the one it
/// was given, and a `reschedule` that moves the deadline word without checking that it (tag)
/// and the state word (`still_open`) are still generation 1's: the stale follower's write
/// ends generation 3's period, and the next call probes at once instead of being rejected.
#[test]
fn a_stale_end_leaves_a_later_opening_alone() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        breaker.try_acquire().expect("closed").failure();
        let mut tripped = events.take();
        assert_eq!(assert_one_chain(&mut tripped), State::Open);
        let generation = tripped[0].generation;

        let follower = follower_ending(&breaker, generation);
        let caller: Role<bool> = {
            let breaker = breaker.clone();
            let clock = clock.clone();
            Box::new(move || {
                let (probe, at_once) = match breaker.try_acquire() {
                    Ok(probe) => (probe, true),
                    Err(rejected) => {
                        assert_eq!(rejected.state(), State::Open);
                        clock.advance(OPEN);
                        let probe = breaker
                            .try_acquire()
                            .expect("the period of the trip is over: a probe");
                        (probe, false)
                    }
                };
                assert!(probe.is_probe(), "{probe:?}");
                assert_eq!(probe.generation(), generation + 1);
                probe.failure();
                at_once
            })
        };
        let [ended, probed_at_once] = spawn_in(order, vec![follower, caller])[..] else {
            unreachable!("two roles")
        };

        let mut events = events.take();
        events.extend(tripped);
        assert_eq!(assert_one_chain(&mut events), State::Open, "{events:?}");
        assert_eq!(events.len(), 3, "trip, probe, reopening: {events:?}");
        assert_eq!(events[2].trigger, Trigger::ProbeFailed, "{events:?}");
        assert_fresh_period(
            &breaker,
            &format!("follower ended: {ended}, probed at once: {probed_at_once}"),
        );
        if probed_at_once {
            assert!(ended, "only the follower ends period 1 before its time");
        }
        let metrics = breaker.metrics();
        assert_eq!((metrics.openings, metrics.half_openings), (2, 1));
    });
}

/// The same stale follower, with the breaker moved on by hand: B resets the breaker and a
/// failure trips it again (generation 3, a new period from the same instant), while A ends
/// generation 1's opening. The clock never moves, so period 1 runs throughout and A always
/// reaches the compare-and-swap: the race is between A's reads of the deadline and state
/// words and B's reset, publish and opening.
///
/// Checks the chain (Closed -> Open -> Closed -> Open) and that generation 3's period is
/// intact after both threads.
///
/// Catches: what `a_stale_end_leaves_a_later_opening_alone` catches, without depending on
/// the clock: an `end_opening` that ends the current opening, and a `reschedule` that writes
/// over another generation's deadline (no tag check and no `still_open`).
#[test]
fn a_stale_end_survives_a_reset_and_a_new_trip() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        breaker.try_acquire().expect("closed").failure();
        let generation = 1;
        assert_eq!(breaker.state(), State::Open);

        let follower = follower_ending(&breaker, generation);
        let resetter: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || {
                breaker.reset();
                breaker
                    .try_acquire()
                    .expect("closed by the reset")
                    .failure();
                true
            })
        };
        let [ended, _] = spawn_in(order, vec![follower, resetter])[..] else {
            unreachable!("two roles")
        };

        let mut events = events.take();
        assert_eq!(assert_one_chain(&mut events), State::Open, "{events:?}");
        assert_eq!(events.len(), 3, "trip, reset, trip: {events:?}");
        assert_fresh_period(&breaker, &format!("follower ended: {ended}"));
    });
}

/// `end_open_period` races a call made during the open period (the clock does not move).
///
/// Thread A ends the period; thread B calls once and keeps what it gets: rejected with all of
/// the period left (it ran before the end), or the probe (after). Then one more call.
///
/// Checks that A ends the period (nothing else can move an open breaker whose period runs),
/// that B's probe is the one probe of generation 2, that the further call is a probe when B's
/// is not out and is turned away by half-open (not by the open period) when it is, and that
/// the transitions chain.
///
/// Catches: an `end_open_period` that returns true but leaves the period running (moves the
/// end later than now, or not at all: the further call is rejected as open), one that ends
/// the period only for the caller that sees it first, and a probe admitted twice.
#[test]
fn end_open_period_races_a_call() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        breaker.try_acquire().expect("closed").failure();
        assert_eq!(breaker.state(), State::Open);

        let ender: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.end_open_period())
        };
        // A probe is never ended (forgotten): it is still out when the further call asks.
        let caller: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(probe) => {
                    assert!(probe.is_probe(), "{probe:?}");
                    assert_eq!(probe.generation(), 2);
                    std::mem::forget(probe);
                    true
                }
                Err(rejected) => {
                    assert_eq!(rejected.state(), State::Open);
                    assert_eq!(rejected.retry_after(), Some(OPEN), "before the end");
                    false
                }
            })
        };
        let [ended, probing] = spawn_in(order, vec![ender, caller])[..] else {
            unreachable!("two roles")
        };
        assert!(ended, "open, its period running: only this call can end it");

        match (breaker.try_acquire(), probing) {
            (Ok(permit), false) => {
                assert!(permit.is_probe(), "{permit:?}");
                std::mem::forget(permit);
            }
            (Err(rejected), true) => assert_eq!(
                rejected.state(),
                State::HalfOpen,
                "B's probe is out: half-open turns the call away"
            ),
            (Ok(permit), true) => panic!("a second probe, {permit:?}, beside B's"),
            (Err(rejected), false) => {
                panic!("period ended, no probe out, yet rejected: {rejected:?}")
            }
        }

        let mut events = events.take();
        assert_eq!(assert_one_chain(&mut events), State::HalfOpen, "{events:?}");
        assert_eq!(events.len(), 2, "trip, half-opening: {events:?}");
        assert_eq!(events[1].trigger, Trigger::OpenPeriodEnded, "{events:?}");
        assert_eq!(breaker.metrics().half_openings, 1);
    });
}

/// A breaker half-open after one failure, and two openers for it: a thread that takes a probe
/// and fails it (an open period of `OPEN`; it says whether it got the probe), and one that
/// calls `open_for(3 x OPEN)` (it says whether it opened the breaker).
fn a_failing_probe_and_an_opening_from_outside()
-> (Arc<Breaker<ManualClock>>, Role<bool>, Role<bool>) {
    let (breaker, clock) = small(|b| b.consecutive_failures(1));
    breaker.try_acquire().expect("closed").failure();
    clock.advance(OPEN);
    let prober = failing_prober(&breaker, &clock, Duration::ZERO);
    let outside: Role<bool> = {
        let breaker = breaker.clone();
        Box::new(move || breaker.open_for(OPEN * 3).expect("a valid period"))
    };
    (breaker, prober, outside)
}

/// A failing probe and an opening from outside (`open_for`) race to open the breaker from the
/// same half-open period, with periods of different lengths: the opening that wins the
/// state's compare-and-swap is the one whose period holds.
///
/// Thread A takes a probe and fails it (a period of `OPEN`). Thread B calls
/// `open_for(3 x OPEN)`. The clock does not move while they run.
///
/// Checks, once both are done, that a call is rejected with B's period left when B says it
/// opened the breaker, and with A's otherwise.
///
/// Catches: the period of whichever opener wrote the deadline first (the first write for a
/// generation stays), when the other won the compare-and-swap: B's opening then rejects
/// for `OPEN`, or A's for 3 x `OPEN`.
#[test]
fn the_opening_that_wins_keeps_its_own_period() {
    check_each_order(2, 2, |order| {
        let (breaker, prober, outside) = a_failing_probe_and_an_opening_from_outside();
        let done = spawn_in(order, vec![prober, outside]);
        let expected = if done[1] { OPEN * 3 } else { OPEN };
        let rejected = breaker.try_acquire().expect_err("open");
        assert_eq!(
            rejected.retry_after(),
            Some(expected),
            "outside opened: {}, probed: {}",
            done[1],
            done[0]
        );
    });
}

/// A failing probe and an opening from outside race to open the breaker from the same
/// half-open period, as in `the_opening_that_wins_keeps_its_own_period`, while a third
/// thread ends whatever open period is current (`end_open_period`).
///
/// Thread A takes a probe and fails it (a period of `OPEN`). Thread B calls
/// `open_for(3 x OPEN)`. Thread C calls `end_open_period`. The clock does not move while they
/// run.
///
/// Checks, once all are done, that when C says it ended a period and no opening came after
/// that end (two openings in all: the trip and the one A's failure and B raced for), the
/// period is over: the breaker reads half-open, and a call is admitted as a probe.
///
/// Catches: a winning opener that puts its own deadline in place of a racing opener's with a
/// plain store rather than a compare-and-swap from the deadline it loaded (`take_over`): A's
/// failure writes the deadline first, B wins the state's swap, C moves that deadline to now,
/// and B's store then brings back a period of 3 x `OPEN`, so the period C ended runs again.
/// The end is a thread of its own: A, its swap lost, yields to B (`Backoff` under loom), and
/// so never runs between B's swap and B's take-over.
#[test]
fn a_period_ended_before_the_winner_takes_over_stays_ended() {
    check_each_order(2, 3, |order| {
        let (breaker, prober, outside) = a_failing_probe_and_an_opening_from_outside();
        let ender: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.end_open_period())
        };
        let [probed, opened, ended] = spawn_in(order, vec![prober, outside, ender])[..] else {
            unreachable!("three roles")
        };
        if ended && breaker.metrics().openings == 2 {
            assert_eq!(
                breaker.state(),
                State::HalfOpen,
                "C ended the last opening (probed: {probed}, outside opened: {opened})"
            );
            let probe = breaker.try_acquire().expect("the period is over: a probe");
            assert!(probe.is_probe(), "{probe:?}");
            std::mem::forget(probe);
        }
    });
}
