package mockserver

import (
	"context"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
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
	fake clock.Fake
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

// engineWatcher is a clockWatcher as the clock's engine sees one. It is
// comparable, and equal for one watcher, so unwatch finds what watch added.
type engineWatcher struct{ w clockWatcher }

func (e engineWatcher) Moved(now time.Time) { e.w.moved(now) }
func (e engineWatcher) Settle()             { e.w.settle() }

// watch adds w to the clock's watchers.
func (c *FakeClock) watch(w clockWatcher) { c.fake.Watch(engineWatcher{w}) }

// unwatch removes w from the clock's watchers (a server that closes).
func (c *FakeClock) unwatch(w clockWatcher) { c.fake.Unwatch(engineWatcher{w}) }

// NewFakeClock returns a FakeClock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	c := new(FakeClock)
	c.fake.Init(start)
	return c
}

// Now returns the fake clock's current time.
func (c *FakeClock) Now() time.Time { return c.fake.Now() }

// AfterFunc arranges for f to be called when the clock has been advanced by
// at least d. A d of zero or less is due at the next Advance (or Set) call.
// f runs on the goroutine that advances the clock, and must neither block
// nor advance the clock itself.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer { return c.fake.AfterFunc(d, f) }

// afterFuncAt arranges for f to be called when the clock reaches at (at the
// next Advance or Set if it already has). Unlike AfterFunc, the due time
// does not depend on when the call happens, so an Advance by another
// goroutine between the caller's Now and this call cannot move it later.
// The delivery engine uses it when its clock has it (see absoluteClock).
func (c *FakeClock) afterFuncAt(at time.Time, f func()) Timer { return c.fake.AfterFuncAt(at, f) }

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
func (c *FakeClock) Advance(d time.Duration) { c.fake.Advance(d) }

// AdvanceContext is [FakeClock.Advance] that gives up when ctx ends: while
// it waits for another advance to end, it returns at once, the clock
// unmoved; once under way, it stops at the next due time (never half-way
// through the work of one), with the clock left at the last time it
// reached. It then returns ctx's error.
func (c *FakeClock) AdvanceContext(ctx context.Context, d time.Duration) error {
	return c.fake.AdvanceContext(ctx, d)
}

// Set moves the clock to t (never backwards) and runs everything due on
// the way as [FakeClock.Advance] does.
func (c *FakeClock) Set(t time.Time) { c.fake.Set(t) }

// SetContext is [FakeClock.Set] that gives up when ctx ends, as
// [FakeClock.AdvanceContext] does.
func (c *FakeClock) SetContext(ctx context.Context, t time.Time) error {
	return c.fake.SetContext(ctx, t)
}

// engineClock is c as the server's parts read it (clock.Clock): a
// FakeClock's engine itself, the wall clock, or c adapted, and made
// absolute when c can arm a timer for a point in time (a test's clock that
// embeds a FakeClock).
func engineClock(c Clock) clock.Clock {
	switch c := c.(type) {
	case nil, RealClock:
		return clock.Real{}
	case *FakeClock:
		return &c.fake
	case absoluteClock:
		return absoluteAdapter{clockAdapter{c}, c}
	}
	return clockAdapter{c}
}

// absoluteClock is a Clock that can arm a timer for a point in time
// (FakeClock, and a test's clock that embeds one).
type absoluteClock interface {
	Clock
	afterFuncAt(at time.Time, f func()) Timer
}

// clockAdapter is a Clock of the user's as a clock.Clock.
type clockAdapter struct{ c Clock }

func (a clockAdapter) Now() time.Time                                  { return a.c.Now() }
func (a clockAdapter) AfterFunc(d time.Duration, f func()) clock.Timer { return a.c.AfterFunc(d, f) }

// absoluteAdapter is an absoluteClock as a clock.Absolute.
type absoluteAdapter struct {
	clockAdapter
	a absoluteClock
}

func (a absoluteAdapter) AfterFuncAt(at time.Time, f func()) clock.Timer {
	return a.a.afterFuncAt(at, f)
}

// advancer is a clock the admin API can move: a *FakeClock, or a test's
// own clock with the same method.
type advancer interface{ Advance(time.Duration) }

// advancerSteps is an advancer that is no FakeClock as the admin API
// moves a clock (adminapi.Advancer): no turns and nothing run before the
// advance, which is one step.
type advancerSteps struct {
	a advancer
	c Clock
}

func (advancerSteps) TakeTurn(context.Context) error { return nil }
func (advancerSteps) GiveTurn()                      {}
func (advancerSteps) RunDue()                        {}

func (s advancerSteps) RunTo(_ context.Context, target time.Time) error {
	s.a.Advance(target.Sub(s.c.Now()))
	return nil
}
