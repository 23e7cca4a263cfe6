// Package pacing gives open-loop orders their intended send times and waits for them
// more finely than 50 µs. Go's timers, like tokio's, wake up to ~1 ms late on an idle
// process (the netpoller waits in whole milliseconds; measured here: a 50 µs sleep
// overshoots by ~1 ms at the median), so we sleep only until SpinWindow before the due
// time and spin on the monotonic clock for the rest, yielding between reads.
package pacing

import (
	"runtime"
	"sync/atomic"
	"time"
)

// SpinWindow is the timer's ~1 ms granularity plus the ~200 µs the spin covers.
const SpinWindow = 1200 * time.Microsecond

// maxNap bounds one sleep so SIGINT is noticed promptly even at very low rates.
const maxNap = 50 * time.Millisecond

// Schedule holds the intended send times of an open-loop run: order i at T0 + i/R.
type Schedule struct {
	T0         time.Time // intended send time of order 0 (the first warm-up order); monotonic
	intervalNs float64   // 1/R in ns, a float so fractional rates keep their exact spacing
}

// NewSchedule is a schedule of rate orders/s starting at t0.
func NewSchedule(t0 time.Time, rate float64) Schedule {
	return Schedule{T0: t0, intervalNs: 1e9 / rate}
}

// Due is the intended send time of order i.
func (s Schedule) Due(i uint64) time.Time {
	return s.T0.Add(time.Duration(float64(i)*s.intervalNs + 0.5))
}

// WaitUntil waits until due; it returns false early when stop is set meanwhile.
func WaitUntil(due time.Time, stop *atomic.Bool) bool {
	for {
		if stop.Load() {
			return false
		}
		left := time.Until(due)
		switch {
		case left <= 0:
			return true
		case left > SpinWindow:
			time.Sleep(min(left-SpinWindow, maxNap))
		default:
			runtime.Gosched()
		}
	}
}
