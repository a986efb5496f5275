//! Test support, behind the `testing` feature: a sequential reference model of the breaker's
//! semantics and the differential harness that `cargo test`, proptest and the fuzz targets all
//! run. Not part of the stable API.

#[cfg(all(feature = "toml", feature = "yaml", feature = "json"))]
mod config_text;
mod differential;
mod fuzz;
mod hung_bounds;
mod model;
mod transitions;

#[cfg(all(feature = "toml", feature = "yaml", feature = "json"))]
pub use config_text::fuzz_config_text;
pub use differential::{
    Layout, Mismatch, Op, Turns, run_differential, run_differential_counts,
    run_differential_laid_out, run_differential_split,
};
pub use fuzz::{fuzz_configuration, fuzz_differential, fuzz_two_threads};
pub use model::{ModelConfig, ModelCounts, ModelPermit, ReferenceModel};
pub use transitions::assert_one_chain;

/// Ends the open period of `generation` only, as [`shared`](crate::shared)'s follower does
/// for an opening it applied: for models of a follower that acts on a generation that has
/// since moved on. [`Breaker::end_open_period`](crate::Breaker::end_open_period) is the
/// public form, for whatever opening is current.
pub fn end_opening<C: crate::Clock>(breaker: &crate::Breaker<C>, generation: u32) -> bool {
    breaker.end_opening(generation)
}

/// Opens the breaker as [`shared`](crate::shared)'s follower applies an opening from its
/// store, marked as one: for models of the mark racing the breaker's own openings. The
/// generation it opened, if it did.
pub fn open_from_store<C: crate::Clock>(
    breaker: &crate::Breaker<C>,
    duration: std::time::Duration,
) -> Option<u32> {
    breaker.open_from_store(duration)
}

/// Whether the opening of `generation` is marked as applied from a store, which followers
/// then never publish as the breaker's own.
pub fn opened_from_store<C: crate::Clock>(breaker: &crate::Breaker<C>, generation: u32) -> bool {
    breaker.opened_from_store(generation)
}

/// Whether the state word's quiet bit is set (`quiet.rs`): for models that check the bit is
/// set again once every window is clean, which no outcome shows (the bit only saves time).
pub fn is_quiet<C: crate::Clock>(breaker: &crate::Breaker<C>) -> bool {
    breaker.is_quiet()
}
