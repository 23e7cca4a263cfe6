// Package runner is the run: probe the server, warm up, measure, hand the workers'
// reports to the result. Warm-up and measurement are two phases over the same
// connection pool, so the measured orders find warm connections and duration_s covers
// only them.
package runner

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hftbench/clients/go/internal/args"
	"hftbench/clients/go/internal/pacing"
	"hftbench/clients/go/internal/result"
	"hftbench/clients/go/internal/stats"
	"hftbench/clients/go/internal/worker"
)

// ProbeDeadline is below the contract's 2 s bound on exit 2, leaving room for start-up
// and DNS.
const ProbeDeadline = 1500 * time.Millisecond

// scheduleLead starts the open-loop schedule just after setup, so order 0 is not
// already late when the first worker runs.
const scheduleLead = time.Millisecond

// Probe makes one TCP connection to address within deadline; its error is the exit-2 line.
func Probe(address string, deadline time.Duration) error {
	conn, err := net.DialTimeout("tcp", address, deadline)
	if err == nil {
		return conn.Close()
	}
	why := err.Error()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		why = fmt.Sprintf("no answer within %v", deadline)
	} else if i := strings.LastIndex(why, ": "); i >= 0 {
		why = why[i+2:] // "dial tcp 127.0.0.1:9: connect: connection refused" → "connection refused"
	}
	return fmt.Errorf("cannot connect to %s (%s); start bin/hft-server or pass --url", address, why)
}

// NewTransport is the HTTP/1.1 transport: a keep-alive pool of exactly `connections`,
// no compression, no proxies. The per-request timeout is the worker's (a context
// deadline), not http.Client.Timeout, which costs a goroutine per request.
func NewTransport(c args.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		DialContext:         dialer.DialContext, // Go sets TCP_NODELAY on every TCP connection
		MaxIdleConns:        c.Connections,
		MaxIdleConnsPerHost: c.Connections,
		MaxConnsPerHost:     c.Connections,
		IdleConnTimeout:     0, // keep connections for the whole run
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return transport
}

// SetProcs chooses GOMAXPROCS for the run and returns it. A closed-loop run that shares
// the machine with the server it loads gets half the cores (at least one): with one P
// per core Go's scheduler hands net/http's read/write goroutines between Ps and keeps
// threads spinning for work on the core the server needs. On the 2-core dev box one P
// cut client CPU from 12-16 to a steady ~12 µs per order at the same or better
// throughput. A client confined to CPUs of its own (affinity mask smaller than the CPUs
// online, as hftbench --client-cpus does) takes all of them. Open loop takes one P per
// openLoopRatePerProc orders/s (see openLoopProcs). An explicit GOMAXPROCS in the
// environment wins.
func SetProcs(c args.Config) int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := closedLoopProcs(runtime.NumCPU(), onlineCPUs(onlinePath))
	if c.Rate > 0 {
		n = openLoopProcs(runtime.NumCPU(), c.Rate)
	}
	runtime.GOMAXPROCS(n)
	return n
}

// openLoopRatePerProc is the open-loop rate one P carries. Up to it the single-P pacer
// naps on its timerfd for most of each interval (its spin window is 60 µs of every 200 or
// more), so the P still polls the network often; one P whose pacer spun most of the time
// fell behind at 20,000/s, where 2 Ps kept up.
const openLoopRatePerProc = 5000

// openLoopProcs: one P per openLoopRatePerProc orders/s, at least one, at most the usable
// CPUs. With one P the pacer hands each due order to its worker on its own thread; with
// more, a hand-off wakes another thread (package pacing). 2026-11-23, idle server, 50
// connections: median send 4–8 µs after its due time at 1,000 and 5,000/s with one P,
// 44–45 µs with two.
func openLoopProcs(usable int, rate float64) int {
	return max(1, min(usable, int(math.Ceil(rate/openLoopRatePerProc))))
}

const onlinePath = "/sys/devices/system/cpu/online"

// closedLoopProcs: all usable CPUs when they are a subset of the machine's, else half.
func closedLoopProcs(usable, online int) int {
	if usable < online {
		return max(1, usable)
	}
	return max(1, usable/2)
}

// onlineCPUs counts the CPUs of the kernel's list ("0-3,6" -> 5); 0 when unreadable.
func onlineCPUs(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(data)), ",") {
		var lo, hi int
		if _, err := fmt.Sscanf(part, "%d-%d", &lo, &hi); err == nil && hi >= lo {
			n += hi - lo + 1
		} else if _, err := fmt.Sscanf(part, "%d", &lo); err == nil {
			n++
		} else {
			return 0
		}
	}
	return n
}

// Run warms up, then measures; stop (SIGINT) ends either phase early.
func Run(c args.Config, stop *atomic.Bool) (*result.Result, error) {
	transport := NewTransport(c)
	defer transport.CloseIdleConnections()
	var schedule pacing.Schedule
	if c.Rate > 0 {
		schedule = pacing.NewSchedule(time.Now().Add(scheduleLead), c.Rate)
	}
	phase := func(start, end uint64, deadline time.Time, record bool) (*worker.Phase, <-chan struct{}, error) {
		p := &worker.Phase{
			Transport: transport, OrderURL: c.OrderURL, Seed: c.Seed, Timeout: c.Timeout, End: end,
			Deadline: deadline, Schedule: schedule, Record: record, Stop: stop,
		}
		p.Next.Store(start)
		if c.Rate <= 0 {
			return p, nil, nil
		}
		due, done, err := pacing.Pace(schedule, start, end, deadline, stop)
		p.Due = due
		return p, done, err
	}
	if c.Warmup > 0 {
		warm, pacer, err := phase(0, c.Warmup, time.Time{}, false)
		if err != nil {
			return nil, err
		}
		runPhase(warm, pacer, c.Connections)
	}
	started := time.Now()
	end, deadline := c.Warmup+c.Orders, time.Time{}
	if c.Duration > 0 {
		end, deadline = math.MaxUint64, started.Add(c.Duration)
	}
	measured, pacer, err := phase(c.Warmup, end, deadline, true)
	if err != nil {
		return nil, err
	}
	reports := runPhase(measured, pacer, c.Connections)
	return result.New(c, result.Run{
		Reports: reports, Started: started, Duration: time.Since(started), Interrupted: stop.Load(),
	})
}

// runPhase starts one goroutine per connection and waits for all of them and the pacer.
func runPhase(p *worker.Phase, pacer <-chan struct{}, connections int) []stats.Report {
	reports := make([]stats.Report, connections)
	var wg sync.WaitGroup
	for i := range reports {
		wg.Go(func() { reports[i] = worker.Run(p) })
	}
	wg.Wait()
	if pacer != nil {
		// Workers stop on SIGINT without draining; drain so a pacer blocked on a full
		// channel can see stop and return.
		for range p.Due {
		}
		<-pacer
	}
	return reports
}
