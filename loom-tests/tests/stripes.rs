//! A stripe handed from a thread that is done with it to a thread that starts using it.

#![cfg(loom)]

mod common;

use common::{Call, F, Role, S, assert_reached, check_each_order, make, model_finals, rate};
use hotbreaker::ManualClock;
use hotbreaker::loom_hooks::give_back_slot;
use hotbreaker::testing::ModelConfig;
use loom::sync::Arc;

/// Two threads count successes in stripes of their own, with plain loads and stores, while a
/// failure is in the window; the first gives its slot back when it is done (as its exit
/// would), so the second may take the same slot and count on in the same stripe. The main
/// thread, which recorded the failure, gives its slot back first, so the first thread may
/// take that one.
///
/// Catches: a slot handed over without ordering the old owner's last store before the new
/// owner's first load (the registry's release not `Release`, or its claim not `Acquire`).
/// The new owner then reads a count from before the old owner's successes and stores over
/// them: the success counter comes out short, and the window still holds a failure that
/// three successes pushed out.
#[test]
fn a_slot_handed_to_another_thread_keeps_its_counts() {
    const CONFIG: ModelConfig = rate(1.0, 3, 3);
    const BEFORE: &[Call] = &[S, S, F];
    const THREADS: &[&[Call]] = &[&[S, S], &[S]];
    let allowed = model_finals(CONFIG, BEFORE, THREADS, &[]);
    check_each_order(2, THREADS.len(), move |order| {
        let breaker = Arc::new(
            CONFIG
                .builder()
                .count_successes(true)
                .stripes(2)
                .clock(ManualClock::new())
                .build()
                .expect("valid configuration"),
        );
        for &call in BEFORE {
            make(&breaker, call);
        }
        give_back_slot();
        let roles: Vec<Role<()>> = THREADS
            .iter()
            .enumerate()
            .map(|(role, &calls)| {
                let breaker = breaker.clone();
                Box::new(move || {
                    for &call in calls {
                        make(&breaker, call);
                    }
                    if role == 0 {
                        give_back_slot();
                    }
                }) as Role<()>
            })
            .collect();
        common::spawn_in(order, roles);
        assert_eq!(breaker.metrics().successes, Some(5));
        assert_reached(&allowed, &breaker);
    });
}

/// A thread records a failure in its own stripe's window, gives its slot back, and records a
/// success; then, after it is gone, another thread records a failure. Runs of three trip;
/// each stripe's threads have a window of their own. Sequential: what is tested is where
/// each call goes, not a race.
///
/// Checks the promise of `give_back_slot`: the thread shares the common stripe (and window)
/// afterwards, so its success lands in the shared window and leaves its failure's run whole;
/// and its slot is free again, so the next thread takes it, with the window that holds that
/// failure, and makes it a run of two.
///
/// Catches: a thread that claims a slot again after giving its own back (tried: `NO_SLOT`
/// equal to `UNASSIGNED`; it takes its old slot back, its success ends its own run, and the
/// next thread is left with the shared window: the longest run is 1), and a give-back that
/// does not release the slot in the registry (tried: the `release` call removed; the next
/// thread finds the slot taken and shares the shared window with the success: runs of 1).
#[test]
fn a_thread_that_gives_its_slot_back_shares_the_common_stripe_and_frees_the_slot() {
    common::check(2, || {
        let breaker = Arc::new(
            hotbreaker::Breaker::builder()
                .consecutive_failures(3)
                .per_thread_windows(true)
                .stripes(2)
                .clock(ManualClock::new())
                .build()
                .expect("valid configuration"),
        );
        let first = breaker.clone();
        loom::thread::spawn(move || {
            assert!(make(&first, F));
            give_back_slot();
            assert!(make(&first, S));
        })
        .join()
        .unwrap();
        let second = breaker.clone();
        loom::thread::spawn(move || assert!(make(&second, F)))
            .join()
            .unwrap();
        let metrics = breaker.metrics();
        assert_eq!(
            (
                metrics.state,
                metrics.failures,
                metrics.consecutive_failures
            ),
            (hotbreaker::State::Closed, 2, 2),
            "the longest run is the first thread's failure and the second's: {metrics:?}"
        );
    });
}
