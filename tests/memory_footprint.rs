//! `Breaker::memory_footprint` against the layout the README's memory table describes: 8 bytes
//! per failure record (the rate window rounded up to a power of two), a 128-byte stripe per
//! thread slot, and with a window per thread a 256-byte window and its own records for each
//! stripe. Differences between two breakers, so that what the rest of the breaker takes stays
//! out of it.

use hotbreaker::{Breaker, Builder};

fn footprint(builder: Builder) -> usize {
    builder.build().expect("valid settings").memory_footprint()
}

fn rate_over(window: usize, stripes: usize) -> Builder {
    Breaker::builder()
        .failure_rate(0.5, window)
        .stripes(stripes)
}

#[test]
fn each_failure_record_takes_eight_bytes() {
    // Windows of 20 and 1000 keep 32 and 1024 records.
    assert_eq!(
        footprint(rate_over(1000, 4)) - footprint(rate_over(20, 4)),
        8 * (1024 - 32)
    );
    // Records reserved beyond the window count alike: 100 rounds up to 128.
    assert_eq!(
        footprint(rate_over(20, 4).failure_records(100)) - footprint(rate_over(20, 4)),
        8 * (128 - 32)
    );
}

#[cfg(target_arch = "x86_64")] // where a cache-padded line is 128 bytes
#[test]
fn each_stripe_takes_128_bytes() {
    assert_eq!(
        footprint(rate_over(20, 64)) - footprint(rate_over(20, 4)),
        128 * 60
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_window_per_thread_adds_a_window_and_its_records_to_each_stripe() {
    for (window, records) in [(20, 32), (100, 128), (1000, 1024)] {
        let per_thread = |stripes| footprint(rate_over(window, stripes).per_thread_windows(true));
        assert_eq!(
            per_thread(64) - per_thread(4),
            60 * (128 + 256 + 8 * records),
            "window of {window}"
        );
    }
}
