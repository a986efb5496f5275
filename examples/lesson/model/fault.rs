//! A user's own failure: the chosen mode's behaviour from the fault on, with some of its
//! numbers replaced.

use super::mode::Behaviour;

/// What to change in the failing mode's behaviour; `None` keeps the mode's own number. The
/// dependency is still the lesson's healthy one before the fault.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FaultOverride {
    pub failure_probability: Option<f64>,
    pub success_hold: Option<u64>,
    pub failure_hold: Option<u64>,
}

impl FaultOverride {
    /// Nothing changed: the lesson's modes as they are.
    pub const NONE: FaultOverride = FaultOverride {
        failure_probability: None,
        success_hold: None,
        failure_hold: None,
    };

    /// `behaviour` with this override's numbers in place of its own.
    pub fn apply(&self, behaviour: Behaviour) -> Behaviour {
        Behaviour {
            failure_probability: self
                .failure_probability
                .unwrap_or(behaviour.failure_probability),
            success_hold: self.success_hold.unwrap_or(behaviour.success_hold),
            failure_hold: self.failure_hold.unwrap_or(behaviour.failure_hold),
        }
    }
}
