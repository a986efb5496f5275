//! What a window forgets stays forgotten, and nothing else is taken for it.
//!
//! A full window forgets its failures once enough successes have followed the newest
//! (`src/window/mod.rs`, `forget_after`); the failures after that are numbered on, so a rule
//! may look back past the clean spell. Two things must hold there:
//!
//! - the forgotten newest failure's record is in the ring (the forgetting copies it there, as
//!   the next failure's commit would have): otherwise the look-back finds whatever the slot
//!   holds, and a generation 2^13 transitions back has the same 13-bit tag and numbers its
//!   failures from 0 too;
//! - a failure forgotten stays out of view of any window the breaker may be given: a clean
//!   window counts no success, so its distance is short by the clean spell, and the window
//!   forgets no sooner than its failure records (the longest window `reconfigure` allows).
//!
//! Each test fails without the part that keeps it; found by a review (2026-12-07).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{Breaker, FailureRateConfig, ManualClock, State};

#[path = "support/outcomes.rs"]
mod outcomes;
use outcomes::record;

fn breaker(
    configure: impl FnOnce(hotbreaker::Builder) -> hotbreaker::Builder,
) -> Breaker<ManualClock> {
    configure(Breaker::builder().open_duration(Duration::from_secs(1)))
        .clock(ManualClock::new())
        .build()
        .expect("valid configuration")
}

/// Run rule of 3. Generation 0 leaves the record of its failure number 1 in the ring.
/// Generation 8192 (same tag) has failure 1 long before failures 2 and 3, with 100
/// successes between (the window forgets failure 1, the newest then, whose record only the
/// forgetting copies to the ring); failure 3 looks back to failure 1's slot, which held
/// generation 0's record before the forgetting copied its own.
#[test]
fn a_run_of_two_is_not_taken_for_three_through_a_record_of_a_generation_2_pow_13_back() {
    let breaker = breaker(|b| b.consecutive_failures(3));
    // Generation 0: f0, 100 successes (the window forgets f0), f1, f2: record 1 published.
    record(&breaker, "f");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    assert_eq!(breaker.state(), State::Closed);
    for _ in 0..1 << 13 {
        breaker.reset(); // closed -> closed: one generation each
    }
    // Generation 8192: f0, f1, 100 successes (forgotten), f2, f3.
    record(&breaker, "ff");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the run is f2, f3: two failures, which a run of 3 does not trip on"
    );
}

/// The metrics walk back the same way: after generation 8192's f2, the run is one failure.
#[test]
fn the_run_metric_does_not_count_a_record_of_a_generation_2_pow_13_back() {
    let breaker = breaker(|b| b.consecutive_failures(3));
    record(&breaker, "f");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    for _ in 0..1 << 13 {
        breaker.reset();
    }
    record(&breaker, "ff");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "f");
    assert_eq!(
        breaker.metrics().consecutive_failures,
        1,
        "f2 follows 100 successes: a run of one"
    );
}

/// The same in control: without the 2^13 resets (or with one reset fewer) nothing trips.
#[test]
fn control_without_the_tag_collision_nothing_trips() {
    let breaker = breaker(|b| b.consecutive_failures(3));
    record(&breaker, "f");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    for _ in 0..(1 << 13) - 1 {
        breaker.reset();
    }
    record(&breaker, "ff");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.metrics().consecutive_failures, 2);
}

/// Rate rule: 3 failures of 60 (T = 0.05). Among generation 8192's last 60 calls only f3
/// fails (f2 is 62 calls back, f0 and f1 over 200); failure 1's slot held generation 0's
/// record of its failure 1, which placed it 2 calls back, until the forgetting copied
/// generation 8192's.
#[test]
fn one_failure_in_view_is_not_taken_for_three_through_a_record_of_a_generation_2_pow_13_back() {
    let breaker = breaker(|b| b.failure_rate(0.05, 60));
    // Generation 0: 60 successes fill it (clean), f0, 100 successes (forgotten), f1, f2.
    record(&breaker, &"s".repeat(60));
    record(&breaker, "f");
    record(&breaker, &"s".repeat(100));
    record(&breaker, "ff");
    assert_eq!(breaker.state(), State::Closed);
    for _ in 0..1 << 13 {
        breaker.reset();
    }
    // Generation 8192: f0 f1, 58 successes fill it, 100 more (forgotten), f2, 60 s, f3.
    record(&breaker, "ff");
    record(&breaker, &"s".repeat(158));
    record(&breaker, "f");
    record(&breaker, &"s".repeat(60));
    record(&breaker, "f");
    let m = breaker.metrics();
    assert_eq!(
        (breaker.state(), m.window_failures),
        (State::Closed, 1),
        "the last 60 calls hold one failure (f3): 1/60 < 0.05"
    );
}

/// A rate window of 10 with 128 failure records, made 100 long after two failures and 100
/// successes, holds only the failures among its last 100 calls. It used to forget them after
/// 64 successes, and count none of the 36 after (a clean window counts no success), so it took
/// them for 64 calls back. It now forgets no sooner than 128 successes after them, counting
/// each.
#[test]
fn a_window_made_longer_counts_only_the_failures_in_its_view() {
    let trips = Arc::new(Mutex::new(Vec::new()));
    let seen = trips.clone();
    let breaker = Breaker::builder()
        .failure_rate(0.3, 10) // 3 of 10
        .failure_records(128)
        .open_duration(Duration::from_secs(1))
        .clock(ManualClock::new())
        .on_transition(move |t| seen.lock().unwrap().push(t.trigger))
        .build()
        .unwrap();
    record(&breaker, &"s".repeat(10)); // full, clean
    record(&breaker, "ff"); // f0, f1: 2 of 10
    record(&breaker, &"s".repeat(100)); // out of view of the window of 10
    assert_eq!(breaker.metrics().window_failures, 0, "out of view");
    let mut config = breaker.config();
    config.failure_rate = Some(FailureRateConfig {
        threshold: 0.04, // 4 of 100
        window: 100,
        minimum_calls: None,
    });
    breaker.reconfigure(config).unwrap();
    record(&breaker, "ff"); // f2, f3: the only failures among the last 100 calls
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the window holds f2 and f3 only (2 of 100 < 4); trips: {:?}",
        trips.lock().unwrap()
    );
}
