package contextsvc

import (
	"container/heap"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ClaimResult is the outcome of [Deduper.Claim].
type ClaimResult int

const (
	// ClaimAcquired: the id was free and is now held for this attempt,
	// which must end with Commit (handled) or Release (failed), passing
	// the token Claim returned.
	ClaimAcquired ClaimResult = iota + 1
	// ClaimDuplicate: the event was already handled; skip it and
	// acknowledge.
	ClaimDuplicate
	// ClaimBusy: another attempt holds the id right now and has not
	// finished; neither acknowledge nor handle it (the sender retries).
	ClaimBusy
)

// String returns the result's name.
func (r ClaimResult) String() string {
	switch r {
	case ClaimAcquired:
		return "acquired"
	case ClaimDuplicate:
		return "duplicate"
	case ClaimBusy:
		return "busy"
	}
	return "unknown"
}

// ClaimToken identifies one attempt's claim on an event id: [Deduper.Claim]
// returns it with [ClaimAcquired], and the attempt passes it to Commit or
// Release. It is opaque; its own type keeps it from being swapped with the
// event id, which is a string too.
type ClaimToken string

// Errors a [Deduper] returns, wrapped; test them with errors.Is.
var (
	// ErrClaimLost is returned by Commit when the attempt's lease lapsed
	// and another attempt claimed the id meanwhile: this Commit recorded
	// nothing, and the other attempt's Commit or Release decides. The
	// event was handled, and the other attempt is handling it again; the
	// fix is a handler function that finishes well within its lease.
	ErrClaimLost = errors.New("contextsvc: the claim's lease lapsed and another attempt holds the event id")
	// ErrDeduperFull is returned by a [MemoryDeduper]'s Claim (and by a
	// Commit that has to record an id afresh) when every slot holds a
	// claim in progress: nothing can be dropped without risking that event
	// being handled twice, so the attempt is refused and the sender retries
	// it later.
	ErrDeduperFull = errors.New("contextsvc: deduper full of claims in progress")
)

// Deduper remembers which event ids a receiver has handled, so each event
// is handled once although the service delivers it again on every retry
// and to every matching webhook. The handler made by [NewWebhookHandler]
// uses it as follows for each verified event:
//
//  1. Claim(id, lease) with a lease of 10 minutes. Acquired: go on, keeping
//     the token. Duplicate: answer 200 without handling. Busy: answer 409
//     so the sender retries later.
//  2. Call the receiver's function.
//  3. On success Commit(id, token, remember); on failure (or a panic)
//     Release(id, token), so the sender's retry is handled afresh.
//
// remember is how long the id must stay known: until the event's timestamp
// plus the replay window (and a second of slack), measured from the
// handler's clock at the time of the Commit. After that the handler
// refuses the event by its age anyway, so the id can be forgotten.
//
// Durations, not times: a Deduper applies lease and remember on its own
// clock from the moment it receives them (a shared store on the server's
// clock), so the handler's clock and the store's need not agree. An entry
// lives exactly that long: it is there until, and gone from, the instant
// its duration has passed.
//
// # The owner token
//
// A claim belongs to the attempt that made it. Claim returns a token with
// ClaimAcquired, unique to that attempt (both implementations in this
// module take 128 bits from crypto/rand), and Commit and Release act only
// while the stored claim is still the one with that token.
// Without it, an attempt whose lease lapsed while it ran could release, or
// overwrite, the claim a later attempt now holds, and the event would be
// handled once more. The rules, for the entry stored under id when the
// call arrives:
//
//   - Claim: nothing (or only lapsed entries): store a new claim, return
//     ClaimAcquired and its token. A claim: ClaimBusy. Done: ClaimDuplicate.
//     The token is empty unless acquired.
//   - Commit(id, token, remember > 0): this token's claim: it becomes done
//     for remember. Nothing (the lease lapsed and nobody took the id over):
//     done for remember, since the event was handled. Done (another
//     attempt committed first): unchanged, nil. Another token's claim:
//     unchanged, and the error wraps [ErrClaimLost].
//   - Commit with remember <= 0 (the event is already out of the window):
//     removes this token's claim and records nothing; another token's
//     claim is still [ErrClaimLost].
//   - Release(id, token): removes this token's claim; in every other case
//     (lapsed, done, another token's claim) it changes nothing and returns
//     nil.
//
// An empty id, an empty token or a lease <= 0 is refused with an error
// wrapping [ErrInvalidArgument].
//
// Memory stays bounded by the events of one replay window (and the claims
// of one lease), since every entry carries its expiry.
//
// The default is [NewMemoryDeduper], good for one process. Receivers with
// several replicas need a shared store: package
// github.com/contextsvc/contextsvc-go/redisstore has a Deduper on Redis
// whose every step is one atomic Lua script on one key.
//
// Implementations must be safe for concurrent use. An error from Claim
// makes the handler answer 500 without handling the event (the sender
// retries); an error from Commit or Release is logged (the event was
// handled, or will be retried).
type Deduper interface {
	// Claim atomically takes id for lease unless it is held or done, and
	// returns the owner token of the new claim.
	Claim(ctx context.Context, id string, lease time.Duration) (ClaimResult, ClaimToken, error)
	// Commit marks the claim made with token as handled for remember.
	Commit(ctx context.Context, id string, token ClaimToken, remember time.Duration) error
	// Release gives up the claim made with token, so the id can be claimed
	// again.
	Release(ctx context.Context, id string, token ClaimToken) error
}

// checkClaim validates the arguments of Claim.
func checkClaim(id string, lease time.Duration) error {
	if id == "" {
		return fmt.Errorf("%w: deduper: empty event id", ErrInvalidArgument)
	}
	if lease <= 0 {
		return fmt.Errorf("%w: deduper: lease %v, want > 0", ErrInvalidArgument, lease)
	}
	return nil
}

// checkToken validates the arguments of Commit and Release.
func checkToken(id string, token ClaimToken) error {
	if id == "" {
		return fmt.Errorf("%w: deduper: empty event id", ErrInvalidArgument)
	}
	if token == "" {
		return fmt.Errorf("%w: deduper: empty claim token for %s", ErrInvalidArgument, id)
	}
	return nil
}

// DefaultMemoryDeduperSize is the number of ids the handler's own
// [MemoryDeduper] keeps: a whole 27-hour replay window of events at one a
// second, in about 14 MB when full (about 140 bytes per 30-character id).
const DefaultMemoryDeduperSize = 100_000

// MemoryDeduper is an in-memory [Deduper] for one process, following the
// interface's rules. It is safe for concurrent use.
//
// It is bounded: entries lapse at their time, and when all size slots are
// taken a new entry makes room by dropping the remembered (done) id that
// would lapse soonest; at worst that event is handled a second time if it
// comes again. A claim in progress is never dropped to make room: when
// every slot holds one, Claim returns an error wrapping [ErrDeduperFull]
// (the handler answers 500 and the sender retries later) rather than let
// a second attempt of an event run while the first still does. Each call
// costs O(log size).
//
// The zero value holds [DefaultMemoryDeduperSize] ids on time.Now.
type MemoryDeduper struct {
	now    func() time.Time
	max    int
	mu     sync.Mutex
	ids    map[string]*dedupeEntry
	claims dedupeHeap // claims in progress, by until
	done   dedupeHeap // remembered ids, by until
}

type dedupeEntry struct {
	id    string
	token ClaimToken // of the claim; empty once done
	until time.Time
	index int // in its heap: claims while token != "", else done
}

// MemoryDeduperOption configures [NewMemoryDeduper]. An option given a
// value it cannot use makes NewMemoryDeduper return an error wrapping
// [ErrInvalidArgument].
type MemoryDeduperOption func(*MemoryDeduper) error

// WithDeduperClock sets the MemoryDeduper's clock (default time.Now), for
// tests: give it the same clock as the handler's [WithWebhookClock]. nil is
// an error.
func WithDeduperClock(now func() time.Time) MemoryDeduperOption {
	return func(d *MemoryDeduper) error {
		if now == nil {
			return fmt.Errorf("%w: WithDeduperClock(nil)", ErrInvalidArgument)
		}
		d.now = now
		return nil
	}
}

// NewMemoryDeduper returns a MemoryDeduper holding at most size ids, e.g.
// [DefaultMemoryDeduperSize]. A size below 1 is an error wrapping
// [ErrInvalidArgument].
func NewMemoryDeduper(size int, opts ...MemoryDeduperOption) (*MemoryDeduper, error) {
	if size < 1 {
		return nil, fmt.Errorf("%w: NewMemoryDeduper(%d): the size must be at least 1", ErrInvalidArgument, size)
	}
	d := newMemoryDeduper(size, time.Now)
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// clock reads the deduper's clock: time.Now for the zero value.
func (d *MemoryDeduper) clock() time.Time {
	if d.now == nil {
		return time.Now()
	}
	return d.now()
}

// newMemoryDeduper returns a MemoryDeduper of size > 0 ids on the clock now.
func newMemoryDeduper(size int, now func() time.Time) *MemoryDeduper {
	return &MemoryDeduper{now: now, max: size, ids: make(map[string]*dedupeEntry)}
}

// Len returns the number of ids currently held (claimed or done, not yet
// lapsed).
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(d.clock())
	return len(d.ids)
}

// heapOf returns the heap e belongs in. d.mu must be held.
func (d *MemoryDeduper) heapOf(e *dedupeEntry) *dedupeHeap {
	if e.token != "" {
		return &d.claims
	}
	return &d.done
}

// expire drops lapsed entries. d.mu must be held.
func (d *MemoryDeduper) expire(now time.Time) {
	for _, h := range []*dedupeHeap{&d.claims, &d.done} {
		for len(*h) > 0 && !(*h)[0].until.After(now) {
			e := heap.Pop(h).(*dedupeEntry)
			delete(d.ids, e.id)
		}
	}
}

// remove drops e. d.mu must be held.
func (d *MemoryDeduper) remove(e *dedupeEntry) {
	heap.Remove(d.heapOf(e), e.index)
	delete(d.ids, e.id)
}

// add stores a new entry, first dropping the done entry that lapses
// soonest if the deduper is full. d.mu must be held and id not stored.
func (d *MemoryDeduper) add(id string, token ClaimToken, until time.Time) error {
	size := d.max
	if size == 0 { // the zero value
		size = DefaultMemoryDeduperSize
	}
	if len(d.ids) >= size {
		if len(d.done) == 0 {
			return fmt.Errorf("%w: all %d slots hold claims; %s refused", ErrDeduperFull, size, id)
		}
		e := heap.Pop(&d.done).(*dedupeEntry)
		delete(d.ids, e.id)
	}
	e := &dedupeEntry{id: id, token: token, until: until}
	if d.ids == nil {
		d.ids = make(map[string]*dedupeEntry)
	}
	d.ids[id] = e
	heap.Push(d.heapOf(e), e)
	return nil
}

// Claim implements [Deduper].
func (d *MemoryDeduper) Claim(_ context.Context, id string, lease time.Duration) (ClaimResult, ClaimToken, error) {
	if err := checkClaim(id, lease); err != nil {
		return 0, "", err
	}
	token := ClaimToken(rand.Text()) // 128 random bits: no two attempts share one
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock()
	d.expire(now)
	if e, ok := d.ids[id]; ok {
		if e.token == "" {
			return ClaimDuplicate, "", nil
		}
		return ClaimBusy, "", nil
	}
	if err := d.add(id, token, now.Add(lease)); err != nil {
		return 0, "", err
	}
	return ClaimAcquired, token, nil
}

// Commit implements [Deduper].
func (d *MemoryDeduper) Commit(_ context.Context, id string, token ClaimToken, remember time.Duration) error {
	if err := checkToken(id, token); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock()
	d.expire(now)
	e, ok := d.ids[id]
	switch {
	case ok && e.token == token:
		if remember <= 0 {
			d.remove(e)
			return nil
		}
		// From the claims heap to the done heap.
		heap.Remove(&d.claims, e.index)
		e.token, e.until = "", now.Add(remember)
		heap.Push(&d.done, e)
		return nil
	case ok && e.token == "":
		return nil // another attempt committed first
	case ok:
		return fmt.Errorf("%w: %s", ErrClaimLost, id)
	case remember <= 0:
		return nil
	}
	// The lease lapsed and nobody holds the id: the event was handled.
	return d.add(id, "", now.Add(remember))
}

// Release implements [Deduper].
func (d *MemoryDeduper) Release(_ context.Context, id string, token ClaimToken) error {
	if err := checkToken(id, token); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(d.clock())
	if e, ok := d.ids[id]; ok && e.token == token {
		d.remove(e)
	}
	return nil
}

// dedupeHeap is a container/heap of entries by until.
type dedupeHeap []*dedupeEntry

func (h dedupeHeap) Len() int           { return len(h) }
func (h dedupeHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h dedupeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *dedupeHeap) Push(x any) {
	e := x.(*dedupeEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *dedupeHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
