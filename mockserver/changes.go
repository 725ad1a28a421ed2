package mockserver

import (
	"sync"
	"sync/atomic"
)

// This file is the server's change notifications: every part of the
// server that changes what the admin API shows (an event recorded, a
// delivery created or attempted, a webhook changed, the clock moved, a
// reset, the faults) publishes a change here, and the dashboard's stream
// (GET /_mock/stream, stream.go) sends each subscriber the changes as they
// come. Nothing polls.

// The kinds of change, as the stream's "kind" field names them.
const (
	changeEvent    = "event"    // an event was recorded
	changeDelivery = "delivery" // a delivery was created, attempted, redelivered or ended
	changeWebhook  = "webhook"  // a webhook was registered, changed or deleted
	changeClock    = "clock"    // the clock moved (a fake clock was advanced)
	changeReset    = "reset"    // everything was forgotten
	changeFaults   = "faults"   // a fault was added, used up or cleared
)

// change is one notification, as the stream sends it (components/schemas/
// MockChange): what changed, and enough to tell whether the page shows it.
type change struct {
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
	State DeliveryState `json:"state,omitempty"`
	// WebhookID is a delivery's webhook.
	WebhookID string `json:"webhookId,omitempty"`
	// EventID is a delivery's event.
	EventID string `json:"eventId,omitempty"`
	// ContextID is the context an event of the API is about.
	ContextID string `json:"contextId,omitempty"`
	// Now is the clock's time after it moved.
	Now string `json:"now,omitempty"`
}

// changeBuffer is how many changes a subscriber may have waiting. A
// subscriber that falls further behind (a slow page, a burst of
// deliveries) loses them and gets one resync marker instead: it reloads
// what it shows. So a subscriber costs at most this many changes of
// memory, however slow it is.
const changeBuffer = 512

// maxSubscribers bounds the open streams; past it GET /_mock/stream is a
// 503 with Retry-After that says so. A developer's few tabs are far below
// it (and a tab in the background closes its stream).
const maxSubscribers = 64

// changeHub fans changes out to its subscribers. publish never blocks: it
// appends to each subscriber's bounded buffer and wakes it.
type changeHub struct {
	n  atomic.Int32 // subscribers, read without mu so that publish costs nothing without any
	mu sync.Mutex
	// subs are the open subscriptions; closed is set by closeAll (the
	// server shuts down), after which subscribe refuses.
	subs   map[*subscriber]struct{}
	closed bool
}

// subscriber is one open stream's queue of changes.
type subscriber struct {
	ready chan struct{} // has a value when pending or resync is new
	done  chan struct{} // closed when the hub closes the subscription

	// Under the hub's mu.
	pending []change
	resync  bool // changes were lost: the subscriber must reload
}

// subscribe adds a subscriber, or returns nil when maxSubscribers are open
// or (closed true) the hub is closed.
func (h *changeHub) subscribe() (sub *subscriber, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, true
	}
	if len(h.subs) >= maxSubscribers {
		return nil, false
	}
	if h.subs == nil {
		h.subs = make(map[*subscriber]struct{})
	}
	sub = &subscriber{ready: make(chan struct{}, 1), done: make(chan struct{})}
	h.subs[sub] = struct{}{}
	h.n.Store(int32(len(h.subs)))
	return sub, false
}

// unsubscribe removes sub.
func (h *changeHub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		h.n.Store(int32(len(h.subs)))
	}
}

// publish queues c for every subscriber. A subscriber whose buffer is full
// loses its queue and is marked for resync instead.
func (h *changeHub) publish(c change) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		switch {
		case sub.resync:
			// It reloads everything anyway.
		case len(sub.pending) >= changeBuffer:
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

// take returns the changes waiting for sub (appended to buf) and whether
// it must resync, and empties its queue.
func (h *changeHub) take(sub *subscriber, buf []change) ([]change, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	buf = append(buf, sub.pending...)
	clear(sub.pending)
	sub.pending = sub.pending[:0]
	resync := sub.resync
	sub.resync = false
	return buf, resync
}

// closeAll ends every subscription and refuses new ones: the server is
// shutting down, and an open stream would keep its http.Server waiting.
func (h *changeHub) closeAll() {
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
