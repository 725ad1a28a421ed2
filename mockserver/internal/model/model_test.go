package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// TestTimeFormatIsTheWires: the types' JSON writes times as every other
// answer of the server does.
func TestTimeFormatIsTheWires(t *testing.T) {
	t.Parallel()
	if timeFormat != jsonwire.TimeFormat {
		t.Errorf("timeFormat %q, the wire's %q", timeFormat, jsonwire.TimeFormat)
	}
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.FixedZone("x", 3600))
	b, err := json.Marshal(Webhook{ID: "wh_1", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"wh_1","account":"","url":"","events":[],"createdAt":"2026-11-21T19:51:00.123Z","active":false}`; string(b) != want {
		t.Errorf("webhook %s, want %s", b, want)
	}
}

// TestStateErrors: a refused document matches ErrInvalidState, and
// ErrStateTooNew only when newer; a state file's error says which file and
// unwraps to its cause.
func TestStateErrors(t *testing.T) {
	t.Parallel()
	bad := &StateError{Path: "accounts[0].id", Message: "is empty"}
	newer := StateTooNew("version", "format version 9 is newer")
	for _, tc := range []struct {
		err            error
		text           string
		invalid, isNew bool
	}{
		{bad, "mockserver: state document: accounts[0].id: is empty", true, false},
		{&StateError{Message: "the document is empty"}, "mockserver: state document: the document is empty", true, false},
		{newer, "mockserver: state document: version: format version 9 is newer", true, true},
		{&StateFileError{Path: "/s.json", Err: newer}, "mockserver: state file /s.json: state document: version: format version 9 is newer", true, true},
		{&StateFileError{Path: "/s.json", Err: fmt.Errorf("%w: /s.json.lock is locked", ErrStateFileInUse)},
			"mockserver: state file /s.json: in use by another server: /s.json.lock is locked", false, false},
	} {
		if tc.err.Error() != tc.text {
			t.Errorf("%q, want %q", tc.err, tc.text)
		}
		if errors.Is(tc.err, ErrInvalidState) != tc.invalid || errors.Is(tc.err, ErrStateTooNew) != tc.isNew {
			t.Errorf("%v: invalid %t, too new %t", tc.err, errors.Is(tc.err, ErrInvalidState), errors.Is(tc.err, ErrStateTooNew))
		}
	}
	fsErr := &StateFileError{Path: "/s.json", Err: fs.ErrPermission}
	if !errors.Is(fsErr, fs.ErrPermission) {
		t.Errorf("%v does not unwrap to its cause", fsErr)
	}
}

// TestDeliveryFilter: each field set must match, and Match is
// MatchDelivery over the delivery's fields.
func TestDeliveryFilter(t *testing.T) {
	t.Parallel()
	d := Delivery{EventID: "evt_1", WebhookID: "wh_1", State: DeliveryFailed, Account: "acme", EventType: "context.created"}
	for _, tc := range []struct {
		f    DeliveryFilter
		want bool
	}{
		{DeliveryFilter{}, true},
		{DeliveryFilter{EventID: "evt_1", WebhookID: "wh_1", State: DeliveryFailed, Account: "acme", EventType: "context.created"}, true},
		{DeliveryFilter{EventID: "evt_2"}, false},
		{DeliveryFilter{WebhookID: "wh_2"}, false},
		{DeliveryFilter{State: DeliveryPending}, false},
		{DeliveryFilter{Account: "globex"}, false},
		{DeliveryFilter{EventType: "context.deleted"}, false},
	} {
		if got := tc.f.Match(d); got != tc.want {
			t.Errorf("%+v.Match = %t, want %t", tc.f, got, tc.want)
		}
	}
}
