//! When a call's verdict reaches the breaker.

/// The lesson's model knows a call's verdict the moment the call starts; real code learns it
/// when the call returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// The verdict is recorded as the call starts, as in the lesson.
    #[default]
    Lesson,
    /// The verdict is recorded in the round the call's slot frees, before that round's
    /// arrivals: the slot is free for them, so the call has returned.
    Realistic,
}

impl Timing {
    pub const ALL: [Timing; 2] = [Timing::Lesson, Timing::Realistic];

    /// The name the `--timing` flag takes.
    pub fn name(self) -> &'static str {
        match self {
            Timing::Lesson => "lesson",
            Timing::Realistic => "realistic",
        }
    }

    pub fn from_name(name: &str) -> Option<Timing> {
        Timing::ALL.into_iter().find(|timing| timing.name() == name)
    }
}
