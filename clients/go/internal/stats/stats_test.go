package stats

import (
	"encoding/json"
	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"math"
	"testing"
)

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > want*1e-3 {
		t.Errorf("%s: got %v, want %v", name, got, want)
	}
}

func TestMergeAddsEveryWorker(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for v := int64(1); v <= 500; v++ {
		Record(a, v*1000)
		Record(b, (v+500)*1000)
	}
	m := Merge([]*hdr.Histogram{a, b})
	if m.TotalCount() != 1000 {
		t.Fatalf("count %d", m.TotalCount())
	}
	s := Summarize(m)
	near(t, "min", s.Min, 1)
	near(t, "p50", s.P50, 500)
	near(t, "p90", s.P90, 900)
	near(t, "p99", s.P99, 990)
	near(t, "p999", s.P999, 999)
	near(t, "max", s.Max, 1000)
	near(t, "mean", s.Mean, 500.5)
	near(t, "stddev", s.StdDev, 288.675)
}

func TestAnEmptyRunIsAllNull(t *testing.T) {
	raw, err := json.Marshal(Summarize(Merge([]*hdr.Histogram{NewHistogram()})))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if len(fields) != 10 {
		t.Fatalf("%s", raw)
	}
	for k, v := range fields {
		if v != nil {
			t.Errorf("%s = %v, want null", k, v)
		}
	}
}

func TestRecordSaturates(t *testing.T) {
	h := NewHistogram()
	Record(h, math.MaxInt64)
	Record(h, -5)
	if h.TotalCount() != 2 || h.Max() < HighestNs || h.Min() != 1 {
		t.Fatalf("count %d max %d min %d", h.TotalCount(), h.Max(), h.Min())
	}
}

func BenchmarkRecord(b *testing.B) {
	h := NewHistogram()
	v := uint64(12345)
	b.ReportAllocs()
	for b.Loop() {
		v = v*6364136223846793005 + 1
		Record(h, int64(v>>40)+1000)
	}
}

func TestErrorKindsAddUp(t *testing.T) {
	var a ErrorKinds
	for _, f := range []Failure{Connect, Timeout, Timeout, HTTP4xx, Other} {
		a.Count(f)
	}
	b := ErrorKinds{HTTP5xx: 3}
	b.Add(a)
	if b != (ErrorKinds{Connect: 1, Timeout: 2, HTTP4xx: 1, HTTP5xx: 3, Other: 1}) || b.Total() != 8 {
		t.Fatalf("%+v", b)
	}
}

func TestMergeReportsAddsEveryWorkersCountsAndHistograms(t *testing.T) {
	part := func(from, to int64, connect uint64) Report {
		latency, uncorrected, lateness := NewHistogram(), NewHistogram(), NewHistogram()
		for v := from; v <= to; v++ {
			Record(latency, v*1000)
			Record(uncorrected, v*500)
			RecordLateness(lateness, v-1)
		}
		return Report{Latency: latency, Uncorrected: uncorrected, Lateness: lateness, Errors: ErrorKinds{Connect: connect}, Sent: uint64(to-from+1) + connect}
	}
	m := MergeReports([]Report{part(1, 500, 1), part(501, 1000, 2)}, true)
	if m.Sent != 1003 || m.Errors != (ErrorKinds{Connect: 3}) || m.Latency.TotalCount() != 1000 {
		t.Fatalf("sent %d, errors %+v, latencies %d", m.Sent, m.Errors, m.Latency.TotalCount())
	}
	if p50 := *Summarize(m.Latency).P50; p50 < 499.5 || p50 > 500.5 {
		t.Fatalf("p50 %v µs, want 500", p50)
	}
	if m.Uncorrected == nil || m.Uncorrected.TotalCount() != 1000 {
		t.Fatalf("uncorrected %v", m.Uncorrected)
	}
	if m.Lateness == nil || m.Lateness.TotalCount() != 1000 || m.Lateness.Min() != 0 {
		t.Fatalf("lateness %v (an on-time send is recorded as 0)", m.Lateness)
	}
	if closed := MergeReports([]Report{part(1, 10, 0)}, false); closed.Uncorrected != nil || closed.Lateness != nil {
		t.Fatal("closed loop has no uncorrected or lateness histogram")
	}
}
