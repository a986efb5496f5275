//! A bound on the default clock's time that costs less than reading it: what a breaker that is
//! open asks first, at every call it turns away.
//!
//! While a breaker is open, each call needs to know whether the open period is over. With the
//! default clock that is a `rdtsc` and a multiply; most of those calls are far from the
//! period's end, and all they need to know is "not yet". Linux keeps a coarse monotonic clock,
//! `CLOCK_MONOTONIC_COARSE`: the time of the kernel's last timekeeping update, read from the
//! vDSO page without touching the time-stamp counter (4.3 ns against 9.45 for the raw read on
//! the machine of `benches/PERFORMANCE.md`, "A rejection without the fine clock"). It is never
//! ahead of `CLOCK_MONOTONIC`, and lags it by about a tick, or by a few when the CPU that keeps
//! the time is held up (a virtual CPU the host has descheduled).
//!
//! # The bound
//!
//! Each thread keeps one pair of readings, `(c0, r0)`: the coarse time `c0` read at a moment
//! `t0`, then the time-stamp counter `r0` at `t1 >= t0`, so `f0`, the fine time of `r0`, is
//! `f(t1)`. A later coarse reading `c` at `t2` bounds the fine time `f(t2)` from above:
//!
//! ```text
//! f(t2) <= f0 + (c - c0 + LAG) + (c - c0 + LAG) / 64
//! ```
//!
//! - `M(t2) <= c + LAG`: the coarse clock lags `CLOCK_MONOTONIC` (`M`) by the time since the
//!   kernel's last timekeeping update. That runs every tick on one CPU; if that CPU stalls,
//!   another takes the duty over once it sees five ticks missed (Linux 5.19 and later,
//!   `MAX_STALLED_JIFFIES`). `LAG` is eight ticks (the resolution `clock_getres` gives) and a
//!   millisecond more: 33 ms at 250 Hz. It costs only the fine read in the last `LAG` of a
//!   period, and as much off the time left that a rejection reports.
//! - `M(t1) >= M(t0) >= c0`: the coarse clock is never ahead, and `M` never goes back.
//! - `f(t2) - f(t1) <= (M(t2) - M(t1)) * (1 + 1/64)`: quanta scales the counter to `M`'s
//!   rate by calibrating against it; what is left is its calibration error and NTP's slewing
//!   of `M` (at most 500 ppm), far below 1/64.
//!
//! A pair older than [`RESYNC_NANOS`] by the coarse clock is read again (the coarse read
//! first, as above), and that call returns the fine time itself. So the term in 1/64 stays
//! near a millisecond (1.3 ms at most at 250 Hz), and a thread that calls once in a long while pays the fine read as
//! before. The pair is in raw counter ticks, the same for every [`QuantaClock`] (quanta
//! calibrates once per process), so one pair serves every breaker on the thread.
//!
//! # When the bound is wrong
//!
//! Where the coarse clock stops while the fine one runs on, the bound can fall short: after a
//! virtual machine is paused, `M` jumps forward at once and the coarse clock only at the next
//! timekeeping update (a tick later), and an open period that ended during the pause ends up
//! to that tick late. The same holds for any gap the kernel leaves in its updates beyond
//! `LAG` (a kernel without the takeover, a CPU stalled with no other to take over). A bound
//! that is too late costs only the fine read.
//!
//! [`QuantaClock`]: crate::QuantaClock

#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
pub(crate) use linux::CoarseBound;

/// Unavailable here: every bound is `None`, and the breaker reads the fine clock.
#[cfg(not(all(not(loom), any(target_os = "linux", target_os = "android"))))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoarseBound;

#[cfg(not(all(not(loom), any(target_os = "linux", target_os = "android"))))]
impl CoarseBound {
    pub(crate) fn new() -> Option<Self> {
        None
    }

    #[inline(always)]
    pub(crate) fn upper_bound(self, _clock: &quanta::Clock, _epoch: u64) -> Option<u64> {
        None
    }
}

/// How old, by the coarse clock, a thread's pair of readings may be before it is read again:
/// 50 ms, so that the bound's allowance for the two clocks' rates (1/64 of this) stays under a
/// millisecond.
#[cfg_attr(
    not(all(not(loom), any(target_os = "linux", target_os = "android"))),
    allow(dead_code)
)]
pub(crate) const RESYNC_NANOS: u64 = 50_000_000;

#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
mod linux {
    use std::cell::Cell;

    use super::RESYNC_NANOS;

    /// A coarse resolution above this is taken as a broken clock, and no bound is given.
    const MAX_RESOLUTION_NANOS: u64 = 20_000_000;
    /// Ticks in `LAG`: the five a stalled timekeeping CPU may miss before another takes over,
    /// the tick in which that one notices, and two more.
    const LAG_TICKS: u64 = 8;
    /// Added to the ticks in `LAG`: room for an update that comes late within its tick.
    const LATE_UPDATE_NANOS: u64 = 1_000_000;

    std::thread_local! {
        /// This thread's pair: the coarse time, then the raw counter read after it; `(0, 0)`
        /// until the first bound asked for.
        static PAIR: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    }

    /// The coarse clock's lag, found once when a [`QuantaClock`](crate::QuantaClock) is made.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct CoarseBound {
        lag_nanos: u64,
    }

    impl CoarseBound {
        /// `None` where the coarse clock cannot be read or its resolution is implausible.
        pub(crate) fn new() -> Option<Self> {
            let resolution = resolution_nanos()?;
            if resolution == 0 || resolution > MAX_RESOLUTION_NANOS {
                return None;
            }
            coarse_nanos()?;
            Some(CoarseBound {
                lag_nanos: LAG_TICKS * resolution + LATE_UPDATE_NANOS,
            })
        }

        /// A time no earlier than `clock.delta_as_nanos(epoch, clock.raw())` at this moment
        /// (the module's argument), or `None` if the coarse clock cannot be read.
        #[inline(always)]
        pub(crate) fn upper_bound(self, clock: &quanta::Clock, epoch: u64) -> Option<u64> {
            let coarse = coarse_nanos()?;
            PAIR.try_with(|pair| {
                let (coarse_then, raw_then) = pair.get();
                // Wrapping: a pair from a later coarse time than this one cannot happen (the
                // clock is monotonic and system-wide), and would read as very old.
                let since = coarse.wrapping_sub(coarse_then);
                if coarse_then == 0 || since > RESYNC_NANOS {
                    return resync(pair, coarse, clock, epoch);
                }
                let allowance = since + self.lag_nanos;
                clock
                    .delta_as_nanos(epoch, raw_then)
                    .saturating_add(allowance + allowance / 64)
            })
            .ok()
        }
    }

    /// Reads the counter after `coarse` and keeps the pair; the fine time is the bound itself.
    #[cold]
    #[inline(never)]
    fn resync(pair: &Cell<(u64, u64)>, coarse: u64, clock: &quanta::Clock, epoch: u64) -> u64 {
        let raw = clock.raw();
        pair.set((coarse, raw));
        clock.delta_as_nanos(epoch, raw)
    }

    #[inline(always)]
    fn coarse_nanos() -> Option<u64> {
        ask_coarse_clock(libc::clock_gettime)
    }

    fn resolution_nanos() -> Option<u64> {
        ask_coarse_clock(libc::clock_getres)
    }

    /// `clock_gettime` or `clock_getres` of the coarse clock, in nanoseconds.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn ask_coarse_clock(
        ask: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int,
    ) -> Option<u64> {
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: both functions write one `timespec` through the pointer, which points to a
        // live, writable one on this stack frame, and have no other effect.
        let result = unsafe { ask(libc::CLOCK_MONOTONIC_COARSE, &mut time) };
        (result == 0).then(|| nanos_of(&time))
    }

    /// A monotonic time's nanoseconds: its seconds are never negative (they count from boot).
    #[inline(always)]
    fn nanos_of(time: &libc::timespec) -> u64 {
        (time.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(time.tv_nsec as u64)
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::time::{Duration, Instant};

        #[test]
        fn the_bound_is_never_earlier_than_the_fine_time_read_before_it() {
            let Some(bound) = CoarseBound::new() else {
                return; // no coarse clock on this kernel: nothing to bound with
            };
            let clock = quanta::Clock::new();
            let epoch = clock.raw();
            // Long enough to cross several resyncs (50 ms) and many coarse ticks.
            let until = Instant::now() + Duration::from_millis(300);
            let mut checked = 0u64;
            while Instant::now() < until {
                let fine = clock.delta_as_nanos(epoch, clock.raw());
                let upper = bound.upper_bound(&clock, epoch).expect("readable");
                assert!(
                    upper >= fine,
                    "bound {upper} ns before the fine time {fine} ns read before it"
                );
                checked += 1;
            }
            assert!(checked > 1000, "only {checked} readings compared");
        }

        #[test]
        fn the_bound_is_close_to_the_time_and_serves_clocks_made_later() {
            let Some(bound) = CoarseBound::new() else {
                return;
            };
            let first = quanta::Clock::new();
            let first_epoch = first.raw();
            let _ = bound.upper_bound(&first, first_epoch); // the pair, read with this clock
            std::thread::sleep(Duration::from_millis(2));
            // A clock made after the thread's pair: its epoch is later than the pair's counter.
            let later = quanta::Clock::new();
            let later_epoch = later.raw();
            for _ in 0..1000 {
                let before = later.delta_as_nanos(later_epoch, later.raw());
                let upper = bound.upper_bound(&later, later_epoch).expect("readable");
                let after = later.delta_as_nanos(later_epoch, later.raw());
                assert!(upper >= before, "bound {upper} before {before}");
                // Late by at most the lag (twice: once at the pair, once now) and the rate
                // allowance, after a time no later than `after`, however long the thread was
                // descheduled between the reads; 5 ms more for one between the pair's own two
                // reads. A bound that mixed up units or clocks would be off by far more.
                let slack =
                    2 * bound.lag_nanos + bound.lag_nanos / 32 + RESYNC_NANOS / 32 + 5_000_000;
                assert!(
                    upper <= after + slack,
                    "bound {upper} more than {slack} ns after {after}"
                );
            }
        }
    }
}
