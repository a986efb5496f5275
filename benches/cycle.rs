//! Where in the lesson's 40-call cycle (39 successes, then a failure) the time goes: each call
//! timed on its own, next to the bare call timed the same way in the same run.
//!
//! ```sh
//! cargo bench --bench cycle            # windows of 20 and 100
//! cargo bench --bench cycle -- 20      # one window
//! ```
//!
//! Each call sits between two reads of the time-stamp counter, each fenced with `lfence` so
//! that the call cannot start before the first read or finish after the second. That takes the
//! call out of the pipeline it shares with its neighbours in a loop, so the figures are what a
//! call costs alone (and larger than per-call times of `benches/overhead`), but they say which
//! calls of the cycle pay: the failure, the success that lets the window forget it, any
//! success that goes out of line. For each position of the cycle it prints the mean excess over
//! the median bare call, in TSC ticks, and marks those above the threshold. The excess of a
//! success that takes the quick path is within the reads' own jitter. x86-64 only; nothing is
//! asserted.

use std::hint::black_box;
use std::time::Duration;

use hotbreaker::Breaker;

/// The lesson's healthy mode: one call in 40 fails (the last of each cycle).
const CYCLE: usize = 40;
/// Cycles timed, after as many again to warm up.
const CYCLES: usize = 20_000;
/// Positions whose mean excess is above this many ticks are marked.
const MARK_ABOVE: f64 = 25.0;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ticks() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: `lfence` and `rdtsc` have no memory effects; every x86-64 processor has both.
    unsafe {
        _mm_lfence();
        let now = _rdtsc();
        _mm_lfence();
        now
    }
}

#[cfg(target_arch = "x86_64")]
fn reply(fails: bool) -> Result<u64, u64> {
    if fails {
        Err(black_box(2))
    } else {
        Ok(black_box(1))
    }
}

/// Mean ticks of each position's breaker call, and the median ticks of a bare call.
#[cfg(target_arch = "x86_64")]
fn measure(window: usize) -> (Vec<f64>, u64) {
    let breaker = Breaker::builder()
        .failure_rate(0.5, window)
        .open_duration(Duration::from_secs(3600))
        .build()
        .expect("valid settings");
    let mut sums = vec![0u64; CYCLE];
    let mut bare = Vec::with_capacity(CYCLES * CYCLE);
    for cycle in 0..2 * CYCLES {
        let timed = cycle >= CYCLES;
        for (position, sum) in sums.iter_mut().enumerate() {
            let fails = position == CYCLE - 1;
            let start = ticks();
            let result = breaker.call(|| reply(fails));
            let end = ticks();
            black_box(&result);
            let bare_start = ticks();
            let result = reply(fails);
            let bare_end = ticks();
            black_box(&result);
            if timed {
                *sum += end - start;
                bare.push(bare_end - bare_start);
            }
        }
    }
    assert!(breaker.try_acquire().is_ok(), "2.5 % must not trip it");
    bare.sort_unstable();
    let means = sums.iter().map(|&sum| sum as f64 / CYCLES as f64).collect();
    (means, bare[bare.len() / 2])
}

#[cfg(target_arch = "x86_64")]
fn report(window: usize) {
    let (means, bare) = measure(window);
    let excess: Vec<f64> = means.iter().map(|mean| mean - bare as f64).collect();
    let marked: Vec<String> = excess
        .iter()
        .enumerate()
        .filter(|(_, excess)| **excess > MARK_ABOVE)
        .map(|(position, excess)| format!("{position}: {excess:.0}"))
        .collect();
    println!(
        "window {window}: bare call {bare} ticks (median); over it, per {CYCLE}-call cycle: {:.0} ticks; \
         calls above {MARK_ABOVE} (position: ticks): {}",
        excess.iter().sum::<f64>(),
        marked.join(", ")
    );
    let row: Vec<String> = excess.iter().map(|excess| format!("{excess:.0}")).collect();
    println!("  by position 0..{}: {}", CYCLE - 1, row.join(" "));
}

fn main() {
    // `cargo bench` passes `--bench`; a bare number picks one window.
    let windows: Vec<usize> = match std::env::args().skip(1).find(|arg| !arg.starts_with("--")) {
        Some(arg) => match arg.parse() {
            Ok(window) if (1..=32_768).contains(&window) => vec![window],
            _ => {
                eprintln!("cycle: the window must be a number from 1 to 32768, got {arg:?}");
                std::process::exit(2);
            }
        },
        None => vec![20, 100],
    };
    #[cfg(target_arch = "x86_64")]
    for window in windows {
        report(window);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = windows;
        eprintln!("cycle: times calls with the x86-64 time-stamp counter; nothing to do here");
    }
}
