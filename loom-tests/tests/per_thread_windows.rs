//! A window per thread (`Builder::per_thread_windows`): each counter stripe's threads record
//! into a window of their own while other threads record into theirs, transitions empty every
//! window, and a slot handed to another thread hands its window over with it.
//!
//! The breakers have two stripes (`common::small`'s), or one. The main thread takes stripe 0
//! (the first window) before the model threads start, so that of two model threads one owns
//! stripe 1 and the other shares the shared stripe's window, and neither records into the
//! first window. A thread takes a slot when it first reads the settings, as a reset, a
//! closing probe, `config` and `metrics` do, not only when it records: so the main thread
//! makes the manual transitions itself, as a third model thread that reset the breaker could
//! take stripe 1 first and leave both callers to share one window.
//!
//! What one thread's calls do in one order is `tests/per_thread_windows.rs`'s to check.

#![cfg(loom)]

mod common;

use common::{
    Call, Events, F, OPEN, Role, S, assert_reached, call_through, check_each_order, make, making,
    making_with, model_finals, rate, small, spawn_in, success_then_failure,
};
use hotbreaker::loom_hooks::give_back_slot;
use hotbreaker::testing::{ModelConfig, assert_one_chain, is_quiet};
use hotbreaker::{Breaker, ManualClock, State, Trigger};
use loom::sync::Arc;

/// The role of a thread that makes `calls` (successes and failures) in turn and returns, for
/// each, the generation of its permit, or `None` if it was rejected.
fn caller(breaker: &Arc<Breaker<ManualClock>>, calls: &'static [Call]) -> Role<Vec<Option<u32>>> {
    let breaker = breaker.clone();
    Box::new(move || {
        calls
            .iter()
            .map(|&call| {
                let permit = breaker.try_acquire().ok()?;
                let generation = permit.generation();
                match call {
                    S => permit.success(),
                    F => permit.failure(),
                    other => unreachable!("{other:?}"),
                }
                Some(generation)
            })
            .collect()
    })
}

/// Two threads record failures into their own windows (two in a row trip) while the main
/// thread forces the breaker open and resets it, to a closed generation with the same tag as
/// the first under loom: one thread fails twice, the other fails and then succeeds (the
/// module's docs say why the main thread makes the transitions).
///
/// Checks that the transitions form one chain; that a trip happens only when the twice-failing
/// thread had both its permits in the closed generation it trips (no thread's run may take a
/// failure of another thread, or of an earlier generation); that a breaker left closed in
/// generation `G` did not miss such a run; and that its window then holds a run of exactly as
/// many failures as the twice-failing thread has permits of `G` (the other thread's success
/// ended its own run).
///
/// Catches: a closing that empties some windows only (tried: the first alone, and all but the
/// shared one): failures of generation 0 stay in a caller's window, whose tag generation 2
/// shares, and show as generation 2's run in the metrics (or make a run of two with a failure
/// of generation 2); a failure recorded in another thread's window (tried: the shared one for
/// every thread), where the two threads' failures make one run; a success recorded in another
/// thread's window (tried: the shared one), which then leaves the run of its own thread
/// standing; and a window that counts every stripe's successes (tried), where the other
/// thread's success breaks the run of the twice-failing thread, which then misses its trip.
#[test]
fn failures_in_own_windows_race_force_open_and_reset() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, _clock) = small(|b| {
            b.consecutive_failures(2)
                .per_thread_windows(true)
                .on_transition(events.listener())
        });
        make(&breaker, S); // the main thread takes stripe 0 (see the module's docs)
        let mut roles = [
            Some(caller(&breaker, &[F, F])),
            Some(caller(&breaker, &[F, S])),
        ];
        let handles: Vec<_> = order
            .iter()
            .map(|&role| (role, loom::thread::spawn(roles[role].take().expect("once"))))
            .collect();
        breaker.force_open();
        breaker.reset();
        let mut permits = vec![Vec::new(), Vec::new()];
        for (role, handle) in handles {
            permits[role] = handle.join().unwrap();
        }
        let twice = &permits[0];

        let mut events = events.take();
        let state = assert_one_chain(&mut events);
        let trips: Vec<u32> = events
            .iter()
            .filter(|e| matches!(e.trigger, Trigger::Tripped { .. }))
            .map(|e| e.generation - 1) // the closed generation each trip ended
            .collect();
        assert_eq!(
            events.len() - trips.len(),
            2,
            "two manual transitions: {events:?}"
        );
        for &tripped in &trips {
            assert_eq!(
                twice[..],
                [Some(tripped); 2],
                "a trip of generation {tripped} without a run of one thread in it: {events:?}, \
                 permits {permits:?}"
            );
        }
        let metrics = breaker.metrics();
        assert_eq!(metrics.state, state);
        assert_eq!(metrics.openings, trips.len() as u64);
        if state == State::Closed {
            let last = Some(events.len() as u32);
            let in_last = twice.iter().filter(|&&g| g == last).count() as u32;
            assert!(
                in_last < 2,
                "two failures of generation {last:?} in a row did not trip: {events:?}"
            );
            assert_eq!(
                metrics.consecutive_failures, in_last,
                "{metrics:?}, permits {permits:?}, events {events:?}"
            );
        }
    });
}

/// The open breaker's period is over and two probes succeed at once (one success closes it);
/// each probe's thread then fails a call of the new closed generation, in its own window. (A
/// thread that finds the breaker closed already makes a closed call of its first one.) One
/// failure of two calls, at 100 %, does not trip.
///
/// Checks that the breaker ends closed once, with both failures in the windows.
///
/// Catches: a closing that checks the state only once for all the windows it empties, not
/// after loading each (point 7 holds for each window alone; tried: the losing closer checks
/// the half-open state, stalls, the winner closes and its thread records its failure, and the
/// loser's late emptying of that thread's window loses it: one failure in the windows). Also
/// a failure recorded in another thread's window (tried: the shared one for every thread):
/// both land in one window.
#[test]
fn a_losing_closing_leaves_each_threads_new_window_alone() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| {
            b.failure_rate(1.0, 2)
                .half_open_probes(2)
                .per_thread_windows(true)
        });
        make(&breaker, F);
        make(&breaker, F);
        assert_eq!(breaker.state(), State::Open);
        clock.advance(OPEN);
        spawn_in(
            order,
            vec![
                success_then_failure(&breaker),
                success_then_failure(&breaker),
            ],
        );
        let metrics = breaker.metrics();
        assert_eq!(
            (
                metrics.state,
                metrics.closings,
                metrics.window_failures,
                metrics.consecutive_failures
            ),
            (State::Closed, 1, 2, 1),
            "{metrics:?}"
        );
    });
}

/// A thread fills its window with three successes, fails, succeeds once more (a plain store
/// to its stripe's count) and gives its slot back, as its exit would; another thread fails
/// once, perhaps with that slot, and then with its window and stripe. Failures trip at 100 %
/// of a window of 3, or two in a row.
///
/// Checks that nothing trips, and that the windows hold what the calls left whichever window
/// the second thread took (two failures and a run of one in all; three calls if it took the
/// first thread's, four if not).
///
/// Catches: a slot handed over without ordering the old owner's last store to its stripe
/// before the new owner's reads (tried: the registry's release and claim relaxed). The new
/// owner's failure then counts the stripe's successes short of the old owner's last one, finds
/// its failure right after the old owner's, and trips on a run of two. Also a window whose
/// filling successes take their numbers on the shared stripe instead of its own, a success
/// recorded in the shared window instead of the thread's own, a failure recorded so, and a
/// window that counts every stripe's successes (each tried): each trips, or leaves the
/// windows holding other calls.
#[test]
fn a_slot_handed_to_another_thread_hands_its_window_over() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| {
            b.failure_rate(1.0, 3)
                .consecutive_failures(2)
                .per_thread_windows(true)
        });
        make(&breaker, S); // the main thread takes stripe 0 (see the module's docs)
        let old_owner: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                for call in [S, S, S, F, S] {
                    assert!(make(&breaker, call), "closed throughout");
                }
                give_back_slot();
            })
        };
        let new_owner: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                assert!(make(&breaker, F), "closed throughout");
            })
        };
        spawn_in(order, vec![old_owner, new_owner]);
        let metrics = breaker.metrics();
        assert_eq!(
            (
                metrics.state,
                metrics.openings,
                metrics.window_failures,
                metrics.consecutive_failures
            ),
            (State::Closed, 0, 2, 1),
            "{metrics:?}"
        );
        assert!(
            matches!(metrics.window_calls, 4 | 5),
            "the main thread's call, and 3 in the handed-over window or 4 in two: {metrics:?}"
        );
    });
}

/// With one stripe, which the main thread takes, every model thread shares the shared
/// stripe's window. A thread fills it (two successes, a failure: the failure stays in view);
/// then two threads age the failure with their successes while one of them records another
/// failure, as `window.rs`'s `aging_successes_race_a_failure` does in the breaker's window.
///
/// Checks that the breaker ends as the sequential reference model ends for some order of the
/// calls: the shared window judges its threads' outcomes as the breaker-wide window judges
/// every thread's.
///
/// Catches: a thread without a stripe of its own that counts its aging successes in the
/// shared stripe with a plain load and store, as an owner does (tried: the window's caller
/// told it owns the stripe it was given): two threads' successes then overwrite each other,
/// and the window places the failure after fewer successes than came before it.
#[test]
fn threads_without_a_stripe_share_one_window_like_the_model() {
    const CONFIG: ModelConfig = ModelConfig {
        consecutive_failures: Some(3),
        ..rate(1.0, 3, 3)
    };
    const BEFORE: &[Call] = &[S, S, F];
    const THREADS: &[&[Call]] = &[&[S, S], &[F, S]];
    let allowed = model_finals(CONFIG, BEFORE, THREADS, &[]);
    check_each_order(2, THREADS.len(), move |order| {
        let breaker = Arc::new(
            CONFIG
                .builder()
                .stripes(1)
                .per_thread_windows(true)
                .clock(ManualClock::new())
                .build()
                .expect("valid configuration"),
        );
        let _ = breaker.config(); // reads the settings: the main thread takes the stripe
        let before = {
            let breaker = breaker.clone();
            loom::thread::spawn(move || {
                for &call in BEFORE {
                    make(&breaker, call);
                }
            })
        };
        before.join().unwrap();
        spawn_in(order, making(&breaker, THREADS));
        assert_reached(&allowed, &breaker);
    });
}

/// The main thread (stripe 0, the first window) issues a call that hangs, and the clock moves
/// past its due time. Then two threads make calls, each in its own window (stripe 1's, and
/// the shared stripe's): one fails and then succeeds, the other succeeds. Whichever
/// admission comes first sweeps the hung call up. Two failures in a row trip.
///
/// Checks that the breaker never trips, and ends with the hung call as the one failure of
/// the main thread's run: no thread had two in a row.
///
/// Catches: a hung call recorded in the window of the thread whose admission swept it up
/// (tried: the sweeper's, as before `count_hung_calls` took the stripe the call was issued
/// on): swept by the failing thread, it makes a run of two there and trips; swept by the
/// other, its success ends that run, and the longest run is 0.
#[test]
fn a_hung_call_is_judged_in_the_window_of_the_thread_that_issued_it() {
    const LIMIT: std::time::Duration = std::time::Duration::from_millis(10);
    const DUE: std::time::Duration = std::time::Duration::from_millis(16);
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| {
            b.consecutive_failures(2)
                .slow_call(LIMIT)
                .per_thread_windows(true)
        });
        std::mem::forget(breaker.try_acquire().unwrap()); // the main thread takes stripe 0
        clock.advance(DUE);
        let results = spawn_in(
            order,
            vec![caller(&breaker, &[F, S]), caller(&breaker, &[S])],
        );
        assert!(
            results.iter().flatten().all(Option::is_some),
            "a call was rejected: the breaker tripped ({results:?})"
        );
        let metrics = breaker.metrics();
        assert_eq!(
            (
                metrics.state,
                metrics.openings,
                metrics.hung_calls,
                metrics.consecutive_failures
            ),
            (State::Closed, 0, 1, 1),
            "{metrics:?}"
        );
    });
}

/// Built for runs of up to 8 and set to runs of 3 (the main thread reconfigures, after
/// taking stripe 0): two threads each fail three calls in a row, each in its own window (one
/// owns stripe 1, the other shares the shared stripe's).
///
/// Checks that the breaker trips once: whichever thread ends its run first trips it by the
/// new rule, in its own window.
///
/// Catches: a reconfiguration that copies the rules into some windows only (`Windows::apply`;
/// tried: the first window alone, which only the main thread records into: neither model
/// thread's window learns the run of 3, and the breaker never trips).
#[test]
fn a_reconfiguration_reaches_every_threads_window() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(8).per_thread_windows(true));
        breaker.try_acquire().unwrap().success(); // the main thread takes stripe 0
        let three = hotbreaker::Config {
            consecutive_failures: Some(3),
            ..breaker.config()
        };
        breaker.reconfigure(three).unwrap();
        spawn_in(
            order,
            vec![caller(&breaker, &[F, F, F]), caller(&breaker, &[F, F, F])],
        );
        let metrics = breaker.metrics();
        assert_eq!(
            (metrics.openings, metrics.state),
            (1, State::Open),
            "{metrics:?}"
        );
    });
}

/// The quiet bit with a window per thread (`src/quiet.rs`, `Windows::are_clean_in`): thread A
/// fills its window of 3 clean and publishes the bit, which takes every window filling
/// without a failure as full; thread B's calls, a success and two failures, race that: each
/// lands on B's filling window (after the success it may still be taken; after a failure it
/// may not) or on the window taken as full. The rule trips at half of the last 3 calls. The
/// main thread holds stripe 0 without recording anything (its window is empty, and is taken
/// as full with the others).
///
/// Checks that B's two failures trip the breaker in every order: its window holds its three
/// calls, filled (two failures of three) or full (two of the last three).
///
/// Catches: a window taken as full by a plain store after its load found it filling without
/// a failure, rather than a compare-and-swap from that word (tried): B's first failure
/// commits between the two and is overwritten, and its second is one failure of the last
/// three. Also a setter that takes a filling window with a failure as full (tried: the test
/// for "no failure" left out): B's first failure is forgotten with it.
#[test]
fn a_threads_calls_race_its_filling_window_being_taken_as_full() {
    race_a_window_taken_as_full((0.5, 3), &[&[S, S, S], &[S, F, F]], |metrics| {
        assert_eq!(
            (metrics.state, metrics.openings),
            (State::Open, 1),
            "{metrics:?}"
        );
    });
}

/// As `a_threads_calls_race_its_filling_window_being_taken_as_full`, over 2 calls at 100 %,
/// B's first call a failure followed by two successes of B through `Breaker::call`, the path
/// that skips the window while the state word is quiet. Nothing trips (100 % of 2).
///
/// Checks that B's failure is out of view at the end in every order: B's two successes
/// followed it in its window. That needs the quiet bit off while B's window holds the
/// failure: if it landed first, A must not publish the bit (B's window is filling with a
/// failure); if it landed on the window taken as full, B's failure must clear the bit as it
/// clears it over any clean window.
///
/// Catches: a failure over a clean window per thread that does not clear the bit, as when
/// such a window never set it (tried: `left_clean` for the window of the whole breaker
/// only); B's successes are then skipped, and its failure stays in view. Also the plain store
/// of the model above.
#[test]
fn a_threads_failure_on_a_window_taken_as_full_clears_the_quiet_bit() {
    race_a_window_taken_as_full((1.0, 2), &[&[S, S], &[F, S, S]], |metrics| {
        assert_eq!(
            (metrics.state, metrics.window_failures),
            (State::Closed, 0),
            "{metrics:?}"
        );
    });
}

/// The quiet bit with a window per thread, set again by the last of two threads to clean its
/// own window: a run rule alone (2 failures), so that every window starts clean; threads A
/// and B each fail and then succeed in their own window, and each success ends its run and
/// forgets the failure. At the end every window is clean, and the bit must be set.
///
/// Catches (tried): the SeqCst fence that `Breaker::publish_quiet` makes before its first
/// look when there is a window per thread, left out. Each thread cleans its window and then
/// looks at the other's; without the fence both may read the other's window from before its
/// cleaning, and neither sets the bit.
///
/// Three preemptions, as every quiet-bit model in `quiet.rs`.
#[test]
fn the_last_thread_to_clean_its_window_sets_the_quiet_bit() {
    check_each_order(3, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(2).per_thread_windows(true));
        let _ = breaker.config();
        assert!(is_quiet(&breaker), "every window starts clean");
        spawn_in(
            order,
            making_with(&breaker, &[&[F, S], &[F, S]], call_through),
        );
        let metrics = breaker.metrics();
        assert!(
            is_quiet(&breaker),
            "every window is clean, the bit is not set: {metrics:?}"
        );
    });
}

/// The two models above: a window per thread with a rate rule of `(threshold, window)`;
/// thread A makes the first entry of `threads`' calls, which fill its window clean, and thread
/// B the second's, each through `Breaker::call`, in both spawn orders; `check` judges the
/// metrics at the end. The main thread takes stripe 0 without recording (see the module's
/// docs). Three preemptions, as every quiet-bit model in `quiet.rs` (these three models take
/// 10 s together at three).
fn race_a_window_taken_as_full(
    (threshold, window): (f64, usize),
    threads: &'static [&'static [Call]],
    check: fn(&hotbreaker::Metrics),
) {
    check_each_order(3, 2, move |order| {
        let (breaker, _clock) =
            small(|b| b.failure_rate(threshold, window).per_thread_windows(true));
        let _ = breaker.config();
        spawn_in(order, making_with(&breaker, threads, call_through));
        check(&breaker.metrics());
    });
}
