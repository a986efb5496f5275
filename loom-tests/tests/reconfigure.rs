//! Reconfiguration racing the calls.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{Events, OPEN, Role, check_each_order, small, spawn_in, trip_and_wait};
use hotbreaker::{Breaker, Config, ManualClock, State};
use loom::sync::Arc;

/// A reconfiguration that turns success counting on races a probe (its admission, which makes
/// the breaker half-open, and its success, which closes it).
///
/// Counting is a bit in the state word that reconfiguration sets with a compare-and-swap
/// keeping everything else, while the probe's verdict closes the breaker with another. Checks
/// that neither is lost: the breaker ends closed in the generation after the probe's (one
/// closing, announced once), and counts successes from then on.
///
/// Catches: setting the bit with a plain store of a word read earlier (the closing is undone:
/// the breaker stays half-open with its probe gone, or the generation goes back), and a
/// transition that rebuilds the word without the bit (counting silently switched off again).
#[test]
fn switching_counting_on_races_a_closing_probe() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        breaker.try_acquire().unwrap().failure();
        clock.advance(OPEN);
        let prober: Role<u32> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let probe = breaker.try_acquire().expect("the open period is over");
                let generation = probe.generation();
                probe.success();
                generation
            })
        };
        let reconfigurer: Role<u32> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let config = Config {
                    count_successes: true,
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
                0
            })
        };
        let probe_generation = spawn_in(order, vec![prober, reconfigurer])[0];

        let metrics = breaker.metrics();
        assert_eq!(metrics.state, State::Closed, "{metrics:?}");
        assert_eq!(metrics.closings, 1);
        let closings: Vec<_> = events
            .take()
            .into_iter()
            .filter(|e| e.to == State::Closed)
            .collect();
        assert_eq!(closings.len(), 1, "{closings:?}");
        assert_eq!(closings[0].generation, probe_generation + 1);
        // Counting is on: the next success is counted.
        let before = metrics.successes.expect("counting is on");
        breaker.try_acquire().unwrap().success();
        assert_eq!(breaker.metrics().successes, Some(before + 1));
    });
}

/// A reconfiguration that sets a slow-call limit races a call that takes longer than it.
///
/// The limit is a number the breaker keeps beside the state word, and timing a bit in the
/// state word: the reconfiguration stores the limit, then sets the bit with a
/// compare-and-swap. A call admitted under the bit is timed (its permit says so), and its
/// success, recorded after the clock moved past the limit, must then count as a slow call and
/// trip the breaker (a run rule of one); a call admitted before the bit is not timed and its
/// success stays a success. Either way, timing is on for every call after both are done.
///
/// Catches: the bit set before the limit is stored (a timed call judged by the old, absent
/// limit: a success that should have been slow), and a transition that rebuilds the word
/// without the bit (the call after the trip's probe not timed).
#[test]
fn switching_slow_calls_on_races_a_slow_call() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1));
        let caller: Role<bool> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let permit = breaker.try_acquire().expect("closed");
                let timed = format!("{permit:?}").contains("timed: true");
                clock.advance(Duration::from_nanos(2));
                permit.success();
                timed
            })
        };
        let reconfigurer: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let config = Config {
                    slow_call: Some(Duration::from_nanos(1)),
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
                false
            })
        };
        let timed = spawn_in(order, vec![caller, reconfigurer])[0];

        let metrics = breaker.metrics();
        assert_eq!(metrics.slow_calls, u64::from(timed), "{metrics:?}");
        let expected = if timed { State::Open } else { State::Closed };
        assert_eq!(metrics.state, expected, "{metrics:?}");
        if timed {
            // The open deadline is kept in whole microseconds, rounded up.
            clock.advance(OPEN + Duration::from_micros(1));
            let probe = breaker.try_acquire().expect("the open period is over");
            assert!(format!("{probe:?}").contains("timed: true"), "{probe:?}");
            probe.success();
        }
        let next = breaker.try_acquire().expect("closed");
        assert!(format!("{next:?}").contains("timed: true"), "{next:?}");
    });
}

/// A failure races a reconfiguration that lengthens the run rule from 3 to 5, after two
/// failures.
///
/// The window judges a full window by its own copy of the rules, one word that the
/// reconfiguration stores after the settings. Checks that the racing failure (the third of
/// the run) judges by one of the two rules: it trips the breaker only if it read the old
/// length, and if it did not, the copy is the new one from then on, so a fourth failure does
/// not trip either and a fifth does.
///
/// Catches: a reconfiguration that does not update the window's copy (the fourth failure
/// trips by the old rule, or the third's judgement is not the old rule's either way).
#[test]
fn a_failure_races_a_longer_run_rule() {
    check_each_order(2, 2, |order| {
        // Built for runs of up to 8 (the ring of failure records is sized then), then set to 3.
        let (breaker, _clock) = small(|b| b.consecutive_failures(8));
        let three = Config {
            consecutive_failures: Some(3),
            ..breaker.config()
        };
        breaker.reconfigure(three).unwrap();
        for _ in 0..2 {
            breaker.try_acquire().unwrap().failure();
        }
        let failer: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let permit = breaker
                    .try_acquire()
                    .expect("closed: two failures of three");
                permit.failure();
                breaker.state() == State::Open
            })
        };
        let reconfigurer: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let config = Config {
                    consecutive_failures: Some(5),
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
                false
            })
        };
        let tripped = spawn_in(order, vec![failer, reconfigurer])[0];
        if tripped {
            assert_eq!(breaker.metrics().openings, 1);
            return;
        }
        // The third failure read the new rule; so does every failure from now on.
        breaker.try_acquire().unwrap().failure();
        assert_eq!(
            breaker.state(),
            State::Closed,
            "four failures of a run of five"
        );
        breaker.try_acquire().unwrap().failure();
        assert_eq!(
            breaker.state(),
            State::Open,
            "five failures of a run of five"
        );
    });
}

/// Two reconfigurations race: one sets a run rule of 3, the other of 5.
///
/// Each stores its settings and then the window's copy of the rules; the copy is stored
/// again until the settings it was taken from are still the stored ones. Checks that the
/// window ends up judging by the settings that ended up stored: the breaker trips at exactly
/// the run its configuration names.
///
/// Catches: a reconfiguration that copies its own settings into the window once (the copy of
/// the first to store can land last, and the breaker then trips at the other run), and one
/// without the fence between its copy and its second load (that load may miss the other's
/// settings; loom explores this because it models SeqCst fences, while it treats SeqCst loads
/// and stores as acquire and release).
#[test]
fn racing_reconfigurations_leave_the_stored_rules() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(8));
        let setter = |run: usize| -> Role<()> {
            let breaker = breaker.clone();
            Box::new(move || {
                let config = Config {
                    consecutive_failures: Some(run),
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
            })
        };
        spawn_in(order, vec![setter(3), setter(5)]);
        let run = breaker.config().consecutive_failures.expect("a run rule");
        for failure in 1..=run {
            assert_eq!(
                breaker.state(),
                State::Closed,
                "after {} of {run}",
                failure - 1
            );
            breaker.try_acquire().unwrap().failure();
        }
        assert_eq!(
            breaker.state(),
            State::Open,
            "{run} failures of a run of {run}"
        );
    });
}

/// A thread that switches success counting on and then off again: a bit of the state word
/// flipped and flipped back, with no transition.
fn counting_on_and_off(breaker: &Arc<Breaker<ManualClock>>) -> Role<()> {
    let breaker = breaker.clone();
    Box::new(move || {
        let plain = breaker.config();
        let counting = Config {
            count_successes: true,
            ..plain
        };
        breaker.reconfigure(counting).expect("valid");
        breaker.reconfigure(plain).expect("valid");
    })
}

/// Counting switched on and off again while a failure trips the breaker: the opening gets its
/// deadline whatever the state word went through.
///
/// Thread A fails a call (one failure trips). Thread B reconfigures twice: success counting
/// on, then off, which flips a bit of the state word and flips it back without a transition.
///
/// Checks that the breaker is open afterwards, and that a call is rejected with all of
/// `OPEN` left (the clock does not move).
///
/// Catches: an opener that writes its deadline only while the state word is exactly the word
/// it read: with B's first flip between its read and its write, it skips the write, and with
/// B's second flip before its compare-and-swap the swap succeeds anyway: open with no
/// deadline of its generation, which reads as a period already over (the next call probes).
#[test]
fn a_trip_keeps_its_deadline_across_flips_of_the_counting_bit() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(1));
        let tripper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.try_acquire().expect("closed").failure())
        };
        let flipper = counting_on_and_off(&breaker);
        spawn_in(order, vec![tripper, flipper]);
        assert_eq!(breaker.state(), State::Open);
        let rejected = breaker.try_acquire().expect_err("open for all of OPEN");
        assert_eq!(rejected.retry_after(), Some(OPEN));
    });
}

/// Counting switched on and off again while a probe is admitted: the probe's admission time
/// is recorded whatever the state word went through, so the probe timeout still applies.
///
/// The breaker has a probe timeout of `OPEN` and its open period is over. Thread A takes the
/// probe and keeps it out. Thread B reconfigures twice: success counting on, then off, which
/// flips a bit of the state word and flips it back without a transition.
///
/// Checks that once the probe has been out for twice the timeout, the next call finds it
/// timed out: the breaker opens again and rejects the call as open.
///
/// Catches: a probe's admission that records its time only while the state word is exactly
/// the word it read: with B's first flip between its read and its check, it skips the
/// record, and with B's second flip before its compare-and-swap the swap succeeds anyway:
/// half-open with a probe out and no time of its generation, so the probe never times out.
#[test]
fn a_probe_keeps_its_time_across_flips_of_the_counting_bit() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).probe_timeout(OPEN));
        trip_and_wait(&breaker, &clock);
        let prober: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let probe = breaker.try_acquire().expect("the open period is over");
                std::mem::forget(probe); // kept out
            })
        };
        let flipper = counting_on_and_off(&breaker);
        spawn_in(order, vec![prober, flipper]);
        assert_eq!(breaker.state(), State::HalfOpen);
        clock.advance(2 * OPEN);
        let rejected = breaker.try_acquire().expect_err("the probe is still out");
        assert_eq!(
            rejected.state(),
            State::Open,
            "the probe out past its timeout was not given up on: {rejected:?}"
        );
    });
}
