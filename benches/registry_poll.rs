//! What a follower's poll costs per breaker when it follows a registry, next to the same
//! breakers followed one by one by name (the baseline, which has no registry to bring up to
//! date), in the same run: the registry's part is the difference.
//!
//! ```sh
//! cargo bench --bench registry_poll
//! ```
//!
//! Not criterion: a poll of thousands of breakers takes milliseconds, so each is timed whole;
//! the median and the fastest of `POLLS` polls are printed. The store is in memory and holds
//! nothing, so every poll finds no news: what is left is the follower's own bookkeeping.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hotbreaker::shared::{MemoryStore, OpeningStore, SharedOpenings};
use hotbreaker::{Breaker, Registry};

const POLLS: usize = 15;

/// The median and the fastest of `POLLS` polls of `follower`, after one to settle.
fn time_polls<S: OpeningStore>(follower: &mut SharedOpenings<S>) -> (Duration, Duration) {
    follower.poll();
    let mut times: Vec<Duration> = (0..POLLS)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(follower.poll());
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[POLLS / 2], times[0])
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return; // `cargo test --benches` runs benches without it: nothing to time then
    }
    println!("| breakers | followed | median poll | fastest | per breaker (median) |");
    println!("|---:|---|---:|---:|---:|");
    for n in [100_usize, 1_000, 4_000] {
        let names: Vec<String> = (0..n).map(|i| format!("dep-{i:05}")).collect();
        let registry = Arc::new(Registry::new());
        for name in &names {
            registry
                .get_or_insert_with(name, |_| Breaker::builder())
                .expect("valid settings");
        }
        let mut one_by_one = SharedOpenings::new(MemoryStore::new());
        for name in &names {
            let breaker = registry.get(name).expect("inserted above");
            one_by_one = one_by_one.follow(name.clone(), breaker);
        }
        let mut by_registry = SharedOpenings::new(MemoryStore::new()).follow_registry(registry);
        for (how, follower) in [
            ("by name", &mut one_by_one),
            ("by registry", &mut by_registry),
        ] {
            let (median, fastest) = time_polls(follower);
            println!(
                "| {n} | {how} | {median:.2?} | {fastest:.2?} | {:.0} ns |",
                median.as_nanos() as f64 / n as f64
            );
        }
    }
}
