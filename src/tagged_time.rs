//! A time tagged with the generation it belongs to, in one 64-bit word: how the end of an
//! open period (`open_deadline.rs`) and the newest probe's admission (`newest_probe.rs`) are
//! kept next to the state word.
//!
//! ```text
//!  63              48 47                                              0
//! +------------------+-------------------------------------------------+
//! | generation (16)  |  time, whole µs since the breaker was built      |
//! +------------------+-------------------------------------------------+
//! ```
//!
//! 48 bits of microseconds hold about 8.9 years of the breaker's time, which it counts from
//! its clock's reading when it was built (whatever that clock's epoch), modulo 2^48: a breaker
//! that runs longer goes on keeping times, and compares them by their distance, not their
//! size. A deadline is at most [`MAX_OPEN_DURATION`](crate::MAX_OPEN_DURATION) ahead when it is
//! written (a reader whose clock reading is older, having been descheduled, sees it further
//! ahead), so a time up to [`AHEAD_MICROS`] (about 2.2 years) ahead of now is read as ahead,
//! and any other as passed. Only an open breaker that no call looked at for 6.7 years after
//! its period ended would read that period as running again, for up to 2.2 years. A word
//! that must be told from a seal (`newest_probe.rs`) keeps no time on the value the seal
//! takes, all ones: a time that would fall on it is kept a microsecond later, on zero.
//!
//! The tag is the generation's low 16 bits: it tells one generation's time from those of the
//! 65,535 generations before it, and the modules that keep such a word never decide which
//! generation is newer from it.

const MICROS_BITS: u32 = 48;
const MICROS_MASK: u64 = (1 << MICROS_BITS) - 1;
const TAG_MASK: u64 = 0xFFFF;

/// How far ahead of now a kept time may be and still read as ahead, in microseconds: about
/// 2.2 years, more than the longest open period.
pub(crate) const AHEAD_MICROS: u64 = 1 << 46;

/// `generation`'s tag with `nanos` rounded up to a whole microsecond (a time kept here is
/// never earlier than the one given), modulo 2^48 µs.
pub(crate) fn tagged(generation: u32, nanos: u64) -> u64 {
    tag_of(generation) << MICROS_BITS | nanos.div_ceil(1000) & MICROS_MASK
}

/// As [`tagged`], but never [`reserved`]: a time that falls on it is kept a microsecond
/// later, on zero (modulo 2^48), still never earlier than the one given.
pub(crate) fn tagged_unreserved(generation: u32, nanos: u64) -> u64 {
    let word = tagged(generation, nanos);
    if word == reserved(generation) {
        tag_of(generation) << MICROS_BITS
    } else {
        word
    }
}

/// `generation`'s tag with the one value of the 48 bits that [`tagged_unreserved`] never
/// makes: a mark that no time of `generation` kept that way is equal to.
pub(crate) fn reserved(generation: u32) -> u64 {
    tag_of(generation) << MICROS_BITS | MICROS_MASK
}

/// Whether `word` holds a time of `generation` (or of one 65,536 generations away).
pub(crate) fn belongs_to(word: u64, generation: u32) -> bool {
    word >> MICROS_BITS == tag_of(generation)
}

/// How long from `now_nanos` until the time `word` holds, in nanoseconds, if that time is
/// still ahead (no more than [`AHEAD_MICROS`] ahead); `None` once `now_nanos` has reached it.
#[inline]
pub(crate) fn until(word: u64, now_nanos: u64) -> Option<u64> {
    // The low 48 bits of a difference depend only on the low 48 bits of its terms: the tag
    // drops out with the mask. `now < end` in nanoseconds, with `end` a whole microsecond,
    // is `now`'s whole microseconds short of it.
    let now_micros = now_nanos / 1000;
    let ahead_micros = word.wrapping_sub(now_micros) & MICROS_MASK;
    // One comparison for `1..=AHEAD_MICROS`: zero wraps to the top. The time left is the
    // end in nanoseconds less now, `ahead_micros * 1000 - now_nanos % 1000` (at least
    // 1 ns, at most 2^46 µs): computed modulo 2^64, which gives that value exactly, since it
    // fits, without the overflow of the end's nanoseconds near the top of the clock, and in
    // as many instructions as the plain sum (the remainder would cost three more on the
    // rejection, `.ci/instructions`).
    (ahead_micros.wrapping_sub(1) < AHEAD_MICROS).then(|| {
        (now_micros + ahead_micros)
            .wrapping_mul(1000)
            .wrapping_sub(now_nanos)
    })
}

/// How long ago the time `word` holds was at `now_nanos`, in nanoseconds: zero if it is ahead
/// (see [`until`]).
pub(crate) fn since(word: u64, now_nanos: u64) -> u64 {
    if until(word, now_nanos).is_some() {
        return 0;
    }
    let behind_micros = (now_nanos / 1000).wrapping_sub(word) & MICROS_MASK;
    behind_micros * 1000 + now_nanos % 1000
}

/// Whether the time `later` holds is the one `earlier` holds or no more than
/// [`AHEAD_MICROS`] (about 2.2 years) after it, as [`until`] reads a time ahead. Of two times
/// kept less than about 6.7 years apart, that says which is the later whenever `later` is
/// less than 2.2 years ahead; a time kept long before (a probe admitted years ago) reads as
/// earlier, never as later, up to 6.7 years back.
pub(crate) fn at_or_after(later: u64, earlier: u64) -> bool {
    later.wrapping_sub(earlier) & MICROS_MASK <= AHEAD_MICROS
}

fn tag_of(generation: u32) -> u64 {
    u64::from(generation) & TAG_MASK
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// 2^48 µs in nanoseconds: where the kept times wrap.
    const WRAP: u64 = (1 << MICROS_BITS) * 1000;

    #[test]
    fn a_time_keeps_its_generation_and_rounds_up() {
        let word = tagged(70_000, 1_001);
        assert!(belongs_to(word, 70_000));
        assert!(!belongs_to(word, 70_001));
        assert!(
            belongs_to(word, 70_000 + 65_536),
            "only 16 bits of the generation"
        );
        assert_eq!(until(word, 0), Some(2_000));
        assert_eq!(until(word, 1_001), Some(999));
        assert_eq!(until(word, 1_999), Some(1));
        assert_eq!(until(word, 2_000), None, "reached");
        assert_eq!(since(word, 2_000), 0);
        assert_eq!(since(word, 1_500), 0, "ahead: no age");
        assert_eq!(since(word, 7_250), 5_250);
        for apart in [1, 1 << 8, 1 << 14, 1 << 15, 65_535] {
            assert!(
                !belongs_to(word, 70_000 + apart),
                "generations {apart} apart are told apart"
            );
        }
    }

    #[test]
    fn times_are_read_by_their_distance_across_the_wrap() {
        // A deadline a year ahead, set just before the 48 bits wrap, ends a year later.
        let year = 366 * 24 * 3600 * 1_000_000_000;
        let set_at = WRAP - 5_000;
        let deadline = tagged(1, set_at + year);
        assert_eq!(until(deadline, set_at), Some(year));
        assert_eq!(until(deadline, WRAP + 10_000), Some(year - 15_000));
        assert_eq!(until(deadline, set_at + year - 1), Some(1));
        assert_eq!(until(deadline, set_at + year), None);
        assert_eq!(since(deadline, set_at + year + 2_500), 2_500);
        // Ten years after a build, as after one.
        let ten_years = 10 * 365 * 24 * 3600 * 1_000_000_000;
        assert_eq!(
            until(tagged(1, ten_years + 70_000), ten_years),
            Some(70_000)
        );
        assert_eq!(since(tagged(1, ten_years), ten_years + 3_000), 3_000);
        // The longest a reader may find a deadline ahead reads as ahead; a time past it
        // reads as passed, seen from any side of the wrap.
        let furthest = AHEAD_MICROS * 1000;
        for now in [0, WRAP - 1_000, WRAP, 3 * WRAP + 17_000] {
            assert_eq!(until(tagged(1, now + furthest), now), Some(furthest));
            assert_eq!(until(tagged(1, now + furthest + 1_000), now), None);
            assert_eq!(until(tagged(1, now.saturating_sub(1_000)), now), None);
        }
    }

    #[test]
    fn an_unreserved_time_is_never_kept_on_the_reserved_value() {
        // All ones is 2^48 - 1 µs: kept exactly by `tagged`, a microsecond later, on zero,
        // by `tagged_unreserved`.
        assert_eq!(tagged(3, WRAP - 1_500), reserved(3));
        assert_eq!(until(tagged(3, WRAP - 1_500), WRAP - 1_500), Some(500));
        let word = tagged_unreserved(3, WRAP - 1_500);
        assert_ne!(word, reserved(3));
        assert!(belongs_to(word, 3) && belongs_to(reserved(3), 3));
        assert!(!belongs_to(reserved(3), 4));
        assert_eq!(until(word, WRAP - 1_500), Some(1_500), "never earlier");
        assert_eq!(since(word, WRAP + 250), 250);
        assert_eq!(tagged(3, WRAP), word, "the same microsecond, modulo 2^48");
        assert_eq!(tagged_unreserved(3, 4_000), tagged(3, 4_000));
        assert_ne!(tagged_unreserved(3, u64::MAX), reserved(3));
    }

    #[test]
    fn the_later_of_two_times_is_told_across_the_wrap() {
        let before = tagged(2, WRAP - 2_000);
        let after = tagged(2, WRAP + 3_000);
        assert!(at_or_after(after, before));
        assert!(!at_or_after(before, after));
        assert!(at_or_after(before, before));
        let two_years = 2 * 365 * 24 * 3600 * 1_000_000_000;
        assert!(at_or_after(tagged(2, two_years), tagged(2, 0)));
        assert!(!at_or_after(tagged(2, 0), tagged(2, two_years)));
        // Five years apart, the older is not taken for the later (a probe admitted after
        // five quiet years is the newest), and so is the newer not.
        let five_years = 5 * 365 * 24 * 3600 * 1_000_000_000;
        assert!(!at_or_after(tagged(2, 0), tagged(2, five_years)));
        assert!(!at_or_after(tagged(2, five_years), tagged(2, 0)));
    }
}
