package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Sink is where the result goes, opened before the run so a bad path fails in seconds.
type Sink struct {
	path string   // "" = stdout
	file *os.File // open output file, nil for stdout
}

// OpenSink creates path, or returns a stdout sink when path is "".
func OpenSink(path string) (*Sink, error) {
	if path == "" {
		return &Sink{}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write --output %s (%v); pass a path in a writable folder", path, errCause(err))
	}
	return &Sink{path: path, file: f}, nil
}

// Write writes the JSON, then the .hlog beside an output file. If the file cannot be
// written the JSON still goes to stdout, so the measurement is never lost.
func (s *Sink) Write(r *Result) error {
	doc, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the result (%v); this is a bug", err)
	}
	doc = append(doc, '\n')
	if s.file == nil {
		if _, err := os.Stdout.Write(doc); err != nil {
			return fmt.Errorf("cannot write the result to stdout (%v); pass --output PATH", err)
		}
		return nil
	}
	_, err = s.file.Write(doc)
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_, _ = os.Stdout.Write(doc)
		return fmt.Errorf("cannot write --output %s (%v); the result went to stdout", s.path, errCause(err))
	}
	hlog := HlogPath(s.path)
	var text bytes.Buffer
	if err := WriteHlog(&text, r); err == nil {
		err = os.WriteFile(hlog, text.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s (%v); the JSON result is in %s", hlog, errCause(err), s.path)
	}
	return nil
}

// HlogPath is path with .json replaced by .hlog (appended when path has no .json).
func HlogPath(path string) string {
	if base, ok := strings.CutSuffix(path, ".json"); ok {
		return base + ".hlog"
	}
	return path + ".hlog"
}

// WriteHlog writes the interval log: headers, legend, one line for the measured phase,
// and in open loop a second line tagged "uncorrected".
func WriteHlog(out *bytes.Buffer, r *Result) error {
	w := hdr.NewHistogramLogWriter(out)
	startMs := r.started.UnixMilli()
	w.SetBaseTime(startMs)
	for _, step := range []func() error{
		func() error { return w.OutputComment("[Logged with hft-bench client-go " + Version + "]") },
		w.OutputLogFormatVersion,
		func() error { return w.OutputStartTime(startMs) },
		func() error { return w.OutputBaseTime(startMs) },
		w.OutputLegend,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	line := func(h *hdr.Histogram, tag string) error {
		h.SetStartTimeMs(startMs)
		h.SetEndTimeMs(startMs + r.duration.Milliseconds())
		h.SetTag(tag)
		return w.OutputIntervalHistogram(h) // Interval_Max in ms, as Java's writer does
	}
	if err := line(r.latency, ""); err != nil {
		return err
	}
	if r.uncorrected != nil {
		return line(r.uncorrected, "uncorrected")
	}
	return nil
}

// errCause drops the "op path:" prefix of *os.PathError, which the message repeats anyway.
func errCause(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
