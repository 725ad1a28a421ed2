// Package delivery is the mock server's webhook delivery engine: it
// records each delivery of an event to a webhook, POSTs its attempts
// (signed, on a bounded pool of senders), schedules retries on the
// server's clock, keeps a bounded history of finished deliveries, and
// lists and pages them.
//
// It owns the deliveries, their schedule and the one place where every
// attempt is made (Engine.attempt). What it needs of a webhook is a
// [Hook]: its id and account, and where an attempt goes now; it never
// touches the stored webhooks, the events' history or the store. It
// imports the clock, changes, ids, jsonwire, page, queue and telemetry
// packages, nothing else of the mock server; mockserver.Delivery and its neighbours
// are the public forms of this package's types.
package delivery

import (
	"encoding/json"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// State is where a delivery stands: mockserver.DeliveryState.
type State string

// The states of a delivery, as the contract names them.
const (
	// Pending: an attempt is due, running, or scheduled as a retry.
	Pending State = "pending"
	// Succeeded: the receiver answered an attempt with a 2xx status within
	// the time-out.
	Succeeded State = "succeeded"
	// Failed: every attempt of the retry schedule failed, or the delivery
	// ended early (its FailureReason says why).
	Failed State = "failed"
)

// Delivery is a copy of one delivery: its state and every attempt made so
// far. Its fields are those of mockserver.Delivery (which converts from
// it), its attempts of this package's type.
type Delivery struct {
	ID            string
	EventID       string
	EventType     contextsvc.EventType
	WebhookID     string
	Account       string
	URL           string
	State         State
	FailureReason string
	Attempts      []Attempt
	NextAttemptAt time.Time
	CreatedAt     time.Time
}

// Attempt is one POST of a delivery to its webhook's url: the fields of
// mockserver.DeliveryAttempt, which converts to and from it.
type Attempt struct {
	Number          int
	ScheduledAt     time.Time
	StartedAt       time.Time
	Duration        time.Duration
	StatusCode      int
	Error           string
	ResponseSnippet string
	// TraceID is the trace id of the attempt's span (its event's trace),
	// in hex, when the server is traced; empty otherwise.
	TraceID string
}

// Succeeded reports whether the receiver acknowledged this attempt with a
// 2xx status.
func (a Attempt) Succeeded() bool {
	return a.Error == "" && a.StatusCode >= 200 && a.StatusCode <= 299
}

// Filter selects deliveries in a listing. Each non-empty field must match;
// the zero Filter selects every delivery.
type Filter struct {
	EventID   string
	WebhookID string
	State     State
	Account   string
	EventType contextsvc.EventType
}

// Match reports whether d passes the filter.
func (f Filter) Match(d Delivery) bool {
	return f.MatchFields(d.EventID, d.WebhookID, d.State, d.Account, d.EventType)
}

// MatchFields is Match over a delivery's fields, so a delivery is filtered
// without being copied first.
func (f Filter) MatchFields(eventID, webhookID string, state State, account string, eventType contextsvc.EventType) bool {
	return (f.EventID == "" || f.EventID == eventID) &&
		(f.WebhookID == "" || f.WebhookID == webhookID) &&
		(f.State == "" || f.State == state) &&
		(f.Account == "" || f.Account == account) &&
		(f.EventType == "" || f.EventType == eventType)
}

// Counts is how many deliveries the engine keeps in each state.
type Counts struct {
	Pending   int `json:"pending"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// deliveryJSON is the wire shape of a Delivery: times as the contract
// writes them (RFC 3339, UTC, milliseconds).
type deliveryJSON struct {
	ID            string               `json:"id"`
	EventID       string               `json:"eventId"`
	EventType     contextsvc.EventType `json:"eventType"`
	WebhookID     string               `json:"webhookId"`
	Account       string               `json:"account"`
	URL           string               `json:"url"`
	State         State                `json:"state"`
	FailureReason string               `json:"failureReason,omitempty"`
	Attempts      []Attempt            `json:"attempts"`
	NextAttemptAt string               `json:"nextAttemptAt,omitempty"`
	CreatedAt     string               `json:"createdAt"`
}

// MarshalJSON encodes the delivery as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision; nextAttemptAt is left out when
// zero and attempts is always an array.
func (d Delivery) MarshalJSON() ([]byte, error) {
	j := deliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, WebhookID: d.WebhookID, Account: d.Account, URL: d.URL,
		State: d.State, FailureReason: d.FailureReason, Attempts: d.Attempts, CreatedAt: jsonwire.FormatTime(d.CreatedAt),
	}
	if j.Attempts == nil {
		j.Attempts = []Attempt{}
	}
	if !d.NextAttemptAt.IsZero() {
		j.NextAttemptAt = jsonwire.FormatTime(d.NextAttemptAt)
	}
	return json.Marshal(j)
}

type attemptJSON struct {
	Number          int    `json:"number"`
	ScheduledAt     string `json:"scheduledAt"`
	StartedAt       string `json:"startedAt"`
	Duration        int64  `json:"durationNs"`
	StatusCode      int    `json:"statusCode,omitempty"`
	Error           string `json:"error,omitempty"`
	ResponseSnippet string `json:"responseSnippet,omitempty"`
	TraceID         string `json:"traceId,omitempty"`
}

// MarshalJSON encodes the attempt as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision and its duration in nanoseconds.
func (a Attempt) MarshalJSON() ([]byte, error) {
	return json.Marshal(attemptJSON{
		Number: a.Number, ScheduledAt: jsonwire.FormatTime(a.ScheduledAt), StartedAt: jsonwire.FormatTime(a.StartedAt),
		Duration: int64(a.Duration), StatusCode: a.StatusCode, Error: a.Error, ResponseSnippet: a.ResponseSnippet,
		TraceID: a.TraceID,
	})
}
