//! The groups: what is called, how often it fails, and on how many threads.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use hotbreaker::{Breaker, ManualClock};

use crate::calls::{LessonDay, MostlyFailing, succeed};
use crate::contended;
use crate::contenders::{Bare, BreakerCrate, Failsafe, Guard, Hot, HotPerThread, Naive, Recloser};
use crate::repeat::{Healthy, repeat, time_repeated};

/// Runs `$f::<G>($args)` for every contender, in the report's column order.
macro_rules! for_each_contender {
    ($f:ident, $($arg:expr),*) => {{
        $f::<Bare>($($arg),*);
        $f::<Hot>($($arg),*);
        $f::<HotPerThread>($($arg),*);
        $f::<Recloser>($($arg),*);
        $f::<Failsafe>($($arg),*);
        $f::<BreakerCrate>($($arg),*);
        $f::<Naive>($($arg),*);
    }};
}

/// The control in every contended group: the same two threads, each calling a breaker of its
/// own, so that nothing is shared. One shared breaker's time beyond this is what contention
/// costs; this beyond the single-threaded time is what the machine costs (two busy vCPUs).
pub const APART: &str = "hotbreaker, one per thread";

/// Claims this thread's stripe slot (process-wide) before the timing starts.
fn claim_slot() {
    let breaker = Breaker::builder().build().expect("default settings");
    if let Ok(permit) = breaker.try_acquire() {
        permit.success();
    }
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    // Per-call results are a few nanoseconds: a plain mean per sample is what is wanted.
    group.sampling_mode(criterion::SamplingMode::Flat);
}

/// (a) Every call succeeds.
pub fn healthy(c: &mut Criterion) {
    fn one<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>) {
        let guard = G::with_window(100);
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| time_repeated(&guard, &mut Healthy, iters))
        });
    }
    fn two<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>) {
        let guard = G::with_window(100);
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| {
                contended::run(iters, claim_slot, |_, iters| {
                    repeat(&guard, &mut Healthy, iters)
                })
            })
        });
    }
    let mut group = c.benchmark_group("healthy_1thread");
    configure(&mut group);
    for_each_contender!(one, &mut group);
    group.finish();
    let mut group = c.benchmark_group("healthy_2threads");
    configure(&mut group);
    for_each_contender!(two, &mut group);
    let apart = [Hot::with_window(100), Hot::with_window(100)];
    group.bench_function(APART, |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |thread, iters| {
                repeat(&apart[thread], &mut Healthy, iters)
            })
        })
    });
    group.finish();
}

/// (b) Every 40th call fails; the rule is "half of the last `window` calls".
pub fn lesson(c: &mut Criterion, window: u32) {
    fn one<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>, window: u32) {
        let guard = G::with_window(window);
        let mut day = LessonDay::new(0);
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| time_repeated(&guard, &mut day, iters))
        });
    }
    fn two<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>, window: u32) {
        let guard = G::with_window(window);
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| {
                contended::run(iters, claim_slot, |thread, iters| {
                    let mut day = LessonDay::new(thread);
                    repeat(&guard, &mut day, iters)
                })
            })
        });
    }
    let mut group = c.benchmark_group(format!("lesson{window}_1thread"));
    configure(&mut group);
    for_each_contender!(one, &mut group, window);
    group.finish();
    let mut group = c.benchmark_group(format!("lesson{window}_2threads"));
    configure(&mut group);
    for_each_contender!(two, &mut group, window);
    let apart = [Hot::with_window(window), Hot::with_window(window)];
    group.bench_function(APART, |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |thread, iters| {
                let mut day = LessonDay::new(thread);
                repeat(&apart[thread], &mut day, iters)
            })
        })
    });
    group.finish();
}

/// (c) The breaker is open: every call is rejected. Every breaker reads its real clock; the
/// raw quanta read and `Instant::now` are measured beside them.
pub fn rejection(c: &mut Criterion) {
    fn one<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>) {
        let guard = G::with_window(20);
        guard.trip();
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| time_repeated(&guard, &mut Healthy, iters))
        });
    }
    fn two<G: Guard>(group: &mut BenchmarkGroup<'_, WallTime>) {
        let guard = G::with_window(20);
        guard.trip();
        group.bench_function(G::NAME, |b| {
            b.iter_custom(|iters| {
                contended::run(iters, claim_slot, |_, iters| {
                    repeat(&guard, &mut Healthy, iters)
                })
            })
        });
    }
    let clock = quanta::Clock::new();
    let mut group = c.benchmark_group("rejection_1thread");
    configure(&mut group);
    for_each_contender!(one, &mut group);
    group.bench_function("quanta raw", |b| b.iter(|| clock.raw()));
    group.bench_function("Instant::now", |b| b.iter(std::time::Instant::now));
    group.finish();
    let mut group = c.benchmark_group("rejection_2threads");
    configure(&mut group);
    for_each_contender!(two, &mut group);
    let apart = [Hot::with_window(20), Hot::with_window(20)];
    apart.iter().for_each(Guard::trip);
    group.bench_function(APART, |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |thread, iters| {
                repeat(&apart[thread], &mut Healthy, iters)
            })
        })
    });
    group.bench_function("quanta raw", |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |_, iters| {
                for _ in 0..iters {
                    black_box(clock.raw());
                }
            })
        })
    });
    group.finish();
}

/// Breakers whose failures here never trip them, on `threads` threads each calling a
/// `MostlyFailing` day, and how often a success comes: a run rule longer than any run (a
/// success every 1000th call of each thread ends it, so a run holds at most 999 failures of
/// each thread), and a rate rule of 100 % over 20 calls with a success every 10th (any 20
/// calls hold 10 of one thread, one of them a success). Each with one window and with a
/// window per thread, named by [`failure_function`].
fn failure_breakers(threads: u32) -> Vec<(String, Breaker, u32)> {
    let mut breakers = Vec::new();
    for (contender, per_thread) in [(Hot::NAME, false), (HotPerThread::NAME, true)] {
        let run = Breaker::builder()
            .consecutive_failures(1 + 1000 * threads as usize)
            .per_thread_windows(per_thread)
            .build()
            .expect("valid settings");
        let rate = Breaker::builder()
            .failure_rate(1.0, 20)
            .per_thread_windows(per_thread)
            .build()
            .expect("valid settings");
        breakers.push((failure_function("consecutive", contender), run, 1000));
        breakers.push((failure_function("rate20", contender), rate, 10));
    }
    breakers
}

/// The name of the failure benchmark of `rule` (`consecutive` or `rate20`) through
/// `contender` (hotbreaker with one window, or with a window per thread).
pub fn failure_function(rule: &str, contender: &str) -> String {
    if contender == HotPerThread::NAME {
        format!("{rule}, window per thread")
    } else {
        rule.to_string()
    }
}

/// (d) Recording failures in a closed breaker (hotbreaker only, both kinds of window): nearly
/// every call fails.
pub fn failure(c: &mut Criterion) {
    let mut group = c.benchmark_group("failure_1thread");
    configure(&mut group);
    for (name, breaker, success_every) in failure_breakers(1) {
        let mut day = MostlyFailing::new(success_every);
        group.bench_function(&name, |b| b.iter(|| breaker.call(|| day.next())));
        recorded_failures_only(&name, &breaker);
    }
    group.finish();
    let mut group = c.benchmark_group("failure_2threads");
    configure(&mut group);
    // Both threads' failures count in one run: a limit of 1001 tripped it at once, and the
    // row timed rejections (until 22c3749). So did a day started afresh at every sample
    // (criterion's warm-up samples are short: only failures, until the breaker tripped,
    // until 2026-12-01): each thread keeps its day across samples.
    for (name, breaker, success_every) in failure_breakers(2) {
        let days: [Mutex<MostlyFailing>; contended::THREADS] =
            std::array::from_fn(|_| Mutex::new(MostlyFailing::new(success_every)));
        group.bench_function(&name, |b| {
            b.iter_custom(|iters| {
                contended::run(iters, claim_slot, |thread, iters| {
                    let mut day = days[thread].lock().expect("one thread per day");
                    for _ in 0..iters {
                        let _ = black_box(breaker.call(|| day.next()));
                    }
                })
            })
        });
        recorded_failures_only(&name, &breaker);
    }
    group.finish();
}

/// Stops the bench if `breaker` rejected a call: its group timed rejections, not failures.
fn recorded_failures_only(name: &str, breaker: &Breaker) {
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.rejected, metrics.openings),
        (0, 0),
        "the failure group {name} tripped its breaker and timed rejections: {metrics:?}"
    );
}

/// (f) The healthy day with a slow-call limit (hotbreaker only): every call is timed (a clock
/// read when admitted and one when its success is recorded) and goes out of line. What the
/// limit costs, beside (a) and the clock reads of (c) in the same run.
pub fn slow_call(c: &mut Criterion) {
    let timed = || {
        Breaker::builder()
            .failure_rate(0.5, 100)
            .slow_call(Duration::from_secs(1))
            .build()
            .expect("valid settings")
    };
    let mut group = c.benchmark_group("slow_call_1thread");
    configure(&mut group);
    let breaker = timed();
    group.bench_function("healthy", |b| b.iter(|| breaker.call(succeed)));
    group.finish();
    let mut group = c.benchmark_group("slow_call_2threads");
    configure(&mut group);
    let breaker = timed();
    group.bench_function("healthy", |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |_, iters| {
                for _ in 0..iters {
                    let _ = black_box(breaker.call(succeed));
                }
            })
        })
    });
    group.finish();
}

/// (e) Half-open probe rounds on a manual clock (hotbreaker only): the open period ends, a
/// probe passes and closes the breaker, a failure trips it again.
pub fn probe(c: &mut Criterion) {
    const OPEN: Duration = Duration::from_millis(10);
    let setup = || {
        let clock = ManualClock::new();
        let breaker = Breaker::builder()
            .consecutive_failures(1)
            .open_duration(OPEN)
            .clock(clock.clone())
            .build()
            .expect("valid settings");
        breaker.try_acquire().expect("closed").failure();
        (clock, breaker)
    };
    let mut group = c.benchmark_group("probe_1thread");
    configure(&mut group);
    let (clock, breaker) = setup();
    group.bench_function("round", |b| {
        b.iter(|| {
            clock.advance(OPEN);
            breaker.try_acquire().expect("a probe").success();
            breaker.try_acquire().expect("closed").failure();
        })
    });
    group.finish();
    let mut group = c.benchmark_group("probe_2threads");
    configure(&mut group);
    let (clock, breaker) = setup();
    group.bench_function("round", |b| {
        b.iter_custom(|iters| {
            contended::run(iters, claim_slot, |_, iters| {
                for _ in 0..iters {
                    // Each thread tries a round; the other may have made the same moves first.
                    clock.advance(OPEN);
                    match breaker.try_acquire() {
                        Ok(permit) if permit.is_probe() => permit.success(),
                        Ok(permit) => permit.failure(),
                        Err(rejected) => drop(black_box(rejected)),
                    }
                    if let Ok(permit) = breaker.try_acquire() {
                        if permit.is_probe() {
                            permit.success();
                        } else {
                            permit.failure();
                        }
                    }
                }
            })
        })
    });
    group.finish();
}
