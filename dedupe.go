package contextsvc

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// ClaimResult is the outcome of [Deduper.Claim].
type ClaimResult int

const (
	// ClaimAcquired: the id was free and is now held for this attempt,
	// which must end with Commit (handled) or Release (failed).
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

// Deduper remembers which event ids a receiver has handled, so each event
// is handled once although the service delivers it again on every retry
// and to every matching webhook. The handler made by [NewWebhookHandler]
// uses it as follows for each verified event:
//
//  1. Claim(id, leaseUntil). Acquired: go on. Duplicate: answer 200 without
//     handling. Busy: answer 409 so the sender retries later.
//  2. Call the receiver's function.
//  3. On success Commit(id, rememberUntil); on failure Release(id), so the
//     sender's retry is handled afresh.
//
// A claim that is neither committed nor released (the process died) lapses
// at leaseUntil. rememberUntil is the event's timestamp plus the replay
// window (and a second of slack): after it the handler refuses the event
// by its age anyway, so the id can be forgotten. An id is forgotten at
// these times, not after them.
//
// The default is [NewMemoryDeduper], good for one process. Receivers with
// several replicas need a shared store; every step is one atomic command
// on one key, so Redis (6.2 or later) fits, with key = a prefix + id:
//
//   - Claim: SET key busy NX PXAT leaseUntil. OK: acquired. Otherwise
//     GET key: "done" is a duplicate, "busy" is busy, and nil (the key
//     lapsed between the two commands) means try the SET again.
//   - Commit: SET key done PXAT rememberUntil (DEL key if rememberUntil
//     has passed).
//   - Release: EVAL of the script below, which deletes the key only while
//     it is "busy", so it never drops a "done" that another replica
//     committed after this attempt's lease lapsed.
//
// The Release script:
//
//	if redis.call('GET', KEYS[1]) == 'busy' then return redis.call('DEL', KEYS[1]) end
//	return 0
//
// Memory stays bounded by the number of events in one window, since every
// key carries its expiry. The package's tests run the handler on a
// Deduper built from exactly these commands.
//
// Implementations must be safe for concurrent use. An error from Claim
// makes the handler answer 500 without handling the event; an error from
// Commit or Release is logged (the event was handled, or will be retried).
type Deduper interface {
	// Claim atomically takes id unless it is held or done.
	Claim(ctx context.Context, id string, leaseUntil time.Time) (ClaimResult, error)
	// Commit marks a claimed id as handled until rememberUntil.
	Commit(ctx context.Context, id string, rememberUntil time.Time) error
	// Release gives up a claim, so the id can be claimed again.
	Release(ctx context.Context, id string) error
}

// DefaultMemoryDeduperSize is the number of ids a [NewMemoryDeduper] with
// size 0 keeps: a whole 27-hour replay window of events at one a second, in about
// 14 MB when full (about 140 bytes per 30-character id).
const DefaultMemoryDeduperSize = 100_000

// MemoryDeduper is an in-memory [Deduper] for one process. It is bounded:
// entries lapse at their time (lease or remember-until), and when full the
// entry that would lapse soonest is dropped to make room (at worst that
// event is handled a second time if it comes again). It is safe for
// concurrent use.
type MemoryDeduper struct {
	now  func() time.Time
	max  int
	mu   sync.Mutex
	ids  map[string]*dedupeEntry
	heap dedupeHeap // by until, soonest first
}

type dedupeEntry struct {
	id    string
	until time.Time
	done  bool
	index int // in heap
}

// NewMemoryDeduper returns a MemoryDeduper holding at most size ids (0 or
// less means [DefaultMemoryDeduperSize]). now is its clock, for tests; nil
// means time.Now.
func NewMemoryDeduper(size int, now func() time.Time) *MemoryDeduper {
	if size <= 0 {
		size = DefaultMemoryDeduperSize
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryDeduper{now: now, max: size, ids: make(map[string]*dedupeEntry)}
}

// Len returns the number of ids currently held (claimed or done, not yet
// lapsed).
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(d.now())
	return len(d.ids)
}

// expire drops lapsed entries. d.mu must be held.
func (d *MemoryDeduper) expire(now time.Time) {
	for len(d.heap) > 0 && !d.heap[0].until.After(now) {
		e := heap.Pop(&d.heap).(*dedupeEntry)
		delete(d.ids, e.id)
	}
}

// Claim implements [Deduper].
func (d *MemoryDeduper) Claim(_ context.Context, id string, leaseUntil time.Time) (ClaimResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(d.now())
	if e, ok := d.ids[id]; ok {
		if e.done {
			return ClaimDuplicate, nil
		}
		return ClaimBusy, nil
	}
	for len(d.ids) >= d.max {
		e := heap.Pop(&d.heap).(*dedupeEntry)
		delete(d.ids, e.id)
	}
	e := &dedupeEntry{id: id, until: leaseUntil}
	d.ids[id] = e
	heap.Push(&d.heap, e)
	return ClaimAcquired, nil
}

// Commit implements [Deduper]. Committing an id that is not held (its
// claim lapsed or was evicted) records it anyway: it was handled.
func (d *MemoryDeduper) Commit(_ context.Context, id string, rememberUntil time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	d.expire(now)
	e, ok := d.ids[id]
	if !rememberUntil.After(now) {
		if ok {
			heap.Remove(&d.heap, e.index)
			delete(d.ids, id)
		}
		return nil
	}
	if !ok {
		for len(d.ids) >= d.max {
			old := heap.Pop(&d.heap).(*dedupeEntry)
			delete(d.ids, old.id)
		}
		e = &dedupeEntry{id: id, until: rememberUntil, done: true}
		d.ids[id] = e
		heap.Push(&d.heap, e)
		return nil
	}
	e.done = true
	e.until = rememberUntil
	heap.Fix(&d.heap, e.index)
	return nil
}

// Release implements [Deduper]. Releasing an id that is done or not held
// does nothing.
func (d *MemoryDeduper) Release(_ context.Context, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.ids[id]; ok && !e.done {
		heap.Remove(&d.heap, e.index)
		delete(d.ids, id)
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
