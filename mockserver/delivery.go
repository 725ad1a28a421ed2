package mockserver

import (
	"errors"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
)

// DeliveryState is where a webhook delivery stands.
type DeliveryState string

// The states of a delivery, as the contract names them.
const (
	// DeliveryPending: an attempt is due, running, or scheduled as a retry.
	DeliveryPending DeliveryState = "pending"
	// DeliverySucceeded: the receiver answered an attempt with a 2xx status
	// within the time-out. No further attempt is made unless redelivered.
	DeliverySucceeded DeliveryState = "succeeded"
	// DeliveryFailed: every attempt of the retry schedule failed. The
	// delivery is kept and can be redelivered by hand.
	DeliveryFailed DeliveryState = "failed"
)

// DefaultDeliveryTimeout is how long one delivery attempt may take, from
// sending the request to receiving the response status, before it counts as
// failed. The network is real even when the server's clock is fake, so this
// time-out is always measured in real time.
const DefaultDeliveryTimeout = 10 * time.Second

// DefaultRetrySchedule returns the service's retry delays: after the k-th
// failed attempt of a delivery, the next one is due the k-th delay after that
// failed attempt. With these five delays a delivery gets at most six
// attempts, at +0, +1 min, +6 min, +36 min, +2 h 36 min and +26 h 36 min.
// It returns a new slice on each call, so callers may modify it.
func DefaultRetrySchedule() []time.Duration { return delivery.DefaultSchedule() }

// Delivery is one event sent to one webhook: its state and every attempt made
// so far. Values handed out by the mock server are copies; changing them
// changes nothing on the server.
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
	// room in the delivery backlog ([WithDeliveryBacklog]), so no attempt
	// was made, or an attempt failed while too many deliveries waited for
	// a retry ([WithRetryLimit]), so none was scheduled. It is empty unless
	// State is failed.
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

// DeliveryAttempt is one POST of a delivery to its webhook's URL.
type DeliveryAttempt struct {
	// Number counts the attempts of a delivery from 1. It keeps counting
	// across manual redeliveries; it is sent in X-Service-Delivery-Attempt.
	Number int `json:"number"`
	// ScheduledAt is when the attempt was due on the server's clock.
	ScheduledAt time.Time `json:"scheduledAt"`
	// StartedAt is when the attempt started on the server's clock. It may be
	// later than ScheduledAt when the senders were busy on the real clock;
	// on a FakeClock it is ScheduledAt (an advance stops at each due
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
	// later attempt has finished (what a delivery keeps stays bounded;
	// see the package's "What is kept").
	ResponseSnippet string `json:"responseSnippet,omitempty"`
	// TraceID is the OpenTelemetry trace id (32 hex digits) of the
	// attempt's span: its event's trace, which holds the request that
	// fired the event, every attempt and the receiver's handling. It is
	// empty unless the server is traced ([WithTracerProvider]). The
	// dashboard shows it.
	TraceID string `json:"traceId,omitempty"`
}

// Succeeded reports whether the receiver acknowledged this attempt with a
// 2xx status.
func (a DeliveryAttempt) Succeeded() bool { return delivery.Attempt(a).Succeeded() }

// DeliveryFilter selects deliveries in a listing. Each non-empty field must
// match; the zero DeliveryFilter selects every delivery.
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
// [Server.WaitForDelivery]: srv.WaitForDelivery(ctx, filter.Match).
func (f DeliveryFilter) Match(d Delivery) bool {
	return f.engine().MatchFields(d.EventID, d.WebhookID, delivery.State(d.State), d.Account, d.EventType)
}

// engine is f as the delivery engine takes it.
func (f DeliveryFilter) engine() delivery.Filter {
	return delivery.Filter{EventID: f.EventID, WebhookID: f.WebhookID, State: delivery.State(f.State), Account: f.Account, EventType: f.EventType}
}

// DeliveryCounts is how many deliveries the server keeps in each state.
type DeliveryCounts struct {
	Pending   int `json:"pending"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// Errors of the delivery actions (redeliver and friends). Test them with
// errors.Is; the admin API answers them with 404, 409 and 503.
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

// deliveryErrors are the errors the delivery engine's actions wrap.
var deliveryErrors = delivery.Errors{
	NotFound: ErrDeliveryNotFound, InFlight: ErrDeliveryInFlight, Closed: ErrDeliveriesClosed, Inactive: ErrWebhookInactive,
}

// MarshalJSON encodes the delivery as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision; nextAttemptAt is left out when
// zero and attempts is always an array. The default decoding reads it back.
func (d Delivery) MarshalJSON() ([]byte, error) { return d.engine().MarshalJSON() }

// MarshalJSON encodes the attempt as the admin API shows it, its times in
// RFC 3339 UTC with millisecond precision and its duration in nanoseconds.
func (a DeliveryAttempt) MarshalJSON() ([]byte, error) { return delivery.Attempt(a).MarshalJSON() }

// publicDelivery converts the engine's copy of a delivery.
func publicDelivery(d delivery.Delivery) Delivery {
	out := Delivery{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, WebhookID: d.WebhookID, Account: d.Account, URL: d.URL,
		State: DeliveryState(d.State), FailureReason: d.FailureReason, Attempts: make([]DeliveryAttempt, len(d.Attempts)),
		NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt,
	}
	for i, a := range d.Attempts {
		out.Attempts[i] = DeliveryAttempt(a)
	}
	return out
}

// engine converts d to the engine's form.
func (d Delivery) engine() delivery.Delivery {
	out := delivery.Delivery{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, WebhookID: d.WebhookID, Account: d.Account, URL: d.URL,
		State: delivery.State(d.State), FailureReason: d.FailureReason, NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt,
	}
	if d.Attempts != nil {
		out.Attempts = make([]delivery.Attempt, len(d.Attempts))
		for i, a := range d.Attempts {
			out.Attempts[i] = delivery.Attempt(a)
		}
	}
	return out
}

// DefaultDeliveryBacklog is how many webhook deliveries may wait for their
// first attempt before the events that make more wait for room: when the
// receivers (or the cores) cannot keep up with the events, the API slows
// down to the deliveries' pace instead of queueing them without bound.
// Retries waiting for their time do not count: they wait on the clock, not
// on the senders (DefaultRetryLimit bounds them).
const DefaultDeliveryBacklog = 20_000

// DefaultRetryLimit is how many webhook deliveries may wait for a retry at
// once. A delivery whose attempt fails while that many wait gets no retry:
// it ends failed at once, saying why, and can be redelivered by hand.
// Without a bound, a receiver that fails (or a fake clock that never
// reaches the retries) would keep every delivery of the last 26 hours
// pending: at load-test speed, gigabytes within the hour. Deliveries to
// receivers that answer their first attempt never need the room.
const DefaultRetryLimit = 100_000
