// Package worker is one goroutine per connection. A worker takes order numbers from a
// shared counter (closed loop) or from the pacer as they fall due (open loop), posts
// the order, reads the whole answer and records the latency into its own stats.Report. Its
// request, body buffer, answer buffer and reader are reused: no lock, log line or
// allocation of ours per request (net/http itself allocates some per-request state).
package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"hftbench/clients/go/internal/order"
	"hftbench/clients/go/internal/pacing"
	"hftbench/clients/go/internal/stats"
)

// bodyCapacity holds one body (≈ 220 bytes) so the buffer never grows after the first order.
const bodyCapacity = 512

// answerCapacity holds a whole answer body (hft-server's are ≈ 270 bytes), so reading
// one takes a single Read; longer ones take more.
const answerCapacity = 2048

// StatusVerdict maps an answer's status to the contract's verdict: only 200 succeeds.
func StatusVerdict(status int) stats.Failure {
	switch {
	case status == http.StatusOK:
		return 0
	case status >= 400 && status < 500:
		return stats.HTTP4xx
	case status >= 500 && status < 600:
		return stats.HTTP5xx
	default:
		return stats.Other
	}
}

// Classify maps a transport error to its kind.
func Classify(err error) stats.Failure {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return stats.Timeout
	}
	var op *net.OpError
	if (errors.As(err, &op) && op.Op == "dial") || errors.Is(err, syscall.ECONNREFUSED) {
		return stats.Connect
	}
	return stats.Other
}

// Phase is what every worker of one phase shares.
type Phase struct {
	// The Transport itself, not an http.Client: Client.Do copies the headers and URL and
	// checks redirects on every request, work an order post never needs.
	Transport http.RoundTripper
	OrderURL  string
	Seed      uint64
	Timeout   time.Duration // per request, until the answer is fully read
	// Closed loop: the next order number, taken with Add, up to End; no order is
	// started at or after Deadline (--duration; zero = none).
	Next     atomic.Uint64
	End      uint64
	Deadline time.Time
	// Open loop: order numbers released by the pacer at their due times (nil = closed loop).
	Due      <-chan uint64
	Schedule pacing.Schedule
	Record   bool         // warm-up phases send but do not record
	Stop     *atomic.Bool // set by SIGINT: finish the order in flight, start no new one
}

// take is the next order and, in open loop, its intended send time; false ends the phase.
func (p *Phase) take() (k uint64, intended time.Time, ok bool) {
	if p.Due != nil {
		k, ok = <-p.Due
		if ok {
			intended = p.Schedule.Due(k)
		}
		return k, intended, ok
	}
	if !p.Deadline.IsZero() && !time.Now().Before(p.Deadline) {
		return 0, intended, false
	}
	k = p.Next.Add(1) - 1
	return k, intended, k < p.End
}

// Run is the worker loop: it runs until the phase's orders, deadline or SIGINT end it.
func Run(p *Phase) stats.Report {
	r := stats.Report{Latency: stats.NewHistogram()}
	if p.Due != nil {
		r.Uncorrected = stats.NewHistogram()
		r.Lateness = stats.NewHistogram()
	}
	buf := make([]byte, 0, bodyCapacity)
	answer := make([]byte, answerCapacity)
	// The body must stay io.NopCloser(*bytes.Reader): net/http recognises it as in
	// memory and writes headers and body in one write(2); any other type makes it flush
	// the headers first, two syscalls (and two TCP segments for the server) per order.
	reader := &bytes.Reader{}
	body := io.NopCloser(reader)
	deadline := newTimeoutCtx(p.Timeout)
	req, err := http.NewRequestWithContext(deadline.ctx, http.MethodPost, p.OrderURL, nil)
	if err != nil { // args.URL accepted it, so this is a bug, not a user error
		panic(fmt.Sprintf("order URL %q: %v", p.OrderURL, err))
	}
	req.Header.Set("Content-Type", "application/json")
	// An empty User-Agent tells net/http to send none: its default costs a Sprintf, a
	// header escape pass and an allocation per order (~950 instructions, 1.5% of the
	// client's instructions) for a header the server ignores (order.lua sends none to wrk).
	req.Header["User-Agent"] = []string{""}
	for {
		k, intended, ok := p.take()
		if !ok || p.Stop.Load() {
			break
		}
		buf = order.AppendBody(buf[:0], order.Nth(p.Seed, k), time.Now())
		reader.Reset(buf)
		req.Body, req.ContentLength = body, int64(len(buf))
		start := time.Now()
		failure := post(p.Transport, req, deadline, answer)
		done := time.Now()
		if !deadline.disarm() { // the timeout fired: that context is done for good
			deadline = newTimeoutCtx(p.Timeout)
			req = req.WithContext(deadline.ctx)
		}
		r.Sent++
		if !p.Record {
			continue
		}
		if p.Due != nil { // send lateness: every measured order, failed ones too
			stats.RecordLateness(r.Lateness, int64(start.Sub(intended)))
		}
		if failure != 0 {
			r.Errors.Count(failure)
			continue
		}
		if p.Due != nil {
			stats.Record(r.Latency, int64(done.Sub(intended)))
			stats.Record(r.Uncorrected, int64(done.Sub(start)))
		} else {
			stats.Record(r.Latency, int64(done.Sub(start)))
		}
	}
	return r
}

// post sends one order and reads the answer to its end into answer (the worker's
// scratch buffer); deadline's timer (armed here, disarmed by the caller) cancels it at
// the timeout. http.Client.Timeout would start a goroutine per request (measured: ~3 µs
// of client CPU per order). An answer that fits in the buffer takes one Read, which also
// returns io.EOF (net/http reports EOF with the last bytes of a Content-Length body);
// io.Copy(io.Discard) reads the same way but through a pooled 8 KiB buffer.
func post(rt http.RoundTripper, req *http.Request, deadline *timeoutCtx, answer []byte) stats.Failure {
	deadline.arm()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return Classify(err)
	}
	for err == nil {
		_, err = resp.Body.Read(answer)
	}
	resp.Body.Close()
	if err != io.EOF {
		return Classify(err)
	}
	return StatusVerdict(resp.StatusCode)
}
