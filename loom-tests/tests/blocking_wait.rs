//! Threads blocked waiting for a permit (`acquire_timeout`) and the transitions that wake
//! them: the waiter's registration in `blocked`, its load of `events` before its attempt, the
//! notifier's bump of `events` and its read of `blocked` after.
//!
//! The wait is the real `acquire_timeout`, with a timeout real time never reaches
//! ([`FOR_GOOD`]: loom does not control real time, and no model may depend on it passing).
//! Under loom the futex is a lock and a condition variable (`sync::wait_while_equal`): the
//! comparison with the value loaded and the queueing are one step, as in the kernel, and the
//! timeout is ignored, so a thread asleep wakes only when a notify finds it registered and
//! wakes it. A lost wakeup leaves it asleep for good, and loom reports the model deadlocked.

#![cfg(loom)]

mod common;

use std::time::Duration;

use common::{Role, check_each_order, half_open_with_probe_out, small, spawn_in, trip_and_wait};
use hotbreaker::State;

/// How long the waiters wait: the deadline `acquire_timeout` measures on the system's clock
/// never passes, so only an admission ends the wait.
const FOR_GOOD: Duration = Duration::MAX;

/// A thread waits while the only probe of a half-open breaker is out; another thread ends the
/// probe with a success, which closes the breaker and notifies.
///
/// Checks that the waiter is woken and admitted (as an ordinary call: the breaker is closed).
///
/// Catches, each as a deadlock:
/// - a notify that reads `blocked` before it bumps `events`: it finds no waiter, the waiter
///   registers, loads `events` before the bump and tries before it sees the closing, then
///   sleeps on the value it loaded;
/// - the registration in `blocked` or the notifier's read of it weakened to
///   `Release`/`Acquire` or `Relaxed`, or the notifier's bump of `events` to `Release`: the
///   notify misses the registration though the waiter loaded `events` before the bump (the
///   store-buffering pair that `SeqCst` on both sides rules out);
/// - a waiter that loads `events` after its attempt instead of before: the attempt misses the
///   closing, the load sees the bump, and the sleep compares with the bumped value;
/// - the waiter's loads of `events` relaxed: a load that sees the bump no longer orders the
///   closing before the attempt.
///
/// Does not catch, and should not, a waiter that loads `events` before it registers (tried:
/// the first load moved ahead of the registration), nor its loads of `events` weakened to
/// acquire (tried): the futex reads the word after a full barrier (`SeqCst` in the stand-in),
/// after the registration, so a notify that misses the registration has its bump seen by the
/// futex, which then does not sleep. With the stand-in's read relaxed, both fail; the code as
/// it is passes either way.
#[test]
fn a_waiting_thread_is_woken_by_the_verdict_that_closes() {
    check_each_order(2, 2, |order| {
        let (breaker, probe) = half_open_with_probe_out();
        let waiting = breaker.clone();
        let roles: Vec<Role<()>> = vec![
            Box::new(move || {
                let permit = waiting.acquire_timeout(FOR_GOOD).expect("no deadline");
                assert!(!permit.is_probe(), "admitted after the breaker closed");
                permit.success();
            }),
            Box::new(move || probe.success()),
        ];
        spawn_in(order, roles);
        assert_eq!(breaker.state(), State::Closed);
        assert_eq!(breaker.metrics().rejected, 0, "waiting is not rejection");
    });
}

/// A thread waits on an open breaker, whose period would never end while it waits (the clock
/// stands still); another thread ends the period early (`end_open_period`), which notifies.
///
/// Checks that the waiter is woken and admitted as the probe.
///
/// Catches, as a deadlock: a notify made before the change it announces (here, before the
/// period's end is moved): the waiter wakes, still finds the period running, and goes back to
/// sleep on the bumped `events`, and nothing bumps it again. Also what the first model
/// catches, from a second place that notifies.
#[test]
fn a_waiting_thread_is_woken_when_the_open_period_is_ended() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(1));
        breaker.try_acquire().expect("closed").failure();
        let (waiting, ending) = (breaker.clone(), breaker.clone());
        let roles: Vec<Role<bool>> = vec![
            Box::new(move || {
                let permit = waiting.acquire_timeout(FOR_GOOD).expect("no deadline");
                let probe = permit.is_probe();
                permit.success();
                probe
            }),
            Box::new(move || ending.end_open_period()),
        ];
        let done = spawn_in(order, roles);
        assert_eq!(
            done,
            [true, true],
            "the waiter probed; the period was ended"
        );
        assert_eq!(breaker.state(), State::Closed);
    });
}

/// Two threads ask for a permit on a half-open breaker with one probe place and no probe out.
/// One is admitted at once as the probe, stops waiting (leaves `blocked`) as it returns, and
/// closes the breaker with a success; the other, turned away while that probe is out, waits to
/// be woken by that closing.
///
/// Checks that both threads are admitted, one as the probe.
///
/// Catches, as a deadlock: `blocked` kept as a flag rather than a count (set on registering,
/// cleared on leaving): the probe's leaving clears the other's registration, and the closing's
/// notify, finding no one registered, wakes no one.
#[test]
fn a_waiting_thread_is_woken_after_another_stops_waiting() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1));
        trip_and_wait(&breaker, &clock);
        let roles: Vec<Role<bool>> = (0..2)
            .map(|_| {
                let breaker = breaker.clone();
                Box::new(move || {
                    let permit = breaker.acquire_timeout(FOR_GOOD).expect("no deadline");
                    let probe = permit.is_probe();
                    permit.success();
                    probe
                }) as Role<bool>
            })
            .collect();
        let probes = spawn_in(order, roles);
        assert_eq!(
            probes.iter().filter(|&&p| p).count(),
            1,
            "one thread probed and closed, the other was let in closed: {probes:?}"
        );
        assert_eq!(breaker.state(), State::Closed);
    });
}

/// A thread waits while the only probe place of a half-open breaker that needs two successes
/// is taken; another thread ends that probe with a success, which does not close the breaker
/// but frees the place.
///
/// Checks that the waiter is woken and admitted as the second probe, and that its success
/// closes the breaker.
///
/// Catches, as a deadlock: a probe success that frees a place without notifying (only the
/// closing success notifies): the waiter, turned away while the place was taken, sleeps on
/// and nothing bumps `events` again.
#[test]
fn a_waiting_thread_is_woken_by_a_success_that_frees_a_place() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) =
            common::small_for_owned_permits(|b| b.consecutive_failures(1).success_threshold(2));
        trip_and_wait(&breaker, &clock);
        let probe = breaker.try_acquire_owned().expect("the first probe");
        let waiting = breaker.clone();
        let roles: Vec<Role<()>> = vec![
            Box::new(move || {
                let permit = waiting.acquire_timeout(FOR_GOOD).expect("no deadline");
                assert!(permit.is_probe(), "the second probe: {permit:?}");
                permit.success();
            }),
            Box::new(move || probe.success()),
        ];
        spawn_in(order, roles);
        assert_eq!(breaker.state(), State::Closed);
    });
}
