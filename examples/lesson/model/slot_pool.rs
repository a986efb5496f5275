//! The gateway's slot pool, shared by both flows.

/// Each slot is the round from which it is free again.
pub struct SlotPool {
    free_from: Vec<u64>,
}

impl SlotPool {
    pub fn new(slots: usize) -> Self {
        Self {
            free_from: vec![0; slots],
        }
    }

    /// Takes the first free slot (lowest index, as the lesson does) for `hold` rounds from
    /// `round`; `false` when every slot is busy.
    pub fn take(&mut self, round: u64, hold: u64) -> bool {
        match self.free_from.iter().position(|&free| free <= round) {
            Some(slot) => {
                self.free_from[slot] = round + hold;
                true
            }
            None => false,
        }
    }
}
