package clock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// t0 is where the tests' clocks start.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

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
			c := New(t0)
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
				if !c.Now().Equal(t0.Add(total)) {
					t.Errorf("after advance %d: now %v, want %v", i, c.Now(), t0.Add(total))
				}
			}
		})
	}
}

func TestFakeClockStop(t *testing.T) {
	t.Parallel()
	c := New(t0)
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
	c := New(t0)
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
	c := New(t0)
	fired := false
	c.AfterFunc(time.Hour, func() { fired = true })
	c.Set(t0.Add(-time.Hour))
	if !c.Now().Equal(t0) || fired {
		t.Errorf("Set to the past: now %v, fired %v; want %v, false", c.Now(), fired, t0)
	}
	c.Set(t0.Add(2 * time.Hour))
	if !c.Now().Equal(t0.Add(2*time.Hour)) || !fired {
		t.Errorf("Set to the future: now %v, fired %v", c.Now(), fired)
	}
}

// TestFakeClockConcurrent arms, stops and advances from several goroutines;
// run with -race.
func TestFakeClockConcurrent(t *testing.T) {
	t.Parallel()
	c := New(t0)
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

// clockLog records what a FakeClock tells its watchers and what its timers
// see, as lines of "+offset what".
type clockLog struct {
	c     *Fake
	mu    sync.Mutex
	lines []string
	// onSettle, when set, runs in each settle: the work a watcher waits for.
	onSettle func()
}

func (l *clockLog) add(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("+%v %s", l.c.Now().Sub(t0), what))
}

func (l *clockLog) Moved(now time.Time) {
	if !now.Equal(l.c.Now()) {
		panic("moved is told a time the clock does not read")
	}
	l.add("moved")
}

func (l *clockLog) Settle() {
	if l.onSettle != nil {
		l.onSettle()
	}
	l.add("settled")
}

func (l *clockLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// TestFakeClockCatchesUp: an advance stops at each due time inside the
// jump, in order (those that fired functions arm within the jump too),
// and nowhere else, however long the jump: each function reads its own
// due time, and the watchers are told each stop, then waited for once its
// timers have fired.
func TestFakeClockCatchesUp(t *testing.T) {
	t.Parallel()
	c := New(t0)
	l := &clockLog{c: c}
	c.Watch(l)
	timer := func(name string) func() { return func() { l.add(name) } }
	c.AfterFunc(5*time.Minute, timer("b"))
	c.AfterFunc(time.Minute, func() {
		l.add("a")
		// Armed inside the jump, due inside it too.
		c.AfterFunc(30*time.Second, timer("a+30s"))
		c.AfterFunc(0, timer("a+0"))
	})
	c.AfterFunc(5*time.Minute, timer("b'"))
	c.AfterFunc(50*365*24*time.Hour, timer("in 50 years"))
	c.AfterFunc(0, timer("due now"))

	c.Advance(100 * 365 * 24 * time.Hour)
	want := []string{
		"+0s due now", "+0s settled",
		"+1m0s moved", "+1m0s a", "+1m0s a+0", "+1m0s settled",
		"+1m30s moved", "+1m30s a+30s", "+1m30s settled",
		"+5m0s moved", "+5m0s b", "+5m0s b'", "+5m0s settled",
		"+438000h0m0s moved", "+438000h0m0s in 50 years", "+438000h0m0s settled",
		"+876000h0m0s moved", "+876000h0m0s settled",
	}
	if diff := cmp.Diff(want, l.take()); diff != "" {
		t.Errorf("advance of 100 years (-want +got):\n%s", diff)
	}

	// A clock that does not move tells no move, and still settles.
	c.Advance(0)
	c.Set(t0)
	if diff := cmp.Diff([]string{"+876000h0m0s settled", "+876000h0m0s settled"}, l.take()); diff != "" {
		t.Errorf("advances that do not move (-want +got):\n%s", diff)
	}
	c.Unwatch(l)
	c.Advance(time.Second)
	if got := l.take(); len(got) != 0 {
		t.Errorf("an unwatched watcher was told %q", got)
	}
}

// TestFakeClockWaitsForTheWork: the work a due time starts on other
// goroutines, and the timers it arms, run before the clock moves on, as
// the delivery engine's attempts and retries do: a chain of retries 1, 5
// and 30 minutes apart runs whole within one advance, each at its time.
func TestFakeClockWaitsForTheWork(t *testing.T) {
	t.Parallel()
	c := New(t0)
	l := &clockLog{c: c}
	var work sync.WaitGroup
	l.onSettle = work.Wait
	c.Watch(l)
	delays := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute}
	var attempt func(n int) func()
	attempt = func(n int) func() {
		return func() {
			work.Go(func() {
				l.add(fmt.Sprint("attempt ", n))
				if n <= len(delays) {
					c.AfterFunc(delays[n-1], attempt(n+1))
				}
			})
		}
	}
	c.AfterFunc(0, attempt(1))
	c.Advance(time.Hour)
	want := []string{
		"+0s attempt 1", "+0s settled",
		"+1m0s moved", "+1m0s attempt 2", "+1m0s settled",
		"+6m0s moved", "+6m0s attempt 3", "+6m0s settled",
		"+36m0s moved", "+36m0s attempt 4", "+36m0s settled",
		"+1h0m0s moved", "+1h0m0s settled",
	}
	if diff := cmp.Diff(want, l.take()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFakeClockStopInsideTheSameTime: a function can stop another timer
// due at the same time; the stopped one does not run.
func TestFakeClockStopInsideTheSameTime(t *testing.T) {
	t.Parallel()
	c := New(t0)
	var fired []string
	var second Timer
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "first")
		if !second.Stop() {
			t.Error("Stop of the second timer, not yet fired, reported false")
		}
	})
	second = c.AfterFunc(time.Second, func() { fired = append(fired, "second") })
	c.Advance(time.Second)
	if diff := cmp.Diff([]string{"first"}, fired); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFakeClockConcurrentAdvancesAddUp: advances from several goroutines
// at once add up exactly, and when each returns the timer it made due has
// fired, whichever advance fired it.
func TestFakeClockConcurrentAdvancesAddUp(t *testing.T) {
	t.Parallel()
	const goroutines, rounds = 4, 500
	c := New(t0)
	var fired atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				var done atomic.Bool
				c.AfterFunc(time.Second, func() { done.Store(true); fired.Add(1) })
				if g%2 == 0 {
					c.Advance(time.Second)
				} else {
					c.Set(c.Now().Add(time.Second)) // not an advance of its own: it may be passed already
					c.Advance(time.Second)
				}
				if !done.Load() {
					t.Errorf("goroutine %d, round %d: the advance returned before the timer it made due fired", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
	// Advances add up: goroutines*rounds seconds, and at least as much
	// again from the Sets (each moves a second at most).
	got := c.Now().Sub(t0)
	if minimum, maximum := goroutines*rounds*time.Second, goroutines*rounds*time.Second+goroutines/2*rounds*time.Second; got < minimum || got > maximum {
		t.Errorf("the clock moved %v, want between %v and %v", got, minimum, maximum)
	}
	if n := fired.Load(); n != goroutines*rounds {
		t.Errorf("%d timers fired, want %d", n, goroutines*rounds)
	}

	// Advances alone add up exactly.
	c2 := New(t0)
	var wg2 sync.WaitGroup
	for range 2 {
		wg2.Go(func() {
			for range 1000 {
				c2.Advance(time.Second)
			}
		})
	}
	wg2.Wait()
	if got, want := c2.Now().Sub(t0), 2000*time.Second; got != want {
		t.Errorf("two goroutines advancing 1s a thousand times each moved the clock %v, want %v", got, want)
	}
}

// TestFakeClockAdvanceContext: an advance whose context ends stops at a
// due time, having run everything due then, never half-way through one;
// one that waits for its turn gives up at once, the clock unmoved.
func TestFakeClockAdvanceContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cancelAt  string // the timer whose function cancels; "" cancels before the call
		wantFired []string
		wantNow   time.Duration
	}{
		{"canceled before", "", nil, 0},
		{"canceled at the first due time", "a", []string{"a", "a'"}, time.Minute},
		{"canceled by the second of the same time", "a'", []string{"a", "a'"}, time.Minute},
		{"canceled at the last due time", "c", []string{"a", "a'", "b", "c"}, 3 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(t0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var fired []string
			for _, tm := range []struct {
				name string
				at   time.Duration
			}{{"a", time.Minute}, {"a'", time.Minute}, {"b", 2 * time.Minute}, {"c", 3 * time.Minute}} {
				c.AfterFunc(tm.at, func() {
					fired = append(fired, tm.name)
					if tm.name == tt.cancelAt {
						cancel()
					}
				})
			}
			if tt.cancelAt == "" {
				cancel()
			}
			err := c.AdvanceContext(ctx, time.Hour)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("AdvanceContext: %v, want context.Canceled", err)
			}
			if diff := cmp.Diff(tt.wantFired, fired); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			if got := c.Now().Sub(t0); got != tt.wantNow {
				t.Errorf("the clock stopped at +%v, want +%v", got, tt.wantNow)
			}
			// The rest runs at the next advance.
			if err := c.SetContext(context.Background(), t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if len(fired) != 4 {
				t.Errorf("after a later advance, %d of 4 timers fired: %v", len(fired), fired)
			}
		})
	}

	t.Run("waiting for its turn", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			c := New(t0)
			l := &clockLog{c: c}
			release := make(chan struct{})
			l.onSettle = func() { <-release }
			c.Watch(l)
			first := make(chan error)
			go func() { first <- c.AdvanceContext(context.Background(), time.Minute) }()
			synctest.Wait() // the first advance waits in its first settle
			ctx, cancel := context.WithCancel(context.Background())
			second := make(chan error)
			go func() { second <- c.AdvanceContext(ctx, time.Hour) }()
			synctest.Wait() // the second waits for its turn
			cancel()
			if err := <-second; !errors.Is(err, context.Canceled) {
				t.Errorf("the waiting advance returned %v, want context.Canceled", err)
			}
			close(release)
			if err := <-first; err != nil {
				t.Errorf("the first advance: %v", err)
			}
			if got := c.Now().Sub(t0); got != time.Minute {
				t.Errorf("the clock moved %v, want the first advance's minute alone", got)
			}
		})
	})
}

// TestResume: a clock nothing used yet resumes at the time given, backward
// too; one that moved, has a timer waiting or a watcher only goes forward
// (running what falls due on the way).
func TestResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		use       func(c *Fake) *bool // returns whether a timer fired, if it armed one
		to        time.Time
		want      time.Time
		wantExact bool
	}{
		{"new, backward", func(*Fake) *bool { return nil }, t0.Add(-time.Hour), t0.Add(-time.Hour), true},
		{"new, forward", func(*Fake) *bool { return nil }, t0.Add(time.Hour), t0.Add(time.Hour), true},
		{"moved, backward", func(c *Fake) *bool { c.Advance(time.Second); return nil }, t0.Add(-time.Hour), t0.Add(time.Second), false},
		{"moved, forward", func(c *Fake) *bool { c.Advance(time.Second); return nil }, t0.Add(time.Hour), t0.Add(time.Hour), false},
		{"a timer waiting, forward past it", func(c *Fake) *bool {
			fired := new(bool)
			c.AfterFunc(time.Minute, func() { *fired = true })
			return fired
		}, t0.Add(time.Hour), t0.Add(time.Hour), false},
		{"a timer waiting, backward", func(c *Fake) *bool {
			c.AfterFunc(time.Minute, func() {})
			return nil
		}, t0.Add(-time.Hour), t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(t0)
			fired := tt.use(c)
			if exact := c.Resume(tt.to); exact != tt.wantExact || !c.Now().Equal(tt.want) {
				t.Errorf("Resume(%s): exact %t, now %s; want %t, %s", tt.to, exact, c.Now(), tt.wantExact, tt.want)
			}
			if fired != nil && !*fired {
				t.Error("the timer due on the way did not fire")
			}
		})
	}
}
