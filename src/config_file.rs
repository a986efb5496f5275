//! Checking a [`Config`] before applying it, and (with the `toml`, `yaml` or `json` feature)
//! reading one from a configuration file.
//!
//! A file is read in two steps, and either step's error names the field:
//!
//! 1. The format crate parses the text into a [`Config`] (through `serde`, with
//!    [`humantime`-style](https://docs.rs/humantime) durations and unknown fields refused). A
//!    syntax error, a value of the wrong type, a bad duration or an unknown field stops it;
//!    the path of the field is tracked with `serde_path_to_error`.
//! 2. The values are checked as [`Builder::build`](crate::Builder::build) checks them
//!    ([`Config::validate`]): a threshold of 1.5 or a window of 0 stops it.
//!
//! The format crates' own messages can span several lines (a TOML error quotes the offending
//! line); [`ConfigFileError`] keeps only the message and the position, so that it prints as one
//! line fit for a log.

use crate::config::{Config, ConfigError, Settings};

impl Config {
    /// Checks every setting as [`Builder::build`](crate::Builder::build) would, without building
    /// a breaker. A configuration that passes can still be refused by
    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure), which also checks what is fixed
    /// once a breaker is built (its number of stripes, the failure records it keeps).
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] naming the first setting out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Config, FailureRateConfig};
    ///
    /// let config = Config {
    ///     failure_rate: Some(FailureRateConfig { threshold: 1.5, window: 20, minimum_calls: None }),
    ///     ..Config::default()
    /// };
    /// assert_eq!(config.validate().unwrap_err().field(), "failure_rate.threshold");
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        Settings::validate(self).map(|_| ())
    }
}

#[cfg(feature = "serde")]
pub(crate) use file::parse_as;
#[cfg(feature = "serde")]
pub use file::{ConfigFileError, Format};

/// Durations in configuration files: human-readable text (`"30s"`, `"1m 30s"`, `"250ms"`),
/// read and written with `humantime`, whose messages say what was wrong with a bad one.
#[cfg(feature = "serde")]
pub(crate) mod duration {
    use std::fmt;
    use std::time::Duration;

    use serde::{Deserializer, Serializer, de};

    pub(crate) fn serialize<S: Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&humantime::format_duration(*duration))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        deserializer.deserialize_str(DurationVisitor)
    }

    struct DurationVisitor;

    impl de::Visitor<'_> for DurationVisitor {
        type Value = Duration;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration with its unit, such as \"30s\" or \"1m 30s\"")
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
            let parsed = if past_duration_max(text) {
                Err(humantime::DurationError::NumberOverflow)
            } else {
                humantime::parse_duration(text)
            };
            parsed.map_err(|error| E::custom(format_args!("{error} in {text:?}")))
        }
    }

    /// Whether the parts of `text` add up past [`Duration::MAX`]. humantime adds them one by
    /// one and, where the sum comes to 2^64 s exactly through a carry from the nanoseconds
    /// (`"18446744073709551615s 1000ms"`), panics in `Duration::new` instead of refusing it.
    /// Each part (a number, spaces and a fraction allowed, then its unit) is read alone,
    /// which cannot come near the carry, and the sum is checked here; a part humantime
    /// would refuse ends the check, and its error is humantime's. (humantime's issue 66:
    /// once a release carries at `>= 1_000_000_000` nanoseconds, this check can go.)
    fn past_duration_max(text: &str) -> bool {
        // humantime's unit letters.
        let is_unit = |c: char| c.is_ascii_alphabetic() || c == 'µ';
        let mut total = Duration::ZERO;
        let mut rest = text.trim_start();
        while let Some(unit_at) =
            rest.find(|c: char| !(c.is_ascii_digit() || c.is_whitespace() || c == '.'))
        {
            let end = rest[unit_at..]
                .find(|c: char| !is_unit(c))
                .map_or(rest.len(), |length| unit_at + length);
            let Ok(part) = humantime::parse_duration(&rest[..end]) else {
                return false;
            };
            let Some(sum) = total.checked_add(part) else {
                return true;
            };
            total = sum;
            rest = &rest[end..];
            // A part ends at a space or at the next number; anything else humantime refuses.
            if !rest.starts_with(|c: char| c.is_whitespace() || c.is_ascii_digit()) {
                return false;
            }
            rest = rest.trim_start();
        }
        false
    }
}

/// Settings read as tables only. `serde`'s derived structs also read a sequence, by field
/// position, and a JSON `[]` would then be a configuration of defaults, or `[0.5, 20]` a
/// failure rate; the docs describe settings by name only, and a file that lists values
/// without names is more likely a mistake than a shorthand.
#[cfg(feature = "serde")]
pub(crate) mod table {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::MapAccessDeserializer;
    use serde::{Deserialize, Deserializer, de};

    /// A `T` read from a table (a map) only.
    pub(crate) struct Table<T>(pub(crate) T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_map(TableVisitor(PhantomData))
        }
    }

    struct TableVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for TableVisitor<T> {
        type Value = Table<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a table of settings by name")
        }

        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map)).map(Table)
        }
    }

    /// A `T` read from a table only, asked of the format as the struct `name` with `fields`:
    /// flattened into a program's own settings, serde then hands it only those keys (asked as
    /// a map, it would hand it every key left over).
    pub(crate) fn as_struct<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
        name: &'static str,
        fields: &'static [&'static str],
    ) -> Result<T, D::Error> {
        deserializer
            .deserialize_struct(name, fields, TableVisitor(PhantomData))
            .map(|Table(value)| value)
    }

    /// `deserialize_with` for a field that holds a table.
    pub(crate) fn required<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<T, D::Error> {
        Table::deserialize(deserializer).map(|Table(value)| value)
    }

    /// `deserialize_with` for a field that holds a table or nothing.
    pub(crate) fn optional<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<Table<T>>::deserialize(deserializer).map(|table| table.map(|Table(value)| value))
    }
}

/// An optional duration in configuration files: absent or empty (`null`, `~`), or a duration
/// as in [`duration`]. Empty means off, as it does for every other optional setting.
#[cfg(feature = "serde")]
pub(crate) mod optional_duration {
    use std::fmt;
    use std::time::Duration;

    use serde::de;
    use serde::{Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match duration {
            Some(duration) => super::duration::serialize(duration, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        deserializer.deserialize_option(OptionalDurationVisitor)
    }

    struct OptionalDurationVisitor;

    impl<'de> de::Visitor<'de> for OptionalDurationVisitor {
        type Value = Option<Duration>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration with its unit, such as \"30s\" or \"1m 30s\", or nothing")
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
            super::duration::deserialize(inner).map(Some)
        }
    }
}

#[cfg(feature = "serde")]
mod file {
    use std::error::Error;
    use std::fmt;

    use serde::de::DeserializeOwned;

    use super::table::Table;

    use crate::config::{Config, ConfigError};

    /// A configuration file format.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub enum Format {
        /// TOML, read with the `toml` crate.
        Toml,
        /// YAML, read with the `serde_yaml` crate.
        Yaml,
        /// JSON, read with the `serde_json` crate.
        Json,
    }

    impl fmt::Display for Format {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                Format::Toml => "TOML",
                Format::Yaml => "YAML",
                Format::Json => "JSON",
            })
        }
    }

    /// A configuration file that could not be read into a valid [`Config`]: which field, why,
    /// and where in the file when the format crate said so.
    ///
    /// Prints as one line, `invalid <field>: <reason> (<format>, line L, column C)`, in the
    /// form [`ConfigError`] uses.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "toml")] {
    /// use hotbreaker::Config;
    ///
    /// let err = Config::from_toml_str("open_duration = \"30 parsecs\"").unwrap_err();
    /// assert_eq!(err.field(), "open_duration");
    /// assert!(err.to_string().starts_with("invalid open_duration: unknown time unit \"parsecs\""));
    /// # }
    /// ```
    #[derive(Debug, Clone, PartialEq, Eq)]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub struct ConfigFileError {
        format: Format,
        field: String,
        reason: String,
        position: Option<(usize, usize)>,
        out_of_range: bool,
    }

    impl ConfigFileError {
        /// The field, as a dotted path (`"failure_rate.threshold"`), or `""` when the error is
        /// not about one field (a syntax error, an empty document).
        pub fn field(&self) -> &str {
            &self.field
        }

        /// Why the file was refused: the format crate's message, or the range check's.
        pub fn reason(&self) -> &str {
            &self.reason
        }

        /// The format that was being read.
        pub fn format(&self) -> Format {
            self.format
        }

        /// The line (from 1) where the format crate found the error, when it said.
        pub fn line(&self) -> Option<usize> {
            self.position.map(|(line, _)| line)
        }

        /// The column (from 1) where the format crate found the error, when it said.
        pub fn column(&self) -> Option<usize> {
            self.position.map(|(_, column)| column)
        }

        /// Whether the file parsed but a value is out of range (a threshold of 1.5, a window
        /// of 0), as opposed to a syntax, type or unknown-field error.
        pub fn is_out_of_range(&self) -> bool {
            self.out_of_range
        }

        pub(super) fn parse(
            format: Format,
            field: String,
            reason: &str,
            position: Option<(usize, usize)>,
        ) -> Self {
            // serde_path_to_error writes the root as ".": that is no field.
            let field = if field == "." { String::new() } else { field };
            // serde_yaml puts a path in front of its message, the field's or (for an unknown
            // field) its table's; the field is already named apart.
            let reason = one_line(without_path_prefix(reason, &field));
            // serde names a repeated key in its message but puts the error at its table: the
            // field is the key, under that table.
            let field = match duplicate_field(&reason) {
                Some(key) if field.is_empty() => key.to_owned(),
                Some(key) => format!("{field}.{key}"),
                None => field,
            };
            let field = crate::config::printable(&field);
            ConfigFileError {
                format,
                field,
                reason,
                position,
                out_of_range: false,
            }
        }

        fn out_of_range(format: Format, error: ConfigError) -> Self {
            Self::out_of_range_named(format, error.field().to_owned(), error.reason().to_owned())
        }

        /// A value out of range, `field` the path from the top of the file.
        pub(crate) fn out_of_range_named(format: Format, field: String, reason: String) -> Self {
            ConfigFileError {
                format,
                field,
                reason,
                position: None,
                out_of_range: true,
            }
        }
    }

    impl fmt::Display for ConfigFileError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            if self.field.is_empty() {
                write!(f, "invalid {} configuration: {}", self.format, self.reason)?;
            } else {
                write!(f, "invalid {}: {}", self.field, self.reason)?;
            }
            match self.position {
                Some((line, column)) => {
                    write!(f, " ({}, line {line}, column {column})", self.format)
                }
                None => write!(f, " ({})", self.format),
            }
        }
    }

    impl Error for ConfigFileError {}

    /// Collapses every run of whitespace, newlines included, into one space, and writes other
    /// control characters as escapes.
    fn one_line(text: &str) -> String {
        crate::config::printable(&text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The key that serde's "duplicate field `key`" message names, if `reason` is one.
    fn duplicate_field(reason: &str) -> Option<&str> {
        let key = reason.strip_prefix("duplicate field `")?;
        key.split_once('`').map(|(key, _)| key)
    }

    /// `message` without a leading `path: `, where `path` is `field` or a table it is in.
    fn without_path_prefix<'a>(message: &'a str, field: &str) -> &'a str {
        let mut path = field;
        while !path.is_empty() {
            if let Some(rest) = message
                .strip_prefix(path)
                .and_then(|rest| rest.strip_prefix(": "))
            {
                return rest;
            }
            path = path.rfind('.').map_or("", |dot| &path[..dot]);
        }
        message
    }

    /// Removes a trailing ` at line L column C` that serde_json and serde_yaml append to their
    /// messages: the position is kept apart.
    #[cfg(any(feature = "json", feature = "yaml"))]
    fn without_position_suffix(message: &str) -> &str {
        let Some(at) = message.rfind(" at line ") else {
            return message;
        };
        let tail = &message[at + " at line ".len()..];
        let mut words = tail.split(' ');
        let is_position = matches!(
            (words.next(), words.next(), words.next(), words.next()),
            (Some(line), Some("column"), Some(column), None)
                if line.parse::<usize>().is_ok() && column.parse::<usize>().is_ok()
        );
        if is_position { &message[..at] } else { message }
    }

    /// Line and column (both from 1) of byte `offset` in `text`.
    #[cfg(feature = "toml")]
    fn position_of(text: &str, offset: usize) -> (usize, usize) {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    /// Parses TOML text into `T`, the error naming the field by its path.
    #[cfg(feature = "toml")]
    fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, ConfigFileError> {
        let error = |field: String, error: &toml::de::Error| {
            let position = error.span().map(|span| position_of(text, span.start));
            // The toml crate says "duplicate key" and points at it: name it, as the other
            // formats do.
            let key = error
                .span()
                .and_then(|span| text.get(span))
                .filter(|_| error.message() == "duplicate key");
            match key {
                Some(key) => {
                    let reason = format!("duplicate key `{}`", key.trim());
                    ConfigFileError::parse(Format::Toml, field, &reason, position)
                }
                None => ConfigFileError::parse(Format::Toml, field, error.message(), position),
            }
        };
        let deserializer = toml::Deserializer::parse(text).map_err(|e| error(String::new(), &e))?;
        serde_path_to_error::deserialize(deserializer)
            .map(|Table(parsed)| parsed)
            .map_err(|e| error(e.path().to_string(), e.inner()))
    }

    /// Parses YAML text into `T`, the error naming the field by its path.
    #[cfg(feature = "yaml")]
    fn parse_yaml<T: DeserializeOwned>(text: &str) -> Result<T, ConfigFileError> {
        use crate::yaml_nesting::{MAX_FLOW_DEPTH, flow_deeper_than};
        // Refused before parsing: libyaml's time grows with flow depth times length.
        if let Some(position) = flow_deeper_than(text, MAX_FLOW_DEPTH) {
            let reason = format!("flow collections nested more than {MAX_FLOW_DEPTH} deep");
            return Err(ConfigFileError::parse(
                Format::Yaml,
                String::new(),
                &reason,
                Some(position),
            ));
        }
        let deserializer = serde_yaml::Deserializer::from_str(text);
        serde_path_to_error::deserialize(deserializer)
            .map(|Table(parsed)| parsed)
            .map_err(|e| {
                let position = e
                    .inner()
                    .location()
                    .map(|location| (location.line(), location.column()));
                let message = e.inner().to_string();
                ConfigFileError::parse(
                    Format::Yaml,
                    e.path().to_string(),
                    without_position_suffix(&message),
                    position,
                )
            })
    }

    /// Parses JSON text into `T`, the error naming the field by its path; trailing text after
    /// the document is refused, as `serde_json::from_str` refuses it.
    #[cfg(feature = "json")]
    fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, ConfigFileError> {
        let error = |field: String, error: &serde_json::Error| {
            let position = (error.line() > 0).then(|| (error.line(), error.column()));
            let message = error.to_string();
            ConfigFileError::parse(
                Format::Json,
                field,
                without_position_suffix(&message),
                position,
            )
        };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let Table(parsed) = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|e| error(e.path().to_string(), e.inner()))?;
        deserializer.end().map_err(|e| error(String::new(), &e))?;
        Ok(parsed)
    }

    /// Parses text in `format` into `T`; a format whose feature is off is refused.
    pub(crate) fn parse_as<T: DeserializeOwned>(
        format: Format,
        text: &str,
    ) -> Result<T, ConfigFileError> {
        let _ = text;
        match format {
            #[cfg(feature = "toml")]
            Format::Toml => parse_toml(text),
            #[cfg(feature = "yaml")]
            Format::Yaml => parse_yaml(text),
            #[cfg(feature = "json")]
            Format::Json => parse_json(text),
            #[allow(unreachable_patterns)]
            other => Err(ConfigFileError::parse(
                other,
                String::new(),
                &format!(
                    "hotbreaker was built without its `{}` feature",
                    other.to_string().to_lowercase()
                ),
                None,
            )),
        }
    }

    impl Config {
        /// Reads a configuration from TOML text, and checks it as
        /// [`Builder::build`](crate::Builder::build) would.
        ///
        /// Durations are human-readable (`open_duration = "30s"`); fields left out keep their
        /// [defaults](Config::default); unknown fields are refused.
        ///
        /// # Errors
        ///
        /// A [`ConfigFileError`] naming the field: a syntax error, a value of the wrong type, a
        /// duration that does not parse, an unknown field, or a value out of range.
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::{Breaker, Config};
        /// use std::time::Duration;
        ///
        /// let config = Config::from_toml_str(r#"
        ///     consecutive_failures = 5
        ///     open_duration = "30s"
        ///     failure_rate = { threshold = 0.5, window = 20 }
        /// "#)?;
        /// assert_eq!(config.open_duration, Duration::from_secs(30));
        /// let breaker = Breaker::builder().config(config).build()?;
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[cfg(feature = "toml")]
        #[cfg_attr(docsrs, doc(cfg(feature = "toml")))]
        pub fn from_toml_str(text: &str) -> Result<Config, ConfigFileError> {
            Config::from_str_as(Format::Toml, text)
        }

        /// Reads a configuration from YAML text, and checks it as
        /// [`Builder::build`](crate::Builder::build) would. The fields are [`Config`]'s, with
        /// durations as text (`"30s"`); see [`from_str_as`](Config::from_str_as).
        ///
        /// # Errors
        ///
        /// As for [`from_str_as`](Config::from_str_as).
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::Config;
        ///
        /// let config = Config::from_yaml_str("failure_rate:\n  threshold: 0.25\n  window: 40\nopen_duration: 1m\n")?;
        /// assert_eq!(config.failure_rate.unwrap().window, 40);
        /// # Ok::<(), hotbreaker::ConfigFileError>(())
        /// ```
        #[cfg(feature = "yaml")]
        #[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
        pub fn from_yaml_str(text: &str) -> Result<Config, ConfigFileError> {
            Config::from_str_as(Format::Yaml, text)
        }

        /// Reads a configuration from JSON text, and checks it as
        /// [`Builder::build`](crate::Builder::build) would. The fields are [`Config`]'s, with
        /// durations as text (`"30s"`); see [`from_str_as`](Config::from_str_as).
        ///
        /// # Errors
        ///
        /// As for [`from_str_as`](Config::from_str_as).
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::Config;
        ///
        /// let config = Config::from_json_str(r#"{ "consecutive_failures": 5, "open_duration": "500ms" }"#)?;
        /// assert_eq!(config.consecutive_failures, Some(5));
        /// # Ok::<(), hotbreaker::ConfigFileError>(())
        /// ```
        #[cfg(feature = "json")]
        #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
        pub fn from_json_str(text: &str) -> Result<Config, ConfigFileError> {
            Config::from_str_as(Format::Json, text)
        }

        /// Reads a configuration from text in `format`: one entry point for a program whose
        /// configuration format is itself a setting. Each format needs its feature (`toml`,
        /// `yaml`, `json`).
        ///
        /// Durations are human-readable (`open_duration = "30s"`); fields left out keep their
        /// [defaults](Config::default); unknown fields are refused.
        ///
        /// # Errors
        ///
        /// A [`ConfigFileError`] naming the field: a syntax error, a value of the wrong type, a
        /// duration that does not parse, an unknown field, or a value out of range; a format
        /// whose feature is off is refused saying so. YAML whose flow collections (`[...]`,
        /// `{...}`) nest more than 64 deep is refused before it is parsed, as its parser's time
        /// grows with depth times length.
        #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
        pub fn from_str_as(format: Format, text: &str) -> Result<Config, ConfigFileError> {
            let config: Config = parse_as(format, text)?;
            config
                .validate()
                .map_err(|error| ConfigFileError::out_of_range(format, error))?;
            Ok(config)
        }
    }
}
