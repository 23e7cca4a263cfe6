//! The result document of Contract 3 (bench-config/schema/result.schema.json), built once
//! from the merged histograms; serde writes it with the schema's field names.
use std::time::{Duration, SystemTime};

use base64::Engine;
use bytes::BytesMut;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::Config;
use crate::order::write_timestamp;
use crate::stats::{latency_us, ErrorKinds, LatencyUs};

/// `histogram` / `uncorrected_histogram` of the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EncodedHistogram {
    pub format: &'static str,
    pub unit: &'static str,
    /// HdrHistogram V2 deflate encoding in base64 (`HISTF…`).
    pub data: String,
}

/// One client run. Latencies in µs, histograms in ns, times in s.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub client: &'static str,
    pub client_version: &'static str,
    pub scenario: String,
    pub mode: &'static str,
    pub target_rate_rps: Option<f64>,
    /// Measured orders sent (ok + errors).
    pub orders: u64,
    pub connections: usize,
    pub warmup: u64,
    pub seed: u64,
    pub started_at: String,
    pub duration_s: f64,
    pub ok: u64,
    pub errors: u64,
    pub error_kinds: ErrorKinds,
    pub throughput_rps: f64,
    pub latency_us: LatencyUs,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncorrected_latency_us: Option<LatencyUs>,
    pub histogram: EncodedHistogram,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncorrected_histogram: Option<EncodedHistogram>,
    /// Open loop only: actual send - intended send of every measured order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_lateness_us: Option<LatencyUs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_lateness_histogram: Option<EncodedHistogram>,
    pub interrupted: bool,
    pub extra: Value,
    /// Not serialized: kept for the `.hlog`, which needs the histograms themselves.
    #[serde(skip)]
    pub hdr: Histogram<u64>,
    #[serde(skip)]
    pub hdr_uncorrected: Option<Histogram<u64>>,
    #[serde(skip)]
    pub started: SystemTime,
    #[serde(skip)]
    pub duration: Duration,
}

impl RunResult {
    #[allow(clippy::too_many_arguments)] // one call site, each argument a distinct measured input
    pub fn new(
        config: &Config,
        runtime_threads: usize,
        sent: u64,
        errors: ErrorKinds,
        latency: Histogram<u64>,
        uncorrected: Option<Histogram<u64>>,
        lateness: Option<Histogram<u64>>,
        started: SystemTime,
        duration: Duration,
        interrupted: bool,
    ) -> RunResult {
        let failed = errors.total();
        let ok = sent.saturating_sub(failed);
        let duration_s = duration.as_secs_f64();
        RunResult {
            schema_version: 1,
            client: "rust",
            client_version: env!("CARGO_PKG_VERSION"),
            scenario: config.scenario.clone(),
            mode: if config.rate.is_some() {
                "open"
            } else {
                "closed"
            },
            target_rate_rps: config.rate,
            orders: sent,
            connections: config.connections,
            warmup: config.warmup,
            seed: config.seed,
            started_at: rfc3339(started),
            duration_s,
            ok,
            errors: failed,
            error_kinds: errors,
            throughput_rps: if duration_s > 0.0 {
                ok as f64 / duration_s
            } else {
                0.0
            },
            latency_us: latency_us(&latency),
            uncorrected_latency_us: uncorrected.as_ref().map(latency_us),
            histogram: encode(&latency),
            uncorrected_histogram: uncorrected.as_ref().map(encode),
            send_lateness_us: lateness.as_ref().map(latency_us),
            send_lateness_histogram: lateness.as_ref().map(encode),
            interrupted,
            extra: extra(config.connections, runtime_threads),
            hdr: latency,
            hdr_uncorrected: uncorrected,
            started,
            duration,
        }
    }
}

/// `extra`: the libraries that shape the measurement, the worker tasks (one per
/// connection) and the client threads (one current-thread runtime each) that run them.
fn extra(workers: usize, runtime_threads: usize) -> Value {
    json!({
        "reqwest": env!("HFT_DEP_REQWEST"),
        "hyper": env!("HFT_DEP_HYPER"),
        "tokio": env!("HFT_DEP_TOKIO"),
        "hdrhistogram": env!("HFT_DEP_HDRHISTOGRAM"),
        "runtime": "tokio current-thread, one per client thread",
        "workers": workers,
        "runtime_threads": runtime_threads,
        "http": "HTTP/1.1 keep-alive, TCP_NODELAY",
    })
}

/// The histogram in the result's encoding: V2 deflate, base64.
pub fn encode(h: &Histogram<u64>) -> EncodedHistogram {
    EncodedHistogram {
        format: "hdr-v2-deflate-base64",
        unit: "ns",
        data: encode_base64(h),
    }
}

/// HdrHistogram V2 deflate bytes in standard base64, as every HdrHistogram library reads.
pub fn encode_base64(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// RFC 3339 UTC with microseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let mut buf = BytesMut::with_capacity(32);
    write_timestamp(&mut buf, t);
    String::from_utf8(buf.to_vec()).expect("timestamps are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn encoding_round_trips_and_starts_with_histf() {
        let mut h = new_histogram();
        for v in [1_000u64, 50_000, 50_001, 2_000_000] {
            h.record(v).unwrap();
        }
        let e = encode(&h);
        assert!(e.data.starts_with("HISTF"), "{}", e.data);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&e.data)
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn ok_is_sent_minus_errors_and_throughput_is_ok_per_second() {
        let config = crate::args::parse(["client-rust", "--rate", "100"]).unwrap();
        let errors = ErrorKinds {
            timeout: 2,
            ..ErrorKinds::default()
        };
        let mut h = new_histogram();
        h.record(10_000).unwrap();
        let r = RunResult::new(
            &config,
            2,
            10,
            errors,
            h,
            Some(new_histogram()),
            Some(new_histogram()),
            SystemTime::now(),
            Duration::from_secs(4),
            false,
        );
        assert_eq!((r.orders, r.ok, r.errors), (10, 8, 2));
        assert_eq!(r.throughput_rps, 2.0);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["mode"], "open");
        assert_eq!(json["target_rate_rps"], 100.0);
        assert!(json["uncorrected_latency_us"]["p50"].is_null());
        assert!(json["send_lateness_us"]["p50"].is_null());
        assert!(json["send_lateness_histogram"]["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("HISTF")));
        assert!(json.get("hdr").is_none());
    }
}
