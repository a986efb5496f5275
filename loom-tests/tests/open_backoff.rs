//! The open back-off: how many failed probe rounds in a row led to an open period, counted
//! right while the transitions that write and read the count race.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{Events, OPEN, Role, check_each_order, failing_prober, small, spawn_in};
use hotbreaker::testing::assert_one_chain;
use hotbreaker::{Breaker, ManualClock, State, Transition, Trigger};
use loom::sync::Arc;

/// Open periods double after each failed probe round, up to 16 times `OPEN`.
fn backing_off(events: &Events, probes: usize) -> (Arc<Breaker<ManualClock>>, ManualClock) {
    small(|b| {
        b.consecutive_failures(1)
            .half_open_probes(probes)
            .open_backoff(2.0, OPEN * 16)
            .on_transition(events.listener())
    })
}

/// The periods of the openings that failed probes made, in the order of the chain.
fn probe_openings(mut events: Vec<Transition>) -> Vec<Duration> {
    assert_one_chain(&mut events);
    events
        .iter()
        .filter(|t| t.to == State::Open && t.trigger == Trigger::ProbeFailed)
        .map(|t| t.open_for.expect("an opening's period"))
        .collect()
}

/// Two callers probe and fail, one at the end of the trip's period, the other with the clock
/// moved 3 x `OPEN` further: late enough to find the first failure's opening (2 x `OPEN`)
/// over, if that opening read the clock before the move, and to probe again.
///
/// Whoever probes first fails the first round: an opening for 2 x `OPEN`. If the other
/// probes after it, in the next half-open period, its failure is the second round in a row:
/// 4 x `OPEN`. (A caller that finds the one probe place taken, or the new period running, is
/// rejected and fails nothing.)
///
/// Catches: the count written after the compare-and-swap that opens (the second failure
/// then finds no count for the open period before it and backs off from the start: 2 x
/// `OPEN` again), and a count looked up under the wrong generation.
#[test]
fn a_failed_round_backs_off_from_the_round_before() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = backing_off(&events, 1);
        breaker.try_acquire().expect("closed").failure();
        clock.advance(OPEN);

        let roles = vec![
            failing_prober(&breaker, &clock, Duration::ZERO),
            failing_prober(&breaker, &clock, OPEN * 3),
        ];
        let probed = spawn_in(order, roles).into_iter().filter(|&p| p).count();
        assert!(probed >= 1, "the trip's period is over: someone probes");
        let opened = probe_openings(events.take());
        let expected = [OPEN * 2, OPEN * 4];
        assert_eq!(opened, expected[..probed], "one opening per failed round");
    });
}

/// Two probes of one half-open period fail at once: one round, counted once, whichever of
/// the two failures opens the breaker.
///
/// A first round fails alone (2 x `OPEN`). In the second, each thread takes a probe and
/// fails it; when both are out before either fails, both failures race to reopen the breaker
/// from the same half-open word, and one does. Then the clock moves to the end of that period
/// and a third round fails.
///
/// Checks the periods 2, 4 and 8 x `OPEN`: the second round opened once, for 4 x `OPEN`,
/// whichever failure won, and the third followed it.
///
/// Catches: a failure that looks only for the count of the period before this round, after
/// the other failure of the round has already written this round's (the word then holds the
/// next generation's count, the round reads as the first, and the opening is 2 x `OPEN` when
/// that failure wins the compare-and-swap); and a count that each racing failure adds to (a
/// counter bumped per failure rather than set from the round before), which makes the third
/// round 16 x `OPEN`.
#[test]
fn probes_failing_together_are_one_round() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = backing_off(&events, 2);
        breaker.try_acquire().expect("closed").failure();
        clock.advance(OPEN);
        breaker.try_acquire().expect("a probe").failure();
        clock.advance(OPEN * 2);

        let roles = vec![
            failing_prober(&breaker, &clock, Duration::ZERO),
            failing_prober(&breaker, &clock, Duration::ZERO),
        ];
        let probed = spawn_in(order, roles).into_iter().filter(|&p| p).count();
        assert!(probed >= 1, "the period is over: someone probes");

        clock.advance(OPEN * 4);
        breaker.try_acquire().expect("a probe").failure();
        let opened = probe_openings(events.take());
        assert_eq!(
            opened,
            [OPEN * 2, OPEN * 4, OPEN * 8],
            "probes out: {probed}"
        );
    });
}

/// A failing probe races an opening from outside (`open_for`, as the shared follower makes
/// one): if the outside opening wins, the streak of failed rounds ends there.
///
/// A first round fails alone (2 x `OPEN`); the clock moves past it. Thread A takes a probe and
/// fails it (the second round: 4 x `OPEN`, if its opening wins). Thread B calls
/// `open_for(OPEN)`, which opens the breaker from half-open, or from open with its period
/// over, and does nothing while an open period runs. Then the clock moves past any period
/// and a probe fails.
///
/// Checks that this last round backs off from the start (2 x `OPEN`) when B's opening won,
/// and from A's round (8 x `OPEN`) when A's did.
///
/// Catches: a count read without the state word's failed-round bit: A, stalled between its
/// state check and its count's write, writes the second round's count for the generation
/// that B's opening took, and the last round reads it (8 x `OPEN` after B's opening).
#[test]
fn an_opening_from_outside_ends_the_streak() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = backing_off(&events, 1);
        breaker.try_acquire().expect("closed").failure();
        clock.advance(OPEN);
        breaker.try_acquire().expect("a probe").failure();
        clock.advance(OPEN * 2);

        let outside: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.open_for(OPEN).expect("a valid period"))
        };
        let roles = vec![failing_prober(&breaker, &clock, Duration::ZERO), outside];
        let done = spawn_in(order, roles);
        let outside_opened = done[1];

        clock.advance(OPEN * 8);
        breaker.try_acquire().expect("a probe").failure();
        let last = *probe_openings(events.take()).last().expect("an opening");
        let expected = if outside_opened { OPEN * 2 } else { OPEN * 8 };
        assert_eq!(
            last, expected,
            "outside opening won: {outside_opened}, A probed: {}",
            done[0]
        );
    });
}

/// A prober stalls between reading the half-open state and publishing its round's count,
/// while the other thread, a probe of the same round, fails first, waits out that opening,
/// and fails the next round too: a count two generations later than the stalled prober's.
///
/// Thread A takes a probe and fails it. Thread B takes a probe, fails it, moves the clock past
/// the longest first-round period (2 x `OPEN`), probes and fails. Then the clock moves past
/// any period and a probe fails. (Either thread may find the breaker open and be rejected;
/// A may probe in B's second round instead.)
///
/// Checks that the openings that failed probes made back off one round further each (2, 4,
/// 8 x `OPEN`, as far as there were rounds).
///
/// Catches: a count publish whose load of the count word, or the reload of its failed
/// compare-and-swap, is not `Acquire`, or whose swap is not `Release` (each tried): the
/// stalled prober reads B's count for the second round's opening, then an old state word
/// that still says half-open in the first round, and writes its first-round count over it;
/// its swap then fails, and the last round finds no count of the round before it and backs
/// off from the start (2 x `OPEN`).
#[test]
fn a_stalled_prober_leaves_a_later_count_alone() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = backing_off(&events, 2);
        breaker.try_acquire().expect("closed").failure();
        clock.advance(OPEN);

        let twice: Role<bool> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let first = failing_prober(&breaker, &clock, Duration::ZERO)();
                failing_prober(&breaker, &clock, OPEN * 2)() || first
            })
        };
        let roles = vec![failing_prober(&breaker, &clock, Duration::ZERO), twice];
        spawn_in(order, roles);

        clock.advance(OPEN * 8);
        breaker.try_acquire().expect("a probe").failure();
        let opened = probe_openings(events.take());
        let expected = [OPEN * 2, OPEN * 4, OPEN * 8];
        assert!(
            opened.len() <= expected.len() && opened == expected[..opened.len()],
            "one round further each: {opened:?}"
        );
    });
}
