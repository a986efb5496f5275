//! The probe timeout: a call that finds every probe place taken, and the newest probe out
//! longer than the timeout, opens the breaker again. Raced by the probes' own admissions and
//! verdicts.

#![cfg(loom)]

mod common;

use common::{
    Events, OPEN, Role, check, check_each_order, small, small_for_owned_permits, spawn_in,
    trip_and_wait,
};
use hotbreaker::testing::assert_one_chain;
use hotbreaker::{Breaker, ManualClock, Rejected, State, Transition, Trigger};
use loom::sync::Arc;

/// What the prober thread ended with: the generation of the second probe, if it got one.
type SecondProbe = Option<u32>;

/// A breaker that trips at one failure and gives up on probes out longer than `OPEN`, tripped
/// and at the end of its open period (the next call is the first probe), announcing its
/// transitions to `events`.
fn at_the_first_probe(events: &Events) -> (Arc<Breaker<ManualClock>>, ManualClock) {
    let (breaker, clock) = small(|b| {
        b.consecutive_failures(1)
            .probe_timeout(OPEN)
            .on_transition(events.listener())
    });
    trip_and_wait(&breaker, &clock);
    (breaker, clock)
}

/// The transitions `events` saw, checked to chain, and the reopening for timed-out probes
/// among them, of which there is at most one.
fn the_reopening(events: &Events) -> (Vec<Transition>, Option<Transition>) {
    let mut transitions = events.take();
    assert_one_chain(&mut transitions);
    let reopened: Vec<Transition> = transitions
        .iter()
        .filter(|t| t.trigger == Trigger::ProbesTimedOut)
        .copied()
        .collect();
    assert!(reopened.len() <= 1, "{transitions:?}");
    (transitions, reopened.first().copied())
}

/// One probe place. Thread A asks for a probe, lets it stay out past the timeout (moves the
/// clock by twice it), ends it without a verdict, and asks for a second probe, which it keeps
/// out. Thread B asks once, at any point of that: it may take the first probe itself, find
/// the place taken by a probe still young, find the first probe overdue and open the breaker
/// again, take the freed place, or find the second, young, probe out.
///
/// Checks that a second probe granted to A in half-open generation `g` is never followed by a
/// reopening out of `g` for a timed-out probe (its probe was young), that a call which
/// reopened is rejected as open for a full period, and that the transitions chain.
///
/// Catches: a reopening whose compare-and-swap is from a word that looks the same after a
/// probe ended and another was admitted (no seal on the newest-probe word, which alone now
/// covers this, and no admission count in the state word either: B read the first probe out
/// and overdue, A ended it and was admitted again, and B's swap still succeeded); and an
/// admission that records its time after its swap rather than before (B saw the second probe
/// counted out, read the first one's time, and reopened).
#[test]
fn a_young_probe_is_never_given_up_on() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = at_the_first_probe(&events);

        let prober: Role<(SecondProbe, Option<Rejected>)> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(first) = breaker.try_acquire() else {
                    return (None, None); // B took the first probe
                };
                clock.advance(2 * OPEN);
                first.ignore();
                match breaker.try_acquire() {
                    Ok(second) => {
                        let generation = second.generation();
                        std::mem::forget(second); // kept out
                        (Some(generation), None)
                    }
                    Err(rejected) => (None, Some(rejected)),
                }
            })
        };
        let caller: Role<(SecondProbe, Option<Rejected>)> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    std::mem::forget(permit); // a probe, kept out
                    (None, None)
                }
                Err(rejected) => (None, Some(rejected)),
            })
        };
        let results = spawn_in(order, vec![prober, caller]);
        let (second, _) = results[0];
        let (_, caller_rejected) = results[1];

        let (transitions, reopening) = the_reopening(&events);
        if let (Some(generation), Some(reopening)) = (second, reopening) {
            assert_ne!(
                reopening.generation,
                generation.wrapping_add(1),
                "gave up on the probe of generation {generation}, admitted young: {transitions:?}"
            );
        }
        if let Some(reopening) = reopening {
            assert_eq!(reopening.open_for, Some(OPEN));
            let rejected = caller_rejected.expect("only B's call can find the probe overdue");
            assert_eq!(
                (rejected.state(), rejected.retry_after()),
                (State::Open, Some(OPEN)),
                "the call that reopened is rejected for a full period"
            );
        }
    });
}

/// What the prober thread of the model below ended with: the generations of the probes it was
/// granted after its first one ended (young probes), and its last rejection, if any.
type YoungProbes = (Vec<u32>, Option<Rejected>);

/// One probe place, and the admission count narrowed to 1 bit (`state.rs`): two probes that end
/// and are admitted again bring the half-open word back bit for bit. Thread A asks for a
/// probe, lets it stay out past the timeout (moves the clock by twice it), then twice ends its
/// probe without a verdict and asks for another, keeping the last one out: every probe after
/// the first is young. Thread B asks once, at any point of that: it may take the first probe
/// itself, take a freed place, find a young probe out, or find the first probe overdue and
/// decide to open the breaker again, with A's two re-admissions falling anywhere between that
/// decision and its compare-and-swap.
///
/// Checks that no young probe granted to A in half-open generation `g` is followed by a
/// reopening out of `g` for timed-out probes, even when the state word is back to the one the
/// reopening decided on; that the call which reopened is rejected as open for a full period;
/// that the transitions chain; and that a breaker left half-open with a free place admits the
/// next call.
///
/// Catches (each injected and seen to fail here): a reopening whose compare-and-swap is from
/// the word it decided on with nothing else (B decided, A's two re-admissions brought the word
/// back, and B's swap succeeded: the bug the 6-bit count hides until 64 admissions; with the
/// count 6 bits wide under loom too, this model passes it); a reopening that checks the newest
/// probe's word unchanged just before its swap instead of sealing it (A's re-admissions fell
/// between B's check and B's swap); a seal from whatever the newest probe's word holds rather
/// than from the time decided on (A's re-admission recorded first, B sealed it); an admission
/// that goes ahead on a sealed word (B sealed, A's probe ended and a young one took its place,
/// and B's swap from the word as it then stood gave up on it); and a sealing call that gives
/// up when the word has changed since it sealed (the seal left behind, the freed place turned
/// every call away).
#[test]
fn a_word_back_bit_for_bit_does_not_hide_a_young_probe() {
    check_each_order(2, 2, |order| {
        let events = Events::default();
        let (breaker, clock) = at_the_first_probe(&events);

        let prober: Role<YoungProbes> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(first) = breaker.try_acquire() else {
                    return (Vec::new(), None); // B took the first probe
                };
                clock.advance(2 * OPEN);
                let mut probe = first;
                let mut young = Vec::new();
                for _ in 0..2 {
                    probe.ignore();
                    match breaker.try_acquire() {
                        Ok(next) => {
                            young.push(next.generation());
                            probe = next;
                        }
                        Err(rejected) => return (young, Some(rejected)),
                    }
                }
                std::mem::forget(probe); // kept out
                (young, None)
            })
        };
        let caller: Role<YoungProbes> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    std::mem::forget(permit); // a probe, kept out
                    (Vec::new(), None)
                }
                Err(rejected) => (Vec::new(), Some(rejected)),
            })
        };
        let mut results = spawn_in(order, vec![prober, caller]);
        let (_, caller_rejected) = results.pop().expect("the caller's result");
        let (young, _) = results.pop().expect("the prober's result");

        let (transitions, reopening) = the_reopening(&events);
        // No seal is left behind: a free place in half-open admits the next call.
        let m = breaker.metrics();
        if m.state == State::HalfOpen && m.probes_out == 0 {
            let probe = breaker.try_acquire().expect("a free probe place admits");
            std::mem::forget(probe);
        }
        if let Some(reopening) = reopening {
            for generation in &young {
                assert_ne!(
                    reopening.generation,
                    generation.wrapping_add(1),
                    "gave up on a probe of generation {generation}, admitted young: \
                     {transitions:?}"
                );
            }
            assert_eq!(reopening.open_for, Some(OPEN));
            let rejected = caller_rejected.expect("only B's call can find the probe overdue");
            assert_eq!(
                (rejected.state(), rejected.retry_after()),
                (State::Open, Some(OPEN)),
                "the call that reopened is rejected for a full period"
            );
        }
    });
}

/// One probe place. Thread B takes the probe, lets it stay out past the timeout, ends it
/// without a verdict, and asks again. Thread A asks once, at any point of that: when it finds
/// the probe overdue it seals the half-open period and opens the breaker again, and it may be
/// preempted between its seal and its swap.
///
/// Checks that B's second call is turned away as half-open only when A holds the place: a
/// call that finds a free place in a sealed period finishes the opening itself (rejected as
/// open) rather than wait on the sealer.
///
/// Catches: an admission that finds its period sealed and is rejected as half-open (tried: B's
/// second call is turned away with the place free and A off the CPU between its seal and its
/// swap; for as long as A stays there, every call is).
#[test]
fn a_call_that_meets_a_seal_does_not_wait_on_the_sealer() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).probe_timeout(OPEN));
        trip_and_wait(&breaker, &clock);
        let sealer: Role<(bool, Option<State>)> = {
            let breaker = breaker.clone();
            Box::new(move || match breaker.try_acquire() {
                Ok(permit) => {
                    std::mem::forget(permit); // holds the place
                    (true, None)
                }
                Err(_) => (false, None),
            })
        };
        let prober: Role<(bool, Option<State>)> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(first) = breaker.try_acquire() else {
                    return (false, None); // the other thread took the probe
                };
                clock.advance(2 * OPEN);
                first.ignore();
                match breaker.try_acquire() {
                    Ok(second) => {
                        std::mem::forget(second);
                        (true, None)
                    }
                    Err(rejected) => (false, Some(rejected.state())),
                }
            })
        };
        let results = spawn_in(order, vec![sealer, prober]);
        let (sealer_admitted, second_call) = (results[0].0, results[1].1);
        if second_call == Some(State::HalfOpen) {
            assert!(
                sealer_admitted,
                "turned away as half-open with the place free: {:?}",
                breaker.metrics()
            );
        }
    });
}

/// One probe place, and two callers. Thread A asks for a probe, lets it stay out past the
/// timeout (moves the clock by twice it), and ends it without a verdict. Threads B and C each
/// ask once, at any point of that, and keep a probe they are granted out: either may take the
/// first probe (half-opening the breaker), find A's probe young or overdue (sealing the period
/// to open the breaker again), meet the seal, or take the place A freed (a young probe: A's
/// ended after the clock moved); and either may read the breaker as it stood before A
/// half-opened it (open, its period over), nothing of A's yet visible to it, and so try to
/// half-open it itself.
///
/// Checks that a probe granted to a caller in the half-open generation `g` of A's probe
/// (young) is never followed by a reopening out of `g` for timed-out probes, with a third
/// thread's outdated half-opening in the race; that a reopening is the rejection of a caller,
/// as open for a full period; and that the transitions chain.
///
/// Catches (each injected and seen to fail here, alone or together): the newest-probe word
/// read with `Relaxed` rather than `Acquire` in `NewestProbe::record`, in its first load or in
/// its compare-and-swap's failure ordering. A half-opened into `g`, moved the clock and ended
/// its probe; B found that probe out and overdue, sealed `g`, and was preempted before its
/// swap. C, with nothing of A's visible to it, read the open word of `g - 1` and, half-opening
/// into `g` as well, found B's seal in the newest-probe word (by its first load, or by its
/// swap's failure after that load read the word as it stood before A's probe) without
/// synchronizing with B: its re-read of the state word could still return the open word of
/// `g - 1`, its admission looked possible, and it wrote its time over the seal. Its own swap
/// then failed on the half-open word A's end left, with the place free, and C was admitted
/// into `g` as a young probe; B's swap, from the word as it then stood, gave up on it.
///
/// Bound 1: that needs one preemption (B's, between its seal and its swap: C reads stale
/// words rather than running early), and three threads at bound 2 take minutes.
#[test]
fn an_outdated_half_opener_does_not_undo_a_seal() {
    check_each_order(1, 3, |order| {
        let events = Events::default();
        let (breaker, clock) = at_the_first_probe(&events);

        // A's role: the generation of its probe, if it got one; the callers': theirs.
        let prober: Role<Result<u32, Rejected>> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let first = breaker.try_acquire()?;
                let generation = first.generation();
                clock.advance(2 * OPEN);
                first.ignore();
                Ok(generation)
            })
        };
        let caller = || -> Role<Result<u32, Rejected>> {
            let breaker = breaker.clone();
            Box::new(move || {
                let permit = breaker.try_acquire()?;
                let generation = permit.generation();
                std::mem::forget(permit); // a probe, kept out
                Ok(generation)
            })
        };
        let results = spawn_in(order, vec![prober, caller(), caller()]);

        let (transitions, reopening) = the_reopening(&events);
        let Some(reopening) = reopening else {
            return;
        };
        if let Ok(generation) = results[0] {
            // A caller's probe of A's generation was admitted after A's ended: young.
            assert!(
                !(results[1..].contains(&Ok(generation))
                    && reopening.generation == generation.wrapping_add(1)),
                "gave up on a caller's probe of generation {generation}, admitted young: \
                 {results:?} {transitions:?}"
            );
        }
        assert_eq!(reopening.open_for, Some(OPEN));
        let full_period = |result: &Result<u32, Rejected>| {
            result
                .as_ref()
                .is_err_and(|r| r.state() == State::Open && r.retry_after() == Some(OPEN))
        };
        assert!(
            results[1..].iter().any(full_period),
            "a caller reopened, and is rejected for a full period: {results:?}"
        );
    });
}

/// Moves `clock` past every probe's timeout, and checks that a breaker left half-open with
/// every probe place taken is opened again by the next call.
fn every_probe_out_overdue_is_given_up_on(breaker: &Breaker<ManualClock>, clock: &ManualClock) {
    clock.advance(2 * OPEN);
    let m = breaker.metrics();
    if m.state == State::HalfOpen && m.probes_out > 0 {
        let Err(rejected) = breaker.try_acquire() else {
            panic!("every probe place is taken");
        };
        assert_eq!(
            rejected.state(),
            State::Open,
            "every probe out is overdue, yet not given up on"
        );
    }
}

/// One probe place. Thread B asks once, at the end of the open period: it may half-open the
/// breaker itself, or stall between reading the state and recording its admission. Thread A
/// takes the first probe, fails it (the breaker opens again), waits out that period and takes
/// the next probe, which it keeps out. Afterwards every probe out is overdue.
///
/// Checks that a breaker left half-open with every probe place taken, once all its probes are
/// past the timeout, is opened again by the next call: the newest probe's time of the current
/// half-open generation is still there, not replaced by a stalled admission of an older one.
///
/// Catches: an admission whose compare-and-swap on the newest-probe word does not release
/// (`Acquire` instead of `AcqRel`): B, stalled, loads A's time of half-open `g + 3` with no
/// order to A's transitions, re-reads the state as the open word of `g` it acted on, and
/// writes its own time of `g + 1` over A's; B's swap then fails, and `g + 3`'s probe, with no
/// time recorded, is never given up on.
#[test]
fn a_stalled_half_opener_leaves_a_later_probe_time_alone() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).probe_timeout(OPEN));
        trip_and_wait(&breaker, &clock);
        let prober: Role<()> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                let Ok(first) = breaker.try_acquire() else {
                    return; // B took the first probe
                };
                first.failure(); // open again
                clock.advance(OPEN);
                if let Ok(second) = breaker.try_acquire() {
                    std::mem::forget(second); // kept out
                }
            })
        };
        let stalled: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                if let Ok(permit) = breaker.try_acquire() {
                    std::mem::forget(permit); // a probe, kept out
                }
            })
        };
        spawn_in(order, vec![prober, stalled]);

        every_probe_out_overdue_is_given_up_on(&breaker, &clock);
    });
}

/// One probe place, closed. Thread B asks once and fails its call: it may trip the breaker
/// itself, or stall on the way, between reading the closed state and its swap, in the
/// newest-probe word's forgetting. Thread A asks, fails its call, waits out the period and
/// takes the first probe, which it keeps out. Afterwards every probe out is overdue.
///
/// Checks that a breaker left half-open with every probe place taken, once all its probes are
/// past the timeout, is opened again by the next call: the half-open generation's probe time
/// is still there, not replaced by a stalled trip's forgetting.
///
/// Catches: a trip that forgets the newest-probe word with a store after its re-read of the
/// state (or a compare-and-swap from a value loaded after that re-read) rather than from the
/// value it loaded before: B, stalled after finding the state still closed, writes its open
/// generation's tag over A's probe time of the half-open generation after it, and that probe,
/// with no time recorded, is never given up on.
#[test]
fn a_stalled_trip_leaves_a_later_probe_time_alone() {
    check_each_order(2, 2, |order| {
        let (breaker, clock) = small(|b| b.consecutive_failures(1).probe_timeout(OPEN));
        let prober: Role<()> = {
            let (breaker, clock) = (breaker.clone(), clock.clone());
            Box::new(move || {
                if let Ok(call) = breaker.try_acquire() {
                    call.failure(); // trips, unless B did
                }
                clock.advance(OPEN);
                if let Ok(probe) = breaker.try_acquire() {
                    std::mem::forget(probe); // kept out
                }
            })
        };
        let stalled: Role<()> = {
            let breaker = breaker.clone();
            Box::new(move || {
                if let Ok(call) = breaker.try_acquire() {
                    call.failure();
                }
            })
        };
        spawn_in(order, vec![prober, stalled]);

        every_probe_out_overdue_is_given_up_on(&breaker, &clock);
    });
}

/// One probe place, the probe out past the timeout. Its success races a call that finds it
/// overdue: in order, either the success closes the breaker and the call is admitted (closed,
/// not a probe), or the call gives the probe up, opening the breaker again and rejected as
/// open, and the success is of a generation gone. Each transition is counted once.
///
/// Catches: a call that decided to give the probe up, lost its compare-and-swap to the
/// success's closing, and was rejected as "half-open, probes out" from a closed breaker
/// (rather than deciding again from the word as it then stood).
#[test]
fn a_late_success_races_the_call_that_gives_its_probe_up() {
    check(3, || {
        let (breaker, clock) = small_for_owned_permits(|b| b.consecutive_failures(1).probe_timeout(OPEN));
        trip_and_wait(&breaker, &clock);
        let probe = breaker.try_acquire_owned().expect("the probe");
        clock.advance(2 * OPEN);
        let succeeding = loom::thread::spawn(move || probe.success());
        let asked = breaker.try_acquire_owned();
        succeeding.join().unwrap();
        let m = breaker.metrics();
        match asked {
            Ok(permit) => {
                assert!(!permit.is_probe(), "{m:?}");
                assert_eq!((m.state, m.openings, m.closings), (State::Closed, 1, 1), "{m:?}");
            }
            Err(rejected) => {
                assert_eq!(rejected.state(), State::Open, "{m:?}");
                assert_eq!((m.state, m.openings, m.closings), (State::Open, 2, 0), "{m:?}");
            }
        }
    });
}
