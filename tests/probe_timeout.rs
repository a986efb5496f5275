//! The probe timeout: probes that hang do not keep the breaker half-open.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, Config, ManualClock, State, Transition, Trigger};

const OPEN: Duration = Duration::from_secs(10);
const TIMEOUT: Duration = Duration::from_secs(2);

struct Probing {
    breaker: Breaker<ManualClock>,
    clock: ManualClock,
    transitions: Arc<Mutex<Vec<Transition>>>,
}

/// A breaker that trips at the first failure, with `probes` probe places and the probe
/// timeout, moved to the end of its first open period.
fn half_open(probes: usize, timeout: Option<Duration>) -> Probing {
    let clock = ManualClock::new();
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let seen = transitions.clone();
    let mut builder = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(OPEN)
        .half_open_probes(probes)
        .on_transition(move |t| seen.lock().unwrap().push(*t))
        .clock(clock.clone());
    if let Some(timeout) = timeout {
        builder = builder.probe_timeout(timeout);
    }
    let breaker = builder.build().unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(OPEN);
    Probing {
        breaker,
        clock,
        transitions,
    }
}

fn last_trigger(probing: &Probing) -> Trigger {
    probing.transitions.lock().unwrap().last().unwrap().trigger
}

#[test]
fn a_hung_probe_is_given_up_on_and_its_verdict_does_not_count() {
    let p = half_open(1, Some(TIMEOUT));
    let hung = p.breaker.try_acquire().unwrap();
    assert!(hung.is_probe());
    p.clock.advance(TIMEOUT);
    let rejected = p.breaker.try_acquire().unwrap_err();
    assert_eq!(
        rejected.state(),
        State::HalfOpen,
        "exactly the timeout: not yet"
    );

    p.clock.advance(Duration::from_millis(1));
    let rejected = p.breaker.try_acquire().unwrap_err();
    assert_eq!(
        (rejected.state(), rejected.retry_after()),
        (State::Open, Some(OPEN))
    );
    assert_eq!(last_trigger(&p), Trigger::ProbesTimedOut);
    let metrics = p.breaker.metrics();
    assert_eq!(
        (metrics.openings, metrics.probes_out),
        (2, 0),
        "{metrics:?}"
    );

    hung.success();
    let metrics = p.breaker.metrics();
    assert_eq!(metrics.state, State::Open, "the late verdict is stale");
    assert_eq!(metrics.closings, 0);

    // The new period ends and probes as usual.
    p.clock.advance(OPEN);
    p.breaker.try_acquire().unwrap().success();
    assert_eq!(p.breaker.state(), State::Closed);
}

#[test]
fn the_newest_probe_out_decides() {
    let p = half_open(2, Some(TIMEOUT));
    let old = p.breaker.try_acquire().unwrap();
    p.clock.advance(Duration::from_secs(3));
    let young = p.breaker.try_acquire().unwrap();
    p.clock.advance(Duration::from_secs(1));
    // The old probe is overdue, the young one is not: keep waiting.
    assert_eq!(
        p.breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen
    );
    p.clock.advance(Duration::from_secs(2));
    assert_eq!(p.breaker.try_acquire().unwrap_err().state(), State::Open);
    drop((old, young));
}

#[test]
fn a_probe_that_ends_frees_its_place_as_before() {
    let p = half_open(1, Some(TIMEOUT));
    let first = p.breaker.try_acquire().unwrap();
    p.clock.advance(Duration::from_secs(5));
    first.ignore();
    // The place is free: a call takes it, however long the first probe was out.
    let second = p.breaker.try_acquire().unwrap();
    assert!(second.is_probe());
    p.clock.advance(Duration::from_secs(1));
    assert_eq!(
        p.breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen,
        "the second probe is young"
    );
    second.success();
    assert_eq!(p.breaker.state(), State::Closed);
}

#[test]
fn without_a_timeout_a_hung_probe_keeps_the_breaker_half_open() {
    let p = half_open(1, None);
    let hung = p.breaker.try_acquire().unwrap();
    p.clock.advance(Duration::from_secs(3600));
    assert_eq!(
        p.breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen
    );
    drop(hung); // its place comes back
    assert!(p.breaker.try_acquire().unwrap().is_probe());
}

#[test]
fn a_timeout_set_by_reconfiguration_applies_to_probes_already_out() {
    let p = half_open(1, None);
    let hung = p.breaker.try_acquire().unwrap();
    p.clock.advance(Duration::from_secs(5));
    let config = Config {
        probe_timeout: Some(TIMEOUT),
        ..p.breaker.config()
    };
    p.breaker.reconfigure(config).unwrap();
    assert_eq!(p.breaker.try_acquire().unwrap_err().state(), State::Open);
    assert_eq!(last_trigger(&p), Trigger::ProbesTimedOut);
    drop(hung);
}

#[test]
fn a_timeout_of_zero_is_refused() {
    let Err(error) = Breaker::builder().probe_timeout(Duration::ZERO).build() else {
        panic!("a probe timeout of zero was accepted");
    };
    assert_eq!(error.field(), "probe_timeout");
    assert!(error.to_string().contains("greater than 0"), "{error}");
}

#[test]
fn after_the_probe_limit_is_lowered_the_older_probes_are_given_up_on_late_never_early() {
    let clock = ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(Duration::from_secs(10))
        .half_open_probes(2)
        .probe_timeout(Duration::from_secs(2))
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(10));
    let hung = breaker.try_acquire().unwrap();
    clock.advance(Duration::from_secs(1));
    let newest = breaker.try_acquire().unwrap();
    clock.advance(Duration::from_millis(500));
    newest.ignore();
    breaker
        .reconfigure(Config {
            half_open_probes: 1,
            ..breaker.config()
        })
        .unwrap();
    // The hung probe is 2.5 s out, the newest admitted (ended) 1.5 s: timed from the newest.
    clock.advance(Duration::from_secs(1));
    assert_eq!(breaker.try_acquire().unwrap_err().state(), State::HalfOpen);
    // The timeout is passed, not reached: at 2 s from the newest it still waits.
    clock.advance(Duration::from_millis(500));
    assert_eq!(breaker.try_acquire().unwrap_err().state(), State::HalfOpen);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(breaker.try_acquire().unwrap_err().state(), State::Open);
    drop(hung);
}
