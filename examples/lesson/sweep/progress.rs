//! A progress bar that shows itself only once a sweep has taken longer than a second: a quick
//! sweep leaves the terminal as it was.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const SHOW_AFTER: Duration = Duration::from_secs(1);

pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: AtomicBool,
}

impl Progress {
    /// A bar over `runs` runs, drawn on standard error (if it is a terminal) once a second
    /// has passed.
    pub fn new(runs: u64) -> Self {
        let bar = ProgressBar::with_draw_target(Some(runs), ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("sweep {bar:40} {pos}/{len} runs, {eta} left")
        {
            bar.set_style(style);
        }
        Progress {
            bar,
            started: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// One run done; callable from any thread.
    pub fn run_done(&self) {
        self.bar.inc(1);
        if self.started.elapsed() >= SHOW_AFTER && !self.shown.swap(true, Ordering::Relaxed) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
