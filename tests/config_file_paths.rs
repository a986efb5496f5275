//! Registry configuration files: what a `ConfigFileError` says about a value out of range
//! (its path from the top of the file, and that it is out of range rather than unreadable).
#![cfg(all(feature = "toml", feature = "yaml", feature = "json"))]

use hotbreaker::{Format, RegistryConfig};

#[test]
fn a_registry_value_out_of_range_is_flagged_as_out_of_range_with_its_full_path() {
    // The registry checks its values apart from `Config::from_str_as`, and builds the error
    // itself: the flag must say so there too, for the defaults and for a breaker.
    for (format, text, field) in [
        (
            Format::Toml,
            "[breakers.a]\nstripes = 0\n",
            "breakers.a.stripes",
        ),
        (
            Format::Yaml,
            "defaults:\n  half_open_probes: 0\n",
            "defaults.half_open_probes",
        ),
        (
            Format::Json,
            r#"{ "breakers": { "a": { "failure_rate": { "threshold": 1.5, "window": 20 } } } }"#,
            "breakers.a.failure_rate.threshold",
        ),
    ] {
        let err = RegistryConfig::from_str_as(format, text).unwrap_err();
        assert_eq!(err.field(), field, "{format}: {err}");
        assert!(err.is_out_of_range(), "{format}: {err}");
        // A range check has no position in the text.
        assert_eq!((err.line(), err.column()), (None, None), "{format}: {err}");
    }
}

#[test]
fn a_registry_file_that_does_not_parse_is_not_out_of_range() {
    for (format, text, field) in [
        (
            Format::Toml,
            "[breakers.a]\nstripes = \"x\"\n",
            "breakers.a.stripes",
        ),
        (
            Format::Yaml,
            "breakers:\n  a:\n    windw: 3\n",
            "breakers.a.windw",
        ),
        (Format::Json, r#"{ "defaultz": {} }"#, "defaultz"),
    ] {
        let err = RegistryConfig::from_str_as(format, text).unwrap_err();
        assert_eq!(err.field(), field, "{format}: {err}");
        assert!(!err.is_out_of_range(), "{format}: {err}");
    }
}
