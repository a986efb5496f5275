#![doc = include_str!("../README.md")]
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod async_call;
mod breaker;
mod builder;
mod call;
mod calls_out;
mod clock;
mod config;
mod config_file;
mod listener;
mod metrics;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics_export;
mod newest_probe;
mod open_deadline;
mod open_streak;
mod permit;
mod registry;
mod registry_config;
#[cfg(not(loom))]
pub mod shared;
mod state;
mod stripes;
mod sync;
mod tagged_time;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
#[path = "tracing_events.rs"]
pub mod tracing;
mod wait;
mod window;
#[cfg(feature = "yaml")]
mod yaml_nesting;

pub use breaker::Breaker;
pub use builder::{Builder, DEFAULT_FAILURE_RATE, DEFAULT_OPEN_DURATION};
pub use call::{CallError, every_error_fails};
pub use clock::{Clock, ManualClock, QuantaClock};
pub use config::{
    Config, ConfigError, FailureRateConfig, MAX_CONSECUTIVE, MAX_OPEN_DURATION, MAX_PROBES,
    MAX_STRIPES, MAX_WINDOW, OpenBackoffConfig,
};
#[cfg(feature = "serde")]
pub use config_file::{ConfigFileError, Format};
pub use listener::{Transition, Trigger, TripRule};
pub use metrics::Metrics;
pub use permit::{Outcome, OwnedPermit, Permit, Rejected};
pub use registry::{BreakerHealth, Registry};
pub use registry_config::{AppliedConfig, RegistryConfig, RegistryConfigError};
pub use state::State;

/// What loom models need from inside the crate, and nothing else may use.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_hooks {
    pub use crate::stripes::give_back_slot;
    pub use crate::wait::acquire_waiting;
}
