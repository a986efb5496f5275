//! Each bench thread on a CPU of its own.
//!
//! A group "on two threads" means two threads calling one breaker at the same time, on two
//! cores. Left to the scheduler, two freshly spawned threads may share one CPU for a while:
//! on this 2-CPU machine a probe that ran two threads on one breaker in short rounds
//! (2026-12-06, `sched_getcpu` at each round's end) found both threads on the same CPU at
//! about half of the rounds' ends. Such a stretch time-slices the two threads, so it measures
//! twice one thread's time per call and no contention at all. One window's lesson day, medians
//! of six 3-second runs of that probe: 6.1-9.7 ns per call left to the scheduler, 10.0-11.3
//! pinned. (Criterion's samples, about 40 ms each, ended with both threads on one CPU in 4 of
//! 77; what happened earlier in a sample, no one asked.)
//!
//! Thread `i` is pinned to the `i`-th CPU the process may run on. Where that cannot be done
//! (fewer CPUs than threads, another system than Linux, or a refused call), the thread runs
//! where the scheduler puts it, and the report says so ([`all_pinned`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a thread could not be pinned; read by the report.
static UNPINNED: AtomicBool = AtomicBool::new(false);

/// Pins the calling thread to the `index`-th CPU of those the process may run on; where it
/// cannot, the report says that some threads were not pinned.
pub fn pin_to_own_cpu(index: usize) {
    if !pin(index) {
        UNPINNED.store(true, Ordering::Relaxed);
    }
}

/// Whether every thread of the contended groups so far was pinned to a CPU of its own.
pub fn all_pinned() -> bool {
    !UNPINNED.load(Ordering::Relaxed)
}

#[cfg(target_os = "linux")]
fn pin(index: usize) -> bool {
    // SAFETY: a zeroed `cpu_set_t` is an empty set: plain data, no invariant to break.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `allowed` is a valid, writable `cpu_set_t` of `size` bytes; pid 0 is this thread.
    if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
        return false;
    }
    let Some(cpu) = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below `CPU_SETSIZE`, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &allowed) })
        .nth(index)
    else {
        return false;
    };
    // SAFETY: as above, an empty set.
    let mut only: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `cpu` is below `CPU_SETSIZE`.
    unsafe { libc::CPU_SET(cpu, &mut only) };
    // SAFETY: `only` is a valid `cpu_set_t` of `size` bytes; pid 0 is this thread.
    unsafe { libc::sched_setaffinity(0, size, &only) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn pin(_index: usize) -> bool {
    false
}
