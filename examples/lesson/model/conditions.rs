//! Everything around a scenario that the lesson fixes and a user may change: the traffic, the
//! fault's behaviour and when verdicts reach the breaker.

use super::fault::FaultOverride;
use super::timing::Timing;
use super::traffic::Traffic;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Conditions {
    pub traffic: Traffic,
    pub fault: FaultOverride,
    pub timing: Timing,
}

impl Conditions {
    /// The lesson's: its traffic, its four modes unchanged, verdicts known at the start.
    pub const LESSON: Conditions = Conditions {
        traffic: Traffic::LESSON,
        fault: FaultOverride::NONE,
        timing: Timing::Lesson,
    };

    pub fn is_lesson(&self) -> bool {
        *self == Conditions::LESSON
    }
}
