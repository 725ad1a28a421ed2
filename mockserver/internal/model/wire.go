package model

import (
	"encoding/json"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// The contract's objects as the mock server writes them, each defined
// once for the whole server: a struct whose JSON (encoding/json's) is the
// object byte for byte, its times already formatted as the contract writes
// them (jsonwire.FormatTime). An object the SDK's type describes exactly
// is the SDK's: a version's changes are contextsvc.Changes, an event's
// data contextsvc.ContextCreatedData and its neighbours. The SDK's
// Context, Version, Webhook and Event are not used here, as their times
// are time.Time, which encoding/json writes in another form.
//
// What writes these objects by hand for speed (the store's contexts and
// versions, the events' envelopes, the state document's versions) is held
// to these by tests, byte for byte; what shows more or less of an object
// (the admin API's context and version lists, a webhook or an event with
// its account, the state document's webhook with its secret) is held to
// the names and types of these by tests; the server's tests read the
// answers into these.

// ContextJSON is the contract's Context.
type ContextJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

// VersionJSON is the contract's Version: what a version records, and the
// id of its context first.
type VersionJSON struct {
	ContextID string `json:"contextId"`
	VersionRecordJSON
}

// VersionRecordJSON is what a version records: a Version's fields after
// its contextId. The state document keeps each context's versions in this
// shape (MockStateVersion), under the context's id.
type VersionRecordJSON struct {
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Content   string             `json:"content"`
	Tags      []string           `json:"tags"`
	CreatedAt string             `json:"createdAt"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// WebhookJSON is the contract's Webhook: a registration as POST
// /v1/webhooks answers it, never with its secret.
type WebhookJSON struct {
	ID        string                 `json:"id"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

// EventJSON is the contract's Event: the envelope a delivery sends and
// signs.
type EventJSON struct {
	ID        string               `json:"id"`
	Type      contextsvc.EventType `json:"type"`
	Timestamp string               `json:"timestamp"`
	Data      json.RawMessage      `json:"data"`
}

// timeFormat is how the contract writes a time: RFC 3339 in UTC with
// millisecond precision (jsonwire.TimeFormat, which a test holds equal).
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// formatTime formats t in timeFormat, in UTC.
func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }
