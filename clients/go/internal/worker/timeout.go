package worker

import (
	"context"
	"sync"
	"time"
)

// timeoutCtx is a worker's request context, reused from order to order: one timer,
// re-armed per order, cancels the order in flight when it fires. It replaces a
// context.WithTimeout per order, which costs a timerCtx, a timer, a Done channel, a
// children map in the parent and a copy of the Request (Request.WithContext): ~1 µs of
// CPU per order on the dev box.
//
// net/http derives its own cancelable context from the request's. For a parent that is
// not one of the context package's own types, context.WithCancel would start a goroutine
// per request to watch Done, unless the parent has an AfterFunc method: timeoutCtx has
// one, so the transport's context registers a callback here instead.
//
// Once the timer has fired the context stays done (Err is DeadlineExceeded for good):
// the worker then takes a fresh one (the rare path, allocation there is fine).
type timeoutCtx struct {
	timeout time.Duration
	timer   *time.Timer // runs expire; stopped between orders

	mu    sync.Mutex
	done  chan struct{} // closed by expire
	err   error         // nil until expire
	next  uint64        // id of the next AfterFunc registration
	funcs []afterFunc   // registered and not yet stopped (one per order in flight, rarely two)
}

// afterFunc is one AfterFunc registration.
type afterFunc struct {
	id uint64
	f  func()
}

var _ context.Context = (*timeoutCtx)(nil)

func newTimeoutCtx(timeout time.Duration) *timeoutCtx {
	c := &timeoutCtx{timeout: timeout, done: make(chan struct{}), funcs: make([]afterFunc, 0, 4)}
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	return c
}

// arm starts the timeout of one order.
func (c *timeoutCtx) arm() { c.timer.Reset(c.timeout) }

// disarm ends the timeout of one order; false if the timer fired (or is firing), in
// which case the context is done and must be replaced.
func (c *timeoutCtx) disarm() bool { return c.timer.Stop() }

// expire is the timer's function: done for good, and every registered function runs.
func (c *timeoutCtx) expire() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.DeadlineExceeded
	close(c.done)
	funcs := append([]afterFunc(nil), c.funcs...)
	c.funcs = c.funcs[:0]
	c.mu.Unlock()
	for _, a := range funcs {
		a.f()
	}
}

// Deadline reports none: the timer enforces it (the dialer has its own timeout).
func (*timeoutCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *timeoutCtx) Done() <-chan struct{} { return c.done }

func (c *timeoutCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (*timeoutCtx) Value(any) any { return nil }

// AfterFunc runs f when the timer fires, unless the returned stop is called first
// (context.AfterFunc's contract). Each registration has its own id, because net/http
// may stop the previous order's registration after the next order registered.
func (c *timeoutCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	id := c.next
	c.next++
	c.funcs = append(c.funcs, afterFunc{id: id, f: f})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, a := range c.funcs {
			if a.id == id {
				last := len(c.funcs) - 1
				copy(c.funcs[i:], c.funcs[i+1:])
				c.funcs[last] = afterFunc{} // drop the reference to f
				c.funcs = c.funcs[:last]
				return true
			}
		}
		return false
	}
}
