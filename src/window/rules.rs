//! The trip rules as the window needs them once it is full, in one word.
//!
//! A failure in a full window needs three numbers from the settings: the run length, the
//! rate window (which also says whether a rate rule exists, for clearing the window) and the
//! failures that trip a full window. (The minimum number of calls matters only while the
//! window fills, and is then read from the settings with the threshold.)
//! Loading them from the breaker's [`Swappable`](crate::sync::Swappable) settings costs two
//! atomic read-modify-writes (arc-swap's debt slot), as much again as the failure's own
//! compare-and-swaps; so the window keeps a copy, packed into one `AtomicU64` that a failure
//! reads with one plain load. Only a window that is still filling, whose judgement needs the
//! threshold itself, loads the settings.
//!
//! ```text
//!  63           48 47           32 31           16 15            0
//! +---------------+---------------+---------------+---------------+
//! | run length    | rate window   | failures that | 0             |
//! | (0: no rule)  | (0: no rule)  | trip it full  |               |
//! +---------------+---------------+---------------+---------------+
//! ```
//!
//! Every field is at most [`MAX_WINDOW`] or
//! [`MAX_CONSECUTIVE`], 32,768, so 16 bits hold it.
//!
//! One word, so a failure judges by one version of the rules, never half of each when a
//! reconfiguration races it (see `Window::apply`).

use crate::config::{MAX_CONSECUTIVE, MAX_WINDOW, Settings};

// The packing below relies on these.
const _: () = assert!(MAX_WINDOW <= u16::MAX as u32 && MAX_CONSECUTIVE <= u16::MAX as u32);

/// The rules a full window judges by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rules {
    /// Consecutive failures that trip the breaker.
    pub(super) run: Option<u32>,
    /// The rate rule's window, if there is a rate rule.
    pub(super) window: Option<u32>,
    /// Failures among a full window's calls that trip it.
    pub(super) failures_to_trip_full: u32,
}

impl Rules {
    pub(super) fn of(settings: &Settings) -> Self {
        Rules {
            run: settings.consecutive_failures,
            window: settings.failure_rate.map(|rate| rate.window),
            failures_to_trip_full: settings.failures_to_trip_full,
        }
    }

    /// Successes that must follow the newest failure before no rule can see it any more: the
    /// rate window must have moved past it, and a consecutive run must have been broken.
    #[inline]
    pub(super) fn forget_after(self) -> u32 {
        self.window.map_or(1, |window| window.max(1))
    }

    pub(super) fn pack(self) -> u64 {
        let field = |value: u32| u64::from(value as u16);
        field(self.run.unwrap_or(0)) << 48
            | field(self.window.unwrap_or(0)) << 32
            | field(self.failures_to_trip_full) << 16
    }

    pub(super) fn unpack(raw: u64) -> Self {
        let field = |shift: u32| u32::from((raw >> shift) as u16);
        let present = |value: u32| (value != 0).then_some(value);
        Rules {
            run: present(field(48)),
            window: present(field(32)),
            failures_to_trip_full: field(16),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::{Config, FailureRateConfig};

    fn settings(rate: Option<(f64, usize, Option<usize>)>, run: Option<usize>) -> Settings {
        Settings::validate(&Config {
            failure_rate: rate.map(|(threshold, window, minimum_calls)| FailureRateConfig {
                threshold,
                window,
                minimum_calls,
            }),
            consecutive_failures: run,
            ..Config::default()
        })
        .expect("valid settings")
    }

    #[test]
    fn packing_keeps_every_field_at_its_limits() {
        let cases = [
            settings(Some((0.5, 20, None)), None),
            settings(None, Some(5)),
            settings(Some((0.15, 40, Some(10))), Some(3)),
            settings(
                Some((1.0, MAX_WINDOW as usize, Some(MAX_WINDOW as usize))),
                Some(MAX_CONSECUTIVE as usize),
            ),
            settings(Some((1e-9, 1, None)), Some(1)),
        ];
        for settings in cases {
            let rules = Rules::of(&settings);
            assert_eq!(Rules::unpack(rules.pack()), rules, "{settings:?}");
            let window = settings.failure_rate.map(|rate| rate.window);
            assert_eq!(rules.forget_after(), window.unwrap_or(1));
        }
    }

    #[test]
    fn a_full_window_of_the_largest_size_trips_at_its_count() {
        let settings = settings(Some((1.0, MAX_WINDOW as usize, None)), None);
        let rules = Rules::unpack(Rules::of(&settings).pack());
        assert_eq!(rules.window, Some(MAX_WINDOW));
        assert_eq!(rules.failures_to_trip_full, MAX_WINDOW);
        assert_eq!(rules.run, None);
    }
}
