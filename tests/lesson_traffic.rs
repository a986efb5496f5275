//! Your own traffic and fault: the flags change what they say, and with the lesson's values
//! (given or not) every output is byte for byte what it was before they existed.
//!
//! `data/lesson_default_report.txt`, `.jsonl` and `data/lesson_single_runs.txt` are the
//! example's output as built from commit 8d3d2e8, before these flags: `lesson`, `lesson --json`,
//! and, for each mode (healthy, partial, slowdown, halt) and each rule (none, consecutive:5,
//! rate:0.5/20, rate:0.1/20), `lesson --mode M --rule R` followed by the same with `--json`.

#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/cli.rs"]
mod cli;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/execute.rs"]
mod execute;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/json.rs"]
mod json;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/lesson.rs"]
mod lesson;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/plot/mod.rs"]
mod plot;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/report.rs"]
mod report;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/sweep/mod.rs"]
mod sweep;

use cli::{Command, CustomRun, Output};
use model::fault::FaultOverride;
use model::traffic::Traffic;
use model::{Conditions, Mode, Rule, Scenario, Timing};

const DEFAULT_REPORT: &str = include_str!("data/lesson_default_report.txt");
const DEFAULT_JSON: &str = include_str!("data/lesson_default_report.jsonl");
const SINGLE_RUNS: &str = include_str!("data/lesson_single_runs.txt");

/// What the example prints for these arguments, or its error.
fn output(args: &[&str]) -> Result<String, String> {
    cli::parse(args.iter().map(|arg| arg.to_string())).and_then(execute::execute)
}

/// The lesson's traffic flags with the lesson's values, spelled out.
fn lesson_traffic_flags() -> Vec<String> {
    let lesson = Traffic::LESSON;
    [
        ("--timing", Timing::Lesson.name().to_string()),
        ("--tracking-rate", lesson.tracking_per_second.to_string()),
        ("--tracking-hold", lesson.tracking_hold.to_string()),
        ("--event-rate", lesson.event_per_second.to_string()),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_string(), value])
    .collect()
}

const RULES: [&str; 4] = ["none", "consecutive:5", "rate:0.5/20", "rate:0.1/20"];

#[test]
fn default_outputs_are_what_they_were() {
    assert_eq!(output(&[]).as_deref(), Ok(DEFAULT_REPORT));
    assert_eq!(output(&["--json"]).as_deref(), Ok(DEFAULT_JSON));
    let mut singles = String::new();
    for mode in ["healthy", "partial", "slowdown", "halt"] {
        for rule in RULES {
            let args = ["--mode", mode, "--rule", rule];
            singles += &output(&args).expect("a run");
            singles += &output(&[&args[..], &["--json"]].concat()).expect("a run");
        }
    }
    assert_eq!(singles, SINGLE_RUNS);
}

#[test]
fn the_lessons_values_given_as_flags_change_nothing() {
    for mode in ["healthy", "partial", "slowdown", "halt"] {
        for rule in RULES {
            for json in [&[][..], &["--json"][..]] {
                let plain = [&["--mode", mode, "--rule", rule][..], json].concat();
                let spelled_out = lesson_traffic_flags();
                let spelled: Vec<&str> = plain
                    .iter()
                    .copied()
                    .chain(spelled_out.iter().map(String::as_str))
                    .collect();
                assert_eq!(
                    cli::parse(spelled.iter().map(|a| a.to_string())),
                    cli::parse(plain.iter().map(|a| a.to_string()))
                );
                assert_eq!(output(&spelled), output(&plain), "{spelled:?}");
            }
        }
    }
}

/// Every fault number of `mode`, given as an override.
fn own_numbers(mode: Mode) -> FaultOverride {
    let behaviour = mode.behaviour();
    FaultOverride {
        failure_probability: Some(behaviour.failure_probability),
        success_hold: Some(behaviour.success_hold),
        failure_hold: Some(behaviour.failure_hold),
    }
}

#[test]
fn every_condition_at_the_lessons_value_reproduces_the_lesson_runs() {
    for scenario in lesson::table_runs() {
        let lesson = model::run(&scenario).expect("a lesson rule");
        let lesson_traffic = Traffic::LESSON;
        let spelled = Conditions {
            traffic: Traffic {
                tracking_per_second: lesson_traffic.tracking_per_second,
                tracking_hold: lesson_traffic.tracking_hold,
                event_per_second: lesson_traffic.event_per_second,
            },
            fault: own_numbers(scenario.mode),
            timing: Timing::Lesson,
        };
        assert_eq!(
            model::simulate(&scenario, &spelled, &mut ()),
            Ok(lesson),
            "{} {}",
            scenario.mode.name(),
            scenario.rule
        );
    }
}

#[test]
fn custom_flags_build_the_conditions_they_name() {
    let args = [
        "--mode",
        "slowdown",
        "--rule",
        "rate:0.5/20",
        "--timing",
        "realistic",
        "--tracking-rate",
        "300",
        "--tracking-hold",
        "6",
        "--event-rate=150.5",
        "--fail-p",
        "0.4",
        "--ok-hold",
        "3",
        "--fail-hold",
        "50",
        "--plot",
        "out.svg",
    ];
    let expected = CustomRun {
        scenario: Scenario::lesson(
            Mode::Slowdown,
            Rule::Rate {
                threshold: 0.5,
                window: 20,
            },
        ),
        conditions: Conditions {
            traffic: Traffic {
                tracking_per_second: 300.0,
                tracking_hold: 6,
                event_per_second: 150.5,
            },
            fault: FaultOverride {
                failure_probability: Some(0.4),
                success_hold: Some(3),
                failure_hold: Some(50),
            },
            timing: Timing::Realistic,
        },
        output: Output::Tables,
        plot: Some("out.svg".into()),
    };
    assert_eq!(
        cli::parse(args.iter().map(|arg| arg.to_string())),
        Ok(Command::Custom(Box::new(expected)))
    );
}

#[test]
fn sweep_takes_the_scenario_and_traffic_flags() {
    let args = [
        "sweep",
        "--json",
        "--seed",
        "7",
        "--timing",
        "realistic",
        "--event-rate",
        "50",
    ];
    let Ok(Command::Sweep(sweep)) = cli::parse(args.iter().map(|arg| arg.to_string())) else {
        panic!("{args:?} is a sweep");
    };
    assert_eq!(sweep.output, Output::Json);
    assert_eq!(sweep.base.seed, 7);
    assert_eq!(sweep.base.rounds, 1200);
    assert_eq!(sweep.conditions.timing, Timing::Realistic);
    assert_eq!(sweep.conditions.traffic.event_per_second, 50.0);
    assert_eq!(sweep.conditions.fault, FaultOverride::NONE);
}

fn simulate(scenario: &Scenario, conditions: &Conditions) -> model::RunCounts {
    model::simulate(scenario, conditions, &mut ()).expect("a valid rule")
}

#[test]
fn traffic_flags_change_the_flows() {
    let slowdown = Scenario::lesson(Mode::Slowdown, Rule::None);
    let lesson = simulate(&slowdown, &Conditions::LESSON);
    let with_traffic = |traffic: Traffic| Conditions {
        traffic,
        ..Conditions::LESSON
    };

    let no_neighbour = simulate(
        &slowdown,
        &with_traffic(Traffic {
            tracking_per_second: 0.0,
            ..Traffic::LESSON
        }),
    );
    assert_eq!(
        (no_neighbour.tracking_ok, no_neighbour.tracking_no_slot),
        (0, 0)
    );
    // Without the neighbour, the slow calls have the pool to themselves.
    assert!(no_neighbour.calls > lesson.calls);

    // 12 s at 50 events a second: 600 arrive, every one a call or without a slot.
    let fewer_events = simulate(
        &Scenario::lesson(Mode::Healthy, Rule::None),
        &with_traffic(Traffic {
            event_per_second: 50.0,
            ..Traffic::LESSON
        }),
    );
    assert_eq!(fewer_events.calls + fewer_events.event_no_slot, 600);

    // A neighbour that holds its slots longer crowds the pool sooner.
    let longer_hold = simulate(
        &slowdown,
        &with_traffic(Traffic {
            tracking_hold: 5,
            ..Traffic::LESSON
        }),
    );
    assert!(longer_hold.tracking_no_slot > lesson.tracking_no_slot);
}

#[test]
fn fault_flags_change_the_fault_only() {
    let scenario = Scenario::lesson(Mode::Slowdown, Rule::None);
    let lesson = simulate(&scenario, &Conditions::LESSON);
    let with_fault = |fault: FaultOverride| Conditions {
        fault,
        ..Conditions::LESSON
    };
    // No call fails after the fault: the failures are the healthy rounds' few.
    let never_fails = simulate(
        &scenario,
        &with_fault(FaultOverride {
            failure_probability: Some(0.0),
            ..FaultOverride::NONE
        }),
    );
    let healthy_before = simulate(
        &Scenario {
            rounds: scenario.fault_at,
            ..scenario
        },
        &Conditions::LESSON,
    );
    assert_eq!(never_fails.event_failed, healthy_before.event_failed);

    // Failures that hold their slot 50 rounds instead of 22 cost more slot-rounds.
    let slower = simulate(
        &scenario,
        &with_fault(FaultOverride {
            failure_hold: Some(50),
            ..FaultOverride::NONE
        }),
    );
    assert!(slower.tracking_no_slot > lesson.tracking_no_slot);

    // Before the fault nothing changes: a run that ends when the fault starts is the same.
    let until_fault = Scenario {
        rounds: scenario.fault_at,
        ..scenario
    };
    assert_eq!(
        simulate(&until_fault, &with_fault(own_numbers(Mode::Halt))),
        simulate(&until_fault, &Conditions::LESSON)
    );
}

#[test]
fn a_custom_run_says_its_conditions() {
    let text = output(&[
        "--mode",
        "partial",
        "--rule",
        "consecutive:5",
        "--fail-p",
        "0.5",
        "--timing",
        "realistic",
    ])
    .expect("a run");
    let mut lines = text.lines();
    let conditions = lines.next().expect("a conditions line");
    assert!(conditions.starts_with("conditions: realistic timing"));
    assert!(conditions.contains("fails with probability 0.5"));
    // The partial mode's own holds, as no flag changed them.
    assert!(conditions.contains("holding 6 rounds if it succeeds and 3 if it fails"));
    assert!(lines.next().expect("a header").starts_with("run "));
    assert!(
        lines
            .next()
            .expect("a row")
            .starts_with("partial, consecutive:5 ")
    );

    let json = output(&[
        "--mode",
        "halt",
        "--rule",
        "none",
        "--tracking-rate",
        "100",
        "--json",
    ])
    .expect("a run");
    assert!(json.starts_with(
        r#"{"mode":"halt","rule":"none","timing":"lesson","tracking_rate":100,"tracking_hold":4,"event_rate":97.22,"fail_p":1,"ok_hold":6,"fail_hold":3,"tracking_ok":"#
    ));
    assert!(json.ends_with("}\n"));
}
