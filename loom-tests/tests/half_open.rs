//! Half-open: how many probes get through when callers race, and that a probe's place comes
//! back however it ends.

#![cfg(loom)]

mod common;

use common::{Events, Role, check, check_each_order, small, spawn_in, trip_and_wait};
use hotbreaker::{Breaker, ManualClock, State, Trigger};
use loom::sync::Arc;
use loom::thread::JoinHandle;

/// `callers` threads each ask once; a granted permit is never ended (forgotten), so it is
/// still out when the others ask. Returns how many were granted.
fn race_for_probes(breaker: &Arc<Breaker<ManualClock>>, callers: usize) -> usize {
    let handles: Vec<JoinHandle<bool>> = (0..callers)
        .map(|_| {
            let breaker = breaker.clone();
            loom::thread::spawn(move || match breaker.try_acquire() {
                Ok(permit) => {
                    assert!(permit.is_probe());
                    std::mem::forget(permit);
                    true
                }
                Err(rejected) => {
                    assert_eq!(rejected.state(), State::HalfOpen);
                    false
                }
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .filter(|&granted| granted)
        .count()
}

/// Three callers race for two probe places in an open half-open period.
///
/// Catches: an admission that checks `probes_out` and then writes `probes_out + 1` without a
/// compare-and-swap, or an off-by-one in the check (`>` for `>=`): a third probe gets through
/// while two are out (Resilience4j #1432, Failsafe #391).
#[test]
fn admits_exactly_the_configured_probes() {
    check(2, || {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).half_open_probes(2));
        trip_and_wait(&breaker, &clock);
        // The first probe starts the half-open period; ignoring it frees its place, so the
        // racing callers find half-open with no probe out.
        breaker.try_acquire().expect("first probe").ignore();
        let admitted = race_for_probes(&breaker, 3);
        assert_eq!(admitted, 2, "two probe places, three callers");
        let metrics = breaker.metrics();
        assert_eq!(metrics.probes_out, 2);
        assert_eq!(metrics.rejected, 1);
        assert_eq!(metrics.half_openings, 1);
    });
}

/// Three callers arrive after the open period ended; the first to change the state starts the
/// one probe round, and the others join it or are turned away.
///
/// Catches: open -> half-open written with a plain store, or a caller that retries its
/// compare-and-swap from the open word it first read: every caller that saw "open, period
/// over" starts a round of its own, and a stampede of probes gets through, with one
/// half-opening (and one transition event) each.
#[test]
fn the_deadline_race_opens_one_probe_round() {
    check(2, || {
        let events = Events::default();
        let (breaker, clock) = small(|b| {
            b.consecutive_failures(1)
                .half_open_probes(2)
                .on_transition(events.listener())
        });
        trip_and_wait(&breaker, &clock);
        events.take();
        let admitted = race_for_probes(&breaker, 3);
        assert_eq!(admitted, 2, "one round of two probes");
        let metrics = breaker.metrics();
        assert_eq!(metrics.half_openings, 1, "one half-opening");
        assert_eq!(metrics.probes_out, 2);
        let events = events.take();
        assert_eq!(events.len(), 1, "one transition event: {events:?}");
        assert_eq!(
            (events[0].from, events[0].to, events[0].trigger),
            (State::Open, State::HalfOpen, Trigger::OpenPeriodEnded)
        );
    });
}

/// Two probes end without a verdict (dropped) while the other is asking or ending too.
///
/// Catches: a release that frees its place with a plain read-then-store of the state word:
/// two releases racing lose one decrement, a place stays taken for good, and half-open gets
/// stuck (Resilience4j #935, Polly #1979). Also a release that forgets to free the place.
#[test]
fn a_dropped_probe_gives_its_place_back() {
    check(2, || {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).half_open_probes(2));
        trip_and_wait(&breaker, &clock);
        breaker.try_acquire().expect("first probe").ignore();
        let handles: Vec<JoinHandle<bool>> = (0..2)
            .map(|_| {
                let breaker = breaker.clone();
                loom::thread::spawn(move || breaker.try_acquire().map(drop).is_ok())
            })
            .collect();
        let granted = handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .filter(|&granted| granted)
            .count();
        assert_eq!(granted, 2, "two places, two callers");
        let metrics = breaker.metrics();
        assert_eq!(
            metrics.probes_out, 0,
            "every dropped probe gave its place back"
        );
        assert_eq!(metrics.released, 2);
        // Not stuck: both places can be taken again.
        let again = [breaker.try_acquire(), breaker.try_acquire()];
        assert!(again.iter().all(Result::is_ok), "half-open is stuck");
    });
}

/// A probe of one half-open period is dropped after that period ended (another probe failed
/// and reopened) and a new one began with a probe of its own.
///
/// Catches: a release that frees a place without checking that its permit belongs to the
/// current generation: the stale release frees the new round's place, and one probe too many
/// gets through.
#[test]
fn a_stale_probe_release_frees_nothing_in_the_next_round() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).half_open_probes(2));
        trip_and_wait(&breaker, &clock);
        breaker.try_acquire().expect("first probe").ignore();
        let dropper: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || {
                drop(breaker.try_acquire());
                false
            })
        };
        // This thread's probe fails, reopens, and after the open period probes the next round,
        // holding its probe.
        let reopener: Role<bool> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(probe) = breaker.try_acquire() else {
                    return false;
                };
                probe.failure();
                clock.advance(common::OPEN);
                match breaker.try_acquire() {
                    Ok(next_round) => {
                        std::mem::forget(next_round);
                        true
                    }
                    Err(_) => false,
                }
            })
        };
        let holding = spawn_in(order, vec![dropper, reopener])[1];
        let metrics = breaker.metrics();
        assert_eq!(
            metrics.probes_out,
            u32::from(holding),
            "places taken must be the probes still out: {metrics:?}"
        );
    });
}

/// Thread A ends an owned probe (`try_acquire_owned`, as a tower response future holds) with
/// `ignore`, which frees its place; thread B asks for a probe at any point of that, and keeps
/// it if granted. One probe place (`common::half_open_with_probe_out`).
///
/// Checks that the verdict ends the owned permit once: nothing is counted as released, and
/// the probes out are B's alone (one if B was granted, none if not).
///
/// Catches: an owned permit whose verdict does not mark it ended (`OwnedPermit::ended`): its
/// drop then releases it too (tried: 1 release counted; and, when B took the place between
/// A's verdict and its drop, B's place freed under it, 0 probes out with B's still out).
#[test]
fn an_owned_probe_ended_by_a_verdict_frees_its_place_once() {
    check_each_order(2, 2, |order| {
        let (breaker, probe) = common::half_open_with_probe_out();
        let ender: Role<bool> = Box::new(move || {
            probe.ignore();
            false
        });
        let asker: Role<bool> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(probe) => {
                    std::mem::forget(probe); // still out
                    true
                }
                Err(_) => false,
            })
        };
        let holds = spawn_in(order, vec![ender, asker])[1];
        let metrics = breaker.metrics();
        assert_eq!(metrics.released, 0, "{metrics:?}");
        assert_eq!(metrics.probes_out, u32::from(holds), "{metrics:?}");
    });
}
