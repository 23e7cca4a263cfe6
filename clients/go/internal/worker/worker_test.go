package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"hftbench/clients/go/internal/stats"
)

func TestOnly200IsASuccess(t *testing.T) {
	for status, want := range map[int]stats.Failure{200: 0, 201: stats.Other, 302: stats.Other, 422: stats.HTTP4xx, 503: stats.HTTP5xx} {
		if got := StatusVerdict(status); got != want {
			t.Errorf("%d: %v, want %v", status, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := map[error]stats.Failure{
		fmt.Errorf("post: %w", dial):                     stats.Connect,
		fmt.Errorf("post: %w", context.DeadlineExceeded): stats.Timeout,
		errors.New("unexpected EOF"):                     stats.Other,
	}
	for err, want := range cases {
		if got := Classify(err); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
}

func TestWorkerSendsEveryTicketOnceAndCountsFailures(t *testing.T) {
	var seen [20]atomic.Int32
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n%5 == 0 {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
		seen[n-1].Add(1)
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer srv.Close()
	var stop atomic.Bool
	p := &Phase{Transport: srv.Client().Transport, OrderURL: srv.URL + "/order", Seed: 1, Timeout: time.Second, End: 20, Record: true, Stop: &stop}
	p.Next.Store(0)
	done := make(chan stats.Report, 2)
	for range 2 {
		go func() { done <- Run(p) }()
	}
	a, b := <-done, <-done
	if a.Sent+b.Sent != 20 {
		t.Fatalf("sent %d", a.Sent+b.Sent)
	}
	a.Errors.Add(b.Errors)
	if a.Errors != (stats.ErrorKinds{HTTP4xx: 4}) {
		t.Fatalf("%+v", a.Errors)
	}
	if a.Latency.TotalCount()+b.Latency.TotalCount() != 16 {
		t.Fatalf("recorded %d", a.Latency.TotalCount()+b.Latency.TotalCount())
	}
}

// Orders go out as JSON with no User-Agent; answers longer than the worker's answer
// buffer, with or without a Content-Length, are read to their end on a kept-alive
// connection.
func TestLongAnswersAreReadWhole(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 5*answerCapacity+17)
	var conns, bad atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || len(r.Header.Values("User-Agent")) != 0 {
			bad.Add(1)
		}
		if r.ContentLength%2 == 0 {
			w.Header().Set("Content-Length", fmt.Sprint(len(long)))
		}
		w.Write(long) // without Content-Length: chunked
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	var stop atomic.Bool
	p := &Phase{Transport: srv.Client().Transport, OrderURL: srv.URL + "/order", Seed: 1, Timeout: time.Second, End: 10, Record: true, Stop: &stop}
	r := Run(p)
	if r.Sent != 10 || r.Errors.Total() != 0 || r.Latency.TotalCount() != 10 || bad.Load() != 0 || conns.Load() != 1 {
		t.Fatalf("sent %d errors %+v ok %d bad requests %d connections %d", r.Sent, r.Errors, r.Latency.TotalCount(), bad.Load(), conns.Load())
	}
}

// An answer slower than the timeout is a timeout, and the worker goes on to the next order.
func TestASlowAnswerIsATimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	var stop atomic.Bool
	p := &Phase{Transport: srv.Client().Transport, OrderURL: srv.URL + "/order", Timeout: 20 * time.Millisecond, End: 2, Record: true, Stop: &stop}
	r := Run(p)
	if r.Sent != 2 || r.Errors != (stats.ErrorKinds{Timeout: 2}) || r.Latency.TotalCount() != 0 {
		t.Fatalf("sent %d errors %+v", r.Sent, r.Errors)
	}
}

// The timeout covers the whole answer: headers in time but a stalled body is a timeout too.
func TestAStalledBodyIsATimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	var stop atomic.Bool
	p := &Phase{Transport: srv.Client().Transport, OrderURL: srv.URL + "/order", Timeout: 20 * time.Millisecond, End: 2, Record: true, Stop: &stop}
	r := Run(p)
	if r.Sent != 2 || r.Errors != (stats.ErrorKinds{Timeout: 2}) || r.Latency.TotalCount() != 0 {
		t.Fatalf("sent %d errors %+v", r.Sent, r.Errors)
	}
}

// After a timeout the worker's next order gets a fresh, live timeout.
func TestAfterATimeoutTheNextOrderSucceeds(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	var stop atomic.Bool
	p := &Phase{Transport: srv.Client().Transport, OrderURL: srv.URL + "/order", Timeout: 100 * time.Millisecond, End: 3, Record: true, Stop: &stop}
	r := Run(p)
	if r.Sent != 3 || r.Errors != (stats.ErrorKinds{Timeout: 1}) || r.Latency.TotalCount() != 2 {
		t.Fatalf("sent %d errors %+v ok %d", r.Sent, r.Errors, r.Latency.TotalCount())
	}
}

// BenchmarkOrder is the client's whole request path (worker loop, net/http Transport,
// loopback) against a canned-answer server that allocates nothing per request, so
// -benchmem's allocs/op are the client's own per order (nearly all net/http's).
func BenchmarkOrder(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go cannedServer(ln)
	transport := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
	defer transport.CloseIdleConnections()
	var stop atomic.Bool
	p := &Phase{Transport: transport, OrderURL: "http://" + ln.Addr().String() + "/order", Seed: 1,
		Timeout: time.Second, End: 100, Record: true, Stop: &stop}
	Run(p) // connect and warm up
	p.Next.Store(0)
	p.End = uint64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	if r := Run(p); r.Errors.Total() != 0 {
		b.Fatalf("%+v", r.Errors)
	}
}

var lengthKey = []byte("content-length:")

// cannedServer answers every request on every connection with the same 200.
func cannedServer(ln net.Listener) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			br := bufio.NewReader(conn)
			for {
				length := 0
				for { // headers, up to the blank line
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) <= 2 {
						break
					}
					if len(line) > len(lengthKey) && bytes.EqualFold(line[:len(lengthKey)], lengthKey) {
						length = 0
						for _, c := range bytes.TrimSpace(line[len(lengthKey):]) {
							length = 10*length + int(c-'0')
						}
					}
				}
				if _, err := br.Discard(length); err != nil {
					return
				}
				if _, err := conn.Write(answer); err != nil {
					return
				}
			}
		}()
	}
}
