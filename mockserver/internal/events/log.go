package events

import (
	"sync"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/queue"
)

// overhead is what the history counts for an event besides the bytes of
// its envelope, id and account: its record, its place in the id map and
// in three queues (all, its type's, its account's) with their slack, as
// measured (TestEventHistoryMemoryAccounting checks it against the heap).
const overhead = 200

// Rec is a recorded event with its place in the log, the position its
// list's cursors count in.
type Rec struct {
	Seq   uint64
	Event Event
}

// Log is the server's event history: the last limit events, at most
// maxBytes of them, oldest first, in one queue, in one queue per type and
// in one per account (so a page filtered by type or account walks only
// those events), and by id. Recording an event past either bound drops
// the oldest, from all of them. It is safe for concurrent use.
type Log struct {
	mu        sync.RWMutex
	limit     int
	maxBytes  int
	bytes     int // what the kept events count, see size
	seq       uint64
	all       queue.Queue[*Rec]
	byType    map[contextsvc.EventType]*queue.Queue[*Rec]
	byAccount map[string]*queue.Queue[*Rec]
	byID      map[string]*Rec
}

// NewLog returns an empty log that keeps the last limit events, at most
// maxBytes of them (but always the newest).
func NewLog(limit, maxBytes int) *Log {
	l := &Log{limit: limit, maxBytes: maxBytes}
	l.clear()
	return l
}

// size is what the history counts for ev.
func size(ev *Event) int {
	return len(ev.Body) + len(ev.ID) + len(ev.Account) + overhead
}

func (l *Log) clear() {
	l.bytes = 0
	l.all = queue.Queue[*Rec]{}
	l.byType = make(map[contextsvc.EventType]*queue.Queue[*Rec])
	l.byAccount = make(map[string]*queue.Queue[*Rec])
	l.byID = make(map[string]*Rec)
}

// pushTo appends rec to key's queue in m, made on first use.
func pushTo[K comparable](m map[K]*queue.Queue[*Rec], key K, rec *Rec) {
	q := m[key]
	if q == nil {
		q = &queue.Queue[*Rec]{}
		m[key] = q
	}
	q.Push(rec)
}

// popFrom pops the oldest of key's queue in m (the oldest event of all is
// the oldest of its type and of its account), forgetting an emptied queue.
func popFrom[K comparable](m map[K]*queue.Queue[*Rec], key K) {
	q := m[key]
	q.PopFront()
	if q.Len() == 0 {
		delete(m, key)
	}
}

// Add records ev, dropping the oldest events while the log holds more
// than its limit of them or of bytes (but never ev itself).
func (l *Log) Add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	rec := &Rec{Seq: l.seq, Event: ev}
	l.all.Push(rec)
	pushTo(l.byType, ev.Type, rec)
	pushTo(l.byAccount, ev.Account, rec)
	l.byID[ev.ID] = rec
	l.bytes += size(&rec.Event)
	for l.all.Len() > l.limit || (l.bytes > l.maxBytes && l.all.Len() > 1) {
		old := l.all.PopFront()
		popFrom(l.byType, old.Event.Type)
		popFrom(l.byAccount, old.Event.Account)
		delete(l.byID, old.Event.ID)
		l.bytes -= size(&old.Event)
	}
}

// Stats returns how many events are kept, and the bytes they count.
func (l *Log) Stats() (events, bytes int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.all.Len(), l.bytes
}

// Get returns the kept event with the given id. It shares its bytes with
// the log, which never changes them.
func (l *Log) Get(id string) (Event, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	rec, ok := l.byID[id]
	if !ok {
		return Event{}, false
	}
	return rec.Event, true
}

// Page returns up to limit events from start (after its position, or
// before it when descending), of type typ and of account unless they are
// empty, and the position to continue from when more may follow (0 when
// none do). One filter walks its own queue; with both, the smaller is
// walked and the other tested, at most page.MaxScan events past the
// last match, so a page costs the same at any depth. The events share
// their bytes with the log, which never changes them.
func (l *Log) Page(start page.Start, limit int, typ contextsvc.EventType, account string) (out []*Rec, next uint64) {
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
	next = page.Walk(src, func(r *Rec) uint64 { return r.Seq }, start, limit, page.MaxScan,
		func(r *Rec) bool {
			return (typ == "" || r.Event.Type == typ) && (account == "" || r.Event.Account == account)
		},
		func(r *Rec) { out = append(out, r) })
	return out, next
}

// All returns copies of every kept event, oldest first, in one slice.
func (l *Log) All() []Event {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Event, 0, l.all.Len())
	for _, rec := range l.all.All() {
		out = append(out, Clone(rec.Event))
	}
	return out
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}

// LastSeq returns the sequence number of the newest event recorded, which
// the events list's cursors count in.
func (l *Log) LastSeq() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.seq
}

// ResetTo empties the log, and numbers the next event after seq at least,
// so a cursor from before a restart never skips the events after it.
func (l *Log) ResetTo(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.seq = max(l.seq, seq)
}

// Indexed returns how many events each index holds: the type queues, the
// account queues and the id map. Each holds the kept events and no other,
// so it is bounded as the history is.
func (l *Log) Indexed() (byType, byAccount, byID int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, q := range l.byType {
		byType += q.Len()
	}
	for _, q := range l.byAccount {
		byAccount += q.Len()
	}
	return byType, byAccount, len(l.byID)
}
