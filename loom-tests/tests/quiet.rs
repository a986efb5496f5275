//! The quiet bit (`src/quiet.rs`): while the state word says the window is clean, a success
//! through `Breaker::call` (or `call_async`, or the tower service) skips the window. The first five models race a failure that lands
//! on a clean window against a success or a reset that makes the window clean and publishes
//! the bit, then run more calls through `call` on one thread: if the bit were left set over a
//! dirty window, those successes would be skipped and the failure would stay in view. The next
//! two have a success whose call spans a failure, through `call` and through `call_async`. The
//! last one, ignored until it is fixed, is a known bug: another thread's failure and successes
//! while a failure that found the window clean has not cleared the bit yet. The end must be
//! one the sequential reference model reaches for some interleaving (as in `window.rs`).

#![cfg(loom)]

mod common;

use common::{
    F, R, S, assert_reached, call_through, check, check_against_model_with, from_model,
    model_finals, rate,
};
use hotbreaker::testing::ModelConfig;
use hotbreaker::{Breaker, ManualClock};
use loom::sync::Arc;

/// A full window of 3 holding one failure, two successes after it; thread A's success ages
/// the failure out, so the window forgets it (dirty -> clean) and A publishes the quiet bit,
/// while thread B records a failure, which may land on the window A just made clean. Then
/// three successes through `call`, which age B's failure out in every order.
///
/// Checks that the window ends empty of failures, as every order leaves it.
///
/// Catches: a loss of the bit that does not move the quiet epoch
/// (`StateWord::with_quiet_lost` clearing `q` only): A loads the state word and the clean
/// window, B commits and "loses" a bit that is not set yet, which leaves the word as it was,
/// and A's CAS then sets `q` over B's failure; the three successes are skipped and the
/// failure stays in view. Also (each tried, as in the three models below): a failure over a
/// clean window that does not clear the bit (`Breaker::quiet_lost` a no-op), or that moves the
/// epoch only when `q` is set, or that does so before its own commit on the window word rather
/// than after; a loss whose compare-and-swap is relaxed, so that A, retrying after it, may read
/// the clean window from before B's commit; and a setter that loads the window word before the
/// state word (the epoch B moved is then the one A's CAS starts from).
#[test]
fn a_failure_over_a_forgetting_success_clears_the_quiet_bit() {
    check_against_model_with(
        2,
        rate(1.0, 3, 3),
        &[S, S, S, F, S, S],
        &[&[S], &[F]],
        &[S, S, S],
        call_through,
    );
}

/// A window of 3 with two successes, filling; thread A's success fills it clean and publishes
/// the quiet bit, while thread B records a failure, which may land on the window A just
/// filled. Then three successes through `call`, which age B's failure out in every order.
///
/// Checks that the window ends empty of failures, as every order leaves it.
///
/// Catches the same bugs as `a_failure_over_a_forgetting_success_clears_the_quiet_bit`, with
/// the bit published by the success that fills the window rather than one that forgets.
#[test]
fn a_failure_over_a_filling_success_clears_the_quiet_bit() {
    check_against_model_with(
        2,
        rate(1.0, 3, 3),
        &[S, S],
        &[&[S], &[F]],
        &[S, S, S],
        call_through,
    );
}

/// A run rule alone (3 failures), whose window starts clean and quiet; one failure recorded.
/// Thread A's success ends the run, so the window forgets the failure and A publishes the
/// bit, while thread B records a failure. Then a success and two failures through `call`:
/// in every order the success breaks the run before the last two failures, and the breaker
/// stays closed with a run of 2.
///
/// Catches the same bugs as `a_failure_over_a_forgetting_success_clears_the_quiet_bit`, on a
/// window without a rate rule: with the bit left set over B's failure, the success is skipped
/// and B's failure and the last two make a run of 3 that trips.
#[test]
fn a_failure_over_a_run_breaking_success_clears_the_quiet_bit() {
    const CONFIG: ModelConfig = ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(3),
        ..rate(1.0, 3, 3)
    };
    check_against_model_with(2, CONFIG, &[F], &[&[S], &[F]], &[S, F, F], call_through);
}

/// A run rule alone (2 failures), whose window starts clean at every closing. Thread A resets
/// the breaker, and the reset publishes the quiet bit of the new generation; thread B records
/// a failure, which lands in the old generation (and is dropped by the reset) or on the new
/// generation's clean window. Then a success and a failure through `call`: the success breaks
/// any run, and the breaker ends closed with a run of 1 in every order.
///
/// Catches the same bugs as `a_failure_over_a_forgetting_success_clears_the_quiet_bit`, with
/// the bit published by a closing (`Breaker::note_closing`): with the bit left set over B's
/// failure, the success is skipped and the last failure makes a run of 2 that trips.
#[test]
fn a_failure_after_a_reset_clears_the_quiet_bit_the_reset_published() {
    const CONFIG: ModelConfig = ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(2),
        ..rate(1.0, 3, 3)
    };
    check_against_model_with(2, CONFIG, &[], &[&[R], &[F]], &[S, F], call_through);
}

/// A run rule alone (2 failures), three threads: A resets the breaker, B records a failure and
/// C a success. A's reset swaps the state word to the new generation before it empties the
/// window, so C's success may find the old generation's window, clear it for the new one
/// (clean, with no rate rule to fill) and publish the quiet bit; B's failure may land on the
/// window C just cleared, between C's clearing and C's publish. C synchronized with A (through
/// the state word) but with nothing of B's. Then a success and a failure through `call`: the
/// success breaks any run, and the breaker ends closed with a run of 1 in every order.
///
/// Catches: a setter whose first load of the state word is relaxed
/// (`Breaker::publish_quiet`): C may then read the quiet epoch B's `quiet_lost` moved and
/// still the clean window word from before B's commit, and its CAS sets `q` over B's failure;
/// the success is skipped and the last failure makes a run of 2 that trips. The four models
/// above do not catch it, even with 5 preemptions. One preemption finds it here; the bound
/// stays at 1 because with three threads a bound of 2 takes over two minutes.
#[test]
fn a_failure_over_a_success_clearing_for_a_reset_clears_the_quiet_bit() {
    const CONFIG: ModelConfig = ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(2),
        ..rate(1.0, 3, 3)
    };
    check_against_model_with(1, CONFIG, &[], &[&[R], &[F], &[S]], &[S, F], call_through);
}

/// A run rule alone (2 failures), its window clean and quiet from the start. A call on the
/// main thread admitted under the quiet word waits, inside its body, for another thread's
/// failure to return, and then succeeds; then one more failure. The failure returned before
/// the success's call ended, so the success comes after it in every order, breaks the run,
/// and the breaker ends closed with a run of 1.
///
/// Catches: a success skipped on the word it was admitted under alone, without comparing the
/// state word after the call (`Breaker::is_quiet_since`): the success is placed before the
/// failure, which it followed, the two failures make a run, and the breaker trips.
#[test]
fn a_success_whose_call_spans_a_failure_goes_to_the_window() {
    check_a_success_spanning_a_failure(|breaker, body| breaker.call(body).is_ok());
}

/// `a_success_whose_call_spans_a_failure_goes_to_the_window` through `Breaker::call_async`.
///
/// Catches: `call_async` (and the tower service, which ends its permit the same way,
/// `Permit::record_unless_quiet`) skipping a success on the word it was admitted under alone:
/// the success is placed before the failure it followed, the two failures make a run, and the
/// breaker trips.
#[test]
fn an_async_success_whose_call_spans_a_failure_goes_to_the_window() {
    check_a_success_spanning_a_failure(|breaker, body| {
        loom::future::block_on(breaker.call_async(async { body() })).is_ok()
    });
}

/// A full window of 3, clean and quiet; thread A's failure lands on it, while thread B, all
/// through `call`, fails, succeeds twice and fails again. No order of the calls has three
/// failures in a row (B's two are two successes apart), so the breaker stays closed.
///
/// **Fails today: a known bug, not fixed yet** (README, "What it does not do (yet)"). A's
/// failure commits over the clean window and is preempted before it clears `q`. B's failure
/// then commits over the dirty window, and B's two successes, admitted under the quiet word,
/// are skipped: the invariant of `src/quiet.rs` places a skipped success before the failure
/// still clearing `q`, but these come after B's own failure, which comes after A's. B's second
/// failure finds three failures in a row and trips (loom: `Open`, which no order reaches).
/// A setter that read the window clean before A's commit can also set `q` inside A's window,
/// so clearing `q` only when a failure finds it set is not enough: a failure over a dirty
/// window would have to move the quiet epoch whenever a loss may still be pending. Found on
/// two threads by a probe (each failing one call in 200 on a window of 20, tripping within
/// seconds) and bisected to `26ec8d2`; missed by the models above, whose successes after the
/// race are all on one thread after both failures returned.
#[test]
#[ignore = "known bug: successes skipped after a failure over a dirty window while q is set (README)"]
fn a_failure_over_a_dirty_window_while_the_bit_is_set_clears_it() {
    check_against_model_with(
        2,
        rate(1.0, 3, 3),
        &[S, S, S],
        &[&[F], &[F, S, S, F]],
        &[],
        call_through,
    );
}

/// The body of the spanning call: another thread's failure, waited for, then `Ok`.
type SpanningBody<'a> = &'a dyn Fn() -> Result<(), ()>;

/// The model of the two above: `spanning` makes a call through `breaker` with the body it is
/// given, and says whether it went through.
fn check_a_success_spanning_a_failure(
    spanning: fn(&Breaker<ManualClock>, SpanningBody<'_>) -> bool,
) {
    const CONFIG: ModelConfig = ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(2),
        ..rate(1.0, 3, 3)
    };
    let allowed = model_finals(CONFIG, &[F, S, F], &[], &[]);
    check(2, move || {
        let (breaker, _clock) = from_model(&CONFIG, 2);
        let body = || {
            let failing = {
                let breaker = Arc::clone(&breaker);
                loom::thread::spawn(move || call_through(&breaker, F))
            };
            failing.join().unwrap();
            Ok(())
        };
        assert!(spanning(&breaker, &body), "admitted while closed");
        call_through(&breaker, F);
        assert_reached(&allowed, &breaker);
    });
}
