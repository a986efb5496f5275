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
//! line); `ConfigFileError` (with one of those features) keeps only the message and the
//! position, so that it prints as one line fit for a log.

use crate::config::{Config, ConfigError, Settings};

impl Config {
    /// Checks every setting as [`Builder::build`](crate::Builder::build) would, without building
    /// a breaker. A configuration that passes can still be refused by
    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure), which also checks what is fixed
    /// once a breaker is built (its number of stripes, the failure records it keeps, and
    /// whether it keeps a window per thread).
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
            if past_duration_max(text) {
                let error = humantime::DurationError::NumberOverflow;
                return Err(E::custom(format_args!("{error} in {text:?}")));
            }
            humantime::parse_duration(text).map_err(|error| match error {
                // Not too large (checked above): humantime refuses a fraction that does not
                // come to whole nanoseconds, or for an hour or a longer unit to whole
                // seconds ("0.3333h", 1199.88 s), with the message of an overflow.
                humantime::DurationError::NumberOverflow if text.contains('.') => {
                    E::custom(format_args!(
                        "a fraction must come to whole nanoseconds, and of an hour or a \
                         longer unit to whole seconds; write it in a smaller unit, in {text:?}"
                    ))
                }
                error => E::custom(format_args!("{error} in {text:?}")),
            })
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

    // Used by the parsers, each behind its format's feature.
    #[cfg(any(feature = "toml", feature = "yaml", feature = "json"))]
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

        /// The column (from 1, counting characters) where the format crate found the error,
        /// when it said.
        ///
        /// In JSON, serde_json reads a scalar value whole before it can refuse it, and the
        /// column is where it stopped: a table or a list where a value belongs is pointed at
        /// by its opening bracket, but a string, number or key it refused (a bad duration, a
        /// number out of range, an unknown key) by its last character, and a syntax error by
        /// the character it found. A document that ends too soon is pointed one past its
        /// last character.
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

    /// Writes line breaks and other control characters as escapes, and keeps every other
    /// character, so that a reason that quotes a key, a name or a value from the file quotes
    /// it as written (two spaces stay two).
    fn one_line(text: &str) -> String {
        crate::config::printable(text.trim())
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

    /// Line and column (both from 1, the column counting characters) of byte `offset` in
    /// `text`.
    #[cfg(any(feature = "toml", feature = "json"))]
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

    /// The field and reason of an error about a date-time where something else belongs: the
    /// toml crate hands serde a date-time as a map of one private key, so that where a table
    /// belongs it reads as a table whose one key is wrong (the path goes on into that key),
    /// and elsewhere as a map.
    #[cfg(feature = "toml")]
    fn toml_datetime_error(
        text: &str,
        field: &str,
        error: &toml::de::Error,
    ) -> Option<(String, String)> {
        if let Some(at) = field.find("$__toml_private_datetime") {
            let field = field[..at].trim_end_matches('.').to_owned();
            return Some((
                field,
                "invalid type: date-time, expected a table".to_owned(),
            ));
        }
        let expected = error.message().strip_prefix("invalid type: map, ")?;
        let value = text.get(error.span()?)?.trim();
        value.parse::<toml::value::Datetime>().ok()?;
        Some((
            field.to_owned(),
            format!("invalid type: date-time, {expected}"),
        ))
    }

    /// Parses TOML text into `T`, the error naming the field by its path.
    #[cfg(feature = "toml")]
    fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, ConfigFileError> {
        let error = |field: String, error: &toml::de::Error| {
            let position = error.span().map(|span| position_of(text, span.start));
            if let Some((field, reason)) = toml_datetime_error(text, &field, error) {
                return ConfigFileError::parse(Format::Toml, field, &reason, position);
            }
            // The toml crate says "duplicate key" and points at it: name it, as the other
            // formats do, and (found before serde tracks a path) its path too.
            let duplicate = error
                .span()
                .filter(|_| error.message() == "duplicate key")
                .and_then(|span| Some((text.get(span.clone())?.trim(), span)));
            match duplicate {
                Some((key, span)) => {
                    let reason = format!("duplicate key `{key}`");
                    let field = if field.is_empty() {
                        toml_duplicate::path(text, span)
                    } else {
                        field
                    };
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

    /// The path of a key the toml crate found twice. It finds a duplicate while building its
    /// tables from the text, before serde and its path tracking see anything; the path is
    /// found with toml's own parser instead, which knows every form a key can take (table
    /// headers, array tables, inline tables, dotted and quoted keys).
    #[cfg(feature = "toml")]
    mod toml_duplicate {
        use std::fmt::Write;
        use std::ops::Range;

        use toml::de::{DeTable, DeValue};

        /// The path, written as serde_path_to_error writes one (`breakers.a.stripes`,
        /// `x[1].b`), of the key at `span` in `text`, toml having found it twice.
        ///
        /// The key is renamed, the text is parsed again (recovering from any other error) and
        /// the renamed key, known by its name and where it starts, is looked for in the tables
        /// built: it sits where the duplicate would have gone. Where it is not found (a form
        /// toml's recovery drops), the field is the key alone, which is better than none.
        pub(super) fn path(text: &str, span: Range<usize>) -> String {
            let raw = text.get(span.clone()).unwrap_or_default().trim();
            let key = decoded_key(raw)
                .filter(|key| !key.is_empty())
                .unwrap_or_else(|| raw.to_owned());
            // A name no other key can have, so that the renamed key meets none of its name:
            // every underscore in a key takes at least one byte of the text (written, or
            // escaped), and this name has more underscores than the text has bytes.
            let marker = format!("duplicate{}", "_".repeat(text.len() + 1));
            let (Some(before), Some(after)) = (text.get(..span.start), text.get(span.end..)) else {
                return key;
            };
            let renamed = format!("{before}{marker}{after}");
            let (root, _) = DeTable::parse_recoverable(&renamed);
            let Some(mut path) = path_to(root.get_ref(), &marker, span.start) else {
                return key;
            };
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
            path
        }

        /// The name `raw` (a key as written: bare, quoted, escaped) stands for, read by toml.
        fn decoded_key(raw: &str) -> Option<String> {
            let document = format!("{raw} = 0");
            let table = DeTable::parse(&document).ok()?;
            let mut entries = table.get_ref().iter();
            match (entries.next(), entries.next()) {
                (Some((key, value)), None) if matches!(value.get_ref(), DeValue::Integer(_)) => {
                    Some(key.get_ref().to_string())
                }
                _ => None,
            }
        }

        /// The path of the table holding `key` written at byte `start` (a key of the same
        /// name may be written elsewhere), searched depth first without recursion (a header
        /// can nest tables as deep as it has dots).
        fn path_to(root: &DeTable<'_>, key: &str, start: usize) -> Option<String> {
            enum Step<'a> {
                Key(&'a str, usize),
                Index(usize),
            }
            impl<'a> Step<'a> {
                fn key(name: &'a toml::Spanned<std::borrow::Cow<'_, str>>) -> Self {
                    Step::Key(name.get_ref(), name.span().start)
                }
            }
            let mut pending: Vec<(usize, Step<'_>, &DeValue<'_>)> = root
                .iter()
                .map(|(name, value)| (0, Step::key(name), value.get_ref()))
                .collect();
            let mut path: Vec<Step<'_>> = Vec::new();
            while let Some((depth, step, value)) = pending.pop() {
                path.truncate(depth);
                if matches!(step, Step::Key(name, at) if name == key && at == start) {
                    let mut written = String::new();
                    for step in &path {
                        match step {
                            Step::Key(name, _) if written.is_empty() => written.push_str(name),
                            Step::Key(name, _) => {
                                let _ = write!(written, ".{name}");
                            }
                            Step::Index(index) => {
                                let _ = write!(written, "[{index}]");
                            }
                        }
                    }
                    return Some(written);
                }
                path.push(step);
                match value {
                    DeValue::Table(table) => pending.extend(
                        table
                            .iter()
                            .map(|(name, value)| (depth + 1, Step::key(name), value.get_ref())),
                    ),
                    DeValue::Array(items) => pending.extend(
                        items
                            .into_iter()
                            .enumerate()
                            .map(|(index, value)| (depth + 1, Step::Index(index), value.get_ref())),
                    ),
                    _ => {}
                }
            }
            None
        }
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
                let reason = without_position_suffix(&message);
                // A quoted scalar is the string its message calls it.
                let plain = e.inner().location().is_some_and(|location| {
                    text.get(location.index()..)
                        .is_some_and(|scalar| !scalar.starts_with(['"', '\'']))
                });
                let reason = plain
                    .then(|| yaml_overflow(reason))
                    .flatten()
                    .unwrap_or_else(|| reason.to_owned());
                ConfigFileError::parse(Format::Yaml, e.path().to_string(), &reason, position)
            })
    }

    /// serde_yaml reads a plain number too large for an f64 (`1e400`) as text, and its
    /// message then calls it a string: say what it is. For a plain scalar only.
    #[cfg(feature = "yaml")]
    fn yaml_overflow(reason: &str) -> Option<String> {
        // After the path serde_yaml puts first, which `ConfigFileError::parse` takes off.
        let (path, rest) = reason.split_once("invalid type: string \"")?;
        let (text, expected) = rest.split_once("\", expected ")?;
        let overflows = text.bytes().any(|b| b.is_ascii_digit())
            && text.parse::<f64>().is_ok_and(f64::is_infinite);
        overflows.then(|| format!("{path}number out of range: {text}, expected {expected}"))
    }

    /// Parses JSON text into `T`, the error naming the field by its path; trailing text after
    /// the document is refused, as `serde_json::from_str` refuses it.
    #[cfg(feature = "json")]
    fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, ConfigFileError> {
        // A byte-order mark, as editors on Windows write, starts the text, not the JSON (TOML
        // and YAML readers skip it themselves); positions are counted after it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let error = |field: String, error: &serde_json::Error| {
            let position = json_position(text, error);
            let message = error.to_string();
            let reason = without_position_suffix(&message);
            let reason =
                json_integer_too_large(text, error, reason).unwrap_or_else(|| reason.to_owned());
            ConfigFileError::parse(Format::Json, field, &reason, position)
        };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let Table(parsed) = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|e| error(e.path().to_string(), e.inner()))?;
        deserializer.end().map_err(|e| error(String::new(), &e))?;
        Ok(parsed)
    }

    /// serde_json reads a whole number past the 64-bit range as a float, and its message then
    /// calls it a floating point in digits of its own (`1.8446744073709552e+19`): name the
    /// number as written. serde_json points at its last digit.
    #[cfg(feature = "json")]
    fn json_integer_too_large(
        text: &str,
        error: &serde_json::Error,
        reason: &str,
    ) -> Option<String> {
        let expected = reason.split_once("invalid type: floating point `")?.1;
        let expected = expected.split_once("`, expected ")?.1;
        let line_start = match error.line() {
            1 => 0,
            line => text.match_indices('\n').nth(line.checked_sub(2)?)?.0 + 1,
        };
        let before = text.get(..line_start + error.column())?;
        let rest = before.trim_end_matches(|c: char| c.is_ascii_digit());
        let rest = rest.strip_suffix('-').unwrap_or(rest);
        let written = &before[rest.len()..];
        let part_of_a_float = rest.ends_with(['.', 'e', 'E', '+']);
        (!part_of_a_float && written.bytes().any(|b| b.is_ascii_digit()))
            .then(|| format!("integer `{written}` out of range, expected {expected}"))
    }

    /// Line and column (from 1, counting characters) of a serde_json error in `text`, or
    /// `None` when serde_json gave no position.
    ///
    /// serde_json's position counts bytes and stands for a byte offset: `column` bytes into
    /// the line, the column being the 1-based column of the byte before that offset. That
    /// byte is the one it last read, or the one it peeked at and refused, so a position can
    /// be column 0 (the byte before is the previous line's newline, or there is none). What
    /// it points at is then set apart by kind of error:
    /// - end of input: one past the last character, wherever serde_json stopped;
    /// - a value refused (a type or data error): serde_json reads a scalar whole before
    ///   refusing it, and its last character is the one pointed at; but a table or list it
    ///   refuses without reading it, and the byte before it is then whitespace or the
    ///   separator before the value: the value is pointed at instead;
    /// - a syntax error: the byte before the offset, the one serde_json read or peeked at.
    #[cfg(feature = "json")]
    fn json_position(text: &str, error: &serde_json::Error) -> Option<(usize, usize)> {
        use serde_json::error::Category;
        if error.line() == 0 {
            return None;
        }
        let line_start = match error.line() {
            1 => Some(0),
            line => text.match_indices('\n').nth(line - 2).map(|(at, _)| at + 1),
        };
        let Some(offset) = line_start.map(|start| (start + error.column()).min(text.len())) else {
            // Not a position in this text: keep serde_json's, but from 1.
            return Some((error.line(), error.column().max(1)));
        };
        let is_json_space = |byte: &u8| matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        let at = match error.classify() {
            Category::Eof => text.len(),
            Category::Data => {
                let before = offset.checked_sub(1).and_then(|at| text.as_bytes().get(at));
                match before {
                    Some(byte) if !is_json_space(byte) && !b":,[{".contains(byte) => offset - 1,
                    // Not read yet: the value starts at the next byte that is not a space.
                    _ => text.as_bytes()[offset..]
                        .iter()
                        .position(|byte| !is_json_space(byte))
                        .map_or(text.len(), |skipped| offset + skipped),
                }
            }
            Category::Syntax | Category::Io => offset.saturating_sub(1),
        };
        Some(position_of(text, at))
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

#[cfg(all(test, feature = "json"))]
mod json_position_tests {
    use crate::Config;

    /// Line and column of the error for `text`, checked against the position in its message.
    fn position(text: &str) -> (usize, usize) {
        let err = Config::from_json_str(text).unwrap_err();
        let (line, column) = (err.line().unwrap(), err.column().unwrap());
        let suffix = format!("(JSON, line {line}, column {column})");
        assert!(err.to_string().ends_with(&suffix), "{err} vs {suffix}");
        (line, column)
    }

    #[test]
    fn a_value_of_the_wrong_kind_at_the_start_of_a_line_is_in_column_1() {
        assert_eq!(position("[]"), (1, 1));
        assert_eq!(position("\n\n[]"), (3, 1));
        assert_eq!(position("  []"), (1, 3));
    }

    #[test]
    fn a_table_where_a_value_belongs_is_pointed_at_its_brace() {
        assert_eq!(position(r#"{"stripes": []}"#), (1, 13));
        assert_eq!(position(r#"{"stripes":[]}"#), (1, 12));
        assert_eq!(
            position("{\"failure_rate\":\n  {\"threshold\": {}}}"),
            (2, 17)
        );
        assert_eq!(position(r#"{"failure_rate": [0.5, 20]}"#), (1, 18));
    }

    #[test]
    fn the_end_of_the_input_is_one_past_its_last_character() {
        assert_eq!(position(""), (1, 1));
        assert_eq!(position("  "), (1, 3));
        assert_eq!(position(r#"{"stripes": 4"#), (1, 14));
        assert_eq!(position("{\"stripes\": 4\n"), (2, 1));
        assert_eq!(position(r#"{"open_duration": "30s"#), (1, 23));
    }

    #[test]
    fn a_syntax_error_is_at_the_character_found() {
        assert_eq!(position(r#"{"stripes" 4}"#), (1, 12));
        assert_eq!(position(r#"{"stripes": 4} x"#), (1, 16));
        assert_eq!(position(r#"{"stripes": 4,}"#), (1, 15));
        // A raw newline in a string: the newline, one past the end of its line.
        assert_eq!(position("{\"open_duration\": \"30s\n\"}"), (1, 23));
    }

    #[test]
    fn a_value_read_and_then_refused_is_at_its_last_character() {
        assert_eq!(position(r#"{"open_duration": "30 parsecs"}"#), (1, 30));
        assert_eq!(position(r#"{"stripes": "4"}"#), (1, 15));
        assert_eq!(position(r#"{"nope": 1}"#), (1, 7));
    }

    /// Every prefix of a document, and the document with any one character replaced: the
    /// position is within the text, from 1, and the one the message names.
    #[test]
    fn every_position_is_within_the_text_and_from_1() {
        let document = "{\n  \"open_duration\": \"30s\",\n  \"failure_rate\": { \"threshold\": 0.5, \"window\": 20 },\n  \"breakers\": {\"é\": {\"stripes\": 4}}\n}\n";
        let mut texts: Vec<String> = Vec::new();
        for (at, c) in document.char_indices() {
            texts.push(document[..at].to_owned());
            for other in ['[', '{', '}', ']', ',', ':', '"', '\n', 'x', '1', ' '] {
                if other != c {
                    let end = at + c.len_utf8();
                    texts.push(format!("{}{other}{}", &document[..at], &document[end..]));
                }
            }
        }
        for text in &texts {
            let errors = [
                Config::from_json_str(text).err(),
                crate::RegistryConfig::from_json_str(text).err(),
            ];
            for err in errors.into_iter().flatten() {
                let Some((line, column)) = err.line().zip(err.column()) else {
                    continue;
                };
                let line_text = text.split('\n').nth(line - 1);
                let length = line_text.map(|l| l.chars().count());
                assert!(
                    line >= 1 && column >= 1 && length.is_some_and(|n| column <= n + 1),
                    "{text:?}: {err}"
                );
                let suffix = format!("(JSON, line {line}, column {column})");
                assert!(err.to_string().ends_with(&suffix), "{text:?}: {err}");
            }
        }
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_eq!(position(r#"{"é": 1}"#), (1, 4));
        let text = r#"{"breakers": {"é": {"stripes": []}}}"#;
        let err = crate::RegistryConfig::from_json_str(text).unwrap_err();
        assert_eq!(err.field(), "breakers.é.stripes");
        assert_eq!((err.line(), err.column()), (Some(1), Some(32)));
    }
}

#[cfg(all(test, feature = "toml"))]
mod toml_duplicate_key_tests {
    use crate::{Config, RegistryConfig};

    fn field(text: &str) -> String {
        let err = Config::from_toml_str(text).unwrap_err();
        assert!(err.reason().starts_with("duplicate key"), "{err}");
        err.field().to_owned()
    }

    fn registry_field(text: &str) -> String {
        let err = RegistryConfig::from_toml_str(text).unwrap_err();
        assert!(err.reason().starts_with("duplicate key"), "{err}");
        err.field().to_owned()
    }

    #[test]
    fn a_key_given_twice_in_an_inline_table_is_named_by_its_path() {
        let text = "failure_rate = { threshold = 0.5, window = 20, window = 30 }";
        assert_eq!(field(text), "failure_rate.window");
        let err = Config::from_toml_str(text).unwrap_err();
        assert_eq!(err.reason(), "duplicate key `window`");
        assert_eq!((err.line(), err.column()), (Some(1), Some(48)));
    }

    #[test]
    fn a_key_given_twice_at_the_top_is_named() {
        assert_eq!(
            field("open_duration = \"1s\"\nopen_duration = \"2s\""),
            "open_duration"
        );
    }

    #[test]
    fn a_key_given_twice_under_a_table_header_is_named_by_its_path() {
        assert_eq!(
            registry_field("[breakers.a]\nstripes = 4\nstripes = 5"),
            "breakers.a.stripes"
        );
        assert_eq!(
            field("[failure_rate]\nthreshold = 0.5\nwindow = 20\nwindow = 30"),
            "failure_rate.window"
        );
    }

    #[test]
    fn dotted_and_quoted_keys_are_named_by_their_decoded_path() {
        assert_eq!(
            field("failure_rate.window = 20\nfailure_rate . \"window\" = 30"),
            "failure_rate.window"
        );
        assert_eq!(
            registry_field("[breakers.'a.b']\n\"stripes\" = 4\nstripes = 5"),
            "breakers.a.b.stripes"
        );
        assert_eq!(
            registry_field("[breakers]\na = { stripes = 4, 'stripes' = 5 }"),
            "breakers.a.stripes"
        );
    }

    #[test]
    fn a_table_given_twice_is_named() {
        assert_eq!(
            field("[failure_rate]\nthreshold = 0.5\n[failure_rate]\nwindow = 20"),
            "failure_rate"
        );
        assert_eq!(
            registry_field("[breakers.a]\nstripes = 4\n[breakers.a]\nstripes = 5"),
            "breakers.a"
        );
        assert_eq!(field("stripes = 4\n[[stripes]]"), "stripes");
    }

    #[test]
    fn a_key_given_twice_in_an_array_is_named_with_its_index() {
        assert_eq!(field("[[x]]\n[[x]]\na = 1\na = 2"), "x[1].a");
        assert_eq!(field("x = [{ a = 1 }, { b = 1, b = 2 }]"), "x[1].b");
    }

    /// Every document toml refuses for a duplicate key names a field: every prefix of a
    /// document with duplicates in each form, every tail of its lines, and the document with
    /// any one line removed.
    #[test]
    fn every_duplicate_key_names_a_field() {
        let document = "open_duration = \"1s\"\nopen_duration = \"2s\"\nfailure_rate = { window = 1, 'window' = 2 }\n[a.b]\nc = 1\n\"c\" = 2\nd.e = 1\nd.e = 2\n[a.b]\n[[f]]\ng = 1\ng = 2\n[a]\nb.c = 3\n";
        let lines: Vec<&str> = document.lines().collect();
        let mut texts: Vec<String> = document
            .char_indices()
            .map(|(at, _)| document[..at].to_owned())
            .collect();
        for first in 0..lines.len() {
            texts.push(lines[first..].join("\n"));
            let kept: Vec<&str> = (0..lines.len())
                .filter(|&i| i != first)
                .map(|i| lines[i])
                .collect();
            texts.push(kept.join("\n"));
        }
        for text in &texts {
            let Err(err) = Config::from_toml_str(text) else {
                continue;
            };
            if err.reason().starts_with("duplicate key") {
                assert!(!err.field().is_empty(), "{text:?}: {err}");
            }
        }
    }

    #[test]
    fn odd_documents_name_a_field_and_do_not_panic() {
        for text in [
            "a = 1\na = 2\nb = 1\nb.c = 2",
            "hotbreaker_duplicate_key = 1\nhotbreaker_duplicate_key = 2",
            "[a]\nb.c = 1\n[a.b]\nc = 2",
            "a = { b = { c = 1, c = 2 } }",
            "\"\" = 1\n'' = 2",
        ] {
            let err = Config::from_toml_str(text).unwrap_err();
            assert!(!err.field().is_empty(), "{text:?}: {err}");
        }
        assert_eq!(
            field("hotbreaker_duplicate_key = 1\nhotbreaker_duplicate_key = 2"),
            "hotbreaker_duplicate_key"
        );
        assert_eq!(field("a = { b = { c = 1, c = 2 } }"), "a.b.c");
        assert_eq!(field("[a]\nb.c = 1\n[a.b]\nc = 2"), "a.b");
        assert_eq!(field("[a.b]\nc = 1\n[a]\nb.d = 2"), "a.b");
        // Keys a fixed name for the renamed key could meet: in another table, in the same
        // one, and written with an escape.
        assert_eq!(field("[t]\nduplicate_ = 1\n[u]\nx = 1\nx = 2"), "u.x");
        assert_eq!(field("[u]\nduplicate_ = 1\nx = 1\nx = 2"), "u.x");
        assert_eq!(field("[u]\n\"duplicate\\u005F\" = 1\nx = 1\nx = 2"), "u.x");
    }
}
