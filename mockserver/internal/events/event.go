// Package events is the mock server's event history: an event as the
// server records it ([Event]: its envelope's fields and the exact envelope
// bytes that deliveries send and sign, built by [New]) and the bounded log
// of the last events ([Log]), by type, by account and by id, a page at a
// time.
//
// It owns the events' bytes and the history's bounds (in events and in
// bytes). It does not deliver them: the server hands each new event to the
// delivery engine. It imports nothing of the mock server but its queue,
// page and jsonwire packages.
package events

import (
	"bytes"
	"encoding/json"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// Event is one recorded event: its envelope fields and the exact envelope
// bytes (Body) that deliveries send and sign. Its fields are those of
// mockserver.Event, which converts to and from it.
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
}

// New builds an event and its envelope {"id","type","timestamp","data"},
// data written as given. Data is the tail of Body, so the event holds its
// data once.
func New(id string, typ contextsvc.EventType, at time.Time, account string, data []byte) Event {
	b := make([]byte, 0, 64+len(id)+len(typ)+len(data)+len(jsonwire.TimeFormat))
	b = append(b, `{"id":`...)
	b = jsonwire.AppendString(b, id)
	b = append(b, `,"type":`...)
	b = jsonwire.AppendString(b, string(typ))
	b = append(b, `,"timestamp":"`...)
	b = at.UTC().AppendFormat(b, jsonwire.TimeFormat)
	b = append(b, `","data":`...)
	start := len(b)
	b = append(b, data...)
	b = append(b, '}')
	return Event{ID: id, Type: typ, Timestamp: at, Account: account, Data: b[start : len(b)-1 : len(b)-1], Body: b}
}

// Clone returns a copy of e that shares no bytes with it.
func (e Event) Clone() Event {
	body := bytes.Clone(e.Body)
	if len(e.Data) > 0 && len(body) > len(e.Data) {
		// Data is the tail of Body, before the closing brace.
		end := len(body) - 1
		e.Data = body[end-len(e.Data) : end : end]
	} else {
		e.Data = bytes.Clone(e.Data)
	}
	e.Body = body
	return e
}

// eventJSON is an event as the admin API shows it: the envelope's fields
// plus the account.
type eventJSON struct {
	ID        string               `json:"id"`
	Type      contextsvc.EventType `json:"type"`
	Timestamp string               `json:"timestamp"`
	Account   string               `json:"account"`
	Data      json.RawMessage      `json:"data"`
}

// MarshalJSON encodes the event as the admin API shows it:
// {"id","type","timestamp","account","data"}, the time in RFC 3339 UTC with
// millisecond precision.
func (e Event) MarshalJSON() ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return json.Marshal(eventJSON{ID: e.ID, Type: e.Type, Timestamp: jsonwire.FormatTime(e.Timestamp), Account: e.Account, Data: data})
}
