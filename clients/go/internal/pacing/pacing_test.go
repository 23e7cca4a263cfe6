package pacing

import (
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

func TestNeverReturnsBeforeTheDueTime(t *testing.T) {
	var stop atomic.Bool
	for _, d := range []time.Duration{30 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond} {
		due := time.Now().Add(d)
		if !SleepUntil(due, &stop) || time.Now().Before(due) {
			t.Fatalf("returned before %v", d)
		}
	}
}

func TestStopEndsTheWait(t *testing.T) {
	var stop atomic.Bool
	stop.Store(true)
	if SleepUntil(time.Now().Add(time.Hour), &stop) {
		t.Fatal("waited despite stop")
	}
}

func TestThePacerReleasesEachOrderOnceInOrderAndHonoursTheDeadline(t *testing.T) {
	var stop atomic.Bool
	s := NewSchedule(time.Now(), 10000)
	due, done := Pace(s, 5, 25, s.Due(20), &stop)
	var got []uint64
	for k := range due {
		if time.Now().Before(s.Due(k)) {
			t.Fatalf("order %d released early", k)
		}
		got = append(got, k)
	}
	<-done
	var want []uint64
	for k := uint64(5); k < 20; k++ {
		want = append(want, k)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v", got)
	}
}
