// Package pacing gives open-loop orders their intended send times (order i at
// T0 + i/R) and releases them finer than 50 µs. Go's timers, like tokio's, wake up to
// ~1 ms late on an idle process (the netpoller waits in whole milliseconds; measured on
// the dev box: a 50 µs time.Sleep overshoots by ~1 ms at the median), and spinning in
// every worker would burn the cores the server needs. So one pacer goroutine waits until
// SpinWindow before each due time, spins the rest, and sends the order number on a
// channel that any free worker reads. An order that waits in the channel is late, and its
// latency still counts from its due time (coordinated omission corrected).
//
// How the pacer waits depends on GOMAXPROCS (runner.SetProcs gives a modest rate one P):
//
//   - One P: the pacer waits on a timerfd through the netpoller (no thread sits in a
//     blocking syscall; a timerfd has no timer slack), spins yielding to the workers,
//     and yields after each send, so the worker it woke, next in this P's run queue,
//     runs at once on this thread: ~1 µs from due time to send.
//   - More Ps: the pacer runs on a thread of its own (locked, timer slack cut to 1 ns),
//     sleeps with nanosleep(2) and spins flat out, so at high rates it never queues
//     behind the workers; the other Ps read the answers. A woken worker is taken over by
//     another P's thread, which the runtime first wakes up (a futex wake) and which backs
//     off ~3 µs (a nanosleep) before stealing it: 37–64 µs late on 2026-11-23's KVM host,
//     which is slow to deliver the wake-up, ~6 µs the day before.
package pacing

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// SpinWindow covers the wake-up latency of the pacer's sleep on a busy machine.
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
func Pace(s Schedule, start, end uint64, deadline time.Time, stop *atomic.Bool) (due <-chan uint64, done <-chan struct{}, err error) {
	var timer *Timer
	if runtime.GOMAXPROCS(0) == 1 {
		if timer, err = NewTimer(); err != nil {
			return nil, nil, err
		}
	}
	out := make(chan uint64, backlog)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		wait := func(at time.Time) bool { return SleepUntil(at, stop) }
		if timer != nil {
			defer timer.Close()
			wait = func(at time.Time) bool { return timer.SleepUntil(at, stop) }
		} else {
			runtime.LockOSThread() // the timer slack and the blocking nanosleep stay on this thread
			defer runtime.UnlockOSThread()
			_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0) // best effort
		}
		for k := start; k < end; k++ {
			at := s.Due(k)
			if (!deadline.IsZero() && !at.Before(deadline)) || !wait(at) {
				return
			}
			out <- k
			if timer != nil {
				runtime.Gosched() // the worker just woken runs now, on this thread
			}
		}
	}()
	return out, finished, nil
}

// SleepUntil blocks the calling thread until due: nanosleep, then spin; false if stop
// was set meanwhile.
func SleepUntil(due time.Time, stop *atomic.Bool) bool {
	return waitUntil(due, stop, nanosleep, func() {})
}

// waitUntil naps until SpinWindow before due, then calls turn until due; it returns at
// due or just after it (never before), false if stop was set meanwhile.
func waitUntil(due time.Time, stop *atomic.Bool, nap func(time.Duration), turn func()) bool {
	for {
		if stop.Load() {
			return false
		}
		left := time.Until(due)
		switch {
		case left <= 0:
			return true
		case left <= SpinWindow:
			turn()
		default:
			nap(min(left-SpinWindow, maxNap))
		}
	}
}

func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller loops
}

// Timer is the single-P pacer's wait: a timerfd until SpinWindow before the due time,
// then a spin that yields to the other goroutines on every turn.
type Timer struct {
	file *os.File // the timerfd, non-blocking, so reads park in the netpoller
	fd   uintptr
	buf  [8]byte
}

// NewTimer makes the timerfd.
func NewTimer() (*Timer, error) {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, fmt.Errorf("pacing timer: timerfd_create: %w", errno)
	}
	return &Timer{file: os.NewFile(fd, "pacing-timerfd"), fd: fd}, nil
}

// Close releases the timerfd.
func (t *Timer) Close() { _ = t.file.Close() }

// SleepUntil returns at due or just after it (never before); false if stop was set
// meanwhile.
func (t *Timer) SleepUntil(due time.Time, stop *atomic.Bool) bool {
	return waitUntil(due, stop, t.nap, runtime.Gosched)
}

const (
	clockMonotonic = 1       // CLOCK_MONOTONIC
	tfdNonblock    = 0x800   // TFD_NONBLOCK (O_NONBLOCK)
	tfdCloexec     = 0x80000 // TFD_CLOEXEC (O_CLOEXEC)
)

// itimerspec is struct itimerspec of timerfd_settime(2).
type itimerspec struct {
	interval, value syscall.Timespec
}

// nap arms the timerfd d (> 0) from now and parks this goroutine until it fires. Should
// the timerfd fail (it should not), Go's sleep: coarse, but never early, and the spin
// still ends on time.
func (t *Timer) nap(d time.Duration) {
	spec := itimerspec{value: syscall.NsecToTimespec(int64(d))}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, t.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 {
		time.Sleep(d)
		return
	}
	if _, err := t.file.Read(t.buf[:]); err != nil {
		time.Sleep(d)
	}
}
