//! Many breakers from one configuration file, reloaded while they run.
//!
//! ```sh
//! cargo run --example registry_reload --features toml
//! ```
//!
//! Writes a TOML file with defaults and three breakers, applies it to a registry, opens one
//! breaker with failures, then changes the file and applies it again: the open breaker is
//! reconfigured in place and stays open, a new breaker is built, and a file that asks for
//! what a live breaker cannot do, or that does not parse, is refused in one line with
//! nothing changed.

#[path = "support/output.rs"]
mod output;

use output::say;

use std::process::ExitCode;

use hotbreaker::{Breaker, Registry, RegistryConfig, State};

const FIRST: &str = r#"
[defaults]
open_duration = "30s"
failure_rate = { threshold = 0.5, window = 20 }
# Room for windows of up to 64 calls on every breaker, for later reloads.
failure_records = 64

[breakers.payments]
consecutive_failures = 5

[breakers.search]
failure_rate = "off"
consecutive_failures = 3
open_duration = "5s"

[breakers.users-db]
"#;

const SECOND: &str = r#"
[defaults]
open_duration = "30s"
failure_rate = { threshold = 0.5, window = 40 }
failure_records = 64
open_backoff = { multiplier = 2.0, max = "5m" }

[breakers.payments]
consecutive_failures = 3

[breakers.search]
failure_rate = "off"
consecutive_failures = 3
open_duration = "5s"

[breakers.users-db]

[breakers.inventory]
slow_call = "250ms"
"#;

/// Asks for a window of 100 calls: a valid file, but the live breakers keep 64 failure
/// records (the first file reserved them), and `payments` would need a new breaker.
const TOO_LONG: &str = r#"
[defaults]
failure_rate = { threshold = 0.5, window = 100 }

[breakers.payments]
"#;

const GARBLED: &str = r#"
[breakers.payments]
consecutive_failures = "five"
"#;

/// Writes `text` to a file, reads the file back (removing it: nothing is left behind if the
/// program ends early) and applies it, printing what happened; returns whether it was
/// applied. A file that cannot be written or read back (`TMPDIR` names no directory) ends
/// the program with one line and exit code 1: the example has nothing to show without it.
fn reload(registry: &Registry, text: &str) -> bool {
    let path =
        std::env::temp_dir().join(format!("hotbreaker-breakers-{}.toml", std::process::id()));
    let read = std::fs::write(&path, text).and_then(|()| {
        let read = std::fs::read_to_string(&path);
        std::fs::remove_file(&path)?;
        read
    });
    let text = read.unwrap_or_else(|error| {
        eprintln!("error: cannot write and read {}: {error}", path.display());
        std::process::exit(1);
    });
    let applied = RegistryConfig::from_toml_str(&text)
        .map_err(|e| e.to_string())
        .and_then(|config| {
            registry
                .apply_config(&config, |name| {
                    let name = name.to_owned();
                    Breaker::builder().on_transition(move |t| {
                        say!("    [{name}] {} -> {} ({:?})", t.from, t.to, t.trigger);
                    })
                })
                .map_err(|e| e.to_string())
        });
    match applied {
        Ok(applied) => {
            say!(
                "  applied: reconfigured {:?}, built {:?}, unchanged {:?}, not in the file {:?}",
                applied.reconfigured,
                applied.inserted,
                applied.unchanged,
                applied.not_in_config
            );
            true
        }
        Err(message) => {
            say!("  refused, nothing changed: {message}");
            false
        }
    }
}

fn show(registry: &Registry) {
    for health in registry.snapshot() {
        let breaker = registry.get(&health.name).expect("listed");
        let config = breaker.config();
        say!(
            "    {:<10} {:<9} rules: rate {:?}, run {:?}; open for {:?}{}",
            health.name,
            health.state.as_str(),
            config
                .failure_rate
                .map(|rate| (rate.threshold, rate.window)),
            config.consecutive_failures,
            config.open_duration,
            match config.open_backoff {
                Some(backoff) => format!(
                    ", backing off x{} up to {:?}",
                    backoff.multiplier, backoff.max
                ),
                None => String::new(),
            }
        );
    }
}

fn main() -> ExitCode {
    if let Some(refused) = output::refuse_arguments("registry_reload") {
        return refused;
    }
    let registry = Registry::new();

    say!("1. the first file");
    assert!(reload(&registry, FIRST));
    show(&registry);

    say!("2. payments fails 5 times in a row");
    let payments = registry.get("payments").expect("built from the file");
    for _ in 0..5 {
        if let Ok(permit) = payments.try_acquire() {
            permit.failure();
        }
    }
    assert_eq!(payments.state(), State::Open);

    say!("3. the file changes: payments trips sooner, every window is 40, inventory is new");
    assert!(reload(&registry, SECOND));
    show(&registry);
    assert_eq!(
        payments.state(),
        State::Open,
        "reconfigured in place, still open"
    );
    assert_eq!(payments.config().consecutive_failures, Some(3));

    say!("4. a file asking for windows longer than the breakers have room for");
    assert!(!reload(&registry, TOO_LONG));

    say!("5. a file that does not parse");
    assert!(!reload(&registry, GARBLED));
    show(&registry);
    ExitCode::SUCCESS
}
