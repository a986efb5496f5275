//! What one rule did in the four modes, measured against the same runs without a breaker.

use crate::model::{Detection, RunCounts};

use super::grid::Candidate;

/// The four runs of one setup, by mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModeRuns {
    pub healthy: RunCounts,
    pub partial: RunCounts,
    pub slowdown: RunCounts,
    pub halt: RunCounts,
}

/// A rule's figures in a mode where it should open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultFigures {
    pub openings: u64,
    pub detection: Option<Detection>,
    /// Slot-rounds until detection; a fault never detected costs every slot-round its calls
    /// held from its start to the end of the run.
    pub detection_cost: u64,
    /// Calls to the broken dependency the breaker spared.
    pub calls_saved: i64,
    /// Tracking queries that found a slot with the breaker and none without.
    pub tracking_rescued: i64,
}

impl FaultFigures {
    fn new(with: &RunCounts, without: &RunCounts) -> Self {
        FaultFigures {
            openings: with.openings,
            detection: with.detection,
            detection_cost: with
                .detection
                .map_or(with.fault_slot_rounds, |detection| detection.slot_rounds),
            calls_saved: signed_drop(without.calls, with.calls),
            tracking_rescued: signed_drop(without.tracking_no_slot, with.tracking_no_slot),
        }
    }
}

/// One rule's row of the sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuleFigures {
    pub candidate: Candidate,
    pub healthy_openings: u64,
    /// Valid events rejected on the healthy day.
    pub healthy_rejected: u64,
    pub partial_openings: u64,
    /// Successful events the partial day had without the breaker and not with it (the
    /// lesson's measure; negative if the breaker's rejections happened to leave more).
    pub partial_lost: i64,
    pub slowdown: FaultFigures,
    pub halt: FaultFigures,
}

impl RuleFigures {
    /// `with`: the rule's runs; `without`: the same runs with no breaker.
    pub fn new(candidate: Candidate, with: &ModeRuns, without: &ModeRuns) -> Self {
        RuleFigures {
            candidate,
            healthy_openings: with.healthy.openings,
            healthy_rejected: with.healthy.event_rejected,
            partial_openings: with.partial.openings,
            partial_lost: signed_drop(without.partial.event_ok, with.partial.event_ok),
            slowdown: FaultFigures::new(&with.slowdown, &without.slowdown),
            halt: FaultFigures::new(&with.halt, &without.halt),
        }
    }

    /// The cost of false openings: valid events lost on the two days the breaker should stay
    /// closed, the healthy day's rejections plus the partial day's lost successes.
    pub fn false_opening_cost(&self) -> i64 {
        self.healthy_rejected as i64 + self.partial_lost
    }

    /// The cost of detection: slot-rounds the event flow held in the broken dependency until
    /// the first opening, slowdown plus halt.
    pub fn detection_cost(&self) -> u64 {
        self.slowdown.detection_cost + self.halt.detection_cost
    }

    /// Both costs, for the frontier.
    pub fn costs(&self) -> [i64; 2] {
        [self.false_opening_cost(), self.detection_cost() as i64]
    }
}

/// `before - after`, signed.
fn signed_drop(before: u64, after: u64) -> i64 {
    before as i64 - after as i64
}
