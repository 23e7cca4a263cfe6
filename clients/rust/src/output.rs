//! Writes the result: the JSON document (to `--output` or stdout) and, beside an output
//! file, the `.hlog` interval log. The JSON goes first, so a failing `.hlog` loses nothing.
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use crate::result::RunResult;

/// The interval log's `Interval_Max` column in milliseconds, as Java's and Python's
/// HdrHistogram log writers do for nanosecond histograms.
const MAX_VALUE_DIVISOR: f64 = 1_000_000.0;

/// The legend line of the standard interval log.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// Where the result goes, opened before the run so a bad path fails in seconds.
pub enum Sink {
    Stdout,
    File { path: PathBuf, file: File },
}

impl Sink {
    /// Opens (creates) `path`, or stdout when `None`.
    pub fn open(path: Option<&Path>) -> Result<Sink, String> {
        match path {
            None => Ok(Sink::Stdout),
            Some(path) => File::create(path)
                .map(|file| Sink::File {
                    path: path.to_path_buf(),
                    file,
                })
                .map_err(|e| {
                    format!(
                        "cannot write --output {} ({e}); pass a path in a writable folder",
                        path.display()
                    )
                }),
        }
    }

    /// Writes the JSON, then the `.hlog` beside an output file. If the file cannot be
    /// written the JSON still goes to stdout, so the measurement is never lost.
    pub fn write(self, result: &RunResult) -> Result<(), String> {
        let json = serde_json::to_string_pretty(result)
            .map_err(|e| format!("cannot encode the result ({e}); this is a bug"))?
            + "\n";
        match self {
            Sink::Stdout => io::stdout().write_all(json.as_bytes()).map_err(|e| {
                format!("cannot write the result to stdout ({e}); pass --output PATH")
            }),
            Sink::File { path, mut file } => {
                if let Err(e) = file
                    .write_all(json.as_bytes())
                    .and_then(|_| file.sync_data())
                {
                    let _ = io::stdout().write_all(json.as_bytes());
                    return Err(format!(
                        "cannot write --output {} ({e}); the result went to stdout",
                        path.display()
                    ));
                }
                let hlog = hlog_path(&path);
                write_hlog(&hlog, result).map_err(|e| {
                    format!(
                        "cannot write {} ({e}); the JSON result is in {}",
                        hlog.display(),
                        path.display()
                    )
                })
            }
        }
    }
}

/// `PATH` with `.json` replaced by `.hlog` (appended when `PATH` has no `.json`).
pub fn hlog_path(json: &Path) -> PathBuf {
    match json.extension() {
        Some(ext) if ext == "json" => json.with_extension("hlog"),
        _ => PathBuf::from(format!("{}.hlog", json.display())),
    }
}

fn write_hlog(path: &Path, result: &RunResult) -> io::Result<()> {
    let mut text = Vec::new();
    hlog_text(&mut text, result)?;
    std::fs::write(path, text)
}

/// The interval log: headers, legend, one line for the whole measured phase, and in open
/// loop a second line tagged `uncorrected`.
pub fn hlog_text(out: &mut Vec<u8>, result: &RunResult) -> io::Result<()> {
    let mut serializer = V2DeflateSerializer::new();
    IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "[Logged with hft-bench client-rust {}]",
            env!("CARGO_PKG_VERSION")
        ))
        .with_start_time(result.started)
        .with_base_time(result.started)
        .begin_log_with(out, &mut serializer)?;
    // hdrhistogram's builder writes no legend line; the standard format has one.
    out.extend_from_slice(LEGEND.as_bytes());
    let mut log = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(MAX_VALUE_DIVISOR)
        .begin_log_with(out, &mut serializer)?;
    let mut line = |h: &Histogram<u64>, tag: Option<Tag>| {
        log.write_histogram(h, Duration::ZERO, result.duration, tag)
            .map_err(|e| io::Error::other(e.to_string()))
    };
    line(&result.hdr, None)?;
    if let Some(uncorrected) = &result.hdr_uncorrected {
        line(uncorrected, Tag::new("uncorrected"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{new_histogram, ErrorKinds};
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use std::time::SystemTime;

    #[test]
    fn hlog_goes_beside_the_json() {
        assert_eq!(
            hlog_path(Path::new("r/small/rust.json")),
            PathBuf::from("r/small/rust.hlog")
        );
        assert_eq!(hlog_path(Path::new("out")), PathBuf::from("out.hlog"));
    }

    #[test]
    fn open_loop_log_has_two_lines_the_second_tagged() {
        let config = crate::args::parse(["client-rust", "--rate", "100"]).unwrap();
        let mut h = new_histogram();
        h.record(2_000_000).unwrap();
        let r = RunResult::new(
            &config,
            2,
            1,
            ErrorKinds::default(),
            h.clone(),
            Some(h),
            Some(new_histogram()),
            SystemTime::now(),
            Duration::from_millis(1500),
            false,
        );
        let mut text = Vec::new();
        hlog_text(&mut text, &r).unwrap();
        let s = String::from_utf8(text.clone()).unwrap();
        assert!(
            s.contains("#[StartTime: ") && s.contains("#[BaseTime: "),
            "{s}"
        );
        assert!(s.contains(LEGEND), "{s}");
        let intervals: Vec<_> = IntervalLogIterator::new(&text)
            .filter_map(|e| match e.unwrap() {
                LogEntry::Interval(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(intervals.len(), 2, "{s}");
        assert_eq!(intervals[0].tag(), None);
        assert_eq!(intervals[1].tag().map(|t| t.as_str()), Some("uncorrected"));
        assert_eq!(intervals[0].duration(), Duration::from_millis(1500));
        assert!(
            (intervals[0].max() - 2.0).abs() < 0.01,
            "max in ms: {}",
            intervals[0].max()
        );
    }
}
