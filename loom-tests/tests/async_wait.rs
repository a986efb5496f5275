//! Tasks waiting for a permit (`acquire_timeout_async`'s wait) and the transitions that wake
//! them: the slot a task claims, the waker it leaves there, and `events`, re-checked after.
//!
//! The wait runs on `hotbreaker::loom_hooks::acquire_waiting`, the real wait loop with no
//! deadline and a timer that never fires for a task in a slot: such a task wakes only when a
//! notify finds its waker, so a lost wakeup leaves it asleep for good, and loom reports the
//! model deadlocked. A task that found every slot taken looks again while they stay taken,
//! and once after.

#![cfg(loom)]

mod common;

use common::{Role, check_each_order, half_open_with_probe_out, small, spawn_in, trip_and_wait};
use hotbreaker::State;
use hotbreaker::loom_hooks::{acquire_waiting, give_back_every_task_slot, take_every_task_slot};
use loom::future::block_on;

/// A task waits while the only probe of a half-open breaker is out; another thread ends the
/// probe with a success, which closes the breaker and notifies.
///
/// Checks that the task is woken and admitted (as an ordinary call: the breaker is closed).
///
/// Catches, each as a deadlock:
/// - a poll that looks at `events` before it registers its waker: the verdict's notify falls
///   between the look and the registration and finds no waker;
/// - a notify that reads the claimed slots (`taken`) with relaxed ordering: it misses the
///   task's claim though the task read `events` before the bump (the store-buffering pair
///   that `SeqCst` on both sides rules out);
/// - a claim with relaxed ordering, or the task's loads of `events` with acquire ordering
///   (tried: both loads, as `Waiters::events` makes them), for the same reason from the
///   task's side.
///
/// Does not catch the re-check alone weakened to acquire or relaxed (tried, both: 300
/// executions, no failure), and should not: if the notify misses the claim, the task's first
/// load of `events` (`SeqCst`) already saw the bump; if it finds the slot before the waker is
/// there, `AtomicWaker` orders the registration after the wake, and the re-check after it.
#[test]
fn a_waiting_task_is_woken_by_the_verdict_that_closes() {
    check_each_order(2, 2, |order| {
        let (breaker, probe) = half_open_with_probe_out();
        let waiting = breaker.clone();
        let roles: Vec<Role<()>> = vec![
            Box::new(move || {
                let permit = block_on(acquire_waiting(&waiting)).expect("no deadline");
                assert!(!permit.is_probe(), "admitted after the breaker closed");
                permit.success();
            }),
            Box::new(move || probe.success()),
        ];
        spawn_in(order, roles);
        assert_eq!(breaker.state(), State::Closed);
    });
}

/// A task waits on an open breaker, whose period would never end while it waits (the clock
/// stands still); another thread ends the period early (`end_open_period`), which notifies.
///
/// Checks that the task is woken and admitted as the probe.
///
/// Catches, as a deadlock: a notify made before the change it announces (here, before the
/// period's end is moved): the task wakes, still finds the period running, and goes back to
/// sleep on the bumped `events`, and nothing bumps it again. Also what the first model
/// catches, from a second place that notifies.
#[test]
fn a_waiting_task_is_woken_when_the_open_period_is_ended() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(1));
        breaker.try_acquire().expect("closed").failure();
        let (waiting, ending) = (breaker.clone(), breaker.clone());
        let roles: Vec<Role<bool>> = vec![
            Box::new(move || {
                let permit = block_on(acquire_waiting(&waiting)).expect("no deadline");
                let probe = permit.is_probe();
                permit.success();
                probe
            }),
            Box::new(move || ending.end_open_period()),
        ];
        let done = spawn_in(order, roles);
        assert_eq!(done, [true, true], "the task probed; the period was ended");
        assert_eq!(breaker.state(), State::Closed);
    });
}

/// Two tasks ask for a permit on a half-open breaker with one probe place and no probe out.
/// One is admitted at once as the probe, gives its slot back as it returns, and closes the
/// breaker with a success; the other, turned away while that probe is out, may claim the slot
/// just given back and wait in it, to be woken by that closing.
///
/// Checks that both tasks are admitted, one as the probe.
///
/// Catches, each as a deadlock:
/// - a slot given back before its waker is taken out (the bit cleared, then the take): the
///   second task claims the slot and registers in the gap, and the first task's take throws
///   the second's waker away, so the closing's notify finds the slot empty;
/// - a claim that is not one read-modify-write (a load, then a store of the bit): both tasks
///   take the same slot, and the first, giving it back, takes the second's waker and frees
///   the slot under it.
#[test]
fn a_slot_given_back_while_another_task_claims_it_loses_no_wake() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1));
        trip_and_wait(&breaker, &clock);
        let roles: Vec<Role<bool>> = (0..2)
            .map(|_| {
                let breaker = breaker.clone();
                Box::new(move || {
                    let permit = block_on(acquire_waiting(&breaker)).expect("no deadline");
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
            "one task probed and closed, the other was let in closed: {probes:?}"
        );
        assert_eq!(breaker.state(), State::Closed);
    });
}

/// A task asks for a permit while the only probe of a half-open breaker is out and every
/// slot is taken (as by eight tasks waiting already), so it polls. Another thread gives the
/// slots back and then ends the probe with a success, which closes the breaker and notifies.
///
/// Checks that the task is admitted. Under loom a task without a slot looks again only while
/// every slot is taken, and once after (`LoomTimer` in `src/wait.rs`); from then on only a
/// notify that finds it in a slot wakes it.
///
/// Catches, as a deadlock: a task that tries for a slot only when it starts waiting (as the
/// wait did before this model: it polled every millisecond for the whole wait). The closing
/// comes after its last look and finds it in no slot.
#[test]
fn a_task_without_a_slot_claims_one_given_back_and_is_woken_in_it() {
    check_each_order(2, 2, |order| {
        let (breaker, probe) = half_open_with_probe_out();
        take_every_task_slot(&breaker);
        let (waiting, ending) = (breaker.clone(), breaker.clone());
        let roles: Vec<Role<()>> = vec![
            Box::new(move || {
                let permit = block_on(acquire_waiting(&waiting)).expect("no deadline");
                assert!(!permit.is_probe(), "admitted after the breaker closed");
                permit.success();
            }),
            Box::new(move || {
                give_back_every_task_slot(&ending);
                probe.success();
            }),
        ];
        spawn_in(order, roles);
        assert_eq!(breaker.state(), State::Closed);
    });
}
