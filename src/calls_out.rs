//! Closed-state calls still out, counted by when they were issued: so that a call that hangs
//! counts as a slow call once it has been out longer than the `slow_call` limit, without
//! waiting for it to end (it may never end).
//!
//! A breaker that times its calls keeps, in each stripe, a small ring of *places*, each of
//! which holds one *bucket* at a time. A bucket counts the timed closed calls issued in one
//! stretch of time (its *width*, a power of two nanoseconds between a quarter and a half of the
//! limit) by threads using that stripe, that have not ended yet. A call enters its bucket when
//! its permit is issued and leaves it when it ends. Once a bucket's last possible call has been
//! out longer than the limit (the bucket's end plus the limit has passed, its *due* time), a
//! *sweep* takes the calls still in it: each is a slow call, judged now, and its own end,
//! whenever it comes, finds the bucket taken and records nothing. So a call is judged exactly
//! once: by its end, or by the sweep, whichever changes the bucket word first.
//!
//! A bucket keeps its place until a sweep takes it, even while no call is in it: a thread
//! whose calls end before the next begins enters and leaves the same bucket over and over, and
//! only the call that opens a bucket in a free place lowers the breaker's due time (a shared
//! read-modify-write), once per width rather than once per call.
//!
//! One bucket is one 64-bit word; every change to it is one compare-and-swap, so a call's end
//! and a sweep cannot both count the same call:
//!
//! ```text
//!  63          45 44     42 41     36 35           18  17  16               0
//! +--------------+---------+---------+---------------+-----+------------------+
//! | bucket (19)  | reuse(3)| shift(6)| generation(18)|taken|  calls out (17)  |
//! +--------------+---------+---------+---------------+-----+------------------+
//! ```
//!
//! - *bucket*: the issue time shifted right by *shift* (the width's log2), low 19 bits. A
//!   sweep reads the clock after reading the word, so the bucket can only be behind that time
//!   (or ahead by a clock difference between cores, taken as up to about a millisecond): it
//!   is the latest bucket with these low bits at or before that time. After a spell of more
//!   than 2^19 widths without a sweep (no calls), a bucket may read as younger than it is,
//!   and is judged up to one and a half limits late. Early only if clocks of two cores
//!   differ by more than that millisecond, or if a sweeper stalls for 2^19 widths between
//!   reading a word and taking it while the word comes round to the same value;
//! - *reuse*: how many times this place in the ring was opened for a new bucket, low 3 bits,
//!   so that a late end of a call taken from an earlier bucket here never matches a bucket
//!   opened here since, even one of the same time (a registration delayed past the sweep);
//! - *generation*: the closed generation the calls were issued in (low 18 bits of the state
//!   word's): a call of an earlier generation no longer feeds any rule, so a sweep removes it
//!   without judging it and counts it as released (a sweep reads the state word again before
//!   it takes a bucket of a generation other than the one it read first, which may have begun
//!   since: see `OutRing::sweep`; a call left out while 262,144 transitions
//!   pass with no sweep between would be taken for one of the current generation);
//! - *taken*: the place is free: a sweep took its bucket (or it was never used); the rest of
//!   the word stays, so that the reuse count carries on.
//!
//! A sweep frees, besides the buckets it takes, every empty bucket whose stretch of time is
//! over or whose width is not the current limit's, so the places hold at most the buckets of
//! calls still out and not yet due, and the current stretch's. A call that finds no place
//! (more than eight such buckets: many calls hanging through a change of the limit or of the
//! generation) makes the breaker sweep at once and tries again; if there is still none, it is
//! not entered: it is judged when it ends, as without this module.

use std::num::NonZeroU32;

use crate::sync::{AtomicU64, Ordering};

/// Places in a stripe's ring. A bucket with calls out holds its place until the first sweep
/// after its due time, about six widths (see [`bucket_shift`]) while calls keep coming; an
/// empty one until the first sweep after its stretch is over. Eight leave room to spare.
pub(crate) const PLACES: usize = 8;

const COUNT_BITS: u32 = 17;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const TAKEN: u64 = 1 << COUNT_BITS;
const GENERATION_SHIFT: u32 = COUNT_BITS + 1;
const GENERATION_BITS: u32 = 18;
const GENERATION_MASK: u64 = (1 << GENERATION_BITS) - 1;
const SHIFT_SHIFT: u32 = GENERATION_SHIFT + GENERATION_BITS;
const SHIFT_MASK: u64 = (1 << 6) - 1;
const REUSE_SHIFT: u32 = SHIFT_SHIFT + 6;
const REUSE_MASK: u64 = (1 << 3) - 1;
const BUCKET_SHIFT: u32 = REUSE_SHIFT + 3;
const BUCKET_BITS: u32 = 64 - BUCKET_SHIFT;
const BUCKET_MASK: u64 = (1 << BUCKET_BITS) - 1;
/// Everything that names a bucket: all but the count and the taken bit.
const NAME_MASK: u64 = !(COUNT_MASK | TAKEN);
/// How far ahead of a sweep's clock reading a bucket may be, for clock readings on different
/// cores: about a millisecond, at least two buckets and at most 2^16. Further ahead, it is a
/// bucket of long ago whose number wrapped.
fn ahead_buckets(shift: u32) -> u64 {
    ((1u64 << 20) >> shift.min(63)).clamp(2, 1 << 16)
}
/// A call out this many widths may find a bucket opened in its place since with its own low
/// bits, once they wrapped: below it (2^19 less twice the most a bucket may be ahead), none
/// can have been opened yet, so its end can trust the name it finds.
const LONG_OUT_WIDTHS: u64 = (1 << BUCKET_BITS) - (1 << 17);

/// How an end left the calls out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Left {
    /// It took the call out of its bucket: its verdict counts.
    Counted,
    /// A sweep took the call first (judged hung, or released with its generation): its
    /// verdict must not count again.
    Taken,
    /// The call has been out too long for its end to trust the name in its place: its
    /// verdict must not count, and a sweep must judge it (its bucket, if still there, is due
    /// by far).
    OutTooLong,
}

/// The log2 of the bucket width for a slow-call `limit` in nanoseconds: the width is a power
/// of two in (limit / 4, limit / 2], so a hanging call is judged after between the limit and
/// one and a half times the limit, and a bucket lives at most about six widths.
pub(crate) fn bucket_shift(limit: u64) -> u32 {
    if limit < 4 {
        0
    } else {
        // floor(log2(limit)) - 1: 2^s <= limit / 2 < 2^(s + 1), so 2^s > limit / 4.
        62 - limit.leading_zeros()
    }
}

/// The due time of the bucket that a call issued at `issued_at` under `limit` opens.
pub(crate) fn bucket_due(issued_at: u64, limit: u64) -> u64 {
    let shift = bucket_shift(limit);
    let end = (u128::from(issued_at >> shift) + 1) << shift;
    (end.min(u128::from(u64::MAX)) as u64).saturating_add(limit)
}

/// A stripe's ring of buckets.
pub(crate) struct OutRing {
    places: [AtomicU64; PLACES],
}

impl Default for OutRing {
    fn default() -> Self {
        OutRing {
            places: std::array::from_fn(|_| AtomicU64::new(TAKEN)),
        }
    }
}

/// Where a timed call was entered, for its end to find: the stripe (kept by the caller), the
/// place in the ring, and the bucket's shift and reuse count (its time and generation the
/// permit knows already).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entered {
    pub(crate) place: u8,
    pub(crate) shift: u8,
    pub(crate) reuse: u8,
    /// Whether this call opened its bucket in a free place: then its due time is new, for the
    /// breaker's earliest due time.
    pub(crate) opened: bool,
}

impl Entered {
    /// The name, reuse count included, of the bucket that a call of `generation` issued at
    /// `issued_at` entered as `self`.
    fn name(self, generation: u32, issued_at: u64) -> u64 {
        let shift = u32::from(self.shift);
        name(generation, shift, issued_at >> shift) | u64::from(self.reuse) << REUSE_SHIFT
    }
}

/// What a sweep of one ring found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Calls of the current generation out longer than the limit: judged slow now.
    pub(crate) hung: u64,
    /// Calls of an ended generation, removed unjudged: counted as released.
    pub(crate) ended_generation: u64,
    /// The earliest due time of the buckets left, `u64::MAX` if none.
    pub(crate) next_due: u64,
}

impl Swept {
    /// Nothing swept yet, and no bucket left.
    pub(crate) fn empty() -> Self {
        Swept {
            hung: 0,
            ended_generation: 0,
            next_due: u64::MAX,
        }
    }
}

impl OutRing {
    /// Enters a call of closed `generation` issued at `issued_at` (nanoseconds on the
    /// breaker's clock) under a slow-call `limit`; `None` if no place was free.
    ///
    /// Relaxed: a bucket's count lives in its word alone and every change is a read-modify-write
    /// of it. What a sweep must see of this entry it sees through the breaker's earliest due
    /// time, which the caller lowers (release) after this when the call opened its bucket.
    pub(crate) fn enter(&self, generation: u32, issued_at: u64, limit: u64) -> Option<Entered> {
        let shift = bucket_shift(limit);
        let bucket = issued_at >> shift;
        let name = name(generation, shift, bucket);
        let first = (bucket % PLACES as u64) as usize;
        let places = (0..PLACES).map(|offset| (first + offset) % PLACES);
        let entered = |place: usize, word: u64, opened: bool| Entered {
            place: place as u8,
            shift: shift as u8,
            reuse: reuse_of(word) as u8,
            opened,
        };
        // This bucket, if it holds a place: one more call in it, unless it is full.
        for place in places.clone() {
            let word = &self.places[place];
            let mut seen = word.load(Ordering::Relaxed);
            while holds(seen, name) && seen & COUNT_MASK != COUNT_MASK {
                // Release, as when opening below: a sweep that reads this entry also sees the
                // state word this call was admitted in (`sweep`'s generation check).
                match word.compare_exchange_weak(
                    seen,
                    seen + 1,
                    Ordering::Release,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(entered(place, seen + 1, false)),
                    Err(current) => seen = current,
                }
            }
        }
        // Otherwise the first free place opens it, with the place's next reuse count.
        for place in places {
            let word = &self.places[place];
            let mut seen = word.load(Ordering::Relaxed);
            while seen & TAKEN != 0 {
                let opened = name | ((reuse_of(seen) + 1) & REUSE_MASK) << REUSE_SHIFT | 1;
                match word.compare_exchange_weak(seen, opened, Ordering::Release, Ordering::Relaxed)
                {
                    Ok(_) => return Some(entered(place, opened, true)),
                    Err(current) => seen = current,
                }
            }
        }
        None
    }

    /// Ends the call entered as `entered` (of `generation`, issued at `issued_at`) at `now`:
    /// whether this end took it out of its bucket ([`Left`]).
    ///
    /// A call out [`LONG_OUT_WIDTHS`] widths or more (over 100,000 limits) leaves its bucket
    /// untouched: a bucket opened in its place since may carry the same name, its number
    /// having wrapped. The caller then takes the place ([`OutRing::take_place`]).
    pub(crate) fn leave(
        &self,
        entered: Entered,
        generation: u32,
        issued_at: u64,
        now: u64,
    ) -> Left {
        if now.saturating_sub(issued_at) >> entered.shift >= LONG_OUT_WIDTHS {
            return Left::OutTooLong;
        }
        let mine = entered.name(generation, issued_at);
        let word = &self.places[usize::from(entered.place)];
        let mut seen = word.load(Ordering::Relaxed);
        loop {
            if seen & (NAME_MASK | TAKEN) != mine || seen & COUNT_MASK == 0 {
                return Left::Taken;
            }
            match word.compare_exchange_weak(seen, seen - 1, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Left::Counted,
                Err(current) => seen = current,
            }
        }
    }

    /// Takes the place of the call entered as `entered` (of `generation`, issued at
    /// `issued_at`) if it still holds a bucket of that name with calls in it: for the end of
    /// a call out too long to trust the name ([`Left::OutTooLong`]). The calls taken, 0 if
    /// none (the call's bucket was taken before).
    pub(crate) fn take_place(&self, entered: Entered, generation: u32, issued_at: u64) -> u64 {
        let mine = entered.name(generation, issued_at);
        let word = &self.places[usize::from(entered.place)];
        let mut seen = word.load(Ordering::Relaxed);
        while seen & (NAME_MASK | TAKEN) == mine && seen & COUNT_MASK != 0 {
            match word.compare_exchange_weak(
                seen,
                mine | TAKEN,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return seen & COUNT_MASK,
                Err(current) => seen = current,
            }
        }
        0
    }

    /// Takes every bucket that is due under `limit` and belongs to `generation` (the
    /// breaker's current one, and closed if `closed`), and every bucket of an ended
    /// generation (see below); frees them and every empty bucket whose stretch is over or whose width is
    /// not that of `limit`. Adds the calls it took to `swept`, and the due times of the
    /// buckets it left. `now` reads the clock: once for each bucket, after reading its word,
    /// so that no call in it was issued after that time (on this core's clock: a clock read on
    /// another core may be ahead by a little, see [`ahead_buckets`]).
    ///
    /// Each take is a compare-and-swap from the word as read, so a call that ends meanwhile is
    /// either counted by its end (the swap fails and the word is read again) or by this sweep
    /// (its end then finds the bucket taken), never both.
    ///
    /// A bucket of another generation is of an ended one unless it is of the breaker's
    /// generation now: `generation_now` reads the state word again, for a bucket opened by a
    /// call admitted after a transition that came after the sweep read `generation`. Such a
    /// bucket is left to a sweep of its own generation. The entry's compare-and-swap is a
    /// release and this load an acquire, so the state word read after it is at least the one
    /// the entering call was admitted in.
    pub(crate) fn sweep(
        &self,
        generation: u32,
        closed: bool,
        now: impl Fn() -> u64,
        generation_now: impl Fn() -> u32,
        limit: u64,
        swept: &mut Swept,
    ) {
        let current = generation_tag(generation);
        let current_shift = u64::from(bucket_shift(limit));
        for word in &self.places {
            let mut seen = word.load(Ordering::Acquire);
            while seen & TAKEN == 0 {
                let tag = (seen >> GENERATION_SHIFT) & GENERATION_MASK;
                if tag != current && tag == generation_tag(generation_now()) {
                    // A later generation's: its due time is kept, not judged here.
                    swept.next_due = swept
                        .next_due
                        .min(end_time(seen, now()).saturating_add(limit));
                    break;
                }
                let now = now();
                let out = seen & COUNT_MASK;
                let ended = tag != current;
                let end = end_time(seen, now);
                let due = end.saturating_add(limit);
                // Without saturating: a due time past the top of the clock is never due (else,
                // at a clock that reads `u64::MAX`, a call out for no time at all would be
                // judged hung), and one exactly at the top is.
                let hung = closed && u128::from(end) + u128::from(limit) <= u128::from(now);
                let stale =
                    out == 0 && (end <= now || (seen >> SHIFT_SHIFT) & SHIFT_MASK != current_shift);
                if !ended && !hung && !stale {
                    swept.next_due = swept.next_due.min(due);
                    break;
                }
                // Taken: the name stays, so the reuse count carries on when the place reopens.
                let taken = (seen & NAME_MASK) | TAKEN;
                match word.compare_exchange_weak(seen, taken, Ordering::Relaxed, Ordering::Acquire)
                {
                    Ok(_) => {
                        if ended {
                            swept.ended_generation += out;
                        } else {
                            swept.hung += out;
                        }
                        break;
                    }
                    Err(current_word) => seen = current_word,
                }
            }
        }
    }

    /// Calls entered and not yet ended or taken, in all buckets: for tests.
    #[cfg(test)]
    pub(crate) fn out(&self) -> u64 {
        self.places
            .iter()
            .map(|word| word.load(Ordering::Relaxed) & COUNT_MASK)
            .sum()
    }
}

/// The end of the stretch of time of the bucket in `word`, read at `now` (after the word):
/// the word keeps the bucket's low bits, and the bucket is the latest one with those bits at
/// or before `now`'s, unless it is at most [`ahead_buckets`] after it.
fn end_time(word: u64, now: u64) -> u64 {
    let shift = ((word >> SHIFT_SHIFT) & SHIFT_MASK) as u32;
    let kept = (word >> BUCKET_SHIFT) & BUCKET_MASK;
    let now_bucket = u128::from(now >> shift);
    let behind = u128::from((now >> shift).wrapping_sub(kept) & BUCKET_MASK);
    let ahead = (u128::from(BUCKET_MASK) + 1 - behind) % (u128::from(BUCKET_MASK) + 1);
    let bucket = if ahead <= u128::from(ahead_buckets(shift)) {
        now_bucket + ahead
    } else {
        now_bucket.saturating_sub(behind)
    };
    (((bucket + 1) << shift).min(u128::from(u64::MAX))) as u64
}

fn name(generation: u32, shift: u32, bucket: u64) -> u64 {
    (bucket & BUCKET_MASK) << BUCKET_SHIFT
        | (u64::from(shift) & SHIFT_MASK) << SHIFT_SHIFT
        | generation_tag(generation) << GENERATION_SHIFT
}

fn generation_tag(generation: u32) -> u64 {
    u64::from(generation) & GENERATION_MASK
}

/// Whether `word` is the place of the bucket `name` (reuse count aside), calls in it or not.
fn holds(word: u64, name: u64) -> bool {
    word & (NAME_MASK | TAKEN) & !(REUSE_MASK << REUSE_SHIFT) == name
}

fn reuse_of(word: u64) -> u64 {
    (word >> REUSE_SHIFT) & REUSE_MASK
}

/// A ticket small enough for a permit: which stripe and place a call entered, or that it
/// entered none. Never zero, so `Option<Timing>` costs no more than a `Timing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutTicket(NonZeroU32);

const TICKET_NONE: u32 = 1 << 31;

impl OutTicket {
    /// A call that was not entered: judged only when it ends.
    pub(crate) const NONE: OutTicket = OutTicket(NonZeroU32::new(TICKET_NONE).unwrap());

    /// The ticket of a call entered as `entered` in stripe `stripe` (below 2^12).
    pub(crate) fn new(stripe: u32, entered: Entered) -> Self {
        debug_assert!(stripe < 1 << 12);
        let bits = (stripe & 0xFFF)
            | u32::from(entered.place) << 12
            | u32::from(entered.shift) << 15
            | u32::from(entered.reuse) << 21
            | 1 << 24;
        OutTicket(NonZeroU32::new(bits).expect("bit 24 is set"))
    }

    /// The stripe and the entry, if the call was entered.
    pub(crate) fn entry(self) -> Option<(u32, Entered)> {
        let bits = self.0.get();
        if bits == TICKET_NONE {
            return None;
        }
        Some((
            bits & 0xFFF,
            Entered {
                place: ((bits >> 12) & 0x7) as u8,
                shift: ((bits >> 15) & 0x3F) as u8,
                reuse: ((bits >> 21) & 0x7) as u8,
                opened: false,
            },
        ))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const LIMIT: u64 = 1_000; // width 256 (shift 8)
    const GEN: u32 = 4;

    /// The word of the one place `ring` has open (not taken by a sweep).
    fn open_place(ring: &OutRing) -> u64 {
        ring.places
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .find(|w| w & TAKEN == 0)
            .expect("an open place")
    }

    #[test]
    fn the_width_lies_between_a_quarter_and_a_half_of_the_limit() {
        for limit in [
            4u64,
            5,
            7,
            8,
            100,
            1_000,
            1_000_000_007,
            u64::MAX / 2,
            u64::MAX,
        ] {
            let width = 1u128 << bucket_shift(limit);
            let limit = u128::from(limit);
            assert!(width * 4 > limit && width * 2 <= limit, "{limit}: {width}");
        }
        assert_eq!(bucket_shift(1), 0);
        assert_eq!(bucket_shift(LIMIT), 8);
    }

    #[test]
    fn an_end_takes_its_call_out_once() {
        let ring = OutRing::default();
        let a = ring.enter(GEN, 10, LIMIT).unwrap();
        let b = ring.enter(GEN, 20, LIMIT).unwrap();
        assert!(a.opened && !b.opened);
        assert_eq!(ring.out(), 2);
        assert_eq!(ring.leave(a, GEN, 10, 10), Left::Counted);
        assert_eq!(ring.leave(b, GEN, 20, 20), Left::Counted);
        assert_eq!(ring.out(), 0);
        assert!(
            ring.leave(a, GEN, 10, 10) == Left::Taken,
            "a second end found a call to take"
        );
    }

    #[test]
    fn a_sweep_takes_only_buckets_past_their_due_time() {
        let ring = OutRing::default();
        let early = ring.enter(GEN, 100, LIMIT).unwrap(); // bucket [0, 256): due 1256
        let late = ring.enter(GEN, 300, LIMIT).unwrap(); // bucket [256, 512): due 1512
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 1_255, || GEN, LIMIT, &mut swept);
        assert_eq!((swept.hung, swept.next_due), (0, 1_256));
        swept.next_due = u64::MAX;
        ring.sweep(GEN, true, || 1_256, || GEN, LIMIT, &mut swept);
        assert_eq!((swept.hung, swept.next_due), (1, 1_512));
        assert!(
            ring.leave(early, GEN, 100, 100) == Left::Taken,
            "a call taken by the sweep ended as well"
        );
        assert_eq!(ring.leave(late, GEN, 300, 300), Left::Counted);
    }

    #[test]
    fn at_the_top_of_the_clock_a_call_just_issued_is_not_judged_hung() {
        let ring = OutRing::default();
        ring.enter(GEN, u64::MAX, LIMIT).unwrap();
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || u64::MAX, || GEN, LIMIT, &mut swept);
        assert_eq!(swept.hung, 0, "out for no time at all");
    }

    #[test]
    fn a_bucket_due_exactly_at_the_top_of_the_clock_is_judged_there() {
        // A limit of 2^30 - 1 ns and a bucket that ends at 2^64 - 2^30: due at u64::MAX.
        let limit = (1 << 30) - 1;
        let ring = OutRing::default();
        ring.enter(GEN, u64::MAX - (1 << 30), limit).unwrap();
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || u64::MAX, || GEN, limit, &mut swept);
        assert_eq!(swept.hung, 1, "out longer than its limit");
    }

    #[test]
    fn a_sweep_removes_calls_of_an_ended_generation_unjudged() {
        let ring = OutRing::default();
        let old = ring.enter(GEN, 100, LIMIT).unwrap();
        let mut swept = Swept::empty();
        ring.sweep(GEN + 2, true, || 200, || GEN + 2, LIMIT, &mut swept);
        assert_eq!(
            swept,
            Swept {
                hung: 0,
                ended_generation: 1,
                next_due: u64::MAX
            }
        );
        assert_eq!(ring.leave(old, GEN, 100, 100), Left::Taken);
    }

    #[test]
    fn a_sweep_of_an_open_breaker_judges_nothing() {
        let ring = OutRing::default();
        ring.enter(GEN, 100, LIMIT).unwrap();
        let mut swept = Swept::empty();
        ring.sweep(GEN, false, || 5_000, || GEN, LIMIT, &mut swept);
        assert_eq!((swept.hung, swept.ended_generation), (0, 0));
        assert_eq!(ring.out(), 1);
    }

    #[test]
    fn a_late_end_never_matches_a_bucket_opened_in_its_place_since() {
        let ring = OutRing::default();
        let hung = ring.enter(GEN, 100, LIMIT).unwrap();
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 2_000, || GEN, LIMIT, &mut swept);
        assert_eq!(swept.hung, 1);
        // A registration of the same bucket, delayed past the sweep, reopens the same place.
        let delayed = ring.enter(GEN, 100, LIMIT).unwrap();
        assert_eq!(delayed.place, hung.place);
        assert!(
            ring.leave(hung, GEN, 100, 100) == Left::Taken,
            "the hung call's end took the delayed call"
        );
        assert_eq!(ring.leave(delayed, GEN, 100, 100), Left::Counted);
    }

    #[test]
    fn buckets_that_collide_take_the_next_free_place() {
        let ring = OutRing::default();
        // Buckets 0 and 8 (times 0 and 8 * 256) map to the same place.
        let first = ring.enter(GEN, 0, LIMIT).unwrap();
        let second = ring.enter(GEN, 8 * 256, LIMIT).unwrap();
        assert_ne!(first.place, second.place);
        for bucket in 1..PLACES as u64 - 1 {
            ring.enter(GEN, bucket * 256, LIMIT).unwrap();
        }
        assert_eq!(
            ring.enter(GEN, 9 * 256, LIMIT),
            None,
            "a ninth bucket found a place"
        );
        assert_eq!(ring.leave(first, GEN, 0, 0), Left::Counted);
        assert_eq!(
            ring.enter(GEN, 9 * 256, LIMIT),
            None,
            "an empty bucket lost its place before a sweep"
        );
        // A sweep in a later generation frees them all, empty or not.
        let mut swept = Swept::empty();
        ring.sweep(GEN + 2, true, || 9 * 256, || GEN + 2, LIMIT, &mut swept);
        assert_eq!((swept.hung, swept.ended_generation), (0, 7));
        assert!(ring.enter(GEN + 2, 9 * 256, LIMIT).unwrap().opened);
    }

    #[test]
    fn a_bucket_entered_again_after_its_calls_ended_is_not_opened_again() {
        let ring = OutRing::default();
        let first = ring.enter(GEN, 10, LIMIT).unwrap();
        assert_eq!(ring.leave(first, GEN, 10, 10), Left::Counted);
        let again = ring.enter(GEN, 20, LIMIT).unwrap();
        assert!(
            !again.opened,
            "its due time was lowered again for the same bucket"
        );
        assert_eq!((again.place, again.reuse), (first.place, first.reuse));
        assert_eq!(ring.leave(again, GEN, 20, 20), Left::Counted);
    }

    #[test]
    fn the_end_survives_the_bucket_number_wrapping_and_a_clock_slightly_behind() {
        let ring = OutRing::default();
        let issued = (5u64 << (BUCKET_BITS + 8)) + 1_000; // far past 2^19 buckets of 256 ns
        ring.enter(GEN, issued, LIMIT).unwrap();
        let word = ring
            .places
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .max()
            .unwrap();
        let end = (issued >> 8 << 8) + 256;
        assert_eq!(end_time(word, issued), end);
        assert_eq!(end_time(word, issued - 300), end, "a clock a bucket behind");
        assert_eq!(end_time(word, issued + 1_000_000), end);
        // Further ahead than a clock difference: a bucket of long ago.
        let too_far = (ahead_buckets(8) + 1) * 256;
        assert_eq!(
            end_time(word, issued - too_far),
            end - (BUCKET_MASK + 1) * 256,
            "read as ahead of the clock"
        );
    }

    #[test]
    fn a_sweep_frees_empty_buckets_whose_stretch_is_over_or_whose_width_is_not_the_limits() {
        let ring = OutRing::default();
        let over = ring.enter(GEN, 100, LIMIT).unwrap(); // [0, 256)
        let current = ring.enter(GEN, 300, LIMIT).unwrap(); // [256, 512)
        let other_width = ring.enter(GEN, 310, LIMIT * 8).unwrap();
        for (entered, issued) in [(over, 100), (current, 300)] {
            assert_eq!(ring.leave(entered, GEN, issued, issued), Left::Counted);
        }
        assert_eq!(ring.leave(other_width, GEN, 310, 310), Left::Counted);
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 400, || GEN, LIMIT, &mut swept);
        assert_eq!((swept.hung, swept.ended_generation), (0, 0));
        assert_eq!(
            swept.next_due,
            512 + LIMIT,
            "only the current stretch's bucket is left"
        );
        let held = ring
            .places
            .iter()
            .filter(|w| w.load(Ordering::Relaxed) & TAKEN == 0)
            .count();
        assert_eq!(held, 1);
    }

    #[test]
    fn a_call_out_too_long_leaves_its_judging_to_a_sweep() {
        let ring = OutRing::default();
        let long = ring.enter(GEN, 0, LIMIT).unwrap();
        let now = LONG_OUT_WIDTHS << 8;
        assert!(
            ring.leave(long, GEN, 0, now) == Left::OutTooLong,
            "a long-out call left its bucket"
        );
        assert_eq!(ring.out(), 1);
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || now, || GEN, LIMIT, &mut swept);
        assert_eq!(swept.hung, 1);
    }

    #[test]
    fn a_full_bucket_sends_the_next_call_to_a_place_of_its_own() {
        // 2^17 - 1 calls fill a bucket's count; the next one must not carry into the taken
        // bit (which would free the place and lose every call in it).
        let ring = OutRing::default();
        let first = ring.enter(GEN, 10, LIMIT).unwrap();
        for _ in 1..COUNT_MASK {
            assert_eq!(ring.enter(GEN, 10, LIMIT).unwrap().place, first.place);
        }
        let next = ring.enter(GEN, 10, LIMIT).unwrap();
        assert_ne!(next.place, first.place, "a call entered a full bucket");
        assert_eq!(ring.out(), COUNT_MASK + 1);
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 2_000, || GEN, LIMIT, &mut swept);
        assert_eq!(swept.hung, COUNT_MASK + 1, "calls out lost");
    }

    #[test]
    fn a_bucket_at_most_ahead_buckets_ahead_of_the_sweeps_clock_is_read_as_ahead() {
        // The sweep's clock may be behind the issuing core's: a bucket exactly
        // `ahead_buckets` after the sweep's own is that bucket, not one of 2^19 widths ago.
        let ring = OutRing::default();
        let issued = 1u64 << 40;
        ring.enter(GEN, issued, LIMIT).unwrap();
        let word = open_place(&ring);
        let end = (issued >> 8 << 8) + 256;
        let behind_by = ahead_buckets(8) * 256;
        assert_eq!(end_time(word, issued - behind_by), end, "read as long ago");
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || issued - behind_by, || GEN, LIMIT, &mut swept);
        assert_eq!(swept.hung, 0, "a call just issued judged hung");
    }

    #[test]
    fn an_empty_bucket_is_freed_by_a_sweep_at_the_very_end_of_its_stretch() {
        let ring = OutRing::default();
        let entered = ring.enter(GEN, 100, LIMIT).unwrap(); // [0, 256)
        assert_eq!(ring.leave(entered, GEN, 100, 100), Left::Counted);
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 256, || GEN, LIMIT, &mut swept);
        assert_eq!(
            swept.next_due,
            u64::MAX,
            "its stretch is over: nothing is due"
        );
        assert!(
            ring.places
                .iter()
                .all(|w| w.load(Ordering::Relaxed) & TAKEN != 0),
            "an empty bucket whose stretch is over kept its place"
        );
    }

    #[test]
    fn a_call_out_too_long_frees_its_place_when_it_takes_it() {
        let ring = OutRing::default();
        let long = ring.enter(GEN, 0, LIMIT).unwrap();
        let now = LONG_OUT_WIDTHS << 8;
        assert_eq!(ring.leave(long, GEN, 0, now), Left::OutTooLong);
        assert_eq!(ring.take_place(long, GEN, 0), 1);
        assert!(
            ring.places
                .iter()
                .all(|w| w.load(Ordering::Relaxed) & TAKEN != 0),
            "the place it took is still held"
        );
    }

    #[test]
    fn a_bucket_of_a_generation_begun_since_keeps_its_due_time() {
        // A call admitted after a transition the sweep did not see: its bucket is left to a
        // sweep of its own generation, and its due time (end plus limit) stays the earliest
        // due, not its end.
        let ring = OutRing::default();
        ring.enter(GEN + 1, 100, LIMIT).unwrap(); // [0, 256)
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || 200, || GEN + 1, LIMIT, &mut swept);
        assert_eq!(
            swept,
            Swept {
                hung: 0,
                ended_generation: 0,
                next_due: 256 + LIMIT
            }
        );
        assert_eq!(ring.out(), 1);
    }

    #[test]
    fn a_wide_bucket_just_ahead_of_the_sweeps_clock_is_not_judged_hung() {
        // With a width over a millisecond, a clock difference between cores is still taken
        // as up to two buckets ahead: a sweep whose clock reads 1 ns before the bucket began
        // must not read it as 2^19 widths old.
        let limit = 1_000_000_000; // width 2^28 ns
        let ring = OutRing::default();
        let issued = 1u64 << 40; // the first nanosecond of its bucket
        ring.enter(GEN, issued, limit).unwrap();
        let word = open_place(&ring);
        let end = issued + (1 << 28);
        assert_eq!(end_time(word, issued - 1), end, "read as long ago");
        let mut swept = Swept::empty();
        ring.sweep(GEN, true, || issued - 1, || GEN, limit, &mut swept);
        assert_eq!(
            (swept.hung, swept.next_due),
            (0, end + limit),
            "a call just issued judged hung"
        );
    }

    #[test]
    fn an_end_read_on_a_clock_behind_the_issue_time_takes_its_call_out() {
        // The end may read a clock of another core, a little behind the issuing one's: that
        // is a call out for no time, not one out too long (which would judge its bucket hung).
        let ring = OutRing::default();
        let entered = ring.enter(GEN, 1_000, LIMIT).unwrap();
        assert_eq!(ring.leave(entered, GEN, 1_000, 999), Left::Counted);
        assert_eq!(ring.out(), 0);
    }

    #[test]
    fn a_ticket_gives_back_its_entry() {
        let entered = Entered {
            place: 7,
            shift: 63,
            reuse: 5,
            opened: false,
        };
        assert_eq!(OutTicket::new(256, entered).entry(), Some((256, entered)));
        assert_eq!(OutTicket::NONE.entry(), None);
    }
}
