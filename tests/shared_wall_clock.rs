//! The follower's comparisons with its wall clock, at their ties. Each test pins the clock
//! the follower reads ([`SharedOpenings::wall_clock`]) and puts a time exactly on a line,
//! then one millisecond past it: the unit stores keep times in.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use hotbreaker::shared::{
    MemoryStore, Opening, OpeningStore, RECOVERY_AHEAD, SharedOpenings, WindowShare,
};
use hotbreaker::{Breaker, ManualClock, State};

#[path = "support/openings_only.rs"]
mod openings_only;

use openings_only::OpeningsOnly;

const OPEN: Duration = Duration::from_secs(30);
const FRESH_FOR: Duration = Duration::from_secs(5);
const MILLI: Duration = Duration::from_millis(1);

thread_local! {
    /// The wall clock of this test's followers: each test runs on a thread of its own.
    static WALL: Cell<SystemTime> = Cell::new(start());
}

/// A time on a whole second, a day after this test binary first asked: the stores drop an
/// opening whose end has passed by their own clock, the machine's, not the follower's, so the
/// pinned clock runs ahead of the machine's (a fixed date would have every opening dropped
/// once the machine's clock passed it).
fn start() -> SystemTime {
    static START: OnceLock<SystemTime> = OnceLock::new();
    *START.get_or_init(|| {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .expect("the machine's clock is after 1970");
        SystemTime::UNIX_EPOCH + Duration::from_secs(now.as_secs() + 24 * 3600)
    })
}

fn pinned_wall() -> SystemTime {
    WALL.with(Cell::get)
}

fn pin_wall(at: SystemTime) {
    WALL.with(|wall| wall.set(at));
}

thread_local! {
    /// How far ahead of the pinned wall clock [`wall_ahead`] runs.
    static AHEAD: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// The pinned wall clock, `AHEAD` ahead of it: an instance whose clock is wrong.
fn wall_ahead() -> SystemTime {
    pinned_wall() + AHEAD.with(Cell::get)
}

/// A breaker on a manual clock that trips at its first failure, followed under "db" on the
/// pinned wall clock.
fn followed<S: OpeningStore + Clone>(store: &S) -> (Arc<Breaker<ManualClock>>, SharedOpenings<S>) {
    followed_on(store, pinned_wall)
}

/// As [`followed`], on the wall clock `wall`.
fn followed_on<S: OpeningStore + Clone>(
    store: &S,
    wall: fn() -> SystemTime,
) -> (Arc<Breaker<ManualClock>>, SharedOpenings<S>) {
    let breaker = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(OPEN)
            .clock(ManualClock::new())
            .build()
            .unwrap(),
    );
    let follower = SharedOpenings::new(store.clone())
        .wall_clock(wall)
        .follow("db", breaker.clone());
    (breaker, follower)
}

fn trip(breaker: &Breaker<ManualClock>) {
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}

/// Trips `breaker`, has `follower` publish the opening, then closes the breaker by its
/// probe once the period is over on its clock.
fn opened_published_and_probed_closed<S: OpeningStore>(
    breaker: &Breaker<ManualClock>,
    follower: &mut SharedOpenings<S>,
) {
    trip(breaker);
    assert_eq!(follower.poll().published, 1);
    breaker.clock().advance(OPEN);
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn an_opening_is_stamped_with_the_followers_wall_clock() {
    let store = MemoryStore::new();
    let (breaker, mut follower) = followed(&store);
    trip(&breaker);
    assert_eq!(follower.poll().published, 1);
    assert_eq!(
        store.clone().opening("db").unwrap(),
        Some(Opening::new(start() + OPEN, start()))
    );
}

#[test]
fn a_recovery_is_stamped_when_the_breaker_closed_on_the_followers_wall_clock() {
    let mut store = MemoryStore::new();
    let (breaker, mut follower) = followed(&store);
    opened_published_and_probed_closed(&breaker, &mut follower);
    // The poll comes 2 s after the closing, on the breaker's clock.
    breaker.clock().advance(Duration::from_secs(2));
    pin_wall(start() + Duration::from_secs(40));
    assert_eq!(follower.poll().recoveries_published, 1);
    assert_eq!(
        store.recovered_at("db").unwrap(),
        Some(start() + Duration::from_secs(38))
    );
}

#[test]
fn an_opening_is_applied_for_what_is_left_of_it_on_the_followers_wall_clock() {
    let mut store = MemoryStore::new();
    // Published 10 s ago for 40 s: 30 s are left.
    let published = start() - Duration::from_secs(10);
    store
        .publish(
            "db",
            Opening::new(published + Duration::from_secs(40), published),
        )
        .unwrap();
    let (breaker, mut follower) = followed(&store);
    assert_eq!(follower.poll().opened, 1);
    let rejected = breaker.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(30)));
}

/// Another instance's window stamped `at`, added to this one's: 5 failures of 10 in all,
/// which meets a rate of a half. Whether the sum opened the breaker.
fn opens_with_a_window_stamped(at: SystemTime) -> bool {
    let mut store = MemoryStore::new();
    store
        .publish_window("db", &WindowShare::new("b", 3, 7, at))
        .unwrap();
    let breaker = Arc::new(
        Breaker::builder()
            .failure_rate(0.5, 10)
            .open_duration(OPEN)
            .clock(ManualClock::new())
            .build()
            .unwrap(),
    );
    let mut follower = SharedOpenings::new(store)
        .wall_clock(pinned_wall)
        .share_windows("a", FRESH_FOR)
        .unwrap()
        .follow("db", breaker.clone());
    for fails in [true, true, false] {
        let permit = breaker.try_acquire().unwrap();
        if fails {
            permit.failure();
        } else {
            permit.success();
        }
    }
    let report = follower.poll();
    assert_eq!(
        report.opened_by_windows == 1,
        breaker.state() == State::Open
    );
    report.opened_by_windows == 1
}

#[test]
fn a_window_counts_up_to_its_freshness_old_or_ahead_and_not_a_millisecond_more() {
    assert!(opens_with_a_window_stamped(start() - FRESH_FOR));
    assert!(!opens_with_a_window_stamped(start() - FRESH_FOR - MILLI));
    // Another machine's clock may run ahead of this one's, as far.
    assert!(opens_with_a_window_stamped(start() + FRESH_FOR));
    assert!(!opens_with_a_window_stamped(start() + FRESH_FOR + MILLI));
}

/// Instance a's opening applied by instance b, then a recovery recorded `ahead` of b's wall
/// clock: whether b's next poll ends the opening.
fn applied_opening_ended_by_a_recovery_ahead(ahead: Duration) -> bool {
    let mut store = MemoryStore::new();
    let ((a, mut follow_a), (b, mut follow_b)) = (followed(&store), followed(&store));
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    assert_eq!(follow_b.poll().opened, 1);
    store.publish_recovery("db", start() + ahead).unwrap();
    let ended = follow_b.poll().ended;
    assert_eq!(ended == 1, probes(&b));
    ended == 1
}

/// Instance a's opening in the store with a recovery recorded `ahead` of b's wall clock
/// before b reads it: whether b applies the opening.
fn opening_applied_beside_a_recovery_ahead(ahead: Duration) -> bool {
    let mut store = MemoryStore::new();
    let ((a, mut follow_a), (b, mut follow_b)) = (followed(&store), followed(&store));
    trip(&a);
    assert_eq!(follow_a.poll().published, 1);
    store.publish_recovery("db", start() + ahead).unwrap();
    let opened = follow_b.poll().opened;
    assert_eq!(opened == 1, b.state() == State::Open);
    opened == 1
}

#[test]
fn a_recovery_up_to_its_allowance_ahead_is_believed_and_not_a_millisecond_more() {
    // Once an opening is applied: it ends, or runs on.
    assert!(applied_opening_ended_by_a_recovery_ahead(RECOVERY_AHEAD));
    assert!(!applied_opening_ended_by_a_recovery_ahead(
        RECOVERY_AHEAD + MILLI
    ));
    // Before: it answers the opening, which is not applied, or does not.
    assert!(!opening_applied_beside_a_recovery_ahead(RECOVERY_AHEAD));
    assert!(opening_applied_beside_a_recovery_ahead(
        RECOVERY_AHEAD + MILLI
    ));
}

/// Whether the next call is a half-open probe: an opening ended early.
fn probes(breaker: &Breaker<ManualClock>) -> bool {
    breaker.try_acquire().is_ok_and(|permit| permit.is_probe())
}

/// This instance's breaker opened, was seen open by its follower at the start, and closed
/// after its probe; then another instance's opening published `after` the start reaches the
/// store. Whether the follower applies it.
fn remote_opening_applied_after_the_own_probe(after: Duration) -> bool {
    pin_wall(start());
    let mut store = OpeningsOnly(MemoryStore::new());
    let (breaker, mut follower) = followed(&store);
    opened_published_and_probed_closed(&breaker, &mut follower);
    let published = start() + after;
    store
        .publish("db", Opening::new(published + 3 * OPEN, published))
        .unwrap();
    pin_wall(start() + OPEN + Duration::from_secs(1));
    let opened = follower.poll().opened;
    assert_eq!(opened == 1, breaker.state() == State::Open);
    opened == 1
}

#[test]
fn a_remote_opening_published_when_the_own_was_last_seen_is_older_than_its_probe() {
    assert!(!remote_opening_applied_after_the_own_probe(Duration::ZERO));
    assert!(remote_opening_applied_after_the_own_probe(MILLI));
}

#[test]
fn a_follower_whose_clock_was_stepped_back_follows_the_next_failure() {
    let store = MemoryStore::new();
    // A trips and closes again by its probe while its wall clock runs an hour ahead.
    AHEAD.with(|ahead| ahead.set(Duration::from_secs(3600)));
    let (a, mut follows_a) = followed_on(&store, wall_ahead);
    opened_published_and_probed_closed(&a, &mut follows_a);
    // Its clock is set right, and it tells of the recovery.
    AHEAD.with(|ahead| ahead.set(Duration::ZERO));
    pin_wall(start() + OPEN + Duration::from_secs(1));
    assert_eq!(follows_a.poll().recoveries_published, 1);
    // B, whose clock was right all along, trips on a new failure.
    pin_wall(start() + OPEN + Duration::from_secs(2));
    let (b, mut follows_b) = followed(&store);
    trip(&b);
    assert_eq!(follows_b.poll().published, 1);
    // A's probe was seen an hour ahead of this opening's publishing, on A's clock as it
    // then was; the opening is still news.
    assert_eq!(follows_a.poll().opened, 1, "A follows B's opening");
    assert_eq!(a.state(), State::Open);
}
