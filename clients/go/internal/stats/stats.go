// Package stats holds the pure functions over HdrHistograms: the per-worker histogram
// shape, the merge after the run, and the latency summary in microseconds. Workers
// never compute statistics.
package stats

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	LowestNs  = 1              // lowest trackable value: 1 ns
	HighestNs = 60_000_000_000 // highest trackable value: 60 s; longer latencies saturate here
	SigFigs   = 3              // significant decimal digits
)

// NewHistogram is an empty histogram of the contract's shape (ns, 1 ns..60 s, 3 digits).
func NewHistogram() *hdr.Histogram { return hdr.New(LowestNs, HighestNs, SigFigs) }

// Record adds one latency, saturating at HighestNs (and at least 1 ns).
func Record(h *hdr.Histogram, ns int64) {
	_ = h.RecordValue(min(max(ns, LowestNs), HighestNs)) // in range by construction
}

// Merge sums parts into one histogram of the contract's shape.
func Merge(parts []*hdr.Histogram) *hdr.Histogram {
	total := NewHistogram()
	for _, p := range parts {
		if dropped := total.Merge(p); dropped != 0 {
			panic(fmt.Sprintf("merging histograms of one shape dropped %d values", dropped))
		}
	}
	return total
}

// LatencyUs is latency_us of the result; nil fields (JSON null) when nothing was recorded.
type LatencyUs struct {
	Min    *float64 `json:"min"`
	Mean   *float64 `json:"mean"`
	StdDev *float64 `json:"stddev"`
	P50    *float64 `json:"p50"`
	P90    *float64 `json:"p90"`
	P95    *float64 `json:"p95"`
	P99    *float64 `json:"p99"`
	P999   *float64 `json:"p999"`
	P9999  *float64 `json:"p9999"`
	Max    *float64 `json:"max"`
}

// Summarize turns a nanosecond histogram into microseconds.
func Summarize(h *hdr.Histogram) LatencyUs {
	if h.TotalCount() == 0 {
		return LatencyUs{}
	}
	us := func(ns float64) *float64 { v := ns / 1000; return &v }
	q := func(percentile float64) *float64 { return us(float64(h.ValueAtQuantile(percentile))) }
	return LatencyUs{
		Min: us(float64(h.Min())), Mean: us(h.Mean()), StdDev: us(h.StdDev()),
		P50: q(50), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), P9999: q(99.99),
		Max: us(float64(h.Max())),
	}
}
