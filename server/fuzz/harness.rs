//! The fuzz loop shared by the parser fuzz tests (`src/order/json/fuzz_tests.rs`) and
//! the HTTP fuzz tests (`tests/fuzz_http.rs`), included by `#[path]` in both: the seed
//! corpus of `server/fuzz/corpus/`, then proptest's runner under a budget, a seed that is
//! printed so that any failure can be replayed, and the executions-per-second line that
//! `make fuzz` adds up.
//!
//! Budget, from the environment:
//! - `HFT_FUZZ_SECONDS=N`: run each fuzz test for N seconds (`make fuzz`);
//! - `HFT_FUZZ_CASES=N`: N generated cases (per round of a timed run);
//! - neither: the test's own small case count, a second or two of `cargo test`;
//! - `HFT_FUZZ_SEED=N`: the first round's seed (default: from the clock).

// Each including crate uses part of this file.
#![allow(dead_code)]

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

/// Bytes that print as an escaped string (and their length) in a failure report.
#[derive(Clone, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "b\"{}\" ({} bytes)", self.0.escape_ascii(), self.0.len())
    }
}

/// The files of `server/fuzz/corpus/<kind>/`, by name, sorted.
pub fn corpus(kind: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(kind);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot read the fuzz corpus {}: {err}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| entry.expect("a corpus directory entry").path())
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_owned();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
            (!name.starts_with('.')).then_some((name, bytes))
        })
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "the fuzz corpus {} is empty",
        dir.display()
    );
    files
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?}: expected a whole number")),
    )
}

/// Runs `property` on each of `seeds` (the corpus), then on cases from `strategy` until
/// the budget is spent. Panics with the minimal failing case and how to replay it.
pub fn fuzz<S: Strategy>(
    name: &str,
    default_cases: u32,
    seeds: Vec<(String, S::Value)>,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let started = Instant::now();
    let executions = AtomicU64::new(0);
    for (file, value) in seeds {
        executions.fetch_add(1, Ordering::Relaxed);
        if let Err(err) = property(value) {
            panic!("fuzz {name}: the corpus file {file} fails: {err}");
        }
    }
    let deadline = env_u64("HFT_FUZZ_SECONDS").map(|s| started + Duration::from_secs(s));
    let cases = env_u64("HFT_FUZZ_CASES").map_or(default_cases, |n| n.clamp(1, 1 << 31) as u32);
    let seed = env_u64("HFT_FUZZ_SEED").unwrap_or_else(|| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        now.as_secs() ^ u64::from(now.subsec_nanos())
    });
    for round in 0.. {
        let round_seed = seed.wrapping_add(round);
        let mut runner = TestRunner::new(Config {
            cases,
            rng_seed: RngSeed::Fixed(round_seed),
            // Failures are replayed from the seed printed below, and belong in the corpus.
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |value| {
            executions.fetch_add(1, Ordering::Relaxed);
            property(value)
        });
        if let Err(err) = result {
            panic!(
                "fuzz {name}: {err}\nreplay: HFT_FUZZ_SEED={round_seed} HFT_FUZZ_CASES={cases} \
                 cargo test -p hft-server {name}; then add the input to server/fuzz/corpus/"
            );
        }
        match deadline {
            Some(deadline) if Instant::now() < deadline => {}
            _ => break,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let total = executions.load(Ordering::Relaxed);
    // `make fuzz` sums these lines: keep the shape "fuzz NAME: N executions in S s, R/s".
    eprintln!(
        "fuzz {name}: {total} executions in {seconds:.1} s, {:.0}/s (seed {seed})",
        total as f64 / seconds.max(1e-9)
    );
}
