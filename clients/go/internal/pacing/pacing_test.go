package pacing

import (
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

func TestNeverReturnsBeforeTheDueTime(t *testing.T) {
	var stop atomic.Bool
	for _, d := range []time.Duration{30 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond} {
		due := time.Now().Add(d)
		if !WaitUntil(due, &stop) || time.Now().Before(due) {
			t.Fatalf("returned before %v", d)
		}
	}
}

func TestStopEndsTheWait(t *testing.T) {
	var stop atomic.Bool
	stop.Store(true)
	if WaitUntil(time.Now().Add(time.Hour), &stop) {
		t.Fatal("waited despite stop")
	}
}
