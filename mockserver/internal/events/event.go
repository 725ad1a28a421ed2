// Package events is the mock server's event history: an event as the
// server records it ([Event]: its envelope's fields and the exact envelope
// bytes that deliveries send and sign, built by [New]) and the bounded log
// of the last events ([Log]), by type, by account and by id, a page at a
// time.
//
// It owns the events' bytes and the history's bounds (in events and in
// bytes). It does not deliver them: the server hands each new event to the
// delivery engine. It imports nothing of the mock server but model (whose
// Event it records) and its queue, page and jsonwire packages.
package events

import (
	"bytes"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Event is one recorded event: its envelope fields and the exact envelope
// bytes (Body) that deliveries send and sign (model.Event, the server's
// public mockserver.Event).
type Event = model.Event

// New builds an event and its envelope {"id","type","timestamp","data"}
// (model.EventJSON, written by hand: TestNewEvent holds it to
// encoding/json's bytes), data written as given. Data is the tail of
// Body, so the event holds its data once.
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
func Clone(e Event) Event {
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
