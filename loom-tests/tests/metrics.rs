//! Counters under concurrent calls.

#![cfg(loom)]

mod common;

use common::{Call, D, F, I, Role, S, check_each_order, small, spawn_in};
use hotbreaker::{Breaker, ManualClock};
use loom::sync::Arc;

/// Makes `calls`; returns the calls that got a permit and the number rejected.
fn calls(breaker: &Breaker<ManualClock>, calls: &[Call]) -> (Vec<Call>, u64) {
    let mut granted = Vec::new();
    let mut rejected = 0;
    for &call in calls {
        if common::make(breaker, call) {
            granted.push(call);
        } else {
            rejected += 1;
        }
    }
    (granted, rejected)
}

/// Two threads end permits in every way while one of them trips the breaker; returns the
/// calls granted and the number rejected, over both threads.
fn two_threads(order: &[usize], breaker: &Arc<Breaker<ManualClock>>) -> (Vec<Call>, u64) {
    let roles: Vec<Role<(Vec<Call>, u64)>> = [&[S, D][..], &[F, I][..]]
        .into_iter()
        .map(|list| {
            let breaker = breaker.clone();
            Box::new(move || calls(&breaker, list)) as Role<_>
        })
        .collect();
    let mut granted = Vec::new();
    let mut rejected = 0;
    for (g, r) in spawn_in(order, roles) {
        granted.extend(g);
        rejected += r;
    }
    (granted, rejected)
}

/// The counters must account for every permit the threads got, once, by how it ended.
fn assert_counted(breaker: &Breaker<ManualClock>, granted: &[Call], rejected: u64) {
    let count = |call| granted.iter().filter(|&&c| c == call).count() as u64;
    let metrics = breaker.metrics();
    assert_eq!(
        (
            metrics.successes,
            metrics.failures,
            metrics.ignored,
            metrics.released
        ),
        (Some(count(S)), count(F), count(I), count(D)),
        "{metrics:?}"
    );
    assert_eq!(metrics.permitted(), Some(granted.len() as u64));
    assert_eq!(metrics.rejected, rejected);
}

/// One stripe, taken by the main thread before the others start: both threads count in the
/// shared stripe, with atomic read-modify-writes.
///
/// Catches: a shared-stripe update done as a load and a store (two threads lose one count), a
/// permit counted twice or not at all (a verdict also counted as a release), rejections
/// miscounted.
#[test]
fn every_permit_is_counted_once_in_the_shared_stripe() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).stripes(1).count_successes(true));
        assert!(common::make(&breaker, S)); // the main thread owns the one stripe now
        let (mut granted, rejected) = two_threads(order, &breaker);
        granted.push(S);
        assert_counted(&breaker, &granted, rejected);
    });
}

/// Two stripes and two threads: each thread claims a stripe of its own on its first call, and
/// counts in it with plain stores.
///
/// Catches: a slot registry that can give two live threads the same slot (a claim that is not
/// a compare-and-swap), whose plain stores then overwrite each other's counts.
#[test]
fn every_permit_is_counted_once_in_owned_stripes() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) =
            small(|b| b.consecutive_failures(1).stripes(2).count_successes(true));
        let (granted, rejected) = two_threads(order, &breaker);
        assert_counted(&breaker, &granted, rejected);
    });
}
