// Package changes is the mock server's change notifications: every part
// of the server that changes what the admin API shows (an event recorded,
// a delivery created or attempted, a webhook changed, the clock moved, a
// reset, the faults) publishes a [Change] to the [Hub], and the
// dashboard's stream (GET /_mock/stream) sends each [Subscriber] the
// changes as they come. Nothing polls, and a slow subscriber costs at most
// [Buffer] changes: past them it is told to resync instead.
//
// It owns the fan-out and its bounds; what a change means is its
// publishers' and the stream's. It imports nothing of the mock server.
package changes

import (
	"sync"
	"sync/atomic"
)

// The kinds of change, as the stream's "kind" field names them.
const (
	KindEvent    = "event"    // an event was recorded
	KindDelivery = "delivery" // a delivery was created, attempted, redelivered or ended
	KindWebhook  = "webhook"  // a webhook was registered, changed or deleted
	KindClock    = "clock"    // the clock moved (a fake clock was advanced)
	KindReset    = "reset"    // everything was forgotten
	KindFaults   = "faults"   // a fault was added, used up or cleared
	KindContract = "contract" // the validating proxy kept a finding
	KindChaos    = "chaos"    // the chaos mode was set, stopped or started over, or decided something
)

// Change is one notification, as the stream sends it (components/schemas/
// MockChange): what changed, and enough to tell whether the page shows it.
type Change struct {
	Kind string `json:"kind"`
	// ID is the event, delivery or webhook that changed.
	ID string `json:"id,omitempty"`
	// Action says what happened to it: created, attemptStarted,
	// attemptFinished, redelivered, ended (deliveries); created, changed,
	// deleted (webhooks); added, used, cleared (faults).
	Action string `json:"action,omitempty"`
	// Account owns the event, delivery or webhook.
	Account string `json:"account,omitempty"`
	// Type is the event type of an event or delivery.
	Type string `json:"type,omitempty"`
	// State is a delivery's state after the change.
	State string `json:"state,omitempty"`
	// WebhookID is a delivery's webhook.
	WebhookID string `json:"webhookId,omitempty"`
	// EventID is a delivery's event.
	EventID string `json:"eventId,omitempty"`
	// ContextID is the context an event of the API is about.
	ContextID string `json:"contextId,omitempty"`
	// Now is the clock's time after it moved.
	Now string `json:"now,omitempty"`
}

// Buffer is how many changes a subscriber may have waiting. A
// subscriber that falls further behind (a slow page, a burst of
// deliveries) loses them and gets one resync marker instead: it reloads
// what it shows. So a subscriber costs at most this many changes of
// memory, however slow it is.
const Buffer = 512

// MaxSubscribers bounds the open streams; past it GET /_mock/stream is a
// 503 with Retry-After that says so. A developer's few tabs are far below
// it (and a tab in the background closes its stream).
const MaxSubscribers = 64

// Hub fans changes out to its subscribers. publish never blocks: it
// appends to each subscriber's bounded buffer and wakes it.
type Hub struct {
	n  atomic.Int32 // subscribers, read without mu so that publish costs nothing without any
	mu sync.Mutex
	// subs are the open subscriptions; closed is set by closeAll (the
	// server shuts down), after which subscribe refuses.
	subs   map[*Subscriber]struct{}
	closed bool
}

// Subscriber is one open stream's queue of changes.
type Subscriber struct {
	ready chan struct{} // has a value when pending or resync is new
	done  chan struct{} // closed when the hub closes the subscription

	// Under the hub's mu.
	pending []Change
	resync  bool // changes were lost: the subscriber must reload
}

// Subscribers returns how many subscriptions are open.
func (h *Hub) Subscribers() int { return int(h.n.Load()) }

// Ready has a value when changes are waiting for the subscriber (take
// them).
func (sub *Subscriber) Ready() <-chan struct{} { return sub.ready }

// Done is closed when the hub closes the subscription.
func (sub *Subscriber) Done() <-chan struct{} { return sub.done }

// Subscribe adds a subscriber, or returns nil when maxSubscribers are open
// or (closed true) the hub is closed.
func (h *Hub) Subscribe() (sub *Subscriber, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, true
	}
	if len(h.subs) >= MaxSubscribers {
		return nil, false
	}
	if h.subs == nil {
		h.subs = make(map[*Subscriber]struct{})
	}
	sub = &Subscriber{ready: make(chan struct{}, 1), done: make(chan struct{})}
	h.subs[sub] = struct{}{}
	h.n.Store(int32(len(h.subs)))
	return sub, false
}

// Unsubscribe removes sub.
func (h *Hub) Unsubscribe(sub *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		h.n.Store(int32(len(h.subs)))
	}
}

// Publish queues c for every subscriber. A subscriber whose buffer is full
// loses its queue and is marked for resync instead.
func (h *Hub) Publish(c Change) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		switch {
		case sub.resync:
			// It reloads everything anyway.
		case len(sub.pending) >= Buffer:
			clear(sub.pending)
			sub.pending = sub.pending[:0]
			sub.resync = true
		default:
			sub.pending = append(sub.pending, c)
		}
		select {
		case sub.ready <- struct{}{}:
		default:
		}
	}
}

// Take returns the changes waiting for sub (appended to buf) and whether
// it must resync, and empties its queue.
func (h *Hub) Take(sub *Subscriber, buf []Change) ([]Change, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	buf = append(buf, sub.pending...)
	clear(sub.pending)
	sub.pending = sub.pending[:0]
	resync := sub.resync
	sub.resync = false
	return buf, resync
}

// CloseAll ends every subscription and refuses new ones: the server is
// shutting down, and an open stream would keep its http.Server waiting.
func (h *Hub) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for sub := range h.subs {
		close(sub.done)
	}
}
