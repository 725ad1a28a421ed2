package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// This file is the Go side of the admin API: what a test does to a Server
// besides sending it /v1 requests.

// Clock returns the clock the server reads all its time from (see
// [WithClock]). A test that gave a [FakeClock] advances it directly.
func (s *Server) Clock() Clock { return s.clock }

// Deliveries returns copies of the kept webhook deliveries that match f,
// in creation order; the zero filter returns them all. Every pending
// delivery is kept, and the last [DefaultHistoryLimit] (or
// [WithHistoryLimit]) to finish; GET /_mock/deliveries pages through the
// same ones. The result is never nil.
func (s *Server) Deliveries(f DeliveryFilter) []Delivery {
	ds := s.deliveries.List(f.engine())
	out := make([]Delivery, len(ds))
	for i, d := range ds {
		out[i] = publicDelivery(d)
	}
	return out
}

// Delivery returns a copy of the delivery with the given id, and whether
// it exists.
func (s *Server) Delivery(id string) (Delivery, bool) {
	d, ok := s.deliveries.Get(id)
	if !ok {
		return Delivery{}, false
	}
	return publicDelivery(d), true
}

// NextAttemptAt returns when the earliest waiting delivery attempt is due
// on the server's clock, and false when none is waiting (or deliveries
// are closed). A time at or before the clock's now is an attempt due now,
// waiting for a sender.
func (s *Server) NextAttemptAt() (time.Time, bool) { return s.deliveries.NextDue() }

// Redeliver makes a new attempt of a delivery due now (any state) and puts
// it back to pending; attempt numbers continue and the retry schedule
// starts over. It fails with an error wrapping [ErrDeliveryNotFound],
// [ErrDeliveryInFlight] (an attempt is running) or [ErrDeliveriesClosed]
// (after [Server.Close]).
func (s *Server) Redeliver(id string) (Delivery, error) {
	d, err := s.deliveries.Redeliver(id)
	if err != nil {
		return Delivery{}, err
	}
	return publicDelivery(d), nil
}

// WaitIdle blocks until no delivery attempt is due or running and, on a
// validating proxy ([WithUpstream]), no exchange is being forwarded or
// checked; or until ctx is done (it then returns ctx's error). A test
// calls it for the attempts that are due at once (an event's first, a
// redelivery); on a [FakeClock], an Advance already waits for those it
// makes due. A proxy's caller may read an answer whole before the proxy
// has checked it: call WaitIdle before [Server.ContractFindings]. Nothing
// sleeps or polls.
func (s *Server) WaitIdle(ctx context.Context) error {
	if s.proxy != nil {
		if err := s.proxy.WaitIdle(ctx); err != nil {
			return err
		}
	}
	return s.deliveries.WaitIdle(ctx)
}

// WaitForDelivery blocks until a delivery, existing or future, matches
// match, and returns a copy of it; or until ctx is done, and returns ctx's
// error. match runs without the server's locks. It sees every delivery,
// then each again after it changes, but may miss a short-lived state when
// changes come quickly: test for one that lasts (succeeded, failed, n
// attempts made).
func (s *Server) WaitForDelivery(ctx context.Context, match func(Delivery) bool) (Delivery, error) {
	d, err := s.deliveries.WaitFor(ctx, func(d delivery.Delivery) bool { return match(publicDelivery(d)) })
	if err != nil {
		return Delivery{}, err
	}
	return publicDelivery(d), nil
}

// Close stops webhook deliveries gracefully: no new attempt starts (waiting
// ones stay pending), running attempts may finish until ctx is done, then
// they are canceled and Close returns ctx's error. It also ends the
// dashboard's event streams and refuses new ones ([Server.CloseStreams]):
// nothing they would report happens any more, and an open stream would
// keep an http.Server's Shutdown waiting. The API keeps answering (the
// Server is only a handler; stop its http.Server first). Calling Close
// again waits again.
//
// With [WithStateFile], Close then writes the state file a last time (if
// the state changed since it was written), with the deliveries as they
// ended; a failure to write it is returned too. Stop the http.Server
// first, so no request changes the state after that write. Close then lets
// the file's lock go, so another server may open the file; a later Close
// with changes to write takes it back, or fails with [ErrStateFileInUse]
// if another server holds it.
func (s *Server) Close(ctx context.Context) error {
	s.CloseStreams()
	err := s.deliveries.Close(ctx)
	// Nothing is left for an advance to wait for, or to show.
	if c, ok := s.clock.(watchedClock); ok {
		c.unwatch(s)
	}
	if serr := s.closeState(); serr != nil {
		err = errors.Join(err, serr)
	}
	return err
}

// Reset empties the server as if it were new: contexts, webhooks, events,
// deliveries (running attempts are canceled and forgotten), faults,
// idempotency keys, and every key's rate-limit bucket (full again). Keys,
// options and the clock stay. It is one change: a copy of the state
// ([Server.SaveState]) or a load ([Server.LoadState]) happens wholly
// before it or wholly after.
func (s *Server) Reset() {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	// The forgotten webhooks take no delivery from an event that read them
	// just before.
	s.store.Reset()
	s.events.Reset()
	s.deliveries.Reset()
	s.faults.Clear(false)
	s.idem.Reset()
	if s.proxy != nil {
		s.proxy.Log().Reset()
	}
	for _, k := range s.keys {
		if k.limiter.Load() != nil {
			k.limiter.Store(rate.NewLimiter(rate.Limit(float64(k.perMinute)/60), k.burst))
		}
	}
	s.stateChanged()
	s.changes.Publish(changes.Change{Kind: changes.KindReset})
}

// ErrUnknownAccount is wrapped by the error [Server.EmitEvent] returns for
// an account no key belongs to.
var ErrUnknownAccount = errors.New("mockserver: unknown account")

// ErrInvalidEvent is wrapped by the error [Server.EmitEvent] returns for an
// event type or data it cannot send.
var ErrInvalidEvent = errors.New("mockserver: invalid event")

// EmitEvent records an event of any type with the given data for an
// account ("" means the default key's account) and delivers it to that
// account's webhooks subscribed to the type, exactly as the API's own
// events. It is the only way to fire team.member.added and
// team.member.removed. typ must be 1 to 100 printable ASCII characters
// without spaces, and data a JSON object; otherwise the error wraps
// [ErrInvalidEvent]. typ need not be one of the eight known types, but
// webhooks subscribe only to those, so an event of another type is
// recorded and delivered nowhere. data is not checked against the type's
// shape, so malformed payloads can be sent on purpose. ctx bounds the wait
// for room when the delivery backlog is full (see [WithDeliveryBacklog]).
func (s *Server) EmitEvent(ctx context.Context, account string, typ contextsvc.EventType, data json.RawMessage) (Event, error) {
	if account == "" {
		account = s.defaultKey.Account
	}
	if s.store.Account(account) == nil {
		return Event{}, fmt.Errorf("%w: %q", ErrUnknownAccount, account)
	}
	if err := validEventType(string(typ)); err != nil {
		return Event{}, err
	}
	var buf bytes.Buffer
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Compact(&buf, trimmed) != nil {
		return Event{}, fmt.Errorf("%w: data must be a JSON object", ErrInvalidEvent)
	}
	return Event(s.emit(ctx, account, typ, json.RawMessage(buf.Bytes()))), nil
}

// validEventType is eventTypeProblem's check as an error wrapping
// ErrInvalidEvent.
func validEventType(t string) error {
	if err := rules.EventType(t); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	return nil
}
