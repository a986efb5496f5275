//! Many named breakers configured together ([`RegistryConfig`]), and applying them to a
//! [`Registry`] at start-up and again whenever the configuration changes.

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

use crate::breaker::Breaker;
use crate::builder::Builder;
use crate::clock::Clock;
use crate::config::{Config, ConfigError, printable};
use crate::registry::Registry;

/// Settings for many named breakers: the defaults, and the resolved configuration of each
/// breaker the configuration names.
///
/// Made in code, or read from a file with `RegistryConfig::from_toml_str`, `from_yaml_str`,
/// `from_json_str` or `from_str_as` (the `toml`, `yaml` and `json` features), then applied
/// to a [`Registry`] with [`Registry::apply_config`].
///
/// # In a file
///
/// `defaults` is a configuration as a single breaker's file gives one ([`Config`]), and every table
/// under `breakers` names a breaker (once: a name given twice is refused) and the settings in
/// which it differs from the defaults:
///
/// ```toml
/// [defaults]
/// open_duration = "30s"
/// failure_rate = { threshold = 0.5, window = 20 }
///
/// [breakers.payments]
/// consecutive_failures = 5
///
/// [breakers.search]
/// failure_rate = "off"
/// consecutive_failures = 3
/// open_duration = "5s"
/// ```
///
/// A setting a breaker gives replaces the default's whole (a `failure_rate` table with it);
/// `"off"` turns off a rule or limit that the defaults set (`failure_rate`,
/// `consecutive_failures`, `slow_call`, `probe_timeout`, `open_backoff`), as does an empty
/// value (`null` in JSON, `~` in YAML); for `stripes` and `failure_records` an empty value
/// means "automatic". A breaker left with neither rule gets the default rule, as any
/// configuration without a rule does ([`DEFAULT_FAILURE_RATE`](crate::DEFAULT_FAILURE_RATE)).
/// Written back out (with `serde`), a `RegistryConfig` takes the same form: the defaults
/// whole, each breaker as its differences.
///
/// # Examples
///
/// ```
/// use hotbreaker::{Config, Registry, RegistryConfig};
///
/// let mut config = RegistryConfig::default();
/// config.defaults.consecutive_failures = Some(5);
/// config.breakers.insert("payments".into(), Config { consecutive_failures: Some(2), ..config.defaults });
/// config.breakers.insert("search".into(), config.defaults);
///
/// let registry = Registry::new();
/// let applied = registry.apply_config(&config, |_name| hotbreaker::Breaker::builder())?;
/// assert_eq!(applied.inserted, ["payments", "search"]);
/// assert_eq!(registry.get("payments").unwrap().config().consecutive_failures, Some(2));
/// // A name the configuration does not list gets the defaults.
/// assert_eq!(config.config_for("users-db"), config.defaults);
/// # Ok::<(), hotbreaker::RegistryConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RegistryConfig {
    /// What a breaker the configuration does not name gets, and what every named breaker's
    /// settings in a file are differences from.
    pub defaults: Config,
    /// Each named breaker's whole configuration, by name.
    pub breakers: BTreeMap<String, Config>,
}

impl RegistryConfig {
    /// The configuration for the breaker named `name`: its own if the configuration names
    /// it, else the defaults.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Registry, RegistryConfig};
    ///
    /// let mut config = RegistryConfig::default();
    /// config.defaults.consecutive_failures = Some(3);
    /// // A breaker the configuration does not name, built on demand with the defaults.
    /// let registry = Registry::new();
    /// let search = registry.get_or_insert_with("search", |name| {
    ///     Breaker::builder().config(config.config_for(name))
    /// })?;
    /// assert_eq!(search.config().consecutive_failures, Some(3));
    /// # Ok::<(), hotbreaker::ConfigError>(())
    /// ```
    pub fn config_for(&self, name: &str) -> Config {
        self.breakers.get(name).copied().unwrap_or(self.defaults)
    }

    /// Checks the defaults and every breaker's configuration as
    /// [`Builder::build`](crate::Builder::build) would, and that no breaker's name is empty.
    ///
    /// # Errors
    ///
    /// A [`RegistryConfigError`] naming the part (`defaults`, or the breaker) and the field
    /// for a setting out of range, or the field `breakers` for a breaker whose name is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Config, RegistryConfig};
    ///
    /// let mut config = RegistryConfig::default();
    /// config.breakers.insert("payments".into(), Config { half_open_probes: 0, ..Config::default() });
    /// let err = config.validate().unwrap_err();
    /// assert_eq!(err.breaker(), Some("payments"));
    /// assert_eq!(err.field(), "breakers.payments.half_open_probes");
    /// ```
    pub fn validate(&self) -> Result<(), RegistryConfigError> {
        self.defaults
            .validate()
            .map_err(RegistryConfigError::in_defaults)?;
        for (name, config) in &self.breakers {
            if name.is_empty() {
                return Err(RegistryConfigError::empty_name());
            }
            config
                .validate()
                .map_err(|error| RegistryConfigError::in_breaker(name, error))?;
        }
        Ok(())
    }
}

/// A [`RegistryConfig`] that could not be applied: the breaker (or the defaults) and the
/// setting, and why.
///
/// Prints as one line: `invalid breakers.payments.failure_rate.window: ...`. The path names
/// the breaker whose configuration was refused, also when the value refused is one it took
/// from the defaults (a window a live breaker has no room for, say).
///
/// # Examples
///
/// ```
/// use hotbreaker::{Breaker, Registry, RegistryConfig};
///
/// let registry = Registry::new();
/// registry.get_or_insert_with("payments", |_| Breaker::builder().consecutive_failures(2))?;
/// let mut config = RegistryConfig::default();
/// config.defaults.failure_rate = Some(hotbreaker::FailureRateConfig {
///     threshold: 0.5,
///     window: 40,
///     minimum_calls: None,
/// });
/// config.breakers.insert("payments".into(), config.defaults);
/// let err = registry.apply_config(&config, |_| Breaker::builder()).unwrap_err();
/// assert_eq!(err.breaker(), Some("payments"));
/// assert!(err.to_string().starts_with("invalid breakers.payments.failure_rate.window: "));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryConfigError {
    breaker: Option<String>,
    field: String,
    reason: String,
}

impl RegistryConfigError {
    fn in_defaults(error: ConfigError) -> Self {
        RegistryConfigError {
            breaker: None,
            field: format!("defaults.{}", error.field()),
            reason: error.reason().to_owned(),
        }
    }

    fn in_breaker(name: &str, error: ConfigError) -> Self {
        RegistryConfigError {
            breaker: Some(name.to_owned()),
            field: format!("breakers.{}.{}", printable(name), error.field()),
            reason: error.reason().to_owned(),
        }
    }

    /// `name` and `other` are registered for one breaker, and the configuration gives them
    /// different settings.
    fn two_settings_for_one(name: &str, other: &str) -> Self {
        RegistryConfigError {
            breaker: Some(name.to_owned()),
            field: format!("breakers.{}", printable(name)),
            reason: format!(
                "it is the same breaker as \"{}\", which the configuration gives other settings",
                printable(other)
            ),
        }
    }

    fn empty_name() -> Self {
        RegistryConfigError {
            breaker: Some(String::new()),
            field: "breakers".to_owned(),
            reason: "a breaker's name is empty".to_owned(),
        }
    }

    /// The breaker whose configuration was refused; `None` when it was the defaults.
    pub fn breaker(&self) -> Option<&str> {
        self.breaker.as_deref()
    }

    /// The refused setting as a dotted path from the top of the configuration
    /// (`"breakers.payments.failure_rate.window"`, `"defaults.open_duration"`).
    pub fn field(&self) -> &str {
        &self.field
    }

    /// Why it was refused, including the value that was given.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for RegistryConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.field, self.reason)
    }
}

impl Error for RegistryConfigError {}

/// What [`Registry::apply_config`] did, by breaker name (each list sorted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppliedConfig {
    /// Registered breakers whose configuration changed (with
    /// [`Breaker::reconfigure`], keeping their state).
    pub reconfigured: Vec<String>,
    /// Registered breakers that already had the configuration given.
    pub unchanged: Vec<String>,
    /// Breakers built and registered because the configuration names them.
    pub inserted: Vec<String>,
    /// Registered breakers the configuration does not name, left as they are.
    pub not_in_config: Vec<String>,
}

impl<C: Clock + Default> Registry<C> {
    /// Gives every breaker that `config` names its configuration: a registered one is
    /// reconfigured in place (its state, window and counters kept, and every holder of its
    /// `Arc` sees the change), a missing one is built from `builder(name)` with the
    /// configuration and registered. Breakers the configuration does not name are left as
    /// they are (listed in [`AppliedConfig::not_in_config`]); remove them with
    /// [`remove`](Registry::remove) if that is what a missing name means to the program.
    ///
    /// Every breaker's configuration is checked before any is applied, so a refused one
    /// changes nothing. That includes what a live breaker cannot change
    /// ([`Breaker::reconfigure`]: its stripes, `per_thread_windows`, `failure_records` above
    /// what it keeps, and a window or run longer than the failure records it was built with).
    /// The missing breakers are registered together, and only if none of the names was
    /// registered, replaced or removed by another thread since the check; otherwise the check
    /// runs again. `builder` gets the name, for listeners labelled
    /// with it (it may run more than once for a name when another thread changes the
    /// registry meanwhile); whatever configuration it sets is replaced by the breaker's from
    /// `config`. A breaker that another thread removes after the check is still
    /// reconfigured, and is then not in the registry.
    ///
    /// # Errors
    ///
    /// A [`RegistryConfigError`] naming the breaker (or the defaults) and the field; nothing
    /// is changed then. That includes two names registered for one breaker
    /// ([`insert_if_absent`](Registry::insert_if_absent) with one `Arc` twice) that the
    /// configuration gives different settings: the error names the second name.
    ///
    /// Two reloads at once (a file watcher that fires twice) apply one after the other,
    /// each whole: a reload waits for one in progress on another thread. A `builder` may
    /// apply a configuration to this registry itself (building one breaker makes sure of
    /// another): that reload runs at once, inside this one.
    ///
    /// # Examples
    ///
    /// ```
    /// use hotbreaker::{Breaker, Config, Registry, RegistryConfig};
    ///
    /// let registry = Registry::new();
    /// let payments = registry.get_or_insert_with("payments", |_| Breaker::builder().consecutive_failures(5))?;
    ///
    /// let mut config = RegistryConfig::default();
    /// config.breakers.insert("payments".into(), Config { consecutive_failures: Some(2), ..Config::default() });
    /// let applied = registry.apply_config(&config, |_| Breaker::builder())?;
    /// assert_eq!(applied.reconfigured, ["payments"]);
    /// // The same breaker, changed in place.
    /// assert_eq!(payments.config().consecutive_failures, Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply_config(
        &self,
        config: &RegistryConfig,
        builder: impl Fn(&str) -> Builder<C>,
    ) -> Result<AppliedConfig, RegistryConfigError> {
        config.validate()?;
        let names: Vec<&str> = config.breakers.keys().map(String::as_str).collect();
        let _one_at_a_time = self.one_reload_at_a_time();
        loop {
            let registered: BTreeMap<String, Arc<Breaker<C>>> =
                self.breakers().into_iter().collect();
            let mut built = Vec::new();
            for (name, wanted) in &config.breakers {
                let checked = match registered.get(name) {
                    Some(breaker) => {
                        match Self::other_name_of(breaker, name, config, &registered) {
                            // One breaker, two names, two configurations: one would silently win.
                            Some(other) if config.breakers[other] != *wanted => {
                                return Err(RegistryConfigError::two_settings_for_one(name, other));
                            }
                            _ => breaker.settings_for_reconfiguration(wanted).map(|_| ()),
                        }
                    }
                    None => builder(name)
                        .config(*wanted)
                        .build()
                        .map(|breaker| built.push((name.clone(), Arc::new(breaker)))),
                };
                checked.map_err(|error| RegistryConfigError::in_breaker(name, error))?;
            }
            // The checks hold for the breakers checked: register the new ones only if no
            // other thread registered, replaced or removed one of these names meanwhile, and
            // else check again.
            if !self.insert_all_if_unchanged(&names, &registered, &built) {
                continue;
            }
            let mut applied = AppliedConfig {
                inserted: built.into_iter().map(|(name, _)| name).collect(),
                ..AppliedConfig::default()
            };
            for (name, wanted) in &config.breakers {
                let Some(breaker) = registered.get(name) else {
                    continue;
                };
                if breaker.config() == *wanted {
                    applied.unchanged.push(name.clone());
                } else {
                    // Checked above against this breaker, whose stripes and failure records
                    // are fixed: the reconfiguration cannot be refused now.
                    breaker
                        .reconfigure(*wanted)
                        .map_err(|error| RegistryConfigError::in_breaker(name, error))?;
                    applied.reconfigured.push(name.clone());
                }
            }
            applied.not_in_config = registered
                .into_keys()
                .filter(|name| !config.breakers.contains_key(name))
                .collect();
            return Ok(applied);
        }
    }

    /// Another name before `name` in `config` under which `breaker` is registered, if any.
    fn other_name_of<'a>(
        breaker: &Arc<Breaker<C>>,
        name: &str,
        config: &'a RegistryConfig,
        registered: &BTreeMap<String, Arc<Breaker<C>>>,
    ) -> Option<&'a str> {
        config
            .breakers
            .keys()
            .take_while(|other| other.as_str() != name)
            .find(|other| {
                registered
                    .get(other.as_str())
                    .is_some_and(|registered| Arc::ptr_eq(registered, breaker))
            })
            .map(String::as_str)
    }
}

#[cfg(feature = "serde")]
mod file {
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;
    use std::time::Duration;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{self, Deserializer, IntoDeserializer};
    use serde::{Deserialize, Serialize, Serializer};

    use super::RegistryConfig;
    use crate::config::{Config, FailureRateConfig, OpenBackoffConfig};
    use crate::config_file::table::Table;
    use crate::config_file::{ConfigFileError, Format, parse_as};

    /// A setting a breaker may turn off: `"off"`, or its value.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum OrOff<T> {
        Off,
        On(T),
    }

    impl<T> OrOff<T> {
        fn from_option(value: Option<T>) -> Self {
            value.map_or(OrOff::Off, OrOff::On)
        }

        fn into_option(self) -> Option<T> {
            match self {
                OrOff::Off => None,
                OrOff::On(value) => Some(value),
            }
        }
    }

    const OFF: &str = "off";

    impl<T: Serialize> Serialize for OrOff<T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            match self {
                OrOff::Off => serializer.serialize_str(OFF),
                OrOff::On(value) => value.serialize(serializer),
            }
        }
    }

    /// Reads `"off"`, or hands whatever else is there to `T` (a number, a table, a duration's
    /// text), so that `T`'s own error describes a bad value.
    impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrOff<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(OrOffVisitor(PhantomData))
        }
    }

    struct OrOffVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for OrOffVisitor<T> {
        type Value = OrOff<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "\"{OFF}\", nothing, or a value")
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
            if text == OFF {
                return Ok(OrOff::Off);
            }
            T::deserialize(text.into_deserializer()).map(OrOff::On)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(OrOff::Off)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(OrOff::Off)
        }

        fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
            T::deserialize(value.into_deserializer()).map(OrOff::On)
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
            T::deserialize(value.into_deserializer()).map(OrOff::On)
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
            T::deserialize(value.into_deserializer()).map(OrOff::On)
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
            T::deserialize(value.into_deserializer()).map(OrOff::On)
        }

        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map)).map(OrOff::On)
        }
    }

    /// A duration as configuration files write it (`"30s"`).
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
    #[serde(transparent)]
    struct FileDuration(#[serde(with = "crate::config_file::duration")] Duration);

    /// A breaker's settings that differ from the defaults: every field of [`Config`], each
    /// optional, and those that can be turned off also `"off"`. A field given with an empty
    /// value is present (`deserialize_with`): an empty value turns a rule off, or a count
    /// automatic, as it does in a [`Config`], rather than reading as left out.
    #[derive(Debug, Default, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct ConfigPatch {
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        failure_rate: Option<OrOff<FailureRateConfig>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        consecutive_failures: Option<OrOff<usize>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        open_duration: Option<FileDuration>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        half_open_probes: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        success_threshold: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        stripes: Option<Option<usize>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        failure_records: Option<Option<usize>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        per_thread_windows: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        count_successes: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        slow_call: Option<OrOff<FileDuration>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        probe_timeout: Option<OrOff<FileDuration>>,
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        open_backoff: Option<OrOff<OpenBackoffConfig>>,
    }

    /// A field that is there, whatever its value (an absent one is `None` by `default`).
    fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize(deserializer).map(Some)
    }

    /// `Some(new)` where `new` differs from `old`.
    fn changed<T: PartialEq>(old: T, new: T) -> Option<T> {
        (old != new).then_some(new)
    }

    /// [`changed`] for a setting that can be turned off.
    fn or_off<T: PartialEq>(old: Option<T>, new: Option<T>) -> Option<OrOff<T>> {
        changed(old, new).map(OrOff::from_option)
    }

    impl ConfigPatch {
        /// The defaults with this patch's settings in place of theirs.
        fn applied_to(self, defaults: Config) -> Config {
            // Spelled out field by field (no `..`), so that a new field of `Config` does not
            // compile until a file can set it per breaker.
            let Config {
                failure_rate,
                consecutive_failures,
                open_duration,
                half_open_probes,
                success_threshold,
                stripes,
                failure_records,
                per_thread_windows,
                count_successes,
                slow_call,
                probe_timeout,
                open_backoff,
            } = defaults;
            Config {
                failure_rate: self.failure_rate.map_or(failure_rate, OrOff::into_option),
                consecutive_failures: self
                    .consecutive_failures
                    .map_or(consecutive_failures, OrOff::into_option),
                open_duration: self.open_duration.map_or(open_duration, |d| d.0),
                half_open_probes: self.half_open_probes.unwrap_or(half_open_probes),
                success_threshold: self.success_threshold.unwrap_or(success_threshold),
                stripes: self.stripes.unwrap_or(stripes),
                failure_records: self.failure_records.unwrap_or(failure_records),
                per_thread_windows: self.per_thread_windows.unwrap_or(per_thread_windows),
                count_successes: self.count_successes.unwrap_or(count_successes),
                slow_call: self
                    .slow_call
                    .map_or(slow_call, |d| d.into_option().map(|d| d.0)),
                probe_timeout: self
                    .probe_timeout
                    .map_or(probe_timeout, |d| d.into_option().map(|d| d.0)),
                open_backoff: self.open_backoff.map_or(open_backoff, OrOff::into_option),
            }
        }

        /// The settings in which `config` differs from `defaults`; applied to `defaults`,
        /// it gives `config` back. `stripes` or `failure_records` automatic where the defaults
        /// set them would need an empty value, which TOML does not have; rather than write a
        /// file that reads back otherwise in one format, [`RegistryConfig`]'s `Serialize`
        /// refuses such a breaker in all of them.
        fn between(defaults: Config, config: Config) -> Result<Self, &'static str> {
            let Config {
                failure_rate,
                consecutive_failures,
                open_duration,
                half_open_probes,
                success_threshold,
                stripes,
                failure_records,
                per_thread_windows,
                count_successes,
                slow_call,
                probe_timeout,
                open_backoff,
            } = config;
            let automatic_again =
                |old: Option<usize>, new: Option<usize>| old.is_some() && new.is_none();
            if automatic_again(defaults.stripes, stripes) {
                return Err("stripes");
            }
            if automatic_again(defaults.failure_records, failure_records) {
                return Err("failure_records");
            }
            let duration = |d: Option<Duration>| d.map(FileDuration);
            Ok(ConfigPatch {
                failure_rate: or_off(defaults.failure_rate, failure_rate),
                consecutive_failures: or_off(defaults.consecutive_failures, consecutive_failures),
                open_duration: changed(defaults.open_duration, open_duration).map(FileDuration),
                half_open_probes: changed(defaults.half_open_probes, half_open_probes),
                success_threshold: changed(defaults.success_threshold, success_threshold),
                stripes: changed(defaults.stripes, stripes),
                failure_records: changed(defaults.failure_records, failure_records),
                per_thread_windows: changed(defaults.per_thread_windows, per_thread_windows),
                count_successes: changed(defaults.count_successes, count_successes),
                slow_call: or_off(duration(defaults.slow_call), duration(slow_call)),
                probe_timeout: or_off(duration(defaults.probe_timeout), duration(probe_timeout)),
                open_backoff: or_off(defaults.open_backoff, open_backoff),
            })
        }
    }

    /// The file as written: defaults, and each breaker's differences from them.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RegistryFile {
        #[serde(default, deserialize_with = "crate::config_file::table::required")]
        defaults: Config,
        #[serde(default, deserialize_with = "each_name_once")]
        breakers: BTreeMap<String, ConfigPatch>,
    }

    /// The `breakers` table, refusing a name given twice. JSON and YAML parsers hand a
    /// repeated key over as it comes, and a map would keep only the last one: the settings of
    /// the first would be lost without a word (TOML refuses the repetition itself).
    fn each_name_once<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<String, ConfigPatch>, D::Error> {
        struct EachNameOnce;

        impl<'de> de::Visitor<'de> for EachNameOnce {
            type Value = BTreeMap<String, ConfigPatch>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of breakers by name")
            }

            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut breakers = BTreeMap::new();
                while let Some(BreakerName(name)) = map.next_key()? {
                    if breakers.contains_key(&name) {
                        return Err(de::Error::custom(format_args!(
                            "the breaker {name:?} is given twice"
                        )));
                    }
                    let Table(patch) = map.next_value()?;
                    breakers.insert(name, patch);
                }
                Ok(breakers)
            }
        }

        deserializer.deserialize_map(EachNameOnce)
    }

    /// A key of the `breakers` table: text. YAML also takes `~`, `true` or `1` as keys,
    /// which are not text there (`~` and `null` are the same key, as are `1` and `0x1`);
    /// read as their letters they would name breakers that YAML itself takes for one, so
    /// they are refused, and quoted they are names like any other.
    struct BreakerName(String);

    impl<'de> Deserialize<'de> for BreakerName {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Text;

            impl de::Visitor<'_> for Text {
                type Value = BreakerName;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a breaker's name, as text (quoted if it reads as a number)")
                }

                fn visit_str<E: de::Error>(self, name: &str) -> Result<BreakerName, E> {
                    Ok(BreakerName(name.to_owned()))
                }
            }

            deserializer.deserialize_any(Text)
        }
    }

    #[derive(Serialize)]
    struct RegistryFileOut<'a> {
        defaults: &'a Config,
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        breakers: BTreeMap<&'a str, ConfigPatch>,
    }

    impl<'de> Deserialize<'de> for RegistryConfig {
        /// Reads the file's form ("In a file" in [`RegistryConfig`]); values are range-checked by
        /// [`RegistryConfig::validate`], which the `from_*_str` functions call.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            // A table only, as the nested settings are, and as a struct of its two keys, so
            // that it flattens into a program's own settings (`config_file::table`).
            let file: RegistryFile = crate::config_file::table::as_struct(
                deserializer,
                "RegistryConfig",
                &["defaults", "breakers"],
            )?;
            let defaults = file.defaults;
            let breakers = file
                .breakers
                .into_iter()
                .map(|(name, patch)| (name, patch.applied_to(defaults)))
                .collect();
            Ok(RegistryConfig { defaults, breakers })
        }
    }

    impl Serialize for RegistryConfig {
        /// Writes the file's form: the defaults whole, each breaker as its differences.
        ///
        /// # Errors
        ///
        /// A breaker with `stripes` or `failure_records` automatic (`None`) where the
        /// defaults set it: the file's form has no way to say so.
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut breakers = BTreeMap::new();
            for (name, config) in &self.breakers {
                let patch = ConfigPatch::between(self.defaults, *config).map_err(|field| {
                    serde::ser::Error::custom(format_args!(
                        "breakers.{}.{field} is automatic but the defaults set it, which a file cannot say",
                        crate::config::printable(name)
                    ))
                })?;
                breakers.insert(name.as_str(), patch);
            }
            RegistryFileOut {
                defaults: &self.defaults,
                breakers,
            }
            .serialize(serializer)
        }
    }

    impl RegistryConfig {
        /// Reads a registry configuration from TOML text (the form is under "In a file" in
        /// [`RegistryConfig`]'s docs), and checks the defaults and every breaker's settings as
        /// [`Builder::build`](crate::Builder::build) would.
        ///
        /// # Errors
        ///
        /// A [`ConfigFileError`] whose field is the path from the top of the file
        /// (`"breakers.payments.failure_rate.threshold"`): a syntax error, a value of the wrong
        /// type, an unknown field, or a value out of range; or the field `breakers` for a
        /// breaker named twice or with an empty name.
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::RegistryConfig;
        /// use std::time::Duration;
        ///
        /// let config = RegistryConfig::from_toml_str(r#"
        ///     [defaults]
        ///     open_duration = "30s"
        ///     failure_rate = { threshold = 0.5, window = 20 }
        ///
        ///     [breakers.payments]
        ///     consecutive_failures = 5
        ///
        ///     [breakers.search]
        ///     failure_rate = "off"
        ///     consecutive_failures = 3
        /// "#)?;
        /// let payments = config.config_for("payments");
        /// assert_eq!((payments.failure_rate.unwrap().window, payments.consecutive_failures), (20, Some(5)));
        /// assert_eq!(config.config_for("search").failure_rate, None);
        /// assert_eq!(config.config_for("search").open_duration, Duration::from_secs(30));
        ///
        /// let err = RegistryConfig::from_toml_str("[breakers.search]\nfailure_rate = { threshold = 2.0, window = 20 }").unwrap_err();
        /// assert_eq!(err.field(), "breakers.search.failure_rate.threshold");
        /// # Ok::<(), hotbreaker::ConfigFileError>(())
        /// ```
        #[cfg(feature = "toml")]
        #[cfg_attr(docsrs, doc(cfg(feature = "toml")))]
        pub fn from_toml_str(text: &str) -> Result<RegistryConfig, ConfigFileError> {
            RegistryConfig::from_str_as(Format::Toml, text)
        }

        /// Reads a registry configuration from YAML text; see
        /// [`from_str_as`](RegistryConfig::from_str_as).
        ///
        /// # Errors
        ///
        /// As for [`from_str_as`](RegistryConfig::from_str_as).
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::RegistryConfig;
        ///
        /// let config = RegistryConfig::from_yaml_str(
        ///     "defaults:\n  consecutive_failures: 5\nbreakers:\n  search:\n    consecutive_failures: 2\n",
        /// )?;
        /// assert_eq!(config.config_for("search").consecutive_failures, Some(2));
        /// # Ok::<(), hotbreaker::ConfigFileError>(())
        /// ```
        #[cfg(feature = "yaml")]
        #[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
        pub fn from_yaml_str(text: &str) -> Result<RegistryConfig, ConfigFileError> {
            RegistryConfig::from_str_as(Format::Yaml, text)
        }

        /// Reads a registry configuration from JSON text; see
        /// [`from_str_as`](RegistryConfig::from_str_as).
        ///
        /// # Errors
        ///
        /// As for [`from_str_as`](RegistryConfig::from_str_as).
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::RegistryConfig;
        ///
        /// let config = RegistryConfig::from_json_str(
        ///     r#"{ "breakers": { "search": { "consecutive_failures": 2 } } }"#,
        /// )?;
        /// assert_eq!(config.config_for("search").consecutive_failures, Some(2));
        /// # Ok::<(), hotbreaker::ConfigFileError>(())
        /// ```
        #[cfg(feature = "json")]
        #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
        pub fn from_json_str(text: &str) -> Result<RegistryConfig, ConfigFileError> {
            RegistryConfig::from_str_as(Format::Json, text)
        }

        /// Reads a registry configuration from text in `format` (the form is under "In a
        /// file" in [`RegistryConfig`]'s docs), and checks the defaults and every breaker's
        /// settings as [`Builder::build`](crate::Builder::build) would. Each format needs
        /// its feature (`toml`, `yaml`, `json`).
        ///
        /// # Errors
        ///
        /// A [`ConfigFileError`] whose field is the path from the top of the file
        /// (`"breakers.payments.failure_rate.threshold"`): a syntax error, a value of the
        /// wrong type, an unknown field, or a value out of range; the field `breakers` for a
        /// breaker named twice or with an empty name; a format whose feature is off is
        /// refused saying so, and YAML nested too deep as by [`Config::from_str_as`].
        ///
        /// # Examples
        ///
        /// ```
        /// use hotbreaker::{Format, RegistryConfig};
        ///
        /// let text = r#"{ "breakers": { "a": { "stripes": 0 } } }"#;
        /// let err = RegistryConfig::from_str_as(Format::Json, text).unwrap_err();
        /// if cfg!(feature = "json") {
        ///     assert_eq!(err.field(), "breakers.a.stripes");
        /// } else {
        ///     assert!(err.to_string().contains("without its `json` feature"), "{err}");
        /// }
        /// ```
        pub fn from_str_as(format: Format, text: &str) -> Result<RegistryConfig, ConfigFileError> {
            let config: RegistryConfig = parse_as(format, text)?;
            config.validate().map_err(|error| {
                ConfigFileError::out_of_range_named(format, error.field, error.reason)
            })?;
            Ok(config)
        }
    }
}
