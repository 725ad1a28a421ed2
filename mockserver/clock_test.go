package mockserver

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFakeClockAdvance(t *testing.T) {
	t.Parallel()
	type arm struct {
		name string
		d    time.Duration
	}
	tests := []struct {
		name    string
		arms    []arm
		advance []time.Duration
		want    [][]string // fired by each Advance, in order
	}{
		{
			name:    "in order of due time",
			arms:    []arm{{"c", 3 * time.Minute}, {"a", time.Minute}, {"b", 2 * time.Minute}, {"e", 5 * time.Minute}},
			advance: []time.Duration{3 * time.Minute, time.Minute, time.Minute},
			want:    [][]string{{"a", "b", "c"}, nil, {"e"}},
		},
		{
			name:    "same due time in order of arming",
			arms:    []arm{{"x", time.Second}, {"y", time.Second}, {"z", time.Second}},
			advance: []time.Duration{time.Second},
			want:    [][]string{{"x", "y", "z"}},
		},
		{
			name:    "not a nanosecond early",
			arms:    []arm{{"a", time.Hour}},
			advance: []time.Duration{time.Hour - 1, 1},
			want:    [][]string{nil, {"a"}},
		},
		{
			name:    "zero and negative delays fire at the next advance",
			arms:    []arm{{"zero", 0}, {"neg", -time.Second}},
			advance: []time.Duration{0},
			want:    [][]string{{"neg", "zero"}},
		},
		{
			name:    "negative advance does not move the clock",
			arms:    []arm{{"a", time.Second}},
			advance: []time.Duration{-time.Hour, time.Second},
			want:    [][]string{nil, {"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewFakeClock(dlvT0)
			var fired []string
			for _, a := range tt.arms {
				c.AfterFunc(a.d, func() { fired = append(fired, a.name) })
			}
			var total time.Duration
			for i, d := range tt.advance {
				fired = nil
				c.Advance(d)
				total += max(d, 0)
				if diff := cmp.Diff(tt.want[i], fired); diff != "" {
					t.Errorf("advance %d (-want +got):\n%s", i, diff)
				}
				if !c.Now().Equal(dlvT0.Add(total)) {
					t.Errorf("after advance %d: now %v, want %v", i, c.Now(), dlvT0.Add(total))
				}
			}
		})
	}
}

func TestFakeClockStop(t *testing.T) {
	t.Parallel()
	c := NewFakeClock(dlvT0)
	fired := 0
	stopped := c.AfterFunc(time.Minute, func() { fired++ })
	kept := c.AfterFunc(time.Minute, func() { fired++ })
	if !stopped.Stop() {
		t.Error("Stop of a waiting timer reported false")
	}
	if stopped.Stop() {
		t.Error("second Stop reported true")
	}
	c.Advance(time.Minute)
	if fired != 1 {
		t.Errorf("%d calls, want 1", fired)
	}
	if kept.Stop() {
		t.Error("Stop of a fired timer reported true")
	}
}

// TestFakeClockChained checks that a function armed by a firing one runs in
// the same Advance if its time has come, and not if it has not.
func TestFakeClockChained(t *testing.T) {
	t.Parallel()
	c := NewFakeClock(dlvT0)
	var fired []string
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "first")
		c.AfterFunc(0, func() { fired = append(fired, "due at once") })
		c.AfterFunc(time.Second, func() { fired = append(fired, "a second later") })
	})
	c.Advance(time.Second)
	if diff := cmp.Diff([]string{"first", "due at once"}, fired); diff != "" {
		t.Errorf("first advance (-want +got):\n%s", diff)
	}
	c.Advance(time.Second)
	if diff := cmp.Diff([]string{"first", "due at once", "a second later"}, fired); diff != "" {
		t.Errorf("second advance (-want +got):\n%s", diff)
	}
}

func TestFakeClockSetNeverGoesBack(t *testing.T) {
	t.Parallel()
	c := NewFakeClock(dlvT0)
	fired := false
	c.AfterFunc(time.Hour, func() { fired = true })
	c.Set(dlvT0.Add(-time.Hour))
	if !c.Now().Equal(dlvT0) || fired {
		t.Errorf("Set to the past: now %v, fired %v; want %v, false", c.Now(), fired, dlvT0)
	}
	c.Set(dlvT0.Add(2 * time.Hour))
	if !c.Now().Equal(dlvT0.Add(2*time.Hour)) || !fired {
		t.Errorf("Set to the future: now %v, fired %v", c.Now(), fired)
	}
}

// TestFakeClockConcurrent arms, stops and advances from several goroutines;
// run with -race.
func TestFakeClockConcurrent(t *testing.T) {
	t.Parallel()
	c := NewFakeClock(dlvT0)
	var mu sync.Mutex
	fired := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 200 {
				d := time.Duration(i%5) * time.Millisecond
				if i%10 == 0 {
					d = time.Hour // stopped long before it is due
				}
				tm := c.AfterFunc(d, func() {
					mu.Lock()
					fired++
					mu.Unlock()
				})
				if i%10 == 0 && !tm.Stop() {
					t.Error("Stop of a waiting timer reported false")
				}
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	c.Advance(time.Second)
	if fired != 4*180 {
		t.Errorf("%d calls, want %d (800 armed, 80 of them stopped)", fired, 4*180)
	}
}

func TestRealClock(t *testing.T) {
	t.Parallel()
	var c Clock = RealClock{}
	before := time.Now()
	if now := c.Now(); now.Before(before) {
		t.Errorf("Now %v is before %v", now, before)
	}
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	never := c.AfterFunc(time.Hour, func() { t.Error("a stopped timer fired") })
	if !never.Stop() {
		t.Error("Stop of a waiting timer reported false")
	}
}
