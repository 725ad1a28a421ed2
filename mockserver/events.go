package mockserver

import (
	"context"
	"encoding/json"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"go.opentelemetry.io/otel/trace"
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
func (s *Server) emit(ctx context.Context, accountID string, typ contextsvc.EventType, data any) events.Event {
	raw, ok := data.(json.RawMessage)
	if !ok {
		raw, _ = json.Marshal(data)
	}
	now := s.now()
	id := ids.New("evt_")
	var span trace.Span
	if s.tel != nil {
		// The event's span: the parent of its deliveries' attempts.
		ctx, span = s.tel.StartEvent(ctx, id, typ, accountID)
	}
	ev := events.New(id, typ, now, accountID, raw)
	s.events.Add(ev)
	c := changes.Change{Kind: changes.KindEvent, ID: ev.ID, Action: "created", Account: accountID, Type: string(typ)}
	if d, ok := data.(contextOf); ok {
		c.ContextID = d.contextOf()
	}
	s.changes.Publish(c)
	targets := s.store.Targets(accountID, typ)
	if s.onEvent != nil {
		s.onEvent(ctx, ev, targets)
	}
	if span != nil {
		s.tel.EndEvent(span, len(targets))
	}
	return ev
}

// Events returns copies of every event the server keeps, oldest first
// (changing them changes nothing on the server). It keeps the last
// [DefaultHistoryLimit] events, or as many as [WithHistoryLimit] says, so
// the oldest of a long run are gone; GET /_mock/events pages through the
// same events.
func (s *Server) Events() []Event {
	return events.All(s.events, func(ev events.Event) Event { return Event(ev) })
}

// MarshalJSON encodes the event as the admin API shows it:
// {"id","type","timestamp","account","data"}, the time in RFC 3339 UTC with
// millisecond precision.
func (e Event) MarshalJSON() ([]byte, error) { return events.Event(e).MarshalJSON() }
