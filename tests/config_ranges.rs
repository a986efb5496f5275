//! The edges of the documented configuration ranges, each side checked, through the public
//! API: a value at the edge is taken, one past it refused with the field named.

use std::time::Duration;

use hotbreaker::{Breaker, Config, MAX_OPEN_DURATION, MAX_PROBE_TIMEOUT, OpenBackoffConfig};

/// The field `config` is refused for, or `None` when it is accepted.
fn refused_field(config: Config) -> Option<&'static str> {
    config.validate().err().map(|err| err.field())
}

/// A run of zero failures is refused, naming `consecutive_failures`, and a run of one is
/// taken: `consecutive_failures` is "from 1 to MAX_CONSECUTIVE". Catches the lower bound of
/// its range lowered to 0 (a rule that would trip with no failure at all).
#[test]
fn a_run_of_zero_failures_is_refused() {
    let run = |n| Config {
        consecutive_failures: Some(n),
        ..Config::default()
    };
    assert_eq!(refused_field(run(0)), Some("consecutive_failures"));
    assert_eq!(refused_field(run(1)), None);
    let err = Breaker::builder()
        .consecutive_failures(0)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid consecutive_failures: must be from 1 to 32768, got 0"
    );
}

/// A probe timeout of `MAX_PROBE_TIMEOUT` is taken and one a nanosecond longer refused,
/// naming `probe_timeout`. A probe's age reads at most about 6.7 years (its admission is kept
/// modulo 2^48 µs), so without the bound a timeout of seven years would be taken and never
/// fire (`tests/long_uptime.rs` times the longest one out).
#[test]
fn a_probe_timeout_longer_than_a_year_is_refused() {
    let timeout = |duration| Config {
        probe_timeout: Some(duration),
        ..Config::default()
    };
    assert_eq!(refused_field(timeout(MAX_PROBE_TIMEOUT)), None);
    assert_eq!(
        refused_field(timeout(MAX_PROBE_TIMEOUT + Duration::from_nanos(1))),
        Some("probe_timeout")
    );
    let err = Breaker::builder()
        .probe_timeout(Duration::from_secs(7 * 365 * 24 * 3600))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid probe_timeout: must be at most 31622400 s, got 220752000s"
    );
}

/// An open period under a microsecond (the open deadline's unit) is refused, naming
/// `open_duration`; one microsecond is taken. Catches the lower bound weakened to "not zero",
/// which would let 999 ns through to a deadline that cannot hold it.
#[test]
fn an_open_duration_under_a_microsecond_is_refused() {
    let open = |duration| Config {
        open_duration: duration,
        ..Config::default()
    };
    assert_eq!(
        refused_field(open(Duration::from_nanos(999))),
        Some("open_duration")
    );
    assert_eq!(
        refused_field(open(Duration::from_nanos(1))),
        Some("open_duration")
    );
    assert_eq!(refused_field(open(Duration::from_micros(1))), None);
    let err = Breaker::builder()
        .open_duration(Duration::from_nanos(999))
        .build()
        .unwrap_err();
    assert_eq!(err.field(), "open_duration");
}

/// The longest open period is taken and a nanosecond more is refused. Catches `>` turned
/// into `>=` at the upper bound.
#[test]
fn the_longest_open_duration_is_taken() {
    let open = |duration| Config {
        open_duration: duration,
        ..Config::default()
    };
    assert_eq!(refused_field(open(MAX_OPEN_DURATION)), None);
    assert_eq!(
        refused_field(open(MAX_OPEN_DURATION + Duration::from_nanos(1))),
        Some("open_duration")
    );
}

/// Probe counts are kept in 10 bits of the state word: 1,023 probes (and a success threshold
/// of 1,023) are taken, 1,024 refused, naming the field. The numbers are written out rather
/// than read from `MAX_PROBES`, so this catches the constant raised past what the packing
/// holds, as well as a bound check on the wrong side.
#[test]
fn probes_and_successes_stop_at_1023() {
    assert_eq!(hotbreaker::MAX_PROBES, 1_023);
    let probes = |n| Config {
        half_open_probes: n,
        ..Config::default()
    };
    let successes = |n| Config {
        success_threshold: n,
        ..Config::default()
    };
    assert_eq!(refused_field(probes(1_023)), None);
    assert_eq!(refused_field(probes(1_024)), Some("half_open_probes"));
    assert_eq!(refused_field(successes(1_023)), None);
    assert_eq!(refused_field(successes(1_024)), Some("success_threshold"));
    // Built at the limit, the breaker hands out every probe place.
    let clock = hotbreaker::ManualClock::new();
    let breaker = Breaker::builder()
        .consecutive_failures(1)
        .half_open_probes(1_023)
        .clock(clock.clone())
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(hotbreaker::DEFAULT_OPEN_DURATION + Duration::from_millis(1));
    let probes: Vec<_> = (0..1_023)
        .map(|_| breaker.try_acquire().expect("a probe place"))
        .collect();
    assert!(
        breaker.try_acquire().is_err(),
        "the 1,024th probe has no place"
    );
    drop(probes);
}

/// A back-off of multiplier exactly 1 (open periods that do not grow) and a `max` equal to
/// `open_duration` are both at the edge of their ranges and taken. Catches either bound made
/// strict.
#[test]
fn a_back_off_at_its_edges_is_taken() {
    let backoff = |multiplier, max| Config {
        open_duration: Duration::from_secs(10),
        open_backoff: Some(OpenBackoffConfig { multiplier, max }),
        ..Config::default()
    };
    assert_eq!(refused_field(backoff(1.0, Duration::from_secs(60))), None);
    assert_eq!(refused_field(backoff(2.0, Duration::from_secs(10))), None);
    assert_eq!(refused_field(backoff(2.0, MAX_OPEN_DURATION)), None);
    assert_eq!(
        refused_field(backoff(1.0 - f64::EPSILON, Duration::from_secs(60))),
        Some("open_backoff.multiplier")
    );
    assert_eq!(
        refused_field(backoff(
            2.0,
            Duration::from_secs(10) - Duration::from_nanos(1)
        )),
        Some("open_backoff.max")
    );
    assert_eq!(
        refused_field(backoff(2.0, MAX_OPEN_DURATION + Duration::from_nanos(1))),
        Some("open_backoff.max")
    );
}

/// 256 stripes are taken and 257 refused; 0 refused. Catches the documented limit lowered.
#[test]
fn stripes_stop_at_256() {
    let stripes = |n| Config {
        stripes: Some(n),
        ..Config::default()
    };
    assert_eq!(refused_field(stripes(256)), None);
    assert_eq!(refused_field(stripes(257)), Some("stripes"));
    assert_eq!(refused_field(stripes(0)), Some("stripes"));
}

/// `Builder::config` replaces whatever was set before, a `minimum_calls` given earlier
/// included: the breaker gets the config passed, unchanged. Catches `config` keeping the
/// earlier `minimum_calls`, which would silently change the config passed (or refuse it, when
/// the earlier value exceeds the config's window).
#[test]
fn config_replaces_an_earlier_minimum_calls() {
    let config = Config {
        failure_rate: Some(hotbreaker::FailureRateConfig {
            threshold: 0.5,
            window: 20,
            minimum_calls: None,
        }),
        ..Config::default()
    };
    let builder = Breaker::builder().minimum_calls(5).config(config);
    assert_eq!(builder.to_config(), Ok(config));
    let breaker = Breaker::builder()
        .minimum_calls(30)
        .config(config)
        .build()
        .unwrap();
    assert_eq!(breaker.config(), config);
}

/// `Builder::config` keeps what a `Config` does not hold: the listeners and the clock set
/// before it. Catches a `config` that starts the builder over.
#[test]
fn config_keeps_the_listeners_and_the_clock_set_before() {
    let told = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = told.clone();
    let clock = hotbreaker::ManualClock::new();
    let config = Config {
        consecutive_failures: Some(1),
        open_duration: Duration::from_secs(10),
        ..Config::default()
    };
    let breaker = Breaker::builder()
        .on_transition(move |_| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .clock(clock.clone())
        .config(config)
        .build()
        .unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        told.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "the opening was told"
    );
    clock.advance(Duration::from_secs(10));
    assert!(
        breaker
            .try_acquire()
            .expect("the manual clock ended the period")
            .is_probe()
    );
}
