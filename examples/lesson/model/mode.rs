//! How the guarded dependency behaves: the four failure modes of the lesson.

/// The dependency's failure mode once the fault starts (before it, every mode is healthy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Rare timeouts that hold a slot long.
    Healthy,
    /// One call in eight fails fast.
    Partial,
    /// Every call fails, each after holding its slot as long as a timeout.
    Slowdown,
    /// Every call fails fast.
    Halt,
}

/// What one call to the dependency does in a mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Behaviour {
    pub failure_probability: f64,
    /// Rounds a successful call holds its slot.
    pub success_hold: u64,
    /// Rounds a failed call holds its slot.
    pub failure_hold: u64,
}

impl Mode {
    /// The lesson's order of modes in both of its tables.
    pub const ALL: [Mode; 4] = [Mode::Healthy, Mode::Partial, Mode::Slowdown, Mode::Halt];

    /// The name the `--mode` flag takes.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Healthy => "healthy",
            Mode::Partial => "partial",
            Mode::Slowdown => "slowdown",
            Mode::Halt => "halt",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.name() == name)
    }

    pub fn behaviour(self) -> Behaviour {
        let (failure_probability, success_hold, failure_hold) = match self {
            Mode::Healthy => (0.025, 6, 22),
            Mode::Partial => (0.125, 6, 3),
            Mode::Halt => (1.0, 6, 3),
            Mode::Slowdown => (1.0, 6, 22),
        };
        Behaviour {
            failure_probability,
            success_hold,
            failure_hold,
        }
    }
}
