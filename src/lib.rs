#![doc = include_str!("../README.md")]
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![deny(unsafe_code)]

mod async_call;
mod breaker;
mod builder;
mod call;
mod clock;
mod config;
mod listener;
mod metrics;
mod open_deadline;
mod permit;
mod state;
mod stripes;
mod sync;
#[cfg(feature = "testing")]
pub mod testing;
mod wait;
mod window;

pub use breaker::Breaker;
pub use builder::{Builder, DEFAULT_FAILURE_RATE, DEFAULT_OPEN_DURATION};
pub use call::{CallError, every_error_fails};
pub use clock::{Clock, ManualClock, QuantaClock};
pub use config::{
    Config, ConfigError, FailureRateConfig, MAX_CONSECUTIVE, MAX_OPEN_DURATION, MAX_PROBES,
    MAX_STRIPES, MAX_WINDOW,
};
pub use listener::{Transition, Trigger, TripRule};
pub use metrics::Metrics;
pub use permit::{Outcome, OwnedPermit, Permit, Rejected};
pub use state::State;
