package model

import "time"

// Clock is the mock server's source of time: mockserver.Clock. Every time
// the server uses (timestamps, rate-limit buckets, delivery schedules)
// comes from its Clock.
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

// RealClock is the wall clock, the default: mockserver.RealClock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
