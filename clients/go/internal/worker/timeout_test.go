package worker

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// The transport derives its context with context.WithCancel: on a timeoutCtx that must
// not start a watcher goroutine per request.
func TestTimeoutCtxChildrenStartNoGoroutine(t *testing.T) {
	c := newTimeoutCtx(time.Second)
	before := runtime.NumGoroutine()
	cancels := make([]context.CancelFunc, 0, 100)
	for range 100 {
		_, cancel := context.WithCancel(c.ctx)
		cancels = append(cancels, cancel)
	}
	if after := runtime.NumGoroutine(); after != before {
		t.Fatalf("%d goroutines before, %d after 100 children", before, after)
	}
	for _, cancel := range cancels {
		cancel()
	}
}

// A child canceled late (the previous order's) must leave a newer child to the timer.
func TestTimeoutCtxStaleCancelLeavesTheNewerChild(t *testing.T) {
	c := newTimeoutCtx(10 * time.Millisecond)
	old, cancelOld := context.WithCancel(c.ctx)
	c.arm()
	cur, cancelCur := context.WithCancel(c.ctx)
	defer cancelCur()
	cancelOld()
	if old.Err() != context.Canceled {
		t.Fatalf("old child: %v", old.Err())
	}
	select {
	case <-cur.Done():
	case <-time.After(time.Second):
		t.Fatal("the timer fired but the current child was not canceled")
	}
	if !errors.Is(context.Cause(cur), context.DeadlineExceeded) || !errors.Is(context.Cause(c.ctx), context.DeadlineExceeded) || c.disarm() {
		t.Fatalf("child %v, parent %v", context.Cause(cur), context.Cause(c.ctx))
	}
}

// Disarmed in time, the context stays usable order after order.
func TestTimeoutCtxDisarmedInTimeStaysLive(t *testing.T) {
	c := newTimeoutCtx(20 * time.Millisecond)
	for range 3 {
		c.arm()
		_, cancel := context.WithCancel(c.ctx)
		cancel()
		if !c.disarm() {
			t.Fatal("disarm reported a fired timer")
		}
	}
	time.Sleep(40 * time.Millisecond)
	if c.ctx.Err() != nil {
		t.Fatalf("Err %v after disarm", c.ctx.Err())
	}
	select {
	case <-c.ctx.Done():
		t.Fatal("done after disarm")
	default:
	}
}
