// Package stats is the stats stage: each worker's record (Report: its histograms and
// error counts by kind), the merge of the records after the run, and the latency
// summary in microseconds, all pure functions. Workers only record; they never compute
// statistics.
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

// RecordLateness adds one send lateness (actual send - intended send), 0 when on time,
// saturating at HighestNs.
func RecordLateness(h *hdr.Histogram, ns int64) {
	_ = h.RecordValue(min(max(ns, 0), HighestNs)) // in range by construction
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

// ErrorKinds counts failed orders by kind (Contract 2's error_kinds).
type ErrorKinds struct {
	Connect uint64 `json:"connect"`
	Timeout uint64 `json:"timeout"`
	HTTP4xx uint64 `json:"http_4xx"`
	HTTP5xx uint64 `json:"http_5xx"`
	Other   uint64 `json:"other"`
}

// Failure is why one order failed.
type Failure int

const (
	Connect Failure = iota + 1
	Timeout
	HTTP4xx
	HTTP5xx
	Other
)

// Count adds one failure.
func (e *ErrorKinds) Count(f Failure) {
	switch f {
	case Connect:
		e.Connect++
	case Timeout:
		e.Timeout++
	case HTTP4xx:
		e.HTTP4xx++
	case HTTP5xx:
		e.HTTP5xx++
	default:
		e.Other++
	}
}

// Add sums another worker's counts into e.
func (e *ErrorKinds) Add(o ErrorKinds) {
	e.Connect += o.Connect
	e.Timeout += o.Timeout
	e.HTTP4xx += o.HTTP4xx
	e.HTTP5xx += o.HTTP5xx
	e.Other += o.Other
}

// Total is the number of failed orders.
func (e ErrorKinds) Total() uint64 { return e.Connect + e.Timeout + e.HTTP4xx + e.HTTP5xx + e.Other }

// Report is what one worker hands back after the phase.
type Report struct {
	Latency     *hdr.Histogram // ns, successful orders: from the intended send time in open loop
	Uncorrected *hdr.Histogram // open loop only: ns from the actual send
	Lateness    *hdr.Histogram // open loop only: ns, actual send - intended send, every measured order
	Errors      ErrorKinds
	Sent        uint64 // orders sent, successful or not
}

// MergeReports adds every worker's record into one: histograms merged, counts summed.
// open gives the sum uncorrected and lateness histograms (empty when no worker recorded one).
func MergeReports(reports []Report, open bool) Report {
	var sum Report
	latencies := make([]*hdr.Histogram, 0, len(reports))
	var uncorrected, lateness []*hdr.Histogram
	for _, r := range reports {
		sum.Errors.Add(r.Errors)
		sum.Sent += r.Sent
		latencies = append(latencies, r.Latency)
		if r.Uncorrected != nil {
			uncorrected = append(uncorrected, r.Uncorrected)
		}
		if r.Lateness != nil {
			lateness = append(lateness, r.Lateness)
		}
	}
	sum.Latency = Merge(latencies)
	if open {
		sum.Uncorrected = Merge(uncorrected)
		sum.Lateness = Merge(lateness)
	}
	return sum
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
