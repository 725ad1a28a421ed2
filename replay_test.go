package contextsvc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestConstructEventReplayWindow: ConstructEvent refuses a validly signed
// event outside the handler's default window, measured on time.Now (the
// bubble's clock here), with ErrOutsideReplayWindow and no event; a
// signature that does not verify is still a signature error, whatever the
// age.
func TestConstructEventReplayWindow(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name string
		age  time.Duration // now minus the event's timestamp
		ok   bool
	}{
		{"now", 0, true},
		{"the last retry (26h36m)", (1 + 5 + 30 + 120 + 1440) * time.Minute, true},
		{"exactly 27 h old", DefaultReplayWindow, true},
		{"27 h and 1 ms old", DefaultReplayWindow + ms, false},
		{"48 h old", 48 * time.Hour, false},
		{"a year old", 365 * 24 * time.Hour, false},
		{"exactly 5 min ahead", -DefaultFutureSkew, true},
		{"5 min and 1 ms ahead", -DefaultFutureSkew - ms, false},
		{"a day ahead", -24 * time.Hour, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				body := eventBody("evt_age", time.Now().Add(-tc.age))
				ev, err := ConstructEvent(body, Sign(body, testSecret), "whsec_old", testSecret)
				if tc.ok {
					if err != nil || ev == nil || ev.ID != "evt_age" {
						t.Fatalf("ConstructEvent = %v, %v; want the event", ev, err)
					}
					return
				}
				if !errors.Is(err, ErrOutsideReplayWindow) || errors.Is(err, ErrInvalidSignature) || errors.Is(err, ErrMalformedEvent) || ev != nil {
					t.Fatalf("ConstructEvent = %v, %v; want ErrOutsideReplayWindow only", ev, err)
				}
				if !strings.Contains(err.Error(), "evt_age") || strings.Contains(err.Error(), testSecret) {
					t.Errorf("error %q: want the event's id, never the secret", err)
				}
				if _, err := ConstructEvent(body, Sign(body, "whsec_forger"), testSecret); !errors.Is(err, ErrSignatureMismatch) {
					t.Errorf("a forged old event: err %v, want ErrSignatureMismatch", err)
				}
			})
		})
	}
}

// TestConstructEventWithOptions: the window and its clock are options, as
// the handler's are, and a bad option is refused before the payload is
// looked at.
func TestConstructEventWithOptions(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	old := eventBody("evt_48h", testStart.Add(-48*time.Hour))
	ahead := eventBody("evt_ahead", testStart.Add(time.Hour))
	cases := []struct {
		name    string
		body    []byte
		opts    []ConstructEventOption
		wantErr error // nil: the event
	}{
		{"48 h old, the default window, on the given clock", old, []ConstructEventOption{WithEventClock(clk.Now)}, ErrOutsideReplayWindow},
		{"48 h old, a 72 h window", old, []ConstructEventOption{WithEventClock(clk.Now), WithEventReplayWindow(72*time.Hour, 0)}, nil},
		{"48 h old, a window of exactly 48 h", old, []ConstructEventOption{WithEventClock(clk.Now), WithEventReplayWindow(48*time.Hour, 0)}, nil},
		{"48 h old, window off", old, []ConstructEventOption{WithEventReplayWindow(0, 0)}, nil},
		{"an hour ahead, the default skew", ahead, []ConstructEventOption{WithEventClock(clk.Now)}, ErrOutsideReplayWindow},
		{"an hour ahead, an hour of skew", ahead, []ConstructEventOption{WithEventClock(clk.Now), WithEventReplayWindow(time.Hour, time.Hour)}, nil},
		{"nil options are skipped", old, []ConstructEventOption{nil, WithEventClock(clk.Now), nil}, ErrOutsideReplayWindow},
		{"negative past", old, []ConstructEventOption{WithEventReplayWindow(-time.Second, 0)}, ErrInvalidArgument},
		{"negative future", old, []ConstructEventOption{WithEventReplayWindow(time.Hour, -time.Second)}, ErrInvalidArgument},
		{"nil clock", old, []ConstructEventOption{WithEventClock(nil)}, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := ConstructEventWithOptions(tc.body, Sign(tc.body, testSecret), []string{testSecret}, tc.opts...)
			if tc.wantErr == nil {
				if err != nil || ev == nil {
					t.Fatalf("= %v, %v; want the event", ev, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || ev != nil {
				t.Fatalf("= %v, %v; want %v", ev, err, tc.wantErr)
			}
		})
	}
	// A bad option wins over a bad signature: a misconfigured receiver is
	// told so on the first delivery, whatever it is.
	if _, err := ConstructEventWithOptions(old, "", []string{testSecret}, WithEventClock(nil)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad option and no signature: %v, want ErrInvalidArgument", err)
	}
}

// TestConstructEventAgreesWithHandler: for the same event, clock and
// window, ConstructEvent accepts exactly what the handler accepts.
func TestConstructEventAgreesWithHandler(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	h := newHandler(t, testSecret, func(_ context.Context, _ *Event) error { return nil },
		WithWebhookClock(clk.Now), WithDeduper(nil))
	for _, age := range []time.Duration{
		0, time.Hour, DefaultReplayWindow, DefaultReplayWindow + time.Millisecond, 48 * time.Hour,
		-DefaultFutureSkew, -DefaultFutureSkew - time.Millisecond,
	} {
		body := eventBody("evt_agree", testStart.Add(-age))
		sig := Sign(body, testSecret)
		code := deliver(t, h, body, sig).Code
		_, err := ConstructEventWithOptions(body, sig, []string{testSecret}, WithEventClock(clk.Now))
		if (code == http.StatusOK) != (err == nil) || (code == http.StatusBadRequest) != errors.Is(err, ErrOutsideReplayWindow) {
			t.Errorf("age %v: the handler answers %d, ConstructEvent %v", age, code, err)
		}
	}
}
