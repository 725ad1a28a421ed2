package model

import (
	"encoding/json"
	"errors"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Event is one recorded event: mockserver.Event. Its envelope fields and
// the exact envelope bytes (Body) that deliveries send and sign; Data is
// the tail of Body, so an event holds its data once.
type Event struct {
	// ID is the event id ("evt_…"), the same on every delivery attempt.
	ID string
	// Type is the event type.
	Type contextsvc.EventType
	// Timestamp is when the event happened, on the server's clock.
	Timestamp time.Time
	// Account is the account whose action fired the event.
	Account string
	// Data is the envelope's data object.
	Data json.RawMessage
	// Body is the whole envelope {"id","type","timestamp","data"}.
	Body []byte
	// ChaosOrdinal is the event's place among those fired since the
	// server's chaos mode was set (1 for the first), which its
	// deliveries' chaos decisions are keyed on; 0 when chaos was off.
	ChaosOrdinal uint64
}

// eventJSON is an event as the admin API shows it: the envelope
// (EventJSON) with the account before its data, and the chaos ordinal
// (TestAdminShapesFollowTheWire).
type eventJSON struct {
	ID        string               `json:"id"`
	Type      contextsvc.EventType `json:"type"`
	Timestamp string               `json:"timestamp"`
	Account   string               `json:"account"`
	Data      json.RawMessage      `json:"data"`
	Chaos     uint64               `json:"chaosOrdinal,omitempty"`
}

// MarshalJSON encodes the event as the admin API shows it:
// {"id","type","timestamp","account","data"}, the time in RFC 3339 UTC with
// millisecond precision, and chaosOrdinal when chaos counted it.
func (e Event) MarshalJSON() ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return json.Marshal(eventJSON{ID: e.ID, Type: e.Type, Timestamp: formatTime(e.Timestamp), Account: e.Account, Data: data,
		Chaos: e.ChaosOrdinal})
}

// Errors of the events fired by hand (mockserver.Server.EmitEvent and
// POST /_mock/events).
var (
	// ErrUnknownAccount: no key belongs to the account.
	ErrUnknownAccount = errors.New("mockserver: unknown account")
	// ErrInvalidEvent: an event type or data that cannot be sent.
	ErrInvalidEvent = errors.New("mockserver: invalid event")
)
