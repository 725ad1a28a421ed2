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
// imports the model, clock, changes, ids, jsonwire, page, queue and
// telemetry packages, nothing else of the mock server: a Delivery is
// model's (mockserver.Delivery, by an alias), and the errors of its
// actions are model's (mockserver.ErrDeliveryNotFound and its
// neighbours).
package delivery

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// The engine's names for what it shares with the rest of the server
// (model's, the server's public mockserver.Delivery and its neighbours).
type (
	// Delivery is a copy of one delivery: its state and every attempt
	// made so far.
	Delivery = model.Delivery
	// Attempt is one POST of a delivery to its webhook's url.
	Attempt = model.DeliveryAttempt
	// State is where a delivery stands.
	State = model.DeliveryState
	// Filter selects deliveries in a listing; the zero Filter selects
	// every delivery.
	Filter = model.DeliveryFilter
	// Counts is how many deliveries the engine keeps in each state.
	Counts = model.DeliveryCounts
)

// The states of a delivery, as the contract names them.
const (
	Pending   = model.DeliveryPending
	Succeeded = model.DeliverySucceeded
	Failed    = model.DeliveryFailed
)
