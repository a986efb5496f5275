//! A run round by round: what `--plot` draws.

use hotbreaker::State;

use crate::model::{Observer, SlotUse};

/// Per round: slots held by each use, tracking queries that found no slot, and the breaker's
/// state at the round's end.
pub struct Trace {
    rounds: usize,
    /// Slot-holding starts minus ends, per use and round; summed, the slots held.
    changes: [Vec<i64>; 3],
    no_slot: Vec<u32>,
    states: Vec<Option<State>>,
}

/// The uses in the order `Trace` keeps them, bottom to top in the plot.
pub const USES: [SlotUse; 3] = [
    SlotUse::Tracking,
    SlotUse::EventCall,
    SlotUse::EventRejected,
];

impl Trace {
    pub fn new(rounds: usize) -> Self {
        Trace {
            rounds,
            // One more entry, for holds that end after the last round.
            changes: std::array::from_fn(|_| vec![0; rounds + 1]),
            no_slot: vec![0; rounds],
            states: vec![None; rounds],
        }
    }

    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Slots held for `slot_use` during each round.
    pub fn held(&self, slot_use: SlotUse) -> Vec<u32> {
        let changes = &self.changes[use_index(slot_use)];
        let mut held = 0_i64;
        changes[..self.rounds]
            .iter()
            .map(|change| {
                held += change;
                held as u32
            })
            .collect()
    }

    /// Tracking queries that found no slot, per round.
    pub fn no_slot(&self) -> &[u32] {
        &self.no_slot
    }

    /// The breaker's state at the end of each round; `None` without a breaker.
    pub fn states(&self) -> &[Option<State>] {
        &self.states
    }
}

fn use_index(slot_use: SlotUse) -> usize {
    USES.iter()
        .position(|&known| known == slot_use)
        .expect("every use is in USES")
}

impl Observer for Trace {
    fn slot_taken(&mut self, slot_use: SlotUse, round: u64, hold: u64) {
        let changes = &mut self.changes[use_index(slot_use)];
        let start = round as usize;
        let end = (start as u64 + hold).min(self.rounds as u64) as usize;
        changes[start] += 1;
        changes[end] -= 1;
    }

    fn tracking_without_slot(&mut self, round: u64) {
        self.no_slot[round as usize] += 1;
    }

    fn round_end(&mut self, round: u64, state: Option<State>) {
        self.states[round as usize] = state;
    }
}
