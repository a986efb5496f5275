//! The breaker's failure windows: one for the whole breaker, or one per counter stripe.
//!
//! With one window (the default), every thread's outcomes go to it, and a failure reads every
//! stripe to learn its exact position among all calls (`mod.rs`). With a window per thread
//! (`Config::per_thread_windows`), stripe `i`'s threads record into window `i` alone, which
//! counts stripe `i`'s successes alone; threads without a stripe of their own share the
//! shared stripe's window. A thread with a stripe then writes only its own stripe and its own
//! window, and reads no other thread's line, so the window's cost does not grow with the
//! threads.
//!
//! Each window is the same [`Window`], and every argument of `mod.rs` holds for each alone:
//! the stripes it speaks of are the one stripe that window counts. What ties them together:
//!
//! - *Which window.* A thread's window and the stripe it counts in come from its slot: slot
//!   `i` below the stripes has window `i` and stripe `i`, and every other thread the shared
//!   stripe's window (the last) and the shared stripe. The quick path indexes the windows by
//!   the slot as it is ([`Stripes::thread_slot`]): the slot just past the stripes finds the
//!   last window, which is that thread's, and its dirty path declines, having no stripe of its
//!   own; a thread further on or without a slot yet goes the slow way, which claims a slot
//!   first ([`Stripes::local_indexed`]) and picks the window by the same index. A thread
//!   with a stripe of its own takes its slow path in the window the quick path asked, which
//!   is that slot's. So a thread never counts successes in a stripe its window does not
//!   read. A slot handed to another thread hands over its window with it; the registry
//!   orders the old owner's last write before the new owner's first (`stripes.rs`).
//! - *Transitions* clear every window, each as `mod.rs` clears the one: [`Windows::begin`]
//!   (point 5) and [`Windows::clear_before_closing`] (point 7) do to each window what they
//!   did to the one, and the argument of each point is about one window and the state word.
//!   A closing that finds the state changed half-way has cleared some windows and not the
//!   others; each window it cleared was cleared while the state was unchanged, which is what
//!   point 7 asks of it, and the others are left as a losing closing leaves its window.
//! - *Hung calls.* A call that hangs past the slow-call limit is found by a sweep on whichever
//!   thread makes the next call, and recorded in the window of the stripe it was issued on
//!   ([`Windows::record_failure_of_stripe`]), not the sweeper's: the one case where a thread
//!   records into a window not its own. That window's argument is unchanged, as it is
//!   `mod.rs`'s for a window every thread records into: a failure commits with a
//!   compare-and-swap on the window word and writes no stripe's count (nor, into a window
//!   that does not count the recording thread's stripe, that stripe's hint:
//!   `quiet_until_aged`).
//! - *The breaker-wide window* is then [`Window::declining`]: the quick path goes to the
//!   thread's own window directly, and finds the breaker-wide one only when the thread has
//!   no window there, which declines.

use super::{Judgement, QuietLoss, QuietStanding, Window, WindowSnapshot};
use crate::config::Settings;
use crate::stripes::{LocalStripe, SHARED_INDEX, Stripes};
use crate::sync::Swappable;

pub(crate) struct Windows {
    /// The window of the whole breaker; [`Window::declining`] with a window per thread.
    whole: Window,
    /// With a window per thread: one per owned stripe, in the stripes' order, then the shared
    /// stripe's. Empty otherwise.
    per_thread: Box<[Window]>,
}

impl Windows {
    pub(crate) fn new(settings: &Settings, generation: u32) -> Self {
        if !settings.config.per_thread_windows {
            return Windows {
                whole: Window::new(settings, generation),
                per_thread: Box::default(),
            };
        }
        let per_thread = (0..settings.stripes)
            .chain(std::iter::once(SHARED_INDEX))
            .map(|index| Window::for_stripe(settings, generation, index))
            .collect();
        Windows {
            whole: Window::declining(),
            per_thread,
        }
    }

    /// Every window outcomes are recorded in.
    fn in_use(&self) -> &[Window] {
        if self.per_thread.is_empty() {
            std::slice::from_ref(&self.whole)
        } else {
            &self.per_thread
        }
    }

    /// The window of the threads of stripe `index` (from [`Stripes::local_indexed`]).
    fn of_stripe(&self, index: u32) -> &Window {
        match self.per_thread.get(index as usize) {
            Some(window) => window,
            // The shared stripe's window is the last; with one window, it is the only one.
            None => self.per_thread.last().unwrap_or(&self.whole),
        }
    }

    /// The window the quick path asked: with a window per thread, this thread's own (by its
    /// slot as it is); otherwise, or for a thread with no window there, the window of the
    /// whole breaker, which with a window per thread is [`Window::declining`]. One bounds
    /// check tells the two kinds apart: with one window there are no per-thread windows, and
    /// every slot falls through to the window of the whole breaker.
    ///
    /// `get` and `unwrap_or` rather than a `match` with a call in each arm: the compiler then
    /// picks the window's address with a conditional move (rustc 1.95, x86-64), so that
    /// neither kind's healthy call takes a jump of its own (`benches/PERFORMANCE.md`,
    /// "Choosing the window without a jump"). The stripe-first path
    /// ([`record_success_quickly_stripe_first`](Windows::record_success_quickly_stripe_first))
    /// makes the same bounds check as a branch: its one window goes to the stripe, not to a
    /// window.
    #[inline(always)]
    fn window_of_slot(&self, stripes: &Stripes) -> &Window {
        self.per_thread
            .get(stripes.thread_slot())
            .unwrap_or(&self.whole)
    }

    /// The quick path of a closed success: [`Window::record_success_quickly`] of the window of
    /// the whole breaker, or, with a window per thread, of this thread's own window
    /// ([`window_of_slot`]), which asks the window word first. Whatever it declines goes to
    /// [`record_success_slow`](Windows::record_success_slow).
    ///
    /// [`window_of_slot`]: Windows::window_of_slot
    #[inline(always)]
    pub(crate) fn record_success_quickly(&self, generation: u32, stripes: &Stripes) -> bool {
        self.window_of_slot(stripes)
            .record_success_quickly(generation, stripes)
    }

    /// [`record_success_quickly`](Windows::record_success_quickly) for a success whose caller
    /// found the state word's quiet bit off: the window is then nearly always dirty (while it
    /// is clean the bit keeps successes from coming here at all, `quiet.rs`), so this thread's
    /// own stripe comes first ([`Window::ages_in_own_stripe`], which reads no window word:
    /// `mod.rs`, point 9), then the window word of the thread's window, for clean. The same
    /// for both kinds: with a window per thread, the stripe the thread owns is the one its
    /// window counts, as with one window it is one of those the window counts.
    ///
    /// Going to the stripe first took the lesson's healthy day over 100 calls from 55.98 to
    /// 42.35 instructions per call (`.ci/instructions`, `lesson100`) and from 3.16 to 2.59 ns
    /// per call (`benches/PERFORMANCE.md`, "A dirty window's success without the window
    /// word"); for a window per thread, see "A window per thread: its stripe first, and the
    /// quiet bit" there. A caller that never asks the bit (a permit's own `success`, a
    /// breaker that counts successes) finds the window clean all day, and the stripe first
    /// would only load the stripe's count and hint to decline: it takes the other.
    #[inline(always)]
    pub(crate) fn record_success_quickly_stripe_first(
        &self,
        generation: u32,
        stripes: &Stripes,
    ) -> bool {
        // A thread with no window of its own finds the breaker-wide window, which with a
        // window per thread declines.
        Window::ages_in_own_stripe(generation, stripes)
            || self.window_of_slot(stripes).is_clean_quickly(generation)
    }

    /// Records a success that [`record_success_quickly`](Windows::record_success_quickly)
    /// declined: in the window of the whole breaker, or in this thread's own window, first on
    /// its quick path.
    pub(crate) fn record_success_slow(
        &self,
        generation: u32,
        stripes: &Stripes,
        settings: &Swappable<Settings>,
        is_current: impl Fn() -> bool,
    ) -> Judgement {
        // A thread with a stripe of its own (the case that comes all day, at its stripe's
        // turn to check while failures are in view): the window the quick path asked, which
        // is that stripe's, goes straight to its slow path. Claiming a slot and asking the
        // quick path again are for threads without one.
        if let Some(stripe) = stripes.thread_stripe() {
            return self.window_of_slot(stripes).record_success_slow(
                generation,
                stripes,
                LocalStripe::Owned(stripe),
                settings,
                is_current,
            );
        }
        if self.per_thread.is_empty() {
            return self.whole.record_success_slow(
                generation,
                stripes,
                stripes.local(),
                settings,
                is_current,
            );
        }
        let (index, local) = stripes.local_with_index();
        let window = self.of_stripe(index);
        if window.record_success_quickly(generation, stripes) {
            return Judgement::Keep;
        }
        window.record_success_slow(generation, stripes, local, settings, is_current)
    }

    /// Records a failure in the window of the whole breaker, or in this thread's own.
    #[inline(always)]
    pub(crate) fn record_failure(
        &self,
        settings: &Swappable<Settings>,
        generation: u32,
        stripes: &Stripes,
        is_current: impl Fn() -> bool,
        quiet: &impl QuietLoss,
    ) -> Judgement {
        // With one window, the thread's stripe does not matter: no slot is looked up.
        let index = if self.per_thread.is_empty() {
            SHARED_INDEX
        } else {
            stripes.local_indexed().0
        };
        self.record_failure_of_stripe(index, settings, generation, stripes, is_current, quiet)
    }

    /// Records a failure of a call that a thread of stripe `index` issued, wherever it is
    /// found (a hung call, taken by a sweep on any thread): in the window of the whole
    /// breaker, or in that stripe's.
    ///
    /// Its position among that window's calls is where it is recorded, not where it was
    /// issued, as for any failure recorded late. Only the owner of a stripe writes its
    /// counts, and the failure path writes none (it reads them; its hint to the recording
    /// thread's own stripe is left out when the window does not count that stripe,
    /// `quiet_until_aged`).
    #[inline(always)]
    pub(crate) fn record_failure_of_stripe(
        &self,
        index: u32,
        settings: &Swappable<Settings>,
        generation: u32,
        stripes: &Stripes,
        is_current: impl Fn() -> bool,
        quiet: &impl QuietLoss,
    ) -> Judgement {
        self.of_stripe(index)
            .record_failure(settings, generation, stripes, is_current, quiet)
    }

    /// The quiet bit's setter's first look (`quiet.rs`, `publish_quiet`): whether every window
    /// may be clean in `generation`, by loads alone. A setter that finds a window dirty here
    /// leaves the bit to whoever cleans that window, who sets it after.
    pub(crate) fn look_clean_in(&self, generation: u32) -> bool {
        if self.per_thread.is_empty() {
            return self.whole.is_clean_in(generation);
        }
        self.stand_clean_in(generation)
    }

    /// Whether the breaker has one window, not one per thread.
    pub(crate) fn is_one_window(&self) -> bool {
        self.per_thread.is_empty()
    }

    /// Whether every window per thread is clean or filling without a failure in `generation`,
    /// one of them clean.
    fn stand_clean_in(&self, generation: u32) -> bool {
        let mut one_clean = false;
        for window in &self.per_thread {
            match window.quiet_standing(generation) {
                QuietStanding::Clean => one_clean = true,
                QuietStanding::Unfailed => {}
                QuietStanding::Neither => return false,
            }
        }
        one_clean
    }

    /// Whether every window in use is clean in `generation`: what the state word's quiet bit
    /// says (`quiet.rs`), asked by its setter after loading the state word.
    ///
    /// With a window per thread, one thread's clean window says nothing of another's, so the
    /// bit waits for all of them. A window fills only with its own threads' calls, so under a
    /// rate rule the window of a stripe no thread has used, or of a thread that made a few
    /// calls and left, would keep the bit off for good. So once one window is clean and every
    /// other is clean or filling without a failure, those are taken as full of successes
    /// ([`Window::is_clean_taking_unfailed_as_full`]): a thread whose window has not filled
    /// when the breaker turns quiet is judged over a full window from then on, as it would be
    /// in one window, instead of waiting for a minimum of its own. Until one window is clean
    /// (after a closing, every window is empty), each thread's window fills with its own
    /// calls, and its minimum of calls holds.
    ///
    /// The first look's loads again ([`look_clean_in`](Windows::look_clean_in)), then, with a
    /// window per thread, the compare-and-swaps that take windows as full.
    pub(crate) fn are_clean_in(&self, generation: u32) -> bool {
        self.look_clean_in(generation)
            && self
                .per_thread
                .iter()
                .all(|window| window.is_clean_taking_unfailed_as_full(generation))
    }

    /// [`Window::apply`] to every window.
    pub(crate) fn apply(&self, settings: &Settings) {
        for window in self.in_use() {
            window.apply(settings);
        }
    }

    /// [`Window::begin`] for every window.
    pub(crate) fn begin(
        &self,
        settings: &Settings,
        generation: u32,
        is_current: impl Fn() -> bool,
    ) {
        for window in self.in_use() {
            window.begin(settings, generation, &is_current);
        }
    }

    /// [`Window::clear_before_closing`] for every window, until one finds the state changed
    /// (see the module's docs).
    pub(crate) fn clear_before_closing(
        &self,
        settings: &Settings,
        generation: u32,
        from_closed: bool,
        unchanged: impl Fn() -> bool,
    ) -> bool {
        self.in_use().iter().all(|window| {
            window.clear_before_closing(settings, generation, from_closed, &unchanged)
        })
    }

    /// What the windows hold: with a window per thread, their failures and calls summed, and
    /// the longest run of any.
    pub(crate) fn snapshot(
        &self,
        settings: &Settings,
        generation: u32,
        stripes: &Stripes,
    ) -> WindowSnapshot {
        self.in_use()
            .iter()
            .map(|window| window.snapshot(settings, generation, stripes))
            .fold(WindowSnapshot::default(), |sum, one| WindowSnapshot {
                failures: sum.failures.saturating_add(one.failures),
                calls: sum.calls.saturating_add(one.calls),
                consecutive_failures: sum.consecutive_failures.max(one.consecutive_failures),
            })
    }

    /// Whether `settings` can be applied to every window ([`Window::fits`]).
    pub(crate) fn fits(&self, settings: &Settings) -> bool {
        self.in_use().iter().all(|window| window.fits(settings))
    }

    /// Failure records each window keeps.
    pub(crate) fn capacity(&self) -> usize {
        self.in_use()[0].capacity()
    }

    /// Heap memory the windows take, in bytes: the per-thread windows themselves and every
    /// window's failure records.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.per_thread)
            + self.whole.heap_bytes()
            + self
                .per_thread
                .iter()
                .map(Window::heap_bytes)
                .sum::<usize>()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::FORGET_NO_SOONER_THAN;
    use super::super::word::{Mode, WindowWord};
    use super::*;
    use crate::config::{Config, FailureRateConfig};
    use crate::stripes::LocalStripe;
    use crate::sync::{Ordering, Swappable};

    /// Windows of four calls (half of them failing trips), one or one per thread, with stripes
    /// enough for every test thread to own one, and this thread's claimed.
    fn windows_of_four(per_thread: bool) -> (Windows, Stripes, Swappable<Settings>) {
        let config = Config {
            failure_rate: Some(FailureRateConfig {
                threshold: 0.5,
                window: 4,
                minimum_calls: None,
            }),
            stripes: Some(64),
            per_thread_windows: per_thread,
            ..Config::default()
        };
        let settings = Settings::validate(&config).unwrap();
        let stripes = Stripes::new(64);
        assert!(
            matches!(stripes.local(), LocalStripe::Owned(_)),
            "the test thread claims a stripe of its own"
        );
        (
            Windows::new(&settings, 0),
            stripes,
            Swappable::new(settings),
        )
    }

    /// The mode of the window this thread's successes go to.
    fn mode_of_own_window(windows: &Windows, stripes: &Stripes) -> Mode {
        let word = windows.window_of_slot(stripes).word.load(Ordering::Relaxed);
        WindowWord(word).mode()
    }

    /// Successes go as the breaker sends them, the quick way and then the slow way; the one
    /// at the stripe's turn to check goes straight to the slow path of the window the quick
    /// path asked. It must count the success and forget the failure at the success that ages
    /// it out.
    #[test]
    fn a_failure_is_forgotten_at_the_success_that_ages_it_out_in_either_kind() {
        for per_thread in [false, true] {
            let (windows, stripes, settings) = windows_of_four(per_thread);
            let success = || {
                if !windows.record_success_quickly(0, &stripes) {
                    let judged = windows.record_success_slow(0, &stripes, &settings, || true);
                    assert_eq!(judged, Judgement::Keep);
                }
            };
            let failure = || {
                let judged = windows.record_failure(&settings, 0, &stripes, || true, &());
                assert_eq!(judged, Judgement::Keep);
            };
            for _ in 0..4 {
                success();
            }
            let mode = || mode_of_own_window(&windows, &stripes);
            assert_eq!(mode(), Mode::Clean, "per thread: {per_thread}");
            // Either kind forgets no sooner than `FORGET_NO_SOONER_THAN` successes after its
            // newest failure.
            let forget_at = 4.max(FORGET_NO_SOONER_THAN);
            for round in 0..3 {
                failure();
                for aged in 1..forget_at {
                    success();
                    assert_eq!(
                        mode(),
                        Mode::Dirty,
                        "per thread: {per_thread}, round {round}: still in view after {aged}"
                    );
                }
                success();
                assert_eq!(
                    mode(),
                    Mode::Clean,
                    "per thread: {per_thread}, round {round}: success {forget_at} forgets it"
                );
            }
        }
    }

    /// A failure recorded into another stripe's window (a hung call of another thread, swept
    /// up here) leaves this thread's hint alone: it says when this thread's own window may
    /// forget, which that failure does not change.
    #[test]
    fn a_failure_recorded_for_another_stripe_leaves_this_threads_hint_alone() {
        let (windows, stripes, settings) = windows_of_four(true);
        let success = || {
            if !windows.record_success_quickly(0, &stripes) {
                windows.record_success_slow(0, &stripes, &settings, || true);
            }
        };
        for _ in 0..4 {
            success();
        }
        windows.record_failure(&settings, 0, &stripes, || true, &());
        let stripe = stripes.thread_stripe().expect("an own stripe");
        let hint = stripe.quiet_below.load(Ordering::Relaxed);
        // Another stripe's window, filled with failures (which would trip), is full.
        let other = (stripes.thread_slot() as u32 + 1) % 64;
        for _ in 0..4 {
            windows.record_failure_of_stripe(other, &settings, 0, &stripes, || true, &());
        }
        // Two successes age the failure: the count moves on, the hint stays.
        success();
        success();
        windows.record_failure_of_stripe(other, &settings, 0, &stripes, || true, &());
        assert_eq!(stripe.quiet_below.load(Ordering::Relaxed), hint);
        // Its own failure moves it, as before.
        windows.record_failure(&settings, 0, &stripes, || true, &());
        assert_eq!(stripe.quiet_below.load(Ordering::Relaxed), hint + 2);
    }

    /// At the stripe's turn, a generation that is no longer current is left to the slow path,
    /// which finds it stale: nothing is counted.
    #[test]
    fn the_success_at_the_turn_of_a_generation_over_counts_nothing() {
        for per_thread in [false, true] {
            let (windows, stripes, settings) = windows_of_four(per_thread);
            for _ in 0..4 {
                if !windows.record_success_quickly(0, &stripes) {
                    windows.record_success_slow(0, &stripes, &settings, || true);
                }
            }
            windows.record_failure(&settings, 0, &stripes, || true, &());
            let stripe = stripes.thread_stripe().expect("an own stripe");
            let counted = stripe.window_successes.load(Ordering::Relaxed);
            // The turn: the hint says the next success checks.
            stripe.quiet_below.store(0, Ordering::Relaxed);
            assert!(!windows.record_success_quickly(0, &stripes));
            assert_eq!(
                windows.record_success_slow(0, &stripes, &settings, || false),
                Judgement::Stale,
                "per thread: {per_thread}"
            );
            assert_eq!(
                stripe.window_successes.load(Ordering::Relaxed),
                counted,
                "per thread: {per_thread}: nothing counted"
            );
            assert_eq!(mode_of_own_window(&windows, &stripes), Mode::Dirty);
        }
    }
}
