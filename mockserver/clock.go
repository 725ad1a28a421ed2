package mockserver

import (
	"sort"
	"sync"
	"time"
)

// Clock is the mock server's source of time. Every time the server uses
// (timestamps, rate-limit buckets, delivery schedules) comes from its Clock,
// so a test can drive the whole server with a [FakeClock].
type Clock interface {
	// Now returns the current time on this clock.
	Now() time.Time
	// AfterFunc arranges for f to be called once d has elapsed on this
	// clock. f must not block for long.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call made by [Clock.AfterFunc].
type Timer interface {
	// Stop prevents the call from happening. It reports whether the call
	// was stopped before it happened.
	Stop() bool
}

// RealClock is the wall clock. It is the default.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a Clock that moves only when told to, for tests. It is safe
// for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers map[uint64]*fakeTimer
	// watchers are told the new time after each move (the servers on
	// this clock publish it to their dashboards).
	watchers []func(time.Time)
}

// watch calls f with the new time after every Advance or Set that moves
// the clock, once its due timers have fired.
func (c *FakeClock) watch(f func(time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, f)
}

// NewFakeClock returns a FakeClock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: make(map[uint64]*fakeTimer)}
}

// Now returns the fake clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to be called when the clock has been advanced by
// at least d. A d of zero or less is due at the next Advance (or Set) call.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addTimerLocked(c.now.Add(d), f)
}

// afterFuncAt arranges for f to be called when the clock reaches at (at the
// next Advance or Set if it already has). Unlike AfterFunc, the due time
// does not depend on when the call happens, so an Advance by another
// goroutine between the caller's Now and this call cannot move it later.
// The delivery engine uses it when its clock has it (see absoluteClock).
func (c *FakeClock) afterFuncAt(at time.Time, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addTimerLocked(at, f)
}

func (c *FakeClock) addTimerLocked(when time.Time, f func()) *fakeTimer {
	c.seq++
	t := &fakeTimer{clock: c, id: c.seq, when: when, f: f}
	c.timers[t.id] = t
	return t
}

// Advance moves the clock forward by d and, before returning, calls in
// order of their due time every function whose time has come. Those calls
// run on the caller's goroutine, so when Advance returns every due timer has
// fired. They see Now() as the new time, not their due time: a test that
// needs each step to happen at its own time advances step by step.
func (c *FakeClock) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	c.Set(target)
}

// Set moves the clock to t (never backwards) and fires the due timers as
// Advance does.
func (c *FakeClock) Set(t time.Time) {
	moved := false
	defer func() {
		if moved {
			c.mu.Lock()
			now, watchers := c.now, c.watchers
			c.mu.Unlock()
			for _, f := range watchers {
				f(now)
			}
		}
	}()
	for {
		c.mu.Lock()
		if t.After(c.now) {
			c.now = t
			moved = true
		}
		due := make([]*fakeTimer, 0)
		for _, tm := range c.timers {
			if !tm.when.After(c.now) {
				due = append(due, tm)
			}
		}
		for _, tm := range due {
			delete(c.timers, tm.id)
		}
		c.mu.Unlock()
		if len(due) == 0 {
			return
		}
		sort.Slice(due, func(i, j int) bool {
			if due[i].when.Equal(due[j].when) {
				return due[i].id < due[j].id
			}
			return due[i].when.Before(due[j].when)
		})
		for _, tm := range due {
			tm.f()
		}
		// A fired function may have set a new timer that is already due;
		// loop until none is.
	}
}

type fakeTimer struct {
	clock *FakeClock
	id    uint64
	when  time.Time
	f     func()
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if _, ok := t.clock.timers[t.id]; !ok {
		return false
	}
	delete(t.clock.timers, t.id)
	return true
}
