//! Configuration files: TOML, YAML and JSON read into a `Config`, errors that name the field in
//! one line, and live reconfiguration from parsed files while threads call.
#![cfg(all(feature = "toml", feature = "yaml", feature = "json"))]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hotbreaker::{Breaker, Config, ConfigFileError, FailureRateConfig, Format};

const TOML: &str = r#"
# Payments: trip on half of the last 20 calls, or on 5 failures in a row.
consecutive_failures = 5
open_duration = "30s"
half_open_probes = 2
success_threshold = 2
slow_call = "250ms"
probe_timeout = "5s"
per_thread_windows = true

[failure_rate]
threshold = 0.5
window = 20
minimum_calls = 10
"#;

const YAML: &str = "
consecutive_failures: 5
open_duration: 30s
half_open_probes: 2
success_threshold: 2
slow_call: 250ms
probe_timeout: 5s
per_thread_windows: true
failure_rate:
  threshold: 0.5
  window: 20
  minimum_calls: 10
";

const JSON: &str = r#"{
  "consecutive_failures": 5,
  "open_duration": "30s",
  "half_open_probes": 2,
  "success_threshold": 2,
  "slow_call": "250ms",
  "probe_timeout": "5s",
  "per_thread_windows": true,
  "failure_rate": { "threshold": 0.5, "window": 20, "minimum_calls": 10 }
}"#;

fn expected() -> Config {
    Config {
        failure_rate: Some(FailureRateConfig {
            threshold: 0.5,
            window: 20,
            minimum_calls: Some(10),
        }),
        consecutive_failures: Some(5),
        open_duration: Duration::from_secs(30),
        half_open_probes: 2,
        success_threshold: 2,
        stripes: None,
        failure_records: None,
        per_thread_windows: true,
        count_successes: false,
        slow_call: Some(Duration::from_millis(250)),
        probe_timeout: Some(Duration::from_secs(5)),
        open_backoff: None,
    }
}

#[test]
fn the_three_formats_read_the_same_config() {
    assert_eq!(Config::from_toml_str(TOML).unwrap(), expected());
    assert_eq!(Config::from_yaml_str(YAML).unwrap(), expected());
    assert_eq!(Config::from_json_str(JSON).unwrap(), expected());
    assert_eq!(Config::from_str_as(Format::Toml, TOML).unwrap(), expected());
    let breaker = Breaker::builder().config(expected()).build().unwrap();
    assert_eq!(breaker.config(), expected());
}

#[test]
fn fields_left_out_keep_their_defaults() {
    assert_eq!(Config::from_toml_str("").unwrap(), Config::default());
    let config = Config::from_json_str(r#"{ "open_duration": "1m 30s" }"#).unwrap();
    assert_eq!(
        config,
        Config {
            open_duration: Duration::from_secs(90),
            ..Config::default()
        }
    );
}

#[test]
fn a_config_written_out_reads_back() {
    let config = expected();
    let toml = toml::to_string(&config).unwrap();
    assert!(toml.contains("open_duration = \"30s\""), "{toml}");
    assert_eq!(Config::from_toml_str(&toml).unwrap(), config);
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(Config::from_json_str(&json).unwrap(), config);
    let yaml = serde_yaml::to_string(&config).unwrap();
    assert_eq!(Config::from_yaml_str(&yaml).unwrap(), config);
}

/// Reads `text` in `format`, and checks the error: its field, that it is one line, and that the
/// line names the field and contains `reason`.
fn refused(format: Format, text: &str, field: &str, reason: &str) -> ConfigFileError {
    let err = Config::from_str_as(format, text).expect_err(text);
    let line = err.to_string();
    println!("{line}");
    assert_eq!(err.field(), field, "{format}: {line}");
    assert!(!line.contains('\n'), "{format}: one line: {line:?}");
    assert!(
        line.starts_with(&format!("invalid {field}: ")),
        "{format}: names the field: {line}"
    );
    assert!(
        line.contains(reason),
        "{format}: says why ({reason}): {line}"
    );
    err
}

#[test]
fn an_unknown_field_is_refused() {
    for (format, text) in [
        (Format::Toml, "consecutive_failures = 5\nretries = 3\n"),
        (Format::Yaml, "consecutive_failures: 5\nretries: 3\n"),
        (
            Format::Json,
            r#"{ "consecutive_failures": 5, "retries": 3 }"#,
        ),
    ] {
        let err = refused(format, text, "retries", "unknown field `retries`");
        assert!(!err.is_out_of_range());
        let expected_line = if format == Format::Json { 1 } else { 2 };
        assert_eq!(err.line(), Some(expected_line), "{err}");
    }
    // Inside the failure_rate table too.
    refused(
        Format::Toml,
        "[failure_rate]\nthreshold = 0.5\nwindow = 20\nwindow_size = 20\n",
        "failure_rate.window_size",
        "unknown field `window_size`",
    );
}

#[test]
fn an_unknown_key_with_line_breaks_is_named_in_one_line() {
    // Found by the config_text fuzz target: the key went into the message as written.
    for (format, text) in [
        (Format::Yaml, "\"retries\\r\\nmax\": 3\n"),
        (Format::Json, r#"{ "retries\r\nmax": 3 }"#),
        (Format::Toml, "\"retries\\r\\nmax\" = 3\n"),
    ] {
        refused(format, text, r"retries\r\nmax", "unknown field");
    }
}

#[test]
fn a_key_with_two_spaces_is_quoted_as_written() {
    for (format, text) in [
        (Format::Yaml, "\"retries  max\": 3\n"),
        (Format::Json, r#"{ "retries  max": 3 }"#),
        (Format::Toml, "\"retries  max\" = 3\n"),
    ] {
        refused(format, text, "retries  max", "unknown field `retries  max`");
    }
}

#[test]
fn a_byte_order_mark_before_the_text_is_skipped_in_every_format() {
    for (format, text) in [
        (Format::Toml, "\u{feff}stripes = 4\n"),
        (Format::Yaml, "\u{feff}stripes: 4\n"),
        (Format::Json, "\u{feff}{ \"stripes\": 4 }"),
    ] {
        let config = Config::from_str_as(format, text).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(config.stripes, Some(4), "{format}");
    }
    // After the mark, positions are the ones an editor shows.
    let err = Config::from_json_str("\u{feff}{ \"stripes\": x }").expect_err("not a number");
    assert_eq!((err.line(), err.column()), (Some(1), Some(14)), "{err}");
}

#[test]
fn a_bad_duration_is_refused() {
    for (format, text) in [
        (Format::Toml, "open_duration = \"30 parsecs\"\n"),
        (Format::Yaml, "open_duration: 30 parsecs\n"),
        (Format::Json, r#"{ "open_duration": "30 parsecs" }"#),
    ] {
        let err = refused(
            format,
            text,
            "open_duration",
            "unknown time unit \"parsecs\"",
        );
        assert_eq!(err.line(), Some(1), "{err}");
    }
    // A fraction humantime cannot place is refused for that reason, not as an overflow:
    // 0.3333 h is 1199.88 s, which is neither too large nor below a nanosecond.
    for text in [
        "open_duration = \"0.3333h\"\n",
        "open_duration = \"1.5ns\"\n",
    ] {
        refused(
            Format::Toml,
            text,
            "open_duration",
            "a fraction must come to whole nanoseconds, and of an hour or a longer unit to \
             whole seconds",
        );
    }
    // A number is not a duration: durations carry their unit.
    refused(
        Format::Toml,
        "open_duration = 30\n",
        "open_duration",
        "invalid type",
    );
}

#[test]
fn a_duration_of_2_to_the_64_seconds_or_more_is_refused_not_a_panic() {
    // humantime 2.4 adds the parts up and, where they come to 2^64 s exactly with a carry
    // from the nanoseconds, panics in `Duration::new` instead of saying it overflows.
    for text in [
        "18446744073709551615s 1000000000ns",
        "18446744073709551615s 500ms 500ms",
        "18446744073709551615s 0.5s 0.5s",
        "18446744073709551614s1s1000ms",
    ] {
        for (format, file) in [
            (Format::Toml, format!("slow_call = \"{text}\"\n")),
            (Format::Yaml, format!("slow_call: {text}\n")),
            (Format::Json, format!(r#"{{ "slow_call": "{text}" }}"#)),
        ] {
            refused(format, &file, "slow_call", "number is too large");
        }
        refused(
            Format::Toml,
            &format!("open_duration = \"{text}\"\n"),
            "open_duration",
            "number is too large",
        );
        let err = hotbreaker::RegistryConfig::from_toml_str(&format!(
            "[breakers.a]\nprobe_timeout = \"{text}\"\n"
        ))
        .unwrap_err();
        assert_eq!(err.field(), "breakers.a.probe_timeout", "{err}");
    }
    // Just below, the same parts still read, to the nanosecond.
    let config =
        Config::from_toml_str("slow_call = \"18446744073709551615s 500ms 499999999ns\"").unwrap();
    assert_eq!(config.slow_call, Some(Duration::MAX));
    let config = Config::from_toml_str("slow_call = \"1 000s 1m30s 0.5ms\"").unwrap();
    assert_eq!(config.slow_call, Some(Duration::new(1090, 500_000)));
}

#[test]
fn yaml_nested_deeper_than_64_flow_levels_is_refused_before_it_is_parsed() {
    // libyaml's time grows with flow depth times length: 100,000 levels took 26 s to refuse.
    let depth = 100_000;
    let text = format!("failure_rate: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    let err = Config::from_yaml_str(&text).unwrap_err();
    assert_eq!(err.field(), "", "{err}");
    assert_eq!(
        (err.line(), err.column()),
        (Some(1), Some(15 + 64)),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "invalid YAML configuration: flow collections nested more than 64 deep (YAML, line 1, column 79)"
    );
    let err =
        hotbreaker::RegistryConfig::from_yaml_str(&format!("breakers:\n  a: {}", &text[14..]))
            .unwrap_err();
    assert!(
        err.to_string().contains("nested more than 64 deep"),
        "{err}"
    );
    // Behind a comment ended by a line break other than a line feed, or a byte-order mark,
    // the brackets are counted as libyaml would read them.
    for hidden in [
        format!("open_duration: 5s #\r{}", &text[..text.len() - 1]),
        format!("open_duration: 5s #\u{2028}{}", &text[..text.len() - 1]),
        format!("\u{feff}{}", &text[14..]),
    ] {
        let err = Config::from_yaml_str(&hidden).unwrap_err();
        assert!(
            err.to_string().contains("nested more than 64 deep"),
            "{err}"
        );
    }
    // 64 levels are parsed, and refused for what they hold.
    let text = format!("failure_rate: {}{}\n", "[".repeat(64), "]".repeat(64));
    let err = Config::from_yaml_str(&text).unwrap_err();
    assert_eq!(err.field(), "failure_rate", "{err}");
    assert!(!err.to_string().contains("nested"), "{err}");
    // Brackets in quotes and comments are text.
    let deep = "[".repeat(1000);
    let config = Config::from_yaml_str(&format!(
        "# {deep}\nconsecutive_failures: 3 # {deep}\nopen_duration: '5s' # '{deep}\n"
    ))
    .unwrap();
    assert_eq!(config.consecutive_failures, Some(3));
}

#[test]
fn a_slow_call_limit_of_zero_is_refused_after_parsing() {
    for (format, text) in [
        (Format::Toml, "slow_call = \"0s\"\n"),
        (Format::Yaml, "slow_call: 0s\n"),
        (Format::Json, r#"{ "slow_call": "0s" }"#),
    ] {
        let err = refused(format, text, "slow_call", "must be greater than 0");
        assert!(err.is_out_of_range());
    }
    refused(
        Format::Toml,
        "slow_call = \"fast\"\n",
        "slow_call",
        "expected number at 0",
    );
}

#[test]
fn a_probe_timeout_of_zero_is_refused_after_parsing() {
    for (format, text) in [
        (Format::Toml, "probe_timeout = \"0s\"\n"),
        (Format::Yaml, "probe_timeout: 0s\n"),
        (Format::Json, r#"{ "probe_timeout": "0ms" }"#),
    ] {
        let err = refused(format, text, "probe_timeout", "must be greater than 0");
        assert!(err.is_out_of_range());
    }
    refused(
        Format::Yaml,
        "probe_timeout: soon\n",
        "probe_timeout",
        "expected number at 0",
    );
}

#[test]
fn a_threshold_above_one_is_refused_after_parsing() {
    for (format, text) in [
        (
            Format::Toml,
            "[failure_rate]\nthreshold = 1.5\nwindow = 20\n",
        ),
        (
            Format::Yaml,
            "failure_rate:\n  threshold: 1.5\n  window: 20\n",
        ),
        (
            Format::Json,
            r#"{ "failure_rate": { "threshold": 1.5, "window": 20 } }"#,
        ),
    ] {
        let err = refused(
            format,
            text,
            "failure_rate.threshold",
            "must be greater than 0 and at most 1, got 1.5",
        );
        assert!(err.is_out_of_range());
    }
}

#[test]
fn a_window_of_zero_is_refused_after_parsing() {
    for (format, text) in [
        (
            Format::Toml,
            "failure_rate = { threshold = 0.5, window = 0 }\n",
        ),
        (
            Format::Yaml,
            "failure_rate: { threshold: 0.5, window: 0 }\n",
        ),
        (
            Format::Json,
            r#"{ "failure_rate": { "threshold": 0.5, "window": 0 } }"#,
        ),
    ] {
        refused(
            format,
            text,
            "failure_rate.window",
            "must be from 1 to 32768, got 0",
        );
    }
}

#[test]
fn type_errors_name_the_nested_field() {
    refused(
        Format::Toml,
        "[failure_rate]\nthreshold = \"half\"\nwindow = 20\n",
        "failure_rate.threshold",
        "invalid type: string \"half\"",
    );
    refused(
        Format::Yaml,
        "failure_rate:\n  threshold: 0.5\n  window: -3\n",
        "failure_rate.window",
        "invalid type: integer `-3`, expected usize",
    );
    refused(
        Format::Json,
        r#"{ "failure_rate": { "threshold": 0.5 } }"#,
        "failure_rate",
        "missing field `window`",
    );
}

#[test]
fn syntax_errors_give_the_position_in_one_line() {
    for (format, text, line) in [
        (
            Format::Toml,
            "consecutive_failures = 5\nopen_duration = \n",
            2,
        ),
        (
            Format::Yaml,
            "consecutive_failures: 5\nopen_duration: \"30s\n",
            3,
        ),
        (
            Format::Json,
            "{ \"consecutive_failures\": 5,\n  \"open_duration\" }",
            2,
        ),
    ] {
        let err = Config::from_str_as(format, text).expect_err(text);
        let message = err.to_string();
        println!("{message}");
        assert!(!message.contains('\n'), "{message:?}");
        // serde_yaml meets the error while reading a field's value, and names the field.
        let prefix = match format {
            Format::Yaml => "invalid open_duration: ".to_owned(),
            _ => format!("invalid {format} configuration: "),
        };
        assert!(message.starts_with(&prefix), "{message}");
        assert_eq!(err.line(), Some(line), "{message}");
    }
    let trailing = Config::from_json_str("{} {}").unwrap_err();
    assert!(
        trailing.to_string().contains("trailing characters"),
        "{trailing}"
    );
}

#[test]
fn failure_records_below_the_window_are_refused_after_parsing() {
    refused(
        Format::Toml,
        "failure_records = 10\nfailure_rate = { threshold = 0.5, window = 20 }\n",
        "failure_records",
        "must be at least the 20 calls the rules look back over, got 10",
    );
}

#[test]
fn a_file_that_reserves_failure_records_can_lengthen_the_window_later() {
    let at_start = "failure_records = 1000\nfailure_rate = { threshold = 0.5, window = 20 }\n";
    let breaker = Breaker::builder()
        .config(Config::from_toml_str(at_start).unwrap())
        .build()
        .unwrap();
    let later = "failure_records = 1000\nfailure_rate = { threshold = 0.5, window = 1000 }\n";
    breaker
        .reconfigure(Config::from_toml_str(later).unwrap())
        .unwrap();
    assert_eq!(breaker.config().failure_rate.unwrap().window, 1000);
}

#[test]
fn a_config_that_fits_no_live_breaker_is_refused_by_reconfigure() {
    let breaker = Breaker::builder().failure_rate(0.5, 20).build().unwrap();
    let config =
        Config::from_toml_str("failure_rate = { threshold = 0.5, window = 1000 }").unwrap();
    let err = breaker.reconfigure(config).unwrap_err();
    assert_eq!(err.field(), "failure_rate.window");
    assert_eq!(breaker.config().failure_rate.unwrap().window, 20);
}

#[test]
fn reconfiguring_from_files_under_load_keeps_every_count() {
    // Every file fits the breaker's 64 failure records and its 4 stripes.
    let files = [
        "count_successes = true\nfailure_rate = { threshold = 0.2, window = 16 }\nopen_duration = \"20us\"\nstripes = 4\n",
        "count_successes = true\nfailure_rate = { threshold = 0.9, window = 64 }\nopen_duration = \"50us\"\nstripes = 4\n",
        "count_successes = true\nconsecutive_failures = 3\nopen_duration = \"10us\"\nstripes = 4\n",
        "count_successes = true\nconsecutive_failures = 8\nfailure_rate = { threshold = 0.5, window = 8, minimum_calls = 4 }\nopen_duration = \"1ms\"\nstripes = 4\n",
    ];
    let configs: Vec<Config> = files
        .iter()
        .map(|f| Config::from_toml_str(f).unwrap())
        .collect();
    let breaker = Breaker::builder()
        .failure_rate(0.5, 64)
        .open_duration(Duration::from_micros(20))
        .stripes(4)
        .count_successes(true)
        .build()
        .unwrap();
    let granted = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for t in 0..3usize {
            let (breaker, granted) = (&breaker, &granted);
            scope.spawn(move || {
                for i in 0..20_000usize {
                    if let Ok(permit) = breaker.try_acquire() {
                        granted.fetch_add(1, Ordering::Relaxed);
                        match (i + t) % 11 {
                            0 | 5 => permit.failure(),
                            7 => permit.ignore(),
                            9 => drop(permit),
                            _ => permit.success(),
                        }
                    }
                }
            });
        }
        scope.spawn(|| {
            for i in 0..400 {
                // Parse on every round, as a program watching its configuration file would.
                let config = Config::from_toml_str(files[i % files.len()]).unwrap();
                breaker.reconfigure(config).unwrap();
                assert_eq!(breaker.config(), config);
            }
        });
    });
    assert_eq!(breaker.metrics().permitted(), Some(granted.into_inner()));
    assert_eq!(breaker.config(), configs[399 % files.len()]);
}

#[test]
fn an_open_backoff_is_read_in_every_format() {
    let wanted = Some(hotbreaker::OpenBackoffConfig {
        multiplier: 2.0,
        max: Duration::from_secs(600),
    });
    for (format, text) in [
        (
            Format::Toml,
            "open_backoff = { multiplier = 2.0, max = \"10m\" }\n",
        ),
        (
            Format::Yaml,
            "open_backoff:\n  multiplier: 2.0\n  max: 10m\n",
        ),
        (
            Format::Json,
            r#"{ "open_backoff": { "multiplier": 2.0, "max": "10m" } }"#,
        ),
    ] {
        let config = Config::from_str_as(format, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.open_backoff, wanted, "{format}");
    }
    let err = refused(
        Format::Toml,
        "open_backoff = { multiplier = 0.5, max = \"10m\" }\n",
        "open_backoff.multiplier",
        "at least 1, got 0.5",
    );
    assert!(err.is_out_of_range());
    refused(
        Format::Toml,
        "open_duration = \"30s\"\nopen_backoff = { multiplier = 2.0, max = \"10s\" }\n",
        "open_backoff.max",
        "must be at least open_duration (30s)",
    );
    refused(
        Format::Yaml,
        "open_backoff:\n  multiplier: 2.0\n  maximum: 10m\n",
        "open_backoff.maximum",
        "unknown field `maximum`",
    );
}

#[test]
fn minimum_calls_out_of_range_is_named_by_its_path_in_the_file() {
    let err = Config::from_toml_str(
        "failure_rate = { threshold = 0.5, window = 10, minimum_calls = 20 }",
    )
    .unwrap_err();
    assert_eq!(err.field(), "failure_rate.minimum_calls", "{err}");
}

#[test]
fn a_key_given_twice_is_refused_naming_it() {
    let cases = [
        (
            Format::Json,
            r#"{"failure_rate": {"threshold": 0.5, "window": 20, "threshold": 0.2}}"#,
            "failure_rate.threshold",
        ),
        (
            Format::Yaml,
            "failure_rate:\n  threshold: 0.5\n  window: 20\n  threshold: 0.2\n",
            "failure_rate.threshold",
        ),
        (
            Format::Yaml,
            "consecutive_failures: 5\nconsecutive_failures: 6\n",
            "consecutive_failures",
        ),
    ];
    for (format, text, field) in cases {
        let err = Config::from_str_as(format, text).unwrap_err();
        assert_eq!(err.field(), field, "{format}: {err}");
    }
    // The toml crate does not say where the key's table is; the message names the key.
    let err =
        Config::from_toml_str("consecutive_failures = 5\nconsecutive_failures = 6\n").unwrap_err();
    assert!(err.to_string().contains("`consecutive_failures`"), "{err}");
    assert_eq!(err.line(), Some(2));
}

#[test]
fn settings_are_read_by_name_only_never_by_position() {
    let cases: [(Format, &str, &str); 6] = [
        (Format::Json, "[]", ""),
        (Format::Json, r#"[null, 5, "10s"]"#, ""),
        (
            Format::Json,
            r#"{"failure_rate": [0.5, 20]}"#,
            "failure_rate",
        ),
        (Format::Toml, "failure_rate = [0.5, 20]", "failure_rate"),
        (Format::Toml, "open_backoff = [2.0, \"1m\"]", "open_backoff"),
        (Format::Yaml, "failure_rate: [0.5, 20]", "failure_rate"),
    ];
    for (format, text, field) in cases {
        let error = Config::from_str_as(format, text)
            .expect_err(&format!("{format} {text:?} read by position"));
        assert_eq!(error.field(), field, "{error}");
        assert!(error.to_string().contains("sequence"), "{error}");
    }
    // By name, the same values are fine.
    let config = Config::from_json_str(r#"{"failure_rate": {"threshold": 0.5, "window": 20}}"#);
    assert_eq!(config.unwrap().failure_rate.unwrap().window, 20);
}

#[test]
fn a_toml_date_time_where_a_table_or_duration_belongs_is_named_as_one() {
    // The toml crate hands serde a date-time as a map of one private key: the error names
    // the field the date-time stands in, not that key.
    for (text, expected) in [
        (
            "failure_rate = 1979-05-27",
            "invalid failure_rate: invalid type: date-time, expected a table (TOML, line 1, column 16)",
        ),
        (
            "open_backoff = 07:32:00",
            "invalid open_backoff: invalid type: date-time, expected a table (TOML, line 1, column 16)",
        ),
        (
            "open_duration = 1979-05-27T07:32:00Z",
            "invalid open_duration: invalid type: date-time, expected a duration with its unit, such as \"30s\" or \"1m 30s\" (TOML, line 1, column 17)",
        ),
    ] {
        let err = Config::from_toml_str(text).unwrap_err();
        assert_eq!(err.to_string(), expected, "{text}");
    }
    let err =
        hotbreaker::RegistryConfig::from_toml_str("breakers = 1979-05-27T07:32:00Z").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid breakers: invalid type: date-time, expected a table (TOML, line 1, column 12)"
    );
    let err = hotbreaker::RegistryConfig::from_toml_str("[breakers.a]\nfailure_rate = 1979-05-27")
        .unwrap_err();
    assert_eq!(err.field(), "breakers.a.failure_rate", "{err}");
}

/// A number out of an f64's or a field's range is named as the file writes it: JSON reads a
/// whole number past 64 bits as a float and YAML one past an f64 as text, and their own
/// messages would call it a floating point in other digits, or a string.
#[test]
fn numbers_out_of_range_are_named_as_written_in_every_format() {
    refused(
        Format::Json,
        r#"{"failure_rate":{"threshold":0.5,"window":18446744073709551616}}"#,
        "failure_rate.window",
        "integer `18446744073709551616` out of range, expected usize",
    );
    refused(
        Format::Json,
        "{\n  \"consecutive_failures\": -18446744073709551617\n}",
        "consecutive_failures",
        "integer `-18446744073709551617` out of range",
    );
    // A float that is one is still called one.
    refused(
        Format::Json,
        r#"{"consecutive_failures": 1.5e20}"#,
        "consecutive_failures",
        "invalid type: floating point",
    );
    refused(
        Format::Yaml,
        "failure_rate: {threshold: 1e400, window: 20}",
        "failure_rate.threshold",
        "number out of range: 1e400, expected f64",
    );
    for (format, text) in [
        (
            Format::Toml,
            "failure_rate = { threshold = 1e-400, window = 20 }",
        ),
        (
            Format::Yaml,
            "failure_rate: {threshold: 1e-400, window: 20}",
        ),
        (
            Format::Json,
            r#"{"failure_rate":{"threshold":1e-400,"window":20}}"#,
        ),
    ] {
        refused(
            format,
            text,
            "failure_rate.threshold",
            "got 0 (or a number too small to tell from 0)",
        );
    }
}

/// A quoted number in YAML is a string, and is called one.
#[test]
fn a_quoted_yaml_number_out_of_range_is_called_a_string() {
    for quoted in ["\"1e400\"", "'1e400'"] {
        refused(
            Format::Yaml,
            &format!("failure_rate: {{threshold: {quoted}, window: 20}}"),
            "failure_rate.threshold",
            "invalid type: string \"1e400\"",
        );
    }
}
