//! When the breaker trips: the lesson's trip rules.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// No breaker at all: every event calls the dependency.
    None,
    /// Trip after this many failures in a row.
    Consecutive { failures: usize },
    /// Trip when at least `threshold` of the last `window` calls failed (judged only once the
    /// window is full).
    Rate { threshold: f64, window: usize },
}

/// The form the `--rule` flag takes: `none`, `consecutive:5`, `rate:0.5/20`.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::None => f.write_str("none"),
            Rule::Consecutive { failures } => write!(f, "consecutive:{failures}"),
            Rule::Rate { threshold, window } => write!(f, "rate:{threshold}/{window}"),
        }
    }
}
