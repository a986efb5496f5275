//! The registry: one breaker per name, shared; a health snapshot of all of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hotbreaker::{Breaker, ManualClock, Registry, State};

fn registry() -> Registry<ManualClock> {
    Registry::default()
}

fn builder() -> hotbreaker::Builder<ManualClock> {
    Breaker::builder()
        .consecutive_failures(2)
        .failure_rate(0.9, 10)
        .count_successes(true)
        .clock(ManualClock::new())
}

#[test]
fn one_breaker_per_name() {
    let registry = registry();
    let built = AtomicUsize::new(0);
    let make = |name: &str| {
        assert_eq!(name, "payments");
        built.fetch_add(1, Ordering::Relaxed);
        builder()
    };
    let first = registry.get_or_insert_with("payments", make).unwrap();
    let second = registry.get_or_insert_with("payments", make).unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    assert!(Arc::ptr_eq(&first, &registry.get("payments").unwrap()));
    assert_eq!(built.load(Ordering::Relaxed), 1, "built once");
    assert!(registry.get("users").is_none());
    assert_eq!(registry.len(), 1);
}

#[test]
fn inserting_under_a_taken_name_keeps_and_returns_the_breaker_already_there() {
    let registry = registry();
    let first = registry.insert_if_absent("payments", Arc::new(builder().build().unwrap()));
    let second = Arc::new(builder().build().unwrap());
    let returned = registry.insert_if_absent("payments", second.clone());
    // The caller must get the registered breaker, not its own unregistered one.
    assert!(Arc::ptr_eq(&returned, &first));
    assert!(!Arc::ptr_eq(&returned, &second));
    assert!(Arc::ptr_eq(&registry.get("payments").unwrap(), &first));
    assert_eq!(registry.len(), 1);
}

#[test]
fn a_bad_builder_registers_nothing() {
    let registry = registry();
    let err = registry
        .get_or_insert_with("payments", |_| builder().half_open_probes(0))
        .unwrap_err();
    assert_eq!(err.field(), "half_open_probes");
    assert!(registry.is_empty());
}

#[test]
fn threads_racing_for_a_name_share_one_breaker() {
    let registry = registry();
    let breakers: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..50)
                        .map(|i| {
                            let name = format!("dependency-{}", i % 10);
                            registry.get_or_insert_with(&name, |_| builder()).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(registry.len(), 10);
    for (i, breaker) in breakers.iter().enumerate() {
        let name = format!("dependency-{}", (i % 50) % 10);
        assert!(
            Arc::ptr_eq(breaker, &registry.get(&name).unwrap()),
            "{name}"
        );
    }
}

#[test]
fn racing_insertions_and_removals_lose_none() {
    // Every change copies the map and swaps it in; a change that raced another must be made
    // again on the other's map, or one of them is lost.
    let registry = registry();
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let registry = &registry;
            scope.spawn(move || {
                for i in 0..100 {
                    let name = format!("t{thread}-{i}");
                    registry.get_or_insert_with(&name, |_| builder()).unwrap();
                    if i % 2 == 1 {
                        assert!(registry.remove(&name).is_some(), "{name} was registered");
                    }
                }
            });
        }
    });
    assert_eq!(registry.len(), 200, "the 200 even names stay registered");
    for thread in 0..4 {
        for i in (0..100).step_by(2) {
            assert!(registry.get(&format!("t{thread}-{i}")).is_some());
        }
    }
}

#[test]
fn the_snapshot_lists_every_breaker_by_name() {
    let registry = registry();
    let users = registry.get_or_insert_with("users", |_| builder()).unwrap();
    let payments = registry
        .get_or_insert_with("payments", |_| builder())
        .unwrap();
    registry
        .get_or_insert_with("search", |_| builder())
        .unwrap();
    payments.try_acquire().unwrap().failure();
    payments.try_acquire().unwrap().failure();
    users.try_acquire().unwrap().success();
    users.try_acquire().unwrap().failure();

    let health = registry.snapshot();
    let names: Vec<_> = health.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["payments", "search", "users"]);
    assert_eq!(health[0].state, State::Open);
    assert_eq!(health[0].metrics.failures, 2);
    assert_eq!(health[2].state, State::Closed);
    assert_eq!(health[2].metrics.successes, Some(1));
    assert_eq!(health[2].failure_rate, 0.5);
    assert_eq!(health[1].metrics.permitted(), Some(0));
}

#[test]
fn removed_breakers_keep_working_for_their_holders() {
    let registry = registry();
    let payments = registry
        .get_or_insert_with("payments", |_| builder())
        .unwrap();
    let removed = registry.remove("payments").unwrap();
    assert!(Arc::ptr_eq(&payments, &removed));
    assert!(registry.remove("payments").is_none());
    payments.try_acquire().unwrap().success();
    let fresh = registry
        .get_or_insert_with("payments", |_| builder())
        .unwrap();
    assert!(!Arc::ptr_eq(&payments, &fresh));
    assert_eq!(fresh.metrics().successes, Some(0));
}

#[cfg(feature = "json")]
#[test]
fn the_snapshot_serializes_for_a_health_endpoint() {
    let registry = registry();
    let payments = registry
        .get_or_insert_with("payments", |_| builder())
        .unwrap();
    payments.try_acquire().unwrap().success();
    payments.try_acquire().unwrap().failure();
    let json = serde_json::to_value(registry.snapshot()).unwrap();
    assert_eq!(
        json,
        serde_json::json!([{
            "name": "payments",
            "state": "closed",
            "failure_rate": 0.5,
            "successes": 1,
            "failures": 1,
            "slow_calls": 0,
            "hung_calls": 0,
            "ignored": 0,
            "released": 0,
            "rejected": 0,
            "openings": 0,
            "half_openings": 0,
            "closings": 0,
            "window_failures": 1,
            "window_calls": 2,
            "consecutive_failures": 1,
            "probes_out": 0
        }])
    );
}

#[test]
fn permitted_is_unknown_for_a_breaker_that_does_not_count_successes() {
    let breaker = Breaker::builder()
        .consecutive_failures(2)
        .clock(ManualClock::new())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    // The successes are not known, so neither is the sum: not a false count of one.
    assert_eq!(breaker.metrics().successes, None);
    assert_eq!(breaker.metrics().permitted(), None);
}
