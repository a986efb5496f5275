//! Records a day of outcomes through permits, one letter a call: `s` a success, `f` a
//! failure, `i` an outcome that says nothing about the dependency. Included with `#[path]`
//! by the test crates that need it.

use hotbreaker::{Breaker, ManualClock};

/// Asks `breaker` for a permit per letter of `outcomes` and records that letter's outcome.
///
/// # Panics
///
/// If the breaker rejects a call (every test that uses it expects it closed throughout), or
/// at a letter other than `s`, `f` and `i`.
pub fn record(breaker: &Breaker<ManualClock>, outcomes: &str) {
    for c in outcomes.chars() {
        let permit = breaker.try_acquire().expect("closed");
        match c {
            's' => permit.success(),
            'f' => permit.failure(),
            'i' => permit.ignore(),
            other => panic!("no outcome is written {other:?}"),
        }
    }
}
