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
