//! The sweep: the Pareto frontier on hand-made points (ties and dominated points), the
//! recommendation's criterion, the grid, and the lesson's three rules coming out of a sweep
//! with the lesson's published numbers.

#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/sweep/mod.rs"]
mod sweep;

use model::{Conditions, Detection, Mode, Rule, Scenario};
use sweep::figures::{FaultFigures, RuleFigures};
use sweep::frontier::{dominates, pareto_frontier};
use sweep::recommend::recommend;
use sweep::{Candidate, Progress};

#[allow(dead_code)]
#[path = "support/published_lesson.rs"]
mod published_lesson;

// ---- the frontier --------------------------------------------------------------------------

#[test]
fn dominance_needs_no_worse_in_both_and_better_in_one() {
    assert!(dominates([0, 100], [0, 120]));
    assert!(dominates([0, 100], [10, 100]));
    assert!(dominates([0, 100], [10, 120]));
    assert!(
        !dominates([0, 100], [0, 100]),
        "equal points do not dominate"
    );
    assert!(
        !dominates([0, 120], [10, 100]),
        "a trade-off does not dominate"
    );
    assert!(!dominates([10, 120], [0, 100]));
}

#[test]
fn frontier_keeps_what_nothing_beats_ties_included() {
    // (false-opening cost, detection cost)
    let points = [
        [0, 100],  // on it: no false openings, and nothing that has none detects cheaper
        [0, 100],  // a tie with the first: both stay
        [0, 120],  // beaten by the first: same false openings, dearer detection
        [145, 75], // on it
        [150, 75], // beaten by the one before: same detection, more false openings
        [369, 50], // on it
        [400, 80], // beaten twice
        [733, 25], // on it: the cheapest detection
        [733, 25], // its tie
        [900, 25], // beaten by the tie
        [-5, 300], // on it: negative false-opening cost (the breaker's rejections left more)
    ];
    let expected = [
        true, true, false, true, false, true, false, true, true, false, true,
    ];
    assert_eq!(pareto_frontier(&points), expected);
}

#[test]
fn frontier_of_one_point_or_none() {
    assert_eq!(pareto_frontier(&[[7, 7]]), [true]);
    assert_eq!(pareto_frontier(&[]), Vec::<bool>::new());
    assert_eq!(pareto_frontier(&[[3, 3], [3, 3], [3, 3]]), [true; 3]);
}

// ---- the recommendation --------------------------------------------------------------------

fn fault(detection_cost: u64, calls_saved: i64) -> FaultFigures {
    FaultFigures {
        openings: 1,
        detection: Some(Detection {
            round: 1,
            slot_rounds: detection_cost,
        }),
        detection_cost,
        calls_saved,
        tracking_rescued: 0,
    }
}

/// A hand-made row: its false-opening cost all on the healthy day, its detection cost all in
/// the slowdown.
fn row(
    failures: usize,
    open_rounds: u64,
    false_cost: i64,
    detection_cost: u64,
    calls_saved: i64,
) -> RuleFigures {
    RuleFigures {
        candidate: Candidate {
            rule: Rule::Consecutive { failures },
            open_rounds,
        },
        healthy_openings: u64::from(false_cost > 0),
        healthy_rejected: false_cost.max(0) as u64,
        partial_openings: 0,
        partial_lost: false_cost.min(0),
        slowdown: fault(detection_cost, calls_saved),
        halt: fault(0, 0),
    }
}

fn recommended(rows: &[RuleFigures]) -> Option<(usize, u64)> {
    let costs: Vec<[i64; 2]> = rows.iter().map(RuleFigures::costs).collect();
    let frontier = pareto_frontier(&costs);
    recommend(rows, &frontier).map(|i| {
        let Rule::Consecutive { failures } = rows[i].candidate.rule else {
            unreachable!("every row here is a consecutive rule");
        };
        (failures, rows[i].candidate.open_rounds)
    })
}

#[test]
fn recommends_the_cheapest_detection_among_rules_that_lose_nothing() {
    let rows = [
        row(2, 50, 300, 10, 900), // detects cheapest, but loses valid events
        row(5, 100, 0, 125, 800),
        row(4, 100, 0, 100, 800), // loses nothing, and detects cheapest of those
        row(9, 100, 0, 400, 800),
    ];
    assert_eq!(recommended(&rows), Some((4, 100)));
}

#[test]
fn a_negative_false_opening_cost_counts_as_losing_nothing() {
    let rows = [row(4, 100, 0, 100, 800), row(3, 100, -2, 90, 800)];
    assert_eq!(recommended(&rows), Some((3, 100)));
}

#[test]
fn ties_go_to_the_shorter_open_duration_then_to_more_calls_saved() {
    let rows = [
        row(4, 200, 0, 100, 900),
        row(4, 50, 0, 100, 700),
        row(4, 100, 0, 100, 800),
    ];
    assert_eq!(recommended(&rows), Some((4, 50)));
    let rows = [
        row(4, 50, 0, 100, 700),
        row(6, 50, 0, 100, 750),
        row(5, 50, 0, 100, 750),
    ];
    assert_eq!(
        recommended(&rows),
        Some((6, 50)),
        "more calls saved, then grid order"
    );
}

#[test]
fn when_every_rule_loses_events_the_one_that_loses_fewest() {
    let rows = [
        row(2, 50, 300, 10, 900),
        row(3, 50, 40, 60, 900),
        row(4, 50, 45, 80, 900), // dominated by the one before: never chosen
    ];
    assert_eq!(recommended(&rows), Some((3, 50)));
    assert_eq!(recommended(&[]), None);
}

// ---- the grid ------------------------------------------------------------------------------

#[test]
fn the_grid_spans_the_asked_rules_and_holds_the_lessons_three() {
    let grid = sweep::grid();
    let open = [50, 100, 200];
    let mut expected = Vec::new();
    for failures in 2..=10 {
        expected.push(Rule::Consecutive { failures });
    }
    for window in [10, 20, 50, 100] {
        for tenths in 1..=9 {
            expected.push(Rule::Rate {
                threshold: f64::from(tenths) / 10.0,
                window,
            });
        }
    }
    assert_eq!(grid.len(), expected.len() * open.len());
    for rule in &expected {
        for open_rounds in open {
            let wanted = Candidate {
                rule: *rule,
                open_rounds,
            };
            assert!(grid.contains(&wanted), "{rule}, open {open_rounds}");
        }
    }
    // The lesson's three, as the --rule flag reads them, with its open duration.
    for text in ["consecutive:5", "rate:0.5/20", "rate:0.1/20"] {
        assert!(
            grid.iter()
                .any(|c| c.rule.to_string() == text && c.open_rounds == 100),
            "{text} with 100 open rounds"
        );
    }
}

// ---- the lesson's rules in a sweep ---------------------------------------------------------

fn lesson_sweep(candidates: &[Candidate]) -> sweep::Sweep {
    let base = Scenario::lesson(Mode::Healthy, Rule::None);
    let progress = Progress::new((candidates.len() as u64 + 1) * 4);
    sweep::run(&base, &Conditions::LESSON, candidates, &progress).expect("the breaker takes them")
}

#[test]
fn the_lessons_rules_come_out_of_a_sweep_with_the_lessons_numbers() {
    let published = published_lesson::second_table();
    assert_eq!(published.len(), 12, "three rules in four modes");
    let mut lesson_rules: Vec<Rule> = Vec::new();
    for row in &published {
        if !lesson_rules.contains(&row.rule) {
            lesson_rules.push(row.rule);
        }
    }
    // The lesson's rules among two others, as in a real sweep.
    let mut candidates: Vec<Candidate> = lesson_rules
        .iter()
        .map(|&rule| Candidate {
            rule,
            open_rounds: 100,
        })
        .collect();
    candidates.insert(
        1,
        Candidate {
            rule: Rule::Consecutive { failures: 4 },
            open_rounds: 50,
        },
    );
    candidates.push(Candidate {
        rule: Rule::Rate {
            threshold: 0.3,
            window: 50,
        },
        open_rounds: 200,
    });
    let done = lesson_sweep(&candidates);

    for row in &published {
        let figures = done
            .rules
            .iter()
            .find(|figures| {
                figures.candidate.rule == row.rule && figures.candidate.open_rounds == 100
            })
            .unwrap_or_else(|| panic!("{} is in the sweep", row.rule));
        let what = format!("{} in {}", row.rule, row.mode.name());
        let detection = |fault: &FaultFigures| {
            fault
                .detection
                .map(|detection| (detection.round, detection.slot_rounds))
        };
        match row.mode {
            Mode::Healthy => {
                assert_eq!(figures.healthy_openings, row.openings, "{what}");
                assert_eq!(
                    Some(figures.healthy_rejected as i64),
                    row.valid_rejected,
                    "{what}"
                );
            }
            Mode::Partial => {
                assert_eq!(figures.partial_openings, row.openings, "{what}");
                assert_eq!(Some(figures.partial_lost), row.valid_rejected, "{what}");
            }
            Mode::Slowdown => {
                assert_eq!(figures.slowdown.openings, row.openings, "{what}");
                assert_eq!(detection(&figures.slowdown), row.detection(), "{what}");
            }
            Mode::Halt => {
                assert_eq!(figures.halt.openings, row.openings, "{what}");
                assert_eq!(detection(&figures.halt), row.detection(), "{what}");
            }
        }
    }

    // The first table's gain for the chosen rule: calls saved and tracking queries rescued.
    let chosen = done
        .rules
        .iter()
        .find(|figures| figures.candidate.rule.to_string() == "rate:0.5/20")
        .expect("the chosen rule is in the sweep");
    // Tracking queries with no slot, and calls to the dependency.
    let no_slot_and_calls = |mode: Mode, with_breaker: bool| {
        let figures = published_lesson::first_table_row(mode, with_breaker).figures;
        (figures[1] as i64, figures[5] as i64)
    };
    let (no_slot_without, calls_without) = no_slot_and_calls(Mode::Slowdown, false);
    let (no_slot_with, calls_with) = no_slot_and_calls(Mode::Slowdown, true);
    assert_eq!(chosen.slowdown.calls_saved, calls_without - calls_with);
    assert_eq!(
        chosen.slowdown.tracking_rescued,
        no_slot_without - no_slot_with
    );
    let (_, halt_calls_without) = no_slot_and_calls(Mode::Halt, false);
    let (_, halt_calls_with) = no_slot_and_calls(Mode::Halt, true);
    assert_eq!(
        chosen.halt.calls_saved,
        halt_calls_without - halt_calls_with
    );
}

#[test]
fn the_report_and_json_carry_the_lessons_rows_a_frontier_and_a_recommendation() {
    let candidates = [
        Candidate {
            rule: Rule::Consecutive { failures: 5 },
            open_rounds: 100,
        },
        Candidate {
            rule: Rule::Rate {
                threshold: 0.5,
                window: 20,
            },
            open_rounds: 100,
        },
        Candidate {
            rule: Rule::Rate {
                threshold: 0.1,
                window: 20,
            },
            open_rounds: 100,
        },
    ];
    let done = lesson_sweep(&candidates);
    let text = sweep::report(&done);

    // The chosen rule's row: its slowdown detection (round 9, 220 slot-rounds) and halt
    // detection (round 9, 30), as the second table prints them.
    let published = published_lesson::second_table();
    let expect = |mode: Mode| {
        published
            .iter()
            .find(|row| row.rule.to_string() == "rate:0.5/20" && row.mode == mode)
            .and_then(|row| row.detection())
            .expect("detected in the lesson")
    };
    let row: Vec<&str> = text
        .lines()
        .find(|line| line.starts_with("rate:0.5/20 "))
        .expect("a row for the chosen rule")
        .split_whitespace()
        .collect();
    let (slowdown_round, slowdown_cost) = expect(Mode::Slowdown);
    let (halt_round, halt_cost) = expect(Mode::Halt);
    // rule, open, 2 healthy, 2 partial, then 4 slowdown and 4 halt cells.
    assert_eq!(
        row[6..8],
        [slowdown_round.to_string(), slowdown_cost.to_string()]
    );
    assert_eq!(row[10..12], [halt_round.to_string(), halt_cost.to_string()]);

    let heading = text
        .lines()
        .find(|line| line.to_lowercase().contains("frontier") && line.starts_with("Pareto"))
        .expect("a heading that says frontier");
    assert!(heading.contains(&done.frontier.iter().filter(|&&f| f).count().to_string()));
    let recommendation = text
        .lines()
        .find(|line| line.starts_with("recommended: --rule "))
        .expect("a recommendation");
    let chosen = done.rules[done.recommended.expect("one")].candidate;
    assert_eq!(
        recommendation,
        format!(
            "recommended: --rule {} --open-rounds {}",
            chosen.rule, chosen.open_rounds
        )
    );
    assert!(text.contains("criterion: "));
    assert!(text.contains("false-opening cost: "));
    assert!(text.contains("detection cost: "));

    let json = sweep::json_lines(&done);
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(
        lines.len(),
        1 + candidates.len() + 1,
        "setup, rules, recommendation"
    );
    assert!(lines[0].starts_with(r#"{"record":"sweep","rules":3,"timing":"lesson","#));
    for (line, candidate) in lines[1..=3].iter().zip(&candidates) {
        assert!(line.starts_with(&format!(
            r#"{{"record":"rule","rule":"{}","open_rounds":100,"#,
            candidate.rule
        )));
        assert!(line.ends_with("true}") || line.ends_with("false}"));
    }
    assert!(lines[2].contains(&format!(
        r#""slowdown_detection_round":{slowdown_round},"slowdown_detection_slot_rounds":{slowdown_cost},"#
    )));
    assert!(lines[3].starts_with(r#"{"record":"rule","rule":"rate:0.1/20","#));
    assert!(lines[4].starts_with(&format!(
        r#"{{"record":"recommendation","rule":"{}","open_rounds":{},"criterion":""#,
        chosen.rule, chosen.open_rounds
    )));
    for line in lines {
        assert_eq!(
            line.matches('{').count(),
            line.matches('}').count(),
            "one object per line: {line}"
        );
    }
}
