//! Records the resolved versions of the libraries that shape the measurement
//! (reqwest, tokio, hyper, hdrhistogram) so the result's `extra` can name them
//! without hard-coding numbers that would drift from Cargo.lock.
use std::{env, fs, path::PathBuf};

const TRACKED: [&str; 4] = ["reqwest", "tokio", "hyper", "hdrhistogram"];

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let lock = manifest.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).unwrap_or_default();
    for name in TRACKED {
        let version = lock_version(&text, name).unwrap_or_else(|| "unknown".to_string());
        println!(
            "cargo:rustc-env=HFT_DEP_{}={}",
            name.to_uppercase(),
            version
        );
    }
}

/// The version of the first `[[package]]` named `name` (the workspace pins one of each).
fn lock_version(lock: &str, name: &str) -> Option<String> {
    let needle = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle {
            let next = lines.next()?.trim();
            return next
                .strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_string);
        }
    }
    None
}
