//! Test support, behind the `testing` feature: a sequential reference model of the breaker's
//! semantics and the differential harness that `cargo test`, proptest and the fuzz targets all
//! run. Not part of the stable API.

mod differential;
mod fuzz;
mod model;
mod transitions;

pub use differential::{Mismatch, Op, run_differential, run_differential_split};
pub use fuzz::{fuzz_configuration, fuzz_differential, fuzz_two_threads};
pub use model::{ModelConfig, ModelCounts, ModelPermit, ReferenceModel};
pub use transitions::assert_one_chain;
