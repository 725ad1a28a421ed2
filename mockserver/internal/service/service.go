// Package service is the in-memory Context Management Service the mock
// server plays: its parts wired together (the store, the event log, the
// delivery engine, the faults, the chaos mode, the idempotency keys, the
// API keys, the lists' cursors, the change hub, telemetry and the state
// file) and every action that spans them: an event fired ([Service.Emit]),
// a context published, a webhook changed or deleted, the chaos mode set or
// stopped, a reset, the state copied, loaded and kept in its file, a
// close. The server's three faces are thin layers over it: the /v1 API
// (v1api), the admin API (adminapi) and the Go API (mockserver), so each
// action is done one way whichever asks.
//
// It owns the parts and the lock that makes each change of the whole
// state (a load, a reset) and each copy of it one whole change. Its
// errors are model's (mockserver's, by re-exported variables). It
// imports the parts, model and rules; nothing imports it but the faces.
package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/idempotency"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/telemetry"
)

// Config is what a Service is made of. Zero fields take the parts'
// defaults.
type Config struct {
	// Clock is the server's clock as its user gave it, which the service
	// reads the time from; Engine is the same clock as the parts arm
	// timers on (a FakeClock's engine itself, made absolute when it can
	// be).
	Clock  model.Clock
	Engine clock.Clock
	// Logger is told of changes, saves and every delivery attempt.
	Logger *slog.Logger
	// HTTPSOnly refuses webhook urls that are not https, even for
	// loopback hosts.
	HTTPSOnly bool
	// Keys are the API keys; their accounts are the service's.
	Keys *keys.Set
	// HistoryLimit bounds the events and the finished deliveries kept;
	// MaxEventBytes bounds the events in bytes.
	HistoryLimit  int
	MaxEventBytes int
	// MaxWebhooks is how many webhooks an account may have.
	MaxWebhooks int
	// Delivery configures the delivery engine; its Clock, History,
	// OnChange and Telemetry are the service's.
	Delivery delivery.Config
	// Telemetry traces and measures; nil when off.
	Telemetry *telemetry.Telemetry
	// Changes is the hub the dashboards' streams are fed from; Proxy, with
	// a validating proxy, is the proxy whose findings a reset forgets.
	Changes *changes.Hub
	Proxy   *proxy.Proxy
}

// Service is the mock server's service. Its parts are set by New and
// never replaced; each is safe for concurrent use.
type Service struct {
	// Clock is the server's clock as its user gave it; Engine the same
	// clock as the parts arm timers on.
	Clock  model.Clock
	Engine clock.Clock
	Logger *slog.Logger
	// HTTPSOnly refuses webhook urls that are not https.
	HTTPSOnly bool
	// MaxWebhooks is how many webhooks an account may have.
	MaxWebhooks int

	// Store holds every account's contexts and webhooks. Its accounts
	// are fixed once the server serves (they come from the keys, and from
	// a state file loaded at the start).
	Store *store.Store
	// Events is the event history.
	Events *events.Log
	// Deliveries is the webhook delivery engine, to which Emit hands each
	// event.
	Deliveries *delivery.Engine
	// Faults are the faults injected into /v1 requests.
	Faults *faults.Set
	// Chaos is the chaos mode: the /v1 requests it fails, the deliveries
	// it holds back and repeats. Off until set (SetChaos).
	Chaos *chaos.Mode
	// Idem holds the POSTs' idempotency keys.
	Idem *idempotency.Store
	// Keys are the API keys.
	Keys *keys.Set
	// Cursors makes the lists' cursors opaque and lets the server refuse
	// forged or corrupted ones; their key is part of the state.
	Cursors *httpapi.Cursors
	// Changes fans the server's changes out to the dashboards' streams.
	Changes *changes.Hub
	// Tel traces and measures requests, events and delivery attempts;
	// nil when off.
	Tel *telemetry.Telemetry
	// Proxy is the validating proxy; nil when the server is none.
	Proxy *proxy.Proxy

	// stateMu makes the changes of the whole state (LoadState, the state
	// file's load, Reset) and the copies of it (SaveState, the state
	// file's saves) exclude one another: each copy is one whole state, and
	// a load is never mixed with a reset or another load. Copies share it.
	// It comes before every other lock, and only those take it: requests
	// and deliveries change the state under the finer locks alone.
	stateMu sync.RWMutex

	// persist writes the state file (statefile.go); nil without one.
	// persistDeliveries is set once the file is loaded: from then on
	// every change of a delivery is a change of the state.
	persist           *statefile.Keeper
	persistDeliveries atomic.Bool
}

// New wires the parts of a service. It starts no goroutine: the delivery
// engine starts its senders when an attempt is due.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Changes == nil {
		cfg.Changes = new(changes.Hub)
	}
	s := &Service{
		Clock: cfg.Clock, Engine: cfg.Engine, Logger: cfg.Logger, HTTPSOnly: cfg.HTTPSOnly, MaxWebhooks: cfg.MaxWebhooks,
		Store:   store.New(),
		Events:  events.NewLog(cfg.HistoryLimit, cfg.MaxEventBytes),
		Faults:  faults.NewSet(cfg.Changes, model.MaxFaults),
		Idem:    new(idempotency.Store),
		Keys:    cfg.Keys,
		Cursors: httpapi.NewCursors(),
		Changes: cfg.Changes,
		Tel:     cfg.Telemetry,
		Proxy:   cfg.Proxy,
	}
	s.Chaos = chaos.New(chaos.Config{Logger: cfg.Logger, OnChange: func() {
		s.Changes.Publish(changes.Change{Kind: changes.KindChaos})
	}})
	dc := cfg.Delivery
	dc.Clock, dc.Logger, dc.History, dc.Telemetry = cfg.Engine, cfg.Logger, cfg.HistoryLimit, cfg.Telemetry
	dc.OnChange = s.deliveryChanged
	s.Deliveries = delivery.New(dc)
	s.Keys.Bind(s.Store)
	return s
}

// Now is the time the service stamps what it records with: the clock's
// now, in UTC, to the millisecond, as the contract writes times.
func (s *Service) Now() time.Time { return s.Clock.Now().UTC().Truncate(time.Millisecond) }

// deliveryChanged is told of every change of a delivery, under the
// deliverer's lock: it notes a change of the state (with a state file) and
// tells the dashboard's streams. Neither blocks.
func (s *Service) deliveryChanged(c changes.Change) {
	if s.persistDeliveries.Load() {
		s.StateChanged()
	}
	s.Changes.Publish(c)
}

// Moved and Settle make the service a watcher of its fake clock
// (clock.Watcher): the dashboards are told each time the clock reaches,
// and an advance waits at each due time until the delivery attempts due
// then have run.
func (s *Service) Moved(now time.Time) {
	s.Changes.Publish(changes.Change{Kind: changes.KindClock, Now: jsonwire.FormatTime(now)})
}

// Settle returns once no delivery attempt is due or running.
func (s *Service) Settle() { s.Deliveries.Settle() }

// Reset empties the service as if it were new: contexts, webhooks,
// events, deliveries (running attempts are canceled and forgotten),
// faults, idempotency keys, the proxy's findings, and every key's bucket
// (full again); a chaos mode starts over (its ordinals from 1, the same
// settings and seed). Keys, options and the clock stay. It is one change
// of the whole state.
func (s *Service) Reset() {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	// The forgotten webhooks take no delivery from an event that read them
	// just before.
	s.Store.Reset()
	s.Events.Reset()
	s.Deliveries.Reset()
	s.Faults.Clear(false)
	s.Idem.Reset()
	if s.Proxy != nil {
		s.Proxy.Log().Reset()
	}
	s.Keys.Refill()
	s.Chaos.Restart(s.Now())
	s.StateChanged()
	s.Changes.Publish(changes.Change{Kind: changes.KindReset})
}

// Close stops the deliveries gracefully (see delivery.Engine.Close), then,
// with a state file, writes it a last time if the state changed since it
// was written, and lets the file's lock go. The dashboards' streams and
// the clock are the caller's to let go.
func (s *Service) Close(ctx context.Context) error {
	err := s.Deliveries.Close(ctx)
	if serr := s.closeState(); serr != nil {
		err = errors.Join(err, serr)
	}
	return err
}
