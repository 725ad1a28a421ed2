package mockserver

import (
	"sync"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// DefaultHistoryLimit is how many events, and how many finished webhook
// deliveries, a [Server] keeps when [WithHistoryLimit] is not given: some
// 10 to 20 MB with typical payloads, and hours of a busy test suite's
// history.
const DefaultHistoryLimit = 10_000

// queue is a first-in first-out list: push at the back, pop at the front,
// both in amortized constant time. The live items are one slice in push
// order (all), so a page of them starts with a binary search. Popped slots
// are zeroed at once, so a popped item is never kept alive, and the slice
// is compacted when half of it is popped slots, so it holds at most about
// twice the live items (and append's slack, as much again).
type queue[T any] struct {
	items []T
	head  int // items[:head] are popped (zero) slots
}

func (q *queue[T]) push(v T) { q.items = append(q.items, v) }

func (q *queue[T]) len() int { return len(q.items) - q.head }

// all returns the live items, oldest first. The slice is valid until the
// next push or pop.
func (q *queue[T]) all() []T { return q.items[q.head:] }

// front returns the oldest live item; the queue must not be empty.
func (q *queue[T]) front() T { return q.items[q.head] }

// popFront removes and returns the oldest live item; the queue must not be
// empty.
func (q *queue[T]) popFront() T {
	var zero T
	v := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 32 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return v
}

// filter keeps the live items for which keep is true, in order, in linear
// time.
func (q *queue[T]) filter(keep func(T) bool) {
	live := q.items[q.head:]
	n := 0
	for _, v := range live {
		if keep(v) {
			live[n] = v
			n++
		}
	}
	clear(live[n:])
	q.items = q.items[:q.head+n]
}

// eventRec is a recorded event with its place in the log.
type eventRec struct {
	seq uint64
	ev  Event
}

// eventLog is the server's event history: the last limit events, oldest
// first, in one queue, in one queue per type and in one per account (so a
// page filtered by type or account walks only those events), and by id.
// Recording an event past the limit drops the oldest, from all of them.
type eventLog struct {
	mu        sync.RWMutex
	limit     int
	seq       uint64
	all       queue[*eventRec]
	byType    map[contextsvc.EventType]*queue[*eventRec]
	byAccount map[string]*queue[*eventRec]
	byID      map[string]*eventRec
}

func newEventLog(limit int) *eventLog {
	l := &eventLog{limit: limit}
	l.clear()
	return l
}

func (l *eventLog) clear() {
	l.all = queue[*eventRec]{}
	l.byType = make(map[contextsvc.EventType]*queue[*eventRec])
	l.byAccount = make(map[string]*queue[*eventRec])
	l.byID = make(map[string]*eventRec)
}

// pushTo appends rec to key's queue in m, made on first use.
func pushTo[K comparable](m map[K]*queue[*eventRec], key K, rec *eventRec) {
	q := m[key]
	if q == nil {
		q = &queue[*eventRec]{}
		m[key] = q
	}
	q.push(rec)
}

// popFrom pops the oldest of key's queue in m (the oldest event of all is
// the oldest of its type and of its account), forgetting an emptied queue.
func popFrom[K comparable](m map[K]*queue[*eventRec], key K) {
	q := m[key]
	q.popFront()
	if q.len() == 0 {
		delete(m, key)
	}
}

// add records ev, dropping the oldest event if the log is full.
func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	rec := &eventRec{seq: l.seq, ev: ev}
	l.all.push(rec)
	pushTo(l.byType, ev.Type, rec)
	pushTo(l.byAccount, ev.Account, rec)
	l.byID[ev.ID] = rec
	for l.all.len() > l.limit {
		old := l.all.popFront()
		popFrom(l.byType, old.ev.Type)
		popFrom(l.byAccount, old.ev.Account)
		delete(l.byID, old.ev.ID)
	}
}

// get returns the kept event with the given id.
func (l *eventLog) get(id string) (Event, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	rec, ok := l.byID[id]
	if !ok {
		return Event{}, false
	}
	return rec.ev, true
}

// page returns up to limit events from start (after its position, or
// before it when descending), of type typ and of account unless they are
// empty, and the position to continue from when more may follow (0 when
// none do). One filter walks its own queue; with both, the smaller is
// walked and the other tested, at most maxFilterScan events past the
// last match, so a page costs the same at any depth. The events share
// their bytes with the log, which never changes them.
func (l *eventLog) page(start pageStart, limit int, typ contextsvc.EventType, account string) (out []*eventRec, next uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	src := l.all.all()
	if typ != "" {
		q := l.byType[typ]
		if q == nil {
			return nil, 0
		}
		src = q.all()
	}
	if account != "" {
		q := l.byAccount[account]
		if q == nil {
			return nil, 0
		}
		if q.len() < len(src) {
			src = q.all()
		}
	}
	next = walkPage(src, func(r *eventRec) uint64 { return r.seq }, start, limit, maxFilterScan,
		func(r *eventRec) bool {
			return (typ == "" || r.ev.Type == typ) && (account == "" || r.ev.Account == account)
		},
		func(r *eventRec) { out = append(out, r) })
	return out, next
}

// events returns copies of every kept event, oldest first.
func (l *eventLog) events() []Event {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Event, 0, l.all.len())
	for _, rec := range l.all.all() {
		out = append(out, rec.ev.clone())
	}
	return out
}

func (l *eventLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}
