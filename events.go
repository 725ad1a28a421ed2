package contextsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EventType names the kind of a webhook event. The same constants are used
// when registering a webhook (which events to receive) and when reading a
// delivered [Event].
type EventType string

// The event types the service sends.
const (
	EventContextCreated        EventType = "context.created"
	EventContextUpdated        EventType = "context.updated"
	EventContextDeleted        EventType = "context.deleted"
	EventContextPublished      EventType = "context.published"
	EventContextVersionCreated EventType = "context.version.created"
	EventTeamMemberAdded       EventType = "team.member.added"
	EventTeamMemberRemoved     EventType = "team.member.removed"
	EventExportCompleted       EventType = "export.completed"
)

// AllEventTypes returns every event type this SDK knows, in the reference's
// order. It returns a new slice on each call, so callers may modify it.
func AllEventTypes() []EventType {
	return []EventType{
		EventContextCreated,
		EventContextUpdated,
		EventContextDeleted,
		EventContextPublished,
		EventContextVersionCreated,
		EventTeamMemberAdded,
		EventTeamMemberRemoved,
		EventExportCompleted,
	}
}

// Known reports whether t is one of the event types this SDK knows. A newer
// service may send types that are not known; they still parse.
func (t EventType) Known() bool {
	switch t {
	case EventContextCreated, EventContextUpdated, EventContextDeleted,
		EventContextPublished, EventContextVersionCreated,
		EventTeamMemberAdded, EventTeamMemberRemoved, EventExportCompleted:
		return true
	}
	return false
}

// Changes describes what an update changed in a context's Markdown: the
// headings of the sections whose body was added, changed or removed (the
// text before the first heading is the section "(preamble)"), and the words
// of the new rendered text minus those of the old. It appears on a
// [Version] and in the data of a context.updated event.
type Changes struct {
	// SectionsModified holds the headings of the changed sections: those
	// of the new text in order, then the removed ones.
	SectionsModified []string `json:"sections_modified"`
	// WordCountDelta is the new text's word count minus the old one's.
	WordCountDelta int `json:"word_count_delta"`
}

// Event is one delivered webhook notification: the envelope the service
// signs and POSTs. Data is kept as the raw JSON the service sent; use
// [Event.ParseData] or one of the typed accessors such as
// [Event.ContextUpdated] to read it. An event whose Type this SDK does not
// know still parses, so a receiver keeps working when the service adds
// types.
//
// A received Event comes from [ConstructEvent] (or the handler made by
// [NewWebhookHandler]), which verify the signature before parsing.
type Event struct {
	// ID identifies the event ("evt_…"). Every delivery attempt of the same
	// event, to every webhook, carries the same ID, so receivers deduplicate
	// by it.
	ID string `json:"id"`
	// Type is the kind of event; it selects the shape of Data.
	Type EventType `json:"type"`
	// Timestamp is when the event happened.
	Timestamp time.Time `json:"timestamp"`
	// Data is the event-specific content, exactly as sent.
	Data json.RawMessage `json:"data,omitempty"`
}

// ErrMalformedEvent is matched (through errors.Is) by every error about an
// event envelope that is not valid JSON, lacks its id, type or timestamp, or
// whose data does not fit its type.
var ErrMalformedEvent = errors.New("contextsvc: malformed event")

// ErrEventTypeMismatch is matched (through errors.Is) by the error a typed
// accessor such as [Event.ContextUpdated] returns when the event is of
// another type.
var ErrEventTypeMismatch = errors.New("contextsvc: event type mismatch")

// ContextCreatedData is the data of a context.created event.
type ContextCreatedData struct {
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Name is the context's name.
	Name string `json:"name"`
	// Version is the context's version number.
	Version int `json:"version"`
	// Tags are the context's tags.
	Tags []string `json:"tags"`
	// CreatedBy is the id of the user whose API key created it ("user_…").
	CreatedBy string `json:"createdBy"`
}

// ContextUpdatedData is the data of a context.updated event: the context
// after the update and what the update changed.
type ContextUpdatedData struct {
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Name is the context's name.
	Name string `json:"name"`
	// Version is the context's version number.
	Version int `json:"version"`
	// UpdatedBy is the id of the user whose API key updated it ("user_…").
	UpdatedBy string `json:"updatedBy"`
	// Changes says what the update changed.
	Changes Changes `json:"changes"`
}

// ContextDeletedData is the data of a context.deleted event.
type ContextDeletedData struct {
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Name is the context's name.
	Name string `json:"name"`
	// DeletedBy is the id of the user whose API key deleted it ("user_…").
	DeletedBy string `json:"deletedBy"`
}

// ContextPublishedData is the data of a context.published event.
type ContextPublishedData struct {
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Name is the context's name.
	Name string `json:"name"`
	// Version is the context's version number.
	Version int `json:"version"`
	// PublishedBy is the id of the user who published it ("user_…").
	PublishedBy string `json:"publishedBy"`
}

// ContextVersionCreatedData is the data of a context.version.created event.
type ContextVersionCreatedData struct {
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Version is the context's version number.
	Version int `json:"version"`
	// CreatedBy is the id of the user whose API key created it ("user_…").
	CreatedBy string `json:"createdBy"`
}

// TeamMemberAddedData is the data of a team.member.added event.
type TeamMemberAddedData struct {
	// TeamID is the team's id ("team_…").
	TeamID string `json:"teamId"`
	// UserID is the member's user id ("user_…").
	UserID string `json:"userId"`
	// Role is the member's role in the team.
	Role string `json:"role"`
}

// TeamMemberRemovedData is the data of a team.member.removed event. It has
// the same fields as [TeamMemberAddedData] but is its own type, so a type
// switch on the result of [Event.ParseData] tells the two apart.
type TeamMemberRemovedData struct {
	// TeamID is the team's id ("team_…").
	TeamID string `json:"teamId"`
	// UserID is the member's user id ("user_…").
	UserID string `json:"userId"`
	// Role is the member's role in the team.
	Role string `json:"role"`
}

// ExportCompletedData is the data of an export.completed event.
type ExportCompletedData struct {
	// ExportID is the export's id ("exp_…").
	ExportID string `json:"exportId"`
	// ContextID is the context's id ("ctx_…").
	ContextID string `json:"contextId"`
	// Version is the context's version number.
	Version int `json:"version"`
	// Format is the export format, such as "pdf" or "markdown".
	Format string `json:"format"`
	// SizeBytes is the size of the exported document in bytes.
	SizeBytes int64 `json:"sizeBytes"`
}

// newEventData returns a pointer to a new zero value of the data type of t,
// or nil for a type this SDK does not know. It is the one place that maps
// type names to Go types, so call sites switch on Go types instead.
func newEventData(t EventType) any {
	switch t {
	case EventContextCreated:
		return new(ContextCreatedData)
	case EventContextUpdated:
		return new(ContextUpdatedData)
	case EventContextDeleted:
		return new(ContextDeletedData)
	case EventContextPublished:
		return new(ContextPublishedData)
	case EventContextVersionCreated:
		return new(ContextVersionCreatedData)
	case EventTeamMemberAdded:
		return new(TeamMemberAddedData)
	case EventTeamMemberRemoved:
		return new(TeamMemberRemovedData)
	case EventExportCompleted:
		return new(ExportCompletedData)
	}
	return nil
}

// ParseData decodes the event's data into the struct of its type and
// returns a pointer to it: *[ContextCreatedData] for context.created,
// *[ContextUpdatedData] for context.updated, and so on for the eight known
// types. For a type this SDK does not know it returns the data as a
// [json.RawMessage]. Receivers switch on the Go type of the result:
//
//	switch d := data.(type) {
//	case *contextsvc.ContextUpdatedData:
//		...
//	case json.RawMessage:
//		// a newer event type
//	}
//
// An event of a known type without data, or whose data does not fit its
// type, is an error matching [ErrMalformedEvent].
func (e *Event) ParseData() (any, error) {
	v := newEventData(e.Type)
	if v == nil {
		return e.Data, nil
	}
	if err := e.decodeData(v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeData decodes e.Data into v, a pointer to the data struct of e.Type.
func (e *Event) decodeData(v any) error {
	if len(e.Data) == 0 || string(e.Data) == "null" {
		return fmt.Errorf("%w: %s event %s has no data", ErrMalformedEvent, e.Type, e.ID)
	}
	if err := unmarshalJSON(e.Data, v); err != nil {
		return fmt.Errorf("%w: data of %s event %s: %v", ErrMalformedEvent, e.Type, e.ID, err)
	}
	return nil
}

// typedData is the shared body of the typed accessors.
func typedData[T any](e *Event, want EventType) (*T, error) {
	if e.Type != want {
		return nil, fmt.Errorf("%w: event %s is %q, not %q", ErrEventTypeMismatch, e.ID, e.Type, want)
	}
	v := new(T)
	if err := e.decodeData(v); err != nil {
		return nil, err
	}
	return v, nil
}

// ContextCreated returns the data of a context.created event. For an event
// of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) ContextCreated() (*ContextCreatedData, error) {
	return typedData[ContextCreatedData](e, EventContextCreated)
}

// ContextUpdated returns the data of a context.updated event. For an event
// of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) ContextUpdated() (*ContextUpdatedData, error) {
	return typedData[ContextUpdatedData](e, EventContextUpdated)
}

// ContextDeleted returns the data of a context.deleted event. For an event
// of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) ContextDeleted() (*ContextDeletedData, error) {
	return typedData[ContextDeletedData](e, EventContextDeleted)
}

// ContextPublished returns the data of a context.published event. For an
// event of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) ContextPublished() (*ContextPublishedData, error) {
	return typedData[ContextPublishedData](e, EventContextPublished)
}

// ContextVersionCreated returns the data of a context.version.created
// event. For an event of another type it returns an error matching
// [ErrEventTypeMismatch].
func (e *Event) ContextVersionCreated() (*ContextVersionCreatedData, error) {
	return typedData[ContextVersionCreatedData](e, EventContextVersionCreated)
}

// TeamMemberAdded returns the data of a team.member.added event. For an
// event of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) TeamMemberAdded() (*TeamMemberAddedData, error) {
	return typedData[TeamMemberAddedData](e, EventTeamMemberAdded)
}

// TeamMemberRemoved returns the data of a team.member.removed event. For an
// event of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) TeamMemberRemoved() (*TeamMemberRemovedData, error) {
	return typedData[TeamMemberRemovedData](e, EventTeamMemberRemoved)
}

// ExportCompleted returns the data of an export.completed event. For an
// event of another type it returns an error matching [ErrEventTypeMismatch].
func (e *Event) ExportCompleted() (*ExportCompletedData, error) {
	return typedData[ExportCompletedData](e, EventExportCompleted)
}

// ParseEvent parses an event envelope WITHOUT checking its signature. It is
// for bytes already verified (or for tests); receivers use
// [ConstructEvent], which verifies first. The envelope must be a JSON object
// with a non-empty id and type and an RFC 3339 timestamp; the data of a
// known type must fit that type's struct. The data of an unknown type is
// kept raw and not checked. Every error matches [ErrMalformedEvent].
func ParseEvent(payload []byte) (*Event, error) {
	var e Event
	// The decoder of the client's answers (unmarshalJSON): an event takes
	// the same times, e.g. "2026-11-21t20:51:00z".
	if err := unmarshalJSON(payload, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedEvent, err)
	}
	switch {
	case e.ID == "":
		return nil, fmt.Errorf("%w: missing id", ErrMalformedEvent)
	case e.Type == "":
		return nil, fmt.Errorf("%w: event %s: missing type", ErrMalformedEvent, e.ID)
	case e.Timestamp.IsZero():
		return nil, fmt.Errorf("%w: event %s: missing timestamp", ErrMalformedEvent, e.ID)
	}
	// Check the data of known types now, so a receiver rejects a bad
	// delivery at the door (400) rather than failing inside its own code.
	if v := newEventData(e.Type); v != nil {
		if err := e.decodeData(v); err != nil {
			return nil, err
		}
	}
	return &e, nil
}
