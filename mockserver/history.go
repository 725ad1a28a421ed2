package mockserver

import (
	"sync"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/queue"
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
	all       queue.Queue[*eventRec]
	byType    map[contextsvc.EventType]*queue.Queue[*eventRec]
	byAccount map[string]*queue.Queue[*eventRec]
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
	l.all = queue.Queue[*eventRec]{}
	l.byType = make(map[contextsvc.EventType]*queue.Queue[*eventRec])
	l.byAccount = make(map[string]*queue.Queue[*eventRec])
	l.byID = make(map[string]*eventRec)
}

// pushTo appends rec to key's queue in m, made on first use.
func pushTo[K comparable](m map[K]*queue.Queue[*eventRec], key K, rec *eventRec) {
	q := m[key]
	if q == nil {
		q = &queue.Queue[*eventRec]{}
		m[key] = q
	}
	q.Push(rec)
}

// popFrom pops the oldest of key's queue in m (the oldest event of all is
// the oldest of its type and of its account), forgetting an emptied queue.
func popFrom[K comparable](m map[K]*queue.Queue[*eventRec], key K) {
	q := m[key]
	q.PopFront()
	if q.Len() == 0 {
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
	l.all.Push(rec)
	pushTo(l.byType, ev.Type, rec)
	pushTo(l.byAccount, ev.Account, rec)
	l.byID[ev.ID] = rec
	l.bytes += eventSize(&rec.ev)
	for l.all.Len() > l.limit || (l.bytes > l.maxBytes && l.all.Len() > 1) {
		old := l.all.PopFront()
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
	return l.all.Len(), l.bytes
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
// walked and the other tested, at most page.MaxScan events past the
// last match, so a page costs the same at any depth. The events share
// their bytes with the log, which never changes them.
func (l *eventLog) page(start page.Start, limit int, typ contextsvc.EventType, account string) (out []*eventRec, next uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	src := l.all.All()
	if typ != "" {
		q := l.byType[typ]
		if q == nil {
			return nil, 0
		}
		src = q.All()
	}
	if account != "" {
		q := l.byAccount[account]
		if q == nil {
			return nil, 0
		}
		if q.Len() < len(src) {
			src = q.All()
		}
	}
	next = page.Walk(src, func(r *eventRec) uint64 { return r.seq }, start, limit, page.MaxScan,
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
	out := make([]Event, 0, l.all.Len())
	for _, rec := range l.all.All() {
		out = append(out, rec.ev.clone())
	}
	return out
}

func (l *eventLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}
