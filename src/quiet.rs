//! The quiet bit: the state word says when the breaker's windows are clean, so that a
//! healthy call reads no other word.
//!
//! A success into a clean window changes nothing (`window/word.rs`, `Clean`), so the healthy
//! path's only question after the call is "is the window still clean in my generation?". The
//! window word answers it, but reaching that word cost a thread-local read, two loads to pick
//! the window and a compare on the window's own cache line: three cycles over the bare call on
//! an Intel Xeon (family 6 model 106) where a second load of the state word, already in the
//! core's cache, costs one (`benches/PERFORMANCE.md`, "The quiet bit"). So while the window is
//! clean, bit `q` of the closed state word says so (`state.rs`). A success of
//! [`Breaker::call`](crate::Breaker::call), [`call_async`](crate::Breaker::call_async) or the
//! tower service admitted under a quiet word compares the word it loads after the call with
//! that word: equal means the success may be skipped. Any other success, and every success of
//! a permit taken by hand, is recorded in the window. (An async call may be out for long:
//! what decides is the word after it, which says the window is clean now.)
//!
//! With a window per thread, `q` says that every window is clean: one thread's clean window
//! says nothing of another's. A window that no thread uses any more before it filled would keep
//! the bit off for good under a rate rule (it fills only with its threads' calls), so the
//! setter takes every window filling without a failure as full of successes once another window
//! is clean (`Windows::are_clean_in`, `Window::is_clean_taking_unfailed_as_full`): a
//! compare-and-swap from that filling word of `g` to the clean one, after which the window is
//! clean like any other. Everything below is about each window alone, and holds for every one
//! of them. ("The window" below: each window the breaker keeps.)
//!
//! # The invariant
//!
//! While the state word is closed in generation `g` with `q` set, the window is clean in `g`.
//! A success that reads `q` after its call is placed where it read it: the window was clean
//! then, and a success in a clean window changes nothing.
//!
//! An earlier version let `q` outlive the window's cleanness for a moment: a failure committed
//! over the clean window first and cleared `q` after. A success that read `q` in between was
//! placed before that failure, which holds for a success concurrent with it; but another
//! thread's failure could commit over the now dirty window in between and return, and that
//! thread's next successes, which come after both failures, were skipped too. Two threads on
//! one window, each failing one call in 200, tripped a rule of 50 % over 20 calls within
//! milliseconds (loom: `a_failure_over_a_dirty_window_while_another_leaves_it_clean_is_not_skipped`).
//! So the failure now clears `q` before its commit, and keeps it clear until after.
//!
//! # Memory ordering
//!
//! Every write of the window word is a read-modify-write, so its modification order is a chain;
//! so is every write of the state word (outside tests), and of the count of losses under way
//! (`TransitionCounts::quiet_losses`), so a value later than a release write of one is in
//! that write's release sequence.
//!
//! - *Losing* ([`quiet_losing`](Breaker::quiet_losing), then
//!   [`quiet_lost`](Breaker::quiet_lost)): a failure `F` that finds the window clean in `g`
//!   adds one to the count of losses under way (`I`, relaxed), then replaces the state word,
//!   while it is closed in `g`, by the same word without `q` and with the next quiet epoch (a
//!   CAS loop, `AcqRel`: `B`), whether or not `q` is set. Then it commits (`C`, an `AcqRel` CAS
//!   on the window word; or it loses that race to another failure and commits over the dirty
//!   word). Then it takes its one back from the count (`D`, `Release`).
//! - *Setting* ([`publish_quiet`](Breaker::publish_quiet)): load the state word `s`
//!   (`Acquire`) and check that it is closed in `g` without `q`; load the count (`Acquire`)
//!   and check that it is 0; load the window word (`Acquire`) and check that it is clean in
//!   `g` (all 32 bits of `g`), or, for a window per thread filling without a failure, replace
//!   its word by the clean one (`AcqRel` CAS, whose read stands for the load); CAS the state
//!   word from `s` to `s` with `q` (`AcqRel`). A setter that fences (below) between its state
//!   load and its count load would synchronize with `B` through the fence alone; a loss's own
//!   publishing fences before its state load, and needs that load's Acquire (loom:
//!   `a_loss_that_publishes_after_another_loss_began_does_not_set_the_bit_over_it`). (A
//!   first look at the windows before the count, by loads alone, only lets a setter stop
//!   early when one is dirty; it decides nothing that the argument below needs.)
//!
//! Let a setter's window load read the clean value `r`, and let `F` be the first failure whose
//! commit `C` follows `r`. If the setter's state load read `B` or a later value, it
//! synchronizes with `B`, and its count load reads `I` or a later value; it reads 0 only at
//! or after `D`, and then, synchronizing with `D`, its window load could not read `r`, a value
//! before `C`. So either the count stopped it, or its state load read a value before `B`. Then
//! if its CAS comes after `B`, it fails on the epoch, and if it comes before, `B` clears `q`
//! before `C`. Either way `q` is never set while the window holds `C`.
//!
//! *The gap*: the epoch has 25 bits. A setter stalled between its state load and its CAS while
//! `2^25` failures each find the window clean (each after a window's worth of successes
//! forgot the one before) finds the epoch back where it was; if a failure is then in view, its
//! CAS sets `q` over a dirty window, and successes skip aging that failure until the next one
//! clears `q` again. It takes `2^25` full windows of calls between two adjacent instructions.
//!
//! *Coming back*: a success that cleans the window while a loss is under way finds the count
//! above 0 and leaves the bit to the loss, which publishes after `D`. Between the cleaner's
//! window write and its count load, and between `D` and the loss's window load, stand SeqCst
//! fences: of two such fences one precedes the other, so either the cleaner reads the count
//! after `D` or the loss reads the window after the cleaning, and one of them sets `q`
//! (loom: `the_bit_comes_back_when_a_success_cleans_the_window_during_a_loss`). Without them
//! both could read the other's old value, and `q` would stay off over a clean window: no
//! judgement changes, but every success would read the window until it next turns clean. The
//! count is the breaker's, not a generation's: a setter of a later generation (a transition
//! publishing for its new window, or a success cleaning it) may find a loss of an earlier one
//! under way, so the loss publishes for whichever closed generation the state word holds after
//! its fence, not for its own (loom: `a_loss_of_an_ended_generation_sets_the_bit_of_the_next`,
//! `a_loss_of_an_ended_generation_sets_the_bit_a_cleaning_success_left_to_it`). With
//! a window per thread the same holds between two cleaners of two windows, each looking at
//! the other's after its own write: the fence goes before the look (loom:
//! `the_last_thread_to_clean_its_window_sets_the_quiet_bit`). Each setter fences once.
//!
//! # Who sets it
//!
//! Whoever may have made the window clean, after doing so: a success the window's quick path
//! declined (it may have filled the window clean, or forgotten its failures), a closing (whose
//! new window may start clean, with no rate rule to fill), the breaker's construction, and a
//! failure at the end of its loss (a success on another thread may have cleaned the window
//! meanwhile, and left the bit to it). The bit is only ever a shortcut: without it a success
//! asks the window, as it did before the bit existed.

use super::Breaker;
use crate::clock::Clock;
use crate::permit::Outcome;
use crate::state::StateWord;
use crate::sync::{Ordering, fence};
use crate::window::QuietLoss;

impl<C: Clock> Breaker<C> {
    /// Whether a call's `outcome` ends its permit without going to the window: a success of a
    /// permit admitted under the quiet word `admitted_quiet`, with the state word still that
    /// word ([`is_quiet_since`](Breaker::is_quiet_since)). The one decision of `call`,
    /// `call_async` and the tower service.
    #[inline(always)]
    pub(crate) fn skips_window(&self, outcome: Outcome, admitted_quiet: Option<StateWord>) -> bool {
        matches!(admitted_quiet, Some(word) if outcome == Outcome::Success && self.is_quiet_since(word))
    }

    /// Whether the state word is `word` (loaded before the call), quiet: the window is clean in
    /// `word`'s generation, and a success of a permit issued under `word` changes nothing.
    #[inline(always)]
    pub(crate) fn is_quiet_since(&self, word: StateWord) -> bool {
        // Acquire, more than it needs: equal to `word`, this load read the very store the
        // admission's Acquire load read, or a later one of the same value with no failure
        // over a clean window between (the state word's writes are one chain; every such
        // failure moves the epoch, which comes back only by its wrap, "The gap" in the
        // module's docs; a reconfiguration's counting bits turned on and off again bring the
        // word back with none), which synchronized already; any other word sends the success
        // to the window, whose loads acquire. Relaxed passes every loom model (tried), as that
        // says. Kept: it is the same instruction on x86, and no weakly ordered machine is here
        // to measure what Relaxed would save. Either way the load reads no value older than
        // what the call synchronized with (a join, a lock), so a failure that ended before the
        // call did is seen (loom: `a_success_whose_call_spans_a_failure_goes_to_the_window`).
        self.control.state.load(Ordering::Acquire) == word.with_quiet().0
    }

    /// Whether the state word's quiet bit is set now (for the loom models, through
    /// `testing::is_quiet`).
    #[cfg(feature = "testing")]
    pub(crate) fn is_quiet(&self) -> bool {
        StateWord(self.control.state.load(Ordering::Acquire)).is_quiet()
    }

    /// Sets `q` if the breaker is closed in `generation`, no failure is between
    /// [`quiet_losing`](Breaker::quiet_losing) and [`quiet_lost`](Breaker::quiet_lost), and
    /// every window is clean in it (with a window per thread, taking those filling without a
    /// failure as full).
    #[cold]
    #[inline(never)]
    pub(crate) fn publish_quiet(&self, generation: u32) {
        self.publish_quiet_fenced(generation, false);
    }

    /// [`publish_quiet`](Breaker::publish_quiet), after a SeqCst fence of the caller's if
    /// `fenced`. One fence per call is enough (see "Coming back" in the module's docs): with
    /// one window it stands between the look at the window, which sees the caller's own
    /// cleaning, and the load of the count; with a window per thread before the look, which
    /// reads the other threads' windows (two threads each cleaning their own window and then
    /// looking at the other's would otherwise both miss the other's cleaning).
    fn publish_quiet_fenced(&self, generation: u32, mut fenced: bool) {
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        loop {
            if !word.is_closed() || word.generation() != generation || word.is_quiet() {
                return;
            }
            if !fenced && !self.windows.is_one_window() {
                fence(Ordering::SeqCst);
                fenced = true;
            }
            // A first look: most callers (a success the quick path declined) find a failure
            // in view, and stop here without a fence when there is one window.
            if !self.windows.look_clean_in(generation) {
                return;
            }
            if !fenced {
                fence(Ordering::SeqCst);
                fenced = true;
            }
            // After the state word's load, before the windows': see the module's docs.
            if self.transitions.quiet_losses.load(Ordering::Acquire) != 0 {
                return;
            }
            if !self.windows.are_clean_in(generation) {
                return;
            }
            match self.control.state.compare_exchange(
                word.0,
                word.with_quiet().0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                // A reconfiguration's bits, an epoch, a transition: look again.
                Err(seen) => word = StateWord(seen),
            }
        }
    }

    /// A failure of `generation` has found a window clean and is about to commit over it:
    /// counts it among the losses under way, then clears `q` and moves the quiet epoch. Until
    /// the matching [`quiet_lost`](Breaker::quiet_lost), no setter sets `q`.
    #[cold]
    #[inline(never)]
    pub(crate) fn quiet_losing(&self, generation: u32) {
        // Relaxed: the CAS below, a release, carries it to every setter that loads the state
        // word after. (If there is no CAS, `generation` is over, and no setter's CAS from a
        // word of it can succeed.)
        self.transitions
            .quiet_losses
            .fetch_add(1, Ordering::Relaxed);
        let mut word = StateWord(self.control.state.load(Ordering::Acquire));
        loop {
            // A transition moved the word on: no setter's CAS from a word of `generation`
            // can succeed.
            if !word.is_closed() || word.generation() != generation {
                return;
            }
            match self.control.state.compare_exchange_weak(
                word.0,
                word.with_quiet_lost().0,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(seen) => word = StateWord(seen),
            }
        }
    }

    /// The failure that called [`quiet_losing`](Breaker::quiet_losing) is done with the
    /// window, committed or not: takes it out of the losses under way, then sets `q` again if
    /// every window of the closed generation current now is clean (a setter that found this
    /// loss under way left that to it, whether it set for the loss's generation or for a later
    /// one).
    #[cold]
    #[inline(never)]
    pub(crate) fn quiet_lost(&self) {
        // Release, after the failure's commit: a setter that reads this count, or a later
        // one, reads the window word after the commit.
        self.transitions
            .quiet_losses
            .fetch_sub(1, Ordering::Release);
        // SeqCst: the loss's half of the fences in "Coming back", before any load of the
        // state word or a window.
        fence(Ordering::SeqCst);
        // The current generation, not the loss's own: the count is the breaker's, so a
        // transition's publishing or a success cleaning a window of a later generation may
        // have found this loss under way and left the bit to it. Its setter's fence and this
        // one are ordered, so either that setter read the count after the decrement, or the
        // load below reads the state word it found, or a later one ("Coming back").
        let word = StateWord(self.control.state.load(Ordering::Acquire));
        if word.is_closed() {
            self.publish_quiet_fenced(word.generation(), true);
        }
    }

    /// The [`QuietLoss`] a failure of `generation` brackets its commit over a clean window
    /// with.
    #[inline(always)]
    pub(crate) fn losing_quiet(&self, generation: u32) -> LosingQuiet<'_, C> {
        LosingQuiet {
            breaker: self,
            generation,
        }
    }
}

/// [`quiet_losing`](Breaker::quiet_losing) and [`quiet_lost`](Breaker::quiet_lost) of one
/// breaker and generation, for the window's failure path.
pub(crate) struct LosingQuiet<'b, C: Clock> {
    breaker: &'b Breaker<C>,
    generation: u32,
}

impl<C: Clock> QuietLoss for LosingQuiet<'_, C> {
    fn begin(&self) {
        self.breaker.quiet_losing(self.generation);
    }

    fn end(&self) {
        self.breaker.quiet_lost();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::breaker::Breaker;
    use crate::state::StateWord;
    use crate::sync::Ordering;
    use crate::window::FORGET_NO_SOONER_THAN;

    fn word(breaker: &Breaker) -> StateWord {
        StateWord(breaker.control.state.load(Ordering::Acquire))
    }

    fn rate_over_4() -> Breaker {
        Breaker::builder()
            .failure_rate(0.5, 4)
            .build()
            .expect("valid settings")
    }

    /// A window per thread, and enough stripes that every thread here has one of its own.
    fn per_thread_rate_over_4() -> Breaker {
        Breaker::builder()
            .failure_rate(0.5, 4)
            .per_thread_windows(true)
            .stripes(64)
            .build()
            .expect("valid settings")
    }

    fn succeed(breaker: &Breaker, calls: usize) {
        for _ in 0..calls {
            breaker.call(|| Ok::<_, ()>(())).expect("closed");
        }
    }

    #[test]
    fn the_word_turns_quiet_when_the_window_fills_clean() {
        let breaker = rate_over_4();
        succeed(&breaker, 3);
        assert!(!word(&breaker).is_quiet(), "still filling");
        succeed(&breaker, 1);
        assert!(word(&breaker).is_quiet());
    }

    #[test]
    fn a_failure_over_a_quiet_window_clears_the_bit_and_moves_the_epoch_and_aging_restores_it() {
        let breaker = rate_over_4();
        succeed(&breaker, 4);
        let quiet = word(&breaker);
        assert!(quiet.is_quiet());
        let _ = breaker.call(|| Err::<(), _>("refused"));
        let after_failure = word(&breaker);
        assert!(!after_failure.is_quiet());
        assert_eq!(
            after_failure.generation(),
            quiet.generation(),
            "no transition"
        );
        assert_ne!(
            after_failure.with_quiet(),
            quiet,
            "a setter that loaded the quiet-less word before the failure must not succeed"
        );
        // The window of 4 still sees the failure after 3 successes, and not after the 4th;
        // the window forgets it, and the word turns quiet, at `FORGET_NO_SOONER_THAN`.
        let forget_at = 4.max(FORGET_NO_SOONER_THAN) as usize;
        succeed(&breaker, 3);
        assert!(!word(&breaker).is_quiet());
        assert_eq!(breaker.metrics().window_failures, 1);
        succeed(&breaker, 1);
        assert_eq!(breaker.metrics().window_failures, 0);
        succeed(&breaker, forget_at - 5);
        assert!(!word(&breaker).is_quiet(), "one success short");
        succeed(&breaker, 1);
        assert!(word(&breaker).is_quiet());
    }

    #[test]
    fn a_run_rule_alone_is_quiet_from_the_start_and_again_after_a_closing() {
        let breaker = Breaker::builder()
            .consecutive_failures(2)
            .build()
            .expect("valid settings");
        assert!(word(&breaker).is_quiet(), "no window to fill");
        let _ = breaker.call(|| Err::<(), _>("refused"));
        assert!(!word(&breaker).is_quiet(), "a run has begun");
        breaker.reset();
        assert!(word(&breaker).is_quiet(), "a closing starts clean");
    }

    #[test]
    fn a_window_per_thread_is_quiet_once_every_window_is_clean() {
        let breaker = Breaker::builder()
            .consecutive_failures(2)
            .per_thread_windows(true)
            .stripes(64) // a window of its own for each thread here, as below
            .build()
            .expect("valid settings");
        assert!(word(&breaker).is_quiet(), "no window to fill");
        let _ = breaker.call(|| Err::<(), _>("refused"));
        assert!(!word(&breaker).is_quiet(), "this thread's run has begun");
        std::thread::scope(|s| {
            s.spawn(|| succeed(&breaker, 10));
        });
        assert!(
            !word(&breaker).is_quiet(),
            "another thread's clean window says nothing of this one's"
        );
        // A run rule sees the failure no more after one success; the window forgets it at
        // `FORGET_NO_SOONER_THAN`.
        let forget_at = FORGET_NO_SOONER_THAN as usize;
        succeed(&breaker, forget_at - 1);
        assert!(!word(&breaker).is_quiet(), "one success short");
        succeed(&breaker, 1);
        assert!(word(&breaker).is_quiet(), "every window is clean");
    }

    #[test]
    fn a_window_per_thread_takes_the_windows_no_one_used_as_full_once_one_fills_clean() {
        let breaker = per_thread_rate_over_4();
        succeed(&breaker, 3);
        assert!(!word(&breaker).is_quiet(), "filling");
        succeed(&breaker, 1);
        assert!(
            word(&breaker).is_quiet(),
            "this thread's window filled clean, and no other thread has called"
        );
        // A thread that comes now is judged over a full window from its first call: two
        // failures of the last four trip it, without waiting for a minimum of its own.
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..2 {
                    let _ = breaker.call(|| Err::<(), _>("refused"));
                }
            });
        });
        assert_eq!(breaker.state(), crate::State::Open);
    }

    #[test]
    fn a_window_per_thread_left_filling_with_successes_alone_is_taken_as_full() {
        let breaker = per_thread_rate_over_4();
        // This thread's first call takes its slot, so that the other thread's is another.
        succeed(&breaker, 1);
        std::thread::scope(|s| {
            s.spawn(|| succeed(&breaker, 1));
        });
        succeed(&breaker, 3);
        assert!(
            word(&breaker).is_quiet(),
            "the other thread's window, one success of four, is taken as full"
        );
        assert_eq!(
            breaker.metrics().window_calls,
            5,
            "the windows count the calls they recorded, not what they were taken for"
        );
    }

    #[test]
    fn a_window_per_thread_filling_with_a_failure_keeps_the_word_loud() {
        let breaker = per_thread_rate_over_4();
        succeed(&breaker, 1);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = breaker.call(|| Err::<(), _>("refused"));
            });
        });
        succeed(&breaker, 3);
        assert!(
            !word(&breaker).is_quiet(),
            "the other thread's window holds a failure, and fills only with its calls"
        );
        assert_eq!(breaker.state(), crate::State::Closed);
    }

    #[test]
    fn a_reconfiguration_that_flips_counting_keeps_the_bit() {
        let breaker = rate_over_4();
        succeed(&breaker, 4);
        let mut config = breaker.config();
        config.count_successes = true;
        breaker.reconfigure(config).expect("valid");
        let counting = word(&breaker);
        assert!(counting.is_quiet() && counting.counts_successes());
        // A counting breaker's calls go the long way, and count.
        succeed(&breaker, 2);
        assert_eq!(breaker.metrics().successes, Some(2));
    }
}
