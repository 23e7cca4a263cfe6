package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"hftbench/clients/go/internal/args"
)

func TestProbeNamesTheAddressAndTheFix(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // the port is now free: the connect is refused
	err = Probe(addr, ProbeDeadline)
	want := fmt.Sprintf("cannot connect to %s (connection refused); start bin/hft-server or pass --url", addr)
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// A whole run against an in-process server: every order k of warm-up + measured is
// posted once, as the contract's JSON, and the result adds up.
func TestRunPostsEveryOrderOnceAndAddsUp(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var order map[string]any
		if r.URL.Path != "/order" || json.Unmarshal(body, &order) != nil || order["user_def"] != "hftbench" {
			w.WriteHeader(http.StatusBadRequest)
		}
		posts.Add(1)
		io.WriteString(w, `{"status":"accepted"}`)
	}))
	defer srv.Close()
	for _, rate := range []string{"", "20000"} {
		posts.Store(0)
		argv := []string{"--url", srv.URL, "--orders", "300", "--warmup", "50", "--connections", "4"}
		if rate != "" {
			argv = append(argv, "--rate", rate)
		}
		c, err := args.Parse(argv)
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		r, err := Run(c, &stop)
		if err != nil {
			t.Fatal(err)
		}
		if posts.Load() != 350 || r.Orders != 300 || r.OK != 300 || r.Errors != 0 {
			t.Fatalf("rate %q: posts %d orders %d ok %d errors %d", rate, posts.Load(), r.Orders, r.OK, r.Errors)
		}
		if (rate == "") != (r.Mode == "closed") || (rate != "") != (r.UncorrectedLatencyUs != nil) {
			t.Fatalf("rate %q: mode %s", rate, r.Mode)
		}
		if !strings.HasPrefix(r.Histogram.Data, "HISTF") || r.LatencyUs.P50 == nil {
			t.Fatalf("rate %q: %+v", rate, r.Histogram)
		}
	}
}

// Closed loop leaves half the cores to the server; open loop sizes by the rate; an
// explicit GOMAXPROCS keeps what the runtime chose.
func TestSetProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	want := closedLoopProcs(runtime.NumCPU(), onlineCPUs(onlinePath))
	if got := SetProcs(args.Config{}); got != want || runtime.GOMAXPROCS(0) != want {
		t.Fatalf("closed loop: %d, want %d", runtime.GOMAXPROCS(0), want)
	}
	runtime.GOMAXPROCS(3)
	if got := SetProcs(args.Config{Rate: 1000}); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("open loop at 1,000/s: %d, want 1", runtime.GOMAXPROCS(0))
	}
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3) // as the runtime would have set it at start-up
	if got := SetProcs(args.Config{Rate: 1000}); got != 3 {
		t.Fatalf("GOMAXPROCS=3 in the environment: %d", got)
	}
}

// One P per openLoopRatePerProc orders/s, between 1 and the usable CPUs.
func TestOpenLoopProcs(t *testing.T) {
	for _, c := range []struct {
		usable int
		rate   float64
		want   int
	}{
		{2, 1000, 1}, {2, openLoopRatePerProc, 1}, {2, openLoopRatePerProc + 1, 2}, {2, 1e6, 2},
		{28, 30000, 6}, {1, 1e6, 1}, {4, 0.5, 1},
	} {
		if got := openLoopProcs(c.usable, c.rate); got != c.want {
			t.Errorf("openLoopProcs(%d usable, %v/s) = %d, want %d", c.usable, c.rate, got, c.want)
		}
	}
}

// Sharing the machine: half the CPUs; confined to some of them: all of those.
func TestClosedLoopProcs(t *testing.T) {
	for _, c := range []struct{ usable, online, want int }{
		{2, 2, 1}, {28, 28, 14}, {1, 1, 1}, {1, 2, 1}, {20, 28, 20}, {4, 0, 2},
	} {
		if got := closedLoopProcs(c.usable, c.online); got != c.want {
			t.Errorf("closedLoopProcs(%d usable, %d online) = %d, want %d", c.usable, c.online, got, c.want)
		}
	}
}

func TestOnlineCPUsCountsTheKernelsList(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int{"0-3,6\n": 5, "0\n": 1, "0-27\n": 28, "garbage\n": 0} {
		path := dir + "/online"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := onlineCPUs(path); got != want {
			t.Errorf("onlineCPUs(%q) = %d, want %d", text, got, want)
		}
	}
	if got := onlineCPUs(dir + "/missing"); got != 0 {
		t.Errorf("missing file: %d, want 0", got)
	}
}
