//! A recovery is stamped with the closing it reports, even when the follower polls in the
//! middle of that closing: a poll that finds the breaker closed must find that closing's
//! time (`closed_at`, stored before the state word's swap), not the closing before it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use hotbreaker::shared::{MemoryStore, OpeningStore, SharedOpenings};
use hotbreaker::{Breaker, ManualClock, State};

#[path = "support/hook_clock.rs"]
mod hook_clock;

use hook_clock::HookClock;

type Follower = Arc<Mutex<SharedOpenings<MemoryStore>>>;

/// Arms `clock` so that, at each of its readings until the breaker reads closed, it looks
/// again; at the first reading that finds it closed, it polls `follower`, as a polling thread
/// may at that instant, and adds the recoveries that poll published to `published`. A
/// reading made by the follower's own poll (its lock held) ends the watch without polling.
fn poll_at_the_first_reading_after_closing(
    clock: HookClock,
    breaker: Arc<Breaker<HookClock>>,
    follower: Follower,
    published: Arc<Mutex<usize>>,
) {
    let again = clock.clone();
    clock.arm(1, move || {
        if breaker.state() != State::Closed {
            poll_at_the_first_reading_after_closing(again, breaker, follower, published);
        } else if let Ok(mut follower) = follower.try_lock() {
            *published.lock().unwrap() += follower.poll().recoveries_published;
        }
    });
}

/// Instance A trips after 1000 s in service and publishes its opening; instance B applies it
/// and waits for A's probe. A's probe succeeds; A's follower polls at the first reading of
/// A's clock once A reads closed (inside the closing, if the closing reads its clock after
/// its swap), then once more. A publishes one recovery, stamped after the opening, and B's
/// next poll ends its opening.
///
/// Catches the closing's time stored after the swap: a poll in between stamped the recovery
/// with the closing before (A's build, 1000 s earlier), took it as published, and never
/// published the real one, so B stayed open.
#[test]
fn a_poll_in_the_middle_of_a_closing_stamps_the_recovery_with_it() {
    let store = MemoryStore::new();
    let clock = HookClock::default();
    let a = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .open_duration(Duration::from_millis(300))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let b = Arc::new(
        Breaker::builder()
            .consecutive_failures(1)
            .clock(ManualClock::new())
            .build()
            .unwrap(),
    );
    let follow_a: Follower = Arc::new(Mutex::new(
        SharedOpenings::new(store.clone()).follow("db", Arc::clone(&a)),
    ));
    let mut follow_b = SharedOpenings::new(store.clone())
        .wait_for_probe(Duration::from_secs(60))
        .unwrap()
        .follow("db", Arc::clone(&b));

    clock.set(Duration::from_secs(1000));
    a.try_acquire().unwrap().failure();
    assert_eq!(follow_a.lock().unwrap().poll().published, 1);
    let opened_at = SystemTime::now();
    assert_eq!(follow_b.poll().opened, 1);
    // A's period ends, on its clock and on the wall clock (the follower's).
    std::thread::sleep(Duration::from_millis(350));
    clock.set(Duration::from_millis(1_000_350));
    let probe = a.try_acquire().unwrap();
    assert!(probe.is_probe());
    let published = Arc::new(Mutex::new(0));
    poll_at_the_first_reading_after_closing(
        clock.clone(),
        Arc::clone(&a),
        Arc::clone(&follow_a),
        Arc::clone(&published),
    );
    probe.success();
    assert_eq!(a.state(), State::Closed);
    std::thread::sleep(Duration::from_millis(5));
    let later = follow_a.lock().unwrap().poll().recoveries_published;
    assert_eq!(*published.lock().unwrap() + later, 1, "one recovery");
    let stamped = store
        .clone()
        .recovered_at("db")
        .unwrap()
        .expect("published");
    assert!(
        stamped >= opened_at,
        "the recovery is stamped {:?} before the opening it answers",
        opened_at.duration_since(stamped).unwrap_or_default()
    );
    assert_eq!(follow_b.poll().ended, 1, "B waits no longer");
    assert_eq!(b.state(), State::HalfOpen);
}
