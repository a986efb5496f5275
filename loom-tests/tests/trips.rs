//! Tripping: concurrent failures trip once, a caller racing a trip never slips a probe in,
//! and a verdict from before a state change does not count after it.

#![cfg(loom)]

mod common;

use common::{Events, F, Role, check_each_order, make, making, small, spawn_in};
use hotbreaker::{Breaker, ManualClock, State, Trigger};

/// Two threads each record a failure that meets the rule (`consecutive_failures(1)`); both
/// may be judged against the window before either trips, and both then trip generation 0.
///
/// Catches: a trip that is not a compare-and-swap from a closed word of its generation (a
/// store, or a compare-and-swap retried from whatever word it finds, each tried): the second
/// trip opens again, from the open word the first one wrote, and the opening and the
/// transition event are counted twice. Also a loss of the quiet bit that is a store (see the
/// next model). Not a trip that accepts a closed word of another generation: that takes a
/// closing between the permit and its trip, which this model lacks (every closed word here is
/// generation 0's); `a_failure_from_before_a_reset_does_not_trip_after_it` catches it.
#[test]
fn two_trips_of_one_generation_open_once() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).on_transition(events.listener()));
        spawn_in(order, making(&breaker, &[&[F], &[F]]));
        assert_one_trip(&breaker, &events);
    });
}

/// Two threads each record a failure (`consecutive_failures(2)`): the first takes the window
/// from clean to dirty and loses the quiet bit (a compare-and-swap on the state word that
/// moves its quiet epoch), the second meets the rule and trips. The trip may load the state
/// word before that loss and swap after it.
///
/// Catches: a trip that gives up when its compare-and-swap fails, rather than retrying while
/// the word it finds is still closed in its generation: it loses to the quiet epoch's move,
/// which is no transition, and the breaker stays closed after two failures in a row. Also a
/// loss of the quiet bit that is a store, not a compare-and-swap from a closed word of its
/// generation: it writes the closed word back over the trip.
#[test]
fn a_trip_racing_the_loss_of_the_quiet_bit_opens() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(2).on_transition(events.listener()));
        spawn_in(order, making(&breaker, &[&[F], &[F]]));
        assert_one_trip(&breaker, &events);
    });
}

/// Asserts that `breaker` opened once, by a trip, and announced that one transition.
fn assert_one_trip(breaker: &Breaker<ManualClock>, events: &Events) {
    let metrics = breaker.metrics();
    assert_eq!(metrics.state, State::Open, "{metrics:?}");
    assert_eq!(metrics.openings, 1, "one trip");
    let events = events.take();
    assert_eq!(events.len(), 1, "one transition event: {events:?}");
    assert_eq!((events[0].from, events[0].to), (State::Closed, State::Open));
    assert!(matches!(events[0].trigger, Trigger::Tripped { .. }));
}

/// One thread trips the breaker while another asks for a permit; the clock does not move.
///
/// Catches: the open deadline published after the compare-and-swap that makes the breaker
/// open. A caller that sees "open" before the deadline is there reads the previous deadline,
/// takes the open period as over, and becomes a probe at once, with no open period at all.
#[test]
fn a_caller_racing_a_trip_never_probes_early() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(1));
        let tripper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                make(&breaker, F);
            })
        };
        let caller: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    assert!(!permit.is_probe(), "a probe before the open period ended");
                    drop(permit);
                }
                Err(rejected) => {
                    assert_eq!(rejected.state(), State::Open);
                    assert_eq!(rejected.retry_after(), Some(common::OPEN));
                }
            })
        };
        spawn_in(order, vec![tripper, caller]);
        assert_eq!(breaker.state(), State::Open);
    });
}

/// A tripper stalls between reading the closed state and publishing its deadline, while the
/// other thread opens the breaker from outside, waits out that period, and fails the probe
/// (or the tripper's call, made after the period, is the probe and fails): an opening two
/// generations later, with a deadline of its own.
///
/// Checks that the breaker ends open with that last period intact (a call is rejected with
/// all of `OPEN` left).
///
/// Catches: a deadline publish whose load of the deadline word, or the reload of its failed
/// compare-and-swap, is not `Acquire` (each tried): the stale tripper reads the later
/// generation's deadline, then an old state word that still says closed in generation 0, and
/// writes its own deadline over it; its swap then fails, and the open breaker has no deadline
/// of its generation, so the next call probes at once. The load's history needs three
/// preemptions: at two, a `Relaxed` load passes.
#[test]
fn a_stalled_tripper_leaves_a_later_deadline_alone() {
    check_each_order(3, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1));
        let tripper: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                make(&breaker, F);
            })
        };
        let reopener: Role<()> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                breaker.open_for(common::OPEN).expect("a valid period");
                clock.advance(common::OPEN);
                // Rejected only while the tripper's call, made after the period, probes.
                let _ = breaker.try_acquire().map(|probe| probe.failure());
            })
        };
        spawn_in(order, vec![tripper, reopener]);
        let rejected = breaker.try_acquire().expect_err("open");
        assert_eq!(rejected.state(), State::Open);
        assert_eq!(rejected.retry_after(), Some(common::OPEN));
    });
}

/// A failing caller and a reset, as two roles: the caller returns its permit's generation.
fn fail_and_reset(
    order: &[usize],
    breaker: &loom::sync::Arc<hotbreaker::Breaker<hotbreaker::ManualClock>>,
) -> u32 {
    let caller: Role<u32> = {
        let breaker = breaker.clone();
        Box::new(move || {
            let permit = breaker.try_acquire().expect("closed throughout");
            let generation = permit.generation();
            permit.failure();
            generation
        })
    };
    let resetter: Role<u32> = {
        let breaker = breaker.clone();
        Box::new(move || {
            breaker.reset();
            0
        })
    };
    spawn_in(order, vec![caller, resetter])[0]
}

/// A failure of a permit issued before a reset races the reset; two failures in a row trip.
///
/// Catches: a failure recorded without checking that its permit's generation is still the
/// window's: a failure from before the reset lands in the new, cleared window.
#[test]
fn a_failure_from_before_a_reset_is_not_counted_after_it() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(2));
        let generation = fail_and_reset(order, &breaker);
        let metrics = breaker.metrics();
        assert_eq!(metrics.state, State::Closed);
        // The reset is the one transition: generation 0 before it, 1 after.
        let counted = u32::from(generation == 1);
        assert_eq!(
            metrics.consecutive_failures, counted,
            "permit of generation {generation}: {metrics:?}"
        );
    });
}

/// The same race with a rule that one failure meets.
///
/// Catches: a trip that checks only "closed", not "closed in the permit's generation": the
/// failure from before the reset opens the breaker the reset just closed.
#[test]
fn a_failure_from_before_a_reset_does_not_trip_after_it() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(1));
        let generation = fail_and_reset(order, &breaker);
        let metrics = breaker.metrics();
        // Generation 1 is the reset's when the permit came after it; a permit of generation 0
        // either tripped before the reset (which then closed the breaker) or was stale.
        let expected = if generation == 1 {
            State::Open
        } else {
            State::Closed
        };
        assert_eq!(metrics.state, expected, "permit of generation {generation}");
        assert!(metrics.openings <= 1, "{metrics:?}");
    });
}

/// Two probes of one half-open period end at once, one failing and one succeeding.
///
/// Catches: probe verdicts that change the state without a compare-and-swap from the word of
/// their own period: both land, and the one round both closes and reopens the breaker, with
/// two transitions where one decided.
#[test]
fn racing_probe_verdicts_decide_once() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = small(|b| {
            b.consecutive_failures(2)
                .half_open_probes(2)
                .on_transition(events.listener())
        });
        breaker.try_acquire().unwrap().failure();
        breaker.try_acquire().unwrap().failure();
        clock.advance(common::OPEN);
        breaker.try_acquire().expect("first probe").ignore();
        events.take();
        let failing: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let _ = breaker.try_acquire().map(|p| p.failure());
            })
        };
        let succeeding: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let _ = breaker.try_acquire().map(|p| p.success());
            })
        };
        spawn_in(order, vec![failing, succeeding]);
        let metrics = breaker.metrics();
        let events = events.take();
        assert_eq!(events.len(), 1, "one verdict decides the round: {events:?}");
        assert_eq!(events[0].from, State::HalfOpen);
        assert_eq!(events[0].to, metrics.state);
        let closed = u64::from(metrics.state == State::Closed);
        assert_eq!((metrics.openings, metrics.closings), (2 - closed, closed));
    });
}

/// A probe of an earlier half-open period fails late, while a probe of the next period is
/// out and succeeds.
///
/// Two probes are out in half-open generation 2; one fails, which opens generation 3; the
/// open period ends and generation 4 is half-open. Thread A then fails the other, stale probe
/// of generation 2; thread B takes a probe of generation 4 and succeeds.
///
/// Checks that the stale failure changes nothing: B's probe closes the breaker, and no third
/// opening is made.
///
/// Catches: a probe failure that reopens from any half-open word, not only one of its own
/// period (the generation check dropped from `probe_failed`'s expected state): A's failure
/// reopens generation 4 while B's probe is out, and B's success, stale then, closes nothing.
#[test]
fn a_stale_probe_failure_does_not_reopen_a_later_round() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) =
            common::small_for_owned_permits(|b| b.consecutive_failures(1).half_open_probes(2));
        breaker.try_acquire().expect("closed").failure();
        clock.advance(common::OPEN);
        let stale = breaker.try_acquire_owned().expect("first probe");
        breaker.try_acquire().expect("second probe").failure();
        assert_eq!(breaker.metrics().openings, 2);
        clock.advance(common::OPEN);

        let late: Role<()> = Box::new(move || stale.failure());
        let prober: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let probe = breaker.try_acquire().expect("a probe of generation 4");
                assert_eq!(probe.generation(), 4);
                probe.success();
            })
        };
        spawn_in(order, vec![late, prober]);
        let metrics = breaker.metrics();
        assert_eq!(
            (metrics.state, metrics.openings),
            (State::Closed, 2),
            "the stale failure reopened"
        );
    });
}
