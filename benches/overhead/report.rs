//! The side-by-side table, from the medians criterion wrote in this run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use hotbreaker::Breaker;

use crate::contenders::{Bare, BreakerCrate, Failsafe, Guard, Hot, HotPerThread, Naive, Recloser};
use crate::paired::Pair;
use crate::pinning;
use crate::scenarios::{APART, failure_function};

/// Where criterion writes, chosen the way it would choose (its `CRITERION_HOME`, then
/// `$CARGO_TARGET_DIR/criterion`), except that without either it is found from this binary's
/// path (`<target>/release/deps/overhead-*`) rather than by running `cargo metadata`.
pub fn output_directory() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Path::new(&target).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

const COLUMNS: [&str; 8] = [
    Bare::NAME,
    Hot::NAME,
    HotPerThread::NAME,
    APART,
    Recloser::NAME,
    Failsafe::NAME,
    BreakerCrate::NAME,
    Naive::NAME,
];

const PEERS: [&str; 4] = [
    Recloser::NAME,
    Failsafe::NAME,
    BreakerCrate::NAME,
    Naive::NAME,
];

const SCENARIOS: [(&str, &str); 4] = [
    ("healthy", "(a) healthy: no failures"),
    ("lesson20", "(b) 2.5 % failures, rate over 20"),
    ("lesson100", "(b) 2.5 % failures, rate over 100"),
    ("rejection", "(c) open: rejection"),
];

const THREADS: [(&str, &str); 2] = [("1thread", "1"), ("2threads", "2")];

/// Medians (ns per call, per thread) of the benchmarks whose estimates were written after
/// `since`, by group and function.
struct Medians(BTreeMap<(String, String), f64>);

impl Medians {
    fn read(root: &Path, since: SystemTime) -> Self {
        let mut medians = BTreeMap::new();
        let Ok(groups) = std::fs::read_dir(root) else {
            return Medians(medians);
        };
        for group in groups.flatten() {
            let Ok(functions) = std::fs::read_dir(group.path()) else {
                continue;
            };
            for function in functions.flatten() {
                let estimates = function.path().join("new/estimates.json");
                let fresh = std::fs::metadata(&estimates)
                    .and_then(|meta| meta.modified())
                    .is_ok_and(|modified| modified >= since);
                if !fresh {
                    continue;
                }
                let Some(median) = std::fs::read_to_string(&estimates)
                    .ok()
                    .and_then(|json| median_of(&json))
                else {
                    continue;
                };
                // criterion keeps the name it was given in benchmark.json; the directory name
                // is that name made safe for file systems.
                let name = std::fs::read_to_string(function.path().join("new/benchmark.json"))
                    .ok()
                    .and_then(|json| string_field(&json, "function_id"))
                    .unwrap_or_else(|| function.file_name().to_string_lossy().into_owned());
                medians.insert(
                    (group.file_name().to_string_lossy().into_owned(), name),
                    median,
                );
            }
        }
        Medians(medians)
    }

    fn get(&self, group: &str, function: &str) -> Option<f64> {
        self.0
            .get(&(group.to_string(), function.to_string()))
            .copied()
    }
}

/// `median.point_estimate` of criterion's `estimates.json`.
fn median_of(json: &str) -> Option<f64> {
    let median = &json[json.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = value.find([',', '}'])?;
    value[..end].trim().parse().ok()
}

/// A string field of a flat JSON object, unescaped only as far as these names need.
fn string_field(json: &str, field: &str) -> Option<String> {
    let key = format!("\"{field}\":\"");
    let value = &json[json.find(&key)? + key.len()..];
    Some(value[..value.find('"')?].to_string())
}

fn ns(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

/// A goal's measured value: one digit more than the tables, so that a figure just over its
/// limit does not print as the limit itself.
fn goal_ns(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.3}"))
}

fn goal_times(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.2}x"))
}

fn times(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.1}x"))
}

/// Prints the tables for whatever ran since `started`, and the `pairs` measured after.
pub fn print(started: SystemTime, pairs: &[Pair]) {
    let medians = Medians::read(&output_directory(), started);
    if medians.0.is_empty() && pairs.is_empty() {
        return;
    }
    let mut out = String::new();
    per_call(&mut out, &medians);
    ratios(&mut out, &medians);
    others(&mut out, &medians);
    paired(&mut out, pairs);
    goals(&mut out, &medians, pairs);
    memory(&mut out);
    println!("\n{out}");
}

fn paired(out: &mut String, pairs: &[Pair]) {
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Paired: hotbreaker and its baseline in alternating blocks of 10,000 calls, 2 s each (medians, ns per call per thread)\n"
    );
    let _ = writeln!(
        out,
        "| scenario | threads | hotbreaker | baseline | baseline, ns | hotbreaker, ns | hotbreaker − baseline, ns (median of the pairs) | baseline ÷ hotbreaker (median of the pairs) |\n|---|---:|---|---|---:|---:|---:|---:|"
    );
    for pair in pairs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:+.2} | {:.1}x |",
            pair.label,
            pair.threads,
            pair.subject_name,
            pair.baseline_name,
            pair.baseline,
            pair.subject,
            pair.measured.difference,
            pair.measured.speedup
        );
    }
}

fn per_call(out: &mut String, m: &Medians) {
    let placed = if pinning::all_pinned() {
        "each thread pinned to a CPU of its own"
    } else {
        "some threads NOT pinned to a CPU of their own: they may have time-sliced one CPU"
    };
    let _ = writeln!(
        out,
        "## Per call, ns (median; with 2 threads, per call per thread, {placed})\n"
    );
    let _ = writeln!(out, "| scenario | threads | {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(COLUMNS.len()));
    for (scenario, label) in SCENARIOS {
        for (suffix, threads) in THREADS {
            let group = format!("{scenario}_{suffix}");
            let cells: Vec<String> = COLUMNS.iter().map(|c| ns(m.get(&group, c))).collect();
            if cells.iter().all(|c| c == "–") {
                continue;
            }
            let _ = writeln!(out, "| {label} | {threads} | {} |", cells.join(" | "));
        }
    }
    for (suffix, threads) in THREADS {
        let group = format!("rejection_{suffix}");
        for clock in ["quanta raw", "Instant::now"] {
            if let Some(v) = m.get(&group, clock) {
                let _ = writeln!(
                    out,
                    "| (c) for scale: one `{clock}` clock read | {threads} | {v:.2} |{}",
                    " |".repeat(COLUMNS.len() - 1)
                );
            }
        }
    }
}

fn ratios(out: &mut String, m: &Medians) {
    let _ = writeln!(
        out,
        "\n## hotbreaker against the bare call and each peer (peer ÷ hotbreaker: how many times slower the peer is)\n"
    );
    let _ = writeln!(
        out,
        "| scenario | threads | hotbreaker | hotbreaker − bare, ns | hotbreaker ÷ bare | contention: hotbreaker − one per thread, ns | {} |",
        PEERS.map(|p| format!("{p} ÷ hotbreaker")).join(" | ")
    );
    let _ = writeln!(
        out,
        "|---|---:|---|---:|---:|---:|{}",
        "---:|".repeat(PEERS.len())
    );
    for (scenario, label) in SCENARIOS {
        for (suffix, threads) in THREADS {
            let group = format!("{scenario}_{suffix}");
            for (variant, name) in [
                ("one window", Hot::NAME),
                ("window per thread", HotPerThread::NAME),
            ] {
                let (Some(bare), Some(hot)) = (m.get(&group, Bare::NAME), m.get(&group, name))
                else {
                    continue;
                };
                let peers: Vec<String> = PEERS
                    .iter()
                    .map(|p| times(m.get(&group, p).map(|v| v / hot)))
                    .collect();
                let contention = m
                    .get(&group, APART)
                    .map_or_else(|| "–".to_string(), |apart| format!("{:+.2}", hot - apart));
                let _ = writeln!(
                    out,
                    "| {label} | {threads} | {variant} | {:+.2} | {:.2}x | {contention} | {} |",
                    hot - bare,
                    hot / bare,
                    peers.join(" | ")
                );
            }
        }
    }
}

fn others(out: &mut String, m: &Medians) {
    let rows = [
        (
            "failure",
            "consecutive",
            "(d) failure, run rule (1 success in 1000)",
        ),
        (
            "failure",
            "rate20",
            "(d) failure, 100 % over 20 (1 success in 10)",
        ),
        (
            "failure",
            "consecutive, window per thread",
            "(d) failure, run rule, window per thread",
        ),
        (
            "failure",
            "rate20, window per thread",
            "(d) failure, 100 % over 20, window per thread",
        ),
        (
            "probe",
            "round",
            "(e) probe round: probe, close, trip (manual clock)",
        ),
        (
            "slow_call",
            "healthy",
            "(f) healthy, with a slow-call limit (two clock reads)",
        ),
    ];
    let mut lines = Vec::new();
    for (scenario, function, label) in rows {
        let one = m.get(&format!("{scenario}_1thread"), function);
        let two = m.get(&format!("{scenario}_2threads"), function);
        if one.is_some() || two.is_some() {
            lines.push(format!("| {label} | {} | {} |", ns(one), ns(two)));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "\n## hotbreaker only, ns per call (per thread)\n\n| path | 1 thread | 2 threads |\n|---|---:|---:|"
        );
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// One row of the goals table.
struct GoalRow {
    /// Whose goal it is: the contender's name.
    subject: &'static str,
    goal: String,
    measured: Option<f64>,
    limit: String,
    /// `None` where the limit could not be worked out (its baseline was not measured).
    holds: Option<bool>,
}

impl GoalRow {
    fn new(
        subject: &'static str,
        goal: String,
        measured: Option<f64>,
        limit: String,
        holds: Option<bool>,
    ) -> Self {
        GoalRow {
            subject,
            goal,
            measured,
            limit,
            holds,
        }
    }
}

fn goals(out: &mut String, m: &Medians, pairs: &[Pair]) {
    let mut rows: Vec<GoalRow> = Vec::new();
    let bare = |g: &str| m.get(g, Bare::NAME);
    for name in [Hot::NAME, HotPerThread::NAME] {
        let hot = |g: &str| m.get(g, name);
        let over_bare = |g: &str| Some(hot(g)? - bare(g)?);
        for (suffix, threads) in THREADS {
            let g = format!("healthy_{suffix}");
            let d = over_bare(&g);
            rows.push(GoalRow::new(
                name,
                format!("(a) healthy, {threads} thread(s): {name} − bare"),
                d,
                "≤ 0.5 ns".into(),
                d.map(|d| d <= 0.5),
            ));
        }
        for window in [20, 100] {
            for (suffix, threads) in THREADS {
                let g = format!("lesson{window}_{suffix}");
                let limit = if threads == "1" { 3.0 } else { 5.0 };
                rows.push(GoalRow::new(
                    name,
                    format!("(b) 2.5 %, window {window}, {threads} thread(s): {name} per call"),
                    hot(&g),
                    format!("≤ {limit} ns"),
                    hot(&g).map(|v| v <= limit),
                ));
                let speedup = m.get(&g, Recloser::NAME).zip(hot(&g)).map(|(r, h)| r / h);
                let wanted = if threads == "1" { 5.0 } else { 50.0 };
                rows.push(GoalRow::new(
                    name,
                    format!("(b) 2.5 %, window {window}, {threads} thread(s): recloser ÷ {name}"),
                    speedup,
                    format!("≥ {wanted}x"),
                    speedup.map(|s| s >= wanted),
                ));
            }
        }
    }
    for (name, (suffix, threads)) in [Hot::NAME, HotPerThread::NAME]
        .into_iter()
        .flat_map(|name| THREADS.into_iter().map(move |t| (name, t)))
    {
        let hot = |g: &str| m.get(g, name);
        let g = format!("rejection_{suffix}");
        // The raw read measured in the same group, so in the same stretch of the run as the
        // rejection it bounds (the one-thread read if the group has none).
        let raw = m
            .get(&g, "quanta raw")
            .or_else(|| m.get("rejection_1thread", "quanta raw"));
        let bound = raw.map(|r| r + 2.0);
        let (limit, text) = if threads == "1" {
            (bound, "≤ raw read + 2 ns".to_string())
        } else {
            (
                bound.map(|b| 1.5 * b),
                "≤ 1.5 × (raw read + 2 ns)".to_string(),
            )
        };
        rows.push(GoalRow::new(
            name,
            format!("(c) rejection, {threads} thread(s): {name}"),
            hot(&g),
            match limit {
                Some(l) => format!("{text} = {l:.2} ns"),
                None => text,
            },
            hot(&g).zip(limit).map(|(h, l)| h <= l),
        ));
    }
    for pair in pairs.iter().filter(|pair| pair.label.starts_with("(b)")) {
        let window = pair.label.rsplit(' ').next().unwrap_or("?");
        let one_thread = pair.threads == 1;
        let name = pair.subject_name;
        if pair.baseline_name == Recloser::NAME {
            let speedup = pair.measured.speedup;
            let wanted = if one_thread { 5.0 } else { 50.0 };
            rows.push(GoalRow::new(
                name,
                format!(
                    "(b) 2.5 %, window {window}, {} thread(s): recloser ÷ {name}, paired",
                    pair.threads
                ),
                Some(speedup),
                format!("≥ {wanted}x"),
                Some(speedup >= wanted),
            ));
        } else {
            let limit = if one_thread { 3.0 } else { 5.0 };
            rows.push(GoalRow::new(
                name,
                format!(
                    "(b) 2.5 %, window {window}, {} thread(s): {name} per call, paired",
                    pair.threads
                ),
                Some(pair.subject),
                format!("≤ {limit} ns"),
                Some(pair.subject <= limit),
            ));
        }
    }
    for pair in pairs.iter().filter(|pair| !pair.label.starts_with("(b)")) {
        // Judged pair by pair (the median over the pairs of blocks), so that each block of
        // hotbreaker is held to the baseline block beside it.
        let (measured, limit, holds) = if pair.label.starts_with("(a)") {
            (
                pair.measured.difference,
                "≤ 0.5 ns".to_string(),
                pair.measured.difference <= 0.5,
            )
        } else if pair.threads == 1 {
            (
                pair.measured.difference,
                "hotbreaker − raw read ≤ 2 ns".to_string(),
                pair.measured.difference <= 2.0,
            )
        } else {
            (
                pair.measured.over_baseline_plus_2,
                "≤ 1.5x".to_string(),
                pair.measured.over_baseline_plus_2 <= 1.5,
            )
        };
        let name = pair.subject_name;
        let what = if pair.label.starts_with("(a)") {
            format!("healthy, {name} − bare")
        } else if pair.threads == 1 {
            format!("rejection, {name} − raw read")
        } else {
            format!("rejection, {name} ÷ (raw read + 2 ns)")
        };
        rows.push(GoalRow::new(
            name,
            format!(
                "{} {what}, {} thread(s), paired",
                &pair.label[..3],
                pair.threads
            ),
            Some(measured),
            limit,
            Some(holds),
        ));
    }
    // Per failure: a success comes every 1000th and every 10th call of these groups, and
    // their medians are per call. The time of a call over the failures among the calls (as
    // if each success cost nothing) bounds a failure's time from above.
    let failure_rows = [("consecutive", 1000.0, 999.0), ("rate20", 10.0, 9.0)]
        .into_iter()
        .flat_map(|(rule, calls, failures)| {
            [Hot::NAME, HotPerThread::NAME]
                .map(|name| (name, failure_function(rule, name), calls, failures))
        });
    for (name, function, calls, failures) in failure_rows {
        let v = m
            .get("failure_1thread", &function)
            .map(|per_call| per_call * calls / failures);
        rows.push(GoalRow::new(
            name,
            format!(
                "(d) failure recorded ({function}), 1 thread, ns per call × {calls} ÷ {failures}"
            ),
            v,
            "< 50 ns".into(),
            v.map(|v| v < 50.0),
        ));
    }
    let _ = writeln!(
        out,
        "\n## Goals (issue 5), from this run\n\n| goal | measured | limit | holds |\n|---|---:|---|---|"
    );
    for GoalRow {
        goal,
        measured,
        limit,
        holds,
        ..
    } in &rows
    {
        if measured.is_none() {
            continue;
        }
        let verdict = match *holds {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "–",
        };
        let unit = if limit.contains('x') && !limit.contains('×') {
            goal_times(*measured)
        } else {
            format!("{} ns", goal_ns(*measured))
        };
        let _ = writeln!(out, "| {goal} | {unit} | {limit} | {verdict} |");
    }
    // The tally per configuration: the goals hold for one when every row of its
    // own holds, both measures together.
    let _ = writeln!(
        out,
        "\n| configuration | goal rows that hold, of those measured |\n|---|---:|"
    );
    for name in [Hot::NAME, HotPerThread::NAME] {
        let own = rows
            .iter()
            .filter(|row| row.subject == name && row.measured.is_some());
        let measured = own.clone().count();
        let held = own.filter(|row| row.holds == Some(true)).count();
        let _ = writeln!(out, "| {name} | {held} of {measured} |");
    }
}

fn memory(out: &mut String) {
    let _ = writeln!(
        out,
        "\n## Memory per breaker, bytes (`Breaker::memory_footprint`, no listeners)\n\n| rule | windows | default stripes on this machine | 4 stripes | 64 stripes |\n|---|---|---:|---:|---:|"
    );
    for window in [20, 100, 1000] {
        for per_thread in [false, true] {
            let size = |stripes: Option<usize>| {
                let builder = Breaker::builder()
                    .failure_rate(0.5, window)
                    .per_thread_windows(per_thread);
                let builder = match stripes {
                    Some(n) => builder.stripes(n),
                    None => builder,
                };
                builder.build().expect("valid settings").memory_footprint()
            };
            let windows = if per_thread { "one per thread" } else { "one" };
            let _ = writeln!(
                out,
                "| rate over {window} calls | {windows} | {} | {} | {} |",
                size(None),
                size(Some(4)),
                size(Some(64))
            );
        }
    }
}
