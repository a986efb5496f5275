//! A circuit breaker for hot paths: it stops calling a dependency that is failing, and on a
//! healthy day its check is a couple of loads, with no lock, no allocation, no clock read and
//! no shared write.
//!
//! A [`Breaker`] is closed while its dependency answers, open (rejecting calls at once) for an
//! open period after a trip rule is met, then half-open: a limited number of probe calls
//! decide whether it closes again or reopens. The trip rules are a failure rate over the last
//! *W* calls (a sliding window, not a count since the last state change) and a run of
//! consecutive failures; either may be configured, or both.
//!
//! # Examples
//!
//! ```
//! use hotbreaker::{Breaker, CallError, Outcome};
//! use std::time::Duration;
//!
//! let breaker = Breaker::builder()
//!     .failure_rate(0.5, 20) // open when half of the last 20 calls failed
//!     .consecutive_failures(5) // ...or after 5 failures in a row
//!     .open_duration(Duration::from_secs(1))
//!     .build()?;
//!
//! // A 4xx says the request was bad, not the service: it is not counted.
//! let classify = |result: &Result<String, u16>| match result {
//!     Ok(_) => Outcome::Success,
//!     Err(400..=499) => Outcome::Ignore,
//!     Err(_) => Outcome::Failure,
//! };
//! match breaker.call_with(classify, || Ok::<_, u16>("reply".to_string())) {
//!     Ok(reply) => assert_eq!(reply, "reply"),
//!     Err(CallError::Rejected(rejected)) => println!("not called: {rejected}"),
//!     Err(CallError::Failed(status)) => println!("failed with {status}"),
//! }
//!
//! // Or hold the permit yourself: a permit dropped without a verdict gives its place back.
//! match breaker.try_acquire() {
//!     Ok(permit) => permit.success(),
//!     Err(rejected) => println!("retry in {:?}", rejected.retry_after()),
//! }
//! # // Both were admitted and judged: two calls in the window, no failure, no rejection.
//! # let metrics = breaker.metrics();
//! # assert_eq!((metrics.window_calls, metrics.failures, metrics.rejected), (2, 0, 0));
//! # Ok::<(), hotbreaker::ConfigError>(())
//! ```
//!
//! # Where to start
//!
//! - [`Breaker::builder`] and [`Builder`]: the rules, the open period, the probes, a slow-call
//!   limit, an open back-off, listeners, and one window or a window per thread
//!   ([`Builder::per_thread_windows`]). [`Config`] holds the same settings as data, for
//!   files; [`Breaker::reconfigure`] applies new ones to a live breaker, keeping its state
//!   and window.
//! - Calling through it: [`Breaker::call`] and [`Breaker::call_with`] (with a classifier
//!   returning an [`Outcome`]), [`Breaker::call_async`] for a future,
//!   [`Breaker::try_acquire`] and [`Breaker::try_acquire_owned`] for a [`Permit`] or an
//!   [`OwnedPermit`] you settle yourself, and [`Breaker::acquire_timeout`] to wait for a
//!   permit instead of failing fast.
//! - Watching it: [`Breaker::metrics`] ([`Metrics`]), [`Breaker::state`], and
//!   [`Builder::on_transition`] listeners, which receive every [`Transition`] with what
//!   triggered it ([`Trigger`]).
//! - Many breakers: a [`Registry`] keeps one per dependency by name, without a lock, and
//!   applies a [`RegistryConfig`] read from one file to all of them.
//! - Many instances: [`shared`] lets instances share openings, recoveries and rate windows
//!   through a store (in memory, or Redis with the `redis` feature).
//!
//! # Features
//!
//! Every integration is off by default:
//!
//! | feature | gives |
//! | --- | --- |
//! | `tower` | `tower::BreakerLayer` and `tower::BreakerService`, with classifiers for HTTP |
//! | `metrics` | `metrics_export`: counters and gauges for the `metrics` crate |
//! | `tracing` | `tracing::log_transitions`: one event per transition |
//! | `serde` | [`Config`] (de)serializes, with durations like `"30s"` |
//! | `toml`, `yaml`, `json` | `Config::from_toml_str` and its siblings, for one breaker or many |
//! | `tokio` | `Breaker::acquire_timeout_async`, waiting with tokio's timer |
//! | `redis` | `shared::RedisStore` |
//!
//! # How it is built, and what it costs
//!
//! The state is one 64-bit atomic word that every transition changes with one
//! compare-and-swap. The failure window counts successes in per-thread cache lines and keeps
//! one record per failure, so a success while no failure is in view writes nothing, once a
//! rate window has filled (its first calls take places in it). Every
//! atomic's memory ordering is argued in the source next to it, and the state machine is
//! checked under every interleaving with loom and against a sequential reference model.
//!
//! The crate's README (in the package, `README.md`) has the semantics rule by rule, the
//! measurements against other breakers and a bare call, and the lesson this crate reproduces;
//! `benches/PERFORMANCE.md` has every benchmark run and what was tried.

#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod async_call;
mod breaker;
mod builder;
mod call;
mod calls_out;
mod clock;
mod coarse_clock;
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
    Config, ConfigError, FailureRateConfig, MAX_CONSECUTIVE, MAX_OPEN_DURATION, MAX_PROBE_TIMEOUT,
    MAX_PROBES, MAX_STRIPES, MAX_WINDOW, OpenBackoffConfig,
};
#[cfg(feature = "serde")]
pub use config_file::{ConfigFileError, Format};
pub use listener::{Transition, Trigger, TripRule};
pub use metrics::Metrics;
pub use permit::{Outcome, OwnedPermit, Permit, Rejected};
pub use registry::{BreakerHealth, Registry};
pub use registry_config::{AppliedConfig, RegistryConfig, RegistryConfigError};
pub use state::State;

/// The README's code blocks, compiled and run as doctests (the crate's docs above are its
/// own text, so that none of the README's links into the repository break on docs.rs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What loom models need from inside the crate, and nothing else may use.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_hooks {
    pub use crate::stripes::give_back_slot;
    pub use crate::wait::{acquire_waiting, give_back_every_task_slot, take_every_task_slot};
}
