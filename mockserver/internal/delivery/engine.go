package delivery

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/queue"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/telemetry"
	"github.com/contextsvc/contextsvc-go/redact"
	"go.opentelemetry.io/otel/trace"
)

const (
	// defaultDeliveryWorkers bounds how many attempts run at once.
	defaultDeliveryWorkers = 8
	// SnippetLimit is how much of a receiver's response body an
	// attempt keeps while it is a delivery's latest; olderSnippetLimit is
	// what it keeps once a later attempt has finished (see
	// finishLocked).
	SnippetLimit      = 4 << 10
	olderSnippetLimit = 1 << 10
	// responseDrainLimit is how much more of a response body is read (and
	// dropped) so its connection can be reused; past it the connection is
	// closed instead.
	responseDrainLimit = 64 << 10
	// deliveryUserAgent identifies the mock server's deliveries.
	deliveryUserAgent = "contextsvc-mock-webhooks/1"
)

// The defaults of a zero Config, which mockserver re-exports
// (DefaultDeliveryTimeout and its neighbours).
const (
	DefaultTimeout    = 10 * time.Second
	DefaultHistory    = 10_000
	DefaultBacklog    = 20_000
	DefaultRetryLimit = 100_000
)

// DefaultSchedule returns the service's retry delays: after the k-th
// failed attempt of a delivery, the next one is due the k-th delay after
// it. It returns a new slice on each call.
func DefaultSchedule() []time.Duration {
	return []time.Duration{
		1 * time.Minute,
		5 * time.Minute,
		30 * time.Minute,
		2 * time.Hour,
		24 * time.Hour,
	}
}

// Config configures an Engine. Zero fields take their defaults.
type Config struct {
	// Clock schedules attempts and stamps them. Default clock.Real.
	Clock clock.Clock
	// Schedule holds the retry delays. nil means DefaultSchedule(); an
	// empty, non-nil slice means no retries (one attempt). Negative delays
	// count as zero.
	Schedule []time.Duration
	// Timeout bounds each attempt in real time. <= 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Workers bounds how many attempts run at once. <= 0 means 8.
	Workers int
	// HTTPClient sends the attempts. nil means a client that does not follow
	// redirects (a 3xx is a failed attempt), keeps up to Workers idle
	// connections per receiver and bounds each attempt by Timeout. A given
	// client should not follow redirects either.
	HTTPClient *http.Client
	// Logger receives one Info record per attempt. nil means discard.
	Logger *slog.Logger
	// History is how many finished (succeeded or failed) deliveries are
	// kept; past it, those that finished first are dropped. Pending ones
	// are always kept. <= 0 means DefaultHistory.
	History int
	// MaxBacklog is how many deliveries may wait for their first attempt;
	// past it, enqueue waits for room. <= 0 means DefaultBacklog.
	MaxBacklog int
	// RetryLimit is how many deliveries may wait for a retry; past it, a
	// failed attempt schedules none and its delivery ends failed. <= 0
	// means DefaultRetryLimit.
	RetryLimit int
	// OnChange, when set, is told of every change of a delivery (the
	// server's change notifications and its state file). It is called
	// with the engine's lock held and must not block.
	OnChange func(changes.Change)
	// Telemetry, when set, traces every attempt (a child of its event's
	// span, which Enqueue finds in its context) and carries the attempt's
	// traceparent. nil traces nothing.
	Telemetry *telemetry.Telemetry
}

// Engine is the mock server's webhook delivery engine: it records
// deliveries, POSTs their attempts, and schedules retries on the server's
// Clock.
//
// Scheduling is one min-heap of waiting attempts keyed by due time, and one
// Clock timer armed for the earliest of them. When attempts are due, up to
// Workers goroutines pop them from the heap and send them; a worker exits
// as soon as nothing is due, so an idle engine holds no goroutine and
// nothing leaks when a Server is never closed. A pending retry is a heap
// entry and a compact record, not a sleeping goroutine, and the body of an
// event is stored once for all of its deliveries.
//
// Every state change is broadcast on one sync.Cond, which waitIdle, waitFor
// and close wait on; nothing polls.
//
// Memory is bounded by the pending deliveries plus history finished ones:
// when a delivery finishes past that limit, the one that finished first is
// dropped, with its event's body once no kept delivery needs it. The
// deliveries waiting for their first attempt are at most maxBacklog:
// enqueue waits for room past it, in arrival order, so a producer faster
// than the senders is slowed to their pace rather than growing the queue.
type Engine struct {
	clock     clock.Clock
	schedule  []time.Duration
	timeout   time.Duration
	workers   int
	client    *http.Client
	ownClient bool
	log       *slog.Logger

	history    int // finished deliveries kept
	maxBacklog int // deliveries waiting for their first attempt, at most
	retryLimit int // deliveries waiting for a retry, at most

	mu      sync.Mutex
	changed sync.Cond // on mu; broadcast on every state change
	recs    map[string]*deliveryRecord
	// order holds the kept deliveries in creation order (ascending
	// created), for lists: a page starts with a binary search. byHook,
	// byAccount and byType hold those of one webhook, account and event
	// type, so a filtered page walks only them (index.go).
	order     deliveryIndex
	byHook    map[string]*deliveryIndex
	byAccount map[string]*deliveryIndex
	byType    map[contextsvc.EventType]*deliveryIndex
	created   uint64 // creation counter
	// byEvent holds the kept deliveries of each event, in creation order;
	// an event's body is dropped with its last delivery.
	byEvent map[string][]*deliveryRecord
	events  map[string]*Body
	// hooks are the webhooks of the kept deliveries.
	hooks map[Hook]*hookRef
	// finished lists the deliveries in the order they finished; an entry
	// is stale once its record is redelivered (gen moved on) or dropped.
	finished  queue.Queue[finishedEntry]
	nFinished int // kept deliveries that are succeeded or failed
	nFailed   int // kept deliveries that are failed
	backlog   int // deliveries whose first attempt has not started
	retrying  int // deliveries whose waiting attempt is a scheduled retry
	// tickets and serving make the enqueues that wait for room go in
	// arrival order: each takes a ticket, and goes when it is served.
	// gaveUp holds the tickets of enqueues that stopped waiting (their
	// context ended) before being served: serving skips them.
	tickets, serving uint64
	gaveUp           map[uint64]struct{}
	due              dueHeap // waiting attempts, earliest first
	seq              uint64  // tie-break of equal due times: first scheduled, first sent

	timer    clock.Timer // armed for timerAt, or nil
	timerAt  time.Time   // due time the timer is armed for
	timerGen uint64      // tells a stale timer callback from the current one

	running int    // worker goroutines alive (at most workers)
	started uint64 // attempts started, ever (an advance of the clock reports how many it ran)
	closed  bool   // close was called: no new attempt starts
	// attemptCtx is the parent of every attempt's context. reset cancels it
	// (the records are gone), and so does close once its deadline passes.
	attemptCtx    context.Context
	cancelAttempt context.CancelFunc
	waiters       []*deliveryWaiter

	onChange func(changes.Change) // Config.OnChange
	tel      *telemetry.Telemetry // Config.Telemetry
}

// Hook is what the engine needs of a webhook: its id and
// account, which never change, and where an attempt goes now (url and
// secret), whether the webhook takes deliveries (active and not deleted)
// and whether it was deleted.
type Hook interface {
	ID() string
	Account() string
	Target() (url, secret string, deliverable, deleted bool)
}

// hookRef is the engine's own record of a webhook its kept deliveries go
// to: its id and account, and the list of its pending deliveries (through
// deliveryRecord.hookNext), so that deactivating or deleting the webhook
// ends them without a scan of every delivery. Every record of the webhook
// shares it; it is forgotten with the last one (refs).
type hookRef struct {
	t           Hook
	id, account string
	pending     *deliveryRecord
	refs        int
}

// Body is what all deliveries of one event share: its id, its type and
// the exact bytes that are signed and POSTed.
type Body struct {
	ID    string
	Type  contextsvc.EventType
	Bytes []byte
	// Parent is the span of the event's creation, the parent of every
	// attempt's span; nil when the event was not traced (or was loaded
	// from a state file).
	Parent *trace.SpanContext
}

// deliveryStatus is State in one byte, to keep records compact.
type deliveryStatus uint8

const (
	statusPending deliveryStatus = iota
	statusSucceeded
	statusFailed
)

func (s deliveryStatus) state() State {
	switch s {
	case statusSucceeded:
		return Succeeded
	case statusFailed:
		return Failed
	}
	return Pending
}

// finishedEntry is a delivery that finished, as gen of its record.
type finishedEntry struct {
	rec *deliveryRecord
	gen uint32
}

// deliveryRecord is the engine's own record of a delivery. It is kept small:
// 100,000 pending retries are 100,000 of these plus their heap entries.
type deliveryRecord struct {
	id      string
	created uint64 // creation order, the key of lists and their cursors
	event   *Body  // shared by every delivery of the event
	// hook is the webhook delivered to: each attempt reads its url and
	// secret as they are when the attempt starts.
	hook *hookRef
	// url is where the latest attempt went (before any, the webhook's url
	// when the delivery was created).
	url       string
	attempts  []Attempt // finished attempts; grows only on attempts
	createdAt time.Time
	dueAt     time.Time // when the waiting attempt is due (valid while heapIndex >= 0)
	seq       uint64    // order of scheduling, among equal dueAt
	// hookPrev and hookNext link the pending deliveries of hook.
	hookPrev, hookNext *deliveryRecord
	heapIndex          int32          // index in deliverer.due, -1 when not waiting
	retries            int32          // schedule delays used since creation or the last redeliver
	gen                uint32         // counts the times it finished
	status             deliveryStatus // pending, succeeded, failed
	failure            failureReason  // why it failed, when it did
	inFlight           bool           // an attempt is running
	dropped            bool           // dropped from the history
	inBacklog          bool           // its first attempt has not started
	inRetry            bool           // its waiting attempt is a scheduled retry
	linked             bool           // in hook's pending list
	// dup says its waiting attempt is chaos's duplicate of the attempt
	// before it, which the receiver acknowledged: whatever it gets, the
	// delivery then ends succeeded.
	dup bool
	// chaos is what chaos decided of it; nil when chaos was off (or
	// decided nothing of deliveries) when it was made.
	chaos *chaosState
}

// chaosState is what chaos decided of a delivery, and keys what it
// decides later.
type chaosState struct {
	t chaos.Ticket
	// hold is how long its first attempt was held back (0: not held),
	// until that attempt is made or redelivered by hand.
	hold time.Duration
	// dupDelay is how long after the acknowledged attempt the waiting
	// duplicate is due (while dup).
	dupDelay time.Duration
}

// failureReason says why a delivery is failed, in one byte.
type failureReason uint8

const (
	failNone        failureReason = iota
	failExhausted                 // every attempt of the retry schedule failed
	failDeactivated               // its webhook was deactivated
	failDeleted                   // its webhook was deleted
	failNoRoom                    // its request gave up waiting for room in the backlog
	failNoRetry                   // an attempt failed while retryLimit deliveries waited for a retry
)

// text describes the reason for the admin API, naming the webhook.
func (f failureReason) text(webhookID string) string {
	switch f {
	case failExhausted:
		return "every attempt failed and the retry schedule has ended"
	case failDeactivated:
		return "webhook " + webhookID + " was deactivated: no further attempt is made"
	case failDeleted:
		return "webhook " + webhookID + " was deleted: no further attempt is made"
	case failNoRoom:
		return "not attempted: the request that fired the event ended while it waited for room in the delivery backlog " +
			"(too many deliveries waiting for their first attempt; see -delivery-backlog); redeliver it by hand"
	case failNoRetry:
		return "its attempt failed while too many deliveries already waited for a retry (see -retry-limit), " +
			"so no retry was scheduled; redeliver it by hand"
	}
	return ""
}

// failureFor is the reason a delivery to a webhook that no longer takes
// deliveries ends: it was deleted or deactivated.
func failureFor(deleted bool) failureReason {
	if deleted {
		return failDeleted
	}
	return failDeactivated
}

// hookLocked returns the engine's record of t, made on first use, counting
// one more delivery that refers to it.
func (d *Engine) hookLocked(t Hook) *hookRef {
	h := d.hooks[t]
	if h == nil {
		h = &hookRef{t: t, id: t.ID(), account: t.Account()}
		d.hooks[t] = h
	}
	h.refs++
	return h
}

// dueHeap is a container/heap of the records that have an attempt waiting,
// earliest dueAt first. It holds pointers (8 bytes an entry, and nothing
// boxed on Push and Pop) and keeps each record's heapIndex up to date so a
// waiting attempt can be moved (redeliver).
type dueHeap []*deliveryRecord

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if c := h[i].dueAt.Compare(h[j].dueAt); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = int32(i)
	h[j].heapIndex = int32(j)
}
func (h *dueHeap) Push(x any) {
	rec := x.(*deliveryRecord)
	rec.heapIndex = int32(len(*h))
	*h = append(*h, rec)
}
func (h *dueHeap) Pop() any {
	old := *h
	rec := old[len(old)-1]
	old[len(old)-1] = nil // let the GC have it once it is dropped
	*h = old[:len(old)-1]
	rec.heapIndex = -1
	return rec
}

// deliveryWaiter is a waitFor call: the records changed since it last looked.
type deliveryWaiter struct {
	changed []*deliveryRecord
}

// New returns a delivery engine configured by cfg. It starts no
// goroutine until an attempt is due. Call close to stop it.
func New(cfg Config) *Engine {
	d := &Engine{
		onChange:   cfg.OnChange,
		tel:        cfg.Telemetry,
		clock:      cfg.Clock,
		timeout:    cfg.Timeout,
		workers:    cfg.Workers,
		client:     cfg.HTTPClient,
		log:        cfg.Logger,
		history:    cfg.History,
		maxBacklog: cfg.MaxBacklog,
		retryLimit: cfg.RetryLimit,
		recs:       make(map[string]*deliveryRecord),
		byEvent:    make(map[string][]*deliveryRecord),
		events:     make(map[string]*Body),
		hooks:      make(map[Hook]*hookRef),
	}
	d.byHook, d.byAccount, d.byType = newIndexMaps()
	if d.history <= 0 {
		d.history = DefaultHistory
	}
	if d.maxBacklog <= 0 {
		d.maxBacklog = DefaultBacklog
	}
	if d.retryLimit <= 0 {
		d.retryLimit = DefaultRetryLimit
	}
	if d.clock == nil {
		d.clock = clock.Real{}
	}
	if cfg.Schedule == nil {
		d.schedule = DefaultSchedule()
	} else {
		d.schedule = make([]time.Duration, len(cfg.Schedule))
		for i, s := range cfg.Schedule {
			d.schedule[i] = max(s, 0)
		}
	}
	if d.timeout <= 0 {
		d.timeout = DefaultTimeout
	}
	if d.workers <= 0 {
		d.workers = defaultDeliveryWorkers
	}
	if d.client == nil {
		d.client = newDeliveryHTTPClient(d.workers, d.timeout)
		d.ownClient = true
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.changed.L = &d.mu
	d.attemptCtx, d.cancelAttempt = context.WithCancel(context.Background())
	return d
}

// newDeliveryHTTPClient returns the default client of the deliveries: it
// never follows a redirect (the 3xx itself is the attempt's answer, a
// failure), keeps a connection per worker alive to a busy receiver, and
// bounds the wait for response headers by timeout too (each attempt's
// context carries the same deadline; this guards a caller-made request).
func newDeliveryHTTPClient(workers int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = workers
	tr.ResponseHeaderTimeout = timeout
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Enqueue records a delivery of an event to a webhook and makes its
// first attempt due now, and reports whether it did: a webhook that is no
// longer active (or was deleted) gets no new delivery. body is the event
// envelope's exact bytes, which the caller never changes (the server's
// events): all the deliveries of the event share them. Each attempt is
// signed with the webhook's secret as it is when the attempt starts, which
// is never logged nor returned. After close, the delivery is recorded but
// stays pending: no attempt is made.
//
// When the backlog is full, it waits for room until ctx (the request that
// fired the event) is done; then the delivery is recorded failed, with no
// attempt and the reason, so a client that gives up frees its request at
// once, and memory stays bounded.
//
// t is the delivery's chaos ticket (the zero Ticket without chaos): it may
// hold the first attempt back, and send an acknowledged attempt again.
func (d *Engine) Enqueue(ctx context.Context, eventID string, eventType contextsvc.EventType, body []byte, hook Hook, t chaos.Ticket) (Delivery, bool) {
	return d.enqueueBody(ctx, eventID, eventType, body, false, hook, t)
}

// enqueueBody is Enqueue, copying body once per event id when copyBody is
// set. A hold chaos decides is recorded once the lock is let go.
func (d *Engine) enqueueBody(ctx context.Context, eventID string, eventType contextsvc.EventType, body []byte, copyBody bool, hook Hook,
	t chaos.Ticket) (Delivery, bool) {
	hold := t.Hold()
	dl, ok, held := d.enqueueLocked(ctx, eventID, eventType, body, copyBody, hook, t, hold)
	if held {
		t.Held(dl.CreatedAt, eventID, dl.ID, hold)
	}
	return dl, ok
}

// enqueueLocked records the delivery under the lock; held reports that
// its first attempt was held back by hold.
func (d *Engine) enqueueLocked(ctx context.Context, eventID string, eventType contextsvc.EventType, body []byte, copyBody bool, hook Hook,
	t chaos.Ticket, hold time.Duration) (dl Delivery, ok, held bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	room := d.waitForRoomLocked(ctx)
	// Checked under the engine's lock: a webhook deactivated before this
	// gets nothing, and one deactivated after it has this delivery ended
	// by retire, which takes the same lock.
	url, _, deliverable, _ := hook.Target()
	if !deliverable {
		return Delivery{}, false, false
	}
	ev := d.events[eventID]
	if ev == nil || ev.Type != eventType || !bytes.Equal(ev.Bytes, body) {
		if copyBody {
			body = bytes.Clone(body)
		}
		ev = &Body{ID: eventID, Type: eventType, Bytes: body}
		if d.tel != nil {
			ev.Parent = telemetry.Parent(ctx)
		}
		d.events[eventID] = ev
	}
	now := d.clock.Now()
	d.created++
	rec := &deliveryRecord{
		id:        ids.New("dlv_"),
		created:   d.created,
		event:     ev,
		hook:      d.hookLocked(hook),
		url:       url,
		createdAt: now,
		heapIndex: -1,
	}
	d.recs[rec.id] = rec
	d.indexLocked(rec)
	d.byEvent[eventID] = append(d.byEvent[eventID], rec)
	if !room {
		d.failLocked(rec, failNoRoom)
		return d.snapshotLocked(rec), true, false
	}
	d.linkLocked(rec)
	rec.inBacklog = true
	d.backlog++
	if t.Active() {
		rec.chaos = &chaosState{t: t, hold: hold}
	}
	// A held attempt waits on the server's clock, as a retry does: a
	// later event's deliveries, due now, overtake it.
	d.pushLocked(rec, now.Add(hold))
	d.notifyLocked(rec, "created")
	d.pumpLocked()
	return d.snapshotLocked(rec), true, hold > 0
}

// linkLocked adds rec, which has just become pending, to its webhook's
// pending list.
func (d *Engine) linkLocked(rec *deliveryRecord) {
	if rec.linked {
		return
	}
	rec.linked = true
	rec.hookPrev, rec.hookNext = nil, rec.hook.pending
	if rec.hook.pending != nil {
		rec.hook.pending.hookPrev = rec
	}
	rec.hook.pending = rec
}

// unlinkLocked takes rec, which is no longer pending, off its webhook's
// pending list.
func (d *Engine) unlinkLocked(rec *deliveryRecord) {
	if !rec.linked {
		return
	}
	rec.linked = false
	if rec.hookPrev != nil {
		rec.hookPrev.hookNext = rec.hookNext
	} else {
		rec.hook.pending = rec.hookNext
	}
	if rec.hookNext != nil {
		rec.hookNext.hookPrev = rec.hookPrev
	}
	rec.hookPrev, rec.hookNext = nil, nil
}

// Retire ends the pending deliveries to hook, which has just been
// deactivated or deleted (its state says which): each one waiting for an
// attempt becomes failed at once, saying why; one whose attempt is running
// ends when the attempt does (failed, unless the attempt succeeded). It
// returns how many it ended now. Deliveries the webhook gets later are
// refused by enqueue, and attempts that would start are checked again by
// the workers.
func (d *Engine) Retire(hook Hook) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _, deliverable, deleted := hook.Target()
	if deliverable {
		return 0 // reactivated meanwhile
	}
	h := d.hooks[hook]
	if h == nil {
		return 0 // no delivery kept
	}
	reason := failureFor(deleted)
	n := 0
	for rec := h.pending; rec != nil; {
		next := rec.hookNext
		if !rec.inFlight {
			if rec.heapIndex >= 0 {
				heap.Remove(&d.due, int(rec.heapIndex))
			}
			if rec.inBacklog {
				rec.inBacklog = false
				d.backlog-- // room for a waiting enqueue (notifyLocked wakes it)
			}
			d.leaveRetryLocked(rec)
			if rec.dup {
				d.succeedLocked(rec)
			} else {
				d.failLocked(rec, reason)
			}
			n++
		}
		rec = next
	}
	d.pumpLocked()
	return n
}

// leaveRetryLocked notes that rec, just taken off the heap, no longer
// waits for a retry.
func (d *Engine) leaveRetryLocked(rec *deliveryRecord) {
	if rec.inRetry {
		rec.inRetry = false
		d.retrying--
	}
}

// succeedLocked ends rec, which waits for chaos's duplicate of an
// acknowledged attempt that is not to be made (its webhook no longer
// takes deliveries), as succeeded: the receiver acknowledged it.
func (d *Engine) succeedLocked(rec *deliveryRecord) {
	rec.dup = false
	rec.status = statusSucceeded
	d.unlinkLocked(rec)
	d.finishedLocked(rec)
	d.notifyLocked(rec, "ended")
}

// failLocked ends rec, which has no attempt waiting or running, as failed
// for reason.
func (d *Engine) failLocked(rec *deliveryRecord, reason failureReason) {
	rec.status = statusFailed
	rec.failure = reason
	d.unlinkLocked(rec)
	d.finishedLocked(rec)
	d.notifyLocked(rec, "ended")
}

// waitForRoomLocked waits, in arrival order, until fewer than maxBacklog
// deliveries wait for their first attempt, and reports true. After close
// (no attempt will make room) or a reset (which empties the backlog) it
// returns true at once. When ctx is done first it gives up its place in
// the order and reports false.
func (d *Engine) waitForRoomLocked(ctx context.Context) bool {
	if d.closed || (d.backlog < d.maxBacklog && d.tickets == d.serving) {
		return true
	}
	ticket := d.tickets
	d.tickets++
	d.changed.Broadcast() // one more waiting: a change like any other
	stop := context.AfterFunc(ctx, d.wake)
	defer stop()
	for ticket >= d.serving && !d.closed && (ticket != d.serving || d.backlog >= d.maxBacklog) {
		if ctx.Err() != nil {
			if ticket == d.serving {
				d.serveNextLocked()
			} else {
				if d.gaveUp == nil {
					d.gaveUp = make(map[uint64]struct{})
				}
				d.gaveUp[ticket] = struct{}{}
			}
			return false
		}
		d.changed.Wait()
	}
	if ticket == d.serving {
		d.serveNextLocked()
	}
	return true
}

// Waiting returns how many enqueues wait for room in the backlog now.
func (d *Engine) Waiting() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tickets - d.serving - uint64(len(d.gaveUp))
}

// serveNextLocked moves the turn to the next waiting enqueue that has not
// given up.
func (d *Engine) serveNextLocked() {
	d.serving++
	for {
		if _, ok := d.gaveUp[d.serving]; !ok {
			break
		}
		delete(d.gaveUp, d.serving)
		d.serving++
	}
	d.changed.Broadcast() // the next ticket may go too
}

// List returns copies of the kept deliveries that match f, oldest first.
func (d *Engine) List(f Filter) []Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Delivery, 0)
	for _, rec := range d.candidatesLocked(f) {
		if !rec.dropped && matchRec(f, rec) {
			out = append(out, d.snapshotLocked(rec))
		}
	}
	return out
}

// Get returns a copy of the delivery with the given id.
func (d *Engine) Get(id string) (Delivery, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rec, ok := d.recs[id]
	if !ok {
		return Delivery{}, false
	}
	return d.snapshotLocked(rec), true
}

// Redeliver makes a new attempt of a delivery due now and puts it back in
// the pending state. Attempt numbers continue from the last attempt, and the
// retry schedule starts over: if the new attempt fails, the retries follow
// the whole schedule again. A pending delivery waiting for a retry has that
// retry moved to now. It fails with model.ErrDeliveryNotFound for an
// unknown id, model.ErrDeliveryInFlight while an attempt of the delivery
// is running, model.ErrWebhookInactive when its webhook is inactive or
// deleted, and model.ErrDeliveriesClosed after close.
func (d *Engine) Redeliver(id string) (Delivery, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rec, ok := d.recs[id]
	switch {
	case !ok:
		return Delivery{}, fmt.Errorf("%w: %q", model.ErrDeliveryNotFound, id)
	case d.closed:
		return Delivery{}, model.ErrDeliveriesClosed
	case rec.inFlight:
		return Delivery{}, fmt.Errorf("%w: %s", model.ErrDeliveryInFlight, id)
	}
	if _, _, deliverable, deleted := rec.hook.t.Target(); !deliverable {
		return Delivery{}, fmt.Errorf("%w: %s", model.ErrWebhookInactive, failureFor(deleted).text(rec.hook.id))
	}
	now := d.clock.Now()
	if rec.status != statusPending {
		// No longer finished: it leaves the history's count, and its entry
		// in the finished list is stale from now on.
		d.nFinished--
		if rec.status == statusFailed {
			d.nFailed--
		}
		rec.gen++
	}
	rec.status = statusPending
	rec.failure = failNone
	d.linkLocked(rec)
	rec.retries = 0
	// An attempt made by hand is neither held back nor a duplicate.
	rec.dup = false
	if rec.chaos != nil {
		rec.chaos.hold = 0
	}
	if rec.heapIndex >= 0 {
		rec.dueAt = now
		d.seq++
		rec.seq = d.seq
		heap.Fix(&d.due, int(rec.heapIndex))
	} else {
		d.pushLocked(rec, now)
	}
	d.notifyLocked(rec, "redelivered")
	d.pumpLocked()
	return d.snapshotLocked(rec), nil
}

// WaitIdle blocks until no attempt is due (due at or before the clock's
// now) and none is running, or ctx is done. A FakeClock's advance waits so
// at each due time (settle); a test calls it for the attempts due without
// an advance (an event's first). After close only running attempts count.
func (d *Engine) WaitIdle(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	stop := context.AfterFunc(ctx, d.wake)
	defer stop()
	for !d.idleLocked() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.changed.Wait()
	}
	return nil
}

// Settle waits until no attempt is due or running, whatever it takes: a
// FakeClock calls it (through the server, a clockWatcher) at each due time
// an advance stops at, so the attempts due then run at that time, and the
// retries they schedule count from it, before the clock moves on. Each
// attempt is bounded by the delivery time-out, so it ends.
func (d *Engine) Settle() { _ = d.WaitIdle(context.Background()) }

// AttemptsStarted returns how many attempts have started since the engine
// was made.
func (d *Engine) AttemptsStarted() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started
}

// WaitFor blocks until a delivery, existing or future, matches match, and
// returns a copy of it; or until ctx is done, and returns ctx's error. match
// is called without the engine's lock held, so it may call the engine. It
// sees every existing delivery once, then each delivery again after it
// changes (created, attempt started, attempt finished, redelivered); when
// several changes come quickly it may see only the latest state, so match
// should test for a state that lasts (succeeded, failed, n attempts made).
func (d *Engine) WaitFor(ctx context.Context, match func(Delivery) bool) (Delivery, error) {
	w := &deliveryWaiter{}
	d.mu.Lock()
	d.waiters = append(d.waiters, w)
	defer func() {
		d.mu.Lock()
		d.waiters = slices.DeleteFunc(d.waiters, func(x *deliveryWaiter) bool { return x == w })
		d.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, d.wake)
	defer stop()

	snaps := make([]Delivery, 0, d.order.live())
	for _, rec := range d.order.all() {
		if !rec.dropped {
			snaps = append(snaps, d.snapshotLocked(rec))
		}
	}
	for {
		d.mu.Unlock()
		for _, s := range snaps {
			if match(s) {
				return s, nil
			}
		}
		d.mu.Lock()
		for len(w.changed) == 0 && ctx.Err() == nil {
			d.changed.Wait()
		}
		if err := ctx.Err(); err != nil {
			d.mu.Unlock()
			return Delivery{}, err
		}
		snaps = snaps[:0]
		seen := make(map[*deliveryRecord]bool, len(w.changed))
		for _, rec := range w.changed {
			if seen[rec] || d.recs[rec.id] != rec { // reported twice, or dropped by reset
				continue
			}
			seen[rec] = true
			snaps = append(snaps, d.snapshotLocked(rec))
		}
		clear(w.changed)
		w.changed = w.changed[:0]
	}
}

// Reset drops every delivery and every waiting attempt. Running attempts
// are canceled and their results dropped.
func (d *Engine) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cancelAttempt()
	d.attemptCtx, d.cancelAttempt = context.WithCancel(context.Background())
	for _, rec := range d.due {
		rec.heapIndex = -1
	}
	d.recs = make(map[string]*deliveryRecord)
	d.hooks = make(map[Hook]*hookRef)
	d.order = deliveryIndex{}
	d.byHook, d.byAccount, d.byType = newIndexMaps()
	d.byEvent = make(map[string][]*deliveryRecord)
	d.events = make(map[string]*Body)
	d.finished, d.nFinished, d.nFailed = queue.Queue[finishedEntry]{}, 0, 0
	d.backlog, d.serving = 0, d.tickets // every waiting enqueue may go
	d.retrying = 0
	clear(d.gaveUp)
	d.due = nil
	d.stopTimerLocked()
	for _, w := range d.waiters {
		clear(w.changed)
		w.changed = w.changed[:0]
	}
	d.changed.Broadcast()
}

// Close stops the engine: no new attempt starts (waiting ones stay pending
// in the records) and no timer stays armed. Running attempts may finish
// until ctx is done; then they are canceled, close waits for them to
// return, and it returns ctx's error. Calling close again waits again.
func (d *Engine) Close(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		d.stopTimerLocked()
		d.changed.Broadcast()
	}
	stop := context.AfterFunc(ctx, d.wake)
	defer stop()
	for d.running > 0 && ctx.Err() == nil {
		d.changed.Wait()
	}
	var err error
	if d.running > 0 {
		err = ctx.Err()
		d.cancelAttempt()
		for d.running > 0 {
			d.changed.Wait()
		}
	}
	if d.ownClient {
		d.client.CloseIdleConnections()
	}
	return err
}

// wake wakes every goroutine waiting on the engine, so that those whose
// context is done return.
func (d *Engine) wake() {
	d.mu.Lock()
	d.changed.Broadcast()
	d.mu.Unlock()
}

// idleLocked reports whether no attempt is due or running.
func (d *Engine) idleLocked() bool {
	if d.running > 0 {
		return false
	}
	return d.closed || len(d.due) == 0 || d.due[0].dueAt.After(d.clock.Now())
}

// notifyLocked tells the waiters, and the server's change notifications,
// that rec changed and how (the change's action).
func (d *Engine) notifyLocked(rec *deliveryRecord, action string) {
	for _, w := range d.waiters {
		w.changed = append(w.changed, rec)
	}
	d.changed.Broadcast()
	if d.onChange != nil {
		d.onChange(changes.Change{Kind: changes.KindDelivery, ID: rec.id, Action: action, Account: rec.hook.account,
			Type: string(rec.event.Type), State: string(rec.status.state()), WebhookID: rec.hook.id, EventID: rec.event.ID})
	}
}

// snapshotLocked returns a copy of rec that shares nothing with it.
func (d *Engine) snapshotLocked(rec *deliveryRecord) Delivery {
	s := Delivery{
		ID:            rec.id,
		EventID:       rec.event.ID,
		EventType:     rec.event.Type,
		WebhookID:     rec.hook.id,
		Account:       rec.hook.account,
		URL:           rec.url,
		State:         rec.status.state(),
		FailureReason: rec.failure.text(rec.hook.id),
		Attempts:      make([]Attempt, len(rec.attempts)),
		CreatedAt:     rec.createdAt,
	}
	copy(s.Attempts, rec.attempts)
	if rec.heapIndex >= 0 {
		s.NextAttemptAt = rec.dueAt
	}
	return s
}

// pushLocked makes an attempt of rec due at at.
func (d *Engine) pushLocked(rec *deliveryRecord, at time.Time) {
	d.seq++
	rec.dueAt = at
	rec.seq = d.seq
	heap.Push(&d.due, rec)
}

// pumpLocked gets the earliest waiting attempt going: if it is due, it
// makes sure a worker runs (workers start one another while more is due);
// otherwise it makes sure the timer fires no later than its due time.
func (d *Engine) pumpLocked() {
	if d.closed || len(d.due) == 0 {
		return
	}
	if at := d.due[0].dueAt; at.After(d.clock.Now()) && d.armLocked(at) {
		return
	}
	if d.running < d.workers {
		d.running++
		go d.work()
	}
}

// armLocked makes sure the timer fires at or before at. A timer already
// armed earlier is kept: when it fires, pumpLocked arms the next one.
//
// It reports whether at is still ahead of the clock once the timer is
// armed. When it is not, a fake clock was advanced past at by another
// goroutine (a test, the admin API) while this one was arming, perhaps
// before the timer existed, so the timer may only fire at the next Advance:
// the caller must send the due attempt itself instead of waiting for it.
func (d *Engine) armLocked(at time.Time) bool {
	if d.timer == nil || d.timerAt.After(at) {
		if d.timer != nil {
			d.timer.Stop()
		}
		d.timerGen++
		gen := d.timerGen
		d.timerAt = at
		f := func() { d.onTimer(gen) }
		// A clock that arms a timer for a point in time (clock.Fake) makes
		// it due exactly then, even when another goroutine advances the
		// clock while the timer is being armed.
		if c, ok := d.clock.(clock.Absolute); ok {
			d.timer = c.AfterFuncAt(at, f)
		} else {
			d.timer = d.clock.AfterFunc(at.Sub(d.clock.Now()), f)
		}
	}
	return at.After(d.clock.Now())
}

func (d *Engine) stopTimerLocked() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
		d.timerGen++
	}
}

// onTimer runs when the clock reaches the armed due time. With a FakeClock
// it runs inside an advance, which then waits for the workers to send the
// attempts due (settle) before it moves on.
func (d *Engine) onTimer(gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if gen == d.timerGen {
		d.timer = nil
	}
	d.pumpLocked()
}

// attemptJob is what a worker needs to send one attempt without the lock.
type attemptJob struct {
	ctx         context.Context
	rec         *deliveryRecord
	id          string
	event       *Body
	webhookID   string
	url         string // the webhook's url when the attempt starts
	secret      string // the webhook's secret when the attempt starts
	number      int
	scheduledAt time.Time
	chaos       model.ChaosEffect // what chaos did to the attempt
}

// work is a worker goroutine: it sends due attempts until none is due, then
// arms the timer for the next one and exits.
func (d *Engine) work() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.closed || len(d.due) == 0 {
			break
		}
		now := d.clock.Now()
		if at := d.due[0].dueAt; at.After(now) {
			if d.armLocked(at) {
				break
			}
			continue // the clock passed at meanwhile: it is due now
		}
		rec := heap.Pop(&d.due).(*deliveryRecord)
		if rec.inBacklog {
			rec.inBacklog = false
			d.backlog-- // room for a waiting enqueue (notifyLocked wakes it)
		}
		d.leaveRetryLocked(rec)
		// The url and secret of the webhook now: a change since the
		// delivery was created (a rotated secret, a moved receiver) applies
		// to this attempt. A webhook deactivated or deleted meanwhile gets
		// no attempt (retire normally got there first).
		url, secret, deliverable, deleted := rec.hook.t.Target()
		if !deliverable {
			if rec.dup {
				d.succeedLocked(rec)
			} else {
				d.failLocked(rec, failureFor(deleted))
			}
			continue
		}
		// More is due: let another worker take it while this one sends.
		if len(d.due) > 0 && !d.due[0].dueAt.After(now) && d.running < d.workers {
			d.running++
			go d.work()
		}
		rec.inFlight = true
		rec.url = url
		d.started++
		job := attemptJob{
			ctx:         d.attemptCtx,
			rec:         rec,
			id:          rec.id,
			event:       rec.event,
			webhookID:   rec.hook.id,
			url:         url,
			secret:      secret,
			number:      len(rec.attempts) + 1,
			scheduledAt: rec.dueAt,
			chaos:       takeChaosEffect(rec),
		}
		d.notifyLocked(rec, "attemptStarted")
		d.mu.Unlock()

		a := d.attempt(job)

		d.mu.Lock()
		outcome, dup := d.finishLocked(job.rec, a)
		if dup > 0 || (outcome != "" && d.log.Enabled(context.Background(), slog.LevelInfo)) {
			d.mu.Unlock()
			if dup > 0 {
				job.rec.chaos.t.Duplicated(d.clock.Now(), job.event.ID, job.id, a.Number, dup)
			}
			if outcome != "" && d.log.Enabled(context.Background(), slog.LevelInfo) {
				d.logAttempt(job, a, outcome)
			}
			d.mu.Lock()
		}
	}
	d.running--
	d.changed.Broadcast()
}

// takeChaosEffect is what chaos did to the attempt of rec that is being
// made: it is the duplicate rec waited for, or its first attempt, held
// back. rec no longer waits for a duplicate.
func takeChaosEffect(rec *deliveryRecord) model.ChaosEffect {
	switch {
	case rec.dup:
		rec.dup = false
		e := model.ChaosEffect{Action: model.ChaosDuplicate}
		if rec.chaos != nil {
			e.Delay = rec.chaos.dupDelay
		}
		return e
	case len(rec.attempts) == 0 && rec.chaos != nil && rec.chaos.hold > 0:
		return model.ChaosEffect{Action: model.ChaosHeld, Delay: rec.chaos.hold}
	}
	return model.ChaosEffect{}
}

// finishLocked records attempt a of rec and decides what follows: the
// delivery succeeds, chaos sends the acknowledged attempt again, a retry
// is scheduled, or it has failed for good. It returns that outcome for the
// log ("" if rec was dropped by reset), and how long after now the
// duplicate chaos decided is due (0: none), which the caller records once
// the lock is let go.
func (d *Engine) finishLocked(rec *deliveryRecord, a Attempt) (outcome string, dup time.Duration) {
	rec.inFlight = false
	if d.recs[rec.id] != rec {
		d.changed.Broadcast()
		return "", 0
	}
	if n := len(rec.attempts); n > 0 {
		// Only the latest attempt keeps a long answer: the earlier ones
		// keep olderSnippetLimit, so a delivery holds at most
		// responseSnippetLimit + olderSnippetLimit per earlier attempt
		// of answers (docs/mockserver.md, "Bounds").
		prev := &rec.attempts[n-1]
		if len(prev.ResponseSnippet) > olderSnippetLimit {
			prev.ResponseSnippet = jsonwire.CutUTF8(prev.ResponseSnippet, olderSnippetLimit)
		}
	}
	rec.attempts = append(rec.attempts, a)
	_, _, deliverable, deleted := rec.hook.t.Target()
	duplicate := a.Chaos.Action == model.ChaosDuplicate
	switch {
	case a.Succeeded() && !duplicate && deliverable && d.duplicateLocked(rec, a.Number):
		dup = rec.chaos.dupDelay
		outcome = string(Succeeded) + "; chaos sends it again in " + dup.String()
	case a.Succeeded() || duplicate:
		// A duplicate ends its delivery succeeded whatever it got: the
		// receiver acknowledged the attempt before it.
		rec.status = statusSucceeded
		d.unlinkLocked(rec)
		d.finishedLocked(rec)
		outcome = string(Succeeded)
	case !deliverable:
		// Deactivated or deleted while this attempt ran: no retry.
		rec.status, rec.failure = statusFailed, failureFor(deleted)
		d.unlinkLocked(rec)
		d.finishedLocked(rec)
		outcome = string(Failed) + ": " + rec.failure.text(rec.hook.id)
	case int(rec.retries) < len(d.schedule) && d.retrying < d.retryLimit:
		// The next attempt counts from when this one finished. On a fake
		// clock attempts take no time, so that is also when it started.
		at := d.clock.Now().Add(d.schedule[rec.retries])
		rec.retries++
		rec.inRetry = true
		d.retrying++
		d.pushLocked(rec, at)
		d.pumpLocked()
		outcome = "retry scheduled"
	case int(rec.retries) < len(d.schedule):
		// No room for another waiting retry: memory stays bounded, and the
		// delivery says why it ended early.
		rec.status, rec.failure = statusFailed, failNoRetry
		d.unlinkLocked(rec)
		d.finishedLocked(rec)
		outcome = string(Failed) + ": no room for a retry"
	default:
		rec.status, rec.failure = statusFailed, failExhausted
		d.unlinkLocked(rec)
		d.finishedLocked(rec)
		outcome = string(Failed)
	}
	d.notifyLocked(rec, "attemptFinished")
	return outcome, dup
}

// duplicateLocked asks chaos whether the acknowledged attempt number n of
// rec is sent again, and if so makes the duplicate due, and reports true.
// A duplicate waits as a retry does, and counts against the retry limit:
// none is made past it.
func (d *Engine) duplicateLocked(rec *deliveryRecord, n int) bool {
	if rec.chaos == nil || d.retrying >= d.retryLimit {
		return false
	}
	delay := rec.chaos.t.Duplicate(n)
	if delay == 0 {
		return false
	}
	rec.dup = true
	rec.chaos.dupDelay = delay
	rec.inRetry = true
	d.retrying++
	d.pushLocked(rec, d.clock.Now().Add(delay))
	d.pumpLocked()
	return true
}

// finishedLocked counts rec, which has just succeeded or failed, in the
// history, and drops the deliveries that finished first while more than
// the history limit are kept.
func (d *Engine) finishedLocked(rec *deliveryRecord) {
	rec.gen++
	d.finished.Push(finishedEntry{rec, rec.gen})
	d.nFinished++
	if rec.status == statusFailed {
		d.nFailed++
	}
	for d.nFinished > d.history {
		e := d.finished.PopFront()
		if e.rec.dropped || e.gen != e.rec.gen || e.rec.status == statusPending {
			continue // redelivered since, or already dropped
		}
		d.dropLocked(e.rec)
	}
	// Stale entries (one per redelivery) are cleared out once they
	// outnumber the live ones, so the list stays within twice the history.
	if d.finished.Len() > 2*d.nFinished+64 {
		d.finished.Filter(func(e finishedEntry) bool {
			return !e.rec.dropped && e.gen == e.rec.gen && e.rec.status != statusPending
		})
	}
}

// dropLocked forgets a finished delivery, and its event's body when no
// other kept delivery shares it.
func (d *Engine) dropLocked(rec *deliveryRecord) {
	delete(d.recs, rec.id)
	rec.dropped = true
	d.nFinished--
	if rec.status == statusFailed {
		d.nFailed--
	}
	id := rec.event.ID
	l := slices.DeleteFunc(d.byEvent[id], func(r *deliveryRecord) bool { return r == rec })
	if len(l) == 0 {
		delete(d.byEvent, id)
		delete(d.events, id)
	} else {
		d.byEvent[id] = l
	}
	d.unindexLocked(rec)
	// A finished delivery is off its webhook's pending list: the last one
	// to go takes the engine's record of the webhook with it.
	h := rec.hook
	h.refs--
	if h.refs == 0 && d.hooks[h.t] == h {
		delete(d.hooks, h.t)
	}
}

// attempt POSTs one attempt and reports it. The attempt fails on any
// status but 2xx (a 3xx is not followed), on a time-out and on a
// connection error.
func (d *Engine) attempt(job attemptJob) (a Attempt) {
	a = Attempt{
		Number:      job.number,
		ScheduledAt: job.scheduledAt,
		StartedAt:   d.clock.Now(),
		Chaos:       job.chaos,
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(job.ctx, d.timeout)
	defer cancel()
	defer func() { a.Duration = time.Since(start) }()

	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, job.url, bytes.NewReader(job.event.Bytes))
	if rerr != nil {
		a.Error = "invalid webhook url: " + attemptError(rerr, job.url)
		return a
	}
	// The keys are already canonical, so the map is filled directly.
	req.Header = http.Header{
		"Content-Type":               {"application/json"},
		"User-Agent":                 {deliveryUserAgent},
		"X-Service-Signature":        {contextsvc.Sign(job.event.Bytes, job.secret)},
		"X-Service-Event":            {string(job.event.Type)},
		"X-Service-Delivery":         {job.id},
		"X-Service-Delivery-Attempt": {strconv.Itoa(job.number)},
	}
	var err error // why no answer came, for the attempt's span
	if d.tel != nil {
		var span *telemetry.Attempt
		span, a.TraceID = d.tel.StartAttempt(job.event.Parent, req, telemetry.AttemptInfo{
			DeliveryID: job.id, EventID: job.event.ID, EventType: job.event.Type, WebhookID: job.webhookID, Number: job.number,
			Chaos: string(job.chaos.Action),
		})
		defer func() { d.tel.EndAttempt(span, a.StatusCode, err, a.Error) }()
	}
	var resp *http.Response
	resp, err = d.client.Do(req)
	if err != nil {
		a.Error = d.describeError(ctx, job.ctx, err, job.url)
		return a
	}
	a.StatusCode = resp.StatusCode
	a.ResponseSnippet = readSnippet(resp.Body)
	// Read a little more so the connection can carry the next attempt;
	// a receiver that sends more than that gets its connection closed.
	_, _ = io.CopyN(io.Discard, resp.Body, responseDrainLimit)
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		a.Error = fmt.Sprintf("receiver answered %s; redirects are not followed", resp.Status)
	default:
		a.Error = "receiver answered " + resp.Status
	}
	return a
}

// describeError says why an attempt to rawURL got no response, in words a
// user of the admin API understands, the url redacted.
func (d *Engine) describeError(ctx, parent context.Context, err error, rawURL string) string {
	switch {
	case parent.Err() != nil:
		return "attempt canceled: the mock server is shutting down or was reset"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %s", d.timeout)
	}
	return attemptError(err, rawURL)
}

// snippetBuffers holds the buffers readSnippet reads into, so an attempt
// allocates only the snippet it keeps (nothing for an empty body).
var snippetBuffers = sync.Pool{New: func() any { return new([SnippetLimit]byte) }}

// readSnippet reads the start of a response body, up to
// responseSnippetLimit bytes, cut at a UTF-8 boundary when the body is text.
func readSnippet(body io.Reader) string {
	buf := snippetBuffers.Get().(*[SnippetLimit]byte)
	defer snippetBuffers.Put(buf)
	n, _ := io.ReadFull(body, buf[:])
	b := buf[:n]
	if n == SnippetLimit {
		b = b[:len(jsonwire.DropCutRune(b))]
	}
	return string(b)
}

// logAttempt writes one Info record about a finished attempt. The secret is
// never logged, and the url is redacted (redact.go).
func (d *Engine) logAttempt(job attemptJob, a Attempt, outcome string) {
	attrs := []slog.Attr{
		slog.String("delivery", job.id),
		slog.String("event", job.event.ID),
		slog.String("event_type", string(job.event.Type)),
		slog.String("webhook", job.webhookID),
		slog.String("url", redact.URL(job.url)),
		slog.Int("attempt", a.Number),
	}
	if a.StatusCode != 0 {
		attrs = append(attrs, slog.Int("status", a.StatusCode))
	}
	if a.Error != "" {
		attrs = append(attrs, slog.String("error", a.Error))
	}
	if a.Chaos.Action != "" {
		attrs = append(attrs, slog.String("chaos", string(a.Chaos.Action)), slog.Duration("chaosDelay", a.Chaos.Delay))
	}
	attrs = append(attrs, slog.Duration("duration", a.Duration), slog.String("outcome", outcome))
	d.log.LogAttrs(context.Background(), slog.LevelInfo, "webhook delivery attempt", attrs...)
}
