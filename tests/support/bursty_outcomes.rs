//! A fixed sequence of outcomes for comparing two ways of calling through a breaker: mostly
//! successes, with bursts of failures now and then, so that a rate window fills, ages its
//! failures out and trips.

/// Whether each call of the sequence fails, for `calls` calls: about 4 % failures, and 45 %
/// in the first 100 calls of every 400. The same on every run (a xorshift from a fixed seed).
pub fn bursty_failures(calls: u32) -> impl Iterator<Item = bool> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    (0..calls).map(move |call| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % 100 < if call % 400 < 100 { 45 } else { 4 }
    })
}
