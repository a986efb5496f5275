//! The breaker against the sequential reference model, on random configurations and operation
//! sequences: every admission, state, counter and window content must agree after every step.

use std::time::Duration;

use hotbreaker::Outcome;
use hotbreaker::testing::{
    Layout, ModelConfig, Op, Turns, run_differential, run_differential_counts,
    run_differential_laid_out,
};
use proptest::prelude::*;

fn threshold() -> impl Strategy<Value = f64> {
    prop_oneof![
        // Decimals where float products and quotients disagree (0.15 × 40 = 6.000000000000001).
        prop::sample::select(vec![
            0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.5, 0.6, 0.7, 0.75, 0.9, 1.0
        ]),
        (1u32..=1000).prop_map(|per_mille| f64::from(per_mille) / 1000.0),
    ]
}

/// A limit in nanoseconds, half the time a whole number of microseconds: the clock moves in
/// whole microseconds but for `AdvanceNanos`, and meets a limit exactly only on its grid.
fn limit_nanos() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..=60_000, (1u64..=60).prop_map(|micros| micros * 1000)]
}

fn config() -> impl Strategy<Value = ModelConfig> {
    let rate = prop::option::weighted(
        0.8,
        // A minimum of 0 leaves it unset: the builder's default, the window.
        (threshold(), 1u32..=24).prop_flat_map(|(t, w)| (Just(t), Just(w), 0..=w)),
    );
    (
        rate,
        prop::option::weighted(0.5, 1u32..=6),
        // Whole and fractional microseconds: the deadline rounds up to the next microsecond.
        (1_000u64..=60_000),
        1u32..=3,
        1u32..=3,
        // Sometimes a slow-call limit of a few of the clock's steps (Advance moves 1-30 µs).
        prop::option::weighted(0.25, limit_nanos()),
        // Sometimes a probe timeout of the same order.
        prop::option::weighted(0.25, limit_nanos()),
        // Sometimes an open back-off: a multiplier of 1 to 4 in hundredths, and a longest
        // period of up to 20 times the first.
        prop::option::weighted(0.25, (100u32..=400, 1u32..=20)),
    )
        .prop_map(
            |(
                failure_rate,
                consecutive_failures,
                open_nanos,
                half_open_probes,
                success_threshold,
                slow_nanos,
                probe_timeout_nanos,
                backoff,
            )| ModelConfig {
                failure_rate,
                consecutive_failures,
                open_duration: Duration::from_nanos(open_nanos),
                half_open_probes,
                success_threshold,
                slow_call: slow_nanos.map(Duration::from_nanos),
                probe_timeout: probe_timeout_nanos.map(Duration::from_nanos),
                open_backoff: backoff.map(|(hundredths, times)| {
                    (
                        f64::from(hundredths) / 100.0,
                        Duration::from_nanos(open_nanos) * times,
                    )
                }),
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => Just(Op::Acquire),
        24 => any::<usize>().prop_map(|i| Op::Record(i, Outcome::Success)),
        14 => any::<usize>().prop_map(|i| Op::Record(i, Outcome::Failure)),
        4 => any::<usize>().prop_map(|i| Op::Record(i, Outcome::Ignore)),
        5 => any::<usize>().prop_map(Op::Release),
        8 => prop_oneof![
            6 => Just(Op::Call(Outcome::Success)),
            3 => Just(Op::Call(Outcome::Failure)),
            1 => Just(Op::Call(Outcome::Ignore)),
        ],
        14 => (1u32..=30).prop_map(Op::Advance),
        2 => (1u32..=999).prop_map(Op::AdvanceNanos),
        4 => any::<usize>().prop_map(Op::AdvanceToBoundary),
        1 => any::<u16>().prop_map(Op::AdvanceToTimeWrap),
        1 => Just(Op::ForceOpen),
        1 => Just(Op::ForceClosed),
        2 => Just(Op::Reset),
        2 => any::<u8>().prop_map(Op::ReconfigureAndReset),
        2 => any::<u8>().prop_map(Op::Reconfigure),
        2 => any::<u8>().prop_map(Op::ReconfigureUnlessClosed),
        3 => any::<u8>().prop_map(Op::ReconfigureRulesWhileClosed),
        1 => (1u32..=30).prop_map(Op::OpenFor),
        1 => Just(Op::EndOpenPeriod),
    ]
}

/// What a layout varies beside the kind of window and success counting: stripes (1 to 4, or
/// the default), failure records beyond what the rules look back over (or the default), and
/// whether the run is on the stripe that threads without one of their own share.
#[derive(Debug, Clone, Copy)]
struct LayoutDraw {
    stripes: Option<usize>,
    extra_records: Option<usize>,
    shared_stripe: bool,
}

fn layout_draw() -> impl Strategy<Value = LayoutDraw> {
    (
        prop::option::weighted(0.5, 1usize..=4),
        prop::option::weighted(0.3, 0usize..=40),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(stripes, extra_records, shared_stripe)| LayoutDraw {
            stripes,
            extra_records,
            shared_stripe,
        })
}

/// The layout `draw` describes for a breaker of `config`, with a window per thread if
/// `per_thread_windows` and success counts if `count_successes`.
fn layout(
    config: &ModelConfig,
    draw: LayoutDraw,
    per_thread_windows: bool,
    count_successes: bool,
) -> Layout {
    // At least what the rules look back over: the rate window (the default rule's without a
    // rule) or the run.
    let window = match (config.failure_rate, config.consecutive_failures) {
        (Some((_, window, _)), _) => window,
        (None, None) => hotbreaker::DEFAULT_FAILURE_RATE.1,
        (None, Some(_)) => 0,
    };
    let longest = window.max(config.consecutive_failures.unwrap_or(0)) as usize;
    Layout {
        stripes: draw.stripes,
        failure_records: draw.extra_records.map(|extra| longest + extra),
        per_thread_windows,
        count_successes,
        shared_stripe: draw.shared_stripe,
        turns: None,
    }
}

fn turns() -> impl Strategy<Value = Turns> {
    (2u8..=4, any::<u64>()).prop_map(|(threads, seed)| Turns { threads, seed })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn breaker_decides_like_the_reference_model(config in config(), draw in layout_draw(), ops in prop::collection::vec(op(), 0..400)) {
        let layout = layout(&config, draw, false, true);
        match run_differential_laid_out(&config, layout, &ops) {
            Ok(ran) => prop_assert!(ran, "the builder refused a valid configuration: {config:?}, {layout:?}"),
            Err(mismatch) => prop_assert!(false, "{mismatch}\nconfig: {config:?}\nlayout: {layout:?}"),
        }
    }

    /// Without success counts, as by default: the quick path of a healthy call, which writes
    /// nothing while the window is clean.
    #[test]
    fn a_breaker_without_success_counts_decides_like_the_reference_model(config in config(), draw in layout_draw(), ops in prop::collection::vec(op(), 0..400)) {
        let layout = layout(&config, draw, false, false);
        match run_differential_laid_out(&config, layout, &ops) {
            Ok(ran) => prop_assert!(ran, "the builder refused a valid configuration: {config:?}, {layout:?}"),
            Err(mismatch) => prop_assert!(false, "{mismatch}\nconfig: {config:?}\nlayout: {layout:?}"),
        }
    }

    /// The steps handed between two to four threads, one at a time: the one window judges
    /// the calls of all of them in the order they were made, with successes counted or not.
    #[test]
    fn steps_handed_between_threads_are_judged_in_the_order_they_were_made(config in config(), draw in layout_draw(), turns in turns(), count_successes: bool, ops in prop::collection::vec(op(), 0..400)) {
        let layout = Layout { turns: Some(turns), ..layout(&config, draw, false, count_successes) };
        match run_differential_laid_out(&config, layout, &ops) {
            Ok(ran) => prop_assert!(ran, "the builder refused a valid configuration: {config:?}, {layout:?}"),
            Err(mismatch) => prop_assert!(false, "{mismatch}\nconfig: {config:?}\nlayout: {layout:?}"),
        }
    }

    /// On one thread, a window per thread is the one window: the same decisions, step by step.
    #[test]
    fn a_window_per_thread_decides_like_the_reference_model_on_one_thread(config in config(), draw in layout_draw(), ops in prop::collection::vec(op(), 0..400)) {
        let layout = layout(&config, draw, true, true);
        match run_differential_laid_out(&config, layout, &ops) {
            Ok(ran) => prop_assert!(ran, "the builder refused a valid configuration: {config:?}, {layout:?}"),
            Err(mismatch) => prop_assert!(false, "{mismatch}\nconfig: {config:?}\nlayout: {layout:?}"),
        }
    }
}

/// A sequence that walks every transition, so the differential harness itself is known to
/// notice a disagreement (see `a_wrong_model_is_caught`).
fn every_transition() -> (ModelConfig, Vec<Op>) {
    let config = ModelConfig {
        failure_rate: Some((0.5, 4, 4)),
        consecutive_failures: Some(3),
        open_duration: Duration::from_micros(10),
        half_open_probes: 2,
        success_threshold: 2,
        slow_call: None,
        probe_timeout: None,
        open_backoff: None,
    };
    let mut ops = Vec::new();
    for outcome in [
        Outcome::Success,
        Outcome::Failure,
        Outcome::Failure,
        Outcome::Success,
    ] {
        ops.extend([Op::Acquire, Op::Record(0, outcome)]);
    }
    ops.extend([
        Op::Acquire,
        Op::Advance(10),
        Op::Acquire,
        Op::Acquire,
        Op::Acquire,
    ]);
    ops.extend([
        Op::Record(0, Outcome::Success),
        Op::Release(0),
        Op::Acquire,
        Op::Record(0, Outcome::Success),
    ]);
    ops.extend([
        Op::Acquire,
        Op::Record(0, Outcome::Failure),
        Op::ForceOpen,
        Op::ForceClosed,
        Op::Reset,
    ]);
    (config, ops)
}

#[test]
fn walks_every_transition_in_agreement() {
    let (config, ops) = every_transition();
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

#[test]
fn a_wrong_model_is_caught() {
    // The same run with a model that trips one failure later must disagree: the harness
    // compares decisions, it does not just run both.
    let (config, ops) = every_transition();
    let wrong = ModelConfig {
        failure_rate: Some((0.75, 4, 4)),
        ..config
    };
    let result = hotbreaker::testing::run_differential_split(&config, &wrong, &ops);
    assert!(result.is_err(), "a different threshold went unnoticed");
}

/// [`Op::ReconfigureUnlessClosed`] while open and while half-open, a probe out and a closed
/// permit out from before the trip: the window that the probe's success clears is judged by
/// the rules put in force meanwhile, which trip on the third call where the first rules
/// would not trip at all. While closed the op changes nothing.
#[test]
fn rules_changed_while_not_closed_judge_from_the_next_closing_alike() {
    let (config, _) = every_transition();
    let fail = Op::Call(Outcome::Failure);
    let ops = [
        // Closed: nothing changes, and the run of three trips.
        Op::ReconfigureUnlessClosed(8),
        Op::Acquire,
        fail,
        fail,
        fail,
        // Open: a rate of half of 2 calls, from the first call on (pick 0, value 1), and a
        // run of 2 (pick 2, value 5).
        Op::ReconfigureUnlessClosed(8),
        Op::ReconfigureUnlessClosed(5 << 3 | 2),
        Op::Advance(10),
        Op::Acquire,
        Op::Acquire,
        // Half-open, two probes out: a threshold of 0.4 (pick 1, value 3).
        Op::ReconfigureUnlessClosed(3 << 3 | 1),
        Op::Record(1, Outcome::Success),
        Op::Record(1, Outcome::Success),
        // Closed, by the new rules: the permit from before the trip counts for nothing, two
        // successes fill the window, and a failure in the full window trips.
        Op::Record(0, Outcome::Failure),
        Op::Call(Outcome::Success),
        Op::Call(Outcome::Success),
        fail,
        Op::Acquire,
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

/// [`Op::ReconfigureRulesWhileClosed`] of each kind the model follows, permits out: a
/// threshold lowered in a full window, a run shortened while the window fills, and the rate
/// rule removed beside the run. Each trips on a call the first rules let through, or lets
/// through one they trip on.
#[test]
fn rules_changed_while_closed_judge_from_the_next_outcome_alike() {
    let (config, _) = every_transition();
    let (succeed, fail) = (Op::Call(Outcome::Success), Op::Call(Outcome::Failure));
    // Picks: the change in the low two bits, its value above them.
    let threshold_a_fifth = Op::ReconfigureRulesWhileClosed(1 << 2 | 1);
    let run_of_two = Op::ReconfigureRulesWhileClosed(1 << 2);
    let no_rate_rule = Op::ReconfigureRulesWhileClosed(3);
    let ops = [
        // A permit out across every change below, ended at the last step.
        Op::Acquire,
        // Filling: a threshold is not changed before the window is full.
        threshold_a_fifth,
        succeed,
        fail,
        succeed,
        succeed,
        // Full at a rate of 1 in 4, under a half: lowered to a fifth. Neither the change nor
        // the next success trips, though the window holds 1 in 4; the next failure does.
        threshold_a_fifth,
        succeed,
        fail,
        Op::Reset,
        // Filling, no minimum reached: two failures trip the run of two, not of three.
        run_of_two,
        fail,
        fail,
        Op::Reset,
        // With the run alone, a failure every other call never trips; two in a row do.
        no_rate_rule,
        succeed,
        fail,
        succeed,
        fail,
        succeed,
        fail,
        fail,
        Op::Record(0, Outcome::Failure),
    ];
    let counts = run_differential_counts(&config, &ops).map(|counts| counts.map(|c| c.openings));
    assert_eq!(
        counts,
        Ok(Some(3)),
        "one opening in each of the three closed spells"
    );
}

#[test]
fn refused_configurations_run_nothing() {
    let config = ModelConfig {
        failure_rate: Some((1.5, 20, 20)),
        consecutive_failures: None,
        open_duration: Duration::from_secs(1),
        half_open_probes: 1,
        success_threshold: 1,
        slow_call: None,
        probe_timeout: None,
        open_backoff: None,
    };
    assert_eq!(run_differential(&config, &[Op::Acquire]), Ok(false));
}

#[test]
fn a_call_left_out_through_twenty_minutes_is_judged_alike() {
    // Over 2^19 buckets of a 1 ms limit: the bucket's number wraps, and the call's end comes
    // after 2^18 widths, so it is left to the sweep.
    let config = run_of_five_timed(std::time::Duration::from_millis(1));
    let twenty_minutes = Op::Advance(1_200_000_000);
    let ops = [
        Op::Acquire,
        Op::Acquire,
        twenty_minutes,
        Op::Record(0, hotbreaker::Outcome::Success),
        Op::Acquire,
        twenty_minutes,
        Op::Acquire,
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
    // Exactly 2^19 buckets later the sweep reads the bucket as the current one, not yet due
    // (judged a bucket's stretch and a limit later, as the model says too).
    let wrapped = Op::Advance(137_438_954); // 2^19 buckets of 2^18 ns, in microseconds
    let ops = [
        Op::Acquire,
        wrapped,
        Op::Acquire,
        Op::Advance(1_000),
        Op::Acquire,
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

#[test]
fn a_limit_too_long_for_nanoseconds_times_nothing_alike() {
    // `Duration::MAX` saturates to u64::MAX nanoseconds: no call is entered, in the breaker
    // or the model, however many generations pass with calls out.
    let config = run_of_five_timed(std::time::Duration::MAX);
    let mut ops = vec![Op::Acquire];
    for _ in 0..8 {
        ops.extend([
            Op::Reset,
            Op::Acquire,
            Op::Record(1, hotbreaker::Outcome::Success),
        ]);
    }
    ops.push(Op::Record(0, hotbreaker::Outcome::Failure));
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

/// [`Op::Reconfigure`]'s picks that set the slow-call limit (`varied_beside_the_rules`).
const LIMIT_OFF: Op = Op::Reconfigure(0);
const LIMIT_1_5_MICROS: Op = Op::Reconfigure(8);
const LIMIT_4_5_MICROS: Op = Op::Reconfigure(104);
const LIMIT_TOO_LONG_TO_COUNT: Op = Op::Reconfigure(24);

#[test]
fn calls_out_across_changes_of_the_slow_call_limit_are_judged_alike() {
    use hotbreaker::Outcome::Success;
    let untimed = run_of_five_timed(std::time::Duration::MAX);
    let config = ModelConfig {
        slow_call: None,
        ..untimed
    };
    // Issued without a limit: a success, however long it took once one is on. Issued under
    // one that went off and on again: judged by the new one. Issued under a limit too long to
    // count: judged by the limit in force at its end too.
    let ops = [
        Op::Acquire,
        LIMIT_1_5_MICROS,
        Op::Acquire,
        LIMIT_OFF,
        Op::Acquire,
        LIMIT_TOO_LONG_TO_COUNT,
        Op::Acquire,
        LIMIT_4_5_MICROS,
        Op::Advance(5),
        Op::Record(0, Success),
        Op::Record(0, Success),
        Op::Record(0, Success),
        Op::Record(0, Success),
        Op::Acquire,
        Op::Advance(10),
        Op::Acquire,
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
    // A call issued under a limit too long to count is in no bucket: when its generation
    // ends, no sweep releases it, and its own end records its verdict.
    let ops = [
        LIMIT_TOO_LONG_TO_COUNT,
        Op::Acquire,
        Op::Reset,
        LIMIT_4_5_MICROS,
        Op::Acquire,
        Op::Advance(5),
        Op::Record(0, Success),
        Op::Record(0, Success),
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

#[test]
fn an_empty_bucket_of_a_width_the_limit_no_longer_gives_is_freed_at_the_next_sweep() {
    let config = ModelConfig {
        slow_call: None,
        ..run_of_five_timed(std::time::Duration::MAX)
    };
    // The first call's bucket is 512 ns wide and empty when the second call sweeps, under a
    // 4.5 µs limit that gives buckets 2,048 ns wide: no call can join it, so it is freed
    // rather than kept due at 5,012 ns. The second call's bucket, of a generation the reset
    // ends, is released when it falls due, at 6,548 ns.
    let ops = [
        LIMIT_1_5_MICROS,
        Op::Acquire,
        LIMIT_4_5_MICROS,
        Op::Record(0, hotbreaker::Outcome::Success),
        Op::Acquire,
        Op::Reset,
        Op::AdvanceNanos(5_012),
        Op::Acquire,
        Op::AdvanceNanos(1_536),
        Op::Acquire,
    ];
    assert_eq!(run_differential(&config, &ops), Ok(true));
}

/// A run rule of 5, an open second, one probe, and slow-call limit `limit`.
fn run_of_five_timed(limit: std::time::Duration) -> ModelConfig {
    ModelConfig {
        failure_rate: None,
        consecutive_failures: Some(5),
        open_duration: std::time::Duration::from_secs(1),
        half_open_probes: 1,
        success_threshold: 1,
        slow_call: Some(limit),
        probe_timeout: None,
        open_backoff: None,
    }
}
