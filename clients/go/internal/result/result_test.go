package result

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hftbench/clients/go/internal/args"
	"hftbench/clients/go/internal/stats"
)

func openRun(t *testing.T) *Result {
	t.Helper()
	c, err := args.Parse([]string{"--rate", "100"})
	if err != nil {
		t.Fatal(err)
	}
	a, b, late := stats.NewHistogram(), stats.NewHistogram(), stats.NewHistogram()
	stats.Record(a, 2_000_000)
	stats.RecordLateness(late, 5_000)
	reports := []stats.Report{
		{Latency: a, Uncorrected: b, Lateness: late, Errors: stats.ErrorKinds{Timeout: 2}, Sent: 10},
		{Latency: stats.NewHistogram(), Uncorrected: stats.NewHistogram(), Lateness: stats.NewHistogram(), Sent: 2},
	}
	r, err := New(c, Run{Reports: reports, Started: time.Now(), Duration: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOkIsSentMinusErrorsAndThroughputIsOkPerSecond(t *testing.T) {
	r := openRun(t)
	if r.Orders != 12 || r.OK != 10 || r.Errors != 2 || r.ThroughputRps != 2.5 {
		t.Fatalf("%+v", r)
	}
	raw, _ := json.Marshal(r)
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["mode"] != "open" || doc["target_rate_rps"] != 100.0 || doc["uncorrected_latency_us"] == nil {
		t.Fatalf("%s", raw)
	}
	late, _ := doc["send_lateness_us"].(map[string]any)
	lh, _ := doc["send_lateness_histogram"].(map[string]any)
	if late == nil || math.Abs(late["p99"].(float64)-5) > 0.01 || lh == nil || !strings.HasPrefix(lh["data"].(string), "HISTF") {
		t.Fatalf("send lateness missing or wrong: %s", raw)
	}
	if _, leaked := doc["latency"]; leaked {
		t.Fatalf("private fields leaked: %s", raw)
	}
}

func TestEncodingRoundTrips(t *testing.T) {
	h := stats.NewHistogram()
	for _, v := range []int64{1000, 50000, 50001, 2000000} {
		stats.Record(h, v)
	}
	e, err := Encode(h)
	if err != nil || !strings.HasPrefix(e.Data, "HISTF") {
		t.Fatalf("%v %s", err, e.Data)
	}
	back, err := hdr.Decode([]byte(e.Data))
	if err != nil || back.TotalCount() != 4 || back.Max() != h.Max() {
		t.Fatalf("%v %v", err, back)
	}
}

func TestOpenLoopLogHasTwoLinesTheSecondTagged(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHlog(&out, openRun(t)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"#[StartTime: ", "#[BaseTime: ", `"StartTimestamp","Interval_Length"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q in\n%s", want, text)
		}
	}
	reader := hdr.NewHistogramLogReader(&out)
	first, err := reader.NextIntervalHistogram()
	if err != nil || first == nil || first.TotalCount() != 1 || first.Tag() != "" {
		t.Fatalf("first interval: %v %v\n%s", err, first, text)
	}
	second, err := reader.NextIntervalHistogram()
	if err != nil || second == nil || second.Tag() != "uncorrected" {
		t.Fatalf("second interval: %v %v\n%s", err, second, text)
	}
}

func TestHlogGoesBesideTheJSON(t *testing.T) {
	if HlogPath("r/small/go.json") != "r/small/go.hlog" || HlogPath("out") != "out.hlog" {
		t.Fatal(HlogPath("r/small/go.json"), HlogPath("out"))
	}
}
