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

// MaxEventHistoryBytes bounds the event history in bytes as the history
// limit bounds it in events: past either, the oldest events are dropped
// first. An event counts its envelope (its data included) and what the
// history spends on holding it (some 200 bytes). POST /_mock/events takes
// up to 2 MiB of data, so without it 10,000 events could hold 20 GB; with
// it they hold at most 64 MiB, and the newest event is always kept.
const MaxEventHistoryBytes = 64 << 20

// eventOverhead is what the history counts for an event besides the bytes
// of its envelope, id and account: its record, its place in the id map
// and in three queues (all, its type's, its account's) with their slack,
// as measured (TestEventHistoryMemoryAccounting checks it against the
// heap).
const eventOverhead = 200

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

// eventLog is the server's event history: the last limit events, at most
// maxBytes of them, oldest first, in one queue, in one queue per type and
// in one per account (so a page filtered by type or account walks only
// those events), and by id. Recording an event past either bound drops
// the oldest, from all of them.
type eventLog struct {
	mu        sync.RWMutex
	limit     int
	maxBytes  int
	bytes     int // what the kept events count, see eventSize
	seq       uint64
	all       queue[*eventRec]
	byType    map[contextsvc.EventType]*queue[*eventRec]
	byAccount map[string]*queue[*eventRec]
	byID      map[string]*eventRec
}

func newEventLog(limit, maxBytes int) *eventLog {
	l := &eventLog{limit: limit, maxBytes: maxBytes}
	l.clear()
	return l
}

// eventSize is what the history counts for ev.
func eventSize(ev *Event) int {
	return len(ev.Body) + len(ev.ID) + len(ev.Account) + eventOverhead
}

func (l *eventLog) clear() {
	l.bytes = 0
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

// add records ev, dropping the oldest events while the log holds more
// than its limit of them or of bytes (but never ev itself).
func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	rec := &eventRec{seq: l.seq, ev: ev}
	l.all.push(rec)
	pushTo(l.byType, ev.Type, rec)
	pushTo(l.byAccount, ev.Account, rec)
	l.byID[ev.ID] = rec
	l.bytes += eventSize(&rec.ev)
	for l.all.len() > l.limit || (l.bytes > l.maxBytes && l.all.len() > 1) {
		old := l.all.popFront()
		popFrom(l.byType, old.ev.Type)
		popFrom(l.byAccount, old.ev.Account)
		delete(l.byID, old.ev.ID)
		l.bytes -= eventSize(&old.ev)
	}
}

// stats returns how many events are kept, and the bytes they count.
func (l *eventLog) stats() (events, bytes int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.all.len(), l.bytes
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
