// Package clock is the mock server's time: the [Clock] every part of the
// server reads ([Real] or a [Fake]), and the engine of the fake clock: the
// time, the timers waiting on it (a heap), the turn that lets one advance
// run at a time, and the catch-up that stops at each due time within a
// jump.
//
// It owns the fake time and nothing else. What the timers do, and what
// work a due time starts, it does not know: the delivery engine and the
// dashboards take part only as [Watcher]s, told of each time an advance
// reaches and waited for before it moves on. It imports nothing of the
// mock server but model, whose Clock it is; mockserver.FakeClock is the
// public face that holds a [Fake].
package clock

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Clock is a source of time (model.Clock, the server's public
// mockserver.Clock), and Timer a pending call made by its AfterFunc.
type (
	Clock = model.Clock
	Timer = model.Timer
)

// Absolute is a Clock that can arm a timer for a point in time (Fake
// can). With it, a timer is due exactly at its time even when another
// goroutine advances the clock while the timer is being armed.
type Absolute interface {
	AfterFuncAt(at time.Time, f func()) Timer
}

// Real is the wall clock (model.RealClock, mockserver.RealClock).
type Real = model.RealClock

// Fake is a clock that moves only when told to. It is safe for concurrent
// use: advances run one at a time, each from where the one before ended,
// so concurrent advances add up exactly, and each returns only once
// everything due within it has run.
//
// An advance catches up as a real clock would: it stops at each time a
// timer is due within the jump, in order, calls the functions due then
// (which read Now() as their due time), and waits for its watchers to
// settle (the work those functions started) before it moves on. The cost
// is that of the stops, not of the jump's length.
//
// The zero Fake reads the zero time; [Fake.Init] or [New] starts one
// elsewhere.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap // waiting timers, earliest due first
	// watchers are told of each time an advance reaches, and waited for at
	// each one. The slice is replaced, never changed in place, so an
	// advance can walk the one it read without the lock.
	watchers []Watcher
	// turn is held by the advance under way (Advance, Set and their
	// Context forms): a channel of one, so that a caller waiting for its
	// turn can give up when its context ends.
	turn chan struct{}
	// moved is set once an advance has moved the time (Resume).
	moved bool
}

// Watcher follows a Fake: the work its timers start (a server's delivery
// attempts) and those who show its time (a server's dashboards). An
// advance calls Moved each time the clock reaches a new time, before the
// timers due then fire; once they have fired, it calls Settle, which
// returns when the work they started has finished (a timer's function only
// starts it, since it must not block), and only then moves on. So the work
// of each due time sees Now() as that time, and what it schedules (a
// retry) counts from it.
type Watcher interface {
	Moved(now time.Time)
	Settle()
}

// New returns a Fake that reads start until advanced.
func New(start time.Time) *Fake {
	c := new(Fake)
	c.Init(start)
	return c
}

// Init sets a new clock's time to start. It is for a Fake held by value,
// before any other use.
func (c *Fake) Init(start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = start
	c.turn = make(chan struct{}, 1)
}

// Watch adds w to the clock's watchers.
func (c *Fake) Watch(w Watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(slices.Clip(c.watchers), w)
}

// Unwatch removes w from the clock's watchers (a server that closes).
func (c *Fake) Unwatch(w Watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = slices.DeleteFunc(slices.Clone(c.watchers), func(x Watcher) bool { return x == w })
}

// Now returns the clock's current time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to be called when the clock has been advanced
// by at least d. A d of zero or less is due at the next advance. f runs on
// the goroutine that advances the clock, and must neither block nor
// advance the clock itself.
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addTimerLocked(c.now.Add(d), f)
}

// AfterFuncAt arranges for f to be called when the clock reaches at (at
// the next advance if it already has). Unlike AfterFunc, the due time does
// not depend on when the call happens, so an advance by another goroutine
// between the caller's Now and this call cannot move it later.
func (c *Fake) AfterFuncAt(at time.Time, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addTimerLocked(at, f)
}

func (c *Fake) addTimerLocked(when time.Time, f func()) *fakeTimer {
	c.seq++
	t := &fakeTimer{clock: c, seq: c.seq, when: when, f: f}
	heap.Push(&c.timers, t)
	return t
}

// Advance moves the clock forward by d (not at all when d <= 0) and
// returns once everything due within the jump has run: it stops at each
// due time in order, with Now() reading that time, calls the functions due
// then on the caller's goroutine, and waits for the watchers to settle
// before it moves to the next. An Advance by another goroutine waits for
// this one to end, then starts from where it ended. It must not be called
// from a timer's function, nor from work an advance waits for: that would
// wait for itself.
func (c *Fake) Advance(d time.Duration) { _ = c.AdvanceContext(context.Background(), d) }

// AdvanceContext is [Fake.Advance] that gives up when ctx ends: while it
// waits for another advance to end, it returns at once, the clock unmoved;
// once under way, it stops at the next due time (never half-way through
// the work of one), with the clock left at the last time it reached. It
// then returns ctx's error.
func (c *Fake) AdvanceContext(ctx context.Context, d time.Duration) error {
	if err := c.TakeTurn(ctx); err != nil {
		return err
	}
	defer c.GiveTurn()
	return c.RunTo(ctx, c.Now().Add(max(d, 0)))
}

// Set moves the clock to t (never backwards) and runs everything due on
// the way as [Fake.Advance] does.
func (c *Fake) Set(t time.Time) { _ = c.SetContext(context.Background(), t) }

// SetContext is [Fake.Set] that gives up when ctx ends, as
// [Fake.AdvanceContext] does.
func (c *Fake) SetContext(ctx context.Context, t time.Time) error {
	if err := c.TakeTurn(ctx); err != nil {
		return err
	}
	defer c.GiveTurn()
	return c.RunTo(ctx, t)
}

// Resume sets the clock to t, where a clock of the same kind stood when
// the state it starts on was saved, so the time goes on from there across
// the restart. A clock nothing has used yet (never moved, no timer
// waiting, no watcher) is set to t exactly, backward too: it stands for
// the saved clock, which did not move while the server was stopped. Any
// other is only moved forward to t, as Set does (time never runs
// backward). It reports whether the clock was set exactly.
func (c *Fake) Resume(t time.Time) bool {
	_ = c.TakeTurn(context.Background())
	defer c.GiveTurn()
	c.mu.Lock()
	if !c.moved && len(c.timers) == 0 && len(c.watchers) == 0 {
		c.now = t
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	_ = c.RunTo(context.Background(), t)
	return false
}

// TakeTurn waits until no other advance is under way, or ctx ends, and
// returns ctx's error if it ends first. An advance is TakeTurn, RunTo and
// GiveTurn; a caller that must look at the clock between its steps (what
// is due next, once what is due now has run) runs them itself.
func (c *Fake) TakeTurn(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.turn == nil { // a zero Fake
		c.turn = make(chan struct{}, 1)
	}
	turn := c.turn
	c.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// GiveTurn ends the turn TakeTurn took, and lets the next advance go.
func (c *Fake) GiveTurn() { <-c.turn }

// RunTo moves the clock to target, stopping at every due time on the way:
// at each, the due timers fire and the watchers settle (RunDue). Between
// two stops it checks ctx, and returns its error, the clock left where it
// stopped, once it has ended. The caller holds the turn (TakeTurn).
func (c *Fake) RunTo(ctx context.Context, target time.Time) error {
	for {
		c.RunDue()
		c.mu.Lock()
		if !target.After(c.now) {
			c.mu.Unlock()
			return nil
		}
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return err
		}
		next := target
		if len(c.timers) > 0 && c.timers[0].when.Before(next) {
			next = c.timers[0].when
		}
		moved := next.After(c.now) // not when a timer was armed in the past meanwhile: it fires first
		if moved {
			c.now = next
			c.moved = true
		}
		watchers := c.watchers
		c.mu.Unlock()
		if moved {
			for _, w := range watchers {
				w.Moved(next)
			}
		}
	}
}

// RunDue calls, in order, the functions of the timers due at the clock's
// time (each taken off the heap before its call, so one can stop the
// next), then waits for the watchers to settle; and again while the work
// of those armed more timers that are due already (a retry due at once).
// The caller holds the turn (TakeTurn), so the time does not move
// meanwhile.
func (c *Fake) RunDue() {
	for {
		for {
			c.mu.Lock()
			if len(c.timers) == 0 || c.timers[0].when.After(c.now) {
				c.mu.Unlock()
				break
			}
			t := heap.Pop(&c.timers).(*fakeTimer)
			c.mu.Unlock()
			t.f()
		}
		c.mu.Lock()
		watchers := c.watchers
		c.mu.Unlock()
		for _, w := range watchers {
			w.Settle()
		}
		c.mu.Lock()
		more := len(c.timers) > 0 && !c.timers[0].when.After(c.now)
		c.mu.Unlock()
		if !more {
			return
		}
	}
}

// fakeTimer is a pending call made by [Fake.AfterFunc] or
// [Fake.AfterFuncAt].
type fakeTimer struct {
	clock *Fake
	seq   uint64 // order of arming, among equal due times
	when  time.Time
	f     func()
	index int // in clock.timers; -1 once fired or stopped
}

// Stop prevents the call from happening. It reports whether the call was
// stopped before it happened.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.clock.timers, t.index)
	return true
}

// timerHeap is a container/heap of waiting timers, earliest due first and,
// among equal due times, first armed first; each timer keeps its index so
// Stop removes it in O(log n).
type timerHeap []*fakeTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if c := h[i].when.Compare(h[j].when); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
