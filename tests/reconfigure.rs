//! Live reconfiguration: new settings apply without losing the state or the window; settings
//! that cannot apply are refused and change nothing.

use std::time::Duration;

use hotbreaker::{Breaker, Config, FailureRateConfig, ManualClock, State};

#[path = "support/outcomes.rs"]
mod outcomes;
use outcomes::record;

fn rate(threshold: f64, window: usize) -> Option<FailureRateConfig> {
    Some(FailureRateConfig {
        threshold,
        window,
        minimum_calls: None,
    })
}

#[test]
fn a_lower_threshold_judges_the_failures_already_held() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .failure_rate(0.5, 10)
        .clock(clock)
        .build()
        .unwrap();
    record(&breaker, "ssssssssff"); // 2 of 10: below 0.5
    assert_eq!(breaker.metrics().window_failures, 2);
    let config = Config {
        failure_rate: rate(0.3, 10),
        ..breaker.config()
    };
    breaker.reconfigure(config).unwrap();
    assert_eq!(breaker.config(), config);
    assert_eq!(breaker.metrics().window_failures, 2, "the window was kept");
    record(&breaker, "f"); // 3 of the last 10
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn new_rules_judge_at_the_next_call_judged_not_at_the_reconfiguration() {
    let lowered = |breaker: &Breaker<ManualClock>, minimum_calls| {
        let config = Config {
            failure_rate: Some(FailureRateConfig {
                threshold: 0.3,
                window: 10,
                minimum_calls,
            }),
            ..breaker.config()
        };
        breaker.reconfigure(config).unwrap();
    };
    // A full window already over the new threshold: neither the reconfiguration nor a
    // success trips; the next failure does.
    let full = Breaker::builder()
        .failure_rate(0.5, 10)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    record(&full, "ssssssffff"); // 4 of 10
    lowered(&full, None);
    assert_eq!(full.state(), State::Closed);
    record(&full, "s");
    assert_eq!(full.state(), State::Closed);
    record(&full, "f");
    assert_eq!(full.state(), State::Open);
    // A filling window: the success that brings it to its minimum is judged, and trips.
    let filling = Breaker::builder()
        .failure_rate(0.9, 10)
        .minimum_calls(3)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    record(&filling, "ff");
    lowered(&filling, Some(3));
    assert_eq!(filling.state(), State::Closed);
    record(&filling, "s");
    assert_eq!(filling.state(), State::Open);
}

#[test]
fn the_state_survives_and_new_durations_apply_to_the_next_opening() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(10))
        .clock(clock.clone())
        .build()
        .unwrap();
    record(&breaker, "f");
    breaker
        .reconfigure(Config {
            open_duration: Duration::from_secs(1),
            ..breaker.config()
        })
        .unwrap();
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_secs(1));
    assert!(
        breaker.try_acquire().is_err(),
        "the current opening keeps its 10 s"
    );
    clock.advance(Duration::from_secs(9));
    breaker.try_acquire().unwrap().failure(); // failed probe: a new opening, with 1 s
    clock.advance(Duration::from_secs(1));
    assert!(breaker.try_acquire().unwrap().is_probe());
}

#[test]
fn refused_configurations_change_nothing() {
    let breaker = Breaker::builder()
        .failure_rate(0.5, 20)
        .stripes(4)
        .build()
        .unwrap();
    let before = breaker.config();
    let cases = [
        (
            Config {
                failure_rate: rate(2.0, 20),
                ..before
            },
            "failure_rate.threshold",
        ),
        (
            Config {
                failure_rate: rate(0.5, 64),
                ..before
            },
            "failure_rate.window",
        ),
        (
            Config {
                consecutive_failures: Some(100),
                ..before
            },
            "consecutive_failures",
        ),
        (
            Config {
                stripes: Some(8),
                ..before
            },
            "stripes",
        ),
        (
            Config {
                half_open_probes: 0,
                ..before
            },
            "half_open_probes",
        ),
        (
            Config {
                failure_records: Some(64),
                ..before
            },
            "failure_records",
        ),
        (
            Config {
                failure_records: Some(10),
                ..before
            },
            "failure_records",
        ),
    ];
    for (config, field) in cases {
        let err = breaker.reconfigure(config).expect_err(field);
        assert_eq!(err.field(), field, "{err}");
        assert_eq!(breaker.config(), before);
    }
    // The ring was sized to the next power of two (32): growing within it is fine.
    breaker
        .reconfigure(Config {
            failure_rate: rate(0.5, 32),
            ..before
        })
        .unwrap();
}

#[test]
fn reserved_failure_records_let_a_longer_window_apply() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .failure_rate(0.5, 4)
        .failure_records(40)
        .clock(clock)
        .build()
        .unwrap();
    record(&breaker, "ssss");
    let longer = Config {
        failure_rate: rate(0.5, 40),
        ..breaker.config()
    };
    breaker.reconfigure(longer).unwrap();
    assert_eq!(breaker.config(), longer);
    // Half of 40 trips; with the window of 4 the second failure of "sf sf" would have.
    for round in 1..20 {
        record(&breaker, "sf");
        assert_eq!(
            breaker.state(),
            State::Closed,
            "{round} failures of the last 40 calls"
        );
    }
    assert_eq!(breaker.metrics().window_failures, 19);
    record(&breaker, "sf");
    assert_eq!(breaker.state(), State::Open, "20 failures of the last 40");
    // A reservation the rules already exceed is refused at build time, naming it.
    let err = Breaker::builder()
        .failure_rate(0.5, 100)
        .failure_records(40)
        .build()
        .unwrap_err();
    assert_eq!(err.field(), "failure_records", "{err}");
    // A configuration that keeps the reservation of 40 cannot look back further...
    let err = breaker
        .reconfigure(Config {
            consecutive_failures: Some(41),
            ..longer
        })
        .unwrap_err();
    assert_eq!(err.field(), "failure_records", "{err}");
    // ...but the records were rounded up to 64: one that names 64, or none, can.
    breaker
        .reconfigure(Config {
            consecutive_failures: Some(64),
            failure_records: Some(64),
            ..longer
        })
        .unwrap();
    let err = breaker
        .reconfigure(Config {
            failure_rate: rate(0.5, 65),
            failure_records: None,
            ..longer
        })
        .unwrap_err();
    assert_eq!(err.field(), "failure_rate.window", "{err}");
    assert!(err.reason().contains("keeps 64"), "{err}");
}

#[test]
fn reconfiguring_under_load_keeps_every_count() {
    let breaker = Breaker::builder()
        .failure_rate(0.5, 64)
        .open_duration(Duration::from_micros(20))
        .count_successes(true)
        .build()
        .unwrap();
    let configs = [rate(0.2, 16), rate(0.9, 64), None, rate(0.5, 8)];
    let granted = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for t in 0..3 {
            let (breaker, granted) = (&breaker, &granted);
            scope.spawn(move || {
                for i in 0..30_000usize {
                    if let Ok(permit) = breaker.try_acquire() {
                        granted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if (i + t) % 7 == 0 {
                            permit.failure()
                        } else {
                            permit.success()
                        }
                    }
                }
            });
        }
        scope.spawn(|| {
            for i in 0..2_000 {
                let failure_rate = configs[i % configs.len()];
                let consecutive_failures = failure_rate.is_none().then_some(3);
                let config = Config {
                    failure_rate,
                    consecutive_failures,
                    ..breaker.config()
                };
                breaker.reconfigure(config).unwrap();
            }
        });
    });
    assert_eq!(breaker.metrics().permitted(), Some(granted.into_inner()));
}

/// Switches success counting on or off by a reconfiguration.
fn count_successes<C: hotbreaker::Clock>(breaker: &Breaker<C>, on: bool) {
    breaker
        .reconfigure(Config {
            count_successes: on,
            ..breaker.config()
        })
        .unwrap();
}

#[test]
fn a_probe_or_forced_success_is_counted_as_the_breaker_counted_at_its_admission() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(30))
        .clock(clock.clone())
        .build()
        .unwrap();
    let counting = |on: bool| count_successes(&breaker, on);
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(30));
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    counting(true);
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        breaker.metrics().successes,
        Some(0),
        "the probe was admitted while successes were not counted"
    );

    breaker.force_closed();
    let forced = breaker.try_acquire().unwrap();
    counting(false);
    forced.success();
    let counted = breaker.try_acquire().unwrap(); // admitted while not counted
    counting(true);
    counted.success();
    assert_eq!(
        breaker.metrics().successes,
        Some(1),
        "the forced call admitted while counting counts; the one after does not"
    );
}

#[test]
fn counting_successes_again_adds_to_what_was_counted_before() {
    let breaker = Breaker::builder().count_successes(true).build().unwrap();
    let counting = |on: bool| count_successes(&breaker, on);
    let succeed = || breaker.try_acquire().unwrap().success();
    succeed();
    succeed();
    counting(false);
    succeed();
    assert_eq!(breaker.metrics().successes, None);
    counting(true);
    succeed();
    assert_eq!(
        breaker.metrics().successes,
        Some(3),
        "two before, none while off, one after"
    );
}

/// `ConfigError::reason` promises the value given: a window or run too long for the live
/// breaker's failure records says how long it was asked to be, not only how many it keeps.
#[test]
fn a_window_or_run_too_long_for_the_breaker_says_the_length_asked_for() {
    let breaker = Breaker::builder()
        .failure_rate(0.5, 20)
        .consecutive_failures(5)
        .build()
        .unwrap();
    let before = breaker.config();
    let cases = [
        (
            Config {
                failure_rate: rate(0.5, 1000),
                ..before
            },
            "failure_rate.window",
            "got 1000",
        ),
        (
            Config {
                consecutive_failures: Some(700),
                ..before
            },
            "consecutive_failures",
            "got 700",
        ),
        (
            Config {
                failure_rate: None,
                consecutive_failures: Some(900),
                ..before
            },
            "consecutive_failures",
            "got 900",
        ),
    ];
    for (config, field, value) in cases {
        let err = breaker.reconfigure(config).expect_err(field);
        assert_eq!(err.field(), field, "{err}");
        assert!(err.reason().contains(value), "{err}");
        assert!(err.reason().contains("keeps 32 failure records"), "{err}");
    }
}

/// The trip's event counts the failures among the window's calls, and no more: a failure
/// exactly one call outside the window (still in the failure records) is not among them.
/// Only a lowered threshold can trip with such a failure just behind the window.
#[test]
fn a_trip_reports_only_the_failures_inside_the_window() {
    let clock = ManualClock::new();
    let tripped = std::sync::Arc::new(std::sync::Mutex::new(None));
    let heard = tripped.clone();
    let breaker = Breaker::builder()
        .failure_rate(1.0, 4)
        .on_transition(move |t| {
            if let hotbreaker::Trigger::Tripped {
                failures, calls, ..
            } = t.trigger
            {
                *heard.lock().unwrap() = Some((failures, calls));
            }
        })
        .clock(clock)
        .build()
        .unwrap();
    record(&breaker, "ssssfsff"); // 3 of the last 4: below 1.0
    let config = Config {
        failure_rate: rate(0.5, 4),
        ..breaker.config()
    };
    breaker.reconfigure(config).unwrap();
    // The last four calls are s f f f; the first failure is one call outside them.
    record(&breaker, "f");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(*tripped.lock().unwrap(), Some((3, 4)));
}

#[test]
fn a_live_breaker_refuses_to_switch_per_thread_windows() {
    // Each thread's window is laid out when the breaker is built: switching the setting on a
    // live breaker is refused, whichever way, and changes nothing.
    let breaker = Breaker::builder().consecutive_failures(3).build().unwrap();
    let mut config = breaker.config();
    config.per_thread_windows = !config.per_thread_windows;
    let err = breaker.reconfigure(config).unwrap_err();
    assert_eq!(err.field(), "per_thread_windows", "{err}");
    assert_ne!(
        breaker.config().per_thread_windows,
        config.per_thread_windows
    );
}

#[test]
fn a_window_and_run_of_equal_too_long_length_are_refused_naming_the_window() {
    // Both look back further than the records kept: the error names the rate window unless
    // the run is strictly the longer of the two.
    let breaker = Breaker::builder().failure_rate(0.5, 16).build().unwrap();
    let err = breaker
        .reconfigure(Config {
            failure_rate: rate(0.5, 100),
            consecutive_failures: Some(100),
            ..breaker.config()
        })
        .unwrap_err();
    assert_eq!(err.field(), "failure_rate.window", "{err}");
}

/// A window made longer while closed holds the failures the old window had not forgotten,
/// older than the old length too, and judges them at the next failure (`Breaker::reconfigure`,
/// "What the window holds"). Either kind of window forgets a failure no sooner than its
/// failure records (here 128) successes after it, so the longer window of 100 sees every
/// failure in its view: the metric counts the failure while it is among the last 100 calls,
/// and the next failure trips on it while both are. Before `failure_records` bounded the
/// forgetting, a failure 64 successes back was forgotten, though in the longer window's view.
#[test]
fn a_longer_window_holds_the_failures_the_old_one_had_not_forgotten() {
    // (window per thread, successes after the failure, failures the longer window holds)
    let cases: [(bool, usize, u32); 12] = [
        (false, 3, 1),  // in view of the old window of 4
        (false, 10, 1), // out of its view, not yet forgotten
        (false, 64, 1),
        (false, 98, 1),  // the last of the longer window's view at the next failure
        (false, 127, 0), // out of the longer window's view, not yet forgotten
        (false, 128, 0), // forgotten
        (true, 3, 1),
        (true, 10, 1),
        (true, 64, 1),
        (true, 98, 1),
        (true, 127, 0),
        (true, 128, 0),
    ];
    for (per_thread, successes, held) in cases {
        let case = format!("window per thread {per_thread}, f then {successes} successes");
        let breaker = Breaker::builder()
            .failure_rate(0.5, 4)
            .failure_records(128)
            .per_thread_windows(per_thread)
            .clock(ManualClock::new())
            .build()
            .unwrap();
        record(&breaker, "f");
        record(&breaker, &"s".repeat(successes));
        let in_old_view = u32::from(successes < 4);
        assert_eq!(
            breaker.metrics().window_failures,
            in_old_view,
            "{case}: the old window's view"
        );
        // Two failures of the last 100 trip the longer window.
        let longer = Config {
            failure_rate: rate(0.02, 100),
            ..breaker.config()
        };
        breaker.reconfigure(longer).unwrap();
        assert_eq!(breaker.metrics().window_failures, held, "{case}: held");
        assert_eq!(
            breaker.state(),
            State::Closed,
            "{case}: nothing trips at once"
        );
        record(&breaker, "f");
        let expected = if held == 1 {
            State::Open
        } else {
            State::Closed
        };
        assert_eq!(breaker.state(), expected, "{case}: the next failure");
    }
}

/// A rate rule added to a closed breaker that had only a run rule judges as a full window at
/// once: the failures the run rule kept count. Were the window cleared and filling again, one
/// call would be recorded after the reconfiguration, short of the minimum of 4.
#[test]
fn a_rate_rule_added_while_closed_judges_a_full_window_at_once() {
    let breaker = Breaker::builder()
        .consecutive_failures(5)
        .failure_records(8)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    record(&breaker, "ffsff"); // no run of 5
    assert_eq!(breaker.state(), State::Closed);
    let with_rate = Config {
        failure_rate: Some(FailureRateConfig {
            threshold: 0.75,
            window: 4,
            minimum_calls: Some(4),
        }),
        ..breaker.config()
    };
    breaker.reconfigure(with_rate).unwrap();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the reconfiguration trips nothing"
    );
    record(&breaker, "f"); // the last 4 calls: s f f f
    assert_eq!(
        breaker.state(),
        State::Open,
        "3 of the last 4, counted at once"
    );
    // The control: the same failure in a window filling from empty, under the same rules,
    // is one call of the minimum 4 and trips nothing.
    let fresh = Breaker::builder()
        .config(with_rate)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    record(&fresh, "f");
    assert_eq!(fresh.state(), State::Closed, "a filling window waits");
}
