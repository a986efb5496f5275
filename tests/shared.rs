//! Openings shared between instances through a store: published once, applied to the others,
//! never echoed back, and the external opening ends and probes like any other.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use hotbreaker::shared::{
    MemoryStore, Opening, OpeningStore, SharedOpenings, StoreError, WindowShare,
};
use hotbreaker::{Breaker, ManualClock, Registry, State, Transition, Trigger};

#[path = "support/openings_only.rs"]
mod openings_only;
#[path = "support/store_ties.rs"]
mod store_ties;

use openings_only::OpeningsOnly;

const OPEN: Duration = Duration::from_secs(30);

/// One instance: a breaker on its own manual clock that trips at the first failure, and the
/// transitions it announced.
struct Instance {
    breaker: Arc<Breaker<ManualClock>>,
    clock: ManualClock,
    transitions: Arc<Mutex<Vec<Transition>>>,
}

fn instance() -> Instance {
    instance_open_for(OPEN)
}

fn instance_open_for(open: Duration) -> Instance {
    let clock = ManualClock::new();
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let seen = transitions.clone();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .open_duration(open)
        .clock(clock.clone())
        .on_transition(move |t| seen.lock().unwrap().push(*t))
        .build()
        .unwrap();
    Instance {
        breaker: Arc::new(breaker),
        clock,
        transitions,
    }
}

fn trip(instance: &Instance) {
    instance.breaker.try_acquire().unwrap().failure();
    assert_eq!(instance.breaker.state(), State::Open);
}

/// Takes `instance`'s half-open probe, which must be one, and records a success.
fn probe_succeeds(instance: &Instance) {
    let probe = instance.breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    probe.success();
}

/// A follower of `instance`'s breaker under the name "db".
fn follower(store: &MemoryStore, instance: &Instance) -> SharedOpenings<MemoryStore> {
    SharedOpenings::new(store.clone()).follow("db", instance.breaker.clone())
}

thread_local! {
    /// The wall clock of [`pinned_follower`]s: each test runs on a thread of its own.
    static WALL: std::cell::Cell<SystemTime> = std::cell::Cell::new(SystemTime::now());
}

fn pinned_wall() -> SystemTime {
    WALL.with(std::cell::Cell::get)
}

/// Moves the wall clock of this test's [`pinned_follower`]s forward.
fn advance_wall(by: Duration) {
    WALL.with(|wall| wall.set(wall.get() + by));
}

/// A follower as [`follower`], on a wall clock that moves only by [`advance_wall`]: for a test
/// of openings shorter than a stall of the machine could be, whose deadlines would otherwise
/// pass on the real clock between a publish and the next poll.
fn pinned_follower(store: &MemoryStore, instance: &Instance) -> SharedOpenings<MemoryStore> {
    SharedOpenings::new(store.clone())
        .wall_clock(pinned_wall)
        .follow("db", instance.breaker.clone())
}

#[test]
fn an_opening_reaches_the_other_instances_once() {
    let store = MemoryStore::new();
    let (a, b, c) = (instance(), instance(), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = follower(&store, &b);
    let mut follow_c = follower(&store, &c);

    trip(&a);
    let report = follow_a.poll();
    assert_eq!((report.published, report.opened), (1, 0), "{report:?}");
    let report = follow_b.poll();
    assert_eq!((report.published, report.opened), (0, 1), "{report:?}");
    assert_eq!(follow_c.poll().opened, 1);
    for other in [&b, &c] {
        assert_eq!(other.breaker.state(), State::Open);
        let last = *other.transitions.lock().unwrap().last().unwrap();
        assert_eq!(last.trigger, Trigger::External);
        let open_for = last.open_for.unwrap();
        assert!(
            open_for <= OPEN && open_for > OPEN - Duration::from_secs(5),
            "the rest of a's period: {open_for:?}"
        );
        assert!(
            other
                .breaker
                .try_acquire()
                .unwrap_err()
                .retry_after()
                .unwrap()
                <= OPEN,
            "rejections say when to come back"
        );
    }
    // Nobody publishes an opening it was told about, and a's own deadline is no news to a.
    for follower in [&mut follow_a, &mut follow_b, &mut follow_c] {
        let report = follower.poll();
        assert_eq!((report.published, report.opened), (0, 0), "{report:?}");
    }
    assert_eq!(b.breaker.metrics().openings, 1);
}

#[test]
fn the_external_opening_ends_in_a_probe_and_a_failed_probe_is_shared_again() {
    let store = MemoryStore::new();
    // b opens for twice as long as a on its own, so that its opening ends later.
    let (a, b) = (instance(), instance_open_for(2 * OPEN));
    let mut follow_a = follower(&store, &a);
    let mut follow_b = follower(&store, &b);
    trip(&a);
    follow_a.poll();
    follow_b.poll();
    assert_eq!(b.breaker.state(), State::Open);

    // b's own clock runs past the period it was given (a's): it probes, and the probe fails.
    b.clock.advance(OPEN);
    let probe = b.breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    probe.failure();
    assert_eq!(b.breaker.state(), State::Open);
    // That opening is b's own: published. The store keeps the later deadline, b's.
    let report = follow_b.poll();
    assert_eq!(report.published, 1, "{report:?}");
    // a is still in its own period: left alone, and tried again later.
    assert_eq!(follow_a.poll().opened, 0);
    a.clock.advance(OPEN);
    assert_eq!(a.breaker.state(), State::HalfOpen, "a's period is over");
    let report = follow_a.poll();
    assert_eq!(report.opened, 1, "b's later deadline reopens a: {report:?}");
    assert_eq!(a.breaker.state(), State::Open);
}

#[test]
fn two_instances_tripping_together_do_not_reopen_each_other() {
    let store = MemoryStore::new();
    // b's period ends half a second after a's: their clocks or their moments of tripping
    // differ a little.
    let (a, b) = (
        instance(),
        instance_open_for(OPEN + Duration::from_millis(500)),
    );
    let mut follow_a = follower(&store, &a);
    let mut follow_b = follower(&store, &b);
    trip(&a);
    trip(&b);
    assert_eq!(follow_a.poll().published, 1);
    assert_eq!(follow_b.poll().published, 1);
    // a's period ends on a's clock; the store holds b's deadline, within a second of a's own:
    // the same failure, so a probes instead of opening again.
    a.clock.advance(OPEN);
    let report = follow_a.poll();
    assert_eq!(report.opened, 0, "{report:?}");
    assert_eq!(a.breaker.state(), State::HalfOpen);
}

/// How long the instances that follow another's opening wait for its probe, in the tests
/// that let one instance probe for all.
const WAIT: Duration = Duration::from_secs(10);

/// `instance`'s follower under the name "db", waiting [`WAIT`] for another instance's probe.
fn waiting_follower(store: &MemoryStore, instance: &Instance) -> SharedOpenings<MemoryStore> {
    SharedOpenings::new(store.clone())
        .wait_for_probe(WAIT)
        .unwrap()
        .follow("db", instance.breaker.clone())
}

/// Recoveries and openings are compared in wall-clock milliseconds: a step that must come
/// strictly after another waits for the clock to pass the millisecond.
fn next_millisecond() {
    std::thread::sleep(Duration::from_millis(2));
}

#[test]
fn one_instance_probes_and_its_recovery_ends_the_others_openings() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follow_a = waiting_follower(&store, &a);
    let mut follow_b = waiting_follower(&store, &b);
    trip(&a);
    follow_a.poll();
    assert_eq!(follow_b.poll().opened, 1);
    let open_for = b
        .transitions
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .open_for
        .unwrap();
    assert!(
        open_for > OPEN && open_for <= OPEN + WAIT,
        "a's deadline and the wait for its probe: {open_for:?}"
    );

    // Both clocks pass a's deadline: a probes, b waits for a's verdict.
    a.clock.advance(OPEN);
    b.clock.advance(OPEN);
    assert!(b.breaker.try_acquire().is_err(), "b waits for a's probe");
    probe_succeeds(&a);
    assert_eq!(a.breaker.state(), State::Closed);

    next_millisecond();
    let report = follow_a.poll();
    assert_eq!(report.recoveries_published, 1, "{report:?}");
    assert_eq!(follow_a.poll().recoveries_published, 0, "published once");
    let report = follow_b.poll();
    assert_eq!(report.ended, 1, "{report:?}");
    let probe = b
        .breaker
        .try_acquire()
        .expect("b's opening ended: it probes");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(b.breaker.state(), State::Closed);
    let report = follow_b.poll();
    assert_eq!(
        (report.ended, report.recoveries_published),
        (0, 1),
        "b closed after its opening from the store, and says so too: {report:?}"
    );
}

#[test]
fn a_failed_probe_makes_the_waiting_instances_wait_longer() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = waiting_follower(&store, &b);
    trip(&a);
    follow_a.poll();
    follow_b.poll();

    a.clock.advance(OPEN);
    b.clock.advance(OPEN + Duration::from_secs(1));
    a.breaker.try_acquire().unwrap().failure();
    assert_eq!(a.breaker.state(), State::Open, "a's probe failed");
    next_millisecond();
    assert_eq!(follow_a.poll().published, 1);
    let report = follow_b.poll();
    assert_eq!((report.extended, report.opened), (1, 0), "{report:?}");

    // Past the end of b's first opening (a's first deadline and the wait), not of the second.
    b.clock.advance(WAIT);
    assert_eq!(b.breaker.state(), State::Open);
    let rejected = b.breaker.try_acquire().unwrap_err();
    assert!(
        rejected.retry_after().unwrap() > OPEN - Duration::from_secs(5),
        "about a's second period and the wait are left: {rejected:?}"
    );
    assert_eq!(
        b.transitions.lock().unwrap().len(),
        1,
        "the same opening, made longer: no transition"
    );
}

#[test]
fn a_recovery_recorded_before_an_opening_does_not_end_it() {
    let mut store = MemoryStore::new();
    store.publish_recovery("db", SystemTime::now()).unwrap();
    next_millisecond();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = waiting_follower(&store, &b);
    trip(&a);
    follow_a.poll();
    assert_eq!(follow_b.poll().opened, 1);
    let report = follow_b.poll();
    assert_eq!((report.ended, report.opened), (0, 0), "{report:?}");
    assert_eq!(b.breaker.state(), State::Open);
    assert!(b.breaker.try_acquire().is_err());
}

#[test]
fn without_a_wait_every_instance_probes_at_the_deadline() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = follower(&store, &b);
    trip(&a);
    follow_a.poll();
    follow_b.poll();
    b.clock.advance(OPEN);
    assert!(b.breaker.try_acquire().unwrap().is_probe());
}

#[test]
fn a_wait_longer_than_any_opening_is_refused() {
    let error = SharedOpenings::new(MemoryStore::new())
        .wait_for_probe(hotbreaker::MAX_OPEN_DURATION + Duration::from_secs(1))
        .expect_err("refused");
    assert_eq!(error.field(), "wait_for_probe");
    assert!(error.to_string().contains("at most"), "{error}");
}

#[test]
fn ending_an_open_period_needs_one_that_runs() {
    let a = instance();
    assert!(!a.breaker.end_open_period(), "closed");
    trip(&a);
    // Between two whole microseconds (the deadline's unit): the period still ends now.
    a.clock.advance(Duration::from_nanos(1_500));
    assert!(a.breaker.end_open_period());
    assert!(!a.breaker.end_open_period(), "already over");
    let probe = a.breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    probe.failure();
    a.breaker.force_open();
    assert!(!a.breaker.end_open_period(), "forced open stays open");
    assert_eq!(a.breaker.state(), State::ForcedOpen);
}

#[test]
fn a_follower_shows_what_it_follows() {
    let a = instance();
    let follower = SharedOpenings::new(MemoryStore::new())
        .wait_for_probe(WAIT)
        .unwrap()
        .follow("db", a.breaker.clone());
    let shown = format!("{follower:?}");
    assert!(shown.contains(r#"names: ["db"]"#), "{shown}");
    assert!(shown.contains("wait_for_probe: 10s"), "{shown}");
}

#[test]
fn a_registry_is_followed_with_the_breakers_it_gains_and_loses() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let registry: Arc<Registry<ManualClock>> = Arc::new(Registry::default());
    let mut follow_a = follower(&store, &a);
    let mut follow_registry = SharedOpenings::new(store.clone()).follow_registry(registry.clone());

    // Inserted after the follower was built: followed from the next poll on.
    registry.insert_if_absent("db", b.breaker.clone());
    trip(&a);
    follow_a.poll();
    let report = follow_registry.poll();
    assert_eq!(report.opened, 1, "{report:?}");
    assert_eq!(b.breaker.state(), State::Open);

    // Replaced under its name: the new breaker is followed, the old one no longer.
    let c = instance();
    registry.remove("db");
    registry.insert_if_absent("db", c.breaker.clone());
    b.breaker.reset();
    let report = follow_registry.poll();
    assert_eq!(
        (report.opened, report.recoveries_published),
        (1, 0),
        "the new breaker follows, and the old one's reset is not published: {report:?}"
    );
    assert_eq!(c.breaker.state(), State::Open);
    assert_eq!(b.breaker.state(), State::Closed);

    // Removed: nothing is followed under the name any more.
    registry.remove("db");
    c.breaker.reset();
    a.clock.advance(OPEN);
    let probe = a.breaker.try_acquire().unwrap();
    probe.failure();
    next_millisecond();
    assert_eq!(follow_a.poll().published, 1);
    let report = follow_registry.poll();
    assert_eq!((report.opened, report.extended), (0, 0), "{report:?}");
    assert_eq!(c.breaker.state(), State::Closed);
}

#[test]
fn an_opening_applied_under_one_name_is_not_published_under_another() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    // B's breaker is followed twice: as "db", and under an alias that nobody else uses.
    let mut follow_b = SharedOpenings::new(store.clone())
        .follow("db", b.breaker.clone())
        .follow("db-alias", b.breaker.clone());
    trip(&a);
    follow_a.poll();
    let report = follow_b.poll();
    assert_eq!((report.opened, report.published), (1, 0), "{report:?}");
    assert_eq!(b.breaker.state(), State::Open);
    assert_eq!(
        store.clone().opening("db-alias").unwrap(),
        None,
        "not B's own"
    );
    // B's own trip, after the applied opening ended, is published under both names.
    b.clock.advance(OPEN * 2);
    b.breaker.try_acquire().unwrap().failure();
    next_millisecond();
    assert_eq!(follow_b.poll().published, 2);
}

#[test]
fn an_opening_applied_before_a_registry_renamed_its_breaker_is_not_published() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let registry: Arc<Registry<ManualClock>> = Arc::new(Registry::default());
    registry.insert_if_absent("db", b.breaker.clone());
    let mut follow_a = follower(&store, &a);
    let mut follow_registry = SharedOpenings::new(store.clone()).follow_registry(registry.clone());
    trip(&a);
    follow_a.poll();
    assert_eq!(follow_registry.poll().opened, 1);
    // The same breaker, moved to another name: a new entry, which must not take the opening
    // that the old one applied for a trip of the breaker's own.
    registry.remove("db");
    registry.insert_if_absent("database", b.breaker.clone());
    let report = follow_registry.poll();
    assert_eq!((report.opened, report.published), (0, 0), "{report:?}");
    assert_eq!(store.clone().opening("database").unwrap(), None);
    // Nor is it followed under its old name any more: a's next opening there leaves it alone.
    b.breaker.reset();
    a.clock.advance(OPEN);
    a.breaker.try_acquire().unwrap().failure();
    next_millisecond();
    assert_eq!(follow_a.poll().published, 1);
    let report = follow_registry.poll();
    assert_eq!((report.opened, report.extended), (0, 0), "{report:?}");
    assert_eq!(b.breaker.state(), State::Closed);
}

/// An instance that judges the failure rate over its last 10 calls (all 10 needed), and its
/// follower sharing windows as `name`.
fn sharing_instance(
    store: &MemoryStore,
    name: &str,
) -> (Arc<Breaker<ManualClock>>, SharedOpenings<MemoryStore>) {
    let breaker = Arc::new(
        Breaker::builder()
            .failure_rate(0.5, 10)
            .open_duration(OPEN)
            .clock(ManualClock::new())
            .build()
            .unwrap(),
    );
    let follower = SharedOpenings::new(store.clone())
        .share_windows(name, Duration::from_secs(5))
        .unwrap()
        .follow("db", breaker.clone());
    (breaker, follower)
}

fn calls(breaker: &Breaker<ManualClock>, outcomes: &[bool]) {
    for &fails in outcomes {
        let permit = breaker.try_acquire().unwrap();
        if fails {
            permit.failure();
        } else {
            permit.success();
        }
    }
}

#[test]
fn quiet_instances_trip_together_on_their_windows_added_up() {
    let store = MemoryStore::new();
    let mut instances: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|name| sharing_instance(&store, name))
        .collect();
    for (breaker, _) in &instances {
        calls(breaker, &[true, false, true, false]);
        assert_eq!(breaker.state(), State::Closed, "4 calls of 10: not judged");
    }
    // a sees 4 calls in all, b 8, c 12 of which 6 failed: half, the threshold.
    let reports: Vec<_> = instances.iter_mut().map(|(_, f)| f.poll()).collect();
    assert_eq!(
        reports
            .iter()
            .map(|r| (r.windows_published, r.opened_by_windows, r.published))
            .collect::<Vec<_>>(),
        [(1, 0, 0), (1, 0, 0), (1, 1, 1)],
        "{reports:?}"
    );
    assert_eq!(instances[2].0.state(), State::Open);
    // a and b follow c's opening (which waits for c's probe) rather than open on the
    // windows by themselves.
    for (breaker, follower) in &mut instances[..2] {
        let report = follower.poll();
        assert_eq!(
            (report.opened, report.opened_by_windows, report.published),
            (1, 0, 0),
            "{report:?}"
        );
        assert_eq!(breaker.state(), State::Open);
    }
}

#[test]
fn stale_windows_and_other_names_do_not_count() {
    let mut store = MemoryStore::new();
    let now = SystemTime::now();
    store
        .publish_window(
            "db",
            &WindowShare::new("gone", 10, 10, now - Duration::from_secs(60)),
        )
        .unwrap();
    store
        .publish_window("cache", &WindowShare::new("other", 10, 10, now))
        .unwrap();
    // A clock may run ahead of this one, but not by more than the freshness (5 s).
    store
        .publish_window(
            "db",
            &WindowShare::new("ahead", 10, 10, now + Duration::from_secs(60)),
        )
        .unwrap();
    let (breaker, mut follower) = sharing_instance(&store, "a");
    calls(&breaker, &[true, true, false]);
    let report = follower.poll();
    assert_eq!(report.opened_by_windows, 0, "{report:?}");
    assert_eq!(breaker.state(), State::Closed);

    // A fresh window of another instance under this name: 5 failures of 10 in all.
    store
        .publish_window("db", &WindowShare::new("b", 3, 7, SystemTime::now()))
        .unwrap();
    let report = follower.poll();
    assert_eq!(report.opened_by_windows, 1, "{report:?}");
    assert_eq!(breaker.state(), State::Open);
    let mut windows = store.windows("db").unwrap();
    windows.sort_by(|x, y| x.instance.cmp(&y.instance));
    let ours = windows.iter().find(|w| w.instance == "a").unwrap();
    assert_eq!(
        (ours.failures, ours.calls),
        (2, 3),
        "the last window a published"
    );
    assert_eq!(windows.len(), 4, "a, ahead, b and gone: {windows:?}");
}

#[test]
fn windows_do_not_open_a_breaker_that_is_probing() {
    let mut store = MemoryStore::new();
    let (breaker, mut follower) = sharing_instance(&store, "a");
    calls(&breaker, &[true; 10]);
    assert_eq!(breaker.state(), State::Open);
    breaker.clock().advance(OPEN);
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe());
    // Another instance's fresh window meets the rule: the probe, not the windows, decides.
    store
        .publish_window("db", &WindowShare::new("b", 10, 10, SystemTime::now()))
        .unwrap();
    let report = follower.poll();
    assert_eq!(report.opened_by_windows, 0, "{report:?}");
    assert_eq!(breaker.state(), State::HalfOpen);
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn breakers_without_a_rate_rule_share_no_window() {
    let store = MemoryStore::new();
    let a = instance();
    let mut follower = SharedOpenings::new(store.clone())
        .share_windows("a", Duration::from_secs(5))
        .unwrap()
        .follow("db", a.breaker.clone());
    let report = follower.poll();
    assert_eq!(report.windows_published, 0, "{report:?}");
}

#[test]
fn sharing_windows_needs_a_name_and_a_freshness() {
    for (instance, fresh_for) in [
        ("", Duration::from_secs(5)),
        ("a", Duration::ZERO),
        ("a", hotbreaker::MAX_OPEN_DURATION + Duration::from_secs(1)),
    ] {
        let error = SharedOpenings::new(MemoryStore::new())
            .share_windows(instance, fresh_for)
            .expect_err("refused");
        assert_eq!(error.field(), "share_windows", "{error}");
    }
}

#[test]
fn forced_breakers_and_other_names_are_left_alone() {
    let store = MemoryStore::new();
    let (a, forced, other) = (instance(), instance(), instance());
    forced.breaker.force_closed();
    let mut follow_a = follower(&store, &a);
    let mut follow_rest = SharedOpenings::new(store.clone())
        .follow("db", forced.breaker.clone())
        .follow("cache", other.breaker.clone());
    trip(&a);
    follow_a.poll();
    let report = follow_rest.poll();
    assert_eq!((report.published, report.opened), (0, 0), "{report:?}");
    assert_eq!(forced.breaker.state(), State::ForcedClosed);
    assert_eq!(other.breaker.state(), State::Closed);
}

#[test]
fn open_for_refuses_durations_it_cannot_keep() {
    let breaker = Breaker::builder().build().unwrap();
    for bad in [Duration::ZERO, Duration::from_secs(400 * 24 * 3600)] {
        let err = breaker.open_for(bad).unwrap_err();
        assert_eq!(err.field(), "open_for", "{err}");
    }
    assert_eq!(breaker.state(), State::Closed);
    assert!(breaker.open_for(Duration::from_millis(5)).unwrap());
    assert_eq!(breaker.state(), State::Open);
}

/// A store that fails every call, to see errors reported and the other names still polled.
struct Unreachable;

impl OpeningStore for Unreachable {
    fn publish(&mut self, _: &str, _: Opening) -> Result<(), StoreError> {
        Err(StoreError::new("unreachable"))
    }
    fn opening(&mut self, _: &str) -> Result<Option<Opening>, StoreError> {
        Err(StoreError::new("unreachable"))
    }
}

#[test]
fn store_errors_are_reported_per_name_and_retried() {
    let (a, b) = (instance(), instance());
    let mut follower = SharedOpenings::new(Unreachable)
        .follow("a", a.breaker.clone())
        .follow("b", b.breaker.clone());
    trip(&a);
    let report = follower.poll();
    let names: Vec<&str> = report.errors.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "a", "b"], "a's publish and read, b's read");
    assert_eq!(report.published, 0);
    // Not marked as published: the next poll tries again.
    assert_eq!(follower.poll().errors.len(), 3);
}

#[test]
fn polling_without_pause_is_refused() {
    let err = SharedOpenings::new(MemoryStore::new())
        .spawn_polling(Duration::ZERO, |_, _| {})
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("interval"), "{err}");
}

#[test]
fn polling_on_a_thread_applies_openings_and_stops_when_dropped() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    let polling = SharedOpenings::new(store)
        .follow("db", b.breaker.clone())
        .spawn_polling(Duration::from_millis(5), |name, error| {
            panic!("{name}: {error}")
        })
        .unwrap();
    trip(&a);
    follow_a.poll();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while b.breaker.state() != State::Open {
        assert!(std::time::Instant::now() < deadline, "never applied");
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(polling);
}

/// A store with a bug: it panics on its first read.
struct Panicking;

impl OpeningStore for Panicking {
    fn publish(&mut self, _: &str, _: Opening) -> Result<(), StoreError> {
        Ok(())
    }
    fn opening(&mut self, _: &str) -> Result<Option<Opening>, StoreError> {
        panic!("a store with a bug (this panic is the test's)")
    }
}

#[test]
fn a_polling_thread_ended_by_a_panicking_store_says_so() {
    let healthy = SharedOpenings::new(MemoryStore::new())
        .follow("db", instance().breaker)
        .spawn_polling(Duration::from_millis(1), |_, _| {})
        .unwrap();
    let broken = SharedOpenings::new(Panicking)
        .follow("db", instance().breaker)
        .spawn_polling(Duration::from_millis(1), |_, _| {})
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while broken.is_running() {
        assert!(
            std::time::Instant::now() < deadline,
            "the thread never ended"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(healthy.is_running(), "a store that does not panic polls on");
    drop(broken); // the panic is not re-raised here
    drop(healthy);
}

#[test]
fn a_new_failure_after_a_recovery_is_not_taken_for_the_old_one() {
    let open = Duration::from_millis(200);
    let store = MemoryStore::new();
    let (a, b) = (instance_open_for(open), instance_open_for(open));
    let mut follow_a = pinned_follower(&store, &a);
    let mut follow_b = pinned_follower(&store, &b);
    trip(&b);
    assert_eq!(follow_b.poll().published, 1);
    assert_eq!(follow_a.poll().opened, 1);
    // b's deadline passes on the wall clock, and both probe and close.
    advance_wall(open + Duration::from_millis(100));
    for instance in [&a, &b] {
        instance.clock.advance(open);
        probe_succeeds(instance);
    }
    follow_a.poll();
    follow_b.poll();
    // A new failure, its deadline within a second of b's old one.
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    let report = follow_b.poll();
    assert_eq!(report.opened, 1, "b follows a's new opening: {report:?}");
    assert_eq!(b.breaker.state(), State::Open);
}

/// An opening of this instance ended early (a recovery seen elsewhere), then a shorter one
/// of its own: the store keeps the first's later deadline, which is still this instance's
/// failure, not another's to apply over the shorter period.
#[test]
fn an_own_later_deadline_kept_past_a_shorter_reopening_is_not_applied() {
    let store = MemoryStore::new();
    let a = instance();
    let mut follow_a = follower(&store, &a);
    trip(&a);
    assert_eq!(follow_a.poll().published, 1); // 30 s ahead: the store keeps it
    assert!(a.breaker.end_open_period());
    assert_eq!(a.breaker.open_for(Duration::from_secs(1)), Ok(true));
    assert_eq!(follow_a.poll().published, 1);
    // Once the shorter period ends, the store's deadline would open the breaker again.
    a.clock.advance(Duration::from_secs(1));
    let report = follow_a.poll();
    assert_eq!(report.opened, 0, "{report:?}");
    assert_eq!(a.breaker.state(), State::HalfOpen);
}

#[test]
fn an_older_remote_opening_does_not_undo_a_newer_local_recovery() {
    let store = MemoryStore::new();
    let (a, b) = (instance_open_for(2 * OPEN), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = follower(&store, &b);
    trip(&a);
    trip(&b);
    follow_a.poll(); // a's deadline, 60 s: the store keeps it
    follow_b.poll(); // b's own, 30 s; b reads a's while its own period runs
    b.clock.advance(OPEN);
    probe_succeeds(&b); // the dependency answers b, after a's opening was published
    next_millisecond();
    let report = follow_b.poll();
    assert_eq!(
        (
            report.opened,
            report.recoveries_published,
            b.breaker.state()
        ),
        (0, 1, State::Closed),
        "{report:?}"
    );
}

#[test]
fn a_recovery_from_a_clock_far_ahead_is_not_believed_and_an_honest_one_replaces_it() {
    let mut store = MemoryStore::new();
    store
        .publish_recovery("db", SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    next_millisecond();
    let (a, b) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    let mut follow_b = waiting_follower(&store, &b);
    trip(&a);
    follow_a.poll();
    let report = follow_b.poll();
    assert_eq!(
        (report.opened, report.ended),
        (1, 0),
        "not ended at once: {report:?}"
    );
    assert_eq!(b.breaker.state(), State::Open);
    next_millisecond();
    store.publish_recovery("db", SystemTime::now()).unwrap();
    let report = follow_b.poll();
    assert_eq!(report.ended, 1, "b ends the opening it applied: {report:?}");
}

/// An opening as a machine whose clock runs an hour ahead publishes it: its breaker's 30 s,
/// on that clock.
fn opening_from_an_hour_ahead() -> Opening {
    let ahead = SystemTime::now() + Duration::from_secs(3600);
    Opening::new(ahead + OPEN, ahead)
}

#[test]
fn an_opening_from_a_clock_far_ahead_holds_the_others_only_for_its_own_period() {
    let mut store = MemoryStore::new();
    store.publish("db", opening_from_an_hour_ahead()).unwrap();
    let b = instance();
    let report = follower(&store, &b).poll();
    assert_eq!(report.opened, 1, "{report:?}");
    let open_for = b.transitions.lock().unwrap().last().unwrap().open_for;
    assert_eq!(
        open_for,
        Some(OPEN),
        "the 30 s its publisher meant, not the hour its clock is ahead"
    );
}

#[test]
fn an_honest_opening_replaces_one_published_from_a_clock_far_ahead() {
    let mut store = MemoryStore::new();
    store.publish("db", opening_from_an_hour_ahead()).unwrap();
    let a = instance();
    trip(&a);
    assert_eq!(follower(&store, &a).poll().published, 1);
    let kept = store.opening("db").unwrap().expect("an opening");
    let now = SystemTime::now();
    assert!(
        kept.published_at <= now && kept.until <= now + OPEN,
        "a's opening, on this clock, is kept: {kept:?}"
    );
}

/// A memory store whose recoveries cannot be read, as a Redis key holding something else.
struct UnreadableRecoveries(MemoryStore);

impl OpeningStore for UnreadableRecoveries {
    fn publish(&mut self, name: &str, opening: Opening) -> Result<(), StoreError> {
        self.0.publish(name, opening)
    }
    fn opening(&mut self, name: &str) -> Result<Option<Opening>, StoreError> {
        self.0.opening(name)
    }
    fn recovered_at(&mut self, _: &str) -> Result<Option<SystemTime>, StoreError> {
        Err(StoreError::new("holds \"garbage\", not a time"))
    }
}

#[test]
fn an_unreadable_recovery_is_reported_and_the_opening_applied() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    trip(&a);
    assert_eq!(follower(&store, &a).poll().published, 1);
    let mut follow_b =
        SharedOpenings::new(UnreadableRecoveries(store.clone())).follow("db", b.breaker.clone());
    let report = follow_b.poll();
    assert_eq!(report.opened, 1, "{report:?}");
    assert_eq!(b.breaker.state(), State::Open);
    assert!(
        report
            .errors
            .iter()
            .any(|(name, error)| name == "db" && error.to_string().contains("garbage")),
        "the store's error is still reported: {report:?}"
    );
    assert_eq!(report.errors.len(), 1, "reported once: {report:?}");
}

#[test]
fn an_opening_a_recovery_answered_is_not_applied_by_a_follower_that_comes_late() {
    let store = MemoryStore::new();
    let (a, c) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    a.breaker.reset(); // recovered before its deadline: an operator, a health check
    next_millisecond();
    assert_eq!(follow_a.poll().recoveries_published, 1);

    // c starts following (a new process) while a's deadline is still ahead.
    let mut follow_c = follower(&store, &c);
    let report = follow_c.poll();
    assert_eq!(report.opened, 0, "a's opening was answered: {report:?}");
    assert_eq!(c.breaker.state(), State::Closed);
}

/// Three instances on one store: a's opening (60 s) applied by c, then a's recovery from it
/// published, which c has not polled yet.
struct Recovered {
    b: Instance,
    c: Instance,
    follow_b: SharedOpenings<MemoryStore>,
    follow_c: SharedOpenings<MemoryStore>,
}

fn c_in_an_opening_a_recovered_from() -> Recovered {
    let store = MemoryStore::new();
    let (a, b, c) = (instance_open_for(2 * OPEN), instance(), instance());
    let (mut follow_a, follow_b) = (follower(&store, &a), follower(&store, &b));
    let mut follow_c = follower(&store, &c);
    trip(&a);
    follow_a.poll(); // a's 60 s
    assert_eq!(follow_c.poll().opened, 1);
    a.breaker.reset();
    next_millisecond();
    assert_eq!(follow_a.poll().recoveries_published, 1);
    Recovered {
        b,
        c,
        follow_b,
        follow_c,
    }
}

#[test]
fn a_new_opening_replaces_an_answered_one_even_if_it_ends_sooner() {
    let Recovered {
        b,
        c,
        mut follow_b,
        mut follow_c,
    } = c_in_an_opening_a_recovered_from();
    assert_eq!(follow_c.poll().ended, 1, "c ends the opening it applied");
    probe_succeeds(&c);

    // 5 ms on, on both clocks of c's machine, a new failure: b's 30 s.
    std::thread::sleep(Duration::from_millis(5));
    c.clock.advance(Duration::from_millis(5));
    trip(&b);
    assert_eq!(follow_b.poll().published, 1);
    // c's next poll comes later still: its recovery is stamped with its probe's success, 5 ms
    // before b's opening, not with the poll, which would answer b's opening.
    next_millisecond();
    let report = follow_c.poll();
    assert_eq!(report.opened, 1, "c follows b's new opening: {report:?}");
    let left = c.breaker.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(
        left <= OPEN,
        "b's 30 s, not what was left of a's 60: {left:?}"
    );
}

#[test]
fn the_memory_store_lets_an_answered_opening_give_way_and_no_other() {
    let mut store = MemoryStore::new();
    // Whole milliseconds: what stores keep of a time.
    let since_epoch = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    let now =
        SystemTime::UNIX_EPOCH + Duration::from_millis(since_epoch.unwrap().as_millis() as u64);
    let at = |millis: u64| now + Duration::from_millis(millis);
    let long = Opening::new(now + 2 * OPEN, now);
    let shorter = Opening::new(now + OPEN, at(10));
    store.publish("db", long).unwrap();
    store.publish("db", shorter).unwrap();
    assert_eq!(store.opening("db").unwrap(), Some(long), "not answered");
    store.publish_recovery("db", now).unwrap(); // the same millisecond: not after it
    store.publish("db", shorter).unwrap();
    assert_eq!(store.opening("db").unwrap(), Some(long));
    store
        .publish_recovery("db", now + Duration::from_secs(3600))
        .unwrap(); // far ahead of the new opening's publisher: believed by no one
    store.publish("db", shorter).unwrap();
    assert_eq!(store.opening("db").unwrap(), Some(long));

    let mut store = MemoryStore::new();
    store.publish("db", long).unwrap();
    store.publish_recovery("db", at(5)).unwrap();
    store.publish("db", shorter).unwrap();
    assert_eq!(
        store.opening("db").unwrap(),
        Some(shorter),
        "answered at 5 ms"
    );
}

#[test]
fn a_new_failure_after_an_own_opening_cut_short_is_followed() {
    let store = MemoryStore::new();
    let (a, b) = (instance_open_for(2 * OPEN), instance());
    let (mut follow_a, mut follow_b) = (follower(&store, &a), follower(&store, &b));
    trip(&a);
    assert_eq!(follow_a.poll().published, 1); // a's 60 s
    assert!(a.breaker.end_open_period()); // a health check saw the dependency answer
    probe_succeeds(&a);
    next_millisecond();
    assert_eq!(follow_a.poll().recoveries_published, 1);
    next_millisecond();
    trip(&b); // a new failure, after the recovery: b's 30 s, sooner than a's old deadline
    assert_eq!(follow_b.poll().published, 1);
    let report = follow_a.poll();
    assert_eq!(report.opened, 1, "a follows b's new opening: {report:?}");
}

#[test]
fn a_failed_probe_is_followed_by_an_instance_that_closed_since_its_own_opening() {
    let open = Duration::from_millis(300);
    let store = MemoryStore::new();
    let (a, b) = (instance_open_for(open), instance_open_for(open));
    let (mut follow_a, mut follow_b) = (pinned_follower(&store, &a), pinned_follower(&store, &b));
    trip(&b);
    assert_eq!(follow_b.poll().published, 1);
    advance_wall(open + Duration::from_millis(20));
    b.clock.advance(open + Duration::from_millis(20));
    probe_succeeds(&b);
    assert_eq!(follow_b.poll().recoveries_published, 1);
    advance_wall(Duration::from_millis(2));
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    assert_eq!(follow_b.poll().opened, 1);
    // Both periods end; a's probe fails, within a second of b's own old deadline.
    advance_wall(open + Duration::from_millis(20));
    for instance in [&a, &b] {
        instance.clock.advance(open + Duration::from_millis(20));
    }
    a.breaker.try_acquire().unwrap().failure();
    assert_eq!(follow_a.poll().published, 1);
    let report = follow_b.poll();
    assert_eq!(
        (report.opened + report.extended, b.breaker.state()),
        (1, State::Open),
        "b follows a's failed probe: {report:?}"
    );
}

#[test]
fn an_opening_an_own_probe_saw_end_is_not_applied_after_it() {
    let store = MemoryStore::new();
    let (a, c) = (
        instance(),
        instance_open_for(OPEN + Duration::from_millis(300)),
    );
    let (mut follow_a, mut follow_c) = (follower(&store, &a), follower(&store, &c));
    trip(&a);
    trip(&c); // the same failure, c's period a little longer: the store keeps c's
    assert_eq!(follow_a.poll().published, 1);
    next_millisecond();
    assert_eq!(follow_c.poll().published, 1);
    a.clock.advance(OPEN);
    probe_succeeds(&a);
    next_millisecond();
    let report = follow_a.poll();
    assert_eq!(
        (
            report.opened,
            report.recoveries_published,
            a.breaker.state()
        ),
        (0, 1, State::Closed),
        "c's opening is the failure a's probe saw end: {report:?}"
    );
}

#[test]
fn an_opening_applied_before_its_recovery_was_published_ends_on_it() {
    let store = MemoryStore::new();
    let (a, c) = (instance(), instance());
    let mut follow_a = follower(&store, &a);
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    next_millisecond();
    let reset = std::time::Instant::now();
    a.breaker.reset(); // the dependency answers a, after its opening was published
    next_millisecond();
    next_millisecond();

    // c starts following between a's recovery and a's next poll: the opening is not answered
    // in the store yet, and c applies it.
    let mut follow_c = follower(&store, &c);
    assert_eq!(follow_c.poll().opened, 1);
    // a's poll stamps its recovery with the reset's time: before c applied the opening, after
    // it was published.
    a.clock.advance(reset.elapsed());
    assert_eq!(follow_a.poll().recoveries_published, 1);
    let report = follow_c.poll();
    assert_eq!(report.ended, 1, "a's recovery answers it: {report:?}");
    probe_succeeds(&c);
}

#[test]
fn a_deadline_published_before_a_closing_is_not_taken_for_a_later_failure() {
    let store = MemoryStore::new();
    let clock = ManualClock::new();
    // a's periods double after a failed probe: 30 s, then 60 s.
    let a = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(OPEN)
            .open_backoff(2.0, 4 * OPEN)
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let b = instance_open_for(OPEN + OPEN / 2);
    let mut follow_a = SharedOpenings::new(store.clone()).follow("db", a.clone());
    let mut follow_b = follower(&store, &b);
    a.try_acquire().unwrap().failure();
    assert_eq!(follow_a.poll().published, 1); // 30 s
    assert!(a.end_open_period()); // a health check
    a.try_acquire().unwrap().failure(); // the probe fails
    assert_eq!(follow_a.poll().published, 1); // 60 s
    assert!(a.end_open_period());
    a.try_acquire().unwrap().success(); // the probe succeeds
    assert_eq!(a.state(), State::Closed);
    next_millisecond();
    assert_eq!(follow_a.poll().recoveries_published, 1);

    // A new failure: a's 30 s again, then b's 45 s.
    a.try_acquire().unwrap().failure();
    assert_eq!(follow_a.poll().published, 1);
    next_millisecond();
    trip(&b);
    assert_eq!(follow_b.poll().published, 1);
    // a's period ends; b's deadline is 15 s after a's own, not the 60 s a published before
    // it closed.
    clock.advance(OPEN);
    let report = follow_a.poll();
    assert_eq!(report.opened, 1, "a follows b's opening: {report:?}");
    assert_eq!(a.state(), State::Open);
}

/// A breaker whose listener panics at every opening from outside (a listener's own bug).
fn breaker_with_a_listener_that_panics_at_external_openings() -> Arc<Breaker> {
    Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .on_transition(|t| {
                if t.trigger == Trigger::External {
                    panic!("a listener's own bug");
                }
            })
            .build()
            .unwrap(),
    )
}

#[test]
fn a_listener_that_panics_at_an_applied_opening_neither_stops_the_poll_nor_gets_it_published() {
    let store = MemoryStore::new();
    let a = instance();
    let b = breaker_with_a_listener_that_panics_at_external_openings();
    let mut follow_b = SharedOpenings::new(store.clone()).follow("db", b.clone());
    trip(&a);
    assert_eq!(follower(&store, &a).poll().published, 1);

    let report = follow_b.poll();
    assert_eq!(report.opened, 1, "{report:?}");
    assert_eq!(b.state(), State::Open);
    let report = follow_b.poll();
    assert_eq!(
        report.published, 0,
        "a's opening, applied here, is not published back as b's own: {report:?}"
    );
}

#[test]
fn a_listener_that_panics_at_an_applied_opening_leaves_the_polling_thread_running() {
    let store = MemoryStore::new();
    let a = instance();
    let b = breaker_with_a_listener_that_panics_at_external_openings();
    let polling = SharedOpenings::new(store.clone())
        .follow("db", b.clone())
        .spawn_polling(Duration::from_millis(1), |_, _| {})
        .unwrap();
    trip(&a);
    assert_eq!(follower(&store, &a).poll().published, 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while b.state() != State::Open && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        b.state(),
        State::Open,
        "the polling thread applied a's opening"
    );
    // A thread that the panic ends has ended well within a second (a poll a millisecond).
    for _ in 0..100 {
        if !polling.is_running() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        polling.is_running(),
        "a listener's panic ended the polling thread"
    );
}

#[test]
fn a_recovery_far_ahead_does_not_end_an_applied_opening_at_a_later_poll() {
    let mut store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let mut follows_b = waiting_follower(&store, &b);
    trip(&a);
    follower(&store, &a).poll();
    assert_eq!(follows_b.poll().opened, 1);
    next_millisecond();
    // From a clock an hour ahead: no instance can have recovered then, at this poll or later.
    store
        .publish_recovery("db", SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    for _ in 0..2 {
        let report = follows_b.poll();
        assert_eq!(report.ended, 0, "{report:?}");
        assert_eq!(b.breaker.state(), State::Open);
    }
}

#[test]
fn tripping_together_after_a_recovery_is_still_one_failure() {
    // As `two_instances_tripping_together_do_not_reopen_each_other`, after a recovery: the
    // follower forgets that it had closed since it last published.
    let store = MemoryStore::new();
    let (a, b) = (
        instance(),
        instance_open_for(OPEN + Duration::from_millis(500)),
    );
    let (mut follows_a, mut follows_b) = (follower(&store, &a), follower(&store, &b));
    trip(&a);
    assert_eq!(follows_a.poll().published, 1);
    a.breaker.reset();
    next_millisecond();
    assert_eq!(follows_a.poll().recoveries_published, 1);
    next_millisecond();
    trip(&a);
    trip(&b);
    assert_eq!(follows_a.poll().published, 1);
    assert_eq!(follows_b.poll().published, 1);
    // a's period ends; the store keeps b's, half a second later, of the same failure.
    a.clock.advance(OPEN);
    let report = follows_a.poll();
    assert_eq!(report.opened, 0, "{report:?}");
    assert_eq!(a.breaker.state(), State::HalfOpen);
}

#[test]
fn an_opening_from_a_clock_far_ahead_is_applied_once() {
    let mut store = MemoryStore::new();
    let ahead = SystemTime::now() + Duration::from_secs(3600);
    store
        .publish("db", Opening::new(ahead + OPEN, ahead))
        .unwrap();
    let b = instance();
    let mut follows_b = follower(&store, &b);
    // Applied for the period its publisher meant, not until a deadline an hour off here.
    assert_eq!(follows_b.poll().opened, 1);
    b.clock.advance(OPEN);
    // Over; the same opening, still in the store, is not applied again.
    let report = follows_b.poll();
    assert_eq!(report.opened, 0, "{report:?}");
    assert_eq!(b.breaker.state(), State::HalfOpen);
}

#[test]
fn without_recoveries_an_opening_from_before_the_own_probe_is_not_applied() {
    let store = OpeningsOnly(MemoryStore::new());
    let (a, c) = (instance(), instance_open_for(OPEN + Duration::from_secs(5)));
    let follow = |instance: &Instance| {
        SharedOpenings::new(store.clone()).follow("db", instance.breaker.clone())
    };
    let (mut follows_a, mut follows_c) = (follow(&a), follow(&c));
    trip(&a);
    assert_eq!(follows_a.poll().published, 1);
    next_millisecond();
    // The same outage, seen by c with a period 5 s longer, published while a is open.
    trip(&c);
    assert_eq!(follows_c.poll().published, 1);
    next_millisecond();
    assert_eq!(follows_a.poll().opened, 0, "a is in its own period");
    a.clock.advance(OPEN);
    probe_succeeds(&a);
    let report = follows_a.poll();
    assert_eq!(
        (report.opened, a.breaker.state()),
        (0, State::Closed),
        "{report:?}"
    );
}

#[test]
fn an_opening_longer_than_any_period_is_held_at_most_the_longest() {
    let mut store = MemoryStore::new();
    let now = SystemTime::now();
    let fifty_years = Duration::from_secs(50 * 366 * 24 * 3600);
    store
        .publish("db", Opening::new(now + fifty_years, now))
        .unwrap();
    let b = instance();
    let report = waiting_follower(&store, &b).poll();
    assert_eq!(report.opened, 1, "{report:?}");
    let left = b.breaker.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(left <= hotbreaker::MAX_OPEN_DURATION, "{left:?}");
    b.clock.advance(Duration::from_secs(3600));
    assert_eq!(b.breaker.state(), State::Open, "still open an hour later");
}

/// Ties at the memory store's lines keep what the Redis store keeps (`store_ties`).
#[test]
fn the_memory_store_keeps_what_is_kept_at_its_ties() {
    store_ties::check_store_ties(&mut MemoryStore::new(), "");
}

/// The latest time a `SystemTime` holds on this platform (seconds in an `i64`).
fn latest_system_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::new(i64::MAX as u64, 999_999_999)
}

/// Followers whose wall clock reads the latest time a `SystemTime` holds publish an opening, a
/// recovery, and read both, without a panic: a wall clock is the caller's input, and the times
/// a follower computes from it (an opening's end, the latest recovery it believes) stop at
/// what the clock reads rather than overflow.
#[test]
fn a_wall_clock_at_the_end_of_time_does_not_panic() {
    let store = MemoryStore::new();
    let (a, b) = (instance(), instance());
    let at_the_end =
        |instance: &Instance| follower(&store, instance).wall_clock(latest_system_time);
    let (mut follow_a, mut follow_b) = (at_the_end(&a), at_the_end(&b));
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    follow_b.poll();
    a.clock.advance(OPEN);
    probe_succeeds(&a);
    assert_eq!(follow_a.poll().recoveries_published, 1);
    trip(&b);
    follow_b.poll();
    follow_a.poll();
}

#[test]
fn a_new_opening_after_a_recovery_is_applied_in_the_poll_that_ends_the_old_one() {
    let Recovered {
        b,
        c,
        mut follow_b,
        mut follow_c,
    } = c_in_an_opening_a_recovered_from();
    // A new failure after the recovery, before c polls again: b's 30 s, which ends sooner than
    // what is left of a's 60 s on c.
    next_millisecond();
    trip(&b);
    assert_eq!(follow_b.poll().published, 1);
    // c learns both at one poll: the recovery ends a's opening, and b's opening, which the
    // recovery does not answer, holds c open in its place, rather than c probing a dependency
    // that failed after the recovery.
    let report = follow_c.poll();
    assert_eq!(
        (report.ended, report.opened),
        (1, 1),
        "a's opening ended, b's applied: {report:?}"
    );
    let left = c.breaker.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(
        left <= OPEN,
        "b's 30 s, not what was left of a's 60: {left:?}"
    );
}
