//! `--plot`: a valid SVG, written where asked, showing the breaker's state band and the
//! tracking queries that found no slot, in both panels; and a clean error where it cannot be
//! written.

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

use std::collections::HashMap;
use std::path::PathBuf;

use hotbreaker::State;
use plot::chart;
use plotters::style::RGBColor;

/// A directory of this test's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("lesson-plot-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn output(args: &[&str]) -> Result<String, String> {
    cli::parse(args.iter().map(|arg| arg.to_string())).and_then(execute::execute)
}

/// One element of the SVG: its name and attributes.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: HashMap<String, String>,
}

/// Reads the SVG's elements in order, checking as it goes that it is well formed: every tag
/// closed, in order, one root `svg`, attributes quoted. Text between tags is kept for the
/// element it sits in.
fn parse_svg(svg: &str) -> (Vec<Element>, Vec<String>) {
    let mut elements = Vec::new();
    let mut texts = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg.trim();
    assert!(rest.starts_with("<svg"), "the file starts with <svg");
    while let Some(start) = rest.find('<') {
        let text = rest[..start].trim();
        if !text.is_empty() {
            assert!(!open.is_empty(), "text outside the root: {text}");
            texts.push(text.to_string());
        }
        let end = rest[start..].find('>').expect("every tag is closed") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                open.pop().as_deref(),
                Some(name.trim()),
                "tags close in order"
            );
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, mut attributes_text) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
        let mut attributes = HashMap::new();
        loop {
            attributes_text = attributes_text.trim_start();
            if attributes_text.is_empty() {
                break;
            }
            let (key, after) = attributes_text.split_once("=\"").expect("key=\"value\"");
            let (value, after) = after.split_once('"').expect("a closing quote");
            attributes.insert(key.trim().to_string(), value.to_string());
            attributes_text = after;
        }
        if open.is_empty() {
            assert!(elements.is_empty() && name == "svg", "one root svg element");
        }
        elements.push(Element {
            name: name.to_string(),
            attributes,
        });
        if !self_closing {
            open.push(name.to_string());
        }
    }
    assert!(rest.trim().is_empty(), "nothing after the root");
    assert!(open.is_empty(), "unclosed: {open:?}");
    (elements, texts)
}

fn hex(color: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
}

/// Filled rectangles of `color`, as (x, y, width, height).
fn rects(elements: &[Element], color: RGBColor) -> Vec<[f64; 4]> {
    let fill = hex(color);
    elements
        .iter()
        .filter(|e| e.name == "rect" && e.attributes.get("fill") == Some(&fill))
        .map(|e| {
            ["x", "y", "width", "height"].map(|key| {
                e.attributes[key]
                    .parse()
                    .unwrap_or_else(|_| panic!("a numeric {key}"))
            })
        })
        .collect()
}

#[test]
fn the_plot_is_an_svg_with_the_state_band_and_the_lost_tracking_queries() {
    let dir = TempDir::new("valid");
    let path = dir.0.join("slowdown.svg");
    let path_text = path.to_str().expect("a UTF-8 temp path");
    let printed = output(&[
        "--mode",
        "slowdown",
        "--rule",
        "rate:0.5/20",
        "--timing",
        "realistic",
        "--plot",
        path_text,
    ])
    .expect("the run and its plot");
    assert!(printed.starts_with("conditions: realistic timing"));
    let svg = std::fs::read_to_string(&path).expect("the plot was written");
    let (elements, texts) = parse_svg(&svg);
    let root = &elements[0].attributes;
    assert!(root["width"].parse::<u32>().expect("a width") > 0);
    assert!(root["height"].parse::<u32>().expect("a height") > 0);
    assert_eq!(root["xmlns"], "http://www.w3.org/2000/svg");

    // The same runs, traced here, say what must be in it.
    let scenario = model::Scenario::lesson(
        model::Mode::Slowdown,
        model::Rule::Rate {
            threshold: 0.5,
            window: 20,
        },
    );
    let conditions = model::Conditions {
        timing: model::Timing::Realistic,
        ..model::Conditions::LESSON
    };
    let traced = plot::trace(&scenario, &conditions).expect("a valid rule");
    let (without, with) = (&traced.without_breaker.0, &traced.with_breaker.0);

    // The no-slot series: one bar per round with a lost tracking query, in both panels, plus
    // the legend's swatch.
    let rounds_with_losses =
        |trace: &plot::trace::Trace| trace.no_slot().iter().filter(|&&count| count > 0).count();
    let bars = rects(&elements, chart::NO_SLOT);
    assert!(
        rounds_with_losses(without) > 100,
        "the slowdown starves the neighbour"
    );
    assert_eq!(
        bars.len(),
        1 + rounds_with_losses(without) + rounds_with_losses(with)
    );
    let lost = |trace: &plot::trace::Trace| trace.no_slot().iter().sum::<u32>();
    assert_eq!(
        lost(without),
        traced.without_breaker.1.tracking_no_slot as u32
    );
    assert!(texts.contains(&format!("{} in all", lost(without))));
    assert!(texts.contains(&format!("{} in all", lost(with))));

    // The band: stretches of closed, open and half-open with the breaker, and one of "no
    // breaker" without it; together they span the plot's width, not nothing.
    let stretches_of = |state: Option<State>| {
        let mut count = 0;
        let mut previous = None;
        for &s in with.states() {
            if s == state && previous != Some(s) {
                count += 1;
            }
            previous = Some(s);
        }
        count
    };
    for (color, state) in [
        (chart::CLOSED, Some(State::Closed)),
        (chart::OPEN, Some(State::Open)),
        (chart::HALF_OPEN, Some(State::HalfOpen)),
    ] {
        let band = rects(&elements, color);
        // Legend swatch first, then the stretches.
        assert_eq!(band.len(), 1 + stretches_of(state), "{color:?}");
        assert!(
            band[1..]
                .iter()
                .all(|[_, _, width, height]| *width >= 0.0 && *height > 5.0)
        );
    }
    let no_breaker = rects(&elements, chart::NO_BREAKER);
    assert_eq!(no_breaker.len(), 2, "legend swatch and the no-breaker band");
    let band_width = no_breaker[1][2];
    assert!(
        band_width > 1000.0,
        "the band spans the time axis: {band_width}"
    );
    let with_band_width: f64 = [chart::CLOSED, chart::OPEN, chart::HALF_OPEN]
        .into_iter()
        .flat_map(|color| rects(&elements, color).into_iter().skip(1))
        .map(|[_, _, width, _]| width)
        .sum();
    assert!(
        (with_band_width - band_width).abs() < 30.0,
        "the breaker's band spans the axis too: {with_band_width} against {band_width}"
    );

    for label in [
        "breaker closed",
        "breaker open",
        "breaker half-open",
        "tracking queries with no slot",
        "slots: tracking queries",
    ] {
        assert!(texts.iter().any(|text| text == label), "legend `{label}`");
    }
    assert!(
        texts
            .iter()
            .any(|text| text.starts_with("slowdown, without a breaker"))
    );
    assert!(
        texts
            .iter()
            .any(|text| text.starts_with("slowdown, with --rule rate:0.5/20"))
    );
}

#[test]
fn the_fault_is_marked_where_it_starts_and_not_on_a_healthy_day() {
    let dir = TempDir::new("fault-line");
    let plotted = |mode: &str| {
        let path = dir.0.join(format!("{mode}.svg"));
        let printed = output(&[
            "--mode",
            mode,
            "--rule",
            "rate:0.5/20",
            "--timing",
            "realistic",
            "--plot",
            path.to_str().expect("a UTF-8 temp path"),
        ])
        .expect("the run and its plot");
        let (_, texts) = parse_svg(&std::fs::read_to_string(&path).expect("written"));
        let marks = texts
            .iter()
            .filter(|t| t.starts_with("fault starts"))
            .count();
        (printed, marks)
    };
    let (printed, marks) = plotted("halt");
    assert!(printed.contains("from round 200:"), "{printed}");
    assert!(marks > 0);
    let (printed, marks) = plotted("healthy");
    assert!(printed.contains("throughout:"), "{printed}");
    assert_eq!(marks, 0);
}

#[test]
fn a_plot_that_cannot_be_written_is_an_error_naming_the_flag() {
    let dir = TempDir::new("unwritable");
    let missing = dir.0.join("no-such-directory").join("plot.svg");
    // A directory where the file should go.
    let directory = dir.0.join("taken.svg");
    std::fs::create_dir(&directory).expect("a directory");
    for path in [missing, directory] {
        let path = path.to_str().expect("a UTF-8 temp path");
        let error = output(&["--mode", "halt", "--rule", "consecutive:5", "--plot", path])
            .expect_err("nowhere to write");
        assert!(error.starts_with("--plot "), "{error}");
        assert!(error.contains(path), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }
}
