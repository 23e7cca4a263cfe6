// Package result builds the result document of Contract 3
// (bench-config/schema/result.schema.json) from the merged histograms, and writes it:
// the JSON to --output or stdout, and the .hlog interval log beside an output file.
package result

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hftbench/clients/go/internal/args"
	"hftbench/clients/go/internal/stats"
)

// Version is client_version.
const Version = "0.1.0"

// Histogram is histogram / uncorrected_histogram of the result.
type Histogram struct {
	Format string `json:"format"`
	Unit   string `json:"unit"`
	Data   string `json:"data"` // HdrHistogram V2 deflate encoding, base64 (HISTF…)
}

// Result is one client run: latencies in µs, histograms in ns, times in s.
type Result struct {
	SchemaVersion        int              `json:"schema_version"`
	Client               string           `json:"client"`
	ClientVersion        string           `json:"client_version"`
	Scenario             string           `json:"scenario"`
	Mode                 string           `json:"mode"`
	TargetRateRps        *float64         `json:"target_rate_rps"`
	Orders               uint64           `json:"orders"` // measured orders sent (ok + errors)
	Connections          int              `json:"connections"`
	Warmup               uint64           `json:"warmup"`
	Seed                 uint64           `json:"seed"`
	StartedAt            string           `json:"started_at"`
	DurationS            float64          `json:"duration_s"`
	OK                   uint64           `json:"ok"`
	Errors               uint64           `json:"errors"`
	ErrorKinds           stats.ErrorKinds `json:"error_kinds"`
	ThroughputRps        float64          `json:"throughput_rps"`
	LatencyUs            stats.LatencyUs  `json:"latency_us"`
	UncorrectedLatencyUs *stats.LatencyUs `json:"uncorrected_latency_us,omitempty"`
	Histogram            Histogram        `json:"histogram"`
	UncorrectedHistogram *Histogram       `json:"uncorrected_histogram,omitempty"`
	SendLatenessUs       *stats.LatencyUs `json:"send_lateness_us,omitempty"`        // open loop: actual - intended send
	SendLatenessHist     *Histogram       `json:"send_lateness_histogram,omitempty"` // open loop
	Interrupted          bool             `json:"interrupted"`
	Extra                map[string]any   `json:"extra"`

	// Kept for the .hlog, which needs the histograms and times themselves.
	latency, uncorrected *hdr.Histogram
	started              time.Time
	duration             time.Duration
}

// Run is what the runner measured, the input of New.
type Run struct {
	Reports     []stats.Report
	Started     time.Time     // wall clock at the start of the measured phase
	Duration    time.Duration // wall time of the measured phase
	Interrupted bool
}

// New builds the result document from the workers' reports, merged by the stats stage.
func New(c args.Config, run Run) (*Result, error) {
	merged := stats.MergeReports(run.Reports, c.Rate > 0)
	errs, sent := merged.Errors, merged.Sent
	failed := errs.Total()
	res := &Result{
		SchemaVersion: 1, Client: "go", ClientVersion: Version, Scenario: c.Scenario, Mode: "closed",
		Orders: sent, Connections: c.Connections, Warmup: c.Warmup, Seed: c.Seed,
		StartedAt: run.Started.UTC().Format("2006-01-02T15:04:05.000000Z"),
		DurationS: run.Duration.Seconds(), OK: sent - min(failed, sent), Errors: failed, ErrorKinds: errs,
		Interrupted: run.Interrupted, Extra: extra(c.Connections),
		latency: merged.Latency, started: run.Started, duration: run.Duration,
	}
	if res.DurationS > 0 {
		res.ThroughputRps = float64(res.OK) / res.DurationS
	}
	res.LatencyUs = stats.Summarize(res.latency)
	var err error
	if res.Histogram, err = Encode(res.latency); err != nil {
		return nil, err
	}
	if c.Rate > 0 {
		rate := c.Rate
		res.Mode, res.TargetRateRps = "open", &rate
		res.uncorrected = merged.Uncorrected
		summary := stats.Summarize(res.uncorrected)
		res.UncorrectedLatencyUs = &summary
		h, err := Encode(res.uncorrected)
		if err != nil {
			return nil, err
		}
		res.UncorrectedHistogram = &h
		late := stats.Summarize(merged.Lateness)
		res.SendLatenessUs = &late
		lh, err := Encode(merged.Lateness)
		if err != nil {
			return nil, err
		}
		res.SendLatenessHist = &lh
	}
	return res, nil
}

// Encode is the result's histogram encoding: V2 deflate, base64.
func Encode(h *hdr.Histogram) (Histogram, error) {
	data, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return Histogram{Format: "hdr-v2-deflate-base64", Unit: "ns", Data: string(data)}, err
}

// extra names the libraries and runtime that shape the measurement.
func extra(connections int) map[string]any {
	e := map[string]any{
		"go":         runtime.Version(),
		"gomaxprocs": runtime.GOMAXPROCS(0),
		"workers":    connections,
		"http":       "net/http HTTP/1.1 keep-alive, TCP_NODELAY (Go's default)",
	}
	// GC pacing is Go's default (GOGC=100, no memory limit) unless GOGC / GOMEMLIMIT say
	// otherwise: GOGC 50 to 400 measured the same CPU per order (GC is ~1% of it).
	gc := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(gc)
	e["gogc"] = gc[0].Value.Uint64()
	e["gomemlimit"] = "none"
	if limit := gc[1].Value.Uint64(); limit != math.MaxInt64 {
		e["gomemlimit"] = limit // bytes
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/HdrHistogram/hdrhistogram-go" {
				e["hdrhistogram-go"] = dep.Version
			}
		}
	}
	return e
}
