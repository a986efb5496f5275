//! Two traces of one scenario, without and with the breaker, drawn as an SVG with plotters.
//!
//! Each panel stacks three strips over one time axis: the slots each flow held, the tracking
//! queries that found no slot, and the breaker's state. A shared legend sits above both
//! panels, outside the data, so it never covers any.

use plotters::coord::Shift;
use plotters::prelude::*;

use hotbreaker::State;

use crate::model::{ROUNDS_PER_SECOND, SlotUse};

use super::trace::{Trace, USES};

const WIDTH: u32 = 1200;
const LEGEND_HEIGHT: u32 = 64;
const PANEL_HEIGHT: u32 = 420;
const TITLE_HEIGHT: u32 = 54;
const SLOTS_HEIGHT: u32 = 210;
const NO_SLOT_HEIGHT: u32 = 80;
/// The rest of a panel: the band and the round axis under it.
const Y_LABELS_WIDTH: u32 = 70;
const MARGIN_RIGHT: u32 = 24;
const FONT: &str = "sans-serif";

pub const TRACKING: RGBColor = RGBColor(49, 110, 180);
pub const EVENT_CALL: RGBColor = RGBColor(232, 140, 40);
pub const EVENT_REJECTED: RGBColor = RGBColor(150, 150, 150);
pub const NO_SLOT: RGBColor = RGBColor(110, 40, 150);
pub const CLOSED: RGBColor = RGBColor(90, 170, 90);
pub const OPEN: RGBColor = RGBColor(200, 30, 45);
pub const HALF_OPEN: RGBColor = RGBColor(240, 190, 40);
pub const NO_BREAKER: RGBColor = RGBColor(215, 215, 215);
const INK: RGBColor = RGBColor(40, 40, 40);

/// What a panel shows above its strips: a title naming the run, and a line of its counts.
pub struct Panel<'a> {
    pub title: String,
    pub counts: String,
    pub trace: &'a Trace,
}

/// The figure: legend, then one panel per trace. `slots` is the pool's size and `fault_at`
/// the fault's first round (none in the healthy mode).
pub fn draw(panels: &[Panel<'_>], slots: usize, fault_at: Option<u64>) -> Result<String, String> {
    let height = LEGEND_HEIGHT + PANEL_HEIGHT * panels.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let (legend_area, mut rest) = root.split_vertically(LEGEND_HEIGHT);
        legend(&legend_area)?;
        // Both panels share the no-slot scale, so their bars compare at a glance.
        let most_no_slot = panels
            .iter()
            .flat_map(|panel| panel.trace.no_slot().iter().copied())
            .max()
            .unwrap_or(0)
            .max(1);
        for panel in panels {
            let (area, below) = rest.split_vertically(PANEL_HEIGHT);
            rest = below;
            draw_panel(&area, panel, slots, fault_at, most_no_slot)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

fn failed(error: impl std::fmt::Display) -> String {
    format!("drawing the plot failed: {error}")
}

fn legend(area: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String> {
    let rows: [[(RGBColor, &str); 4]; 2] = [
        [
            (TRACKING, "slots: tracking queries"),
            (EVENT_CALL, "slots: events calling the dependency"),
            (EVENT_REJECTED, "slots: events rejected, answered"),
            (NO_SLOT, "tracking queries with no slot"),
        ],
        [
            (CLOSED, "breaker closed"),
            (OPEN, "breaker open"),
            (HALF_OPEN, "breaker half-open"),
            (NO_BREAKER, "no breaker"),
        ],
    ];
    let style = (FONT, 15).into_font().color(&INK);
    // Fixed columns, wide enough for the longest label at this size.
    let column_width = ((WIDTH - Y_LABELS_WIDTH - MARGIN_RIGHT) / 4) as i32;
    for (row, entries) in rows.iter().enumerate() {
        let y = 10 + 24 * row as i32;
        for (column, &(color, label)) in entries.iter().enumerate() {
            let x = Y_LABELS_WIDTH as i32 + column_width * column as i32;
            area.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], color.filled()))
                .map_err(failed)?;
            area.draw(&Text::new(label, (x + 20, y), style.clone()))
                .map_err(failed)?;
        }
    }
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel<'_>,
    slots: usize,
    fault_at: Option<u64>,
    most_no_slot: u32,
) -> Result<(), String> {
    let trace = panel.trace;
    let rounds = trace.rounds() as f64;
    let (title, body) = area.split_vertically(TITLE_HEIGHT);
    title
        .draw(&Text::new(
            panel.title.as_str(),
            (Y_LABELS_WIDTH as i32, 10),
            (FONT, 17).into_font().style(FontStyle::Bold).color(&INK),
        ))
        .map_err(failed)?;
    title
        .draw(&Text::new(
            panel.counts.as_str(),
            (Y_LABELS_WIDTH as i32, 32),
            (FONT, 15).into_font().color(&INK),
        ))
        .map_err(failed)?;
    let (slots_area, lower) = body.split_vertically(SLOTS_HEIGHT);
    let (no_slot_area, band_area) = lower.split_vertically(NO_SLOT_HEIGHT);

    // Slots held, stacked: tracking at the bottom, then calls, then rejections' answers.
    let top = slots as f64 * 1.2;
    let mut chart = ChartBuilder::on(&slots_area)
        .margin_right(MARGIN_RIGHT)
        .margin_top(4)
        .y_label_area_size(Y_LABELS_WIDTH)
        .x_label_area_size(0)
        .build_cartesian_2d(0.0..rounds, 0.0..top)
        .map_err(failed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_labels(5)
        .y_label_formatter(&|slots| format!("{slots:.0}"))
        .y_desc("slots held")
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(failed)?;
    let held: Vec<Vec<u32>> = USES.iter().map(|&slot_use| trace.held(slot_use)).collect();
    for (layer, &slot_use) in USES.iter().enumerate().rev() {
        let stacked = (0..trace.rounds()).map(|round| {
            let height: u32 = held[..=layer].iter().map(|series| series[round]).sum();
            (round as f64, f64::from(height))
        });
        chart
            .draw_series(AreaSeries::new(stacked, 0.0, use_color(slot_use).filled()))
            .map_err(failed)?;
    }
    let pool = slots as f64;
    chart
        .draw_series(LineSeries::new(
            [(0.0, pool), (rounds, pool)],
            INK.stroke_width(1),
        ))
        .map_err(failed)?;
    chart
        .draw_series([Text::new(
            format!("pool: {slots} slots"),
            (rounds * 0.005, top * 0.985),
            (FONT, 13).into_font().color(&INK),
        )])
        .map_err(failed)?;
    if let Some(fault_at) = fault_at.filter(|&at| (at as f64) < rounds) {
        let fault = fault_at as f64;
        chart
            .draw_series(LineSeries::new(
                [(fault, 0.0), (fault, top)],
                INK.stroke_width(2),
            ))
            .map_err(failed)?;
        chart
            .draw_series([Text::new(
                format!("fault starts (round {fault_at})"),
                (fault + rounds * 0.005, top * 0.985),
                (FONT, 13).into_font().color(&INK),
            )])
            .map_err(failed)?;
    }

    // Tracking queries with no slot, one bar per round.
    let mut chart = ChartBuilder::on(&no_slot_area)
        .margin_right(MARGIN_RIGHT)
        .margin_top(14)
        .y_label_area_size(Y_LABELS_WIDTH)
        .x_label_area_size(0)
        .build_cartesian_2d(0.0..rounds, 0.0..f64::from(most_no_slot))
        .map_err(failed)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_labels(3)
        // Counts are whole: a tick between two of them gets no label.
        .y_label_formatter(&|count| {
            if count.fract() == 0.0 {
                format!("{count:.0}")
            } else {
                String::new()
            }
        })
        .y_desc("no slot")
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(failed)?;
    let bars = trace
        .no_slot()
        .iter()
        .enumerate()
        .filter(|&(_, &count)| count > 0)
        .map(|(round, &count)| {
            let x = round as f64;
            Rectangle::new([(x, 0.0), (x + 1.0, f64::from(count))], NO_SLOT.filled())
        });
    chart.draw_series(bars).map_err(failed)?;
    let lost: u32 = trace.no_slot().iter().sum();
    chart
        .draw_series([Text::new(
            format!("{lost} in all"),
            (rounds * 0.005, f64::from(most_no_slot) * 0.97),
            (FONT, 13).into_font().color(&INK),
        )])
        .map_err(failed)?;

    // The breaker's state, one stretch of colour per run of equal states.
    let mut chart = ChartBuilder::on(&band_area)
        .margin_right(MARGIN_RIGHT)
        .margin_top(10)
        .margin_bottom(4)
        .y_label_area_size(Y_LABELS_WIDTH)
        .x_label_area_size(34)
        .build_cartesian_2d(0.0..rounds, 0.0..1.0)
        .map_err(failed)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .y_labels(0)
        .y_desc("state")
        .x_labels(13)
        .x_label_formatter(&|round| format!("{round:.0}"))
        .x_desc(format!("round ({ROUNDS_PER_SECOND} rounds = 1 s)"))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(failed)?;
    let stretches = stretches(trace.states())
        .into_iter()
        .map(|(from, to, state)| {
            Rectangle::new(
                [(from as f64, 0.0), (to as f64, 1.0)],
                state_color(state).filled(),
            )
        });
    chart.draw_series(stretches).map_err(failed)?;
    if trace.states().iter().all(Option::is_none) {
        chart
            .draw_series([Text::new(
                "no breaker: every event calls the dependency",
                (rounds * 0.005, 0.8),
                (FONT, 13).into_font().color(&INK),
            )])
            .map_err(failed)?;
    }
    Ok(())
}

/// Maximal runs of equal states as `(first round, round after the last, state)`.
fn stretches(states: &[Option<State>]) -> Vec<(usize, usize, Option<State>)> {
    let mut runs: Vec<(usize, usize, Option<State>)> = Vec::new();
    for (round, &state) in states.iter().enumerate() {
        match runs.last_mut() {
            Some((_, end, last)) if *last == state => *end = round + 1,
            _ => runs.push((round, round + 1, state)),
        }
    }
    runs
}

fn use_color(slot_use: SlotUse) -> RGBColor {
    match slot_use {
        SlotUse::Tracking => TRACKING,
        SlotUse::EventCall => EVENT_CALL,
        SlotUse::EventRejected => EVENT_REJECTED,
    }
}

fn state_color(state: Option<State>) -> RGBColor {
    match state {
        None => NO_BREAKER,
        Some(State::Closed | State::ForcedClosed) => CLOSED,
        Some(State::Open | State::ForcedOpen) => OPEN,
        Some(State::HalfOpen) => HALF_OPEN,
    }
}
