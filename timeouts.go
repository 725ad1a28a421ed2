package contextsvc

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the client's own time bounds, which hold whatever the
// transport (the client's, or the caller's through WithHTTPClient) and the
// caller's context do: the whole call's (WithCallTimeout), and on each
// attempt the wait for the answer's headers (WithHeaderTimeout) and each
// read of its body (WithStallTimeout).
//
// One timer per call keeps them all, set to the earliest that may run out.
// Each attempt has a context of its own, which the timer ends (with a
// *timeoutError as its cause) when the attempt's bound or the call's runs
// out: net/http then fails the attempt with that cause. The call's context
// (the callState) ends only when the call's bound runs out, for the waits
// between attempts; it makes a context of its own only if something waits
// on it (see Done), so a call that is answered at once pays for one timer,
// one context per attempt, and nothing more.

// timeoutBound names one of the client's time bounds.
type timeoutBound uint8

const (
	boundCall    timeoutBound = iota // WithCallTimeout
	boundHeader                      // WithHeaderTimeout
	boundStall                       // WithStallTimeout
	boundAttempt                     // WithAttemptTimeout
)

// timeoutError is the error of a call or an attempt that one of the
// client's bounds ended: it matches ErrTimeout and context.DeadlineExceeded,
// and, as net/http's own time-outs, reports Timeout() true. Its text has no
// "contextsvc:" prefix: the call's error that wraps it has.
type timeoutError struct {
	bound timeoutBound
	d     time.Duration
}

func (e *timeoutError) Error() string {
	d := e.d.String()
	switch e.bound {
	case boundCall:
		return "the call took longer than " + d + ", its bound (WithCallTimeout)"
	case boundHeader:
		return "no answer within " + d + " of sending the request (WithHeaderTimeout)"
	case boundStall:
		return "the answer stalled: nothing of its body came for " + d + " (WithStallTimeout)"
	default:
		return "the attempt took longer than " + d + " (WithAttemptTimeout)"
	}
}

// Is makes errors.Is(err, ErrTimeout) and errors.Is(err,
// context.DeadlineExceeded) hold.
func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as net.Error's Timeout does for a time-out.
func (e *timeoutError) Timeout() bool { return true }

// callClock is the time keeping of one call, part of its callState.
type callClock struct {
	mu    sync.Mutex
	timer *time.Timer // made when first needed
	armed time.Time   // when the timer fires; zero when it is not set

	headerD, stallD time.Duration // each attempt's bounds
	callD           time.Duration
	callEnd         time.Time // when the call's bound runs out; zero: no bound of its own
	detached        atomic.Bool
	expired         atomic.Pointer[timeoutError] // the call's bound ran out
	ended           atomic.Bool                  // the call is over (end)

	wait atomic.Pointer[waitContext] // made by the first Done

	att      *attempt  // the attempt in progress, nil between attempts
	phaseEnd time.Time // when its header or read bound runs out; zero: none running
}

// waitContext is the call's context once something waits on it: the
// caller's, ended also by the call's bound.
type waitContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// startClock puts the call under its bounds: from now on each attempt is
// bounded by the header and stall bounds and the whole call by the call's,
// unless the caller's deadline comes first: then that one ends the call.
// end (or, for a streamed answer, detach and then end) releases it.
func (c *Client) startClock(cs *callState) {
	cs.headerD, cs.stallD, cs.callD = c.headerTimeout, c.stallTimeout, c.callTimeout
	end := time.Now().Add(c.callTimeout)
	if dl, ok := cs.Context.Deadline(); !ok || dl.After(end) {
		cs.callEnd = end
	}
}

// armLocked sets the timer to the earliest bound that may run out. A call
// that has ended watches nothing, nor does one whose caller's context has
// ended watch the call's bound: that call ends for the caller's reason,
// and a bound already past would set the timer to fire at once, again and
// again, for as long as the call's code had yet to notice.
func (cs *callState) armLocked(now time.Time) {
	if cs.ended.Load() {
		return
	}
	var next time.Time
	if cs.callBounded() && cs.Context.Err() == nil {
		next = cs.callEnd
	}
	if !cs.phaseEnd.IsZero() && (next.IsZero() || cs.phaseEnd.Before(next)) {
		next = cs.phaseEnd
	}
	if next.IsZero() || !cs.armed.IsZero() && !cs.armed.After(next) {
		// Nothing to watch, or the timer fires in time anyway (it then
		// finds nothing due and sets itself again).
		return
	}
	cs.armed = next
	if cs.timer == nil {
		cs.timer = time.AfterFunc(next.Sub(now), cs.fire)
	} else {
		cs.timer.Reset(next.Sub(now))
	}
}

// callBounded reports whether the call's own bound still applies.
func (cs *callState) callBounded() bool {
	return !cs.callEnd.IsZero() && !cs.detached.Load() && cs.expired.Load() == nil
}

// fire runs when the timer does: it ends what ran out (the call, or the
// attempt's wait for its headers or a read of its body) and sets the timer
// for what is still running.
func (cs *callState) fire() {
	cs.mu.Lock()
	now := time.Now()
	cs.armed = time.Time{}
	var te *timeoutError
	var w *waitContext
	att, reading := cs.att, false
	switch {
	case cs.callBounded() && !now.Before(cs.callEnd) && cs.Context.Err() == nil:
		// (When the caller's context ended first, that is the reason.)
		te = &timeoutError{bound: boundCall, d: cs.callD}
		cs.expired.Store(te)
		w = cs.wait.Load()
	case att != nil && !cs.phaseEnd.IsZero() && !now.Before(cs.phaseEnd):
		te = &timeoutError{bound: boundHeader, d: cs.headerD}
		if att.reading {
			te = &timeoutError{bound: boundStall, d: cs.stallD}
		}
		cs.phaseEnd = time.Time{}
	default:
		att = nil
	}
	if att != nil {
		// Decided under the lock, so that headersCame sees it.
		if !att.failed.CompareAndSwap(nil, te) {
			att = nil
		}
		reading = att != nil && att.reading
	}
	cs.armLocked(now)
	cs.mu.Unlock()
	if w != nil {
		w.cancel(te)
	}
	if att != nil {
		att.cancel(te)
		if reading {
			// For a transport that does not watch the context.
			att.ReadCloser.Close()
		}
	}
}

// end releases the call's clock and context once the call has returned
// and nothing of it is read any more. It may be called more than once.
func (cs *callState) end() {
	cs.ended.Store(true)
	cs.mu.Lock()
	if cs.timer != nil {
		cs.timer.Stop()
		cs.armed = time.Time{}
	}
	cs.mu.Unlock()
	if w := cs.wait.Load(); w != nil {
		w.cancel(nil)
	}
}

// detach lifts the call's bound from a call that returns a body to be read
// later (an export): from now on only the stall bound applies to it, and
// end is for when the body is closed. It reports false when the call's
// bound had already run out.
func (cs *callState) detach() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.expired.Load() != nil {
		return false
	}
	cs.detached.Store(true)
	return true
}

// The callState is the context of the call's requests, the retry layer's
// waits and the rate limiter's: its Deadline, Done and Err add the call's
// bound to the caller's context.

// Deadline is the earlier of the caller's deadline and the end of the
// call's own bound, so that whatever looks at the deadline (the retry
// policy deciding whether a wait fits, a rate limiter) sees the bound too.
func (cs *callState) Deadline() (time.Time, bool) {
	d, ok := cs.Context.Deadline()
	if cs.callEnd.IsZero() || cs.detached.Load() || ok && d.Before(cs.callEnd) {
		return d, ok
	}
	return cs.callEnd, true
}

// Done is closed when the caller's context ends or the call's bound runs
// out. Its channel is made the first time it is asked for.
func (cs *callState) Done() <-chan struct{} {
	if cs.callEnd.IsZero() {
		return cs.Context.Done()
	}
	if w := cs.wait.Load(); w != nil {
		return w.ctx.Done()
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if w := cs.wait.Load(); w != nil {
		return w.ctx.Done()
	}
	w := &waitContext{}
	w.ctx, w.cancel = context.WithCancelCause(cs.Context)
	if te := cs.expired.Load(); te != nil {
		w.cancel(te)
	}
	cs.wait.Store(w)
	// Something waits on the call (a rate limiter before the first
	// attempt, say): the timer must run for the call's bound.
	cs.armLocked(time.Now())
	return w.ctx.Done()
}

// Err is context.DeadlineExceeded once the call's bound has run out (see
// ownTimeout for which), the caller's context's error if it ended, and
// context.Canceled once the call is over.
func (cs *callState) Err() error {
	if cs.expired.Load() != nil {
		return context.DeadlineExceeded
	}
	if err := cs.Context.Err(); err != nil {
		return err
	}
	if cs.ended.Load() && cs.wait.Load() != nil {
		return context.Canceled
	}
	return nil
}

// ownTimeout returns the error of the call's bound if it ended the call,
// else nil.
func (cs *callState) ownTimeout() *timeoutError { return cs.expired.Load() }

// ctxErr is the error of the call's ended context: the call's bound's when
// it was that, else the caller's context's (nil while both run).
func (cs *callState) ctxErr() error {
	if te := cs.ownTimeout(); te != nil {
		return te
	}
	return cs.Context.Err()
}

// attemptParent is the call's state seen as the parent of its attempts'
// contexts: it has the call's values and deadline, and the caller's Done
// and Err (promoted from the embedded context). An attempt's context is
// thus tied to the caller's context directly, as cheaply as if the caller
// had made it, and the call's bound reaches it through the timer.
type attemptParent callState

func (p *attemptParent) Value(key any) any {
	if key == (callKey{}) {
		return (*callState)(p)
	}
	return p.Context.Value(key)
}

func (p *attemptParent) Deadline() (time.Time, bool) { return (*callState)(p).Deadline() }

// attempt is one attempt of a call under its bounds (see sendAttempt); once
// the answer's headers came, it is the answer's body, wrapped.
type attempt struct {
	io.ReadCloser // the answer's body, once it came
	cs            *callState
	cancel        context.CancelCauseFunc // ends the attempt's context
	stopTimeout   context.CancelFunc      // WithAttemptTimeout's, if any
	reading       bool                    // the headers came; under cs.mu
	failed        atomic.Pointer[timeoutError]
}

// begin starts the attempt's header bound. It fails when the call's bound
// has already run out.
func (cs *callState) begin(a *attempt) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if te := cs.expired.Load(); te != nil {
		return te
	}
	now := time.Now()
	cs.att, cs.phaseEnd = a, now.Add(cs.headerD)
	cs.armLocked(now)
	return nil
}

// headersCame ends the attempt's header bound. It returns the bound's
// error if one ended the attempt already, else makes body the attempt's.
func (cs *callState) headersCame(a *attempt, body io.ReadCloser) *timeoutError {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.att == a {
		cs.phaseEnd = time.Time{}
	}
	if te := a.failed.Load(); te != nil {
		return te
	}
	a.ReadCloser, a.reading = body, true
	return nil
}

// leave takes the attempt off the clock.
func (cs *callState) leave(a *attempt) {
	cs.mu.Lock()
	if cs.att == a {
		cs.att, cs.phaseEnd = nil, time.Time{}
	}
	cs.mu.Unlock()
}

// Read reads the answer's body, each read bounded by the stall bound.
func (a *attempt) Read(p []byte) (int, error) {
	if e := a.failed.Load(); e != nil {
		return 0, e
	}
	cs := a.cs
	cs.mu.Lock()
	watched := cs.att == a
	if watched {
		now := time.Now()
		cs.phaseEnd = now.Add(cs.stallD)
		cs.armLocked(now)
	}
	cs.mu.Unlock()
	n, err := a.ReadCloser.Read(p)
	if watched {
		// The timer stays set: if it fires, it finds nothing due.
		cs.mu.Lock()
		if cs.att == a {
			cs.phaseEnd = time.Time{}
		}
		cs.mu.Unlock()
	}
	if err != nil && err != io.EOF {
		if e := a.failed.Load(); e != nil {
			err = e
		}
	}
	return n, err
}

// Close closes the answer's body and ends the attempt.
func (a *attempt) Close() error {
	err := a.ReadCloser.Close()
	a.cs.leave(a)
	a.release()
	return err
}

// release ends the attempt's contexts.
func (a *attempt) release() {
	a.cancel(nil)
	if a.stopTimeout != nil {
		a.stopTimeout()
	}
}
