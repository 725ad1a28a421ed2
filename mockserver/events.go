package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// Event is one recorded event: its envelope fields and the exact envelope
// bytes (Body) that deliveries send and sign.
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

// The data shapes of the contract's event table.
type (
	contextCreatedData struct {
		ContextID string   `json:"contextId"`
		Name      string   `json:"name"`
		Version   int      `json:"version"`
		Tags      []string `json:"tags"`
		CreatedBy string   `json:"createdBy"`
	}
	contextUpdatedData struct {
		ContextID string             `json:"contextId"`
		Name      string             `json:"name"`
		Version   int                `json:"version"`
		UpdatedBy string             `json:"updatedBy"`
		Changes   contextsvc.Changes `json:"changes"`
	}
	contextDeletedData struct {
		ContextID string `json:"contextId"`
		Name      string `json:"name"`
		DeletedBy string `json:"deletedBy"`
	}
	contextPublishedData struct {
		ContextID   string `json:"contextId"`
		Name        string `json:"name"`
		Version     int    `json:"version"`
		PublishedBy string `json:"publishedBy"`
	}
	versionCreatedData struct {
		ContextID string `json:"contextId"`
		Version   int    `json:"version"`
		CreatedBy string `json:"createdBy"`
	}
	exportCompletedData struct {
		ExportID  string `json:"exportId"`
		ContextID string `json:"contextId"`
		Version   int    `json:"version"`
		Format    string `json:"format"`
		SizeBytes int    `json:"sizeBytes"`
	}
)

// contextOf is the context an event's data is about, for the dashboard's
// change notifications.
type contextOf interface{ contextOf() string }

func (d contextCreatedData) contextOf() string   { return d.ContextID }
func (d contextUpdatedData) contextOf() string   { return d.ContextID }
func (d contextDeletedData) contextOf() string   { return d.ContextID }
func (d contextPublishedData) contextOf() string { return d.ContextID }
func (d versionCreatedData) contextOf() string   { return d.ContextID }
func (d exportCompletedData) contextOf() string  { return d.ContextID }

// emit records an event of typ for accountID with data (any value that
// encodes to a JSON object, or a compact json.RawMessage) at the clock's
// now, then calls the onEvent hook with the account's active webhooks
// subscribed to typ. ctx is the request's (or the Go call's): it bounds
// the wait for room when the delivery backlog is full. Call it without
// holding any lock.
func (s *Server) emit(ctx context.Context, accountID string, typ contextsvc.EventType, data any) Event {
	raw, ok := data.(json.RawMessage)
	if !ok {
		raw, _ = json.Marshal(data)
	}
	now := s.now()
	ev := newEvent(ids.New("evt_"), typ, now, accountID, raw)
	s.events.add(ev)
	c := changes.Change{Kind: changes.KindEvent, ID: ev.ID, Action: "created", Account: accountID, Type: string(typ)}
	if d, ok := data.(contextOf); ok {
		c.ContextID = d.contextOf()
	}
	s.changes.Publish(c)
	if s.onEvent != nil {
		s.onEvent(ctx, ev, s.targets(accountID, typ))
	}
	return ev
}

// newEvent builds an event and its envelope
// {"id","type","timestamp","data"}, data written as given. Data is the tail
// of Body, so the event holds its data once.
func newEvent(id string, typ contextsvc.EventType, at time.Time, account string, data []byte) Event {
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

// clone returns a copy of e that shares no bytes with it.
func (e Event) clone() Event {
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

// targets returns the account's active webhooks subscribed to typ.
func (s *Server) targets(accountID string, typ contextsvc.EventType) []*webhook {
	a := s.accounts[accountID]
	if a == nil {
		return nil
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []*webhook
	for _, w := range a.webhooks {
		if st := w.state.Load(); st.deliverable() && slices.Contains(st.events, typ) {
			out = append(out, w)
		}
	}
	return out
}

// Events returns copies of every event the server keeps, oldest first
// (changing them changes nothing on the server). It keeps the last
// [DefaultHistoryLimit] events, or as many as [WithHistoryLimit] says, so
// the oldest of a long run are gone; GET /_mock/events pages through the
// same events.
func (s *Server) Events() []Event { return s.events.events() }

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
