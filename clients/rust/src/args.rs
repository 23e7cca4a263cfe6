//! Flags → [`Config`]. clap handles the syntax (`--flag value`, `--flag=value`, `--help`,
//! unknown flags); every value is then checked by a small pure function whose error names
//! the flag, the value and the fix, so the binary can print exactly one line and exit 2.
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::{ContextKind, ErrorKind};
use clap::Parser;
use reqwest::Url;

/// A validated run configuration; every field is a flag of Contract 2.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `URL/order`, where every order is posted.
    pub order_url: Url,
    /// host and port of `--url`, probed with a TCP connect before the run.
    pub target: Target,
    /// How the measured phase ends: after N orders or after S seconds.
    pub stop: StopRule,
    /// Concurrent keep-alive connections = worker tasks.
    pub connections: usize,
    /// Orders sent first and not recorded.
    pub warmup: u64,
    /// Open loop: total target orders/s; `None` = closed loop.
    pub rate: Option<f64>,
    /// Per-request timeout (send until the answer is fully read).
    pub timeout: Duration,
    /// Label copied into the result.
    pub scenario: String,
    /// Seed of the order stream.
    pub seed: u64,
    /// Result JSON path; `None` = stdout and no `.hlog`.
    pub output: Option<PathBuf>,
}

/// The server address as the probe needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
}

/// The end of the measured phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    Orders(u64),
    Duration(Duration),
}

/// Why parsing did not produce a [`Config`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsError {
    /// `--help` / `--version`: print this text, exit 0.
    Help(String),
    /// A bad flag or value: one line (without the program name), exit 2.
    Invalid(String),
}

/// The raw flags; values stay strings so the checks below own every message.
#[derive(Parser, Debug)]
#[command(
    name = "client-rust",
    version,
    about = "hft-bench load client (reqwest + tokio)"
)]
struct Raw {
    /// server base URL; orders go to URL/order
    #[arg(
        long,
        default_value = "http://127.0.0.1:8080",
        allow_hyphen_values = true
    )]
    url: String,
    /// measured orders, after warm-up (N >= 1) [default: 1000]
    #[arg(long, conflicts_with = "duration", allow_hyphen_values = true)]
    orders: Option<String>,
    /// instead of --orders: measure for S seconds (S > 0)
    #[arg(long, allow_hyphen_values = true)]
    duration: Option<String>,
    /// concurrent keep-alive connections (C >= 1)
    #[arg(long, default_value = "10", allow_hyphen_values = true)]
    connections: String,
    /// orders sent first and not recorded (W >= 0)
    #[arg(long, default_value = "100", allow_hyphen_values = true)]
    warmup: String,
    /// open loop: total target orders/s (R > 0); absent = closed loop
    #[arg(long, allow_hyphen_values = true)]
    rate: Option<String>,
    /// per-request timeout in milliseconds (T >= 1)
    #[arg(
        long = "timeout-ms",
        default_value = "1000",
        allow_hyphen_values = true
    )]
    timeout_ms: String,
    /// label copied into the result
    #[arg(long, default_value = "adhoc", allow_hyphen_values = true)]
    scenario: String,
    /// seed of the order stream (0 <= N < 2^64)
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    seed: String,
    /// result JSON path; the .hlog goes beside it [default: stdout, no .hlog]
    #[arg(long, allow_hyphen_values = true)]
    output: Option<PathBuf>,
}

/// Default of `--orders` when neither `--orders` nor `--duration` is given.
pub const DEFAULT_ORDERS: u64 = 1000;

/// Parses `argv` (program name first).
pub fn parse<I, T>(argv: I) -> Result<Config, ArgsError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let raw = Raw::try_parse_from(argv).map_err(clap_error)?;
    validate(raw).map_err(ArgsError::Invalid)
}

fn validate(raw: Raw) -> Result<Config, String> {
    let (order_url, target) = url(&raw.url)?;
    let stop = match (&raw.orders, &raw.duration) {
        (_, Some(d)) => {
            StopRule::Duration(Duration::from_secs_f64(positive("--duration", d, "10")?))
        }
        (Some(n), None) => StopRule::Orders(integer("--orders", n, 1, "1000")?),
        (None, None) => StopRule::Orders(DEFAULT_ORDERS),
    };
    let connections = integer("--connections", &raw.connections, 1, "10")?;
    let connections = usize::try_from(connections)
        .ok()
        .filter(|&c| c <= MAX_CONNECTIONS)
        .ok_or_else(|| {
            format!("--connections must be at most {MAX_CONNECTIONS} (got \"{}\"); pass e.g. --connections 100", raw.connections)
        })?;
    Ok(Config {
        order_url,
        target,
        stop,
        connections,
        warmup: integer("--warmup", &raw.warmup, 0, "100")?,
        rate: raw
            .rate
            .as_deref()
            .map(|r| positive("--rate", r, "5000"))
            .transpose()?,
        timeout: Duration::from_millis(integer("--timeout-ms", &raw.timeout_ms, 1, "1000")?),
        scenario: non_empty("--scenario", &raw.scenario, "adhoc")?,
        seed: integer("--seed", &raw.seed, 0, "1")?,
        output: raw.output,
    })
}

/// More connections than this would exhaust file descriptors before measuring anything.
pub const MAX_CONNECTIONS: usize = 10_000;

/// An unsigned integer `>= min`.
pub fn integer(flag: &str, raw: &str, min: u64, example: &str) -> Result<u64, String> {
    match raw.trim().parse::<u64>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(format!(
            "{flag} must be an integer >= {min} (got \"{raw}\"); pass e.g. {flag} {example}"
        )),
    }
}

/// A finite number `> 0`.
pub fn positive(flag: &str, raw: &str, example: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e12 => Ok(v),
        _ => Err(format!(
            "{flag} must be a number > 0 (got \"{raw}\"); pass e.g. {flag} {example}"
        )),
    }
}

fn non_empty(flag: &str, raw: &str, example: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        Err(format!(
            "{flag} must not be empty; pass e.g. {flag} {example}"
        ))
    } else {
        Ok(raw.to_string())
    }
}

/// `--url`: an http:// base URL with a host (no TLS: the server under test speaks none);
/// returns `URL/order` and the probe target.
pub fn url(raw: &str) -> Result<(Url, Target), String> {
    let bad =
        |why: &str| format!("--url {why} (got \"{raw}\"); pass e.g. --url http://127.0.0.1:8080");
    let base = Url::parse(raw).map_err(|e| bad(&format!("is not a valid URL: {e}")))?;
    if base.scheme() != "http" {
        return Err(bad("must start with http://"));
    }
    let host = base
        .host_str()
        .ok_or_else(|| bad("has no host"))?
        .to_string();
    let port = base
        .port_or_known_default()
        .ok_or_else(|| bad("has no port"))?;
    let order = format!("{}/order", base.as_str().trim_end_matches('/'));
    let order_url = Url::parse(&order).map_err(|e| bad(&format!("cannot take /order: {e}")))?;
    // Url keeps IPv6 literals bracketed; the probe's (host, port) wants them bare.
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    Ok((order_url, Target { host, port }))
}

/// One line for a clap error; help and version pass through as text.
fn clap_error(err: clap::Error) -> ArgsError {
    let arg = err
        .get(ContextKind::InvalidArg)
        .map(|v| v.to_string())
        .unwrap_or_default();
    let flag = arg.split_whitespace().next().unwrap_or("").to_string();
    let line = match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            return ArgsError::Help(err.to_string())
        }
        ErrorKind::UnknownArgument => {
            format!("unknown flag {flag}; run client-rust --help for the flags")
        }
        ErrorKind::ArgumentConflict => {
            let prior = err
                .get(ContextKind::PriorArg)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let prior = prior.split_whitespace().next().unwrap_or("").to_string();
            format!("{flag} and {prior} are mutually exclusive; pass only one of them")
        }
        ErrorKind::InvalidValue | ErrorKind::MissingRequiredArgument => {
            format!("{flag} needs a value; pass e.g. {flag}=VALUE (see --help)")
        }
        _ => {
            let text = err.to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            format!(
                "{}; run client-rust --help",
                first.trim_start_matches("error: ")
            )
        }
    };
    ArgsError::Invalid(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(args: &[&str]) -> String {
        let argv = std::iter::once("client-rust").chain(args.iter().copied());
        match parse(argv) {
            Err(ArgsError::Invalid(line)) => line,
            other => panic!("expected an invalid-argument error for {args:?}, got {other:?}"),
        }
    }

    fn ok(args: &[&str]) -> Config {
        let argv = std::iter::once("client-rust").chain(args.iter().copied());
        parse(argv).expect("valid arguments")
    }

    #[test]
    fn defaults_follow_the_contract() {
        let c = ok(&[]);
        assert_eq!(c.order_url.as_str(), "http://127.0.0.1:8080/order");
        assert_eq!(
            c.target,
            Target {
                host: "127.0.0.1".into(),
                port: 8080
            }
        );
        assert_eq!(c.stop, StopRule::Orders(1000));
        assert_eq!(
            (c.connections, c.warmup, c.rate, c.seed),
            (10, 100, None, 1)
        );
        assert_eq!(c.timeout, Duration::from_millis(1000));
        assert_eq!(c.scenario, "adhoc");
        assert_eq!(c.output, None);
    }

    #[test]
    fn both_flag_spellings_are_accepted() {
        let c = ok(&[
            "--orders=5",
            "--connections",
            "3",
            "--rate=250.5",
            "--seed=18446744073709551615",
        ]);
        assert_eq!(c.stop, StopRule::Orders(5));
        assert_eq!(c.connections, 3);
        assert_eq!(c.rate, Some(250.5));
        assert_eq!(c.seed, u64::MAX);
        let d = ok(&["--duration", "1.5", "--url", "http://localhost:9/base/"]);
        assert_eq!(d.stop, StopRule::Duration(Duration::from_millis(1500)));
        assert_eq!(d.order_url.as_str(), "http://localhost:9/base/order");
    }

    #[test]
    fn bad_values_name_the_flag_and_the_fix_on_one_line() {
        let cases: [(&[&str], &str); 10] = [
            (
                &["--connections", "0"],
                "--connections must be an integer >= 1 (got \"0\"); pass e.g. --connections 10",
            ),
            (
                &["--orders", "-5"],
                "--orders must be an integer >= 1 (got \"-5\")",
            ),
            (
                &["--rate", "abc"],
                "--rate must be a number > 0 (got \"abc\")",
            ),
            (&["--rate", "0"], "--rate must be a number > 0"),
            (&["--duration", "nan"], "--duration must be a number > 0"),
            (
                &["--timeout-ms", "0"],
                "--timeout-ms must be an integer >= 1",
            ),
            (
                &["--seed", "18446744073709551616"],
                "--seed must be an integer >= 0",
            ),
            (&["--url", "ftp://x"], "--url must start with http://"),
            (
                &["--url", "https://127.0.0.1:8443"],
                "--url must start with http://",
            ),
            (
                &["--bogus", "1"],
                "unknown flag --bogus; run client-rust --help",
            ),
        ];
        for (args, expected) in cases {
            let line = invalid(args);
            assert!(line.starts_with(expected), "{args:?}: {line}");
            assert!(!line.contains('\n'), "{args:?}: more than one line: {line}");
        }
    }

    #[test]
    fn orders_and_duration_exclude_each_other() {
        let line = invalid(&["--orders", "5", "--duration", "1"]);
        assert!(
            line.contains("--orders") && line.contains("--duration") && line.contains("only one"),
            "{line}"
        );
    }

    #[test]
    fn a_flag_without_value_is_one_line() {
        let line = invalid(&["--orders"]);
        assert!(line.starts_with("--orders needs a value"), "{line}");
    }

    #[test]
    fn help_is_not_an_error() {
        let argv = ["client-rust", "--help"];
        assert!(
            matches!(parse(argv), Err(ArgsError::Help(text)) if text.contains("--connections"))
        );
    }
}
