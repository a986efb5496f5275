//! Two threads calling one breaker at once, for `iter_custom`.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::pinning;

/// Threads sharing one breaker in the contended groups.
pub const THREADS: usize = 2;

/// Runs `work(thread, iters)` on [`THREADS`] threads at once and returns the time from the
/// first thread's start to the last one's end: the time each thread took per `iters` calls
/// while the other made as many.
///
/// Each thread is pinned to a CPU of its own (`pinning.rs`), then runs `warm_up` (outside the
/// timing), which should claim whatever the thread claims on its first call (its stripe slot).
pub fn run<W>(iters: u64, warm_up: impl Fn() + Sync, work: W) -> Duration
where
    W: Fn(usize, u64) + Sync,
{
    let barrier = Barrier::new(THREADS);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (barrier, warm_up, work) = (&barrier, &warm_up, &work);
                scope.spawn(move || {
                    pinning::pin_to_own_cpu(thread);
                    warm_up();
                    barrier.wait();
                    let start = Instant::now();
                    work(thread, iters);
                    (start, Instant::now())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("bench thread panicked"))
            .collect()
    });
    let start = spans.iter().map(|span| span.0).min().expect("threads ran");
    let end = spans.iter().map(|span| span.1).max().expect("threads ran");
    end - start
}
