package mockserver

import (
	"sort"
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
// first, in one queue and in one queue per type (so a page filtered by type
// walks only that type's events). Recording an event past the limit drops
// the oldest, from both.
type eventLog struct {
	mu     sync.RWMutex
	limit  int
	seq    uint64
	all    queue[*eventRec]
	byType map[contextsvc.EventType]*queue[*eventRec]
}

func newEventLog(limit int) *eventLog {
	return &eventLog{limit: limit, byType: make(map[contextsvc.EventType]*queue[*eventRec])}
}

// add records ev, dropping the oldest event if the log is full.
func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	rec := &eventRec{seq: l.seq, ev: ev}
	l.all.push(rec)
	tq := l.byType[ev.Type]
	if tq == nil {
		tq = &queue[*eventRec]{}
		l.byType[ev.Type] = tq
	}
	tq.push(rec)
	for l.all.len() > l.limit {
		old := l.all.popFront()
		oq := l.byType[old.ev.Type]
		oq.popFront() // the oldest of all is the oldest of its type
		if oq.len() == 0 {
			delete(l.byType, old.ev.Type)
		}
	}
}

// page returns up to limit events recorded after position after (0: from
// the oldest kept), of type typ unless typ is empty, and whether more
// follow. It costs a binary search and the page, whatever its depth. The
// events share their bytes with the log, which never changes them.
func (l *eventLog) page(after uint64, limit int, typ contextsvc.EventType) (out []*eventRec, hasMore bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var src []*eventRec
	if typ == "" {
		src = l.all.all()
	} else if tq := l.byType[typ]; tq != nil {
		src = tq.all()
	}
	i := sort.Search(len(src), func(i int) bool { return src[i].seq > after })
	end := min(i+limit, len(src))
	return append([]*eventRec(nil), src[i:end]...), end < len(src)
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
	l.all = queue[*eventRec]{}
	l.byType = make(map[contextsvc.EventType]*queue[*eventRec])
}
