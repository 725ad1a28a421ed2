package mockserver

import (
	"context"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Clock is the mock server's source of time. Every time the server uses
// (timestamps, rate-limit buckets, delivery schedules) comes from its Clock,
// so a test can drive the whole server with a [FakeClock]. Now returns the
// current time on the clock; AfterFunc arranges for a function to be
// called once a duration has elapsed on it (the function must not block
// for long), and returns a [Timer]. Its methods are documented with its
// definition, [model.Clock].
type Clock = model.Clock

// Timer is a pending call made by [Clock.AfterFunc]: its Stop prevents
// the call from happening, and reports whether the call was stopped
// before it happened.
type Timer = model.Timer

// RealClock is the wall clock. It is the default: its Now is time.Now, its
// AfterFunc time.AfterFunc.
type RealClock = model.RealClock

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

// watchedClock is a clock that tells its watchers (FakeClock, and a
// test's clock that embeds one) of each time an advance reaches, and
// waits for them to settle before it moves on (clock.Watcher): a server's
// service watches its clock, so that the work of each due time sees Now()
// as that time, and what it schedules (a retry) counts from it.
type watchedClock interface {
	watch(w clock.Watcher)
	unwatch(w clock.Watcher)
}

// watch adds w to the clock's watchers.
func (c *FakeClock) watch(w clock.Watcher) { c.fake.Watch(w) }

// unwatch removes w from the clock's watchers (a server that closes).
func (c *FakeClock) unwatch(w clock.Watcher) { c.fake.Unwatch(w) }

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

// engineClock is c as the server's parts arm timers on it: a FakeClock's
// engine itself, the wall clock, or c, made absolute when it can arm a
// timer for a point in time (a test's clock that embeds a FakeClock).
func engineClock(c Clock) clock.Clock {
	switch c := c.(type) {
	case nil:
		return clock.Real{}
	case *FakeClock:
		return &c.fake
	case absoluteClock:
		return absoluteAdapter{c}
	}
	return c
}

// absoluteClock is a Clock that can arm a timer for a point in time
// (FakeClock, and a test's clock that embeds one).
type absoluteClock interface {
	Clock
	afterFuncAt(at time.Time, f func()) Timer
}

// absoluteAdapter is an absoluteClock as a clock.Absolute.
type absoluteAdapter struct{ absoluteClock }

func (a absoluteAdapter) AfterFuncAt(at time.Time, f func()) clock.Timer { return a.afterFuncAt(at, f) }

// advancer is a clock the admin API can move: a *FakeClock, or a test's
// own clock with the same method.
type advancer interface{ Advance(time.Duration) }

// clockAdvancer is c as the admin API moves it: a FakeClock's own engine,
// in steps, or one step for a test's clock with an Advance; nil for a
// clock that cannot be advanced. tells reports whether the clock tells
// its watchers of each time it reaches.
func clockAdvancer(c Clock) (adv adminapi.Advancer, tells bool) {
	switch a := c.(type) {
	case *FakeClock:
		adv = &a.fake
	case advancer:
		adv = advancerSteps{a, c}
	}
	_, tells = c.(watchedClock)
	return adv, tells
}

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
