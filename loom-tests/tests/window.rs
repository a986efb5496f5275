//! The failure window under concurrent verdicts: each model ends where the sequential reference
//! model ends for some interleaving of the threads' calls (see `common::check_against_model`).

#![cfg(loom)]

mod common;

use common::{
    F, Maker, OPEN, R, Role, S, assert_reached, call_through, check, check_against_model,
    check_each_order, from_model, make, make_through_permits, model_finals, rate, run_rule, small,
    spawn_in, success_then_failure,
};
use hotbreaker::State;
use hotbreaker::testing::ModelConfig;

/// A full window holding one failure; one thread's successes age it out while another thread
/// records a failure.
///
/// Catches: an aging success counted where a concurrent failure does not see it (or seen
/// twice), so that the failure is placed wrong and the window afterwards holds a failure
/// count, call count or run that no order of the calls gives; and a forgetting step that
/// clears the window over a failure it did not see.
#[test]
fn aging_successes_race_a_failure() {
    const CONFIG: ModelConfig = ModelConfig {
        consecutive_failures: Some(3),
        ..rate(1.0, 3, 3)
    };
    check_against_model(2, CONFIG, &[S, S, F], &[&[S, S], &[F, S]], &[]);
}

/// Three threads, one success or failure each, on a full window holding one failure: two of
/// them count in stripes of their own, the third in the shared stripe.
///
/// Catches the same bugs as `aging_successes_race_a_failure` where the counts come from both
/// kinds of stripe.
#[test]
fn aging_across_owned_and_shared_stripes() {
    const CONFIG: ModelConfig = ModelConfig {
        consecutive_failures: Some(2),
        ..rate(1.0, 3, 3)
    };
    check_against_model(2, CONFIG, &[S, F, S], &[&[S], &[S], &[F]], &[F]);
}

/// The window fills while two threads record; the call that completes the minimum is judged
/// there, whichever thread makes it, and a success can be that call.
///
/// Catches: a filling success that does not change the window word (no tick): a failure that
/// counted the successes before it arrived still commits, both believe they were not the call
/// that completed the window, and the judgement due at the minimum is skipped (or made
/// twice). Also a success position taken from a stale count.
#[test]
fn the_filling_window_is_judged_like_the_model() {
    check_against_model(2, rate(0.6, 3, 3), &[], &[&[F, S], &[F, S]], &[]);
}

/// The smallest form of the same: window 2, a failure and a success race to fill it, and
/// either order trips.
///
/// Catches the same bugs as above, in a model small enough to explore with more preemptions.
#[test]
fn a_filling_success_trips_when_it_completes_the_window() {
    check_against_model(3, rate(0.5, 2, 2), &[], &[&[F], &[S]], &[]);
}

/// A minimum below the window's size (2 of 4): a failure and a success race to make the
/// minimum, and either order trips (1 failure of 2 calls meets 0.5), the success too when it
/// is the second call, though the window is far from full.
///
/// Catches: a filling success judged only when it fills the window, not when it completes
/// the minimum (`record_filling_success`'s `position + 1 == minimum_calls`; tried: F then S
/// leaves the breaker closed). The models above all have the minimum at the window's size,
/// where the two coincide.
#[test]
fn a_filling_success_trips_when_it_completes_the_minimum() {
    check_against_model(2, rate(0.5, 4, 2), &[], &[&[F], &[S]], &[]);
}

/// A full window (3 calls) whose one failure the next success ages out, which turns the window
/// clean, while another thread records a success and then a failure; then one more failure.
///
/// Catches: a forgetting step (dirty -> clean) that is not a compare-and-swap from the word it
/// judged, or that reads the success count before the word (both tried): it marks the window
/// clean over the new failure, which is lost. With a window of 3 and one call after, a lost
/// failure leaves a window that no order of the calls gives. The other thread's success is
/// what makes the second bug show: it lands between the forgetter's count and its load of the
/// word, so that the new failure's record counts one success more than the forgetter did.
/// Without it (a failure alone on that thread) the model missed that bug (found by mutating
/// the code). Also a failure into a dirty window that commits without first writing the
/// newest failure's record to the ring (tried in `Window::record_failure_in_full`; five
/// other models catch it too).
#[test]
fn forgetting_races_a_new_failure() {
    check_against_model(2, rate(1.0, 3, 3), &[F, S, S], &[&[S], &[S, F]], &[F]);
}

/// One failure recorded; then two threads each record a failure, which makes a run of three
/// that trips (a run rule alone).
///
/// Checks that the breaker ends open, as every order of the calls leaves it.
///
/// Catches: a failure that writes the record of the window's newest failure to the ring after
/// its own commit instead of before (point 4; tried in `Window::record_failure_in_full`). The
/// last committer looks two failures back, finds no record of the first yet, and misses the
/// run. No other model caught it.
#[test]
fn a_run_reads_the_record_its_predecessor_wrote_before_committing() {
    const CONFIG: ModelConfig = run_rule(3);
    check_against_model(2, CONFIG, &[F], &[&[F], &[F]], &[]);
}

/// `before` on the main thread; then the main thread's success races another thread's
/// failure; then `after` on the main thread. The end must be one the reference model reaches
/// for some order of the calls. The race is the main thread's so that its stripe is the one
/// `before` left. Every call is made through permits, and then, on a new breaker, through
/// `Breaker::call`: a permit's success asks the window word first, a call's whose state word
/// is not quiet asks its stripe first (`Window::ages_in_own_stripe`).
fn main_succeeds_while_another_fails(
    config: ModelConfig,
    before: &'static [common::Call],
    after: &'static [common::Call],
) {
    let allowed = model_finals(config, before, &[&[S], &[F]], after);
    for maker in [make_through_permits as Maker, call_through] {
        let allowed = allowed.clone();
        check(2, move || {
            let (breaker, _clock) = from_model(&config, 2);
            for &call in before {
                maker(&breaker, call);
            }
            let other = {
                let breaker = breaker.clone();
                loom::thread::spawn(move || maker(&breaker, F))
            };
            maker(&breaker, S);
            other.join().unwrap();
            for &call in after {
                maker(&breaker, call);
            }
            assert_reached(&allowed, &breaker);
        });
    }
}

/// Generation `g`'s record of failure 1 left in the ring (`F S F F`: failure 2's commit
/// copies failure 1's record, one success before it); two resets reach generation `g + 2`,
/// whose tag is `g`'s under loom (1 bit). There: failures 0 and 1; then one thread succeeds
/// while another succeeds and fails twice. The first success forgets the two failures (a run
/// rule forgets after one success under loom), the next counts nothing (the window is clean),
/// and the last failure looks back two failures, to failure 1's slot.
///
/// Checks that the breaker ends where the reference model does for some order of the calls:
/// closed, with a run of two.
///
/// Catches: a forgetting that does not copy the newest failure's record to the ring before its
/// compare-and-swap (`Window::publish_before_forgetting`; tried: not at all, and after the
/// swap). The look-back then finds generation `g`'s record of failure 1, whose count of
/// successes before it equals the last failure's, takes the two failures for a run of three,
/// and trips.
#[test]
fn a_failure_after_a_forgetting_finds_the_forgotten_record_not_an_older_generations() {
    check_against_model(
        2,
        run_rule(3),
        &[F, S, F, F, R, R, F, F],
        &[&[S], &[S, F, F]],
        &[],
    );
}

/// The main thread's stripe still counts the last generation, with a hint that its next
/// check is a success away; in the new generation its success ages a failure while another
/// thread records one, and then one more failure follows.
///
/// Catches: an aging success that adds to its stripe's count without making sure the count
/// is this generation's (the quick path's one comparison must fail for another generation).
/// The success is then counted in the old generation, the new generation's three failures
/// look consecutive, and the breaker trips, which no order of the calls does.
#[test]
fn aging_on_a_stripe_left_by_the_last_generation() {
    const CONFIG: ModelConfig = rate(1.0, 3, 3);
    const BEFORE: &[common::Call] = &[S, S, S, F, S, R, S, S, S, F];
    const AFTER: &[common::Call] = &[F];
    main_succeeds_while_another_fails(CONFIG, BEFORE, AFTER);
}

/// The same stripe left by the last generation with its hint, but the new generation's window
/// still fills: the main thread's success races another thread's failure into it, and one
/// more failure fills it with two failures of three calls, which trips.
///
/// Catches: a success on its own stripe's path (`Window::ages_in_own_stripe`, which reads no
/// window word) that does not make sure the stripe counts this generation (tried: the count's
/// low half alone compared with the hint). The success is added to the last generation's
/// count instead of taking its number in the filling window, which then holds two calls, is
/// not full, and does not trip. The model above misses that form of the bug: its stripe's
/// hint is spent by a filling success before the race, and the window fills anyway.
#[test]
fn a_filling_success_on_a_stripe_left_by_the_last_generation() {
    const CONFIG: ModelConfig = rate(0.5, 3, 3);
    const BEFORE: &[common::Call] = &[S, S, S, F, S, R];
    const AFTER: &[common::Call] = &[F];
    main_succeeds_while_another_fails(CONFIG, BEFORE, AFTER);
}

/// Thread B resets the breaker twice (generations g and g + 1) and records a failure; thread
/// A records a failure with a permit it may take while generation g is current but its window
/// not yet cleared for it, so that A clears the window for g itself. Then one more failure.
///
/// Checks that the breaker ends as some order of the calls leaves it.
///
/// Catches: a clearing that does not check, after each load of the window word, that its
/// generation is still current (point 5; tried: A stalls between its check and its
/// compare-and-swap, B's resets and failure land, and A's retry empties the window of
/// generation g + 1, losing B's failure: the breaker ends closed where every order trips it).
#[test]
fn a_stalled_clearing_does_not_empty_a_later_generations_window() {
    check_against_model(2, rate(1.0, 2, 2), &[], &[&[R, R, F], &[F]], &[F]);
}

/// Two probes of one half-open period succeed at once (one success closes the breaker), and
/// the first probe's thread then fails a call of the new closed generation: a run of one, of
/// two that trip. (Either thread may find the breaker closed already: the first then calls as
/// usual, the second ignores its call.)
///
/// Checks that the breaker ends closed with that failure in its window.
///
/// Catches: a closing that empties the window before its compare-and-swap without checking,
/// after loading the window, that the state is still the one it will replace (point 7;
/// tried, emptying with a plain store: the second probe loads the half-open state and
/// stalls, the first closes and records its failure, and the second's late emptying loses
/// it, ending with a run of 0).
#[test]
fn a_closing_that_loses_the_race_does_not_empty_the_new_window() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(2).half_open_probes(2));
        for _ in 0..2 {
            breaker.try_acquire().expect("closed").failure();
        }
        assert_eq!(breaker.state(), State::Open);
        clock.advance(OPEN);
        // If the other probe closed the breaker already, this success comes before the
        // failure, and ends no run.
        let closer_then_failure = success_then_failure(&breaker);
        let other_closer: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let permit = breaker.try_acquire().expect("a place");
                if permit.is_probe() {
                    permit.success();
                } else {
                    permit.ignore(); // closed already: a success would end the other's run
                }
            })
        };
        spawn_in(order, vec![closer_then_failure, other_closer]);
        let metrics = breaker.metrics();
        assert_eq!(
            (
                metrics.state,
                metrics.consecutive_failures,
                metrics.closings
            ),
            (State::Closed, 1, 1),
            "{metrics:?}"
        );
    });
}

/// A reset races a thread that reads the window of the closed generation the reset ends.
///
/// Checks that while that generation is still current (the observer's permits before and
/// after its reading both belong to it), the window holds its failure.
///
/// Catches: a reset from closed that empties the window before its compare-and-swap as a
/// closing from half-open does (point 7; tried: the observer reads an empty window between
/// the reset's emptying and its transition, in a generation whose failure is still in view).
#[test]
fn a_reset_leaves_the_window_alone_until_its_generation_ends() {
    check_each_order(2, 2, |order| {
        let (breaker, _clock) = small(|b| b.consecutive_failures(2));
        breaker.try_acquire().expect("closed").failure();
        let resetter: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || breaker.reset())
        };
        let observer: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                let before = breaker.try_acquire().expect("closed").generation();
                let run = breaker.metrics().consecutive_failures;
                let after = breaker.try_acquire().expect("closed").generation();
                if before == 0 && after == 0 {
                    assert_eq!(run, 1, "generation 0 is current, and its failure in view");
                }
            })
        };
        spawn_in(order, vec![resetter, observer]);
        assert_eq!(breaker.metrics().consecutive_failures, 0, "reset");
    });
}

/// A failure of the first closed generation races `force_open` then `reset`, which close the
/// breaker in a generation with the same tag under loom; first with the filling window
/// empty, then after one success (its tick moved).
///
/// Checks that the failure counts in the final window exactly when its permit belongs to the
/// final generation.
///
/// Catches: a stalled failure whose CAS lands in the later generation's window because the
/// two words are alike (tried: success ticks seeded with the generation's high bits counting
/// up, so that one tick in generation 0 equals generation 2's seed, and an empty filling word
/// with no seed at all: each makes one of the two runs fail).
#[test]
fn a_stale_failure_does_not_land_in_a_later_filling_window_of_its_tag() {
    for successes_first in [0, 1] {
        check_each_order(2, 2, move |order| {
            let (breaker, _clock) = small(|b| b.failure_rate(1.0, 3));
            for _ in 0..successes_first {
                breaker.try_acquire().expect("closed").success();
            }
            let caller: Role<Option<u32>> = {
                let breaker = breaker.clone();
                Box::new(move || {
                    let permit = breaker.try_acquire().ok()?;
                    let generation = permit.generation();
                    permit.failure();
                    Some(generation)
                })
            };
            let resetter: Role<Option<u32>> = {
                let breaker = breaker.clone();
                Box::new(move || {
                    breaker.force_open(); // generation 1
                    breaker.reset(); // generation 2: the tag of 0 under loom
                    None
                })
            };
            let permit = spawn_in(order, vec![caller, resetter])[0];
            let metrics = breaker.metrics();
            assert_eq!(metrics.state, State::Closed);
            assert_eq!(
                metrics.window_failures,
                u32::from(permit == Some(2)),
                "permit of generation {permit:?}: {metrics:?}"
            );
        });
    }
}

/// Thread A records a success with a permit of the first closed generation, whose window is
/// filling: the success takes its number on the shared stripe. Thread B resets the breaker
/// (generation 1) and records a success, which makes the shared stripe count generation 1.
/// Then one failure: with B's success, the second call of a window of 2, at 50 %.
///
/// Checks that the breaker ends as some order of the calls leaves it (tripped: A's success
/// counts in generation 0, which the reset drops, or in generation 1, ahead of the failure).
///
/// Catches: a success that finds the shared stripe counting another generation and replaces
/// that count without re-reading the state word, taking the other generation to be older
/// (tried, as owned stripes may: A checks that generation 0 is current, stalls while B
/// resets and counts, then writes generation 0's count over generation 1's; B's success is
/// lost, the failure is the window's first call, and the breaker ends closed where every
/// order trips it). Also a stripe load, or the reload of a failed compare-and-swap, that is
/// not `Acquire` (tried, each alone): A reads B's count, then an old state word that still
/// says generation 0, and writes over it the same way.
#[test]
fn a_stale_success_does_not_replace_a_later_generations_shared_count() {
    check_against_model(2, rate(0.5, 2, 2), &[], &[&[S], &[R, S]], &[F]);
}

/// The main thread's stripe is at its turn to check whether the window can forget (two
/// failures aged out have left its count of generation `g` at 6 and its next check due at
/// 5), and it holds a permit of `g`. Another thread resets the breaker twice, to a
/// generation with `g`'s tag under loom, and fills its window with two successes and a
/// failure. Then the permit's success, and two more failures.
///
/// Checks that the breaker ends open. In every order the permit's success is counted before
/// the resets or is stale, and the new generation's last three calls are failures.
///
/// Catches: a success at its stripe's turn that does not check that its generation is still
/// current once the window's tag matches (`word_for`; tried, and before that in a shortcut
/// of its own). After the resets it finds the new generation's dirty window under its tag,
/// and its stripe's count of `g` ages that failure out, so the window turns clean and
/// forgets it. The two failures after it then trip nothing.
#[test]
fn a_stale_success_at_its_turn_does_not_forget_a_later_generations_failure() {
    const CONFIG: ModelConfig = rate(1.0, 3, 3);
    check(2, || {
        let (breaker, _clock) = from_model(&CONFIG, 2);
        for call in [S, S, S, F, S, S, S, F, S, S, S] {
            assert!(make(&breaker, call));
        }
        let permit = breaker.try_acquire().expect("closed");
        let other = {
            let breaker = breaker.clone();
            loom::thread::spawn(move || {
                for call in [R, R, S, S, F] {
                    assert!(make(&breaker, call));
                }
            })
        };
        // Let the other thread go first: loom's search, which compares each access only
        // with the last one to the same atomic, did not run the resets before this success
        // on its own (1 execution explored).
        loom::thread::yield_now();
        permit.success();
        other.join().unwrap();
        for _ in 0..2 {
            assert!(make(&breaker, F));
        }
        assert_eq!(breaker.state(), State::Open);
    });
}

/// One failure recorded; thread A records a failure while thread B records a success and then
/// a failure; then one more failure. Two failures in a row trip (a run rule alone).
///
/// Checks that the breaker ends open, as every order of the calls leaves it: the last failure
/// follows a failure in every order.
///
/// Catches: a failure that counts the successes before it loads the window word rather than
/// after (point 1; tried in `Window::record_failure_in_full`). A counts none, B's success and
/// failure commit, and A commits after B's failure with a count that misses B's success: its
/// record says a success came between B's failure and A's, which no order gives, and neither
/// A's failure nor the last one finds a run.
#[test]
fn a_failure_counts_the_successes_after_it_loads_the_window() {
    const CONFIG: ModelConfig = run_rule(2);
    check_against_model(2, CONFIG, &[F], &[&[F], &[S, F]], &[F]);
}

/// A window of 4 calls that trips at 100 %, so a ring of 4 failure records, holding one
/// failure; thread A records a failure while thread B records `F F S F F S F`. (A's failure
/// makes four in a row, and trips, only if it comes before B's first success.)
///
/// Checks that the breaker ends as some order of the calls leaves it.
///
/// Catches: a failure that writes the record of the window's newest failure to the ring
/// without first checking that the window word is still the one it loaded (`ring.rs`,
/// `publish`, skipping `still_current`; no other model caught it). A loads the word
/// while it holds failure 0 and stalls; B records failures 1 to 5, and failure 5 puts the
/// record of failure 4 in the slot failure 0's record had. A then finds that newer record
/// there and replaces it with failure 0's; its commit fails, and its retry writes failure 5's
/// record, to another slot, and commits failure 6. Failure 4, still in view (`F4 S F5 F6`),
/// has no record any more, and the window ends with two failures where that order leaves
/// three: `(Closed, (2, 4, 2), 0)`.
#[test]
fn a_stale_failure_does_not_overwrite_a_newer_record_in_the_ring() {
    check_against_model(
        2,
        rate(1.0, 4, 4),
        &[F],
        &[&[F], &[F, F, S, F, F, S, F]],
        &[],
    );
}
