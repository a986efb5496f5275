//! The harness for configuration files as text: whatever a file holds, reading it gives a
//! configuration that works or a one-line error, never a panic.

use crate::{Breaker, Config, ConfigFileError, Format, ManualClock, Registry, RegistryConfig};

/// Reads the input's text as a single breaker's configuration or as a registry's, in TOML,
/// YAML or JSON (the first byte picks which), and checks what a reader of the files is
/// promised:
///
/// - an error prints as one line (no control character at all), one about a value out of
///   range or a duplicate key names its field, and its line and column (from 1) are within
///   the text;
/// - what is read passes the builder's checks, a registry's configuration applies to an
///   empty registry and, applied again, finds every breaker configured already, and written
///   back out as JSON it reads back the same.
///
/// # Panics
///
/// When reading panics, or one of those promises fails.
pub fn fuzz_config_text(data: &[u8]) {
    let Some((&choice, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let format = match (choice & 0x7f) % 3 {
        0 => Format::Toml,
        1 => Format::Yaml,
        _ => Format::Json,
    };
    if choice & 0x80 == 0 {
        match Config::from_str_as(format, text) {
            Ok(config) => {
                if let Err(error) = config.validate() {
                    panic!("read a configuration the builder refuses ({error}): {config:?}");
                }
                let written = serde_json::to_string(&config).expect("a Config serializes");
                let read = Config::from_json_str(&written)
                    .unwrap_or_else(|e| panic!("{e}, reading back {written}"));
                assert_eq!(read, config, "written as {written}");
            }
            Err(error) => check_error(&error, text),
        }
    } else {
        match RegistryConfig::from_str_as(format, text) {
            Ok(config) => {
                if let Err(error) = config.validate() {
                    panic!("read a registry configuration that is refused ({error}): {config:?}");
                }
                let registry = Registry::<ManualClock>::default();
                let builder = |_: &str| Breaker::builder().clock(ManualClock::new());
                match registry.apply_config(&config, builder) {
                    Ok(applied) => assert_eq!(applied.inserted.len(), config.breakers.len()),
                    Err(error) => panic!(
                        "an empty registry refused a checked configuration ({error}): {config:?}"
                    ),
                }
                // Again, onto the breakers it built: each already has its configuration.
                match registry.apply_config(&config, builder) {
                    Ok(applied) => assert_eq!(applied.unchanged.len(), config.breakers.len()),
                    Err(error) => panic!("applied twice, refused ({error}): {config:?}"),
                }
                // Only a breaker whose stripes or failure records were made automatic where the
                // defaults set them cannot be written (TOML has no empty value to say so).
                let unwritable = config.breakers.values().any(|breaker| {
                    (config.defaults.stripes.is_some() && breaker.stripes.is_none())
                        || (config.defaults.failure_records.is_some()
                            && breaker.failure_records.is_none())
                });
                match serde_json::to_string(&config) {
                    Ok(written) => {
                        assert!(!unwritable, "wrote what a file cannot say: {written}");
                        let read = RegistryConfig::from_json_str(&written)
                            .unwrap_or_else(|e| panic!("{e}, reading back {written}"));
                        assert_eq!(read, config, "written as {written}");
                    }
                    Err(error) => assert!(unwritable, "{error}: {config:?}"),
                }
            }
            Err(error) => check_error(&error, text),
        }
    }
}

fn check_error(error: &ConfigFileError, text: &str) {
    let line = error.to_string();
    if let (Some(at_line), Some(column)) = (error.line(), error.column()) {
        assert!(at_line >= 1 && column >= 1, "not from 1: {line}");
    }
    // Within the text, for the positions this crate works out itself from the text (YAML's
    // are libyaml's, which also breaks lines at `\r` and at Unicode line separators). A column
    // may be one past a line's end: the end of the input, or a line break where a value was
    // due.
    let ours = matches!(error.format(), Format::Toml | Format::Json);
    if let (true, Some(at_line), Some(column)) = (ours, error.line(), error.column()) {
        let lines: Vec<&str> = text.split('\n').collect();
        assert!(
            at_line <= lines.len(),
            "line {at_line} of {}: {line}",
            lines.len()
        );
        let width = lines[at_line - 1].chars().count();
        assert!(
            column <= width + 1,
            "column {column} on a line of {width} characters: {line}"
        );
    }
    if error.reason().starts_with("duplicate key") {
        assert!(
            !error.field().is_empty(),
            "a duplicate key, but no field named: {line}"
        );
    }
    assert!(
        !line.chars().any(char::is_control),
        "an error with a line break or another control character: {line:?}"
    );
    assert!(
        !error.is_out_of_range() || !error.field().is_empty(),
        "a value out of range, but no field named: {line}"
    );
}
