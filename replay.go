package contextsvc

import (
	"errors"
	"fmt"
	"time"
)

// This file is the replay window: how old, and how far in the future, a
// verified event may be. The handler made by NewWebhookHandler and
// ConstructEvent apply the same check, with the same defaults and error.

// ErrOutsideReplayWindow is matched (through errors.Is) by the error about a
// validly signed event whose timestamp is older than the replay window
// ([DefaultReplayWindow]) or further in the future than its skew
// ([DefaultFutureSkew]): a captured delivery sent again, or a sender whose
// clock is far from the receiver's. [ConstructEvent] returns it, and the
// handler made by [NewWebhookHandler] answers it with a 400 and reports it
// as the Err of a [DeliveryOutsideWindow] result.
var ErrOutsideReplayWindow = errors.New("contextsvc: event outside the replay window")

// checkReplayWindow returns nil when ev's timestamp is at most past before
// now and at most future after it, and otherwise an error matching
// ErrOutsideReplayWindow. A past of 0 turns the check off. The timestamp
// is inside the signed bytes, so once the signature is verified it can be
// trusted.
func checkReplayWindow(ev *Event, now time.Time, past, future time.Duration) error {
	if past <= 0 {
		return nil
	}
	switch {
	case ev.Timestamp.Before(now.Add(-past)):
		return fmt.Errorf("%w: event %s of %s is %s old, more than %s", ErrOutsideReplayWindow,
			ev.ID, ev.Timestamp.Format(time.RFC3339Nano), now.Sub(ev.Timestamp).Round(time.Millisecond), past)
	case ev.Timestamp.After(now.Add(future)):
		return fmt.Errorf("%w: event %s of %s is %s in the future, more than %s", ErrOutsideReplayWindow,
			ev.ID, ev.Timestamp.Format(time.RFC3339Nano), ev.Timestamp.Sub(now).Round(time.Millisecond), future)
	}
	return nil
}

// ConstructEventOption configures [ConstructEventWithOptions]. An option
// given a value it cannot use makes ConstructEventWithOptions return an
// error wrapping [ErrInvalidArgument].
type ConstructEventOption func(*constructConfig) error

type constructConfig struct {
	past, future time.Duration
	now          func() time.Time
}

// WithEventReplayWindow sets how old (past) and how far in the future
// (future) a verified event's timestamp may be; the defaults are
// [DefaultReplayWindow] and [DefaultFutureSkew], as for the handler's
// [WithReplayWindow]. A past of 0 turns the check off (for events stored
// and verified again later, say). A negative past or future is an error.
func WithEventReplayWindow(past, future time.Duration) ConstructEventOption {
	return func(c *constructConfig) error {
		if past < 0 || future < 0 {
			return fmt.Errorf("%w: WithEventReplayWindow(%v, %v): must not be negative (a past of 0 turns the check off)", ErrInvalidArgument, past, future)
		}
		c.past, c.future = past, future
		return nil
	}
}

// WithEventClock sets the clock the replay window is measured on (default
// time.Now), as the handler's [WithWebhookClock] does: a receiver beside a
// mock server on a fake clock passes the mock's clock, and tests pass
// their own. nil is an error.
func WithEventClock(now func() time.Time) ConstructEventOption {
	return func(c *constructConfig) error {
		if now == nil {
			return fmt.Errorf("%w: WithEventClock(nil)", ErrInvalidArgument)
		}
		c.now = now
		return nil
	}
}
