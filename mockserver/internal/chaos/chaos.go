// Package chaos is the mock server's chaos mode: its settings, read from a
// SPEC ([Parse]) or checked as given ([Check]), and the decisions drawn
// from them ([Mode], [Run], [Ticket]): which /v1 request fails and with
// what status, which delivery is held back and how long, which attempt a
// receiver acknowledged is sent again and when. It counts and keeps the
// decisions that changed something (the newest, bounded) and logs each at
// Debug.
//
// Every decision is a draw keyed on the seed, the kind of decision and
// ordinals that the requests alone decide, never on an id (ids are
// random) nor on a generator the goroutines take turns at: SHA-256 of
// (seed, kind, ordinals), whose first 64 bits are compared with the
// probability and whose next 64 pick the status or the delay. The ordinals:
//   - a /v1 request: its place among the requests to a /v1 operation
//     since the mode was set, counted as the server routes it, before its
//     key, rate limit and faults are checked (so a request refused for its
//     key or its rate limit still takes its place);
//   - a delivery: its event's place among the events fired since the mode
//     was set, and its own among the event's deliveries (the account's
//     webhooks subscribed to the type, in the order they were
//     registered); a duplicate, the number of the attempt acknowledged.
//
// So the same seed and the same requests, sent one after another, give the
// same decisions, whatever the timing of the server's goroutines; requests
// sent at once are counted in the order they arrive. Setting the mode, and
// a reset of the server, start the ordinals over.
//
// It owns the settings' rules, the draws and the decisions' record. It does
// not apply them: the /v1 API (v1api) answers the failed requests and the
// delivery engine holds and repeats attempts; the service sets and stops
// the mode. It imports model only.
package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Chaos is a chaos mode's settings (model.Chaos, mockserver.Chaos).
type Chaos = model.Chaos

// The kinds of decision, each drawn apart from the others.
const (
	kindAPIError byte = iota + 1
	kindReorder
	kindDuplicate
)

// apiStatuses are the statuses a failed request is answered with, those
// the contract lets the service answer any request: 429 (with
// Retry-After), 500, and a gateway's 502 and 503.
var apiStatuses = [...]int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
	http.StatusServiceUnavailable}

// maxPath is how much of a failed request's path a decision keeps.
const maxPath = 256

// Config is what a Mode is made of.
type Config struct {
	// Logger is told of the mode set and stopped (Info) and of each
	// decision (Debug). nil discards.
	Logger *slog.Logger
	// OnChange is told after the mode is set, stopped or started over,
	// and after each decision is recorded. It must not block.
	OnChange func()
	// ChooseSeed chooses the seed of a mode set without one; nil draws
	// one from 1 to 999,999,999 (short enough to type again).
	ChooseSeed func() uint64
}

// Mode is a server's chaos mode: off, or a Run of settings. It is safe
// for concurrent use; off, it costs a request one atomic load.
type Mode struct {
	cfg Config
	// mu makes Set, Stop and Restart one at a time; readers load run.
	mu  sync.Mutex
	run atomic.Pointer[Run]
}

// New returns a mode that is off.
func New(cfg Config) *Mode {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ChooseSeed == nil {
		cfg.ChooseSeed = func() uint64 { return rand.Uint64N(999_999_999) + 1 }
	}
	return &Mode{cfg: cfg}
}

// Run is one setting of the mode, from when it was set (or started over)
// to when it is changed: its settings, its ordinals and its decisions.
type Run struct {
	mode    *Mode
	c       Chaos // the Delay filled in, the Seed chosen if none was given
	chosen  bool
	since   time.Time
	delayMs uint64

	requests, events            atomic.Uint64
	apiErrors, held, duplicates atomic.Uint64

	mu sync.Mutex
	// recent holds the newest decisions, a ring: next is where the next
	// goes, n how many it holds.
	recent  [model.MaxChaosDecisions]model.ChaosDecision
	next, n int
}

// Current returns the run in force, or nil when the mode is off.
func (m *Mode) Current() *Run { return m.run.Load() }

// Set puts c in force from now (now is the server clock's), its ordinals
// starting at 1, and returns it as in force: its seed chosen when c has
// none, its delay filled in. c that Check refuses is its error, and the
// mode is left as it was.
func (m *Mode) Set(c Chaos, now time.Time) (model.ChaosReport, error) {
	if err := Check(c); err != nil {
		return model.ChaosReport{}, err
	}
	m.mu.Lock()
	chosen := c.Seed == 0
	if chosen {
		c.Seed = m.cfg.ChooseSeed()
	}
	if c.Delay == 0 {
		c.Delay = model.DefaultChaosDelay
	}
	r := m.start(c, chosen, now)
	m.mu.Unlock()
	m.cfg.Logger.Info("chaos mode on: the same seed and the same requests give the same decisions (replay a run with this SPEC)",
		"chaos", c.String(), "seedChosen", chosen)
	m.changed()
	return r.Report(), nil
}

// start makes a run of c the one in force. The caller holds mu.
func (m *Mode) start(c Chaos, chosen bool, now time.Time) *Run {
	r := &Run{mode: m, c: c, chosen: chosen, since: now, delayMs: uint64(c.Delay / time.Millisecond)}
	m.run.Store(r)
	return r
}

// Stop turns the mode off, and reports whether it was on.
func (m *Mode) Stop() bool {
	m.mu.Lock()
	was := m.run.Swap(nil) != nil
	m.mu.Unlock()
	if was {
		m.cfg.Logger.Info("chaos mode off")
		m.changed()
	}
	return was
}

// Restart starts the run in force over from now (a reset of the server):
// the same settings and seed, the ordinals from 1, no decision yet.
func (m *Mode) Restart(now time.Time) {
	m.mu.Lock()
	r := m.run.Load()
	if r != nil {
		m.start(r.c, r.chosen, now)
	}
	m.mu.Unlock()
	if r != nil {
		m.changed()
	}
}

// Report returns the mode as it stands; the zero report (On false) when
// it is off.
func (m *Mode) Report() model.ChaosReport {
	if r := m.run.Load(); r != nil {
		return r.Report()
	}
	return model.ChaosReport{}
}

func (m *Mode) changed() {
	if m.cfg.OnChange != nil {
		m.cfg.OnChange()
	}
}

// Settings returns the run's settings, its seed and delay as used.
func (r *Run) Settings() Chaos { return r.c }

// live reports whether r is still the run in force: a decision of a run
// that was changed or stopped is not made.
func (r *Run) live() bool { return r.mode.run.Load() == r }

// Report returns the run's settings, counts and newest decisions.
func (r *Run) Report() model.ChaosReport {
	rep := model.ChaosReport{
		On: true, Chaos: r.c, SeedChosen: r.chosen, Since: r.since,
		Requests: r.requests.Load(), Events: r.events.Load(),
		APIErrors: r.apiErrors.Load(), Held: r.held.Load(), Duplicates: r.duplicates.Load(),
	}
	r.mu.Lock()
	rep.Decisions = make([]model.ChaosDecision, r.n)
	for i := range r.n {
		rep.Decisions[i] = r.recent[(r.next-1-i+len(r.recent))%len(r.recent)]
	}
	r.mu.Unlock()
	return rep
}

// draw is the decision of kind for the ordinals a, b and c: u uniform in
// [0, 1), to compare with a probability, and x, 64 more bits to pick with.
func (r *Run) draw(kind byte, a, b, c uint64) (u float64, x uint64) {
	var in [33]byte
	binary.LittleEndian.PutUint64(in[0:], r.c.Seed)
	in[8] = kind
	binary.LittleEndian.PutUint64(in[9:], a)
	binary.LittleEndian.PutUint64(in[17:], b)
	binary.LittleEndian.PutUint64(in[25:], c)
	sum := sha256.Sum256(in[:])
	return float64(binary.LittleEndian.Uint64(sum[0:8])>>11) / (1 << 53), binary.LittleEndian.Uint64(sum[8:16])
}

// delay picks a delay from 1 ms to the run's Delay, in whole milliseconds.
func (r *Run) delay(x uint64) time.Duration {
	return time.Duration(1+x%r.delayMs) * time.Millisecond
}

// RequestDraw is the decision for one /v1 request: its ordinal, and the
// status to fail it with (0: it runs).
type RequestDraw struct {
	run    *Run
	N      uint64
	Status int
}

// NextRequest counts a /v1 request as it is routed and draws its
// decision.
func (r *Run) NextRequest() RequestDraw {
	n := r.requests.Add(1)
	if r.c.APIError == 0 {
		return RequestDraw{N: n}
	}
	u, x := r.draw(kindAPIError, n, 0, 0)
	if u >= r.c.APIError {
		return RequestDraw{N: n}
	}
	return RequestDraw{run: r, N: n, Status: apiStatuses[x%uint64(len(apiStatuses))]}
}

// RetryAfter is the Retry-After the failure carries: 1 s with a 429 (the
// contract's least), none with the others.
func (d RequestDraw) RetryAfter() time.Duration {
	if d.Status == http.StatusTooManyRequests {
		return time.Second
	}
	return 0
}

// Seed is the seed the decision was drawn from.
func (d RequestDraw) Seed() uint64 { return d.run.c.Seed }

// Failed records that the request of d was failed as d says, at the
// server clock's at.
func (d RequestDraw) Failed(at time.Time, method, path, requestID string) {
	if len(path) > maxPath {
		// Cut on a character's boundary: the record is JSON's.
		path = strings.ToValidUTF8(path[:maxPath], "")
	}
	d.run.apiErrors.Add(1)
	d.run.record(model.ChaosDecision{Action: model.ChaosAPIError, At: at, Request: d.N, Method: method, Path: path,
		RequestID: requestID, Status: d.Status},
		slog.Uint64("request", d.N), slog.String("method", method), slog.String("path", path), slog.Int("status", d.Status),
		slog.String("requestId", requestID))
}

// NextEvent counts an event as it is fired and returns its ordinal.
func (r *Run) NextEvent() uint64 { return r.events.Add(1) }

// Ticket is what a delivery's decisions are keyed on: its event's
// ordinal and its own place among the event's deliveries. The zero Ticket
// (chaos off, or a run that neither holds nor duplicates) decides
// nothing.
type Ticket struct {
	run    *Run
	event  uint64
	target uint64
}

// Ticket returns the ticket of the target-th delivery (from 0) of the
// event-th event; the zero Ticket when the run neither reorders nor
// duplicates.
func (r *Run) Ticket(event uint64, target int) Ticket {
	if r.c.Reorder == 0 && r.c.Duplicate == 0 {
		return Ticket{}
	}
	return Ticket{run: r, event: event, target: uint64(target)}
}

// Active reports whether the ticket can decide anything.
func (t Ticket) Active() bool { return t.run != nil }

// Hold draws whether the delivery's first attempt is held back, and how
// long (0: it is not).
func (t Ticket) Hold() time.Duration {
	if t.run == nil || t.run.c.Reorder == 0 {
		return 0
	}
	u, x := t.run.draw(kindReorder, t.event, t.target, 0)
	if u >= t.run.c.Reorder {
		return 0
	}
	return t.run.delay(x)
}

// Duplicate draws whether the delivery's attempt number attempt, which
// the receiver acknowledged, is sent again, and how long after (0: it is
// not, nor once the run is no longer in force).
func (t Ticket) Duplicate(attempt int) time.Duration {
	if t.run == nil || t.run.c.Duplicate == 0 || !t.run.live() {
		return 0
	}
	u, x := t.run.draw(kindDuplicate, t.event, t.target, uint64(attempt))
	if u >= t.run.c.Duplicate {
		return 0
	}
	return t.run.delay(x)
}

// Held records that the delivery was held back delay, at the server
// clock's at.
func (t Ticket) Held(at time.Time, eventID, deliveryID string, delay time.Duration) {
	t.run.held.Add(1)
	t.run.record(model.ChaosDecision{Action: model.ChaosHeld, At: at, Event: t.event, EventID: eventID, DeliveryID: deliveryID,
		Delay: delay},
		slog.Uint64("event", t.event), slog.String("eventId", eventID), slog.String("delivery", deliveryID), slog.Duration("delay", delay))
}

// Duplicated records that the delivery's attempt number attempt is to be
// sent again, delay after it ended at the server clock's at.
func (t Ticket) Duplicated(at time.Time, eventID, deliveryID string, attempt int, delay time.Duration) {
	t.run.duplicates.Add(1)
	t.run.record(model.ChaosDecision{Action: model.ChaosDuplicate, At: at, Event: t.event, EventID: eventID, DeliveryID: deliveryID,
		Attempt: attempt, Delay: delay},
		slog.Uint64("event", t.event), slog.String("eventId", eventID), slog.String("delivery", deliveryID), slog.Int("attempt", attempt),
		slog.Duration("delay", delay))
}

// record keeps d among the newest decisions, logs it and tells the mode's
// watcher. Callers hold no lock of theirs.
func (r *Run) record(d model.ChaosDecision, attrs ...slog.Attr) {
	r.mu.Lock()
	r.recent[r.next] = d
	r.next = (r.next + 1) % len(r.recent)
	r.n = min(r.n+1, len(r.recent))
	r.mu.Unlock()
	log := r.mode.cfg.Logger
	if ctx := context.Background(); log.Enabled(ctx, slog.LevelDebug) {
		log.LogAttrs(ctx, slog.LevelDebug, "chaos: "+string(d.Action), append(attrs, slog.Uint64("seed", r.c.Seed))...)
	}
	r.mode.changed()
}
