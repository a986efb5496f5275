//! Every transition of the state machine, one scenario each, on a manual clock.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use hotbreaker::{Breaker, CallError, ManualClock, Outcome, State, Transition, Trigger, TripRule};

#[path = "support/outcomes.rs"]
mod outcomes;
use outcomes::record;

fn breaker(
    configure: impl FnOnce(hotbreaker::Builder) -> hotbreaker::Builder,
) -> (Breaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = configure(Breaker::builder().open_duration(Duration::from_secs(1)))
        .clock(clock.clone())
        .build()
        .expect("valid configuration");
    (breaker, clock)
}

#[test]
fn successes_keep_it_closed() {
    let (breaker, _) = breaker(|b| {
        b.failure_rate(0.5, 4)
            .consecutive_failures(2)
            .count_successes(true)
    });
    record(&breaker, &"s".repeat(1000));
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().successes, Some(1000));
}

#[test]
fn consecutive_failures_trip_and_a_success_ends_the_run() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(3));
    record(&breaker, "ffsffsff");
    assert_eq!(breaker.state(), State::Closed, "no run of three yet");
    assert_eq!(breaker.metrics().consecutive_failures, 2);
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().openings, 1);
}

#[test]
fn ignored_outcomes_neither_break_nor_extend_a_run() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(3));
    record(&breaker, "ffi");
    assert_eq!(
        breaker.metrics().consecutive_failures,
        2,
        "the ignored call left the run alone"
    );
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn rate_is_judged_only_once_the_window_is_full() {
    let (breaker, _) = breaker(|b| b.failure_rate(0.5, 4));
    record(&breaker, "fff");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "3 of 3 failed, but the window holds 4"
    );
    record(&breaker, "s");
    assert_eq!(
        breaker.state(),
        State::Open,
        "the success that fills the window trips it: 3 of 4"
    );
}

#[test]
fn minimum_calls_judge_a_partial_window() {
    let (breaker, _) = breaker(|b| b.failure_rate(0.5, 10).minimum_calls(4));
    record(&breaker, "ffs");
    assert_eq!(breaker.state(), State::Closed);
    record(&breaker, "s");
    assert_eq!(breaker.state(), State::Open, "2 of the 4 calls held");
}

#[test]
fn thresholds_are_met_as_a_person_computes_them() {
    // 0.15 × 40 is 6.000000000000001 in floating point; 6 / 40 is exactly 0.15.
    let (breaker, _) = breaker(|b| b.failure_rate(0.15, 40));
    record(&breaker, &"s".repeat(34));
    record(&breaker, "fffff");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "5 of 39 held, window not full"
    );
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Open, "6 of 40 meets 0.15");
}

#[test]
fn the_window_slides() {
    let (breaker, _) = breaker(|b| b.failure_rate(0.5, 4));
    record(&breaker, "ffss"); // 2 of 4: trips
    assert_eq!(breaker.state(), State::Open);
    let (breaker, _) = breaker_with_window_4();
    record(&breaker, "fsss"); // 1 of 4
    record(&breaker, "f"); // the first failure left the window: still 1 of 4
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        (
            breaker.metrics().window_failures,
            breaker.metrics().window_calls
        ),
        (1, 4)
    );
    record(&breaker, "f"); // 2 of 4
    assert_eq!(breaker.state(), State::Open);
}

fn breaker_with_window_4() -> (Breaker<ManualClock>, ManualClock) {
    breaker(|b| b.failure_rate(0.5, 4))
}

#[test]
fn open_rejects_until_the_deadline_then_admits_one_probe() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(1));
    record(&breaker, "f");
    let rejected = breaker.try_acquire().unwrap_err();
    assert_eq!(rejected.state(), State::Open);
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(1)));
    clock.advance(Duration::from_millis(999));
    assert!(breaker.try_acquire().is_err());
    clock.advance(Duration::from_millis(1));
    assert_eq!(breaker.state(), State::HalfOpen, "the open period is over");
    let probe = breaker
        .try_acquire()
        .expect("the first call after the deadline probes");
    assert!(probe.is_probe());
    assert_eq!(
        breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen,
        "one probe at a time"
    );
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
    let metrics = breaker.metrics();
    assert_eq!(
        (
            metrics.openings,
            metrics.half_openings,
            metrics.closings,
            metrics.rejected
        ),
        (1, 1, 1, 3)
    );
}

#[test]
fn call_on_an_open_breaker_rejects_without_calling_counts_and_later_probes() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(1));
    let _ = breaker.call(|| Err::<(), _>("down"));
    clock.advance(Duration::from_millis(400));
    let mut called = false;
    let err = breaker
        .call(|| {
            called = true;
            Ok::<(), &str>(())
        })
        .unwrap_err();
    let CallError::Rejected(rejected) = err else {
        panic!("expected a rejection, got {err:?}")
    };
    assert!(!called, "the dependency is not called while open");
    assert_eq!(rejected.retry_after(), Some(Duration::from_millis(600)));
    assert_eq!(breaker.metrics().rejected, 1);
    // At the deadline the same call is the probe, and its success closes the breaker.
    clock.advance(Duration::from_millis(600));
    assert_eq!(breaker.call(|| Ok::<u8, &str>(7)), Ok(7));
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().rejected, 1);
}

#[test]
fn a_failed_probe_reopens_for_a_new_period() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(1));
    record(&breaker, "f");
    clock.advance(Duration::from_secs(1));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().openings, 2);
    clock.advance(Duration::from_millis(999));
    assert!(breaker.try_acquire().is_err(), "a new full open period");
}

#[test]
fn success_threshold_needs_that_many_probe_successes() {
    let (breaker, clock) = breaker(|b| {
        b.consecutive_failures(1)
            .half_open_probes(2)
            .success_threshold(3)
    });
    record(&breaker, "f");
    clock.advance(Duration::from_secs(1));
    let first = breaker.try_acquire().unwrap();
    let second = breaker.try_acquire().unwrap();
    assert!(breaker.try_acquire().is_err(), "two probes out");
    first.success();
    let third = breaker
        .try_acquire()
        .expect("a successful probe frees its place");
    second.success();
    assert_eq!(breaker.state(), State::HalfOpen);
    third.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_dropped_probe_gives_its_place_back() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(1));
    record(&breaker, "f");
    clock.advance(Duration::from_secs(1));
    drop(breaker.try_acquire().unwrap());
    breaker
        .try_acquire()
        .expect("the next call may probe")
        .ignore();
    breaker
        .try_acquire()
        .expect("an ignored probe frees its place too")
        .success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        (breaker.metrics().released, breaker.metrics().ignored),
        (1, 1)
    );
}

#[test]
fn closing_starts_with_an_empty_window() {
    let (breaker, clock) = breaker(|b| b.failure_rate(0.5, 4));
    record(&breaker, "ffff");
    clock.advance(Duration::from_secs(1));
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        (
            breaker.metrics().window_failures,
            breaker.metrics().window_calls
        ),
        (0, 0)
    );
    record(&breaker, "fss");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the window is filling again"
    );
}

#[test]
fn verdicts_from_before_a_transition_do_not_count_after_it() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(2));
    let old = breaker.try_acquire().unwrap();
    record(&breaker, "ff");
    clock.advance(Duration::from_secs(1));
    breaker.try_acquire().unwrap().success(); // closed again, new generation
    old.failure(); // issued in the first closed generation
    assert_eq!(breaker.metrics().consecutive_failures, 0);
    record(&breaker, "f");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the stale failure did not start a run"
    );
    assert_eq!(
        breaker.metrics().failures,
        4,
        "but it is counted in the metrics"
    );
}

#[test]
fn forcing_and_resetting() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(1));
    breaker.force_open();
    assert_eq!(
        breaker.try_acquire().unwrap_err().state(),
        State::ForcedOpen
    );
    clock.advance(Duration::from_secs(3600));
    assert_eq!(
        breaker.state(),
        State::ForcedOpen,
        "no open period ends a forced opening"
    );
    breaker.force_closed();
    record(&breaker, "fff");
    assert_eq!(breaker.state(), State::ForcedClosed, "never trips");
    breaker.reset();
    assert_eq!(breaker.state(), State::Closed);
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn a_panic_during_the_call_counts_as_a_failure() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = breaker.call(|| -> Result<(), ()> { panic!("the dependency client panicked") });
    }));
    assert!(result.is_err());
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().failures, 1);
}

#[test]
fn call_classifies_and_tells_rejection_from_failure() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(2));
    let classify = |r: &Result<u16, u16>| match r {
        Ok(_) => Outcome::Success,
        Err(400..=499) => Outcome::Ignore,
        Err(_) => Outcome::Failure,
    };
    assert_eq!(
        breaker.call_with(classify, || Err::<u16, u16>(404)),
        Err(CallError::Failed(404))
    );
    assert_eq!(
        breaker.call_with(classify, || Err::<u16, u16>(503)),
        Err(CallError::Failed(503))
    );
    assert_eq!(
        breaker.call_with(classify, || Err::<u16, u16>(400)),
        Err(CallError::Failed(400))
    );
    assert_eq!(breaker.state(), State::Closed, "4xx are ignored");
    let _ = breaker.call_with(classify, || Err::<u16, u16>(500));
    let rejected = breaker
        .call_with(classify, || Ok::<u16, u16>(200))
        .unwrap_err();
    assert!(rejected.is_rejected());
    assert_eq!(
        breaker.call_or_else(|| Ok::<_, u16>("fresh"), |_| "cached"),
        "cached"
    );
}

#[test]
fn into_failed_gives_the_calls_own_error_and_nothing_for_a_rejection() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(1));
    let failed = breaker.call(|| Err::<(), _>("refused")).unwrap_err();
    assert_eq!(failed.into_failed(), Some("refused"));
    let rejected = breaker.call(|| Ok::<(), &str>(())).unwrap_err();
    assert!(rejected.is_rejected());
    assert_eq!(
        rejected.into_failed(),
        None,
        "the dependency was not called: no error of its own"
    );
}

#[test]
fn only_closed_and_forced_closed_permit_every_call() {
    for (state, all) in [
        (State::Closed, true),
        (State::Open, false),
        (State::HalfOpen, false),
        (State::ForcedOpen, false),
        (State::ForcedClosed, true),
    ] {
        assert_eq!(state.permits_all(), all, "{state}");
    }
}

#[test]
fn listeners_see_each_transition_and_may_call_back() {
    let seen: Arc<Mutex<Vec<Transition>>> = Arc::default();
    let calls_back = Arc::new(AtomicUsize::new(0));
    let clock = ManualClock::new();
    let breaker = Arc::new_cyclic(|weak: &std::sync::Weak<Breaker<ManualClock>>| {
        let (seen, calls_back, weak) = (seen.clone(), calls_back.clone(), weak.clone());
        Breaker::builder()
            .consecutive_failures(2)
            .open_duration(Duration::from_secs(1))
            .on_transition(move |t| {
                seen.lock().unwrap().push(*t);
                if let Some(breaker) = weak.upgrade() {
                    // Calling back from a listener must not deadlock or corrupt anything.
                    let _ = breaker.metrics();
                    let _ = breaker.try_acquire().map(|p| p.ignore());
                    calls_back.fetch_add(1, Ordering::Relaxed);
                }
            })
            .clock(clock.clone())
            .build()
            .unwrap()
    });
    record(&breaker, "ff");
    clock.advance(Duration::from_secs(1));
    breaker.try_acquire().unwrap().success();
    let seen = seen.lock().unwrap();
    let path: Vec<_> = seen.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(
        path,
        [
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed)
        ]
    );
    assert_eq!(
        seen[0].trigger,
        Trigger::Tripped {
            rule: TripRule::ConsecutiveFailures,
            failures: 2,
            calls: 2
        }
    );
    assert_eq!(seen[0].open_for, Some(Duration::from_secs(1)));
    assert_eq!(
        seen.iter().map(|t| t.generation).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(calls_back.load(Ordering::Relaxed), 3);
}

/// What the breakers' second listeners heard, as (breaker, from, to, generation), in one list.
type Heard = Arc<Mutex<Vec<(&'static str, State, State, u32)>>>;

/// A breaker that trips at its first failure, whose first listener is `act` and whose second
/// writes down what it hears in `heard`, under `name`.
fn listening(
    name: &'static str,
    heard: &Heard,
    act: impl Fn(&Transition) + Send + Sync + 'static,
) -> Breaker {
    let heard = heard.clone();
    Breaker::builder()
        .consecutive_failures(1)
        .on_transition(act)
        .on_transition(move |t| {
            heard
                .lock()
                .unwrap()
                .push((name, t.from, t.to, t.generation))
        })
        .build()
        .unwrap()
}

/// Calls `action` on the breaker in `cell` once there is one.
fn on(cell: &Arc<std::sync::OnceLock<Arc<Breaker>>>, action: fn(&Breaker)) -> impl Fn() + use<> {
    let cell = cell.clone();
    move || {
        if let Some(breaker) = cell.get() {
            action(breaker);
        }
    }
}

/// Breaker "a" (see `listening`) whose first listener resets it whenever it moves to `to`,
/// then calls `after`.
fn resetting_itself_on(to: State, heard: &Heard, after: fn()) -> Arc<Breaker> {
    let cell: Arc<std::sync::OnceLock<Arc<Breaker>>> = Arc::default();
    let reset = on(&cell, Breaker::reset);
    let breaker = Arc::new(listening("a", heard, move |t| {
        if t.to == to {
            reset();
            after();
        }
    }));
    let _ = cell.set(breaker.clone());
    breaker
}

#[test]
fn a_transition_made_by_a_listener_reaches_the_later_listeners_after_the_one_they_hear() {
    let heard = Heard::default();
    let breaker = resetting_itself_on(State::Open, &heard, || {});
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("a", State::Closed, State::Open, 1),
            ("a", State::Open, State::Closed, 2)
        ]
    );
}

#[test]
fn two_transitions_made_by_one_listener_reach_the_later_listeners_oldest_first() {
    // Both are held back while the opening is heard: the second must neither be told at once
    // (a place for one only) nor be taken out before the first (newest first).
    let heard = Heard::default();
    let cell: Arc<std::sync::OnceLock<Arc<Breaker>>> = Arc::default();
    let (force_open, reset) = (on(&cell, Breaker::force_open), on(&cell, Breaker::reset));
    let breaker = Arc::new(listening("a", &heard, move |t| {
        if t.to == State::Open {
            force_open();
            reset();
        }
    }));
    let _ = cell.set(breaker.clone());
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("a", State::Closed, State::Open, 1),
            ("a", State::Open, State::ForcedOpen, 2),
            ("a", State::ForcedOpen, State::Closed, 3)
        ]
    );
}

#[test]
fn a_transition_made_by_a_listener_of_another_breaker_waits_for_the_one_it_follows() {
    // a opens; its listener forces b open; b's listener resets a, while a's listeners are
    // still hearing its opening.
    let heard = Heard::default();
    let (a_cell, b_cell): (Arc<std::sync::OnceLock<Arc<Breaker>>>, Arc<_>) = Default::default();
    let (force_b, reset_a) = (
        on(&b_cell, Breaker::force_open),
        on(&a_cell, Breaker::reset),
    );
    let a = Arc::new(listening("a", &heard, move |t| {
        if t.to == State::Open {
            force_b();
        }
    }));
    let b = Arc::new(listening("b", &heard, move |t| {
        if t.to == State::ForcedOpen {
            reset_a();
        }
    }));
    let _ = (a_cell.set(a.clone()), b_cell.set(b.clone()));
    a.try_acquire().unwrap().failure();
    assert_eq!((a.state(), b.state()), (State::Closed, State::ForcedOpen));
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("b", State::Closed, State::ForcedOpen, 1),
            ("a", State::Closed, State::Open, 1),
            ("a", State::Open, State::Closed, 2)
        ]
    );
}

#[test]
fn a_breaker_told_inside_another_breakers_listener_keeps_its_own_order() {
    // a opens; its listener forces b open; b's listener resets b, while a's listeners and
    // b's are both running on this thread.
    let heard = Heard::default();
    let b_cell: Arc<std::sync::OnceLock<Arc<Breaker>>> = Arc::default();
    let (force_b, reset_b) = (
        on(&b_cell, Breaker::force_open),
        on(&b_cell, Breaker::reset),
    );
    let a = listening("a", &heard, move |t| {
        if t.to == State::Open {
            force_b();
        }
    });
    let b = Arc::new(listening("b", &heard, move |t| {
        if t.to == State::ForcedOpen {
            reset_b();
        }
    }));
    let _ = b_cell.set(b.clone());
    a.try_acquire().unwrap().failure();
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("b", State::Closed, State::ForcedOpen, 1),
            ("b", State::ForcedOpen, State::Closed, 2),
            ("a", State::Closed, State::Open, 1)
        ]
    );
}

#[test]
fn a_transition_made_while_a_thread_exits_is_held_back_too() {
    /// Forces its breaker open when the thread's locals are dropped.
    struct ForceOpenOnExit(Arc<Breaker>);
    impl Drop for ForceOpenOnExit {
        fn drop(&mut self) {
            self.0.force_open();
        }
    }
    thread_local! {
        static ON_EXIT: std::cell::RefCell<Option<ForceOpenOnExit>> =
            const { std::cell::RefCell::new(None) };
    }
    let heard = Heard::default();
    let breaker = resetting_itself_on(State::ForcedOpen, &heard, || {});
    let on_exit = breaker.clone();
    std::thread::spawn(move || {
        // Registered before the breaker's own thread-locals are first used.
        ON_EXIT.with(|slot| *slot.borrow_mut() = Some(ForceOpenOnExit(on_exit.clone())));
        on_exit.force_open();
    })
    .join()
    .unwrap();
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("a", State::Closed, State::ForcedOpen, 1),
            ("a", State::ForcedOpen, State::Closed, 2),
            ("a", State::Closed, State::ForcedOpen, 3),
            ("a", State::ForcedOpen, State::Closed, 4)
        ]
    );
}

#[test]
fn a_listener_that_panics_drops_the_transitions_held_back_behind_it() {
    let heard = Heard::default();
    let breaker = resetting_itself_on(State::Open, &heard, || panic!("a listener's own failure"));
    let permit = breaker.try_acquire().unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| permit.failure()));
    assert!(panicked.is_err());
    assert_eq!(breaker.state(), State::Closed);
    // The next transition is told alone, not after the one the panic cut off.
    breaker.force_open();
    assert_eq!(
        *heard.lock().unwrap(),
        [("a", State::Closed, State::ForcedOpen, 3)]
    );
}

#[test]
fn bad_configurations_name_the_field() {
    let cases: Vec<(hotbreaker::Builder, &str)> = vec![
        (
            Breaker::builder().failure_rate(0.0, 10),
            "failure_rate.threshold",
        ),
        (
            Breaker::builder().failure_rate(f64::NAN, 10),
            "failure_rate.threshold",
        ),
        (
            Breaker::builder().failure_rate(0.5, 0),
            "failure_rate.window",
        ),
        (
            Breaker::builder().failure_rate(0.5, 40_000),
            "failure_rate.window",
        ),
        (
            Breaker::builder().failure_rate(0.5, 10).minimum_calls(11),
            "failure_rate.minimum_calls",
        ),
        (
            Breaker::builder().consecutive_failures(5).minimum_calls(3),
            "minimum_calls",
        ),
        (
            Breaker::builder().consecutive_failures(0),
            "consecutive_failures",
        ),
        (
            Breaker::builder().open_duration(Duration::ZERO),
            "open_duration",
        ),
        (Breaker::builder().half_open_probes(0), "half_open_probes"),
        (
            Breaker::builder().success_threshold(5000),
            "success_threshold",
        ),
        (Breaker::builder().stripes(0), "stripes"),
    ];
    for (builder, field) in cases {
        let err = builder.build().expect_err(field);
        assert_eq!(err.field(), field, "{err}");
        assert!(
            err.to_string().starts_with(&format!("invalid {field}: ")),
            "{err}"
        );
    }
}

/// `ConfigError::reason` promises the value given, also for `minimum_calls` without a rate
/// rule to apply to.
#[test]
fn minimum_calls_without_a_rate_rule_is_refused_with_the_value_given() {
    let err = Breaker::builder()
        .consecutive_failures(5)
        .minimum_calls(3)
        .build()
        .unwrap_err();
    assert_eq!(err.field(), "minimum_calls");
    assert!(err.reason().ends_with("got 3"), "{err}");
}

#[test]
fn a_listener_that_panics_on_half_opening_does_not_keep_the_probe_place() {
    let clock = ManualClock::new();
    let panic_once = Arc::new(AtomicBool::new(true));
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone())
        .on_transition({
            let panic_once = Arc::clone(&panic_once);
            move |transition| {
                if transition.trigger == Trigger::OpenPeriodEnded
                    && panic_once.swap(false, Ordering::SeqCst)
                {
                    panic!("a listener with a bug");
                }
            }
        })
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        breaker.try_acquire().map(|permit| permit.success())
    }));
    assert!(attempt.is_err(), "the listener panicked inside try_acquire");
    assert_eq!(
        breaker.metrics().probes_out,
        0,
        "a probe out that nobody holds"
    );
    let probe = breaker
        .try_acquire()
        .expect("the probe place is free again");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_permit_dropped_by_a_panic_gives_its_admission_back() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _permit = breaker.try_acquire().unwrap();
        panic!("a bug in the caller's own code, not a failure of the dependency");
    }));
    assert!(result.is_err());
    let metrics = breaker.metrics();
    assert_eq!((metrics.failures, metrics.released), (0, 1), "{metrics:?}");
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_panic_in_the_classifier_counts_as_a_failure() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = breaker.call_with(
            |_: &Result<(), ()>| -> Outcome { panic!("a classifier with a bug") },
            || Ok(()),
        );
    }));
    assert!(result.is_err());
    assert_eq!(breaker.metrics().failures, 1);
    assert_eq!(breaker.state(), State::Open);
}

/// A clock whose epoch is the Unix epoch: decades of nanoseconds before the breaker exists.
#[derive(Default)]
struct WallClock;

impl hotbreaker::Clock for WallClock {
    fn now_nanos(&self) -> u64 {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        u64::try_from(since_epoch.as_nanos()).unwrap()
    }
}

#[test]
fn a_clock_with_an_old_epoch_keeps_the_breaker_open_for_its_period() {
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(3600))
        .probe_timeout(Duration::from_secs(3600))
        .clock(WallClock)
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    let rejected = breaker.try_acquire().unwrap_err();
    assert!(rejected.retry_after().unwrap() > Duration::from_secs(3000));
    assert!(breaker.end_open_period());
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    assert!(
        breaker.try_acquire().is_err(),
        "the probe is not taken for timed out"
    );
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_failure_from_two_to_the_fourteen_generations_ago_is_not_counted() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(2));
    let old = breaker.try_acquire().unwrap(); // generation 0
    for _ in 0..1 << 14 {
        breaker.reset(); // generation 16,384: the window's tag is the same
    }
    old.failure(); // stale
    assert_eq!(breaker.metrics().consecutive_failures, 0);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "one real failure tripped a run of 2"
    );
}

#[test]
fn a_success_from_two_to_the_fourteen_generations_ago_does_not_age_the_window() {
    // The run rule: the stale success must not end the run of one failure.
    let (run, _) = breaker(|b| b.consecutive_failures(2));
    let old = run.try_acquire().unwrap(); // generation 0
    for _ in 0..1 << 14 {
        run.reset(); // generation 16,384: the window's tag is the same
    }
    run.try_acquire().unwrap().failure();
    old.success(); // stale
    assert_eq!(run.metrics().consecutive_failures, 1);
    run.try_acquire().unwrap().failure();
    assert_eq!(run.state(), State::Open, "two failures in a row");

    // The rate rule: the stale success must not forget the failure in a full window.
    let (rate, _) = breaker(|b| b.failure_rate(1.0, 2));
    let old = rate.try_acquire().unwrap();
    for _ in 0..1 << 14 {
        rate.reset();
    }
    record(&rate, "ssf");
    old.success();
    let metrics = rate.metrics();
    assert_eq!((metrics.window_failures, metrics.window_calls), (1, 2));
    record(&rate, "f");
    assert_eq!(
        rate.state(),
        State::Open,
        "the window holds two failures of two"
    );
}

#[test]
fn an_open_period_ends_on_the_microsecond_never_before_it_is_due() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_nanos(1500))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    let rejected = breaker.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_micros(2)));
    clock.advance(Duration::from_nanos(1500));
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_nanos(500));
    assert_eq!(breaker.state(), State::HalfOpen);
}

// The window word names its closed generation by a 13-bit tag. Two of its decisions once
// trusted that tag where the full generation should decide; these tests failed then.

/// A closed generation 2^14 transitions after the last closed one (a multiple of the tag's
/// 2^13), with none closed in between, has that one's tag: the closing must still empty the
/// window (`window/mod.rs`, point 7), or the old failures count in the new generation.
#[test]
fn reset_after_2_pow_14_generations_none_closed_empties_the_window() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(2));
    record(&breaker, "f"); // generation 0: a run of one
    for _ in 1..1 << 14 {
        breaker.force_open(); // generations 1 ..= 16383, none closed
    }
    breaker.reset(); // generation 16384, the same tag as 0
    assert_eq!(breaker.metrics().consecutive_failures, 0, "an empty window");
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Closed, "one failure of a run of 2");
}

/// The same through a probe round: the closing probe empties the window too.
#[test]
fn a_closing_probe_2_pow_14_generations_on_empties_the_window() {
    let (breaker, clock) = breaker(|b| b.consecutive_failures(2));
    record(&breaker, "f"); // generation 0: a run of one
    let second = Duration::from_secs(1);
    for _ in 1..(1 << 14) - 1 {
        // Generations 1 ..= 16382: open periods, each ended and opened again, none closed.
        assert_eq!(breaker.open_for(second), Ok(true));
        clock.advance(second);
    }
    let probe = breaker.try_acquire().expect("the open period is over");
    assert!(probe.is_probe());
    assert_eq!(probe.generation(), (1 << 14) - 1, "half-open");
    probe.success(); // generation 16384, the same tag as 0
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().consecutive_failures, 0, "an empty window");
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Closed, "one failure of a run of 2");
}

/// A breaker whose generation 0 recorded `failures` failures in runs of three (a run of four
/// trips, a rate of 100 % over 32,768 calls too; neither does), then reset 2^14 times: it is
/// closed in generation 16384, which has the tag of 0.
fn failures_in_runs_of_three_then_2_pow_14_resets(failures: u32) -> Breaker<ManualClock> {
    let (breaker, _) = breaker(|b| b.failure_rate(1.0, 32_768).consecutive_failures(4));
    for i in 0..failures {
        record(&breaker, "f");
        if i % 3 == 2 {
            record(&breaker, "s");
        }
    }
    assert_eq!(breaker.state(), State::Closed);
    for _ in 0..1 << 14 {
        breaker.reset();
    }
    breaker
}

/// A failure's look-back past this generation's failure 0 wraps the 16-bit failure number
/// and could match the failure record of a generation 2^14 back, a multiple of the tag's
/// 2^13 (it needs 65,536 failures in that generation, none tripping): the window word's
/// wrapped bit says whether earlier numbers exist.
#[test]
fn a_look_back_never_reaches_a_failure_record_of_a_generation_2_pow_14_back() {
    // Generation 0: 65,536 failures in runs of three; no rule trips.
    let breaker = failures_in_runs_of_three_then_2_pow_14_resets(65_536);
    // Failure 1 of this generation looks 3 back for a run of 4: number 65,534 of
    // generation 0, whose record says 21,844 successes before it.
    for _ in 0..21_844 {
        record(&breaker, "s");
    }
    record(&breaker, "ff");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "two failures are no run of four"
    );
}

/// What the metrics report walks back from the newest failure the same way, and must stop at
/// this generation's failure 0 too.
#[test]
fn the_window_metrics_never_count_a_failure_record_of_a_generation_2_pow_14_back() {
    // Generation 0: 65,537 failures in runs of three, so that the ring keeps the record of
    // failure 65,535 (21,845 successes before it); no rule trips.
    let breaker = failures_in_runs_of_three_then_2_pow_14_resets(65_537);
    // Failure 0 of this generation, after as many successes as that record counts.
    record(&breaker, &"s".repeat(21_845));
    record(&breaker, "f");
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.window_failures, metrics.consecutive_failures),
        (1, 1),
        "one failure in this generation"
    );
}

/// The other side of the wrapped bit: within one generation, a run that crosses the 16-bit
/// failure count's wrap is still a run, and trips.
#[test]
fn a_run_across_the_16_bit_wrap_of_one_generation_trips() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(4));
    for _ in 0..65_534 / 2 {
        record(&breaker, "ffs"); // failures 0 ..= 65,533, in runs of two
    }
    record(&breaker, "fff"); // 65,534, 65,535 and 0 (the count wrapped)
    assert_eq!(breaker.metrics().consecutive_failures, 3);
    record(&breaker, "f"); // number 1: its run reaches back past number 0
    assert_eq!(breaker.state(), State::Open, "four failures in a row");
}

/// The metrics count such a run whole too.
#[test]
fn the_metrics_count_a_run_across_the_16_bit_wrap_of_one_generation() {
    let (breaker, _) = breaker(|b| b.consecutive_failures(5));
    for _ in 0..65_534 / 2 {
        record(&breaker, "ffs");
    }
    record(&breaker, "ffff"); // 65,534, 65,535, 0 and 1
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().consecutive_failures, 4);
}

#[test]
fn a_panic_of_a_probe_made_through_call_counts_as_a_failure() {
    // A half-open call goes through the out-of-line path, not the healthy inlined one.
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    assert_eq!(breaker.state(), State::HalfOpen);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = breaker.call(|| -> Result<(), ()> { panic!("the probe's client panicked") });
    }));
    assert!(caught.is_err());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.released), (2, 0), "{m:?}");
    assert_eq!(breaker.state(), State::Open, "a failed probe reopens");
}

/// A closing from half-open empties the window before its swap (`src/window/mod.rs`, point
/// 7), whatever generation's tag the window still has, so the breaker is quiet (its healthy
/// calls take the state word alone) as soon as the closing probe closes it. Catches a closing
/// that empties only a window of its own generation's tag: the window left as the tripping
/// generation had it, dirty, keeps the quiet bit off until a success takes the slow path, and
/// with a window per thread, until every thread's old window is touched again.
#[test]
fn a_closing_probe_leaves_the_breaker_quiet_at_once() {
    for per_thread in [false, true] {
        let clock = ManualClock::new();
        let breaker = Breaker::builder()
            .consecutive_failures(2)
            .open_duration(Duration::from_secs(1))
            .per_thread_windows(per_thread)
            .clock(clock.clone())
            .build()
            .unwrap();
        let quiet = |breaker: &Breaker<ManualClock>| hotbreaker::testing::is_quiet(breaker);
        assert!(quiet(&breaker), "quiet from the start");
        breaker.try_acquire().unwrap().failure();
        assert!(!quiet(&breaker), "a failure in view");
        breaker.try_acquire().unwrap().failure(); // trips: open in generation 1
        clock.advance(Duration::from_secs(1));
        let probe = breaker.try_acquire().expect("the open period is over");
        assert!(probe.is_probe());
        probe.success(); // closed in generation 3, whose tag is not generation 0's
        assert_eq!(breaker.state(), State::Closed);
        assert!(
            quiet(&breaker),
            "per thread {per_thread}: the closing emptied the window, so the breaker is quiet"
        );
    }
}
