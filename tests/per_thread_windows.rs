//! A window per thread (`Builder::per_thread_windows`): each thread's calls are judged apart,
//! every transition empties every thread's window, and the metrics add the windows up.
//!
//! Threads here run one after another (each is joined before the next starts), so that every
//! outcome's order is known, except two that run at once on breakers of their own, each
//! order known; what threads racing on their windows do is loom's to check
//! (`loom-tests/tests/per_thread_windows.rs`).

use std::time::Duration;

use hotbreaker::{Breaker, CallError, ManualClock, State};

fn fail(breaker: &Breaker<ManualClock>) {
    let result = breaker.call(|| Err::<(), _>("down"));
    assert!(
        matches!(result, Err(CallError::Failed(_))),
        "the failure was admitted"
    );
}

fn succeed(breaker: &Breaker<ManualClock>) {
    breaker.call(|| Ok::<_, ()>(())).expect("admitted");
}

/// Runs `calls` on a thread of its own, to its end.
fn on_another_thread(
    breaker: &Breaker<ManualClock>,
    calls: impl FnOnce(&Breaker<ManualClock>) + Send,
) {
    std::thread::scope(|s| {
        s.spawn(|| calls(breaker));
    });
}

fn per_thread(builder: hotbreaker::Builder<ManualClock>) -> Breaker<ManualClock> {
    builder
        .per_thread_windows(true)
        .build()
        .expect("valid settings")
}

fn builder() -> (hotbreaker::Builder<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let builder = Breaker::builder()
        .clock(clock.clone())
        .open_duration(Duration::from_millis(10));
    (builder, clock)
}

#[test]
fn a_run_of_failures_counts_within_one_thread() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(3));
    fail(&breaker);
    fail(&breaker);
    on_another_thread(&breaker, fail);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "no thread has three in a row"
    );
    fail(&breaker);
    assert_eq!(breaker.state(), State::Open, "this thread has");
}

#[test]
fn with_one_window_the_same_calls_make_one_run() {
    // The contrast: without per-thread windows the other thread's failure joins the run.
    let (builder, _) = builder();
    let breaker = builder.consecutive_failures(3).build().unwrap();
    fail(&breaker);
    fail(&breaker);
    on_another_thread(&breaker, fail);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn another_threads_successes_do_not_dilute_this_threads_rate() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.failure_rate(0.5, 4));
    succeed(&breaker);
    succeed(&breaker);
    fail(&breaker);
    on_another_thread(&breaker, |breaker| {
        for _ in 0..10 {
            succeed(breaker);
        }
    });
    assert_eq!(
        breaker.state(),
        State::Closed,
        "one failure in this thread's 3 calls"
    );
    fail(&breaker);
    assert_eq!(
        breaker.state(),
        State::Open,
        "two in this thread's last 4, whatever the other thread did"
    );
}

#[test]
fn each_thread_needs_its_own_minimum_of_calls() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.failure_rate(0.5, 4));
    fail(&breaker);
    fail(&breaker);
    fail(&breaker);
    on_another_thread(&breaker, fail);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "neither window holds 4 calls yet, though 4 failed in all"
    );
    fail(&breaker);
    assert_eq!(breaker.state(), State::Open);
}

/// A success goes straight to its thread's stripe, without the window word, when the stripe
/// counts its generation below the stripe's hint (point 9 of `src/window/mod.rs`). With a
/// window per thread, the stripe also numbers its window's filling successes; the generation
/// before the reset left a hint that the new generation's first filling success does not
/// reach. That success must take the hint down, or the next one is counted in the stripe
/// alone, and the window neither learns that it reached its minimum nor judges it.
#[test]
fn a_filling_window_judges_its_minimum_after_a_generation_that_left_a_hint() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.failure_rate(0.5, 4));
    for _ in 0..4 {
        succeed(&breaker);
    }
    fail(&breaker); // the window is dirty, and the stripe's hint is set past its count
    breaker.reset();
    fail(&breaker);
    fail(&breaker);
    succeed(&breaker);
    assert_eq!(breaker.state(), State::Closed, "3 calls, of a minimum of 4");
    succeed(&breaker);
    assert_eq!(
        breaker.state(),
        State::Open,
        "2 of the first 4 calls of the new generation failed"
    );
}

#[test]
fn a_reset_empties_every_threads_window() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(2));
    fail(&breaker);
    on_another_thread(&breaker, |breaker| {
        fail(breaker);
        fail(breaker);
        assert_eq!(breaker.state(), State::Open);
        breaker.reset();
    });
    assert_eq!(breaker.state(), State::Closed);
    fail(&breaker);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "this thread's failure before the reset was forgotten"
    );
    fail(&breaker);
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_closing_by_probes_empties_every_threads_window() {
    let (builder, clock) = builder();
    let breaker = per_thread(builder.consecutive_failures(2));
    fail(&breaker);
    on_another_thread(&breaker, |breaker| {
        fail(breaker);
        fail(breaker);
    });
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_millis(10));
    on_another_thread(&breaker, succeed);
    assert_eq!(breaker.state(), State::Closed, "the probe closed it");
    fail(&breaker);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "this thread's failure from the earlier closed period was forgotten"
    );
}

#[test]
fn the_metrics_add_the_windows_up() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.failure_rate(0.5, 10).consecutive_failures(5));
    fail(&breaker);
    fail(&breaker);
    succeed(&breaker);
    on_another_thread(&breaker, |breaker| {
        succeed(breaker);
        fail(breaker);
        fail(breaker);
        fail(breaker);
    });
    let metrics = breaker.metrics();
    assert_eq!(metrics.window_failures, 5, "2 here and 3 there");
    assert_eq!(metrics.window_calls, 7, "3 here and 4 there");
    assert_eq!(
        metrics.consecutive_failures, 3,
        "the longest run of one thread, not the sum"
    );
}

#[test]
fn threads_beyond_the_stripes_share_one_window() {
    // One stripe: of three threads alive together, at most one owns it, so at least two
    // record into the shared window, where their failures make one run.
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(2).stripes(1));
    let together = std::sync::Barrier::new(3);
    let turn = std::sync::Mutex::new(());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                together.wait();
                let one_at_a_time = turn.lock().unwrap();
                let _ = breaker.call(|| Err::<(), _>("down"));
                drop(one_at_a_time);
                together.wait();
            });
        }
    });
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_reconfiguration_cannot_switch_the_windows() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(2));
    let mut config = breaker.config();
    config.per_thread_windows = false;
    let error = breaker.reconfigure(config).unwrap_err();
    assert_eq!(error.field(), "per_thread_windows");
    assert_eq!(
        error.to_string(),
        "invalid per_thread_windows: cannot change on a live breaker (it is true), got false"
    );
    config.per_thread_windows = true;
    config.open_duration = Duration::from_secs(1);
    breaker
        .reconfigure(config)
        .expect("other settings still change");
    assert!(breaker.config().per_thread_windows);
}

#[test]
fn a_reconfigured_rule_reaches_every_threads_window() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(3));
    on_another_thread(&breaker, |breaker| {
        // Claims this thread's window before the reconfiguration.
        succeed(breaker);
    });
    let mut config = breaker.config();
    config.consecutive_failures = Some(2);
    breaker.reconfigure(config).unwrap();
    on_another_thread(&breaker, |breaker| {
        fail(breaker);
        fail(breaker);
    });
    assert_eq!(breaker.state(), State::Open, "two in a row now trip");
}

#[test]
fn a_closing_empties_a_threads_window_even_when_its_generation_tag_comes_round_again() {
    // A window is cleared on its next use when it belongs to another generation, but the
    // window word keeps only 13 bits of the generation: 2^13 transitions later the tag is the
    // same, and only the emptying before each closing (`window/mod.rs`, point 7) keeps the
    // old failure out of the new generation. The thread that failed stays alive throughout,
    // so that its window is the one the failure went to.
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(2));
    let step = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        s.spawn(|| {
            fail(&breaker);
            step.wait();
            step.wait();
            fail(&breaker);
            assert_eq!(
                breaker.state(),
                State::Closed,
                "the failure of 8192 transitions ago was forgotten"
            );
        });
        step.wait();
        for _ in 0..(1 << 13) / 2 {
            breaker.force_open();
            breaker.reset();
        }
        step.wait();
    });
}

/// The quick path records a success in the calling thread's own window, whatever its slot.
/// Two threads hold slots at once (so at least one is not slot 0), and each breaks its own
/// run of failures with a success on a breaker of its own: a quick path that sent a success
/// to some other window (the first, say, which nobody else writes, clean) would leave that
/// thread's run whole, and its second failure would trip its breaker.
#[test]
fn a_success_breaks_the_run_in_its_own_threads_window() {
    let breakers: [Breaker<ManualClock>; 2] =
        std::array::from_fn(|_| per_thread(builder().0.consecutive_failures(2)));
    let both_hold_slots = std::sync::Barrier::new(breakers.len());
    std::thread::scope(|s| {
        for breaker in &breakers {
            let both_hold_slots = &both_hold_slots;
            s.spawn(move || {
                // The failure claims this thread's slot; the barrier keeps both slots taken
                // while the successes are recorded.
                fail(breaker);
                both_hold_slots.wait();
                succeed(breaker);
                fail(breaker);
            });
        }
    });
    for (thread, breaker) in breakers.iter().enumerate() {
        assert_eq!(
            breaker.state(),
            State::Closed,
            "thread {thread}: failure, success, failure is no run of 2"
        );
    }
}

#[test]
fn a_hung_call_counts_in_the_window_of_the_thread_that_issued_it() {
    let (builder, clock) = builder();
    let breaker = per_thread(
        builder
            .consecutive_failures(2)
            .slow_call(Duration::from_millis(100)),
    );
    fail(&breaker);
    on_another_thread(&breaker, |breaker| {
        std::mem::forget(breaker.try_acquire().expect("closed")); // a call that hangs
    });
    clock.advance(Duration::from_millis(160));
    // This thread's next call sweeps the hung call up: that thread's first failure, not a
    // second one in a row of this thread's.
    let call = breaker.try_acquire().expect("still closed");
    assert_eq!(breaker.metrics().hung_calls, 1);
    assert_eq!(breaker.state(), State::Closed, "no thread has two in a row");
    call.failure();
    assert_eq!(
        breaker.state(),
        State::Open,
        "this thread's second in a row"
    );
}

#[test]
fn the_metrics_report_the_longest_run_of_any_window_not_the_sum_of_their_runs() {
    // Both threads' runs are still going: the sum (5) would differ from the longest (3).
    let (builder, _) = builder();
    let breaker = per_thread(builder.consecutive_failures(5));
    fail(&breaker);
    fail(&breaker);
    on_another_thread(&breaker, |breaker| {
        fail(breaker);
        fail(breaker);
        fail(breaker);
    });
    assert_eq!(
        breaker.state(),
        State::Closed,
        "no thread has five in a row"
    );
    assert_eq!(breaker.metrics().consecutive_failures, 3);
}

/// After a reset, a thread's own window fills again, and the success that completes it is
/// judged there (2 failures of 4 trip). The thread's stripe still holds the hint its failure
/// left in the generation before, far ahead of the new count.
///
/// Catches: a quick path that counts a success in its own stripe before asking the window
/// word, as the one window's does (`window/mod.rs`, point 9). With a window per thread that
/// stripe also numbers the window's filling successes; the success that completes the window
/// is then only counted, and the breaker stays closed.
#[test]
fn a_window_that_fills_again_after_a_reset_judges_the_success_that_fills_it() {
    let (builder, _) = builder();
    let breaker = per_thread(builder.failure_rate(0.5, 4));
    for _ in 0..4 {
        succeed(&breaker);
    }
    // Dirty: this thread's stripe is told that many successes may pass before it checks.
    fail(&breaker);
    breaker.reset();
    fail(&breaker);
    fail(&breaker);
    succeed(&breaker);
    assert_eq!(breaker.state(), State::Closed, "three calls of four");
    succeed(&breaker);
    assert_eq!(breaker.state(), State::Open, "2 failures of 4 calls");
}
