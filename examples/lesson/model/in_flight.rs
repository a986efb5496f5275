//! Calls out at the dependency whose verdicts the breaker has not heard yet (realistic timing).

use std::collections::BTreeMap;

/// Items keyed by the round their call ends, in the order they started.
pub struct InFlight<T> {
    by_end: BTreeMap<u64, Vec<T>>,
}

impl<T> InFlight<T> {
    pub fn new() -> Self {
        InFlight {
            by_end: BTreeMap::new(),
        }
    }

    pub fn push(&mut self, end_round: u64, item: T) {
        self.by_end.entry(end_round).or_default().push(item);
    }

    /// The calls that end in `round`, oldest first. Every call ends after the round it
    /// started in, and rounds are visited in order, so none is ever skipped.
    pub fn ending(&mut self, round: u64) -> Vec<T> {
        self.by_end.remove(&round).unwrap_or_default()
    }
}
