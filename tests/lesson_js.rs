//! Differential test: the Rust model, on the real breaker, against the lesson's own JavaScript
//! model, for parameter sets the lesson never printed.
//!
//! The JavaScript is read at test time from the lesson (`../shared/seeds/`, beside the
//! repository), never committed: its constants are turned into variables, a driver written here
//! runs it for every scenario, and `node` prints one JSON object per run.

#[allow(dead_code)]
#[path = "../examples/lesson/json.rs"]
mod json;
#[allow(dead_code)]
#[path = "../examples/lesson/lesson.rs"]
mod lesson;
#[allow(dead_code, unused_imports)]
#[path = "../examples/lesson/model/mod.rs"]
mod model;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use model::{Mode, Rule, Scenario};

const LESSON: &str = "../shared/seeds/000_1b35ea0acfaf59c1.txt";

/// The lesson's model with its constants made settable. Panics, naming what is missing, if the
/// lesson or its code is not where and what this test expects.
fn lesson_model() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(LESSON);
    let lesson = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "the differential test needs the lesson at {} (shared/ beside the repository, as on \
             CI): {error}",
            path.display()
        )
    });
    let start = lesson
        .find("```js\n")
        .expect("the lesson has a ```js block")
        + "```js\n".len();
    let code = &lesson[start..];
    let code = &code[..code.find("\n```").expect("the ```js block is closed")];
    // Keep the model function only: the lesson's own printing below it is not needed.
    let model_end = "\n  return c;\n}\n";
    let code = &code[..code
        .find(model_end)
        .expect("the model function ends the same way")
        + model_end.len()];

    let mut code = code.to_string();
    for (from, to) in [
        (
            "const YUVA = 32, CEVRIM = 100, T = 1200, BAS = 200;",
            "let YUVA = 32, CEVRIM = 100, T = 1200, BAS = 200, SEED = 20260731;",
        ),
        (
            "let s = 20260731 % 2147483647;",
            "let s = SEED % 2147483647;",
        ),
    ] {
        assert_eq!(
            code.matches(from).count(),
            1,
            "the lesson's model has `{from}` once"
        );
        code = code.replace(from, to);
    }
    code
}

/// The lesson's name of a mode.
fn lesson_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Healthy => "saglikli",
        Mode::Partial => "kismi",
        Mode::Slowdown => "yavaslama",
        Mode::Halt => "durma",
    }
}

/// The scenario as the driver's JavaScript object. `{threshold}` prints the shortest decimal
/// that reads back as the same double, in Rust and in JavaScript alike.
fn driver_case(scenario: &Scenario) -> String {
    let open = scenario.open_rounds;
    let rule = match scenario.rule {
        Rule::None => "null".to_string(),
        Rule::Consecutive { failures } => {
            format!(r#"{{ tur: "ardisik", esik: {failures}, kesik: {open} }}"#)
        }
        Rule::Rate { threshold, window } => {
            format!(r#"{{ tur: "oran", pencere: {window}, esik: {threshold}, kesik: {open} }}"#)
        }
    };
    format!(
        r#"{{ kip: "{}", kural: {rule}, seed: {}, slots: {}, rounds: {}, faultAt: {} }}"#,
        lesson_mode(scenario.mode),
        scenario.seed,
        scenario.slots,
        scenario.rounds,
        scenario.fault_at
    )
}

/// Runs every scenario through the lesson's model; one line of JSON per run.
fn run_lesson_model(scenarios: &[Scenario]) -> Vec<String> {
    let cases: Vec<String> = scenarios.iter().map(driver_case).collect();
    let driver = format!(
        r#"
for (const run of [{}]) {{
  SEED = run.seed; YUVA = run.slots; T = run.rounds; BAS = run.faultAt;
  const c = kosum({{ kip: run.kip, kural: run.kural }});
  console.log(JSON.stringify({{
    tracking_ok: c.takipYanit, tracking_no_slot: c.takipYuvasiz, event_ok: c.olayYanit,
    event_rejected: c.olayRed, event_failed: c.olayHata, event_no_slot: c.olayYuvasiz,
    calls: c.cagri, event_slot_rounds: c.olayYuvaTur, openings: c.acilma,
    detection_round: c.algilamaTur, detection_slot_rounds: c.algilamaYuvaTur }}));
}}
"#,
        cases.join(",\n")
    );
    let script = lesson_model() + &driver;

    let mut node = Command::new("node")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("the differential test needs `node` on PATH: {error}"));
    node.stdin
        .take()
        .expect("piped stdin")
        .write_all(script.as_bytes())
        .expect("node reads the script");
    let output = node.wait_with_output().expect("node runs");
    assert!(
        output.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("node prints UTF-8");
    let lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), scenarios.len(), "one line per run from node");
    lines
}

/// `{"key":123,"other":null}` into its pairs, in order.
fn flat_json(line: &str) -> Vec<(String, Option<u64>)> {
    line.trim()
        .strip_prefix('{')
        .and_then(|line| line.strip_suffix('}'))
        .unwrap_or_else(|| panic!("not a JSON object: {line}"))
        .split(',')
        .map(|pair| {
            let (key, value) = pair
                .split_once(':')
                .unwrap_or_else(|| panic!("bad pair {pair}"));
            let value = match value {
                "null" => None,
                count => Some(
                    count
                        .parse()
                        .unwrap_or_else(|_| panic!("bad count {count}")),
                ),
            };
            (key.trim_matches('"').to_string(), value)
        })
        .collect()
}

/// The lesson's runs, then a spread of seeds, rules, modes, pool sizes, lengths, fault starts and
/// open durations, including the edges: a fault from round 0, a fault that never comes, one
/// slot, one-round openings, a seed that is a multiple of the modulus (a generator stuck at 0)
/// and the largest seed the flags take.
fn scenarios() -> Vec<Scenario> {
    let seeds = [
        1,
        42,
        987_654_321,
        2_147_483_647,
        2_147_483_648,
        (1 << 53) - 1,
    ];
    let rules = [
        Rule::None,
        Rule::Consecutive { failures: 1 },
        Rule::Consecutive { failures: 3 },
        Rule::Consecutive { failures: 5 },
        Rule::Rate {
            threshold: 0.3,
            window: 10,
        },
        Rule::Rate {
            threshold: 0.15,
            window: 40,
        },
        Rule::Rate {
            threshold: 1.0,
            window: 5,
        },
        Rule::Rate {
            threshold: 0.1,
            window: 20,
        },
        Rule::Rate {
            threshold: 0.5,
            window: 20,
        },
        Rule::Rate {
            threshold: 0.05,
            window: 1,
        },
    ];
    // (slots, rounds, fault_at, open_rounds)
    let shapes: [(usize, u64, u64, u64); 7] = [
        (32, 1200, 200, 100),
        (8, 600, 50, 7),
        (16, 900, 0, 1),
        (48, 1500, 300, 250),
        (1, 400, 100, 3),
        (24, 800, 1000, 50),
        (12, 2000, 700, 30),
    ];
    let mut scenarios: Vec<Scenario> = lesson::table_runs().collect();
    let mut shape = shapes.iter().cycle();
    for seed in seeds {
        for rule in rules {
            for mode in Mode::ALL {
                let &(slots, rounds, fault_at, open_rounds) = shape.next().expect("cycles");
                scenarios.push(Scenario {
                    mode,
                    rule,
                    open_rounds,
                    seed,
                    slots,
                    rounds,
                    fault_at,
                });
            }
        }
    }
    scenarios
}

#[test]
fn rust_model_on_the_breaker_matches_the_lessons_javascript() {
    let scenarios = scenarios();
    let javascript = run_lesson_model(&scenarios);
    let mut differences = Vec::new();
    for (scenario, line) in scenarios.iter().zip(&javascript) {
        let ours = model::run(scenario).expect("the breaker takes every rule here");
        let ours: Vec<(String, Option<u64>)> = json::count_fields(&ours)
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect();
        let theirs = flat_json(line);
        assert_eq!(
            ours.iter().map(|(key, _)| key).collect::<Vec<_>>(),
            theirs.iter().map(|(key, _)| key).collect::<Vec<_>>(),
            "the driver prints the example's keys"
        );
        for ((key, our_value), (_, their_value)) in ours.iter().zip(&theirs) {
            if our_value != their_value {
                differences.push(format!(
                    "{scenario:?}: {key} is {our_value:?} in Rust, {their_value:?} in the lesson"
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences from the lesson's model:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
