//! The probe timeout: probes that hang do not keep the breaker half-open.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, Config, ManualClock, OwnedPermit, State, Transition, Trigger};

#[path = "support/hook_clock.rs"]
mod hook_clock;
use hook_clock::HookClock;

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

/// A breaker on a hook clock with one probe place, opened until 10 s, and its probe admitted
/// at 10 s (a timeout of 1 s), with the transitions it announced.
struct OneProbeOut {
    breaker: Arc<Breaker<HookClock>>,
    clock: HookClock,
    transitions: Arc<Mutex<Vec<Transition>>>,
    probe: OwnedPermit<HookClock>,
}

fn one_probe_admitted_at_10_s() -> OneProbeOut {
    let clock = HookClock::default();
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let seen = transitions.clone();
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .half_open_probes(1)
            .open_duration(Duration::from_secs(10))
            .probe_timeout(Duration::from_secs(1))
            .on_transition(move |t| seen.lock().unwrap().push(*t))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    breaker.try_acquire().unwrap().failure(); // open until 10 s
    clock.set(Duration::from_secs(10));
    let probe = breaker.try_acquire_owned().unwrap(); // half-open, admitted at 10 s
    assert!(probe.is_probe());
    OneProbeOut {
        breaker,
        clock,
        transitions,
        probe,
    }
}

/// The state word counts admissions modulo 64 (`adm.`), so after 64 probes have ended and
/// been admitted again it is back bit for bit. A call that finds the one probe overdue decides
/// to open the breaker again; before its compare-and-swap, 64 probes end (released) and are
/// admitted again, the last one a moment ago and still out. The opening must not give up on
/// that probe: the newest probe's time has changed, and the decision is void.
#[test]
fn the_probe_timeout_never_reopens_on_a_probe_just_admitted_after_64_admissions() {
    let OneProbeOut {
        breaker,
        clock,
        transitions,
        probe,
    } = one_probe_admitted_at_10_s();

    // At 12 s the probe has been out longer than the timeout: a call opens the breaker again.
    // Its first clock reading is the timeout check, its second the opening's: between the
    // two, 64 probes end (released) and are admitted again (the last at 12 s, and kept out).
    clock.set(Duration::from_secs(12));
    let newest: Arc<Mutex<Option<OwnedPermit<HookClock>>>> = Arc::default();
    {
        let (breaker, newest) = (Arc::clone(&breaker), Arc::clone(&newest));
        clock.arm(2, move || {
            let mut probe = probe;
            for _ in 0..64 {
                drop(probe);
                probe = breaker
                    .try_acquire_owned()
                    .expect("the probe place is free");
            }
            *newest.lock().unwrap() = Some(probe);
        });
    }
    let rejected = breaker.try_acquire().expect_err("the probe place is taken");
    let newest = newest.lock().unwrap().take().expect("the hook ran");
    let m = breaker.metrics();
    assert_eq!(
        (rejected.state(), m.openings, m.state, m.probes_out),
        (State::HalfOpen, 1, State::HalfOpen, 1),
        "opened again on a probe admitted 0 s ago: {:?}",
        transitions.lock().unwrap()
    );
    assert_eq!(
        newest.generation(),
        2,
        "the probe is of the half-open period"
    );

    // That probe is timed as usual: overdue after the timeout, from its own admission.
    clock.set(Duration::from_secs(13));
    assert_eq!(
        breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen,
        "exactly the timeout: not yet"
    );
    clock.set(Duration::from_secs(13) + Duration::from_nanos(1));
    let rejected = breaker.try_acquire().unwrap_err();
    // Opened at 13 s and 1 ns, for 10 s kept in whole microseconds: until 23.000001 s.
    assert_eq!(
        (rejected.state(), rejected.retry_after()),
        (
            State::Open,
            Some(Duration::from_secs(10) + Duration::from_nanos(999))
        )
    );
    let last = *transitions.lock().unwrap().last().unwrap();
    assert_eq!(
        (last.trigger, last.generation),
        (Trigger::ProbesTimedOut, 3)
    );
    drop(newest);
}

/// A reopening for timed-out probes seals its generation's newest-probe word, and the seal
/// stays until another half-open period writes there. The word's tag is the generation's low
/// 16 bits, so a half-open period 65,536 generations later, with none in between, finds a seal
/// with its own tag: its first probe writes over it, and the period admits and times its
/// probes as any other.
#[test]
fn a_seal_left_by_a_reopening_does_not_hold_a_half_open_period_with_its_tag() {
    let p = half_open(2, Some(TIMEOUT));
    let first = p.breaker.try_acquire().unwrap();
    let second = p.breaker.try_acquire().unwrap();
    assert_eq!(first.generation(), 2);
    p.clock.advance(TIMEOUT + Duration::from_millis(1));
    assert_eq!(p.breaker.try_acquire().unwrap_err().state(), State::Open);
    assert_eq!(last_trigger(&p), Trigger::ProbesTimedOut);
    drop((first, second));
    // Open in generation 3; resets move it on to closed in 65,536, a trip to open in 65,537.
    for _ in 0..65_533 {
        p.breaker.reset();
    }
    p.breaker.try_acquire().unwrap().failure();
    assert_eq!(p.breaker.state(), State::Open);
    p.clock.advance(OPEN);

    let first = p.breaker.try_acquire().unwrap();
    assert_eq!(
        first.generation(),
        2 + 65_536,
        "the sealed generation's tag"
    );
    let second = p
        .breaker
        .try_acquire()
        .expect("the second probe place is free");
    assert!(second.is_probe());
    p.clock.advance(TIMEOUT);
    assert_eq!(
        p.breaker.try_acquire().unwrap_err().state(),
        State::HalfOpen,
        "the probes are young"
    );
    p.clock.advance(Duration::from_millis(1));
    assert_eq!(
        p.breaker.try_acquire().unwrap_err().state(),
        State::Open,
        "the probes timed out, as in any period"
    );
    assert_eq!(last_trigger(&p), Trigger::ProbesTimedOut);
    drop((first, second));
}

#[test]
fn the_call_that_reopens_is_told_what_is_left_of_the_period_as_kept() {
    let Probing { breaker, clock, .. } = half_open(1, Some(TIMEOUT));
    let _probe = breaker.try_acquire().unwrap();
    // Off the microsecond: the deadline is kept in whole microseconds, rounded up.
    clock.advance(TIMEOUT + Duration::from_nanos(1_500));
    let rejected = breaker.try_acquire().unwrap_err();
    assert_eq!(rejected.state(), State::Open);
    // Opened at 12.0000015 s for 10 s: the period ends at 22.000002 s.
    assert_eq!(
        rejected.retry_after(),
        Some(OPEN + Duration::from_nanos(500))
    );
    assert_eq!(
        breaker.try_acquire().unwrap_err().retry_after(),
        rejected.retry_after(),
        "the next rejection, at the same time, says the same"
    );
}

/// A call finds the one probe overdue and decides to open the breaker again; before its
/// compare-and-swap (between its two clock readings), the probe ends in success and closes
/// the breaker. The decision was made on a half-open word that is gone: the call must not
/// open the now-closed breaker, and is admitted as the closing came first (it was rejected as
/// "half-open, probes out" from a closed breaker, which no order of the two gives).
#[test]
fn a_decision_to_reopen_made_on_a_half_open_word_since_closed_opens_nothing() {
    let OneProbeOut {
        breaker,
        clock,
        transitions,
        probe,
    } = one_probe_admitted_at_10_s();
    clock.set(Duration::from_secs(12)); // the probe is overdue
    clock.arm(2, move || probe.success()); // ...and ends well, closing the breaker
    // The closing came first: the call decides again and is admitted, closed.
    let permit = breaker
        .try_acquire()
        .expect("the breaker closed before the call could reopen it");
    assert!(!permit.is_probe());
    drop(permit);
    let m = breaker.metrics();
    assert_eq!(
        (m.state, m.openings),
        (State::Closed, 1),
        "opened a closed breaker for probes that timed out: {:?}",
        transitions.lock().unwrap()
    );
}

/// The same race with the two other changes a call may meet while it decides to give the
/// overdue probe up: the probe's permit dropped without a verdict (its place freed), and a
/// reconfiguration that flips a bit of the state word and leaves the probe out. In order,
/// the drop first admits the call as a probe, and the reconfiguration changes nothing the
/// decision rests on, so the call opens the breaker again. Catches a call that meets either
/// rejected as "half-open, probes out", nothing reopened.
#[test]
fn a_decision_to_reopen_that_meets_a_freed_place_or_a_reconfiguration_decides_again() {
    let OneProbeOut {
        breaker,
        clock,
        probe,
        ..
    } = one_probe_admitted_at_10_s();
    clock.set(Duration::from_secs(12)); // overdue
    clock.arm(2, move || drop(probe));
    let permit = breaker
        .try_acquire()
        .expect("the freed place, taken after the drop");
    assert!(permit.is_probe());
    drop(permit);

    let OneProbeOut {
        breaker,
        clock,
        probe,
        ..
    } = one_probe_admitted_at_10_s();
    clock.set(Duration::from_secs(12));
    let reconfigured = breaker.clone();
    clock.arm(2, move || {
        let mut config = reconfigured.config();
        config.count_successes = !config.count_successes;
        reconfigured.reconfigure(config).unwrap();
    });
    let rejected = breaker.try_acquire().expect_err("the probe is still out");
    let m = breaker.metrics();
    assert_eq!(
        (rejected.state(), m.state, m.openings),
        (State::Open, State::Open, 2),
        "the overdue probe is given up on: {m:?}"
    );
    drop(probe);
}
