// Package pacing gives open-loop orders their intended send times (order i at
// T0 + i/R) and releases them finer than 50 µs. Go's timers, like tokio's, wake up to
// ~1 ms late on an idle process (the netpoller waits in whole milliseconds; measured on
// the dev box: a 50 µs time.Sleep overshoots by ~1 ms at the median), and spinning in
// every worker would burn the cores the server needs. So one pacer goroutine, locked to
// its own OS thread with the timer slack cut to 1 ns, sleeps with nanosleep(2) until
// SpinWindow before each due time, spins the rest, and sends the order number on a
// channel that any free worker reads. An order that waits in the channel is late, and
// its latency still counts from its due time (coordinated omission corrected).
package pacing

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// SpinWindow covers nanosleep's wake-up latency with a 1 ns timer slack on a busy machine.
const SpinWindow = 60 * time.Microsecond

// maxNap bounds one sleep so SIGINT is noticed promptly even at very low rates.
const maxNap = 50 * time.Millisecond

// backlog is how many due orders may wait for a free worker before the pacer blocks.
const backlog = 4096

// prSetTimerSlack is PR_SET_TIMERSLACK of prctl(2).
const prSetTimerSlack = 29

// Schedule holds the intended send times of an open-loop run.
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

// Pace releases orders start..end-1 on the returned channel at their due times, none
// due at or after deadline (zero = no deadline), and closes it when done or when stop
// is set. done is closed once the pacer has returned.
func Pace(s Schedule, start, end uint64, deadline time.Time, stop *atomic.Bool) (due <-chan uint64, done <-chan struct{}) {
	out := make(chan uint64, backlog)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		runtime.LockOSThread() // the timer slack and the blocking nanosleep stay on this thread
		defer runtime.UnlockOSThread()
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0) // best effort
		for k := start; k < end; k++ {
			at := s.Due(k)
			if (!deadline.IsZero() && !at.Before(deadline)) || !SleepUntil(at, stop) {
				return
			}
			out <- k
		}
	}()
	return out, finished
}

// SleepUntil blocks the calling thread until due: nanosleep, then spin; false if stop
// was set meanwhile.
func SleepUntil(due time.Time, stop *atomic.Bool) bool {
	for {
		if stop.Load() {
			return false
		}
		left := time.Until(due)
		switch {
		case left <= 0:
			return true
		case left > SpinWindow:
			ts := syscall.NsecToTimespec(int64(min(left-SpinWindow, maxNap)))
			_ = syscall.Nanosleep(&ts, nil) // EINTR just loops
		}
	}
}
