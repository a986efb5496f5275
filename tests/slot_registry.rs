//! The slot registry under many threads alive at once: more than one word of its bitmap in
//! use, and slots given back while others are held. Observed through per-thread windows: a
//! thread that owns a slot has a window no other live thread records into, so two threads
//! that each fail once trip a breaker of "two in a row" only if they were handed one slot,
//! or both left to share the shared window.
//!
//! A file of its own, so that no other test's threads hold slots meanwhile (the threads here
//! hold 201 of the 256 at most).

use std::sync::Barrier;
use std::time::Duration;

use hotbreaker::{Breaker, ManualClock, State};

/// Threads holding slots at once in each group: more than one 64-slot word's worth.
const GROUP: usize = 100;

/// One failing call, or a rejection if the breaker is open: no panic on a thread the
/// barriers wait for.
fn fail(breaker: &Breaker<ManualClock>) {
    let _ = breaker.call(|| Err::<(), _>("down"));
}

/// A group of `GROUP` threads alive together each fail once, then one thread takes a slot and
/// exits (giving it back), then a second group of `GROUP` fails once each while the first
/// still holds its slots. Every thread has a window of its own (256 stripes), so nothing
/// trips.
///
/// Catches: a claim that numbers the slots of the second and later words wrongly (tried: word
/// index times 32, so that word 1's bit `b` is slot `32 + b`, one that word 0 hands out too),
/// a claim that looks only at the first word (threads beyond 64 share the shared window), and
/// a release that clears the other bits of the word instead of its own (tried: `fetch_and(1 <<
/// bit)`: the exit frees the first group's slots, and the second group is handed them). In
/// each, two live threads record into one window and their failures make a run of two.
#[test]
fn threads_alive_together_beyond_one_word_keep_windows_of_their_own() {
    let breaker = Breaker::builder()
        .clock(ManualClock::new())
        .open_duration(Duration::from_secs(60))
        .consecutive_failures(2)
        .per_thread_windows(true)
        .stripes(256)
        .build()
        .expect("valid settings");
    let other = Breaker::builder()
        .clock(ManualClock::new())
        .consecutive_failures(100)
        .build()
        .expect("valid settings");
    // Each group's threads and the test thread: all of a group hold their slots when it
    // passes `held`, and keep them until it passes `done`.
    let held = [Barrier::new(GROUP + 1), Barrier::new(GROUP + 1)];
    let done = Barrier::new(2 * GROUP + 1);
    std::thread::scope(|s| {
        for group in 0..2 {
            if group == 1 {
                // A thread that comes and goes between the groups: its exit gives its slot back.
                s.spawn(|| fail(&other)).join().unwrap();
            }
            for _ in 0..GROUP {
                let (breaker, held, done) = (&breaker, &held[group], &done);
                s.spawn(move || {
                    fail(breaker);
                    held.wait();
                    done.wait();
                });
            }
            held[group].wait();
        }
        let state = breaker.state();
        done.wait();
        assert_eq!(
            state,
            State::Closed,
            "two live threads recorded into one window: {:?}",
            breaker.metrics()
        );
    });
    assert_eq!(breaker.metrics().failures, 2 * GROUP as u64);
}
