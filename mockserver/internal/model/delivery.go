package model

import (
	"encoding/json"
	"errors"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// DeliveryState is where a webhook delivery stands:
// mockserver.DeliveryState.
type DeliveryState string

// The states of a delivery, as the contract names them.
const (
	// DeliveryPending: an attempt is due, running, or scheduled as a retry.
	DeliveryPending DeliveryState = "pending"
	// DeliverySucceeded: the receiver answered an attempt with a 2xx status
	// within the time-out. No further attempt is made unless redelivered.
	DeliverySucceeded DeliveryState = "succeeded"
	// DeliveryFailed: every attempt of the retry schedule failed, or the
	// delivery ended early (its FailureReason says why). The delivery is
	// kept and can be redelivered by hand.
	DeliveryFailed DeliveryState = "failed"
)

// Delivery is one event sent to one webhook, its state and every attempt
// made so far: mockserver.Delivery. The delivery engine hands out copies.
type Delivery struct {
	// ID is the delivery id (prefix dlv_), also sent in the
	// X-Service-Delivery header.
	ID string `json:"id"`
	// EventID is the id of the delivered event. It is the same on every
	// attempt and every webhook, so receivers can deduplicate by it.
	EventID string `json:"eventId"`
	// EventType is the type of the delivered event.
	EventType contextsvc.EventType `json:"eventType"`
	// WebhookID is the webhook the event is delivered to.
	WebhookID string `json:"webhookId"`
	// Account owns the webhook, and the event.
	Account string `json:"account"`
	// URL is where the latest attempt was POSTed; before the first, the
	// webhook's url when the delivery was created. Each attempt goes to
	// the webhook's url as it is when the attempt starts, so a retry after
	// the url changed goes to the new one.
	URL string `json:"url"`
	// State is pending, succeeded or failed.
	State DeliveryState `json:"state"`
	// FailureReason says why a failed delivery failed: every attempt of
	// the retry schedule failed (the attempts' errors say how), its
	// webhook was deactivated or deleted, which ends its waiting retries at
	// once, the request that fired its event ended while it waited for
	// room in the delivery backlog (mockserver.WithDeliveryBacklog), so no
	// attempt was made, or an attempt failed while too many deliveries
	// waited for a retry (mockserver.WithRetryLimit), so none was
	// scheduled. It is empty unless State is failed.
	FailureReason string `json:"failureReason,omitempty"`
	// Attempts are the finished attempts, oldest first. An attempt that is
	// still running is not listed yet.
	Attempts []DeliveryAttempt `json:"attempts"`
	// NextAttemptAt is when the next attempt is due on the server's clock.
	// It is zero when no attempt is waiting: the delivery is finished, or its
	// attempt is running right now.
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
	// CreatedAt is when the delivery was created on the server's clock.
	CreatedAt time.Time `json:"createdAt"`
}

// deliveryJSON is the wire shape of a Delivery: its fields under the names
// its tags read back (TestAdminShapesFollowTheWire), the times as the
// contract writes them (RFC 3339, UTC, milliseconds).
type deliveryJSON struct {
	ID            string               `json:"id"`
	EventID       string               `json:"eventId"`
	EventType     contextsvc.EventType `json:"eventType"`
	WebhookID     string               `json:"webhookId"`
	Account       string               `json:"account"`
	URL           string               `json:"url"`
	State         DeliveryState        `json:"state"`
	FailureReason string               `json:"failureReason,omitempty"`
	Attempts      []DeliveryAttempt    `json:"attempts"`
	NextAttemptAt string               `json:"nextAttemptAt,omitempty"`
	CreatedAt     string               `json:"createdAt"`
}

// MarshalJSON encodes the delivery as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision; nextAttemptAt is left out when
// zero and attempts is always an array. The default decoding reads it back.
func (d Delivery) MarshalJSON() ([]byte, error) {
	j := deliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, WebhookID: d.WebhookID, Account: d.Account, URL: d.URL,
		State: d.State, FailureReason: d.FailureReason, Attempts: d.Attempts, CreatedAt: formatTime(d.CreatedAt),
	}
	if j.Attempts == nil {
		j.Attempts = []DeliveryAttempt{}
	}
	if !d.NextAttemptAt.IsZero() {
		j.NextAttemptAt = formatTime(d.NextAttemptAt)
	}
	return json.Marshal(j)
}

// DeliveryAttempt is one POST of a delivery to its webhook's URL:
// mockserver.DeliveryAttempt.
type DeliveryAttempt struct {
	// Number counts the attempts of a delivery from 1. It keeps counting
	// across manual redeliveries; it is sent in X-Service-Delivery-Attempt.
	Number int `json:"number"`
	// ScheduledAt is when the attempt was due on the server's clock.
	ScheduledAt time.Time `json:"scheduledAt"`
	// StartedAt is when the attempt started on the server's clock. It may be
	// later than ScheduledAt when the senders were busy on the real clock;
	// on a fake clock it is ScheduledAt (an advance stops at each due
	// time), unless the attempt was overdue when the server got it (a
	// state loaded after its due time).
	StartedAt time.Time `json:"startedAt"`
	// Duration is how long the attempt took in real time (the network is
	// real even when the server's clock is fake).
	Duration time.Duration `json:"durationNs"`
	// StatusCode is the receiver's HTTP status, 0 when none was received
	// (time-out, refused or reset connection).
	StatusCode int `json:"statusCode,omitempty"`
	// Error says why the attempt failed; empty when it succeeded.
	Error string `json:"error,omitempty"`
	// ResponseSnippet is the start of the receiver's response body, cut to
	// 4 KiB while the attempt is its delivery's latest, to 1 KiB once a
	// later attempt has finished (what a delivery keeps stays bounded).
	ResponseSnippet string `json:"responseSnippet,omitempty"`
	// TraceID is the OpenTelemetry trace id (32 hex digits) of the
	// attempt's span: its event's trace, which holds the request that
	// fired the event, every attempt and the receiver's handling. It is
	// empty unless the server is traced (mockserver.WithTracerProvider).
	// The dashboard shows it.
	TraceID string `json:"traceId,omitempty"`
	// Chaos is what the server's chaos mode did to this attempt
	// (mockserver.WithChaos): held it back, or sent it as a duplicate of
	// the acknowledged attempt before it; zero when nothing.
	Chaos ChaosEffect `json:"chaos,omitzero"`
}

// Succeeded reports whether the receiver acknowledged this attempt with a
// 2xx status.
func (a DeliveryAttempt) Succeeded() bool {
	return a.Error == "" && a.StatusCode >= 200 && a.StatusCode <= 299
}

// attemptJSON is the wire shape of a DeliveryAttempt, as deliveryJSON is
// a Delivery's.
type attemptJSON struct {
	Number          int         `json:"number"`
	ScheduledAt     string      `json:"scheduledAt"`
	StartedAt       string      `json:"startedAt"`
	Duration        int64       `json:"durationNs"`
	StatusCode      int         `json:"statusCode,omitempty"`
	Error           string      `json:"error,omitempty"`
	ResponseSnippet string      `json:"responseSnippet,omitempty"`
	TraceID         string      `json:"traceId,omitempty"`
	Chaos           ChaosEffect `json:"chaos,omitzero"`
}

// MarshalJSON encodes the attempt as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision, its duration in nanoseconds,
// and what chaos did to it (chaos, left out when nothing) with its delay in
// nanoseconds.
func (a DeliveryAttempt) MarshalJSON() ([]byte, error) {
	return json.Marshal(attemptJSON{
		Number: a.Number, ScheduledAt: formatTime(a.ScheduledAt), StartedAt: formatTime(a.StartedAt),
		Duration: int64(a.Duration), StatusCode: a.StatusCode, Error: a.Error, ResponseSnippet: a.ResponseSnippet,
		TraceID: a.TraceID, Chaos: a.Chaos,
	})
}

// DeliveryFilter selects deliveries in a listing: mockserver.DeliveryFilter.
// Each non-empty field must match; the zero DeliveryFilter selects every
// delivery.
type DeliveryFilter struct {
	// EventID keeps the deliveries of this event.
	EventID string
	// WebhookID keeps the deliveries to this webhook.
	WebhookID string
	// State keeps the deliveries in this state.
	State DeliveryState
	// Account keeps the deliveries of this account's events (to its
	// webhooks).
	Account string
	// EventType keeps the deliveries of events of this type.
	EventType contextsvc.EventType
}

// Match reports whether d passes the filter. It suits
// mockserver.Server.WaitForDelivery: srv.WaitForDelivery(ctx, filter.Match).
func (f DeliveryFilter) Match(d Delivery) bool {
	return MatchDelivery(f, d.EventID, d.WebhookID, d.State, d.Account, d.EventType)
}

// MatchDelivery is f.Match over a delivery's fields, so that the delivery
// engine filters its records without copying them first.
func MatchDelivery(f DeliveryFilter, eventID, webhookID string, state DeliveryState, account string, eventType contextsvc.EventType) bool {
	return (f.EventID == "" || f.EventID == eventID) &&
		(f.WebhookID == "" || f.WebhookID == webhookID) &&
		(f.State == "" || f.State == state) &&
		(f.Account == "" || f.Account == account) &&
		(f.EventType == "" || f.EventType == eventType)
}

// DeliveryCounts is how many deliveries the server keeps in each state:
// mockserver.DeliveryCounts.
type DeliveryCounts struct {
	Pending   int `json:"pending"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// Errors of the delivery actions (redeliver and friends), which the admin
// API answers with 404, 409 and 503.
var (
	// ErrDeliveryNotFound: no delivery has the given id.
	ErrDeliveryNotFound = errors.New("mockserver: delivery not found")
	// ErrDeliveryInFlight: an attempt of the delivery is running; try again
	// once it has finished.
	ErrDeliveryInFlight = errors.New("mockserver: delivery attempt in flight")
	// ErrDeliveriesClosed: the server is shutting down and makes no new
	// delivery attempts.
	ErrDeliveriesClosed = errors.New("mockserver: deliveries are closed")
	// ErrWebhookInactive: the delivery's webhook is inactive or deleted, so
	// it takes no attempt; reactivate it first.
	ErrWebhookInactive = errors.New("mockserver: webhook inactive or deleted")
)
