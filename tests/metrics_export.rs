//! The `metrics` facade: counters brought up to the breakers' totals at scrape time, transitions
//! counted by a listener, nothing recorded by ordinary calls.
#![cfg(feature = "metrics")]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::metrics_export::{
    self, CALLS, FAILURE_RATE, HUNG_CALLS, REJECTED, SLOW_CALLS, STATE, TRANSITIONS,
};
use hotbreaker::{Breaker, ManualClock, Registry};
use metrics::{
    Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    with_local_recorder,
};

/// Keeps every counter and gauge by `name{label=value,...}` (labels sorted).
#[derive(Default)]
struct TestRecorder {
    values: Mutex<BTreeMap<String, Arc<AtomicU64>>>,
    registrations: AtomicU64,
    /// The next counter lookup panics (a recorder's own failure).
    panic_at_next_counter: AtomicBool,
}

fn key_text(key: &Key) -> String {
    let mut labels: Vec<String> = key
        .labels()
        .map(|label| format!("{}={}", label.key(), label.value()))
        .collect();
    labels.sort();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl TestRecorder {
    fn cell(&self, key: &Key) -> Arc<AtomicU64> {
        self.registrations.fetch_add(1, Ordering::Relaxed);
        let mut values = self.values.lock().unwrap();
        Arc::clone(values.entry(key_text(key)).or_default())
    }

    fn counter(&self, key: &str) -> Option<u64> {
        let values = self.values.lock().unwrap();
        values.get(key).map(|cell| cell.load(Ordering::Relaxed))
    }

    fn gauge(&self, key: &str) -> Option<f64> {
        self.counter(key).map(f64::from_bits)
    }

    fn keys(&self) -> Vec<String> {
        self.values.lock().unwrap().keys().cloned().collect()
    }
}

impl Recorder for TestRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        if self.panic_at_next_counter.swap(false, Ordering::Relaxed) {
            panic!("the recorder failed");
        }
        Counter::from_arc(self.cell(key))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key))
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn calls(breaker: &str, outcome: &str) -> String {
    format!("{CALLS}{{breaker={breaker},outcome={outcome}}}")
}

fn state(breaker: &str, state: &str) -> String {
    format!("{STATE}{{breaker={breaker},state={state}}}")
}

fn transitions(breaker: &str, from: &str, to: &str) -> String {
    format!("{TRANSITIONS}{{breaker={breaker},from={from},to={to}}}")
}

fn payments(clock: &ManualClock) -> Breaker<ManualClock> {
    Breaker::builder()
        .consecutive_failures(2)
        .open_duration(Duration::from_secs(1))
        .count_successes(true)
        .on_transition(metrics_export::count_transitions("payments"))
        .clock(clock.clone())
        .build()
        .unwrap()
}

#[test]
fn ordinary_calls_record_nothing() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    with_local_recorder(&recorder, || {
        let breaker = payments(&clock);
        for i in 0..1_000 {
            let permit = breaker.try_acquire().unwrap();
            if i % 10 == 0 {
                permit.failure()
            } else {
                permit.success()
            }
        }
    });
    assert_eq!(recorder.registrations.load(Ordering::Relaxed), 0);
    assert!(recorder.keys().is_empty());
}

#[test]
fn export_brings_counters_to_the_totals_and_the_listener_counts_transitions() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    with_local_recorder(&recorder, || {
        let breaker = payments(&clock);
        for _ in 0..3 {
            breaker.try_acquire().unwrap().success();
        }
        breaker.try_acquire().unwrap().ignore();
        drop(breaker.try_acquire().unwrap());
        breaker.try_acquire().unwrap().failure();
        breaker.try_acquire().unwrap().failure(); // trips

        // The listener counted the opening as it happened.
        assert_eq!(
            recorder.counter(&transitions("payments", "closed", "open")),
            Some(1)
        );
        assert_eq!(recorder.gauge(&state("payments", "open")), Some(1.0));
        assert_eq!(recorder.gauge(&state("payments", "closed")), Some(0.0));
        // Calls are read only when exported.
        assert_eq!(recorder.counter(&calls("payments", "success")), None);

        assert!(breaker.try_acquire().is_err());
        assert!(breaker.try_acquire().is_err());
        for _ in 0..2 {
            // Twice: the second adds only what is new (nothing), so nothing is doubled.
            metrics_export::export("payments", &breaker);
        }
        assert_eq!(recorder.counter(&calls("payments", "success")), Some(3));
        assert_eq!(recorder.counter(&calls("payments", "failure")), Some(2));
        assert_eq!(recorder.counter(&calls("payments", "ignored")), Some(1));
        assert_eq!(recorder.counter(&calls("payments", "released")), Some(1));
        assert_eq!(
            recorder.counter(&format!("{REJECTED}{{breaker=payments}}")),
            Some(2)
        );
        // No slow-call limit, so none: exported as zero all the same.
        assert_eq!(
            recorder.counter(&format!("{SLOW_CALLS}{{breaker=payments}}")),
            Some(0)
        );
        assert_eq!(recorder.gauge(&state("payments", "open")), Some(1.0));
        for other in ["closed", "half_open", "forced_open", "forced_closed"] {
            assert_eq!(
                recorder.gauge(&state("payments", other)),
                Some(0.0),
                "{other}"
            );
        }

        // Recovery: open -> half-open -> closed, each counted once.
        clock.advance(Duration::from_secs(1));
        breaker.try_acquire().unwrap().success();
        assert_eq!(
            recorder.counter(&transitions("payments", "open", "half_open")),
            Some(1)
        );
        assert_eq!(
            recorder.counter(&transitions("payments", "half_open", "closed")),
            Some(1)
        );
        assert_eq!(recorder.gauge(&state("payments", "closed")), Some(1.0));
        assert_eq!(recorder.gauge(&state("payments", "open")), Some(0.0));

        // A failure rate while closed.
        breaker.try_acquire().unwrap().failure();
        metrics_export::export("payments", &breaker);
        assert_eq!(recorder.counter(&calls("payments", "success")), Some(4));
        assert_eq!(
            recorder.gauge(&format!("{FAILURE_RATE}{{breaker=payments}}")),
            Some(breaker.metrics().failure_rate())
        );
    });
}

/// The breaker "users" of `registry`, one failure to trip, its transitions counted.
fn users_in(registry: &Registry<ManualClock>) -> Arc<Breaker<ManualClock>> {
    registry
        .get_or_insert_with("users", |name| {
            Breaker::builder()
                .consecutive_failures(1)
                .on_transition(metrics_export::count_transitions(name))
                .clock(ManualClock::new())
        })
        .unwrap()
}

#[test]
fn the_registry_exports_every_breaker_under_its_name() {
    let recorder = TestRecorder::default();
    let registry = Registry::<ManualClock>::default();
    let users = users_in(&registry);
    let search = registry
        .get_or_insert_with("search", |_| {
            Breaker::builder()
                .count_successes(true)
                .clock(ManualClock::new())
        })
        .unwrap();
    with_local_recorder(&recorder, || {
        users.try_acquire().unwrap().failure();
        search.try_acquire().unwrap().success();
        search.try_acquire().unwrap().success();
        registry.export_metrics();
    });
    assert_eq!(recorder.counter(&calls("users", "failure")), Some(1));
    // `users` does not count successes: none are exported, rather than a false zero.
    assert_eq!(recorder.counter(&calls("users", "success")), None);
    assert_eq!(recorder.counter(&calls("search", "success")), Some(2));
    assert_eq!(recorder.counter(&calls("search", "failure")), Some(0));
    assert_eq!(recorder.gauge(&state("users", "open")), Some(1.0));
    assert_eq!(recorder.gauge(&state("search", "closed")), Some(1.0));
    assert_eq!(
        recorder.counter(&transitions("users", "closed", "open")),
        Some(1)
    );
}

#[test]
fn a_hung_call_is_exported_as_slow_and_hung() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(5)
        .slow_call(Duration::from_millis(100))
        .clock(clock.clone())
        .build()
        .unwrap();
    with_local_recorder(&recorder, || {
        let hung = breaker.try_acquire().unwrap();
        let late = breaker.try_acquire().unwrap();
        clock.advance(Duration::from_millis(120));
        late.success(); // slow when it ends, before any later call
        clock.advance(Duration::from_millis(100));
        breaker.try_acquire().unwrap().success(); // judges the call still out
        metrics_export::export("search", &breaker);
        drop(hung);
    });
    let counter = |name: &str| recorder.counter(&format!("{name}{{breaker=search}}"));
    assert_eq!(counter(SLOW_CALLS), Some(2));
    assert_eq!(counter(HUNG_CALLS), Some(1));
    assert_eq!(recorder.counter(&calls("search", "failure")), Some(2));
}

#[test]
fn a_removed_breaker_is_not_left_reported_open() {
    let recorder = TestRecorder::default();
    let registry = Registry::<ManualClock>::default();
    let users = users_in(&registry);
    with_local_recorder(&recorder, || {
        users.try_acquire().unwrap().failure();
        registry.export_metrics();
        assert_eq!(recorder.gauge(&state("users", "open")), Some(1.0));
        registry.remove("users");
        registry.export_metrics();
    });
    assert_eq!(recorder.gauge(&state("users", "open")), Some(0.0));
    assert_eq!(
        recorder.gauge(&format!("{FAILURE_RATE}{{breaker=users}}")),
        Some(0.0)
    );
}

#[test]
fn a_new_breaker_under_a_name_adds_to_the_counts_of_the_one_before() {
    let recorder = TestRecorder::default();
    let registry = Registry::<ManualClock>::default();
    let failures = calls("users", "failure");
    with_local_recorder(&recorder, || {
        let old = users_in(&registry);
        for _ in 0..10 {
            old.try_acquire().unwrap().ignore();
        }
        old.try_acquire().unwrap().failure();
        registry.export_metrics();
        registry.export_metrics(); // nothing new: nothing added
        assert_eq!(recorder.counter(&failures), Some(1));
        registry.remove("users");
        let new = users_in(&registry);
        new.try_acquire().unwrap().ignore();
        new.try_acquire().unwrap().failure();
        registry.export_metrics();
    });
    assert_eq!(
        recorder.counter(&failures),
        Some(2),
        "the old one's and the new one's"
    );
    assert_eq!(recorder.counter(&calls("users", "ignored")), Some(11));
}

#[test]
fn exports_at_once_count_each_call_once() {
    let recorder = Arc::new(TestRecorder::default());
    let clock = ManualClock::new();
    let breaker = Arc::new(payments(&clock));
    let exporters: Vec<_> = (0..2)
        .map(|_| {
            let (recorder, breaker) = (Arc::clone(&recorder), Arc::clone(&breaker));
            std::thread::spawn(move || {
                with_local_recorder(&*recorder, || {
                    for _ in 0..200 {
                        metrics_export::export("payments", &breaker);
                    }
                })
            })
        })
        .collect();
    for _ in 0..1_000 {
        breaker.try_acquire().unwrap().success();
    }
    for exporter in exporters {
        exporter.join().unwrap();
    }
    with_local_recorder(&*recorder, || metrics_export::export("payments", &breaker));
    assert_eq!(recorder.counter(&calls("payments", "success")), Some(1_000));
}

/// Removes a registry's "users" while an export of it is under way: at the first counter the
/// export registers.
/// Removes "users" from the registry at the first counter an export registers, and, if
/// `then_insert_open`, puts a new breaker under the name and opens it.
struct RemovingRecorder {
    inner: TestRecorder,
    registry: Arc<Registry<ManualClock>>,
    removed: std::sync::atomic::AtomicBool,
    then_insert_open: bool,
}

impl Recorder for RemovingRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, metadata: &Metadata<'_>) -> Counter {
        if !self.removed.swap(true, Ordering::Relaxed) {
            self.registry.remove("users");
            if self.then_insert_open {
                users_in(&self.registry).try_acquire().unwrap().failure();
            }
        }
        self.inner.register_counter(key, metadata)
    }

    fn register_gauge(&self, key: &Key, metadata: &Metadata<'_>) -> Gauge {
        self.inner.register_gauge(key, metadata)
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

#[test]
fn a_breaker_removed_while_it_is_exported_is_not_left_reported_open() {
    let registry = Arc::new(Registry::<ManualClock>::default());
    let users = users_in(&registry);
    users.try_acquire().unwrap().failure();
    assert_eq!(users.state(), hotbreaker::State::Open);
    let recorder = RemovingRecorder {
        inner: TestRecorder::default(),
        registry: Arc::clone(&registry),
        removed: Default::default(),
        then_insert_open: false,
    };
    with_local_recorder(&recorder, || registry.export_metrics());
    assert!(registry.get("users").is_none());
    assert_eq!(recorder.inner.gauge(&state("users", "open")), Some(0.0));
}

#[test]
fn a_breaker_replaced_while_it_is_exported_is_exported_in_its_place() {
    let registry = Arc::new(Registry::<ManualClock>::default());
    let first = users_in(&registry);
    assert_eq!(first.state(), hotbreaker::State::Closed);
    let recorder = RemovingRecorder {
        inner: TestRecorder::default(),
        registry: Arc::clone(&registry),
        removed: Default::default(),
        then_insert_open: true,
    };
    with_local_recorder(&recorder, || registry.export_metrics());
    let now = registry.get("users").unwrap();
    assert!(!Arc::ptr_eq(&now, &first));
    assert_eq!(now.state(), hotbreaker::State::Open);
    let gauge = |name: &str| recorder.inner.gauge(&state("users", name));
    assert_eq!(
        (gauge("open"), gauge("closed")),
        (Some(1.0), Some(0.0)),
        "the new breaker's state"
    );
    assert_eq!(recorder.inner.counter(&calls("users", "failure")), Some(1));
}

#[test]
fn a_breaker_under_two_names_is_exported_whole_under_each() {
    let recorder = TestRecorder::default();
    let registry = Registry::<ManualClock>::default();
    let users = users_in(&registry);
    let alias = registry.insert_if_absent("users-read", Arc::clone(&users));
    assert!(Arc::ptr_eq(&alias, &users));
    with_local_recorder(&recorder, || {
        users.try_acquire().unwrap().ignore();
        registry.export_metrics();
        users.try_acquire().unwrap().ignore();
        registry.export_metrics();
    });
    assert_eq!(recorder.counter(&calls("users", "ignored")), Some(2));
    assert_eq!(recorder.counter(&calls("users-read", "ignored")), Some(2));
}

/// Exports `breaker` as "payments" once with a recorder that panics at its first counter (the
/// panic must reach the caller), then `again` more times.
fn export_through_a_recorder_panic(
    recorder: &TestRecorder,
    breaker: &Breaker<ManualClock>,
    again: usize,
) {
    with_local_recorder(recorder, || {
        recorder
            .panic_at_next_counter
            .store(true, Ordering::Relaxed);
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            metrics_export::export("payments", breaker)
        }));
        assert!(failed.is_err(), "the recorder's panic reaches the caller");
        for _ in 0..again {
            metrics_export::export("payments", breaker);
        }
    });
}

#[test]
fn counts_an_export_did_not_add_before_the_recorder_panicked_are_added_by_the_next() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    let breaker = payments(&clock);
    for _ in 0..3 {
        breaker.try_acquire().unwrap().success();
    }
    breaker.try_acquire().unwrap().failure();
    export_through_a_recorder_panic(&recorder, &breaker, 2);
    assert_eq!(recorder.counter(&calls("payments", "success")), Some(3));
    assert_eq!(recorder.counter(&calls("payments", "failure")), Some(1));
}

#[test]
fn a_lone_failure_an_export_did_not_add_before_the_recorder_panicked_is_added_by_the_next() {
    // As above, with every rise pending at the panic a rise of one.
    let recorder = TestRecorder::default();
    let breaker = payments(&ManualClock::new());
    breaker.try_acquire().unwrap().failure();
    export_through_a_recorder_panic(&recorder, &breaker, 1);
    assert_eq!(recorder.counter(&calls("payments", "failure")), Some(1));
}

#[test]
fn the_failure_rate_gauge_is_the_share_of_failures_in_the_window() {
    let recorder = TestRecorder::default();
    let breaker = Breaker::builder()
        .failure_rate(0.9, 10)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    for _ in 0..3 {
        breaker.try_acquire().unwrap().success();
    }
    breaker.try_acquire().unwrap().failure();
    with_local_recorder(&recorder, || metrics_export::export("search", &breaker));
    // One failure in four calls: the share, not the count of failures.
    assert_eq!(
        recorder.gauge(&format!("{FAILURE_RATE}{{breaker=search}}")),
        Some(0.25)
    );
}

#[test]
fn a_removed_breaker_has_every_gauge_set_to_zero() {
    let recorder = TestRecorder::default();
    let registry = Registry::<ManualClock>::default();
    let users = registry
        .get_or_insert_with("users", |name| {
            Breaker::builder()
                .failure_rate(0.9, 10)
                .on_transition(metrics_export::count_transitions(name))
                .clock(ManualClock::new())
        })
        .unwrap();
    with_local_recorder(&recorder, || {
        // Closed with a failure rate of 1/2, exported; then forced closed.
        users.try_acquire().unwrap().success();
        users.try_acquire().unwrap().failure();
        registry.export_metrics();
        let rate = format!("{FAILURE_RATE}{{breaker=users}}");
        assert_eq!(recorder.gauge(&rate), Some(0.5));
        users.force_closed();
        assert_eq!(recorder.gauge(&state("users", "forced_closed")), Some(1.0));
        registry.remove("users");
        registry.export_metrics();
    });
    // Neither the last state (whichever it was) nor the last failure rate is left showing.
    for name in [
        "closed",
        "open",
        "half_open",
        "forced_open",
        "forced_closed",
    ] {
        assert_eq!(recorder.gauge(&state("users", name)), Some(0.0), "{name}");
    }
    assert_eq!(
        recorder.gauge(&format!("{FAILURE_RATE}{{breaker=users}}")),
        Some(0.0)
    );
}

#[test]
fn counts_given_back_after_a_recorder_panic_go_back_to_the_name_that_lost_them() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    let breaker = payments(&clock);
    breaker.try_acquire().unwrap().failure();
    // Exported under another name first, so that name's marks come first in the breaker.
    with_local_recorder(&recorder, || metrics_export::export("users", &breaker));
    export_through_a_recorder_panic(&recorder, &breaker, 1);
    assert_eq!(recorder.counter(&calls("payments", "failure")), Some(1));
    assert_eq!(recorder.counter(&calls("users", "failure")), Some(1));
}
