//! The quiet bit (`src/quiet.rs`): while the state word says the window is clean, a success
//! through `Breaker::call` (or `call_async`, or the tower service) skips the window. The first
//! five models race a failure that lands on a clean window against a success or a reset that
//! makes the window clean and publishes the bit, then run more calls through `call` on one
//! thread: if the bit were left set over a dirty window, those successes would be skipped and
//! the failure would stay in view. The next two have a success whose call spans a failure,
//! through `call` and through `call_async`. The next three race a failure over a clean window
//! against another thread's calls that come after it (through the window, through a setter
//! that read the window before it, or through another failure whose loss ends and publishes
//! after it). In all of these the end must be one the sequential reference model reaches for
//! some interleaving (as in `window.rs`). The last three check that the bit comes back once
//! the window is clean again, which no outcome shows: after a loss in the same generation, and
//! after a loss whose generation a reset ended.
//!
//! Most models here run at three preemptions, one more than most models in this crate: the
//! bit's orderings have needed three to show (a relaxed decrement, a relaxed state load), and
//! at three those take 21 s together on a 2-core machine. One runs at one: it catches its bug
//! with one, and takes minutes at two. The two with a reset run at two, which catches theirs.

#![cfg(loom)]

mod common;

use common::{
    F, R, S, assert_reached, call_through, check, check_against_model_with, check_each_order,
    from_model, making_with, model_finals, rate, run_rule, spawn_in,
};
use hotbreaker::testing::{ModelConfig, is_quiet};
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
        3,
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
        3,
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
    const CONFIG: ModelConfig = run_rule(3);
    check_against_model_with(3, CONFIG, &[F], &[&[S], &[F]], &[S, F, F], call_through);
}

/// A run rule alone (2 failures), whose window starts clean at every closing. Thread A resets
/// the breaker, and the reset publishes the quiet bit of the new generation; thread B records
/// a failure, which lands in the old generation (and is dropped by the reset) or on the new
/// generation's clean window. Then a success and a failure through `call`: the success breaks
/// any run, and the breaker ends closed with a run of 1 in every order.
///
/// Catches the same bugs as `a_failure_over_a_forgetting_success_clears_the_quiet_bit`, with
/// the bit published by a closing (`Breaker::publish_quiet` after the swap): with the bit left
/// set over B's failure, the success is skipped and the last failure makes a run of 2 that
/// trips.
#[test]
fn a_failure_after_a_reset_clears_the_quiet_bit_the_reset_published() {
    const CONFIG: ModelConfig = run_rule(2);
    check_against_model_with(3, CONFIG, &[], &[&[R], &[F]], &[S, F], call_through);
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
    const CONFIG: ModelConfig = run_rule(2);
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
/// Catches (tried, each, `Open` at the end): a failure over a clean window that clears `q`
/// only after its commit, as `quiet_lost` did before `quiet_losing` existed. A's failure
/// commits and is preempted before it clears the bit; B's failure commits over the dirty
/// window, and B's two successes, admitted under the quiet word, are skipped, though they
/// come after B's failure and so after A's. B's second failure then finds three in a row.
/// Found on two threads by a probe (each failing one call in 200 on a window of 20, tripping
/// within milliseconds), missed by the models above, whose successes after the race are all
/// on one thread after both failures returned. Also the inline failure path committing over
/// a clean word without the loss begun (`record_failure_in_full` taking a clean word whatever
/// `quiet_loss_begun` says).
#[test]
fn a_failure_over_a_dirty_window_while_another_leaves_it_clean_is_not_skipped() {
    check_against_model_with(
        3,
        rate(1.0, 3, 3),
        &[S, S, S],
        &[&[F], &[F, S, S, F]],
        &[],
        call_through,
    );
}

/// A full window of 3, one failure two successes old; thread A's success ages it out, so the
/// window forgets it and A publishes the quiet bit, while thread B fails, succeeds, and fails
/// twice more, all through `call`. B's success comes between its first failure and its last
/// two in every order, so no three calls in a row fail and the breaker stays closed.
///
/// Catches (tried, `Open` at the end): a setter that does not ask whether a loss is under
/// way (`Breaker::publish_quiet` without its load of `quiet_losses`). A loads the state word
/// after B's failure began its loss (the epoch moved already), then the window, still clean
/// before B's commit, and its CAS sets `q` over B's failure: B's success, admitted under the
/// quiet word after B's failure returned, is skipped, and B's three failures are in a row.
/// Also (tried, the same end) a loss that takes its one back from the count with a relaxed
/// `fetch_sub` (`Breaker::quiet_lost`): A reads the count at 0 after B's commit, and then the
/// window from before it. That takes three preemptions (B's loss begun, A up to its fence, B's
/// commit and decrement, A's count, window and CAS), hence this model's bound; at two every
/// interleaving passes with the relaxed decrement.
#[test]
fn a_setter_that_read_the_window_clean_before_a_failure_does_not_set_the_bit_over_it() {
    check_against_model_with(
        3,
        rate(1.0, 3, 3),
        &[S, S, S, F, S, S],
        &[&[S], &[F, S, F, F]],
        &[],
        call_through,
    );
}

/// A run rule alone (2 failures), its window clean and quiet from the start. Thread A fails
/// over the clean window; thread B succeeds, which may end A's run and forget it, and then
/// fails over the window it may have made clean. Then one success through `call`, which
/// ends every run but the one the last two failures make.
///
/// Catches (tried, `Closed` with a run of 1 at the end): `Breaker::publish_quiet`'s first load
/// of the state word relaxed. A's loss ends, fences, and, publishing, reads the state word B's
/// loss wrote, without synchronizing with it: its load of the count may then miss B's one
/// (it reads its own decrement's 0), and its loads of the window the commit that followed
/// (they read B's forgetting). A's CAS sets `q` over B's failure, and the last success is
/// skipped. Every other setter fences between that load and the count's, which orders them
/// anyway; the loss fences before it.
#[test]
fn a_loss_that_publishes_after_another_loss_began_does_not_set_the_bit_over_it() {
    check_against_model_with(3, run_rule(2), &[], &[&[F], &[S, F]], &[S], call_through);
}

/// A run rule alone (2 failures), its window clean and quiet from the start. Thread A fails,
/// while thread B succeeds. If B's success comes after A's failure it ends the run, and the
/// window forgets it: then every window is clean, and the quiet bit must end set, whoever
/// sets it. B's success may find A's loss still under way and leave the bit to A's
/// `quiet_lost`; A may then read the window word before B's forgetting. If B's success comes
/// first, A's failure is in view at the end, and the bit is off.
///
/// Checks: the bit is set at the end exactly when the window holds no failure.
///
/// Catches (tried, the bit off over a clean window): either SeqCst fence of `quiet.rs` left
/// out (`quiet_lost`'s after its decrement, or `publish_quiet`'s before its load of the
/// count): B reads the count A had not yet taken back, and A reads the window from before
/// B's forgetting.
#[test]
fn the_bit_comes_back_when_a_success_cleans_the_window_during_a_loss() {
    const CONFIG: ModelConfig = run_rule(2);
    check_each_order(3, 2, |order| {
        let (breaker, _clock) = from_model(&CONFIG, 2);
        assert!(is_quiet(&breaker), "no window to fill");
        spawn_in(order, making_with(&breaker, &[&[F], &[S]], call_through));
        let metrics = breaker.metrics();
        assert_eq!(
            is_quiet(&breaker),
            metrics.consecutive_failures == 0,
            "the bit says whether the window is clean: {metrics:?}"
        );
    });
}

/// A run rule alone (2 failures), its window clean and quiet from the start. Thread A fails
/// over the clean window, a loss of the bit; thread B resets the breaker, which starts a new
/// generation with a clean window and publishes its bit. Then the main thread makes three
/// successes through `call`. In every order the window of the last generation ends clean (A's
/// failure is dropped with the old generation, or lands in the new one, where the first
/// success forgets it), so the bit must end set.
///
/// Catches (tried, the bit off over a clean window): `quiet_lost` publishing for the loss's
/// own generation. B's publishing finds A's loss under way and leaves the bit to it; A's ends
/// and looks at its generation, which the reset ended; nobody sets the new generation's bit,
/// and successes over a clean window never publish.
#[test]
fn a_loss_of_an_ended_generation_sets_the_bit_of_the_next() {
    const CONFIG: ModelConfig = run_rule(2);
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = from_model(&CONFIG, 2);
        assert!(is_quiet(&breaker), "no window to fill");
        spawn_in(order, making_with(&breaker, &[&[F], &[R]], call_through));
        for _ in 0..3 {
            call_through(&breaker, S);
        }
        let metrics = breaker.metrics();
        assert_eq!(metrics.consecutive_failures, 0, "{metrics:?}");
        assert!(
            is_quiet(&breaker),
            "the window is clean in the current generation, the bit is off: {metrics:?}"
        );
    });
}

/// The same, with a success as the setter the old loss holds off: thread A fails over the
/// clean window of the first generation; thread B resets the breaker, then fails and succeeds
/// in the next (its success ends its run, and the window forgets it, clean again). Then the
/// main thread succeeds once more. In every order that leaves the breaker closed (A's failure
/// landing next to B's in the new generation trips it) the window ends clean, and the bit must
/// end set.
///
/// Catches (tried): the same as the model above, through the cleaning success's publishing
/// instead of the reset's.
#[test]
fn a_loss_of_an_ended_generation_sets_the_bit_a_cleaning_success_left_to_it() {
    const CONFIG: ModelConfig = run_rule(2);
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = from_model(&CONFIG, 2);
        spawn_in(order, making_with(&breaker, &[&[F], &[R, F, S]], call_through));
        call_through(&breaker, S);
        let metrics = breaker.metrics();
        if metrics.state != hotbreaker::State::Closed {
            return;
        }
        assert_eq!(metrics.consecutive_failures, 0, "{metrics:?}");
        assert!(
            is_quiet(&breaker),
            "the window is clean in the current generation, the bit is off: {metrics:?}"
        );
    });
}

/// The body of the spanning call: another thread's failure, waited for, then `Ok`.
type SpanningBody<'a> = &'a dyn Fn() -> Result<(), ()>;

/// The model of the two above: `spanning` makes a call through `breaker` with the body it is
/// given, and says whether it went through.
fn check_a_success_spanning_a_failure(
    spanning: fn(&Breaker<ManualClock>, SpanningBody<'_>) -> bool,
) {
    const CONFIG: ModelConfig = run_rule(2);
    let allowed = model_finals(CONFIG, &[F, S, F], &[], &[]);
    check(3, move || {
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
