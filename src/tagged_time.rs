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
//! 48 bits of microseconds hold about nine years of the breaker's time, which it counts from
//! its clock's reading when it was built (whatever that clock's epoch). The tag is the generation's low 16
//! bits: it tells one generation's time from those of the 65,535 generations before it, and the
//! modules that keep such a word never decide which generation is newer from it.

const MICROS_BITS: u32 = 48;
const MICROS_MASK: u64 = (1 << MICROS_BITS) - 1;
const TAG_MASK: u64 = 0xFFFF;

/// `generation`'s tag with `nanos` rounded up to a whole microsecond (a time kept here is
/// never earlier than the one given).
pub(crate) fn tagged(generation: u32, nanos: u64) -> u64 {
    tag_of(generation) << MICROS_BITS | nanos.div_ceil(1000).min(MICROS_MASK)
}

/// `generation`'s tag with the greatest time a word holds: never earlier than a time kept with
/// [`tagged`], and equal only to one capped there (about nine years on).
pub(crate) fn latest(generation: u32) -> u64 {
    tag_of(generation) << MICROS_BITS | MICROS_MASK
}

/// Whether `word` holds a time of `generation` (or of one 65,536 generations away).
pub(crate) fn belongs_to(word: u64, generation: u32) -> bool {
    word >> MICROS_BITS == tag_of(generation)
}

/// The time `word` holds, in nanoseconds.
pub(crate) fn nanos(word: u64) -> u64 {
    (word & MICROS_MASK).saturating_mul(1000)
}

fn tag_of(generation: u32) -> u64 {
    u64::from(generation) & TAG_MASK
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_time_keeps_its_generation_and_rounds_up() {
        let word = tagged(70_000, 1_001);
        assert!(belongs_to(word, 70_000));
        assert!(!belongs_to(word, 70_001));
        assert!(
            belongs_to(word, 70_000 + 65_536),
            "only 16 bits of the generation"
        );
        assert_eq!(nanos(word), 2_000);
        assert_eq!(nanos(tagged(3, 5_000)), 5_000);
        assert_eq!(
            nanos(tagged(3, u64::MAX)),
            MICROS_MASK * 1000,
            "capped, not wrapped"
        );
        assert_eq!(tagged(3, u64::MAX), latest(3));
        assert!(belongs_to(latest(3), 3) && !belongs_to(latest(3), 4));
    }

    #[test]
    fn sixteen_bits_of_generation_and_nine_years_of_time() {
        let word = tagged(70_000, 0);
        for apart in [1, 1 << 8, 1 << 14, 1 << 15, 65_535] {
            assert!(
                !belongs_to(word, 70_000 + apart),
                "generations {apart} apart are told apart"
            );
        }
        // 2^48 - 1 whole µs, a little short of nine years, is kept as it is; a coarser
        // word would cap it or lose its top bit.
        let nine_years = MICROS_MASK * 1000;
        assert_eq!(nine_years / 1_000_000_000 / 86_400 / 365, 8);
        assert_eq!(nanos(tagged(7, nine_years)), nine_years);
        let top_bit_only = (1 << (MICROS_BITS - 1)) * 1000;
        assert_eq!(nanos(tagged(7, top_bit_only)), top_bit_only);
        assert!(belongs_to(tagged(7, nine_years), 7));
    }
}
