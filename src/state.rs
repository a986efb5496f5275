//! The breaker's state, and the 64-bit word that holds it.
//!
//! ```text
//!  63                               32  31  30  29  28  23 22        13 12         3 2     0
//! +-----------------------------------+---+---+---+------+------------+------------+-------+
//! |            generation             | c | t | r | adm. | probe oks  | probes out | state |
//! +-----------------------------------+---+---+---+------+------------+------------+-------+
//! ```
//!
//! Every transition goes through one compare-and-swap on this word and adds one to the
//! generation. A permit remembers the generation it was issued in, so a verdict that arrives
//! after a transition is recognised as stale and not counted against the new state.
//!
//! `adm.` counts the probes admitted in a half-open period, modulo 64 (modulo 2 under loom): a
//! probe that ends and one admitted after it leave the other fields as they were, and a
//! compare-and-swap from the word read before them fails, unless 64 such pairs have brought
//! the count round. So the probe timeout's reopening (`breaker.rs`) does not rest on the word
//! alone: it seals the newest probe's time before its swap (`newest_probe.rs`), and loom's
//! narrower count lets the models meet the word that comes back.
//!
//! Bit `r` says that this open period, or the half-open period after it, follows a failed
//! probe round (for the open back-off, `open_streak.rs`): set by the opening that a failed
//! round makes, carried into half-open, and gone with every other transition. Being in the
//! word, it changes with the state in one compare-and-swap, so that no opening can take
//! another's.
//!
//! Bit `c` says whether successes are counted in the metrics, bit `t` whether permits are
//! timed for the slow-call rule. Neither is state: transitions carry them over, and
//! reconfiguration flips them. They live here so that the healthy path learns "closed, nothing
//! to count and nothing to time" from the one word it loads anyway, with one test.
//!
//! A closed word has no probes, and uses bits 3 to 28 for something else:
//!
//! ```text
//!  63                               32  31  30  29  28                    4   3  2     0
//! +-----------------------------------+---+---+---+-----------------------+---+-------+
//! |            generation             | c | t | r |     quiet epoch       | q | state |  closed
//! +-----------------------------------+---+---+---+-----------------------+---+-------+
//! ```
//!
//! Bit `q` (quiet) says that the breaker's failure window (with a window per thread, every
//! window) is clean in this generation: a success changes nothing, so `call` needs to read
//! only this word to know it may skip the window (`quiet.rs` has the protocol that keeps the
//! bit true). The quiet epoch changes each time a failure leaves a clean window, so that a
//! quiet bit computed from a window read before that failure cannot be set after it. Every
//! transition starts a closed generation with neither.

use std::fmt;

/// The state of a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Calls pass; their outcomes feed the trip rules.
    Closed,
    /// Calls are rejected at once until the open period ends.
    Open,
    /// A limited number of probe calls pass; their outcomes close or reopen the breaker.
    HalfOpen,
    /// Rejects every call until [`reset`](crate::Breaker::reset) or
    /// [`force_closed`](crate::Breaker::force_closed).
    ForcedOpen,
    /// Permits every call and never trips, until [`reset`](crate::Breaker::reset) or
    /// [`force_open`](crate::Breaker::force_open). Outcomes are still counted in the metrics.
    ForcedClosed,
}

impl State {
    /// The name used in logs and metrics labels: `closed`, `open`, `half_open`,
    /// `forced_open`, `forced_closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::ForcedClosed => "forced_closed",
        }
    }

    /// Whether calls are permitted in this state without any further check.
    pub fn permits_all(self) -> bool {
        matches!(self, State::Closed | State::ForcedClosed)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const STATE_BITS: u32 = 3;
const STATE_MASK: u64 = (1 << STATE_BITS) - 1;
const PROBE_BITS: u32 = 10;
const PROBE_MASK: u64 = (1 << PROBE_BITS) - 1;
const PROBES_OUT_SHIFT: u32 = STATE_BITS;
const PROBE_OKS_SHIFT: u32 = STATE_BITS + PROBE_BITS;
const ADMISSIONS_SHIFT: u32 = STATE_BITS + 2 * PROBE_BITS;
/// The admission count's width. Under loom, 1 bit: two probes that end and are admitted again
/// bring a half-open word back bit for bit, so that the models, which admit a few probes, run
/// into the repeat that 64 admissions make outside them.
#[cfg(not(loom))]
const ADMISSIONS_BITS: u32 = 6;
#[cfg(loom)]
const ADMISSIONS_BITS: u32 = 1;
const ADMISSIONS_MASK: u64 = (1 << ADMISSIONS_BITS) - 1;
const AFTER_FAILED_ROUND: u64 = 1 << 29;
/// Closed words only (the probe fields' bits, unused while closed): the window is quiet.
const QUIET: u64 = 1 << 3;
const QUIET_EPOCH_SHIFT: u32 = 4;
/// Up to bit 28, below `r`: what the probe fields leave after `q`.
const QUIET_EPOCH_BITS: u32 = 25;
const QUIET_EPOCH_MASK: u64 = ((1 << QUIET_EPOCH_BITS) - 1) << QUIET_EPOCH_SHIFT;
const GENERATION_SHIFT: u32 = 32;
const COUNTS_SUCCESSES: u64 = 1 << 31;
const TIMES_CALLS: u64 = 1 << 30;

const CLOSED: u64 = 0;
const OPEN: u64 = 1;
const HALF_OPEN: u64 = 2;
const FORCED_OPEN: u64 = 3;
const FORCED_CLOSED: u64 = 4;

/// A decoded copy of the state word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateWord(pub(crate) u64);

impl StateWord {
    pub(crate) fn new(state: State, generation: u32) -> Self {
        let code = match state {
            State::Closed => CLOSED,
            State::Open => OPEN,
            State::HalfOpen => HALF_OPEN,
            State::ForcedOpen => FORCED_OPEN,
            State::ForcedClosed => FORCED_CLOSED,
        };
        StateWord(u64::from(generation) << GENERATION_SHIFT | code)
    }

    /// True for a closed breaker.
    #[inline(always)]
    pub(crate) fn is_closed(self) -> bool {
        self.0 & STATE_MASK == CLOSED
    }

    /// True for a closed breaker that neither counts successes nor times calls: the one test
    /// on the healthy path.
    #[inline(always)]
    pub(crate) fn is_closed_and_plain(self) -> bool {
        self.0 & (STATE_MASK | COUNTS_SUCCESSES | TIMES_CALLS) == CLOSED
    }

    /// Whether the word is closed with a quiet window (see the module's docs).
    #[inline(always)]
    pub(crate) fn is_quiet(self) -> bool {
        self.is_closed() && self.0 & QUIET != 0
    }

    /// The same closed word, quiet. The healthy path compares the word it loads after a call
    /// with this one, made from the word it loaded before.
    #[inline(always)]
    pub(crate) fn with_quiet(self) -> Self {
        StateWord(self.0 | QUIET)
    }

    /// The same closed word, not quiet, in the next quiet epoch (modulo 2^25).
    pub(crate) fn with_quiet_lost(self) -> Self {
        let epoch = (self.0 & QUIET_EPOCH_MASK).wrapping_add(1 << QUIET_EPOCH_SHIFT);
        StateWord(self.0 & !(QUIET | QUIET_EPOCH_MASK) | epoch & QUIET_EPOCH_MASK)
    }

    /// Whether successes are counted in the metrics.
    #[inline(always)]
    pub(crate) fn counts_successes(self) -> bool {
        self.0 & COUNTS_SUCCESSES != 0
    }

    /// The same word with success counting on or off.
    pub(crate) fn with_counting(self, count: bool) -> Self {
        self.with_bit(COUNTS_SUCCESSES, count)
    }

    /// The same word with `bit` set or cleared.
    fn with_bit(self, bit: u64, on: bool) -> Self {
        StateWord(if on { self.0 | bit } else { self.0 & !bit })
    }

    pub(crate) fn state(self) -> State {
        match self.0 & STATE_MASK {
            CLOSED => State::Closed,
            OPEN => State::Open,
            HALF_OPEN => State::HalfOpen,
            FORCED_OPEN => State::ForcedOpen,
            _ => State::ForcedClosed,
        }
    }

    #[inline(always)]
    pub(crate) fn generation(self) -> u32 {
        (self.0 >> GENERATION_SHIFT) as u32
    }

    /// Probes admitted in this half-open period and not yet ended.
    pub(crate) fn probes_out(self) -> u32 {
        ((self.0 >> PROBES_OUT_SHIFT) & PROBE_MASK) as u32
    }

    /// Successful probes in this half-open period.
    pub(crate) fn probe_successes(self) -> u32 {
        ((self.0 >> PROBE_OKS_SHIFT) & PROBE_MASK) as u32
    }

    /// Whether permits are timed, for the slow-call rule.
    #[inline(always)]
    pub(crate) fn times_calls(self) -> bool {
        self.0 & TIMES_CALLS != 0
    }

    /// The same word with timing on or off.
    pub(crate) fn with_timing(self, time: bool) -> Self {
        self.with_bit(TIMES_CALLS, time)
    }

    /// The word for `state` in the next generation, with no probes; success counting and
    /// timing carry over.
    pub(crate) fn next(self, state: State) -> Self {
        StateWord::new(state, self.generation().wrapping_add(1))
            .with_counting(self.counts_successes())
            .with_timing(self.times_calls())
    }

    /// Whether this open or half-open period follows a failed probe round.
    pub(crate) fn after_failed_round(self) -> bool {
        self.0 & AFTER_FAILED_ROUND != 0
    }

    /// The same word, marked as following a failed probe round or not.
    pub(crate) fn with_failed_round(self, after: bool) -> Self {
        self.with_bit(AFTER_FAILED_ROUND, after)
    }

    /// The same half-open period with one more probe admitted (counted modulo 64; modulo 2
    /// under loom).
    pub(crate) fn with_admission(self) -> Self {
        let admissions = (self.0 >> ADMISSIONS_SHIFT).wrapping_add(1) & ADMISSIONS_MASK;
        StateWord(self.0 & !(ADMISSIONS_MASK << ADMISSIONS_SHIFT) | admissions << ADMISSIONS_SHIFT)
    }

    /// The same half-open period with `probes_out` and `probe_successes` replaced; both are
    /// bounded by [`MAX_PROBES`](crate::config::MAX_PROBES), which fits their 10 bits.
    pub(crate) fn with_probes(self, probes_out: u32, probe_successes: u32) -> Self {
        let cleared = self.0 & !(PROBE_MASK << PROBES_OUT_SHIFT | PROBE_MASK << PROBE_OKS_SHIFT);
        StateWord(
            cleared
                | (u64::from(probes_out) & PROBE_MASK) << PROBES_OUT_SHIFT
                | (u64::from(probe_successes) & PROBE_MASK) << PROBE_OKS_SHIFT,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_round_trips() {
        for state in [
            State::Closed,
            State::Open,
            State::HalfOpen,
            State::ForcedOpen,
            State::ForcedClosed,
        ] {
            let word = StateWord::new(state, u32::MAX).with_probes(1023, 517);
            assert_eq!(word.state(), state);
            assert_eq!(word.generation(), u32::MAX);
            assert_eq!(word.probes_out(), 1023);
            assert_eq!(word.probe_successes(), 517);
            assert_eq!(word.is_closed(), state == State::Closed);
        }
    }

    #[test]
    fn admissions_change_the_word_and_nothing_else() {
        let word = StateWord::new(State::HalfOpen, 9)
            .with_timing(true)
            .with_counting(true)
            .with_probes(1, 0);
        let mut next = word;
        let period = 1u32 << ADMISSIONS_BITS;
        for admitted in 1..=period {
            next = next.with_admission();
            assert_eq!(
                (next.state(), next.generation(), next.probes_out()),
                (State::HalfOpen, 9, 1)
            );
            assert_eq!(
                (
                    next.probe_successes(),
                    next.times_calls(),
                    next.counts_successes()
                ),
                (0, true, true)
            );
            assert_eq!(
                next == word,
                admitted == period,
                "modulo {period}: {admitted}"
            );
            assert!(!next.after_failed_round());
        }
        assert_eq!(
            word.with_admission().next(State::Open).0,
            word.next(State::Open).0
        );
    }

    #[test]
    fn counting_is_carried_over_and_kept_apart_from_the_state() {
        let counting = StateWord::new(State::Closed, 7).with_counting(true);
        assert!(counting.is_closed() && !counting.is_closed_and_plain());
        assert!(StateWord::new(State::Closed, 7).is_closed_and_plain());
        let reopened = counting
            .next(State::Open)
            .next(State::HalfOpen)
            .with_probes(2, 1);
        assert!(reopened.counts_successes());
        assert_eq!(
            (
                reopened.state(),
                reopened.generation(),
                reopened.probes_out()
            ),
            (State::HalfOpen, 9, 2)
        );
        assert!(!reopened.with_counting(false).counts_successes());
    }

    #[test]
    fn timing_is_carried_over_and_takes_the_word_off_the_healthy_path() {
        let timed = StateWord::new(State::Closed, 7).with_timing(true);
        assert!(timed.is_closed() && !timed.is_closed_and_plain());
        assert!(!timed.counts_successes(), "timing is not counting");
        let reopened = timed
            .next(State::Open)
            .next(State::HalfOpen)
            .with_probes(1, 0);
        assert!(reopened.times_calls());
        assert_eq!(
            (
                reopened.state(),
                reopened.generation(),
                reopened.probes_out()
            ),
            (State::HalfOpen, 9, 1)
        );
        let closed = reopened.next(State::Closed).with_timing(false);
        assert!(closed.is_closed_and_plain());
    }

    #[test]
    fn the_failed_round_mark_is_its_own_bit_and_no_transition_carries_it() {
        let word = StateWord::new(State::HalfOpen, 9)
            .with_probes(1023, 1023)
            .with_counting(true)
            .with_timing(true);
        let marked = word.next(State::Open).with_failed_round(true);
        assert!(marked.after_failed_round());
        assert_eq!((marked.state(), marked.generation()), (State::Open, 10));
        assert!(marked.counts_successes() && marked.times_calls());
        assert!(!word.with_admission().after_failed_round());
        assert!(!marked.next(State::HalfOpen).after_failed_round());
        assert_eq!(marked.with_failed_round(false), word.next(State::Open));
    }

    #[test]
    fn quiet_and_its_epoch_change_nothing_else_and_no_transition_carries_them() {
        let word = StateWord::new(State::Closed, 7)
            .with_counting(true)
            .with_timing(true);
        let quiet = word.with_quiet();
        assert!(quiet.is_quiet() && !word.is_quiet());
        let fields = |w: StateWord| {
            (
                w.state(),
                w.generation(),
                w.counts_successes(),
                w.times_calls(),
            )
        };
        assert_eq!(fields(quiet), (State::Closed, 7, true, true));
        let lost = quiet.with_quiet_lost();
        assert!(!lost.is_quiet());
        assert_ne!(lost, word, "the epoch moved");
        assert_ne!(lost.with_quiet_lost(), lost, "and moves at every loss");
        assert_eq!(fields(lost), fields(quiet));
        assert!(!lost.after_failed_round());
        assert_eq!(lost.next(State::Open), word.next(State::Open));
        assert_eq!(quiet.next(State::Closed), word.next(State::Closed));
        // The epoch wraps within its field, never into `r`.
        let last_epoch = StateWord(word.0 | QUIET_EPOCH_MASK).with_quiet();
        assert_eq!(last_epoch.with_quiet_lost(), word);
        assert!(!StateWord::new(State::Open, 7).with_quiet().is_quiet());
    }

    #[test]
    fn next_generation_wraps_and_clears_probes() {
        let word = StateWord::new(State::HalfOpen, u32::MAX)
            .with_probes(3, 2)
            .next(State::Closed);
        assert_eq!(word.generation(), 0);
        assert_eq!(
            (word.state(), word.probes_out(), word.probe_successes()),
            (State::Closed, 0, 0)
        );
    }
}
