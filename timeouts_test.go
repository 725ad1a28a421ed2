package contextsvc

import (
	"context"
	"testing"
	"time"
)

// TestCallClockIdleWhenCallerEnded: a call whose bound has run out after
// its caller's context ended, or a call that has ended, sets no timer:
// the timer would otherwise fire at once, find the bound past but not the
// call's to end, and set itself again, for as long as the call's code (a
// copy into a blocked writer, a transport that ignores the context) had
// yet to return.
func TestCallClockIdleWhenCallerEnded(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tt := range []struct {
		name      string
		cancelled bool
		ended     bool
		wantArmed bool
	}{
		{name: "the caller's context alive", wantArmed: true},
		{name: "the caller's context ended", cancelled: true},
		{name: "the call ended", ended: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cs := newCallState(ctx, "GET", "/contexts/ctx_1")
			cs.callD, cs.callEnd = time.Minute, now.Add(-time.Second) // the bound is past
			if tt.cancelled {
				cancel()
			}
			if tt.ended {
				cs.ended.Store(true)
			}
			cs.mu.Lock()
			cs.armLocked(now)
			armed := !cs.armed.IsZero()
			cs.mu.Unlock()
			if cs.timer != nil {
				cs.timer.Stop()
			}
			if armed != tt.wantArmed {
				t.Errorf("timer set: %v, want %v", armed, tt.wantArmed)
			}
		})
	}
}
