//! The Park–Miller "minimal standard" generator (multiplier 48271) that seeds every lesson run.

const MODULUS: u64 = 2_147_483_647;
const MULTIPLIER: u64 = 48_271;

/// A seeded Lehmer generator, stepped in exact integer arithmetic.
pub struct ParkMiller {
    state: u64,
}

impl ParkMiller {
    pub fn new(seed: u64) -> Self {
        Self {
            state: seed % MODULUS,
        }
    }

    /// The next value in `[0, 1)`: the new state divided by the modulus in `f64`, exactly as the
    /// lesson's model divides it (the product stays below 2^47, so the lesson's floating-point
    /// step is exact and equals this integer one).
    pub fn next_unit(&mut self) -> f64 {
        self.state = self.state * MULTIPLIER % MODULUS;
        self.state as f64 / MODULUS as f64
    }
}
