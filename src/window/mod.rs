//! The failure window: the trip rules' memory of recent outcomes, in atomics.
//!
//! This is the one seam through which outcomes of a closed breaker reach the trip rules: the
//! breaker calls [`Window::record_success_quickly`] (then, if it declines,
//! [`Window::record_success_slow`]) and [`Window::record_failure`] and acts on the
//! [`Judgement`]; a time-based window or a slow-call rule would sit behind the same three
//! calls.
//!
//! # What it remembers
//!
//! Every recorded outcome of a closed generation has a *position*: how many outcomes were
//! recorded before it. The window never stores successes one by one. It counts them (in
//! per-thread stripes, see `stripes.rs`), and it keeps one record per failure: the failure's
//! number and the count of successes before it. A failure's position is its number plus that
//! count, so from the records of recent failures and the current success count every rule can
//! be decided:
//!
//! - rate `T` over `W` calls: the failures whose positions are within `W` of the newest
//!   outcome, over `W` (or over the calls recorded, while fewer than `W`);
//! - `K` consecutive failures: failures `n - K + 1 ..= n` with no success between them, that
//!   is, the same success count in the first and the last record.
//!
//! # Memory ordering
//!
//! 1. *Failures are totally ordered* by the modification order of the window word: each one
//!    commits with a compare-and-swap. A committer reads the success count after loading the
//!    word (`Acquire`) and before its CAS (`AcqRel`). So the next committer, whose load
//!    synchronizes with that CAS, reads every stripe after the previous committer did, and by
//!    read-read coherence reads a value at least as large. Success counts, and so positions,
//!    never decrease along the failure order, whatever the orderings of the stripe accesses
//!    (relaxed).
//! 2. *A filling success knows its exact position.* It first takes a number among successes
//!    with a read-modify-write on the shared stripe, then changes the window word (a tick).
//!    A failure that loaded the word before the tick fails its CAS and counts again, and then
//!    sees the success (its reload synchronizes with the tick, which follows the increment). A
//!    failure whose count did not include the success committed before the tick, and the tick's
//!    CAS read its word. So the success learns of every failure positioned before it.
//! 3. *Forgetting failures* (Dirty → Clean) loads the word first and then the stripes, so the
//!    count it sees is at least the newest failure's, and it commits with a CAS from that word,
//!    which fails if another failure arrived meanwhile. A clean word keeps the failure count,
//!    so the failures after it are numbered on and a rule may look back past the clean spell:
//!    the forgetting, too, first copies the newest failure's record to the ring (point 4), so
//!    that such a look-back finds this generation's record, far out of view, and never one an
//!    older generation with the same tag left in the slot (the loom model
//!    `a_failure_after_a_forgetting_finds_the_forgotten_record_not_an_older_generations`).
//! 4. *Failure records* are published to the ring before the commit of the failure after them,
//!    or of the forgetting (release CAS on the slot, then on the word); see `ring.rs`.
//! 5. *Clearing* for a closed generation `g` loads the word (`Acquire`), then checks on the state
//!    word (`Acquire`) that the breaker is still closed in `g`, and commits with a CAS from the
//!    word it loaded. Every value of the word but an empty one was written after the
//!    transition that opened its generation (by a caller that found that generation current,
//!    or by a reset's [`Window::begin`]), and that write happens before the load; so if the
//!    loaded word belonged to a generation after `g`, the state load would see that
//!    generation, and nothing is written. An empty word is written by the closing itself,
//!    just before its transition (point 7): a load that sees it sees the state word as that
//!    closing found it or later, which is closed in `g` only if the closing is a reset from
//!    `g`; then clearing for `g` puts back a window for the generation still current, and the
//!    reset's `begin` clears it again after its transition. Which generation is
//!    newer is never decided by comparing the 13-bit tags, which wrap, so a window left behind
//!    by any older generation can always be cleared. A word whose tag matches is taken as this
//!    generation's; point 7 makes sure it is.
//!
//!    *The one gap*, here and wherever a caller checks its generation and then commits with a
//!    CAS from the word it loaded: a caller stalled between the two while the breaker makes
//!    `2^13` transitions or more fails its CAS only if the word changed. Every closing empties
//!    the window, and a clean word carries its full generation (`word.rs`, `cleaned`), so a
//!    clean word never comes back. A filling or dirty one can: if by the time the caller
//!    resumes a later generation with the same tag holds a word alike the one it loaded in
//!    every field (as many failures, the newest after as many successes; filling, as many
//!    success ticks from a seed one lower for each `2^13` transitions, `word.rs`,
//!    `tick_seed`), the CAS succeeds and writes into that generation's window as if it were
//!    its own. Closing that gap would take a wider word; it needs a stall of thousands of
//!    transitions between two adjacent instructions. The loom models run with a 1-bit tag,
//!    so that tags collide in them.
//! 6. *The rules* (`rules.rs`) are one word, so a judgement uses one version of them whole;
//!    relaxed loads suffice, as they carry only numbers, and a judgement racing a
//!    reconfiguration may use either version, as it may load either set of settings. Two
//!    reconfigurations may race, though, and the copy must end up agreeing with the settings
//!    stored last. Each stores its settings, then repeats: SeqCst fence `F1`, load the
//!    settings, store their copy `W`, SeqCst fence `F2`, load the settings again, until the
//!    second load finds what the first did. Let `W` of reconfiguration `A` be last in the
//!    copy's modification order, taken from settings `s`, and let `R` be the reconfiguration
//!    whose settings store `S` is last (if `R` is `A`, both of `A`'s loads follow `S` and see
//!    it). `R`'s last round stores a copy after its `F1`, and `S` precedes that `F1`. If
//!    `A`'s `F2` preceded `R`'s `F1` in the fences' total order, `R`'s copy would come after
//!    `A`'s `W`; so `R`'s `F1` precedes `A`'s `F2`, `A`'s second load sees `S`, and `A`
//!    stopped only because `s` is `S`.
//! 7. *Emptying before a closing.* A window is left as its last closed generation had it, and
//!    a generation `2^13` transitions later has the same tag; clearing only on a tag mismatch
//!    would hand it the old failures. So the closing itself empties the window, before its
//!    compare-and-swap on the state word, when it closes from a state in which no closed
//!    generation is current (half-open, open, forced; from closed, see below): load the word
//!    (`Acquire`), check that the state word is still the one the closing will replace
//!    (`Acquire`), and CAS from the loaded word to the empty one. No caller of a current
//!    generation writes the word in such a state (a stalled caller of one long over may, by a
//!    CAS from a word it loaded then, which fails on a changed word: see point 5). Two
//!    closings may race, and the loser may empty the window late: but a caller of the new
//!    generation writes the word only after loading the state word written by the winner's
//!    CAS, which follows the winner's own emptying; so if the loser's load saw such a write,
//!    its state check sees the new state and it writes nothing, and if not, its CAS fails
//!    (the word moved) or replaces the empty word with itself. A reset from closed generation
//!    `g` to `g + 1` empties the window only if it has `g + 1`'s tag, so never `g`'s own
//!    window while `g` is current (its callers may be recording); a window of another tag is
//!    cleared after the transition by [`Window::begin`], on the mismatch.
//! 8. *Stripe counts* carry their full generation, and a count of another generation is
//!    never ordered by serial arithmetic (one 2^31 generations old would read as newer).
//!    An owned stripe only ever holds a generation its owner found current before, so
//!    another generation there is an older one (`count_aging_success`). The shared stripe's
//!    count is replaced only by a success that, after loading it (`Acquire`), finds its own
//!    generation current on the state word (`add_shared_success`).
//! 9. *Aging without the window word.* In the window of the whole breaker, an owned stripe's
//!    count is written only by its owner, and only once its generation's window has left
//!    filling: by an aging success in a dirty window of a generation found current
//!    (`count_aging_success`), or by one that found the stripe counting that generation already
//!    (`ages_in_own_stripe`). Filling successes take their numbers on the shared stripe (point
//!    2), and a window never fills again within its generation (a reconfiguration changes its
//!    rules, not its mode). So a success of generation `g` that finds its own stripe counting
//!    `g` below the stripe's hint knows, without loading the window word, that `g`'s window is
//!    dirty, or clean, or that `g` is over; and it adds itself to the count. Dirty, that is
//!    what the window's own quick path does. Clean, the success is counted where the window
//!    needed none: as when a success loads the dirty word just before the forgetting and is
//!    counted after it. Positions only grow by it, and the failure after a clean window is
//!    placed after it, at least [`forget_after`](Window::forget_after) successes past every
//!    failure forgotten. Over, the count belongs to a generation that no caller of a later one
//!    reads (`successes` takes only its own generation's counts). The stripe's hint,
//!    `quiet_below`, sends the stripe's turn to check down the slow path, which reads the
//!    window word. A window per thread numbers its filling successes on its own stripe, so
//!    there the count holds `g` while the window fills; what the quick path then asks is the
//!    hint: each filling success zeroes it after taking its number
//!    (`no_quiet_successes_while_filling`; only the owner writes it), so that no count of `g`
//!    is below it until a failure or a forgetting check of the full window sets it again
//!    (`quiet_until_aged`, `forget_if_aged`). A hint left by an earlier generation lets no
//!    count of `g` through: the first count of `g` written is a filling success's, which zeroes
//!    it, or an aging success's, which zeroes it too (`count_aging_success`).

mod per_thread;
mod ring;
mod rules;
mod word;

pub(crate) use per_thread::Windows;

use crate::config::{FailureRate, Settings};
use crate::stripes::{LocalStripe, Stripe, Stripes};
use crate::sync::{AtomicU64, Backoff, CachePadded, Ordering, Swappable};

use ring::FailureRing;
use rules::Rules;
use word::{Mode, WindowWord, generation_tag};

/// Which rule tripped the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TripRule {
    /// The failure rate reached its threshold.
    FailureRate,
    /// The run of consecutive failures reached its length.
    ConsecutiveFailures,
}

/// Why a window asks the breaker to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TripCause {
    pub(crate) rule: TripRule,
    /// Failures the rule saw: in the rate window, or in the run.
    pub(crate) failures: u32,
    /// Calls the rule judged: the rate window's calls, or the run's length.
    pub(crate) calls: u32,
}

/// What recording an outcome means for the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Nothing to do.
    Keep,
    /// A rule was met: open the breaker (if it is still in this generation).
    Trip(TripCause),
    /// The outcome belongs to an earlier generation and was not recorded.
    Stale,
}

/// What a failure that finds its window clean does around its commit: from before the commit
/// until after it, the breaker's state word must not say the window is quiet (`quiet.rs`).
/// `()` does nothing: a window without a breaker's state word (the unit tests).
pub(crate) trait QuietLoss {
    /// Before the failure's first try at committing over a clean word.
    fn begin(&self);
    /// After its last try, whichever failure's commit landed.
    fn end(&self);
}

impl QuietLoss for () {
    fn begin(&self) {}
    fn end(&self) {}
}

/// A loss begun ([`QuietLoss::begin`]), ended when this is dropped.
struct LossUnderWay<'q, Q: QuietLoss>(&'q Q);

impl<'q, Q: QuietLoss> LossUnderWay<'q, Q> {
    fn begin(quiet: &'q Q) -> Self {
        quiet.begin();
        LossUnderWay(quiet)
    }
}

impl<Q: QuietLoss> Drop for LossUnderWay<'_, Q> {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// What the window holds now, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WindowSnapshot {
    /// Failures among the rate window's calls.
    pub(crate) failures: u32,
    /// Calls in the rate window (at most its size).
    pub(crate) calls: u32,
    /// Length of the current run of failures.
    pub(crate) consecutive_failures: u32,
}

pub(crate) struct Window {
    word: CachePadded<AtomicU64>,
    ring: FailureRing,
    /// The rules a full window judges by, packed (`rules.rs`): what failures and aging
    /// successes need, kept here so that they never load the settings (an arc-swap load is two
    /// atomic read-modify-writes). Point 6 above.
    rules: AtomicU64,
    /// Whose successes this window counts.
    counts: Counts,
    /// Successes after its newest failure before the window may forget it, whatever the
    /// rules: [`FORGET_NO_SOONER_THAN`], and (but under loom, whose models need windows that
    /// forget within a few calls) the ring's capacity, the longest window or run a
    /// reconfiguration may give it. A clean window counts no success, so a failure it forgot
    /// stays no nearer than this, counted, for good: beyond every window it may ever judge.
    forget_no_sooner_than: u32,
}

/// Where a window stands for the state word's quiet bit ([`Window::quiet_standing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuietStanding {
    /// Clean in the generation asked about.
    Clean,
    /// Filling in it, without a failure: empty, or successes alone.
    Unfailed,
    /// Anything else: filling with a failure, dirty, or another generation's.
    Neither,
}

/// Whose successes a window counts: every thread's, or one stripe's threads' only (a window
/// per thread, `per_thread.rs`). Every argument above is about "the stripes" a window counts,
/// so it holds for either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counts {
    /// Every stripe's: the window of the whole breaker. Filling successes take their numbers
    /// on the shared stripe.
    EveryStripe,
    /// The stripe with this index ([`Stripes::by_index`]) alone, which also numbers the
    /// filling successes.
    OneStripe(u32),
}

/// The fewest successes after its newest failure at which a window forgets it (turns clean),
/// whatever the rules: forgetting is worth its price only when the window then stays clean for
/// a while.
///
/// While that window is dirty, each success adds one to its thread's stripe; while it is
/// clean, a success costs nothing (the state word's quiet bit, `quiet.rs`). But turning clean
/// and dirty again costs a round: forgetting reads every stripe and makes two
/// compare-and-swaps (the window word, then the state word's quiet bit), and three branches
/// go the other way for a call each (the first success after the failure, the one that
/// forgets, the first quiet one). The failure makes two compare-and-swaps either way (over a
/// clean window, the window word and the quiet bit, and since 2026-12-07 an add to the count
/// of losses under way, a subtraction from it and a SeqCst fence (`quiet.rs`); over a dirty
/// one, the ring's slot and the window word). On the Intel Xeon of `benches/PERFORMANCE.md`
/// the round cost about as much as 35 successes in a dirty window ("Forgetting no sooner than
/// 64 successes"), measured before those were added. Forgetting as
/// soon as the rules allowed paid it at every failure of the lesson's healthy day (one call in
/// 40 fails) over 20 calls, which then ran slower than over 100 calls, where the window never
/// forgets. Waiting for 64 successes, about twice that price, bounds what either choice can
/// waste, as renting skis until the rent reaches their price does: a window dirtied again
/// within 64 successes never pays the round, and one that then stays quiet pays at most 64
/// dirty successes more than it had to.
///
/// The same holds for a window per thread, which keeps the quiet bit too, once every window
/// is clean (`quiet.rs`); before it did, a window per thread forgot as soon as its rules
/// allowed.
///
/// Forgetting later changes no judgement: a dirty window counts every success, and every rule
/// judges by positions (above). Under loom, 1, so that the models' windows of a few calls
/// still forget, and its races are explored.
#[cfg(not(loom))]
pub(crate) const FORGET_NO_SOONER_THAN: u32 = 64;
#[cfg(loom)]
pub(crate) const FORGET_NO_SOONER_THAN: u32 = 1;

/// How many failed checks in a row a stripe counts before the age it asks of a failure to
/// forget it stops doubling ([`Window::check_ages`]): at most 8 times `forget_after`.
const MAX_FAILED_CHECKS: u32 = 4;

/// Marks the branch that calls it as the unlikely one: the compiler then lays the clean
/// window's success out as the straight path, with no taken jump. Empty, and inlined away.
#[cold]
#[inline(always)]
fn a_failure_is_in_view() {}

/// A stripe's window count: generation (high 32 bits) and successes (low 32).
fn stripe_count(raw: u64) -> (u32, u32) {
    ((raw >> 32) as u32, raw as u32)
}

fn pack_stripe_count(generation: u32, successes: u32) -> u64 {
    u64::from(generation) << 32 | u64::from(successes)
}

impl Window {
    /// The window of the whole breaker: it counts the successes of every thread.
    pub(crate) fn new(settings: &Settings, generation: u32) -> Self {
        Self::counting(settings, generation, Counts::EveryStripe)
    }

    /// A window that counts only the successes of the threads that write stripe `index`
    /// ([`Stripes::by_index`]); those threads must record every outcome here and nowhere else.
    pub(crate) fn for_stripe(settings: &Settings, generation: u32, index: u32) -> Self {
        Self::counting(settings, generation, Counts::OneStripe(index))
    }

    fn counting(settings: &Settings, generation: u32, counts: Counts) -> Self {
        let capacity = (settings.failure_records as usize).next_power_of_two();
        #[cfg(not(loom))]
        let forget_no_sooner_than =
            FORGET_NO_SOONER_THAN.max(u32::try_from(capacity).unwrap_or(u32::MAX));
        #[cfg(loom)]
        let forget_no_sooner_than = FORGET_NO_SOONER_THAN;
        Window {
            word: CachePadded::new(AtomicU64::new(Self::empty(settings, generation).0)),
            ring: FailureRing::new(capacity),
            rules: AtomicU64::new(Rules::of(settings).pack()),
            counts,
            forget_no_sooner_than,
        }
    }

    /// A window that records nothing and that no success finds clean or dirty, so that
    /// [`record_success_quickly`](Window::record_success_quickly) always declines: the place
    /// of the breaker-wide window when every thread has a window of its own, where only a
    /// thread without a window of its own finds it, and goes the slow way (`per_thread.rs`).
    /// Nothing but that quick test may be asked of it.
    pub(crate) fn declining() -> Self {
        Window {
            word: CachePadded::new(AtomicU64::new(WindowWord::DECLINING)),
            ring: FailureRing::new(1),
            rules: AtomicU64::new(0),
            counts: Counts::EveryStripe,
            forget_no_sooner_than: FORGET_NO_SOONER_THAN,
        }
    }

    /// The stripe whose read-modify-writes number this window's filling successes.
    fn numbering_stripe<'s>(&self, stripes: &'s Stripes) -> &'s Stripe {
        match self.counts {
            Counts::EveryStripe => stripes.shared(),
            Counts::OneStripe(index) => stripes.by_index(index),
        }
    }

    /// Takes the part of new settings the window keeps for itself: its rules. Relaxed: the
    /// reconfiguration orders it with fences (point 6 above).
    pub(crate) fn apply(&self, settings: &Settings) {
        self.rules
            .store(Rules::of(settings).pack(), Ordering::Relaxed);
    }

    /// Successes after the newest failure at which this window forgets it: when no rule can
    /// see it any more, and no sooner than `forget_no_sooner_than` (field docs).
    #[inline(always)]
    fn forget_after(&self, rules: Rules) -> u32 {
        rules.forget_after().max(self.forget_no_sooner_than)
    }

    /// Before a word that remembers its newest failure is replaced by a clean one: copies that
    /// failure's record to the ring, as the next failure's commit would have (point 4). A clean
    /// word keeps the failure count, so the failures after it are numbered on, and a rule may
    /// look back past the clean spell to this number: it must find this generation's record
    /// there (far out of view), not whatever an older generation with the same tag left in
    /// the slot. `false` if the word is no longer `word` (the replacing CAS would fail).
    fn publish_before_forgetting(&self, tag: u32, word: WindowWord) -> bool {
        !word.remembers_newest_failure()
            || self.ring.publish(
                tag,
                word.failures().wrapping_sub(1),
                word.successes_before_newest(),
                || self.word.load(Ordering::Acquire) == word.0,
            )
    }

    /// The rules a full window judges by; relaxed (point 6 above).
    #[inline(always)]
    fn rules(&self) -> Rules {
        Rules::unpack(self.rules.load(Ordering::Relaxed))
    }

    /// Whether `settings` can be applied to this window: its rules must not look back over
    /// more failures than the ring was sized for.
    pub(crate) fn fits(&self, settings: &Settings) -> bool {
        settings.failure_records_needed() <= self.ring.capacity()
    }

    /// Failure records the ring keeps.
    pub(crate) fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Heap memory the failure records take, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.ring.heap_bytes()
    }

    fn empty_mode(settings: &Settings) -> Mode {
        Self::empty_mode_for(Rules::of(settings))
    }

    fn empty_mode_for(rules: Rules) -> Mode {
        if rules.window.is_some() {
            Mode::Filling
        } else {
            Mode::Clean
        }
    }

    fn empty(settings: &Settings, generation: u32) -> WindowWord {
        WindowWord::empty(generation, Self::empty_mode(settings))
    }

    /// Clears the window for closed `generation`, unless it already belongs to it or
    /// `generation` is over (`is_current` re-reads the state word): point 5 above.
    pub(crate) fn begin(
        &self,
        settings: &Settings,
        generation: u32,
        is_current: impl Fn() -> bool,
    ) {
        self.clear_for(Self::empty_mode(settings), generation, &is_current);
    }

    /// Empties the window for closed `generation` before the transition that begins it:
    /// point 7 above. `from_closed` tells that the transition leaves a closed generation, whose
    /// window must then be kept unless it has `generation`'s tag. `unchanged` re-reads the
    /// state word and tells whether it is still the one the transition will replace. Returns
    /// `false`, having written nothing, once it is not: the caller reads the state again and
    /// decides anew.
    pub(crate) fn clear_before_closing(
        &self,
        settings: &Settings,
        generation: u32,
        from_closed: bool,
        unchanged: impl Fn() -> bool,
    ) -> bool {
        let tag = generation_tag(generation);
        let empty = Self::empty(settings, generation).0;
        let mut current = self.word.load(Ordering::Acquire);
        // The state is read after the word, every time: point 7.
        while unchanged() {
            if current == empty || from_closed && WindowWord(current).tag() != tag {
                return true;
            }
            match self.word.compare_exchange_weak(
                current,
                empty,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(seen) => current = seen,
            }
        }
        false
    }

    fn clear_for(&self, mode: Mode, generation: u32, is_current: &impl Fn() -> bool) {
        let tag = generation_tag(generation);
        let empty = WindowWord::empty(generation, mode).0;
        let mut current = self.word.load(Ordering::Acquire);
        // The state is read after the word, every time: point 5.
        while WindowWord(current).tag() != tag && is_current() {
            match self.word.compare_exchange_weak(
                current,
                empty,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(seen) => current = seen,
            }
        }
    }

    /// Records a success of closed `generation` in the two cases that happen all day, and
    /// returns whether it did: the window is clean (nothing to write), or it is dirty and this
    /// thread owns its stripe (the success only ages the failures in view,
    /// [`ages_in_own_stripe`](Window::ages_in_own_stripe)). Every other case is
    /// [`record_success_slow`](Window::record_success_slow)'s, which the caller calls out of
    /// line, so that the inlined part keeps nothing on the stack for it.
    ///
    /// For a plain call (one that asked the state word's quiet bit), the window is asked the
    /// other way round ([`Windows`]): the thread's own stripe first, then
    /// [`is_clean_quickly`](Window::is_clean_quickly).
    #[inline(always)]
    pub(crate) fn record_success_quickly(&self, generation: u32, stripes: &Stripes) -> bool {
        // Acquire: pairs with the CAS that made the window clean, so that, with the window
        // clean, nothing this success could change is pending.
        let raw = self.word.load(Ordering::Acquire);
        if WindowWord::is_clean_for(raw, generation) {
            return true;
        }
        a_failure_is_in_view();
        // The dirty test comes first here because with a window per thread the stripe also
        // numbers the window's filling successes (`numbering_stripe`), which must tick the
        // window word (point 2).
        WindowWord::is_dirty_for(raw, generation) && Self::ages_in_own_stripe(generation, stripes)
    }

    /// Whether the window is clean for `generation` by one load of its word: the rest of the
    /// stripe-first quick path, once [`ages_in_own_stripe`](Window::ages_in_own_stripe) has
    /// declined.
    #[inline(always)]
    pub(crate) fn is_clean_quickly(&self, generation: u32) -> bool {
        // Acquire, as in `record_success_quickly`.
        WindowWord::is_clean_for(self.word.load(Ordering::Acquire), generation)
    }

    /// A success of `generation` that ages the failures in view: one to this thread's own
    /// stripe's count, and `true`, unless it is the stripe's turn to check whether the window
    /// can forget (its count reached `quiet_below`), the stripe counts another generation, or
    /// the thread has no stripe of its own. One unsigned comparison tells the first two:
    /// `count` is the count before this success if the stripe counts `generation`, and 2^32
    /// or more if not, while `quiet_below`, 32 bits, is below 2^32. The window word is not
    /// read: a stripe that counts `generation` below its hint says that its window has left
    /// filling (point 9 above). The stripe is asked for as an `Option`, not a `LocalStripe`:
    /// the enum's tag would be built and tested here.
    ///
    /// The stripe's turn to check goes out of line: forgetting changes the window, and the
    /// window word's tag is 13 bits, so only `word_for`, which asks the state word, can tell
    /// this generation from one 2^13 transitions older (a permit held that long, whose stripe
    /// still counts its generation).
    #[inline(always)]
    pub(crate) fn ages_in_own_stripe(generation: u32, stripes: &Stripes) -> bool {
        let Some(stripe) = stripes.thread_stripe() else {
            return false;
        };
        let counted = stripe.window_successes.load(Ordering::Relaxed);
        let count = counted.wrapping_sub(pack_stripe_count(generation, 0));
        if count < u64::from(stripe.quiet_below.load(Ordering::Relaxed)) {
            // `count` is below 2^32 - 1, so one more stays in the low half. Only the owner
            // writes this stripe; relaxed is enough, see point 1 above.
            stripe
                .window_successes
                .store(counted + 1, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Whether the window is clean in `generation` now (`Acquire`, as every load of the
    /// word that a decision follows): the check behind the state word's quiet bit
    /// (`quiet.rs`).
    pub(crate) fn is_clean_in(&self, generation: u32) -> bool {
        WindowWord::is_clean_in(self.word.load(Ordering::Acquire), generation)
    }

    /// Where this window stands for the state word's quiet bit in `generation` (`quiet.rs`).
    pub(crate) fn quiet_standing(&self, generation: u32) -> QuietStanding {
        // Acquire, as in `is_clean_in`.
        let raw = self.word.load(Ordering::Acquire);
        if WindowWord::is_clean_in(raw, generation) {
            QuietStanding::Clean
        } else if WindowWord::is_unfailed_filling_for(raw, generation) {
            QuietStanding::Unfailed
        } else {
            QuietStanding::Neither
        }
    }

    /// Whether the window is clean in `generation`, after taking it as full of successes if
    /// it is filling without a failure (empty, or successes alone): from its filling word to
    /// the clean word of `generation`, by a compare-and-swap, so that an outcome that lands
    /// first keeps the window as it made it (asked again, a filling success leaves it
    /// unfailed, a failure does not), and one that comes after finds it clean: a success
    /// that took its number meanwhile finds the window full and ends, as when another success
    /// filled it, and a failure clears the quiet bit as over any clean window. Only for a
    /// window per thread, by the setter of the quiet bit (`per_thread.rs`, `are_clean_in`).
    pub(crate) fn is_clean_taking_unfailed_as_full(&self, generation: u32) -> bool {
        // Acquire, as in `is_clean_in`.
        let mut raw = self.word.load(Ordering::Acquire);
        loop {
            if WindowWord::is_clean_in(raw, generation) {
                return true;
            }
            if !WindowWord::is_unfailed_filling_for(raw, generation) {
                return false;
            }
            // AcqRel: a failure that loads the clean word learns of our state load, as it
            // would of the success that filled or forgot (point 3; `quiet.rs`).
            match self.word.compare_exchange(
                raw,
                WindowWord(raw).cleaned(generation).0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(seen) => raw = seen,
            }
        }
    }

    /// Records a success of closed `generation` that
    /// [`record_success_quickly`](Window::record_success_quickly) did not.
    ///
    /// `is_current` tells whether `generation` is still the breaker's closed generation; it is
    /// consulted only when the window belongs to another generation. The settings are loaded
    /// only where a judgement needs them.
    pub(crate) fn record_success_slow(
        &self,
        generation: u32,
        stripes: &Stripes,
        local: LocalStripe<'_>,
        settings: &Swappable<Settings>,
        is_current: impl Fn() -> bool,
    ) -> Judgement {
        // The settings are loaded only where they are needed: an aging success needs none.
        let empty_mode = || Self::empty_mode(&settings.load());
        loop {
            let Some(word) = self.word_for(generation, &empty_mode, &is_current) else {
                return Judgement::Stale;
            };
            match word.mode() {
                Mode::Clean => return Judgement::Keep,
                Mode::Dirty => {
                    self.count_aging_success(generation, stripes, local, &is_current);
                    return Judgement::Keep;
                }
                Mode::Filling => match settings.load().failure_rate {
                    Some(rate) => {
                        return self.record_filling_success(rate, generation, stripes, &is_current);
                    }
                    None => {
                        // The rate rule was removed by a reconfiguration while the window
                        // filled: nothing is filling any more. Move on, then count this success.
                        let next = self.filled(word, generation, stripes);
                        let _ = self.word.compare_exchange(
                            word.0,
                            next.0,
                            Ordering::AcqRel,
                            Ordering::Relaxed,
                        );
                    }
                },
            }
        }
    }

    /// The window word, cleared first if `generation` is current and the window still belongs
    /// to an earlier one; `None` if `generation` is not current.
    fn word_for(
        &self,
        generation: u32,
        empty_mode: &impl Fn() -> Mode,
        is_current: &impl Fn() -> bool,
    ) -> Option<WindowWord> {
        let tag = generation_tag(generation);
        loop {
            let word = WindowWord(self.word.load(Ordering::Acquire));
            if word.tag() == tag {
                // The tag is 13 bits: a permit issued 2^13 generations ago matches it too, and
                // its outcome must not count in this one.
                return is_current().then_some(word);
            }
            if !is_current() {
                return None;
            }
            self.clear_for(empty_mode(), generation, is_current);
        }
    }

    /// Successes counted in this generation, over all stripes (modulo 2^32).
    fn successes(&self, generation: u32, stripes: &Stripes) -> u32 {
        let count =
            |stripe: &Stripe| match stripe_count(stripe.window_successes.load(Ordering::Relaxed)) {
                (g, count) if g == generation => count,
                _ => 0,
            };
        if let Counts::OneStripe(index) = self.counts {
            return count(stripes.by_index(index));
        }
        // The shared stripe, then a loop over the owned ones: summed through `Stripes::all`'s
        // `chain` instead, this took 11-12 more instructions per failure under callgrind.
        let mut total = count(stripes.shared());
        for stripe in stripes.owned() {
            total = total.wrapping_add(count(stripe));
        }
        total
    }

    /// Counts a success of `generation`, found current (`word_for`), that ages the window's
    /// failures, and every so often checks whether they are all forgotten. `is_current`
    /// re-reads the state word.
    fn count_aging_success(
        &self,
        generation: u32,
        stripes: &Stripes,
        local: LocalStripe<'_>,
        is_current: &impl Fn() -> bool,
    ) {
        match local {
            LocalStripe::Owned(stripe) => {
                let (g, count) = stripe_count(stripe.window_successes.load(Ordering::Relaxed));
                let count = if g == generation {
                    count.wrapping_add(1)
                } else {
                    // Another generation here is an older one: only the owner writes this
                    // stripe (nothing resets it), each time with a generation it found current
                    // just before (`word_for`), and its state loads are ordered (program
                    // order; the slot registry between owners), so none found a generation
                    // later than `generation`, current now. Serial order cannot tell: a count
                    // 2^31 generations old reads as newer, and its successes were dropped.
                    stripe.quiet_below.store(0, Ordering::Relaxed);
                    1
                };
                self.store_aging_count(generation, stripes, stripe, count);
            }
            LocalStripe::Shared(stripe) => {
                if let Some(before) = Self::add_shared_success(stripe, generation, is_current) {
                    self.recheck_if_due(generation, stripes, stripe, before.wrapping_add(1));
                }
            }
        }
    }

    /// Stores `count` as this thread's own stripe's count of `generation`, then rechecks if
    /// it is due. Only the owner writes this stripe; relaxed is enough, see point 1 above.
    #[inline(always)]
    fn store_aging_count(&self, generation: u32, stripes: &Stripes, stripe: &Stripe, count: u32) {
        stripe
            .window_successes
            .store(pack_stripe_count(generation, count), Ordering::Relaxed);
        self.recheck_if_due(generation, stripes, stripe, count);
    }

    /// Asks whether the window can forget its failures once `stripe`'s count before this
    /// success, `count - 1`, reached the stripe's `quiet_below`. In serial-number arithmetic,
    /// unlike the quick path's unsigned comparison: a count that wrapped past 2^32 is still
    /// ordered right here (the quick path sends it here until its own comparison holds again).
    #[inline(always)]
    fn recheck_if_due(&self, generation: u32, stripes: &Stripes, stripe: &Stripe, count: u32) {
        let quiet_below = stripe.quiet_below.load(Ordering::Relaxed);
        if count.wrapping_sub(1).wrapping_sub(quiet_below) as i32 >= 0 {
            self.forget_if_aged(generation, stripes, stripe, count);
        }
    }

    /// Adds one success of `generation` to a stripe shared between threads; returns the count
    /// before it, or `None` if the stripe counts another generation and `generation` is over
    /// (`is_current` re-reads the state word).
    ///
    /// Which of two generations is newer is decided by the state word, not by serial order
    /// of the numbers: a count 2^31 or more generations old would read as newer, and every
    /// success would be dropped. Every count of another generation here was written by this
    /// function, with the CAS below, by a caller that found its generation current after
    /// loading the value it replaced (or it is the initial count, of generation 0, the
    /// first). Our load of it is `Acquire` (the load, and the failed CAS's reload), and every
    /// write here is a read-modify-write, so even through later counts of that generation it
    /// synchronizes with that writer's CAS (`AcqRel`): the writer's state load happens before
    /// ours, and by coherence ours reads the state word where it did or later. So if
    /// `generation` is current, the stripe's generation has ended, and its count is replaced.
    /// If it is not, the stripe may already count a later generation, which must keep it. A
    /// write between our state load and the CAS changes the word, and the CAS fails.
    fn add_shared_success(
        stripe: &Stripe,
        generation: u32,
        is_current: &impl Fn() -> bool,
    ) -> Option<u32> {
        let mut raw = stripe.window_successes.load(Ordering::Acquire);
        loop {
            let (g, count) = stripe_count(raw);
            let before = if g == generation {
                count
            } else if is_current() {
                0
            } else {
                return None;
            };
            // AcqRel: successes taking numbers here are ordered among themselves (point 2),
            // and a caller replacing this count learns of our state load (above).
            match stripe.window_successes.compare_exchange_weak(
                raw,
                pack_stripe_count(generation, before.wrapping_add(1)),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(before),
                Err(seen) => raw = seen,
            }
        }
    }

    /// Makes the window clean if enough successes followed its newest failure; otherwise
    /// tells the stripe when to look again.
    #[inline(never)]
    fn forget_if_aged(
        &self,
        generation: u32,
        stripes: &Stripes,
        stripe: &Stripe,
        stripe_count: u32,
    ) {
        let tag = generation_tag(generation);
        let forget_after = self.forget_after(self.rules());
        let (forget_at, next_at, failed_checks) = self.check_ages(stripe, forget_after);
        loop {
            // The word first, then the count: point 3 above.
            let raw = self.word.load(Ordering::Acquire);
            let word = WindowWord(raw);
            if word.tag() != tag || word.mode() != Mode::Dirty {
                // Forgotten already, or over: the next failure starts afresh.
                stripe.failed_checks.store(0, Ordering::Relaxed);
                return;
            }
            let since = self
                .successes(generation, stripes)
                .wrapping_sub(word.successes_before_newest());
            if since < forget_at {
                if let Some(failed) = failed_checks {
                    // Relaxed: a hint, written by the stripe's threads alone.
                    stripe
                        .failed_checks
                        .store((failed + 1).min(MAX_FAILED_CHECKS), Ordering::Relaxed);
                }
                // Even if every coming success were this stripe's, the newest failure is
                // `next_at` old no sooner than that many more of them: the success that makes
                // the count `stripe_count + wait` is the next to check, and the ones before
                // it stay quiet.
                let wait = next_at - since;
                stripe
                    .quiet_below
                    .store(stripe_count.wrapping_add(wait - 1), Ordering::Relaxed);
                return;
            }
            if !self.publish_before_forgetting(tag, word) {
                continue;
            }
            let clean = word.cleaned(generation).0;
            if self
                .word
                .compare_exchange(raw, clean, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                stripe.failed_checks.store(0, Ordering::Relaxed);
                return;
            }
        }
    }

    /// How old, in successes, the newest failure must be for a check of `stripe` to forget it
    /// now, and how old it must be at the stripe's next check if this one does not: both
    /// `forget_after`, unless the stripe's checks have found the window dirty again and again.
    /// The third value is how many such checks in a row the stripe has made, for the caller to
    /// count one more if this one finds the window dirty too; `None` for a window per thread,
    /// which does not count them.
    ///
    /// In the window of the whole breaker, a check that keeps finding the window dirty means
    /// that other threads keep failing: each such check reads every stripe and the window
    /// word, which those threads' failures write, so each takes cache lines from their caches
    /// that they then take back (a thread that never failed paid 6-8 ns a call for it,
    /// `benches/PERFORMANCE.md`, "Checks that back off"); and forgetting a failure that
    /// another follows soon makes the whole breaker pay a round of compare-and-swaps for
    /// nothing ([`FORGET_NO_SOONER_THAN`]). So after `k` such checks in a row (`failed_checks`)
    /// a stripe asks the failure to be `2^(k - 1)` times `forget_after` old before it forgets
    /// it, up to 8 times, and checks again when it could be twice that; a forgetting, or a
    /// window found clean or over, starts the row again. A late check or forgetting costs
    /// time, never a judgement (the hint, point 9 above): a dirty window counts every success.
    ///
    /// A window per thread keeps `forget_after`: it is checked by its own thread, which knows
    /// of its own failures (`quiet_until_aged`), and when it turns clean decides when the
    /// breaker turns quiet, which for windows per thread changes how one still filling is
    /// judged (`quiet.rs`).
    fn check_ages(&self, stripe: &Stripe, forget_after: u32) -> (u32, u32, Option<u32>) {
        if let Counts::OneStripe(_) = self.counts {
            return (forget_after, forget_after, None);
        }
        let failed = stripe
            .failed_checks
            .load(Ordering::Relaxed)
            .min(MAX_FAILED_CHECKS);
        // At most 2^30: a hint more than 2^31 ahead would read as behind (`recheck_if_due`).
        let times = |doublings: u32| forget_after.saturating_mul(1 << doublings).min(1 << 30);
        (
            times(failed.saturating_sub(1)),
            times(failed.min(MAX_FAILED_CHECKS - 1)),
            Some(failed),
        )
    }

    /// A success while the window fills: its position is exact, and if it completes the
    /// minimum number of calls it may trip the breaker.
    fn record_filling_success(
        &self,
        rate: FailureRate,
        generation: u32,
        stripes: &Stripes,
        is_current: &impl Fn() -> bool,
    ) -> Judgement {
        let tag = generation_tag(generation);
        let numbering = self.numbering_stripe(stripes);
        let Some(number) = Self::add_shared_success(numbering, generation, is_current) else {
            return Judgement::Stale;
        };
        Self::no_quiet_successes_while_filling(numbering, stripes);
        let backoff = Backoff::new();
        loop {
            let raw = self.word.load(Ordering::Acquire);
            let word = WindowWord(raw);
            if word.tag() != tag {
                return Judgement::Stale;
            }
            if word.mode() != Mode::Filling {
                // The window filled meanwhile; whoever filled it judged the minimum.
                return Judgement::Keep;
            }
            let position = number + self.failures_before(tag, word, number);
            let outcomes = self
                .successes(generation, stripes)
                .wrapping_add(u32::from(word.failures()));
            let fills = outcomes >= rate.window;
            let next = if fills {
                self.filled(word, generation, stripes)
            } else {
                word.with_tick()
            };
            if self
                .word
                .compare_exchange(raw, next.0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return if fills || position + 1 == rate.minimum_calls {
                    self.judge_minimum_calls(tag, word, rate)
                } else {
                    Judgement::Keep
                };
            }
            backoff.spin();
        }
    }

    /// Zeroes the hint of `numbering`, the stripe that numbers this window's filling
    /// successes, if it is this thread's own: a window per thread's stripe, whose count now
    /// holds this generation while its window fills. Left as an earlier generation's failure
    /// set it, the hint would let the owner's next successes age the count on the quick path
    /// ([`ages_in_own_stripe`](Window::ages_in_own_stripe)) without ticking the window word
    /// (point 2) or judging the minimum: point 9. Only the owner writes its stripe, and reads
    /// its own store back: relaxed. With one window the numbering stripe is the shared one,
    /// which no thread owns.
    #[inline(always)]
    fn no_quiet_successes_while_filling(numbering: &Stripe, stripes: &Stripes) {
        if let Some(own) = stripes.thread_stripe() {
            if std::ptr::eq(own, numbering) {
                own.quiet_below.store(0, Ordering::Relaxed);
            }
        }
    }

    /// The word for a window that has just filled: clean if it holds no failure a rule can
    /// see, dirty otherwise.
    fn filled(&self, word: WindowWord, generation: u32, stripes: &Stripes) -> WindowWord {
        let aged = !word.remembers_newest_failure()
            || self
                .successes(generation, stripes)
                .wrapping_sub(word.successes_before_newest())
                >= self.forget_after(self.rules());
        if aged {
            // Only under loom, whose windows forget after one success: elsewhere a window
            // forgets no sooner than its failure records, at least its length, so none fills
            // with a failure old enough. Ignored if it fails: the word moved, and the
            // caller's CAS from it fails too.
            let _ = self.publish_before_forgetting(generation_tag(generation), word);
            word.cleaned(generation)
        } else {
            word.with_mode(Mode::Dirty)
        }
    }

    /// How many of the failures in `word` came before success number `number`: those whose
    /// record counts at most `number` successes.
    fn failures_before(&self, tag: u32, word: WindowWord, number: u32) -> u32 {
        let failures = word.failures();
        if failures == 0 || word.successes_before_newest() <= number {
            return u32::from(failures);
        }
        // Records count successes in non-decreasing order; find the last one at or below.
        for n in (0..failures - 1).rev() {
            match self.ring.successes_before(tag, n) {
                Some(successes) if successes <= number => return u32::from(n) + 1,
                Some(_) => {}
                // Gone from the ring: a ring's length of failures came after it, and so after
                // this success's number was taken; count it as before.
                None => return u32::from(n) + 1,
            }
        }
        0
    }

    /// The judgement due when the window first holds `minimum_calls` calls: whether enough of
    /// the first `minimum_calls` outcomes were failures. It depends only on the records of
    /// failures positioned before that point, which can no longer change, so every thread
    /// that makes it reaches the same answer.
    fn judge_minimum_calls(&self, tag: u32, word: WindowWord, rate: FailureRate) -> Judgement {
        let minimum = rate.minimum_calls;
        let needed = rate.failures_needed(minimum);
        let recorded = u32::from(word.failures());
        let mut failures = 0;
        for number in 0..recorded.min(minimum) {
            let successes = if number + 1 == recorded {
                word.successes_before_newest()
            } else {
                match self.ring.successes_before(tag, number as u16) {
                    Some(successes) => successes,
                    None => break,
                }
            };
            if successes + number >= minimum {
                break;
            }
            failures = number + 1;
        }
        if failures >= needed {
            Judgement::Trip(TripCause {
                rule: TripRule::FailureRate,
                failures,
                calls: minimum,
            })
        } else {
            Judgement::Keep
        }
    }

    /// Records a failure of closed `generation` and judges it.
    ///
    /// A full window judges by its own copy of the rules, one load; only a filling window,
    /// whose judgement needs the rate's threshold, loads the settings.
    ///
    /// A failure into a full window (clean or dirty) of a current generation, the one that
    /// comes all day, is recorded here, inlined into the breaker's out-of-line failure path;
    /// every other one, and one that loses a race, goes to [`record_failure_in_any_mode`].
    ///
    /// A failure that finds the window clean goes there too: it commits between `quiet`'s
    /// [`begin`](QuietLoss::begin) and [`end`](QuietLoss::end), so that the breaker's state
    /// word does not say the window is quiet while it holds the failure (`quiet.rs`).
    ///
    /// [`record_failure_in_any_mode`]: Window::record_failure_in_any_mode
    #[inline(always)]
    pub(crate) fn record_failure(
        &self,
        settings: &Swappable<Settings>,
        generation: u32,
        stripes: &Stripes,
        is_current: impl Fn() -> bool,
        quiet: &impl QuietLoss,
    ) -> Judgement {
        match self.record_failure_in_full(generation, stripes, &is_current, false) {
            Some(judged) => judged,
            None => {
                self.record_failure_in_any_mode(settings, generation, stripes, is_current, quiet)
            }
        }
    }

    /// [`record_failure_in_any_mode`](Window::record_failure_in_any_mode) for a window that is
    /// full in `generation`, which is current: dirty, or clean too if `quiet_loss_begun` (the
    /// caller has begun the loss of the quiet bit). The same loads, writes and judgement in
    /// the same order, without what only a filling window needs (its settings, its judgement
    /// at the minimum) and without the retry loop. `None` if the window is not so,
    /// `generation` is not current, or a race is lost (the ring's slot or the window word
    /// moved); then the window word is unchanged, and a record this call wrote to the ring is
    /// the one the slower path finds there and keeps (`ring.rs`, `publish`).
    ///
    /// The slower path took about 90 instructions more for such a failure
    /// (`.ci/instructions`: `lesson20`, one failure in 40, 51.10 -> 48.75 per call;
    /// `failure_rate20`, nine in ten, 370.40 -> 293.00; `failure_run` 403.82 -> 317.90).
    #[inline(always)]
    fn record_failure_in_full(
        &self,
        generation: u32,
        stripes: &Stripes,
        is_current: &impl Fn() -> bool,
        quiet_loss_begun: bool,
    ) -> Option<Judgement> {
        let rules = self.rules();
        // Acquire, then the state word, as in `word_for` (points 1 and 5).
        let raw = self.word.load(Ordering::Acquire);
        let full = WindowWord::is_dirty_for(raw, generation)
            || quiet_loss_begun && WindowWord::is_clean_for(raw, generation);
        if !full || !is_current() {
            return None;
        }
        let word = WindowWord(raw);
        let tag = generation_tag(generation);
        let successes = self.position_failure(tag, word, generation, stripes)?;
        let number = word.failures();
        let next = word.with_failure(successes, Mode::Dirty);
        // AcqRel, as in `record_failure_in_any_mode` (point 1).
        self.word
            .compare_exchange(raw, next.0, Ordering::AcqRel, Ordering::Relaxed)
            .ok()?;
        self.quiet_until_aged(generation, stripes, self.forget_after(rules));
        Some(self.judge_failure(rules, tag, word, number, successes, None))
    }

    /// [`record_failure`](Window::record_failure) in any mode of the window: clears a window
    /// left by another generation (`word_for`), hands a full window to
    /// [`record_failure_in_full`](Window::record_failure_in_full), records into a filling one
    /// here, and retries after a lost race. A failure that finds the window clean begins the
    /// quiet bit's loss before it tries to commit, and ends it on its way out, whether or not
    /// its commit was the one that landed (`quiet.rs`): by a guard, so that not even a panic
    /// leaves the loss under way, which would keep the bit off for good.
    #[inline(never)]
    fn record_failure_in_any_mode<Q: QuietLoss>(
        &self,
        settings: &Swappable<Settings>,
        generation: u32,
        stripes: &Stripes,
        is_current: impl Fn() -> bool,
        quiet: &Q,
    ) -> Judgement {
        let mut loss: Option<LossUnderWay<'_, Q>> = None;
        let tag = generation_tag(generation);
        let backoff = Backoff::new();
        loop {
            let empty_mode = || Self::empty_mode_for(self.rules());
            let Some(word) = self.word_for(generation, &empty_mode, &is_current) else {
                return Judgement::Stale;
            };
            if word.mode() != Mode::Filling {
                if word.mode() == Mode::Clean && loss.is_none() {
                    loss = Some(LossUnderWay::begin(quiet));
                }
                // Full: the inline path's work, from its own loads of the words.
                if let Some(judged) =
                    self.record_failure_in_full(generation, stripes, &is_current, loss.is_some())
                {
                    return judged;
                }
                backoff.spin();
                continue;
            }
            let raw = word.0;
            let Some(successes) = self.position_failure(tag, word, generation, stripes) else {
                backoff.spin();
                continue;
            };
            let number = word.failures();
            // While the window fills, every rule comes from the settings, the threshold with
            // the rest: one version of the settings judges.
            let loaded = settings.load();
            let (rules, filling_rate) = (Rules::of(&loaded), loaded.failure_rate);
            let outcomes = successes.wrapping_add(u32::from(number)).wrapping_add(1);
            let mode = match filling_rate {
                Some(rate) if outcomes < rate.window => Mode::Filling,
                // The window fills with this failure, or the rate rule was removed by a
                // reconfiguration while it filled.
                _ => Mode::Dirty,
            };
            let next = word.with_failure(successes, mode);
            if self
                .word
                .compare_exchange(raw, next.0, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                backoff.spin();
                continue;
            }
            if mode == Mode::Dirty {
                self.quiet_until_aged(generation, stripes, self.forget_after(rules));
            }
            let judged = self.judge_failure(
                rules,
                tag,
                word,
                number,
                successes,
                filling_rate.map(|rate| (rate, outcomes)),
            );
            if judged == Judgement::Keep && mode == Mode::Dirty {
                if let Some(rate) = filling_rate {
                    // This failure filled the window; the judgement at the minimum is ours to
                    // make.
                    return self.judge_minimum_calls(tag, next, rate);
                }
            }
            return judged;
        }
    }

    /// What a failure does before its commit on `word`, a word of the current generation
    /// whose tag is `tag`: the successes are counted (point 1: after the word's load, before
    /// the commit); then, if the word remembers its newest failure, that failure becomes the
    /// second newest, and its record goes to the ring (point 4). Returns the count, the
    /// failure's place, or `None` if the window word moved on before the record could be
    /// written.
    ///
    /// The count comes first because its loads do not wait for the word's value, while the
    /// ring's slot does, and the record's compare-and-swap lets no later load start before it
    /// ends. With two threads failing on one window, the other thread's stripe is a cache miss
    /// at nearly every failure; counted first, that miss overlaps the word's, instead of
    /// following the ring's. Two threads on the lesson's day: 0.0-1.1 ns per call less, of
    /// 10.5-13 (`benches/PERFORMANCE.md`, "Counting before the ring's record"); one thread:
    /// unchanged.
    #[inline(always)]
    fn position_failure(
        &self,
        tag: u32,
        word: WindowWord,
        generation: u32,
        stripes: &Stripes,
    ) -> Option<u32> {
        let successes = self.successes(generation, stripes);
        if !word.remembers_newest_failure() {
            return Some(successes);
        }
        let newest = word.failures().wrapping_sub(1);
        let before_newest = word.successes_before_newest();
        let published = self.ring.publish(tag, newest, before_newest, || {
            self.word.load(Ordering::Acquire) == word.0
        });
        if !published {
            return None;
        }
        if (successes.wrapping_sub(before_newest) as i32) < 0 {
            // Only possible when a stripe moved on to a later generation between the two
            // reads; this generation is over then, and the record just keeps order.
            return Some(before_newest);
        }
        Some(successes)
    }

    /// Tells the failing thread's own stripe that its next `forget_after - 1` successes need
    /// not check whether the window can forget: the failure just committed stays in view
    /// until that many successes follow it, even if all of them are this thread's. Without
    /// this, the stripe's first success after the failure would find its old hint passed and
    /// make that check (out of line, summing every stripe) only to learn the same.
    ///
    /// A hint only ever delays a check that would fail; a check that is late leaves the
    /// window dirty for longer, which costs time but changes no judgement, as a dirty window
    /// still counts every success. A stripe that still counts an earlier generation, or one
    /// shared between threads, is left alone: its next success goes out of line anyway; and
    /// so is one this window does not count (a window per thread that a sweep records another
    /// thread's hung call into, `per_thread.rs`), whose own window's failures may be nearer
    /// their end.
    #[inline(always)]
    fn quiet_until_aged(&self, generation: u32, stripes: &Stripes, forget_after: u32) {
        let Some(stripe) = stripes.thread_stripe() else {
            return;
        };
        if matches!(self.counts, Counts::OneStripe(index) if index as usize != stripes.thread_slot())
        {
            return;
        }
        // Only the owner writes its stripe: relaxed, as in `store_aging_count`.
        let (counted_generation, count) =
            stripe_count(stripe.window_successes.load(Ordering::Relaxed));
        if counted_generation == generation {
            // The success that brings the count to `count + forget_after` is the first that
            // can find the failure forgotten; the ones before it stay quiet.
            let quiet_below = count.wrapping_add(forget_after - 1);
            stripe.quiet_below.store(quiet_below, Ordering::Relaxed);
        }
    }

    /// Whether failure `number`, recorded after `successes` successes, meets a rule. `before`
    /// is the window word it replaced; `filling` the rate rule and the calls recorded so far in
    /// this generation if the window was still filling (once full, at least the window's size).
    ///
    /// Inlined into its two callers: as a call of its own it cost every failure some 30
    /// instructions of register saves and argument moves (`.ci/instructions`: `failure_rate20`
    /// 299.00 -> 267.50, `failure_run` 325.71 -> 292.75, the lesson day 42.43 -> 41.55 per
    /// call), and the lesson day 0.07 ns per call (`benches/PERFORMANCE.md`, "A failure's
    /// judgement inlined").
    #[inline(always)]
    fn judge_failure(
        &self,
        rules: Rules,
        tag: u32,
        before: WindowWord,
        number: u16,
        successes: u32,
        filling: Option<(FailureRate, u32)>,
    ) -> Judgement {
        if let Some(run) = rules.run {
            if self.run_reaches(tag, before, number, successes, run) {
                return Judgement::Trip(TripCause {
                    rule: TripRule::ConsecutiveFailures,
                    failures: run,
                    calls: run,
                });
            }
        }
        let Some(window) = rules.window else {
            return Judgement::Keep;
        };
        match filling {
            Some((rate, outcomes)) if outcomes <= rate.window => {
                // Every failure of the generation is still in the window.
                let failures = u32::from(number) + 1;
                if outcomes >= rate.minimum_calls && failures >= rate.failures_needed(outcomes) {
                    return Judgement::Trip(TripCause {
                        rule: TripRule::FailureRate,
                        failures,
                        calls: outcomes,
                    });
                }
                Judgement::Keep
            }
            _ => {
                // Positions grow with the failure number, so at least `needed` failures are in
                // view exactly when the one `needed - 1` back is: one record to read, however
                // many failures the window holds. The count is taken only for the event.
                let needed = rules.failures_to_trip_full;
                let back = (needed - 1) as u16;
                let earliest_in_view = back == 0
                    || self
                        .successes_before_earlier(tag, before, number, back)
                        .is_some_and(|earlier| {
                            successes
                                .wrapping_sub(earlier)
                                .wrapping_add(u32::from(back))
                                < window
                        });
                if earliest_in_view {
                    let failures =
                        self.failures_in_view(tag, before, number, successes, window, u32::MAX);
                    return Judgement::Trip(TripCause {
                        rule: TripRule::FailureRate,
                        failures,
                        calls: window,
                    });
                }
                Judgement::Keep
            }
        }
    }

    /// Successes counted before failure `number - back`, from the word it replaced or the ring.
    fn successes_before_earlier(
        &self,
        tag: u32,
        before: WindowWord,
        number: u16,
        back: u16,
    ) -> Option<u32> {
        if !before.remembers_newest_failure() {
            return None; // a clean window forgot every earlier failure
        }
        // `number` is `before`'s count of failures: one compare, and rarely the bit.
        if back > number && !before.has_wrapped() {
            // Failure `number - back` would come before this generation's first. Only the
            // wrapped bit tells this apart from a count that wrapped, and the ring may still
            // hold a record with that number and this tag from a generation 2^13 earlier.
            return None;
        }
        if back == 1 {
            return Some(before.successes_before_newest());
        }
        self.ring.successes_before(tag, number.wrapping_sub(back))
    }

    /// Whether failures `number - run + 1 ..= number` had no success between them.
    fn run_reaches(
        &self,
        tag: u32,
        before: WindowWord,
        number: u16,
        successes: u32,
        run: u32,
    ) -> bool {
        if run == 1 {
            return true;
        }
        // The run's first failure exists in this generation only if `number` is far enough
        // along (or the 16-bit count wrapped; the record's tag decides then).
        let back = (run - 1) as u16;
        self.successes_before_earlier(tag, before, number, back) == Some(successes)
    }

    /// Failures among the `window` outcomes ending at failure `number`, counting back until
    /// one is out of view or `enough` are found.
    fn failures_in_view(
        &self,
        tag: u32,
        before: WindowWord,
        number: u16,
        successes: u32,
        window: u32,
        enough: u32,
    ) -> u32 {
        let mut failures = 1;
        let mut back: u16 = 1;
        while failures < enough && u32::from(back) < window {
            let Some(earlier) = self.successes_before_earlier(tag, before, number, back) else {
                break;
            };
            let distance = successes
                .wrapping_sub(earlier)
                .wrapping_add(u32::from(back));
            if distance >= window {
                break;
            }
            failures += 1;
            back += 1;
        }
        failures
    }

    /// The calls the window holds, for the metrics: while it fills, the calls it recorded;
    /// once full, its length. A window per thread holds the calls it recorded up to its
    /// length in every mode, so that one taken as full for the quiet bit before it filled
    /// (`per_thread.rs`, `are_clean_in`) counts its own calls, not the successes it was taken
    /// to hold. (Every failure of a generation is within that many calls of the newest, so the
    /// failures in view come out the same.)
    fn calls_held(&self, word: WindowWord, successes: u32, full: u32) -> u32 {
        let recorded = successes.saturating_add(u32::from(word.failures()));
        // A wrapped failure count no longer says how many calls were recorded.
        let counts_recorded = matches!(self.counts, Counts::OneStripe(_)) && !word.has_wrapped();
        if word.mode() == Mode::Filling || counts_recorded {
            recorded.min(full)
        } else {
            full
        }
    }

    /// What the window holds now.
    pub(crate) fn snapshot(
        &self,
        settings: &Settings,
        generation: u32,
        stripes: &Stripes,
    ) -> WindowSnapshot {
        let word = WindowWord(self.word.load(Ordering::Acquire));
        let tag = generation_tag(generation);
        let full = settings.failure_rate.map_or(0, |rate| rate.window);
        if word.tag() != tag {
            return WindowSnapshot::default();
        }
        let successes = self.successes(generation, stripes);
        let calls = self.calls_held(word, successes, full);
        if !word.remembers_newest_failure() {
            return WindowSnapshot {
                failures: 0,
                calls,
                consecutive_failures: 0,
            };
        }
        let recorded = u32::from(word.failures());
        // Walk back from the newest failure. For the failure `back` places before it, the
        // outcomes recorded since (itself included) are its distance from the next position.
        let distance =
            |earlier: u32, back: u32| successes.wrapping_sub(earlier).wrapping_add(back + 1);
        let newest = recorded.wrapping_sub(1) as u16;
        // Never past this generation's failure 0: a record further back, with this tag, would
        // be a generation 2^13 older's (see `successes_before_earlier`).
        let in_generation = if word.has_wrapped() {
            u32::from(u16::MAX)
        } else {
            recorded
        };
        let (mut failures, mut consecutive, mut in_run) = (0, 0, true);
        for back in 0..in_generation {
            let earlier = if back == 0 {
                Some(word.successes_before_newest())
            } else {
                self.ring
                    .successes_before(tag, newest.wrapping_sub(back as u16))
            };
            let Some(earlier) = earlier else { break };
            let in_view = distance(earlier, back) <= calls;
            in_run &= earlier == successes;
            failures += u32::from(in_view);
            consecutive += u32::from(in_run);
            if !in_view && !in_run {
                break;
            }
        }
        WindowSnapshot {
            failures,
            calls,
            consecutive_failures: consecutive,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::{Config, FailureRateConfig};

    /// A window of four calls that trips at `threshold`, one stripe, and its settings.
    fn window_of_four_at(threshold: f64) -> (Window, Stripes, Settings) {
        let config = Config {
            failure_rate: Some(FailureRateConfig {
                threshold,
                window: 4,
                minimum_calls: None,
            }),
            stripes: Some(1),
            ..Config::default()
        };
        let settings = Settings::validate(&config).unwrap();
        (Window::new(&settings, 0), Stripes::new(1), settings)
    }

    fn window_of_four() -> (Window, Stripes, Settings) {
        window_of_four_at(0.5)
    }

    fn tag_now(window: &Window) -> u32 {
        WindowWord(window.word.load(Ordering::Relaxed)).tag()
    }

    /// This thread's own stripe of `stripes`, claimed now.
    fn own_stripe(stripes: &Stripes) -> &Stripe {
        match stripes.local() {
            LocalStripe::Owned(stripe) => stripe,
            LocalStripe::Shared(_) => panic!("the test thread has no stripe of its own"),
        }
    }

    /// A dirty window of generation 7, with stripes enough for every test thread to own one.
    fn dirty_window_of_7() -> (Window, Stripes) {
        let (window, _, _) = window_of_four();
        window
            .word
            .store(WindowWord::empty(7, Mode::Dirty).0, Ordering::Relaxed);
        (window, Stripes::new(64))
    }

    #[test]
    fn an_aging_count_at_the_top_of_32_bits_wraps_within_its_generation() {
        let (window, stripes) = dirty_window_of_7();
        let (_, _, settings) = window_of_four();
        let settings = Swappable::new(settings);
        let stripe = own_stripe(&stripes);
        // The highest count, with a hint as high as it goes: the quick path must not add one
        // into the generation's half of the word.
        let top = pack_stripe_count(7, u32::MAX);
        stripe.window_successes.store(top, Ordering::Relaxed);
        stripe.quiet_below.store(u32::MAX, Ordering::Relaxed);
        // The stripe's turn to check: the quick path declines, the slow path wraps.
        assert!(!window.record_success_quickly(7, &stripes));
        assert_eq!(
            stripe_count(stripe.window_successes.load(Ordering::Relaxed)),
            (7, u32::MAX)
        );
        let judged = window.record_success_slow(7, &stripes, stripes.local(), &settings, || true);
        assert_eq!(judged, Judgement::Keep);
        let counted = stripe_count(stripe.window_successes.load(Ordering::Relaxed));
        assert_eq!(counted, (7, 0));
        assert!(window.record_success_quickly(7, &stripes));
        let counted = stripe_count(stripe.window_successes.load(Ordering::Relaxed));
        assert_eq!(counted, (7, 1));
    }

    #[test]
    fn a_stripe_of_an_older_generation_is_not_aged_on_the_quick_path() {
        let (window, stripes) = dirty_window_of_7();
        let stripe = own_stripe(&stripes);
        // Generation 6 left a count and a hint far ahead of it.
        stripe
            .window_successes
            .store(pack_stripe_count(6, 10), Ordering::Relaxed);
        stripe.quiet_below.store(1_000, Ordering::Relaxed);
        assert!(!window.record_success_quickly(7, &stripes));
        assert_eq!(
            stripe_count(stripe.window_successes.load(Ordering::Relaxed)),
            (6, 10),
            "the quick path declines and leaves the count to the slow path"
        );
    }

    #[test]
    fn a_shared_stripe_of_another_generation_is_replaced_only_while_ours_is_current() {
        let stripes = Stripes::new(1);
        let stripe = stripes.shared();
        let counted = || stripe_count(stripe.window_successes.load(Ordering::Relaxed));
        stripe
            .window_successes
            .store(pack_stripe_count(5, 3), Ordering::Relaxed);
        // 2^31 generations on, and current: 5 has ended, though serial order reads it newer.
        let later = 5 + (1 << 31);
        assert_eq!(Window::add_shared_success(stripe, later, &|| true), Some(0));
        assert_eq!(counted(), (later, 1));
        assert_eq!(Window::add_shared_success(stripe, later, &|| true), Some(1));
        // A success of a generation that is over leaves the later count alone.
        assert_eq!(Window::add_shared_success(stripe, 6, &|| false), None);
        assert_eq!(counted(), (later, 2));
    }

    #[test]
    fn an_owned_stripe_of_another_generation_counts_afresh() {
        let (window, stripes) = dirty_window_of_7();
        let stripe = own_stripe(&stripes);
        // Last written 2^31 generations before 7: serial order reads it as newer.
        let old = 7u32.wrapping_sub(1 << 31);
        stripe
            .window_successes
            .store(pack_stripe_count(old, 10), Ordering::Relaxed);
        window.count_aging_success(7, &stripes, stripes.local(), &|| true);
        assert_eq!(
            stripe_count(stripe.window_successes.load(Ordering::Relaxed)),
            (7, 1)
        );
    }

    #[test]
    fn a_failure_is_forgotten_at_the_success_that_ages_it_out() {
        let (window, _, settings) = window_of_four();
        // Stripes enough for every test thread to own one: the hint is for owned stripes.
        let stripes = Stripes::new(64);
        own_stripe(&stripes);
        let settings = Swappable::new(settings);
        let mode = |window: &Window| WindowWord(window.word.load(Ordering::Relaxed)).mode();
        let success = |window: &Window| {
            if !window.record_success_quickly(0, &stripes) {
                let judged =
                    window.record_success_slow(0, &stripes, stripes.local(), &settings, || true);
                assert_eq!(judged, Judgement::Keep);
            }
        };
        let failure = |window: &Window| {
            let judged = window.record_failure(&settings, 0, &stripes, || true, &());
            assert_eq!(judged, Judgement::Keep);
        };
        for _ in 0..4 {
            success(&window);
        }
        assert_eq!(mode(&window), Mode::Clean, "four successes fill the window");
        // The rate rule sees a failure for 4 successes; the window forgets it no sooner than
        // `FORGET_NO_SOONER_THAN`.
        let forget_at = 4.max(FORGET_NO_SOONER_THAN);
        // Twice: the second failure finds the stripe's hint from the first one's aging.
        for round in 0..2 {
            failure(&window);
            for aged in 1..forget_at {
                success(&window);
                assert_eq!(
                    mode(&window),
                    Mode::Dirty,
                    "round {round}: the failure is still remembered after {aged} successes"
                );
            }
            success(&window);
            assert_eq!(
                mode(&window),
                Mode::Clean,
                "round {round}: success {forget_at} forgets the failure"
            );
        }
    }

    #[test]
    fn checks_that_keep_finding_a_newer_failure_ask_it_to_be_older_each_time() {
        let (window, _, settings) = window_of_four();
        let stripes = Stripes::new(64);
        let stripe = own_stripe(&stripes);
        let settings = Swappable::new(settings);
        let mode = || WindowWord(window.word.load(Ordering::Relaxed)).mode();
        let count = || stripe_count(stripe.window_successes.load(Ordering::Relaxed)).1;
        let hint = || stripe.quiet_below.load(Ordering::Relaxed);
        // Another thread's failure: it hints its own stripe, not this one, so this thread
        // learns of it only by checking.
        let fail_elsewhere = || {
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    let judged = window.record_failure(&settings, 0, &stripes, || true, &());
                    assert_eq!(judged, Judgement::Keep);
                });
            });
        };
        // This thread's successes up to its next check, which is the success that finds its
        // count at its hint; with `fail_before: Some(k)`, the other thread fails again `k`
        // successes before it, so that the check finds the newest failure `k + 1` old. Returns
        // the wait the check set, in successes, or 0 if it forgot the failure.
        let until_check = |fail_before: Option<u32>| {
            let before = hint();
            // No wait is longer than 8 times `forget_after`: a check that never comes fails
            // the test instead of hanging it.
            for _ in 0..=16 * 4.max(FORGET_NO_SOONER_THAN) {
                if fail_before.is_some_and(|k| count() + k == hint()) {
                    fail_elsewhere();
                }
                success(&window, &stripes, &settings, 0);
                if mode() == Mode::Clean {
                    return 0;
                }
                if hint() != before {
                    return hint() + 1 - count();
                }
            }
            panic!("no check within 16 times forget_after successes");
        };
        for _ in 0..4 {
            success(&window, &stripes, &settings, 0);
        }
        let forget_after = 4.max(FORGET_NO_SOONER_THAN);
        fail_elsewhere();
        // The first check comes at this thread's first success, the failure one success old:
        // it checks again as soon as the failure could be `forget_after` old.
        assert_eq!(
            until_check(None),
            forget_after - 1,
            "the first wait is the shortfall"
        );
        // Each further check in a row finds a failure 3 successes old and asks for twice the
        // age at the next one, up to 8 times `forget_after`.
        let waits: Vec<u32> = (0..4).map(|_| until_check(Some(2))).collect();
        assert_eq!(
            waits,
            [2, 4, 8, 8].map(|times| forget_after * times - 3),
            "each check that finds a newer failure waits for it to be twice as old"
        );
        // Now a failure older than `forget_after` is not forgotten: this stripe asks 8 times
        // that age.
        let wait = until_check(Some(100));
        assert_eq!(mode(), Mode::Dirty, "a failure 101 successes old is kept");
        assert_eq!(wait, 8 * forget_after - 101);
        // The other thread stops failing: the next check finds the failure old enough.
        assert_eq!(until_check(None), 0, "the next check forgets the failure");
        // And the row starts again.
        fail_elsewhere();
        assert_eq!(
            until_check(None),
            forget_after - 1,
            "a forgetting starts afresh"
        );
    }

    #[test]
    fn a_caller_stalled_for_many_generations_does_not_clear_a_newer_window() {
        let (window, _, settings) = window_of_four();
        // 13-bit tags of 5_100 and 100 are more than 2^12 apart: by tag order alone, 100 would
        // look newer.
        window.begin(&settings, 5_100, || true);
        window.begin(&settings, 100, || false); // generation 100 ended long ago
        assert_eq!(tag_now(&window), generation_tag(5_100));
    }

    #[test]
    fn a_window_left_far_behind_is_still_cleared_for_the_current_generation() {
        let (window, stripes, settings) = window_of_four();
        window.begin(&settings, 100, || true); // the window of a generation long gone
        // Generation 10_000 is current: recording in it clears the window rather than spin.
        let judged =
            window.record_failure(&Swappable::new(settings), 10_000, &stripes, || true, &());
        assert_eq!(judged, Judgement::Keep);
        assert_eq!(tag_now(&window), generation_tag(10_000));
        assert_eq!(window.snapshot(&settings, 10_000, &stripes).failures, 1);
    }

    /// A window of four calls that trips at 100 %, for the stalled callers below.
    fn rate_of_four() -> (Window, Stripes, Settings) {
        window_of_four_at(1.0)
    }

    /// Records a failure of generation 0 that checks it is current, then stalls while
    /// `meanwhile` runs (the breaker making `2^13` transitions or more) and then commits.
    /// Returns its judgement.
    fn stalled_failure_of_0(
        window: &Window,
        stripes: &Stripes,
        settings: &Swappable<Settings>,
        meanwhile: impl FnOnce() -> u32,
    ) -> Judgement {
        let current = std::cell::Cell::new(0u32);
        let meanwhile = std::cell::Cell::new(Some(meanwhile));
        window.record_failure(
            settings,
            0,
            stripes,
            || {
                let is_current = current.get() == 0;
                if let Some(meanwhile) = meanwhile.take() {
                    current.set(meanwhile()); // right after the check
                }
                is_current
            },
            &(),
        )
    }

    /// Generation 0 goes through `history`; then a failure of 0 stalls after its generation
    /// check while the window is emptied for generation `later` (the same tag) and `later`
    /// goes through the same `history`. How the stalled failure is judged.
    fn stalled_failure_after_a_like_history(
        window: &Window,
        stripes: &Stripes,
        settings: &Swappable<Settings>,
        later: u32,
        history: impl Fn(u32),
    ) -> Judgement {
        history(0);
        stalled_failure_of_0(window, stripes, settings, || {
            let emptied = window.clear_before_closing(&settings.load(), later, false, || true);
            assert!(emptied);
            history(later);
            later
        })
    }

    fn success(window: &Window, stripes: &Stripes, settings: &Swappable<Settings>, g: u32) {
        if !window.record_success_quickly(g, stripes) {
            let judged = window.record_success_slow(g, stripes, stripes.local(), settings, || true);
            assert_eq!(judged, Judgement::Keep);
        }
    }

    /// A stalled failure of a generation whose filling window ticked once, against the empty
    /// window of the generation `2^13` later (the same tag): its CAS must fail.
    #[test]
    fn a_stalled_failure_of_a_ticked_generation_misses_a_later_empty_window() {
        let (window, stripes, settings) = rate_of_four();
        let shared = Swappable::new(settings);
        success(&window, &stripes, &shared, 0); // the tick moves
        let later = 1 << 13;
        let judged = stalled_failure_of_0(&window, &stripes, &shared, || {
            assert!(window.clear_before_closing(&settings, later, false, || true));
            later
        });
        let snapshot = window.snapshot(&settings, later, &stripes);
        assert_eq!(
            (judged, snapshot.failures),
            (Judgement::Stale, 0),
            "generation 2^13 has recorded nothing, but holds {snapshot:?}"
        );
    }

    /// The same against a window that filled with successes only, 2^13 generations on.
    #[test]
    fn a_stalled_failure_misses_a_later_window_that_filled_clean() {
        let (window, stripes, settings) = rate_of_four();
        let shared = Swappable::new(settings);
        for _ in 0..4 {
            success(&window, &stripes, &shared, 0);
        }
        let later = 1 << 13;
        let judged = stalled_failure_of_0(&window, &stripes, &shared, || {
            assert!(window.clear_before_closing(&settings, later, false, || true));
            for _ in 0..4 {
                success(&window, &stripes, &shared, later);
            }
            later
        });
        let word = WindowWord(window.word.load(Ordering::Relaxed));
        assert_eq!(
            (judged, word.mode(), word.failures()),
            (Judgement::Stale, Mode::Clean, 0),
            "generation 2^13 recorded four successes only"
        );
    }

    /// And against one that had a failure and forgot it, as generation 0 did.
    #[test]
    fn a_stalled_failure_misses_a_later_window_that_forgot_alike() {
        let (window, stripes, settings) = window_of_four();
        let shared = Swappable::new(settings);
        let history = |g: u32| {
            for _ in 0..4 {
                success(&window, &stripes, &shared, g);
            }
            assert_eq!(
                window.record_failure(&shared, g, &stripes, || true, &()),
                Judgement::Keep
            );
            for _ in 0..4.max(FORGET_NO_SOONER_THAN) {
                success(&window, &stripes, &shared, g);
            }
            assert_eq!(
                WindowWord(window.word.load(Ordering::Relaxed)).mode(),
                Mode::Clean
            );
        };
        let later = 1 << 13;
        let judged =
            stalled_failure_after_a_like_history(&window, &stripes, &shared, later, history);
        assert_eq!(judged, Judgement::Stale);
        assert_eq!(window.snapshot(&settings, later, &stripes).failures, 0);
    }

    /// A reset from closed generation `2^13 - 1` to `2^13` must empty a window that still
    /// holds generation 0's failures (the same tag as `2^13`): point 7.
    #[test]
    fn a_reset_empties_a_window_that_already_has_the_new_generations_tag() {
        let (window, stripes, settings) = window_of_four();
        let shared = Swappable::new(settings);
        assert_eq!(
            window.record_failure(&shared, 0, &stripes, || true, &()),
            Judgement::Keep
        );
        let later = 1 << 13;
        assert!(window.clear_before_closing(&settings, later, true, || true));
        window.begin(&settings, later, || true);
        assert_eq!(
            window.snapshot(&settings, later, &stripes),
            WindowSnapshot::default(),
            "generation 2^13 has recorded nothing"
        );
    }

    /// A record left in the ring by generation 0 must not stand for the failure with the same
    /// number and tag of generation 2^13, whose count of successes differs.
    #[test]
    fn a_ring_record_of_a_generation_2_pow_13_older_is_replaced() {
        let (window, stripes, settings) = window_of_four();
        let shared = Swappable::new(settings);
        for _ in 0..2 {
            window.record_failure(&shared, 0, &stripes, || true, &()); // failure 0 after 0 successes
        }
        let later = 1 << 13;
        assert!(window.clear_before_closing(&settings, later, false, || true));
        for _ in 0..3 {
            success(&window, &stripes, &shared, later);
        }
        window.record_failure(&shared, later, &stripes, || true, &()); // failure 0 after 3 successes
        window.record_failure(&shared, later, &stripes, || true, &());
        // The last four calls are S S F F: both failures are in view.
        assert_eq!(window.snapshot(&settings, later, &stripes).failures, 2);
    }

    /// A breaker with a consecutive rule only, whose empty window is clean from the start.
    fn run_of_three() -> (Window, Stripes, Settings) {
        let config = Config {
            consecutive_failures: Some(3),
            stripes: Some(1),
            ..Config::default()
        };
        let settings = Settings::validate(&config).unwrap();
        (Window::new(&settings, 0), Stripes::new(1), settings)
    }

    /// With no rate rule the window starts clean, so a stalled failure of generation 0 finds
    /// the empty clean window of generation 2^13 (the same tag) alike in every field but the
    /// full generation the empty word carries: that alone must fail its CAS.
    #[test]
    fn a_stalled_failure_misses_a_later_empty_clean_window() {
        let (window, stripes, settings) = run_of_three();
        let shared = Swappable::new(settings);
        let later = 1 << 13;
        let judged = stalled_failure_of_0(&window, &stripes, &shared, || {
            assert!(window.clear_before_closing(&settings, later, false, || true));
            later
        });
        assert_eq!(judged, Judgement::Stale);
        assert_eq!(
            window.snapshot(&settings, later, &stripes),
            WindowSnapshot::default(),
            "generation 2^13 has recorded nothing"
        );
    }

    /// A failure in a filling window keeps the success ticks: generation 0 after "success,
    /// failure" and generation 2^13 after the same differ only in where their ticks started,
    /// so a stalled failure of 0 must not land in 2^13's window.
    #[test]
    fn a_stalled_failure_misses_a_later_filling_window_with_a_like_history() {
        let (window, stripes, settings) = rate_of_four();
        let shared = Swappable::new(settings);
        let history = |g: u32| {
            success(&window, &stripes, &shared, g);
            assert_eq!(
                window.record_failure(&shared, g, &stripes, || true, &()),
                Judgement::Keep
            );
        };
        let later = 1 << 13;
        let judged =
            stalled_failure_after_a_like_history(&window, &stripes, &shared, later, history);
        assert_eq!(judged, Judgement::Stale);
        assert_eq!(window.snapshot(&settings, later, &stripes).failures, 1);
    }

    /// An owned stripe still holding an older generation's count may hold that generation's
    /// hint too, far ahead; counting afresh must drop it, or the new generation's window
    /// would not look again for a thousand successes and stay dirty long after its failure
    /// aged out.
    #[test]
    fn an_owned_stripe_counting_afresh_drops_the_older_generations_hint() {
        let (window, stripes) = dirty_window_of_7();
        let (_, _, settings) = window_of_four();
        let settings = Swappable::new(settings);
        let stripe = own_stripe(&stripes);
        stripe
            .window_successes
            .store(pack_stripe_count(6, 10), Ordering::Relaxed);
        stripe.quiet_below.store(1_000, Ordering::Relaxed);
        // The dirty word's newest failure came after 0 successes: four age it out, and the
        // window forgets it at `FORGET_NO_SOONER_THAN`, long before the old hint.
        for _ in 0..4.max(FORGET_NO_SOONER_THAN) {
            success(&window, &stripes, &settings, 7);
        }
        assert_eq!(
            WindowWord(window.word.load(Ordering::Relaxed)).mode(),
            Mode::Clean
        );
    }

    /// A success whose number was taken while failures raced it counts as before it every
    /// failure recorded when at most its number of successes were counted: one recorded
    /// after exactly `number` successes came before success `number`.
    #[test]
    fn a_success_counts_a_failure_recorded_at_its_own_number_as_before_it() {
        let (window, _, _) = window_of_four();
        let tag = generation_tag(0);
        // Failure 0 after 2 successes (its record in the ring); failure 1, the newest, after 3.
        assert!(window.ring.publish(tag, 0, 2, || true));
        let word = WindowWord::empty(0, Mode::Filling)
            .with_failure(2, Mode::Filling)
            .with_failure(3, Mode::Filling);
        assert_eq!(window.failures_before(tag, word, 1), 0);
        assert_eq!(window.failures_before(tag, word, 2), 1);
        assert_eq!(window.failures_before(tag, word, 3), 2);
    }
}
