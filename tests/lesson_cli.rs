//! The lesson example's flag parser: good flags give the run asked for, and every bad flag or
//! value gives a one-line error naming the flag.

#[allow(dead_code)]
#[path = "../examples/lesson/cli.rs"]
mod cli;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;

use cli::{Command, Output};
use model::{Mode, Rule, Scenario};

fn parse(args: &[&str]) -> Result<Command, String> {
    cli::parse(args.iter().map(|arg| arg.to_string()))
}

/// Each argument list is refused with one line that names the flag (or word) given with it.
fn assert_refused_naming(cases: Vec<(Vec<&str>, &str)>) {
    for (args, flag) in cases {
        match parse(&args) {
            Ok(command) => panic!("{args:?} parsed as {command:?}"),
            Err(message) => {
                assert!(
                    message.contains(flag),
                    "{args:?}: `{message}` does not name {flag}"
                );
                assert!(!message.contains('\n'), "{args:?}: `{message}` is one line");
            }
        }
    }
}

#[test]
fn no_flags_print_the_lesson() {
    assert_eq!(parse(&[]), Ok(Command::Lesson(Output::Tables)));
    assert_eq!(parse(&["--json"]), Ok(Command::Lesson(Output::Json)));
    assert_eq!(parse(&["--help"]), Ok(Command::Help));
    assert_eq!(parse(&["-h"]), Ok(Command::Help));
}

#[test]
fn mode_and_rule_make_a_lesson_run() {
    let expected = Scenario::lesson(
        Mode::Slowdown,
        Rule::Rate {
            threshold: 0.5,
            window: 20,
        },
    );
    assert_eq!(
        parse(&["--mode", "slowdown", "--rule", "rate:0.5/20"]),
        Ok(Command::Single(expected, Output::Tables))
    );
    let expected = Scenario::lesson(Mode::Halt, Rule::None);
    assert_eq!(
        parse(&["--rule=none", "--json", "--mode=halt"]),
        Ok(Command::Single(expected, Output::Json))
    );
}

#[test]
fn every_parameter_can_be_set() {
    let args = [
        "--mode",
        "partial",
        "--rule",
        "consecutive:3",
        "--open-rounds",
        "7",
        "--seed",
        "42",
        "--slots",
        "8",
        "--rounds",
        "600",
        "--fault-at",
        "0",
        "--json",
    ];
    let expected = Scenario {
        mode: Mode::Partial,
        rule: Rule::Consecutive { failures: 3 },
        open_rounds: 7,
        seed: 42,
        slots: 8,
        rounds: 600,
        fault_at: 0,
    };
    assert_eq!(parse(&args), Ok(Command::Single(expected, Output::Json)));
}

#[test]
fn rules_print_back_as_the_flag_takes_them() {
    for text in [
        "none",
        "consecutive:5",
        "rate:0.5/20",
        "rate:0.15/40",
        "rate:1/5",
    ] {
        let Ok(Command::Single(scenario, _)) = parse(&["--mode", "halt", "--rule", text]) else {
            panic!("`{text}` is a valid rule");
        };
        assert_eq!(scenario.rule.to_string(), text);
    }
}

#[test]
fn bad_input_is_an_error_naming_the_flag() {
    let run = |extra: &[&'static str]| {
        let mut args = vec!["--mode", "slowdown", "--rule", "none"];
        args.extend_from_slice(extra);
        args
    };
    let with_rule = |rule: &'static str| vec!["--mode", "slowdown", "--rule", rule];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (with_rule("rate:1.5/20"), "--rule"),
        (with_rule("rate:0/20"), "--rule"),
        (with_rule("rate:-0.5/20"), "--rule"),
        (with_rule("rate:NaN/20"), "--rule"),
        (with_rule("rate:0,5/20"), "--rule"),
        (with_rule("rate:0.5/0"), "--rule"),
        (with_rule("rate:0.5"), "--rule"),
        (with_rule("rate:0.5/x"), "--rule"),
        (with_rule("consecutive:0"), "--rule"),
        (with_rule("consecutive:-1"), "--rule"),
        (with_rule("consecutive:"), "--rule"),
        (with_rule("consecutive:32769"), "--rule"),
        (with_rule("rate:0.5/32769"), "--rule"),
        (with_rule("sometimes"), "--rule"),
        (run(&["--slots", "0"]), "--slots"),
        (run(&["--slots", "many"]), "--slots"),
        (run(&["--slots", "1000001"]), "--slots"),
        (run(&["--rounds", "0"]), "--rounds"),
        (run(&["--open-rounds", "0"]), "--open-rounds"),
        (run(&["--fault-at", "-1"]), "--fault-at"),
        (run(&["--rounds", "100", "--fault-at", "500"]), "--fault-at"),
        (run(&["--rounds", "100", "--fault-at", "100"]), "--fault-at"),
        (run(&["--rounds", "10"]), "--fault-at"),
        (
            vec!["sweep", "--rounds", "100", "--fault-at", "100"],
            "--fault-at",
        ),
        (
            vec!["--mode", "halt", "--rule", "none", "--open-rounds", "5"],
            "--open-rounds",
        ),
        (run(&["--seed", "9007199254740992"]), "--seed"),
        (run(&["--seed", "1e3"]), "--seed"),
        (run(&["--seed"]), "--seed"),
        (run(&["--seed", "--json"]), "--seed"),
        (run(&["--seed", "1", "--seed", "2"]), "--seed"),
        (run(&["--mode", "halt"]), "--mode"),
        (vec!["--mode", "sideways", "--rule", "none"], "--mode"),
        (vec!["--mode"], "--mode"),
        (vec!["--mode", "--rule", "none"], "--mode"),
        (vec!["--mode", "halt"], "--rule"),
        (vec!["--rule", "none"], "--mode"),
        (vec!["--seed", "7"], "--seed"),
        (vec!["--json", "--json"], "--json"),
        (vec!["--json=yes"], "--json"),
        (vec!["--frobnicate"], "--frobnicate"),
        (vec!["-x"], "-x"),
        (vec!["stray"], "stray"),
    ];
    assert_refused_naming(cases);
}

#[test]
fn sweep_parses_with_its_own_flags() {
    let Ok(Command::Sweep(sweep)) = parse(&["sweep"]) else {
        panic!("`sweep` is a sweep");
    };
    assert_eq!(sweep.base, Scenario::lesson(Mode::Healthy, Rule::None));
    assert_eq!(sweep.output, Output::Tables);
    let Ok(Command::Sweep(sweep)) = parse(&[
        "sweep",
        "--slots",
        "16",
        "--rounds",
        "600",
        "--fault-at=100",
        "--tracking-hold",
        "2",
        "--json",
    ]) else {
        panic!("a sweep with flags");
    };
    assert_eq!(
        (sweep.base.slots, sweep.base.rounds, sweep.base.fault_at),
        (16, 600, 100)
    );
    assert_eq!(sweep.conditions.traffic.tracking_hold, 2);
    assert_eq!(sweep.output, Output::Json);
}

#[test]
fn new_flags_with_bad_input_are_errors_naming_the_flag() {
    let run = |extra: &[&'static str]| {
        let mut args = vec!["--mode", "slowdown", "--rule", "rate:0.5/20"];
        args.extend_from_slice(extra);
        args
    };
    let sweep = |extra: &[&'static str]| {
        let mut args = vec!["sweep"];
        args.extend_from_slice(extra);
        args
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (run(&["--timing", "sideways"]), "--timing"),
        (run(&["--timing"]), "--timing"),
        (
            run(&["--timing", "lesson", "--timing", "realistic"]),
            "--timing",
        ),
        (run(&["--fail-p", "1.5"]), "--fail-p"),
        (run(&["--fail-p", "-0.1"]), "--fail-p"),
        (run(&["--fail-p", "NaN"]), "--fail-p"),
        (run(&["--fail-p", "half"]), "--fail-p"),
        (run(&["--ok-hold", "0"]), "--ok-hold"),
        (run(&["--ok-hold", "2.5"]), "--ok-hold"),
        (run(&["--fail-hold", "0"]), "--fail-hold"),
        (run(&["--fail-hold", "1000000001"]), "--fail-hold"),
        (run(&["--tracking-rate", "-1"]), "--tracking-rate"),
        (run(&["--tracking-rate", "NaN"]), "--tracking-rate"),
        (run(&["--tracking-rate", "inf"]), "--tracking-rate"),
        (run(&["--tracking-rate", "1000001"]), "--tracking-rate"),
        (run(&["--tracking-hold", "0"]), "--tracking-hold"),
        (run(&["--event-rate", "0"]), "--event-rate"),
        (run(&["--event-rate", "fast"]), "--event-rate"),
        (run(&["--plot", "plot.png"]), "--plot"),
        (run(&["--plot", "svg"]), "--plot"),
        (run(&["--plot", "/tmp/"]), "--plot"),
        (run(&["--plot", "a.svg", "--rounds", "100001"]), "--plot"),
        (run(&["--plot", "a.svg", "--plot", "b.svg"]), "--plot"),
        (
            vec!["--mode", "halt", "--rule", "none", "--plot", "a.svg"],
            "--plot",
        ),
        (
            vec!["--mode", "healthy", "--rule", "none", "--fail-p", "0.5"],
            "--fail-p",
        ),
        (
            vec!["--mode", "healthy", "--rule", "none", "--fail-hold", "9"],
            "--fail-hold",
        ),
        (vec!["--fail-p", "0.5"], "--fail-p"),
        (vec!["--ok-hold", "3"], "--ok-hold"),
        (vec!["--plot", "a.svg"], "--plot"),
        (vec!["--timing", "realistic"], "--timing"),
        (vec!["--tracking-rate", "5"], "--tracking-rate"),
        (vec!["--event-rate", "5"], "--event-rate"),
        (sweep(&["--rule", "rate:0.5/20"]), "--rule"),
        (sweep(&["--mode", "halt"]), "--mode"),
        (sweep(&["--open-rounds", "100"]), "--open-rounds"),
        (sweep(&["--plot", "a.svg"]), "--plot"),
        (sweep(&["--fail-p", "0.5"]), "--fail-p"),
        (sweep(&["--ok-hold", "3"]), "--ok-hold"),
        (sweep(&["--fail-hold", "3"]), "--fail-hold"),
        (sweep(&["--timing", "sideways"]), "--timing"),
        (sweep(&["sweep"]), "sweep"),
        (vec!["--json", "sweep"], "sweep"),
        (sweep(&["--seed", "-3"]), "--seed"),
    ];
    assert_refused_naming(cases);
}

#[test]
fn values_with_line_breaks_are_escaped_so_that_the_error_stays_one_line() {
    let message = parse(&["--mode", "halt", "--rule", "none", "--seed", "1\n2"]).unwrap_err();
    let shown = cli::one_line(&message);
    assert!(!shown.contains('\n'), "{shown}");
    assert!(shown.contains("--seed `1\\n2`"), "{shown}");
    assert_eq!(cli::one_line("--plot `a\r\tb`"), "--plot `a\\r\\tb`");
}

/// U+2028 and U+2029 are line breaks to many log viewers and editors though not control
/// characters; the library's own errors escape them, and so must the CLI's one line.
#[test]
fn unicode_line_and_paragraph_separators_are_escaped_too() {
    let message = parse(&[
        "--mode",
        "halt",
        "--rule",
        "none",
        "--seed",
        "1\u{2028}2\u{2029}3",
    ])
    .unwrap_err();
    let shown = cli::one_line(&message);
    assert!(
        !shown.contains(['\u{2028}', '\u{2029}']),
        "{shown:?} breaks the line"
    );
    assert!(shown.contains("--seed `1\\u{2028}2\\u{2029}3`"), "{shown}");
}

#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_named_by_where_it_stands() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let bad = OsString::from_vec(vec![b'1', 0xff]);
    let args = |list: Vec<OsString>| cli::utf8_arguments(list).unwrap_err();
    let after_seed = args(vec!["--seed".into(), bad.clone()]);
    assert!(after_seed.contains("after --seed"), "{after_seed}");
    assert!(!after_seed.contains('\n'));
    assert!(args(vec![bad]).contains("first argument"));
    assert_eq!(
        cli::utf8_arguments(vec!["--seed".into(), "7".into()]),
        Ok(vec!["--seed".to_string(), "7".to_string()])
    );
}

#[test]
fn the_healthy_mode_refuses_a_fault_round_it_would_not_use() {
    assert_refused_naming(vec![(
        vec![
            "--mode",
            "healthy",
            "--rule",
            "rate:0.5/20",
            "--fault-at",
            "5",
        ],
        "--fault-at",
    )]);
    assert!(
        parse(&[
            "--mode",
            "partial",
            "--rule",
            "rate:0.5/20",
            "--fault-at",
            "5"
        ])
        .is_ok()
    );
}

#[test]
fn every_rate_above_zero_is_taken_and_minus_zero_is_zero() {
    let Ok(Command::Custom(run)) = parse(&[
        "--mode",
        "slowdown",
        "--rule",
        "rate:0.5/20",
        "--event-rate",
        "1e-320",
        "--tracking-rate",
        "-0",
        "--fail-p",
        "-0",
    ]) else {
        panic!("refused");
    };
    assert_eq!(run.conditions.traffic.event_per_second, 1e-320);
    let tracking = run.conditions.traffic.tracking_per_second;
    assert!(tracking == 0.0 && tracking.is_sign_positive(), "{tracking}");
    let fail_p = run.conditions.fault.failure_probability.unwrap();
    assert!(fail_p == 0.0 && fail_p.is_sign_positive(), "{fail_p}");
    assert_refused_naming(vec![(
        vec![
            "--mode",
            "slowdown",
            "--rule",
            "rate:0.5/20",
            "--event-rate",
            "0",
        ],
        "--event-rate",
    )]);
}

#[test]
fn a_number_too_small_to_tell_from_zero_is_refused_not_taken_as_zero() {
    let partial = ["--mode", "partial", "--rule", "consecutive:3"];
    for (flag, value) in [
        ("--fail-p", "1e-400"),
        ("--tracking-rate", "1e-400"),
        ("--event-rate", "0.000001e-399"),
    ] {
        let mut args = partial.to_vec();
        args.extend([flag, value]);
        let message = parse(&args).expect_err("taken as 0");
        assert!(
            message.contains(flag) && message.contains("too small to tell from 0"),
            "{message}"
        );
    }
    let message = parse(&["--mode", "partial", "--rule", "rate:1e-400/20"]).expect_err("T of 0");
    assert!(message.contains("too small to tell from 0"), "{message}");
    // Zero written as zero is still zero, in any notation.
    for zero in ["0", "0.0", "0e-400", "-0"] {
        let mut args = partial.to_vec();
        args.extend(["--fail-p", zero]);
        assert!(parse(&args).is_ok(), "{zero}");
    }
}

/// A number just above a range's top reads as the top itself (`1.00000000000000001` is 1 in
/// an f64): it is refused, naming the flag, and the top written in any notation is taken.
#[test]
fn a_number_above_the_top_that_reads_as_the_top_is_refused() {
    let partial = ["--mode", "partial", "--rule", "rate:0.5/20"];
    let with = |flag: &'static str, value: &'static str| {
        let mut args = partial.to_vec();
        args.extend([flag, value]);
        args
    };
    assert_refused_naming(vec![
        (
            vec!["--mode", "halt", "--rule", "rate:1.00000000000000001/20"],
            "--rule",
        ),
        (with("--fail-p", "1.00000000000000001"), "--fail-p"),
        (with("--fail-p", "0.100000000000000001e1"), "--fail-p"),
        (
            with("--tracking-rate", "1000000.00000000001"),
            "--tracking-rate",
        ),
        (
            with("--event-rate", "0.1000000000000000001e7"),
            "--event-rate",
        ),
    ]);
    for top in [
        "1",
        "1.0",
        "10e-1",
        "0.1e1",
        "+1",
        "1.000000000000000000000",
        "001",
    ] {
        assert!(parse(&with("--fail-p", top)).is_ok(), "--fail-p {top}");
        let rule = format!("rate:{top}/20");
        assert!(
            parse(&["--mode", "halt", "--rule", rule.as_str()]).is_ok(),
            "{rule}"
        );
    }
    for top in ["1000000", "1e6", "0.1e7", "1000000.000"] {
        assert!(parse(&with("--tracking-rate", top)).is_ok(), "{top}");
    }
    // Zero with exponents at the ends of their range.
    for value in ["0e9223372036854775807", "000.000e-9223372036854775808"] {
        assert!(parse(&with("--fail-p", value)).is_ok(), "{value}");
    }
}

/// `.svg` alone ends in .svg but names no file: the reason says what is missing.
#[test]
fn a_plot_named_only_svg_is_refused_for_the_name_it_lacks() {
    let message = parse(&["--mode", "halt", "--rule", "rate:0.5/20", "--plot", ".svg"])
        .expect_err("no file name");
    assert!(
        message.contains("--plot") && message.contains("expected a name before the .svg"),
        "{message}"
    );
}
