//! The window word: what the failure window knows about its newest failure, in 64 bits.
//!
//! ```text
//!  63  62 61             49  48  47              32 31                               0
//! +------+-----------------+---+------------------+----------------------------------+
//! | mode | generation (13) | w | failures (16)    | successes before newest failure  |   Dirty
//! +------+-----------------+---+------------------+----------------------------------+
//! | mode | generation (13) | w | failures (16)    | generation (32)                  |   Clean
//! +------+-----------------+---+------------------+-----------------+----------------+
//! | mode | generation (13) | w | failures (16)    | success ticks   | successes (16) |   Filling
//! +------+-----------------+---+------------------+-----------------+----------------+
//! ```
//!
//! - *generation*: the low 13 bits of the closed generation the window belongs to.
//! - *w* (wrapped): set once this generation has recorded 2^16 failures, so that the failure
//!   count has wrapped at least once. Without it, a failure numbered below the distance it
//!   looks back could not tell "no earlier failure in this generation" from "the earlier
//!   failure is numbered near 2^16", and the ring may still hold a record of that number and
//!   tag from a generation 2^13 transitions older.
//! - *failures*: failures recorded in this generation, modulo 2^16; failure number `n` is the
//!   `n`-th failure (from 0), so the newest is `failures - 1`.
//! - *successes before newest failure*: how many successes this generation had counted when
//!   the newest failure was recorded, modulo 2^32. A failure's position among all recorded
//!   calls is its number plus this count.
//! - *generation (32)* (clean only): a clean window remembers no failure, so it keeps its
//!   full generation there instead, and no two generations' clean words are alike
//!   ([`WindowWord::cleaned`]).
//! - *success ticks* (filling only): changed by every success while the window fills, so that
//!   a failure that counted successes before a success arrived cannot commit; they start from
//!   [`tick_seed`] of the generation.
//!
//! Modes:
//! - `Filling`: fewer than `window` calls recorded since the window was cleared. Every
//!   success goes through shared memory, because the success that brings the count to the
//!   minimum may itself have to trip the breaker. (A window holds at most 2^15 calls, so a
//!   filling window never wraps its failure count.)
//! - `Dirty`: full, and a failure may still be in view of a rule, or (the window of the whole
//!   breaker) fewer than [`FORGET_NO_SOONER_THAN`](super::FORGET_NO_SOONER_THAN) successes
//!   have followed the newest one. Successes are counted in per-thread stripes so that they
//!   age failures out.
//! - `Clean`: full, and no rule can see any failure. A success changes nothing and is not
//!   counted at all: this is the healthy path.

/// The tag's width. Under loom, 1 bit: generations two transitions apart then share a tag,
/// so that the models, which make a few transitions, run into tags that collide.
#[cfg(not(loom))]
const GENERATION_BITS: u32 = 13;
#[cfg(loom)]
const GENERATION_BITS: u32 = 1;
pub(super) const GENERATION_MASK: u32 = (1 << GENERATION_BITS) - 1;
const MODE_SHIFT: u32 = 62;
const GENERATION_SHIFT: u32 = 49;
/// Just above the 16-bit failure count, where its carry lands (`with_failure`).
const WRAPPED: u64 = 1 << (FAILURES_SHIFT + 16);
const FAILURES_SHIFT: u32 = 32;
const TICK_SHIFT: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Clean = 0,
    Dirty = 1,
    Filling = 2,
}

/// Where the success ticks of `generation`'s filling window start: counting down, one step
/// per `2^13` generations, while ticks count up. Generations that share a tag are `m · 2^13`
/// apart for some `m`, and a window `k` ticks along is alike the empty word of the one `m`
/// periods later only if `k = 2^16 - m`; a filling window takes fewer than `2^15` ticks, so
/// that is more than `2^15` periods, `2^28` transitions, later.
fn tick_seed(generation: u32) -> u16 {
    ((generation >> GENERATION_BITS) as u16).wrapping_neg()
}

/// The 13-bit generation tag of a closed generation.
#[inline(always)]
pub(super) fn generation_tag(generation: u32) -> u32 {
    generation & GENERATION_MASK
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WindowWord(pub(super) u64);

impl WindowWord {
    /// The word of a window that declines every success ([`super::Window::declining`]): its
    /// mode bits are 3, which no mode has, so it is neither clean nor dirty for any
    /// generation.
    pub(super) const DECLINING: u64 = u64::MAX;

    /// An empty window for `generation`.
    ///
    /// Generations `2^13` apart share a tag, and the window is emptied at each closing, so an
    /// empty word also carries its generation in bits it does not use yet, as every clean
    /// word does ([`cleaned`](WindowWord::cleaned)): a filling window's success ticks only
    /// need to change, and start from [`tick_seed`]. A compare-and-swap from the word of a
    /// generation long over (a caller stalled across the transitions) then fails on a later
    /// generation's word instead of landing in it, with the exceptions in point 5 of `mod.rs`.
    pub(super) fn empty(generation: u32, mode: Mode) -> Self {
        let unused = match mode {
            Mode::Clean => u64::from(generation),
            Mode::Filling => u64::from(tick_seed(generation)) << TICK_SHIFT,
            Mode::Dirty => 0,
        };
        WindowWord(
            (mode as u64) << MODE_SHIFT
                | u64::from(generation_tag(generation)) << GENERATION_SHIFT
                | unused,
        )
    }

    /// The top 15 bits (mode and tag) of a clean window of `generation`: one comparison tests
    /// both.
    #[inline(always)]
    pub(super) fn clean_key(generation: u32) -> u64 {
        u64::from(generation_tag(generation))
    }

    #[inline(always)]
    pub(super) fn is_clean_for(raw: u64, generation: u32) -> bool {
        raw >> GENERATION_SHIFT == Self::clean_key(generation)
    }

    /// Whether `raw` is a dirty window of `generation`: one comparison, as for a clean one.
    #[inline(always)]
    pub(super) fn is_dirty_for(raw: u64, generation: u32) -> bool {
        raw >> GENERATION_SHIFT
            == (Mode::Dirty as u64) << (MODE_SHIFT - GENERATION_SHIFT) | Self::clean_key(generation)
    }

    /// Whether `raw` is a filling window of `generation` that has recorded no failure (empty,
    /// or successes alone): its top 32 bits (mode, tag, wrapped, failures) are those of the
    /// empty filling word, one comparison as for the two above. Only the 13-bit tag says which
    /// generation: a word whose tag matches is taken as this generation's (`mod.rs`, points 5
    /// and 7).
    #[inline(always)]
    pub(super) fn is_unfailed_filling_for(raw: u64, generation: u32) -> bool {
        raw >> FAILURES_SHIFT == Self::empty(generation, Mode::Filling).0 >> FAILURES_SHIFT
    }

    pub(super) fn mode(self) -> Mode {
        match self.0 >> MODE_SHIFT {
            0 => Mode::Clean,
            1 => Mode::Dirty,
            _ => Mode::Filling,
        }
    }

    pub(super) fn tag(self) -> u32 {
        (self.0 >> GENERATION_SHIFT) as u32 & GENERATION_MASK
    }

    /// Failures recorded in this generation, modulo 2^16.
    pub(super) fn failures(self) -> u16 {
        (self.0 >> FAILURES_SHIFT) as u16
    }

    /// Whether this generation has recorded at least 2^16 failures (its count wrapped).
    pub(super) fn has_wrapped(self) -> bool {
        self.0 & WRAPPED != 0
    }

    /// Whether the newest failure still matters to a rule (and its record is in this word).
    /// A clean window has forgotten it.
    pub(super) fn remembers_newest_failure(self) -> bool {
        match self.mode() {
            Mode::Clean => false,
            Mode::Dirty => true,
            Mode::Filling => self.failures() != 0,
        }
    }

    /// Successes counted before the newest failure: meaningful only while the word
    /// [remembers](WindowWord::remembers_newest_failure) it (a clean word holds its
    /// generation there).
    pub(super) fn successes_before_newest(self) -> u32 {
        match self.mode() {
            Mode::Filling => self.0 as u16 as u32,
            Mode::Clean | Mode::Dirty => self.0 as u32,
        }
    }

    /// The word after one more failure, recorded when `successes` successes were counted.
    ///
    /// `mode` must be `Filling` only if the window was filling; its 16-bit success field holds
    /// `successes` then, which is below the window size.
    pub(super) fn with_failure(self, successes: u32, mode: Mode) -> Self {
        // One more failure as a 17-bit sum: from 2^16 - 1 it is 2^16, whose bit lands on the
        // wrapped bit just above the field (and the field reads 0). The head keeps that bit
        // once set.
        let failures = u64::from(self.failures()) + 1;
        let head = (mode as u64) << MODE_SHIFT
            | (self.0 & (u64::from(GENERATION_MASK) << GENERATION_SHIFT | WRAPPED));
        let low = match mode {
            Mode::Filling => (self.0 & (0xFFFF << TICK_SHIFT)) | u64::from(successes as u16),
            Mode::Clean | Mode::Dirty => u64::from(successes),
        };
        WindowWord(head | failures << FAILURES_SHIFT | low)
    }

    /// A filling word with its success tick advanced.
    pub(super) fn with_tick(self) -> Self {
        let tick = (self.0 >> TICK_SHIFT) as u16;
        let cleared = self.0 & !(0xFFFF << TICK_SHIFT);
        WindowWord(cleared | u64::from(tick.wrapping_add(1)) << TICK_SHIFT)
    }

    /// Whether `raw` is the clean window of `generation`, the full 32 bits of it (every clean
    /// word carries them, [`cleaned`](WindowWord::cleaned)): not a clean window of a
    /// generation `2^13` transitions away that shares its tag.
    pub(super) fn is_clean_in(raw: u64, generation: u32) -> bool {
        Self::is_clean_for(raw, generation) && raw as u32 == generation
    }

    /// The same failures in a clean window of `generation`: a clean window remembers no
    /// failure, so the count of successes before its newest is free, and holds the full
    /// generation instead. No two generations' clean words are then alike (until the 32-bit
    /// generation wraps), however alike their histories.
    pub(super) fn cleaned(self, generation: u32) -> Self {
        WindowWord(self.with_mode(Mode::Clean).0 & !0xFFFF_FFFF | u64::from(generation))
    }

    /// The same failures in another mode (Filling → Dirty or Clean, Dirty → Clean).
    pub(super) fn with_mode(self, mode: Mode) -> Self {
        let successes = self.successes_before_newest();
        let kept = self.0 & !(3 << MODE_SHIFT) & !0xFFFF_FFFF;
        let low = match mode {
            Mode::Filling => u64::from(successes as u16),
            Mode::Clean | Mode::Dirty => u64::from(successes),
        };
        WindowWord((mode as u64) << MODE_SHIFT | kept | low)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn empty_windows() {
        let filling = WindowWord::empty(0x1234_5678, Mode::Filling);
        assert_eq!(
            (filling.mode(), filling.tag(), filling.failures()),
            (Mode::Filling, 0x1678, 0)
        );
        assert!(!filling.remembers_newest_failure());
        let same_tag = WindowWord::empty(0x1234_5678 + (1 << GENERATION_BITS), Mode::Filling);
        assert_eq!(same_tag.tag(), filling.tag());
        assert_ne!(
            same_tag, filling,
            "generations that share a tag have different empty words"
        );
        let clean = WindowWord::empty(7, Mode::Clean);
        assert_ne!(
            clean,
            WindowWord::empty(7 + (1 << GENERATION_BITS), Mode::Clean)
        );
        assert!(!clean.remembers_newest_failure());
        assert!(WindowWord::is_clean_for(clean.0, 7));
        assert!(!WindowWord::is_clean_for(clean.0, 8));
        assert!(!WindowWord::is_clean_for(
            WindowWord::empty(7, Mode::Dirty).0,
            7
        ));
        assert!(WindowWord::is_dirty_for(
            WindowWord::empty(7, Mode::Dirty).0,
            7
        ));
        assert!(!WindowWord::is_dirty_for(clean.0, 7));
        assert!(!WindowWord::is_dirty_for(filling.0, 7));
        // A clean window of a generation that shares the tag is not this one's.
        assert!(WindowWord::is_clean_in(clean.0, 7));
        assert!(WindowWord::is_clean_for(
            clean.0,
            7 + (1 << GENERATION_BITS)
        ));
        assert!(!WindowWord::is_clean_in(
            clean.0,
            7 + (1 << GENERATION_BITS)
        ));
    }

    #[test]
    fn an_unfailed_filling_word_is_told_by_mode_tag_wrapped_bit_and_failures() {
        let empty = WindowWord::empty(9, Mode::Filling);
        assert!(WindowWord::is_unfailed_filling_for(empty.0, 9));
        assert!(
            WindowWord::is_unfailed_filling_for(empty.with_tick().with_tick().0, 9),
            "successes alone leave it unfailed"
        );
        assert!(
            WindowWord::is_unfailed_filling_for(empty.0, 9 + (1 << GENERATION_BITS)),
            "only the tag says which generation"
        );
        assert!(!WindowWord::is_unfailed_filling_for(empty.0, 10));
        assert!(!WindowWord::is_unfailed_filling_for(
            empty.with_failure(2, Mode::Filling).0,
            9
        ));
        assert!(!WindowWord::is_unfailed_filling_for(
            WindowWord::empty(9, Mode::Clean).0,
            9
        ));
        assert!(!WindowWord::is_unfailed_filling_for(
            WindowWord::empty(9, Mode::Dirty).0,
            9
        ));
        let mut wrapped = empty;
        for _ in 0..=u16::MAX as u32 {
            wrapped = wrapped.with_failure(0, Mode::Filling);
        }
        assert_eq!((wrapped.failures(), wrapped.has_wrapped()), (0, true));
        assert!(
            !WindowWord::is_unfailed_filling_for(wrapped.0, 9),
            "2^16 failures read as none in the field, but the wrapped bit says otherwise"
        );
    }

    #[test]
    fn failures_and_ticks_keep_each_other() {
        let word = WindowWord::empty(3, Mode::Filling)
            .with_tick()
            .with_failure(17, Mode::Filling)
            .with_tick();
        assert_eq!(
            (word.failures(), word.successes_before_newest(), word.tag()),
            (1, 17, 3)
        );
        assert!(word.remembers_newest_failure());
        assert_ne!(word, word.with_tick(), "a tick must change the word");
        let dirty = word.with_mode(Mode::Dirty);
        assert_eq!(
            (
                dirty.mode(),
                dirty.failures(),
                dirty.successes_before_newest()
            ),
            (Mode::Dirty, 1, 17)
        );
        let next = dirty.with_failure(u32::MAX, Mode::Dirty);
        assert_eq!(
            (next.failures(), next.successes_before_newest(), next.tag()),
            (2, u32::MAX, 3)
        );
        let clean = next.cleaned(3);
        assert!(WindowWord::is_clean_for(clean.0, 3));
        assert!(!clean.remembers_newest_failure());
    }

    #[test]
    fn failure_count_wraps_at_16_bits() {
        let mut word = WindowWord::empty(1, Mode::Dirty);
        for _ in 0..65_537 {
            word = word.with_failure(5, Mode::Dirty);
        }
        assert_eq!((word.failures(), word.tag()), (1, 1));
        assert!(word.has_wrapped());
        assert_eq!(
            word.mode(),
            Mode::Dirty,
            "the wrapped bit is not the mode's"
        );
        let clean = word.cleaned(1);
        assert!(clean.has_wrapped(), "a change of mode keeps it");
        assert!(
            WindowWord::is_clean_for(clean.0, 1),
            "a clean window that wrapped is still clean for the quick path"
        );
        assert!(WindowWord::is_dirty_for(word.0, 1));
    }

    #[test]
    fn the_wrapped_bit_is_set_by_failure_2_pow_16_and_not_before() {
        let mut word = WindowWord::empty(2, Mode::Dirty);
        for _ in 0..65_535 {
            word = word.with_failure(5, Mode::Dirty);
        }
        assert_eq!((word.failures(), word.has_wrapped()), (65_535, false));
        word = word.with_failure(5, Mode::Dirty);
        assert_eq!(word.failures(), 0);
        assert!(word.has_wrapped());
        assert!(!WindowWord::empty(2, Mode::Dirty).has_wrapped());
    }
}
