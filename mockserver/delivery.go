package mockserver

import (
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// DeliveryState is where a webhook delivery stands: [DeliveryPending],
// [DeliverySucceeded] or [DeliveryFailed].
type DeliveryState = model.DeliveryState

// The states of a delivery, as the contract names them.
const (
	// DeliveryPending ("pending"): an attempt is due, running, or
	// scheduled as a retry.
	DeliveryPending DeliveryState = model.DeliveryPending
	// DeliverySucceeded ("succeeded"): the receiver answered an attempt
	// with a 2xx status within the time-out. No further attempt is made
	// unless redelivered.
	DeliverySucceeded DeliveryState = model.DeliverySucceeded
	// DeliveryFailed ("failed"): every attempt of the retry schedule
	// failed, or the delivery ended early (its FailureReason says why).
	// The delivery is kept and can be redelivered by hand.
	DeliveryFailed DeliveryState = model.DeliveryFailed
)

// Delivery is one event sent to one webhook: its id, the event's id and
// type, the webhook and its account, the url of the latest attempt, its
// [DeliveryState] and, when it failed, why (FailureReason), every attempt
// made so far (Attempts, oldest first), when the next is due
// (NextAttemptAt, zero when none waits) and when it was created. Values
// handed out by the mock server are copies; changing them changes
// nothing on the server. Its JSON is the admin API's (times in RFC 3339
// UTC with milliseconds), which the default decoding reads back. Its
// fields are documented with its definition, [model.Delivery].
type Delivery = model.Delivery

// DeliveryAttempt is one POST of a delivery to its webhook's URL: its
// number (from 1, counting on across redeliveries), when it was due and
// when it started on the server's clock, how long it took in real time,
// the receiver's status or the error, the start of the receiver's answer
// (cut to 4 KiB, and to 1 KiB once a later attempt has finished) and, on
// a traced server, its trace id. Succeeded reports whether the receiver
// acknowledged it. Its fields are documented with its definition,
// [model.DeliveryAttempt].
type DeliveryAttempt = model.DeliveryAttempt

// DeliveryFilter selects deliveries in a listing ([Server.Deliveries]) by
// event, webhook, state, account and event type. Each non-empty field must
// match; the zero DeliveryFilter selects every delivery. Its Match suits
// [Server.WaitForDelivery]: srv.WaitForDelivery(ctx, filter.Match).
type DeliveryFilter = model.DeliveryFilter

// DeliveryCounts is how many deliveries the server keeps in each state.
type DeliveryCounts = model.DeliveryCounts

// Errors of the delivery actions (redeliver and friends). Test them with
// errors.Is; the admin API answers them with 404, 409 and 503.
var (
	// ErrDeliveryNotFound: no delivery has the given id.
	ErrDeliveryNotFound = model.ErrDeliveryNotFound
	// ErrDeliveryInFlight: an attempt of the delivery is running; try again
	// once it has finished.
	ErrDeliveryInFlight = model.ErrDeliveryInFlight
	// ErrDeliveriesClosed: the server is shutting down and makes no new
	// delivery attempts.
	ErrDeliveriesClosed = model.ErrDeliveriesClosed
	// ErrWebhookInactive: the delivery's webhook is inactive or deleted, so
	// it takes no attempt; reactivate it first.
	ErrWebhookInactive = model.ErrWebhookInactive
)

// DefaultDeliveryTimeout (10 s) is how long one delivery attempt may take, from
// sending the request to receiving the response status, before it counts as
// failed. The network is real even when the server's clock is fake, so this
// time-out is always measured in real time.
const DefaultDeliveryTimeout = delivery.DefaultTimeout

// DefaultRetrySchedule returns the service's retry delays: after the k-th
// failed attempt of a delivery, the next one is due the k-th delay after that
// failed attempt. With these five delays a delivery gets at most six
// attempts, at +0, +1 min, +6 min, +36 min, +2 h 36 min and +26 h 36 min.
// It returns a new slice on each call, so callers may modify it.
func DefaultRetrySchedule() []time.Duration { return delivery.DefaultSchedule() }

// DefaultDeliveryBacklog (20,000) is how many webhook deliveries may wait for their
// first attempt before the events that make more wait for room: when the
// receivers (or the cores) cannot keep up with the events, the API slows
// down to the deliveries' pace instead of queueing them without bound.
// Retries waiting for their time do not count: they wait on the clock, not
// on the senders (DefaultRetryLimit bounds them).
const DefaultDeliveryBacklog = delivery.DefaultBacklog

// DefaultRetryLimit (100,000) is how many webhook deliveries may wait for a retry at
// once. A delivery whose attempt fails while that many wait gets no retry:
// it ends failed at once, saying why, and can be redelivered by hand.
// Without a bound, a receiver that fails (or a fake clock that never
// reaches the retries) would keep every delivery of the last 26 hours
// pending: at load-test speed, gigabytes within the hour. Deliveries to
// receivers that answer their first attempt never need the room.
const DefaultRetryLimit = delivery.DefaultRetryLimit
