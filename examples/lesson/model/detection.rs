//! When the breaker first caught the fault, and what the wait cost.

/// The first opening after the fault began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detection {
    /// Rounds from the fault's start to the first opening.
    pub round: u64,
    /// Slot-rounds the calls to the dependency held from the fault's start until then.
    pub slot_rounds: u64,
}

/// Watches a run for its detection. Slot-rounds are counted as the lesson counts them: a call's
/// whole hold when it starts.
pub struct Detector {
    fault_at: u64,
    /// A healthy run has no fault to detect: its openings are all false ones.
    fault_expected: bool,
    slot_rounds_before_fault: Option<u64>,
    found: Option<Detection>,
}

impl Detector {
    pub fn new(fault_at: u64, fault_expected: bool) -> Self {
        Detector {
            fault_at,
            fault_expected,
            slot_rounds_before_fault: None,
            found: None,
        }
    }

    /// Call at the start of every round with the slot-rounds counted so far.
    pub fn round_starts(&mut self, round: u64, slot_rounds: u64) {
        if round == self.fault_at {
            self.slot_rounds_before_fault = Some(slot_rounds);
        }
    }

    /// The breaker opened in `round`, with `slot_rounds` counted so far.
    pub fn opened(&mut self, round: u64, slot_rounds: u64) {
        let Some(before) = self.slot_rounds_before_fault else {
            return;
        };
        if self.fault_expected && self.found.is_none() {
            self.found = Some(Detection {
                round: round - self.fault_at,
                slot_rounds: slot_rounds - before,
            });
        }
    }

    pub fn detection(&self) -> Option<Detection> {
        self.found
    }

    /// Slot-rounds held from the fault's start to `slot_rounds` (0 when the fault never came).
    pub fn since_fault(&self, slot_rounds: u64) -> u64 {
        self.slot_rounds_before_fault
            .map_or(0, |before| slot_rounds - before)
    }
}
