package pacing

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestDueTimesAreIOverRate(t *testing.T) {
	t0 := time.Now()
	s := NewSchedule(t0, 5000)
	for i, want := range map[uint64]time.Duration{0: 0, 1: 200 * time.Microsecond, 5000: time.Second} {
		if got := s.Due(i).Sub(t0); got != want {
			t.Errorf("order %d: %v, want %v", i, got, want)
		}
	}
	third := NewSchedule(t0, 3)
	if got := third.Due(1).Sub(t0); got != 333333333*time.Nanosecond {
		t.Errorf("1/3 s: %v", got)
	}
	if got := third.Due(3).Sub(t0); got != time.Second {
		t.Errorf("3/3 s: %v", got)
	}
}

func newTimer(t *testing.T) *Timer {
	t.Helper()
	timer, err := NewTimer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(timer.Close)
	return timer
}

// Both waits: nanosleep on the pacer's own thread, and the single-P timerfd.
func waits(t *testing.T) map[string]func(time.Time, *atomic.Bool) bool {
	return map[string]func(time.Time, *atomic.Bool) bool{"nanosleep": SleepUntil, "timerfd": newTimer(t).SleepUntil}
}

func TestNeverReturnsBeforeTheDueTime(t *testing.T) {
	var stop atomic.Bool
	for name, wait := range waits(t) {
		for _, d := range []time.Duration{30 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond, 70 * time.Millisecond} {
			due := time.Now().Add(d)
			if !wait(due, &stop) || time.Now().Before(due) {
				t.Fatalf("%s: returned before %v", name, d)
			}
		}
	}
}

func TestStopEndsTheWait(t *testing.T) {
	var stop atomic.Bool
	stop.Store(true)
	for name, wait := range waits(t) {
		if wait(time.Now().Add(time.Hour), &stop) {
			t.Fatalf("%s: waited despite stop", name)
		}
	}
}

// A stop set while the pacer naps ends the wait within one nap (maxNap).
func TestStopDuringANapEndsTheWait(t *testing.T) {
	for name, wait := range waits(t) {
		var stop atomic.Bool
		go func() {
			time.Sleep(10 * time.Millisecond)
			stop.Store(true)
		}()
		if wait(time.Now().Add(time.Hour), &stop) {
			t.Fatalf("%s: returned true despite stop", name)
		}
	}
}

// With one P (timerfd pacer) and with two (pacer on its own thread).
func TestThePacerReleasesEachOrderOnceInOrderAndHonoursTheDeadline(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		var stop atomic.Bool
		s := NewSchedule(time.Now(), 10000)
		due, done, err := Pace(s, 5, 25, s.Due(20), &stop)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for k := range due {
			if time.Now().Before(s.Due(k)) {
				t.Fatalf("GOMAXPROCS %d: order %d released early", procs, k)
			}
			got = append(got, k)
		}
		<-done
		var want []uint64
		for k := uint64(5); k < 20; k++ {
			want = append(want, k)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("GOMAXPROCS %d: got %v", procs, got)
		}
	}
}
