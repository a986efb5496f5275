//! Many breakers from one file: defaults and each breaker's differences read from TOML, YAML
//! and JSON, errors that name the breaker and the field, and applying the lot to a registry,
//! all or nothing, keeping the state of the breakers already there.
#![cfg(all(feature = "toml", feature = "yaml", feature = "json"))]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbreaker::{
    AppliedConfig, Breaker, Config, FailureRateConfig, Format, ManualClock, Registry,
    RegistryConfig, State, Transition,
};

const TOML: &str = r#"
[defaults]
open_duration = "30s"
slow_call = "250ms"
failure_rate = { threshold = 0.5, window = 20 }

[breakers.payments]
consecutive_failures = 5

[breakers.search]
failure_rate = "off"
consecutive_failures = 3
open_duration = "5s"
slow_call = "off"

[breakers.users-db]
"#;

const YAML: &str = r#"
defaults:
  open_duration: 30s
  slow_call: 250ms
  failure_rate: { threshold: 0.5, window: 20 }
breakers:
  payments:
    consecutive_failures: 5
  search:
    failure_rate: "off"
    consecutive_failures: 3
    open_duration: 5s
    slow_call: "off"
  users-db: {}
"#;

const JSON: &str = r#"{
  "defaults": {
    "open_duration": "30s",
    "slow_call": "250ms",
    "failure_rate": { "threshold": 0.5, "window": 20 }
  },
  "breakers": {
    "payments": { "consecutive_failures": 5 },
    "search": { "failure_rate": "off", "consecutive_failures": 3, "open_duration": "5s", "slow_call": "off" },
    "users-db": {}
  }
}"#;

fn rate(threshold: f64, window: usize) -> Option<FailureRateConfig> {
    Some(FailureRateConfig {
        threshold,
        window,
        minimum_calls: None,
    })
}

/// What the three files above mean, written out in full.
fn expected() -> RegistryConfig {
    let defaults = Config {
        open_duration: Duration::from_secs(30),
        slow_call: Some(Duration::from_millis(250)),
        failure_rate: rate(0.5, 20),
        ..Config::default()
    };
    let mut expected = RegistryConfig {
        defaults,
        ..RegistryConfig::default()
    };
    let payments = Config {
        consecutive_failures: Some(5),
        ..defaults
    };
    let search = Config {
        failure_rate: None,
        consecutive_failures: Some(3),
        open_duration: Duration::from_secs(5),
        slow_call: None,
        ..defaults
    };
    expected.breakers.insert("payments".into(), payments);
    expected.breakers.insert("search".into(), search);
    expected.breakers.insert("users-db".into(), defaults);
    expected
}

#[test]
fn the_three_formats_read_defaults_and_each_breakers_differences() {
    assert_eq!(RegistryConfig::from_toml_str(TOML).unwrap(), expected());
    assert_eq!(RegistryConfig::from_yaml_str(YAML).unwrap(), expected());
    assert_eq!(RegistryConfig::from_json_str(JSON).unwrap(), expected());
    assert_eq!(
        RegistryConfig::from_str_as(Format::Json, JSON).unwrap(),
        expected()
    );
}

#[test]
fn a_name_the_file_does_not_give_gets_the_defaults() {
    let config = RegistryConfig::from_toml_str(TOML).unwrap();
    assert_eq!(config.config_for("inventory"), config.defaults);
    assert_eq!(config.config_for("search").consecutive_failures, Some(3));
}

#[test]
fn an_empty_file_is_all_defaults_and_no_breakers() {
    let config = RegistryConfig::from_toml_str("").unwrap();
    assert_eq!(config, RegistryConfig::default());
}

#[test]
fn a_breakers_rate_table_replaces_the_defaults_whole() {
    let config = RegistryConfig::from_toml_str(
        "[defaults]\nfailure_rate = { threshold = 0.5, window = 20, minimum_calls = 5 }\n\
         [breakers.a]\nfailure_rate = { threshold = 0.25, window = 40 }\n",
    )
    .unwrap();
    assert_eq!(config.config_for("a").failure_rate, rate(0.25, 40));
}

#[test]
fn written_out_a_configuration_reads_back_the_same() {
    let mut config = expected();
    // Settings the defaults leave automatic, set by one breaker.
    config.breakers.get_mut("users-db").unwrap().stripes = Some(4);
    config.breakers.get_mut("payments").unwrap().probe_timeout = Some(Duration::from_secs(2));
    config.breakers.get_mut("payments").unwrap().count_successes = true;
    config
        .breakers
        .get_mut("payments")
        .unwrap()
        .per_thread_windows = true;
    let text = toml::to_string(&config).unwrap();
    assert_eq!(
        RegistryConfig::from_toml_str(&text).unwrap(),
        config,
        "{text}"
    );
    // Each breaker is written as its differences from the defaults.
    assert!(
        text.contains("[breakers.users-db]\nstripes = 4\n"),
        "{text}"
    );
    assert!(text.contains("failure_rate = \"off\""), "{text}");
    assert!(text.contains("per_thread_windows = true"), "{text}");
}

#[test]
fn a_breaker_that_a_file_cannot_describe_is_not_written() {
    // Automatic where the defaults set it: no file can say "automatic" for one breaker.
    for (field, set_in_defaults) in [
        (
            "stripes",
            (|config: &mut Config| config.stripes = Some(4)) as fn(&mut Config),
        ),
        ("failure_records", |config: &mut Config| {
            config.failure_records = Some(64)
        }),
    ] {
        let mut config = RegistryConfig::default();
        set_in_defaults(&mut config.defaults);
        config.breakers.insert("a".into(), Config::default());
        for err in [
            toml::to_string(&config)
                .map(drop)
                .map_err(|e| e.to_string()),
            serde_json::to_string(&config)
                .map(drop)
                .map_err(|e| e.to_string()),
        ] {
            let err = err.expect_err("written, though a file cannot say it");
            assert!(err.contains(&format!("breakers.a.{field}")), "{err}");
        }
    }
}

#[test]
fn a_breaker_takes_the_defaults_switches_it_does_not_set() {
    let config = RegistryConfig::from_toml_str(
        "[defaults]\nper_thread_windows = true\ncount_successes = true\n[breakers.a]\n",
    )
    .unwrap();
    let a = config.config_for("a");
    assert!(a.per_thread_windows, "per_thread_windows from the defaults");
    assert!(a.count_successes, "count_successes from the defaults");
    assert_eq!(config.breakers["a"], config.defaults);
}

#[test]
fn a_breaker_replaced_while_the_file_is_applied_is_the_one_reconfigured() {
    let registry = Arc::new(Registry::<ManualClock>::default());
    let first = registry
        .get_or_insert_with("a", |_| Breaker::builder().clock(ManualClock::new()))
        .unwrap();
    let mut config = RegistryConfig::default();
    let run_of_7 = Config {
        consecutive_failures: Some(7),
        ..Config::default()
    };
    config.breakers.insert("a".into(), run_of_7);
    config.breakers.insert("b".into(), Config::default());
    // While "b" is built, after "a" was checked, "a" is replaced: the check runs again.
    let replaced = Mutex::new(None);
    let inside = Arc::clone(&registry);
    registry
        .apply_config(&config, |name| {
            let mut replaced = replaced.lock().unwrap();
            if name == "b" && replaced.is_none() {
                inside.remove("a");
                *replaced = inside
                    .get_or_insert_with("a", |_| Breaker::builder().clock(ManualClock::new()))
                    .ok();
            }
            Breaker::builder().clock(ManualClock::new())
        })
        .unwrap();
    let registered = registry.get("a").unwrap();
    let replacement = replaced.lock().unwrap().clone().unwrap();
    assert!(Arc::ptr_eq(&registered, &replacement));
    assert!(!Arc::ptr_eq(&registered, &first));
    assert_eq!(
        registered.config().consecutive_failures,
        Some(7),
        "the breaker registered as `a` has the file's configuration"
    );
}

#[test]
fn errors_name_the_breaker_and_the_field() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "[breakers.search]\nfailure_rate = { threshold = 1.5, window = 20 }",
            "breakers.search.failure_rate.threshold",
            "must be greater than 0 and at most 1, got 1.5",
        ),
        (
            "[defaults]\nopen_duration = \"0s\"",
            "defaults.open_duration",
            "must be at least 1 µs",
        ),
        (
            "[breakers.a]\nconsecutive_failures = \"of\"",
            "breakers.a.consecutive_failures",
            "invalid type: string \"of\"",
        ),
        (
            "[breakers.a]\nconsecutive_failures = -1",
            "breakers.a.consecutive_failures",
            "invalid value: integer `-1`",
        ),
        (
            "[breakers.a]\nwindow = 20",
            "breakers.a.window",
            "unknown field",
        ),
        ("[breakerz.a]\n", "breakerz", "unknown field"),
    ];
    for (text, field, reason) in cases {
        let err = RegistryConfig::from_toml_str(text).unwrap_err();
        assert_eq!(err.field(), field, "{err}");
        assert!(err.reason().contains(reason), "{err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    let err = RegistryConfig::from_yaml_str("breakers:\n  a:\n    slow_call: 3 fortnights\n")
        .unwrap_err();
    assert_eq!(err.field(), "breakers.a.slow_call");
    // A name with a line break in it, written as an escape: the error stays one line.
    let err =
        RegistryConfig::from_json_str(r#"{"breakers": {"a\nb": {"stripes": 0}}}"#).unwrap_err();
    assert_eq!(err.field(), r"breakers.a\nb.stripes");
    let err = RegistryConfig::from_yaml_str("breakers:\n  \"a\\rb\": { windw: 3 }\n").unwrap_err();
    assert_eq!(err.field(), r"breakers.a\rb.windw", "{err}");
    let err = RegistryConfig::from_json_str(r#"{"breakers": {"": {}}}"#).unwrap_err();
    assert_eq!(
        (err.field(), err.reason()),
        ("breakers", "a breaker's name is empty")
    );
}

/// A builder on a manual clock, which nothing here moves: an opened breaker stays open.
fn builder() -> hotbreaker::Builder<ManualClock> {
    Breaker::builder().clock(ManualClock::new())
}

/// A registry holding `payments`, which trips on 2 failures in a row and keeps
/// `failure_records` failure records.
fn registry_with_payments(
    failure_records: usize,
) -> (Registry<ManualClock>, Arc<Breaker<ManualClock>>) {
    let registry = Registry::<ManualClock>::default();
    let payments = registry
        .get_or_insert_with("payments", |_| {
            builder()
                .consecutive_failures(2)
                .failure_records(failure_records)
                .open_duration(Duration::from_secs(60))
        })
        .unwrap();
    (registry, payments)
}

#[test]
fn applying_reconfigures_the_registered_and_builds_the_rest() {
    // Room for the file's window of 20.
    let (registry, payments) = registry_with_payments(32);
    registry
        .get_or_insert_with("legacy", |_| builder())
        .unwrap();
    // Open before the new configuration arrives: it must stay open.
    payments.try_acquire().unwrap().failure();
    payments.try_acquire().unwrap().failure();
    assert_eq!(payments.state(), State::Open);

    let named = Arc::new(Mutex::new(Vec::new()));
    let config = RegistryConfig::from_toml_str(TOML).unwrap();
    let applied = registry
        .apply_config(&config, |name| {
            named.lock().unwrap().push(name.to_owned());
            builder().consecutive_failures(99)
        })
        .unwrap();
    let mut want = AppliedConfig::default();
    want.reconfigured = vec!["payments".into()];
    want.inserted = vec!["search".into(), "users-db".into()];
    want.not_in_config = vec!["legacy".into()];
    assert_eq!(applied, want);
    assert_eq!(*named.lock().unwrap(), ["search", "users-db"]);

    // The registered breaker was changed in place and kept its state.
    assert!(Arc::ptr_eq(&registry.get("payments").unwrap(), &payments));
    assert_eq!(payments.config(), config.config_for("payments"));
    assert_eq!(payments.state(), State::Open);
    // The new ones have the file's configuration, not the builder's.
    for name in ["search", "users-db"] {
        assert_eq!(
            registry.get(name).unwrap().config(),
            config.config_for(name)
        );
    }
    assert!(registry.get("legacy").is_some(), "left as it was");

    // The same file again changes nothing.
    let again = registry.apply_config(&config, |_| builder()).unwrap();
    assert!(again.reconfigured.is_empty() && again.inserted.is_empty());
    assert_eq!(again.unchanged, ["payments", "search", "users-db"]);
}

#[test]
fn the_builder_attaches_listeners_by_name() {
    let registry = Registry::<ManualClock>::default();
    let seen = Arc::new(Mutex::new(Vec::<(String, Transition)>::new()));
    let config =
        RegistryConfig::from_toml_str("[breakers.search]\nconsecutive_failures = 1\n").unwrap();
    registry
        .apply_config(&config, |name| {
            let (seen, name) = (Arc::clone(&seen), name.to_owned());
            builder().on_transition(move |t| seen.lock().unwrap().push((name.clone(), *t)))
        })
        .unwrap();
    registry
        .get("search")
        .unwrap()
        .try_acquire()
        .unwrap()
        .failure();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0.as_str(), seen[0].1.to), ("search", State::Open));
}

#[test]
fn a_refused_breaker_changes_nothing_at_all() {
    let (registry, payments) = registry_with_payments(2);
    let before = payments.config();
    // `billing`, registered, sorts before `payments` and would be reconfigured.
    let billing = registry
        .get_or_insert_with("billing", |_| builder().consecutive_failures(2))
        .unwrap();
    let billing_before = billing.config();
    // `payments` keeps 2 failure records; a window of 40 needs a new breaker. `alpha` sorts
    // first and is valid: it must not be built either.
    let text = "[breakers.alpha]\nconsecutive_failures = 1\n\
                [breakers.billing]\nconsecutive_failures = 1\n\
                [breakers.payments]\nfailure_rate = { threshold = 0.5, window = 40 }\n";
    let config = RegistryConfig::from_toml_str(text).unwrap();
    let err = registry.apply_config(&config, |_| builder()).unwrap_err();
    assert_eq!(err.breaker(), Some("payments"));
    assert_eq!(err.field(), "breakers.payments.failure_rate.window");
    assert!(
        err.to_string()
            .starts_with("invalid breakers.payments.failure_rate.window: ")
    );
    assert_eq!(payments.config(), before);
    assert_eq!(
        billing.config(),
        billing_before,
        "checked before any is applied"
    );
    assert!(registry.get("alpha").is_none());
    assert_eq!(registry.len(), 2);
}

#[test]
fn a_live_breakers_stripes_are_checked_too() {
    let registry = Registry::<ManualClock>::default();
    let live = registry
        .get_or_insert_with("live", |_| builder().stripes(2))
        .unwrap();
    let config = RegistryConfig::from_toml_str("[breakers.live]\nstripes = 4\n").unwrap();
    let err = registry.apply_config(&config, |_| builder()).unwrap_err();
    assert_eq!(err.field(), "breakers.live.stripes", "{err}");
    assert_eq!(live.config().stripes, Some(2));
}

#[test]
fn thresholds_read_back_exactly_from_every_format() {
    // The shortest decimal of this double reads back one step off without an exact parser.
    let mut config = RegistryConfig::default();
    config.defaults.failure_rate = rate(0.09745963054723017, 20);
    config.breakers.insert(
        "a".into(),
        Config {
            failure_rate: rate(0.7000000000000001, 20),
            ..config.defaults
        },
    );
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(
        RegistryConfig::from_json_str(&json).unwrap(),
        config,
        "{json}"
    );
    let yaml = serde_yaml::to_string(&config).unwrap();
    assert_eq!(
        RegistryConfig::from_yaml_str(&yaml).unwrap(),
        config,
        "{yaml}"
    );
    let toml = toml::to_string(&config).unwrap();
    assert_eq!(
        RegistryConfig::from_toml_str(&toml).unwrap(),
        config,
        "{toml}"
    );
    let single = serde_json::to_string(&config.defaults).unwrap();
    assert_eq!(Config::from_json_str(&single).unwrap(), config.defaults);
}

#[test]
fn an_empty_value_turns_a_setting_off_as_in_a_single_breakers_file() {
    let defaults =
        "\"defaults\": { \"consecutive_failures\": 5, \"stripes\": 2, \"slow_call\": \"1s\" }";
    let json = format!(
        "{{ {defaults}, \"breakers\": {{ \"a\": {{ \"consecutive_failures\": null, \"stripes\": null, \"slow_call\": null }} }} }}"
    );
    let a = RegistryConfig::from_json_str(&json)
        .unwrap()
        .config_for("a");
    assert_eq!(
        (a.consecutive_failures, a.stripes, a.slow_call),
        (None, None, None)
    );
    // As a single breaker's file reads the same values.
    let single = Config::from_json_str(
        r#"{ "consecutive_failures": null, "stripes": null, "slow_call": null, "probe_timeout": null }"#,
    )
    .unwrap();
    assert_eq!(
        (
            single.consecutive_failures,
            single.stripes,
            single.slow_call,
            single.probe_timeout
        ),
        (None, None, None, None)
    );
    let single = Config::from_yaml_str("slow_call: ~\nprobe_timeout:\n").unwrap();
    assert_eq!((single.slow_call, single.probe_timeout), (None, None));
    // And in the defaults, which are read as a single breaker's settings are.
    let defaults = RegistryConfig::from_json_str(
        r#"{ "defaults": { "slow_call": null, "probe_timeout": null }, "breakers": { "a": {} } }"#,
    )
    .unwrap()
    .config_for("a");
    assert_eq!((defaults.slow_call, defaults.probe_timeout), (None, None));
    // A duration given is still read, and a bad one still refused with its field.
    let single = Config::from_yaml_str("slow_call: 250ms\n").unwrap();
    assert_eq!(
        single.slow_call,
        Some(std::time::Duration::from_millis(250))
    );
    let err = Config::from_json_str(r#"{ "probe_timeout": 5 }"#).unwrap_err();
    assert_eq!(err.field(), "probe_timeout", "{err}");
    for yaml in [
        "defaults: { consecutive_failures: 5 }\nbreakers:\n  a:\n    consecutive_failures:\n",
        "defaults: { consecutive_failures: 5 }\nbreakers:\n  a:\n    consecutive_failures: ~\n",
    ] {
        let a = RegistryConfig::from_yaml_str(yaml).unwrap().config_for("a");
        assert_eq!(a.consecutive_failures, None, "{yaml}");
    }
    // A setting that cannot be off refuses an empty value, naming it.
    let err =
        RegistryConfig::from_json_str(r#"{ "breakers": { "a": { "half_open_probes": null } } }"#)
            .unwrap_err();
    assert_eq!(err.field(), "breakers.a.half_open_probes", "{err}");
}

#[test]
fn a_breaker_left_without_a_rule_gets_the_default_rule() {
    let config = RegistryConfig::from_toml_str(
        "[defaults]\nfailure_rate = { threshold = 0.5, window = 20 }\n\
         [breakers.a]\nfailure_rate = \"off\"\n",
    )
    .unwrap();
    let a = config.config_for("a");
    assert_eq!((a.failure_rate, a.consecutive_failures), (None, None));
    let registry = Registry::<ManualClock>::default();
    registry.apply_config(&config, |_| builder()).unwrap();
    let (threshold, window) = hotbreaker::DEFAULT_FAILURE_RATE;
    let breaker = registry.get("a").unwrap();
    // The default rule: half of the last 100 calls.
    assert_eq!((threshold, window), (0.5, 100));
    for _ in 0..50 {
        breaker.try_acquire().unwrap().success();
    }
    for _ in 0..49 {
        breaker.try_acquire().unwrap().failure();
    }
    assert_eq!(breaker.state(), State::Closed);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
}

#[test]
fn yaml_errors_name_the_path_once() {
    for (yaml, field) in [
        ("breakers:\n  a:\n    windw: 3\n", "breakers.a.windw"),
        (
            "breakers:\n  \"a\\tb\": { stripes: x }\n",
            r"breakers.a\tb.stripes",
        ),
    ] {
        let err = RegistryConfig::from_yaml_str(yaml).unwrap_err();
        assert_eq!(err.field(), field, "{err}");
        assert!(!err.reason().starts_with("breakers"), "{err}");
    }
}

#[test]
fn a_configuration_made_in_code_is_checked_too() {
    let registry = Registry::<ManualClock>::default();
    let mut config = RegistryConfig::default();
    config.defaults.half_open_probes = 0;
    let err = registry.apply_config(&config, |_| builder()).unwrap_err();
    assert_eq!(
        (err.breaker(), err.field()),
        (None, "defaults.half_open_probes")
    );

    let mut config = RegistryConfig::default();
    config.breakers.insert(
        "a".into(),
        Config {
            success_threshold: 0,
            ..Config::default()
        },
    );
    let err = registry.apply_config(&config, |_| builder()).unwrap_err();
    assert_eq!(err.field(), "breakers.a.success_threshold");
    assert!(registry.is_empty());
}

#[test]
fn a_breaker_can_turn_off_the_defaults_open_backoff() {
    let text = "[defaults]\nopen_backoff = { multiplier = 2.0, max = \"5m\" }\n\
                [breakers.a]\nopen_backoff = \"off\"\n[breakers.b]\n";
    let config = RegistryConfig::from_toml_str(text).unwrap();
    assert_eq!(config.config_for("a").open_backoff, None);
    assert_eq!(
        config.config_for("b").open_backoff.map(|b| b.max),
        Some(Duration::from_secs(300))
    );
    let written = toml::to_string(&config).unwrap();
    assert_eq!(
        RegistryConfig::from_toml_str(&written).unwrap(),
        config,
        "{written}"
    );
}

#[test]
fn minimum_calls_out_of_range_is_named_by_its_path_from_the_top() {
    let err = RegistryConfig::from_toml_str(
        "[breakers.search]\nfailure_rate = { threshold = 0.5, window = 10, minimum_calls = 20 }",
    )
    .unwrap_err();
    assert_eq!(err.field(), "breakers.search.failure_rate.minimum_calls");
}

#[test]
fn a_breaker_named_twice_is_refused() {
    let json = r#"{ "breakers": {
        "payments": { "consecutive_failures": 2 },
        "payments": { "half_open_probes": 3 } } }"#;
    let yaml = "breakers:\n  payments:\n    consecutive_failures: 2\n  payments:\n    half_open_probes: 3\n";
    for (format, text) in [(Format::Json, json), (Format::Yaml, yaml)] {
        let err = RegistryConfig::from_str_as(format, text)
            .expect_err("the first `payments` would be lost");
        assert_eq!(err.field(), "breakers", "{format}: {err}");
        assert!(
            err.to_string().contains("\"payments\" is given twice"),
            "{format}: {err}"
        );
    }
    // TOML refuses a repeated table itself.
    let toml = "[breakers.payments]\nconsecutive_failures = 2\n[breakers.payments]\nhalf_open_probes = 3\n";
    assert!(RegistryConfig::from_str_as(Format::Toml, toml).is_err());
}

#[test]
fn a_name_given_twice_is_quoted_as_written() {
    // Two spaces in the name: the reason quotes the name the file has, not "a b".
    let json = r#"{ "breakers": { "a  b": {}, "a  b": {} } }"#;
    let err = RegistryConfig::from_str_as(Format::Json, json).expect_err("given twice");
    assert!(
        err.to_string()
            .contains("the breaker \"a  b\" is given twice"),
        "{err}"
    );
}

#[test]
fn a_registry_file_is_read_by_name_only_never_by_position() {
    let cases: [(Format, &str, &str); 5] = [
        (Format::Json, "[]", ""),
        (Format::Json, r#"{"defaults": [null, 5]}"#, "defaults"),
        (
            Format::Json,
            r#"{"breakers": {"a": [null, 5]}}"#,
            "breakers.a",
        ),
        (
            Format::Toml,
            "[breakers.a]\nfailure_rate = [0.5, 20]",
            "breakers.a.failure_rate",
        ),
        (
            Format::Yaml,
            "breakers:\n  a:\n    open_backoff: [2.0, 1m]",
            "breakers.a.open_backoff",
        ),
    ];
    for (format, text, field) in cases {
        let error = RegistryConfig::from_str_as(format, text)
            .expect_err(&format!("{format} {text:?} read by position"));
        assert_eq!(error.field(), field, "{error}");
    }
}

#[test]
fn one_breaker_under_two_names_gets_one_configuration_or_an_error() {
    let registry = Registry::<ManualClock>::default();
    let shared = registry
        .get_or_insert_with("users-db", |_| builder().consecutive_failures(5))
        .unwrap();
    let alias = registry.insert_if_absent("users-db-read", Arc::clone(&shared));
    assert!(Arc::ptr_eq(&alias, &shared));
    let run = |n: usize| Config {
        consecutive_failures: Some(n),
        ..Config::default()
    };
    let mut config = RegistryConfig::default();
    config.breakers.insert("users-db".into(), run(2));
    config.breakers.insert("users-db-read".into(), run(3));
    let error = registry
        .apply_config(&config, |_| builder())
        .expect_err("one breaker cannot have both");
    assert_eq!(error.field(), "breakers.users-db-read", "{error}");
    assert!(error.reason().contains("\"users-db\""), "{error}");
    assert_eq!(
        shared.config().consecutive_failures,
        Some(5),
        "nothing changed"
    );

    config.breakers.insert("users-db-read".into(), run(2));
    let applied = registry.apply_config(&config, |_| builder()).unwrap();
    assert_eq!(applied.reconfigured, ["users-db"]);
    assert_eq!(
        applied.unchanged,
        ["users-db-read"],
        "changed once, by its other name"
    );
    assert_eq!(shared.config().consecutive_failures, Some(2));
}

#[test]
fn two_reloads_at_once_apply_one_file_and_then_the_other() {
    let registry = Arc::new(Registry::<ManualClock>::default());
    let file = |run: usize| {
        let mut config = RegistryConfig::default();
        for name in ["a", "b", "c", "d"] {
            let config_of_one = Config {
                consecutive_failures: Some(run),
                failure_records: Some(8),
                ..Config::default()
            };
            config.breakers.insert(name.into(), config_of_one);
        }
        config
    };
    let (first, second) = (file(2), file(3));
    registry.apply_config(&first, |_| builder()).unwrap();
    let mut mixed = 0;
    for _ in 0..500 {
        let (other, first_again) = (Arc::clone(&registry), first.clone());
        let reload = std::thread::spawn(move || {
            other.apply_config(&first_again, |_| builder()).unwrap();
        });
        registry.apply_config(&second, |_| builder()).unwrap();
        reload.join().unwrap();
        let runs: Vec<_> = registry
            .breakers()
            .iter()
            .map(|(_, breaker)| breaker.config().consecutive_failures)
            .collect();
        if runs.iter().any(|run| *run != runs[0]) {
            mixed += 1;
        }
        registry.apply_config(&first, |_| builder()).unwrap();
    }
    assert_eq!(mixed, 0, "rounds that left breakers from both files");
}

#[test]
fn a_builder_may_apply_a_configuration_to_its_own_registry() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let registry = Arc::new(Registry::<ManualClock>::default());
        let one = |name: &str| {
            let mut config = RegistryConfig::default();
            config.breakers.insert(name.into(), Config::default());
            config
        };
        let (outer, inner) = (one("a"), one("a-fallback"));
        let inside = Arc::clone(&registry);
        let applied = registry
            .apply_config(&outer, move |_| {
                // Building "a" makes sure its fallback is there too.
                inside.apply_config(&inner, |_| builder()).unwrap();
                builder()
            })
            .unwrap();
        let names: Vec<String> = registry.breakers().into_iter().map(|(n, _)| n).collect();
        done.send((applied.inserted, names)).unwrap();
    });
    // Generous: the apply takes microseconds; a deadlock never ends.
    let (inserted, names) = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("apply_config called from a builder of apply_config never returned");
    assert_eq!(inserted, ["a"]);
    assert_eq!(names, ["a", "a-fallback"]);
}

#[test]
fn a_registry_config_deserialized_as_part_of_other_settings_is_a_table_too() {
    let positional = serde_json::json!([{}, {}]);
    let read: Result<RegistryConfig, _> = serde_json::from_value(positional);
    assert!(read.is_err(), "read by position: {read:?}");
}

#[test]
fn a_registry_config_flattened_into_a_programs_settings_takes_only_its_keys() {
    #[derive(serde::Deserialize)]
    struct Settings {
        #[serde(flatten)]
        breakers: RegistryConfig,
        #[serde(flatten)]
        server: Server,
    }
    #[derive(serde::Deserialize)]
    struct Server {
        port: u16,
    }
    let text = r#"{"port": 8080, "defaults": {"consecutive_failures": 3}, "breakers": {"db": {}}}"#;
    let settings: Settings = serde_json::from_str(text).expect("the program's settings");
    assert_eq!(settings.server.port, 8080);
    assert_eq!(
        settings.breakers.breakers["db"].consecutive_failures,
        Some(3)
    );
}

#[test]
fn a_yaml_name_that_is_not_text_is_refused_and_quoted_it_is_a_name() {
    // `~` and `null` are one key in YAML, as are `1` and `0x1`: read by their letters they
    // would be two breakers.
    for (key, what) in [
        ("~", "unit value"),
        ("null", "unit value"),
        ("1", "integer `1`"),
        ("0x1", "integer `1`"),
        ("true", "boolean `true`"),
        ("1.5", "floating point `1.5`"),
    ] {
        let yaml = format!("breakers:\n  {key}:\n    consecutive_failures: 2\n");
        let err = RegistryConfig::from_yaml_str(&yaml).expect_err(key);
        // Under `breakers`: the key as serde_path_to_error writes it (`?` for a null).
        assert!(err.field().starts_with("breakers."), "{key}: {err}");
        assert_eq!(err.line(), Some(2), "{key}: {err}");
        assert!(
            err.to_string()
                .contains(&format!("invalid type: {what}, expected a breaker's name")),
            "{key}: {err}"
        );
    }
    let yaml = "breakers:\n  \"1\":\n    consecutive_failures: 2\n  \"~\": {}\n";
    let config = RegistryConfig::from_yaml_str(yaml).unwrap();
    assert_eq!(
        config.breakers.keys().collect::<Vec<_>>(),
        ["1", "~"],
        "quoted, they are names"
    );
    // JSON and TOML keys are always text.
    let json = r#"{ "breakers": { "1": {}, "true": {} } }"#;
    assert_eq!(
        RegistryConfig::from_json_str(json).unwrap().breakers.len(),
        2
    );
    let toml = "[breakers.1]\n[breakers.true]\n";
    assert_eq!(
        RegistryConfig::from_toml_str(toml).unwrap().breakers.len(),
        2
    );
}
