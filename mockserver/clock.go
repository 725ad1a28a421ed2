package mockserver

import (
	"container/heap"
	"context"
	"slices"
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
// for concurrent use: advances run one at a time, each from where the one
// before ended, so concurrent advances add up exactly, and each returns
// only once everything due within it has run.
//
// An advance catches up as a real clock would: it stops at each time a
// timer is due within the jump, in order, calls the functions due then
// (which read Now() as their due time), and waits for the work they
// started before it moves on. The servers on the clock ([WithClock]) take
// part: the delivery attempts due at each stop run on the server's workers
// and finish, and the retries they schedule count from that time, so one
// advance of 27 hours takes a delivery to a receiver that always fails
// through all six attempts of the default schedule, each at its own time.
// The cost is that of the stops, not of the jump's length.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap // waiting timers, earliest due first
	// watchers are the servers on this clock: told of each time an
	// advance reaches, and waited for at each one (clockWatcher). The
	// slice is replaced, never changed in place, so an advance can walk
	// the one it read without the lock.
	watchers []clockWatcher
	// turn is held by the advance under way (Advance, Set and their
	// Context forms): a channel of one, so that a caller waiting for its
	// turn can give up when its context ends.
	turn chan struct{}
}

// clockWatcher follows a FakeClock: a server whose delivery engine has
// timers on it and whose dashboards show its time. An advance calls moved
// each time the clock reaches a new time, before the timers due then fire;
// once they have fired, it calls settle, which returns when the work they
// started has finished (a timer's function only starts it, since it must
// not block: the delivery attempts run on the engine's workers), and only
// then moves on. So the work of each due time sees Now() as that time, and
// what it schedules (a retry) counts from it.
type clockWatcher interface {
	moved(now time.Time)
	settle()
}

// watchedClock is a clock that tells its watchers (FakeClock, and a
// test's clock that embeds one).
type watchedClock interface {
	watch(w clockWatcher)
	unwatch(w clockWatcher)
}

// watch adds w to the clock's watchers.
func (c *FakeClock) watch(w clockWatcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(slices.Clip(c.watchers), w)
}

// unwatch removes w from the clock's watchers (a server that closes).
func (c *FakeClock) unwatch(w clockWatcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = slices.DeleteFunc(slices.Clone(c.watchers), func(x clockWatcher) bool { return x == w })
}

// NewFakeClock returns a FakeClock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, turn: make(chan struct{}, 1)}
}

// Now returns the fake clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to be called when the clock has been advanced by
// at least d. A d of zero or less is due at the next Advance (or Set) call.
// f runs on the goroutine that advances the clock, and must neither block
// nor advance the clock itself.
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
	t := &fakeTimer{clock: c, seq: c.seq, when: when, f: f}
	heap.Push(&c.timers, t)
	return t
}

// Advance moves the clock forward by d (not at all when d <= 0) and
// returns once everything due within the jump has run: it stops at each
// due time in order, with Now() reading that time, calls the functions due
// then on the caller's goroutine, and waits for the work they started
// (the delivery attempts of the servers on the clock, and the retries
// those schedule in turn) before it moves to the next. An Advance by
// another goroutine waits for this one to end, then starts from where it
// ended. It must not be called from a timer's function, nor from work an
// advance waits for (a webhook receiver of a server on the clock): that
// would wait for itself.
func (c *FakeClock) Advance(d time.Duration) { _ = c.AdvanceContext(context.Background(), d) }

// AdvanceContext is [FakeClock.Advance] that gives up when ctx ends: while
// it waits for another advance to end, it returns at once, the clock
// unmoved; once under way, it stops at the next due time (never half-way
// through the work of one), with the clock left at the last time it
// reached. It then returns ctx's error.
func (c *FakeClock) AdvanceContext(ctx context.Context, d time.Duration) error {
	if err := c.takeTurn(ctx); err != nil {
		return err
	}
	defer c.giveTurn()
	return c.runTo(ctx, c.Now().Add(max(d, 0)))
}

// Set moves the clock to t (never backwards) and runs everything due on
// the way as [FakeClock.Advance] does.
func (c *FakeClock) Set(t time.Time) { _ = c.SetContext(context.Background(), t) }

// SetContext is [FakeClock.Set] that gives up when ctx ends, as
// [FakeClock.AdvanceContext] does.
func (c *FakeClock) SetContext(ctx context.Context, t time.Time) error {
	if err := c.takeTurn(ctx); err != nil {
		return err
	}
	defer c.giveTurn()
	return c.runTo(ctx, t)
}

// takeTurn waits until no other advance is under way, or ctx ends.
func (c *FakeClock) takeTurn(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.turn == nil { // a FakeClock{} made without NewFakeClock
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

// giveTurn lets the next advance go.
func (c *FakeClock) giveTurn() { <-c.turn }

// runTo moves the clock to target, stopping at every due time on the way:
// at each, the due timers fire and the watchers settle (fireDue). Between
// two stops it checks ctx, and returns its error, the clock left where it
// stopped, once it has ended. The caller holds the turn.
func (c *FakeClock) runTo(ctx context.Context, target time.Time) error {
	for {
		c.fireDue()
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
		}
		watchers := c.watchers
		c.mu.Unlock()
		if moved {
			for _, w := range watchers {
				w.moved(next)
			}
		}
	}
}

// fireDue calls, in order, the functions of the timers due at the clock's
// time (each taken off the heap before its call, so one can stop the
// next), then waits for the watchers to settle; and again while the work
// of those armed more timers that are due already (a retry due at once).
// The caller holds the turn, so the time does not move meanwhile.
func (c *FakeClock) fireDue() {
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
			w.settle()
		}
		c.mu.Lock()
		more := len(c.timers) > 0 && !c.timers[0].when.After(c.now)
		c.mu.Unlock()
		if !more {
			return
		}
	}
}

type fakeTimer struct {
	clock *FakeClock
	seq   uint64 // order of arming, among equal due times
	when  time.Time
	f     func()
	index int // in clock.timers; -1 once fired or stopped
}

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
