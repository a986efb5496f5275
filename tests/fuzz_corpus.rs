//! Every saved fuzz input, replayed through the harness its target calls, so that what the
//! fuzzer once found stays a test. The inputs are `fuzz/corpus/<target>/*`: a seed corpus, and
//! the inputs of fixed findings (named `regression-*`).

use std::path::{Path, PathBuf};

use hotbreaker::testing::{fuzz_configuration, fuzz_differential, fuzz_two_threads};

fn replay(target: &str, harness: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable corpus entry").path())
        .filter(|path| path.is_file())
        .collect();
    inputs.sort();
    assert!(
        !inputs.is_empty(),
        "no saved inputs in {}: the replay would test nothing",
        dir.display()
    );
    let failed: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("readable input");
            std::panic::catch_unwind(|| harness(&data)).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} saved {target} inputs failed (see the panics above): {failed:#?}",
        failed.len(),
        inputs.len()
    );
}

#[test]
fn differential_corpus() {
    replay("differential", fuzz_differential);
}

#[test]
fn configuration_corpus() {
    replay("configuration", fuzz_configuration);
}

#[test]
fn two_threads_corpus() {
    replay("two_threads", fuzz_two_threads);
}

#[cfg(all(feature = "toml", feature = "yaml", feature = "json"))]
#[test]
fn config_text_corpus() {
    replay("config_text", hotbreaker::testing::fuzz_config_text);
}
