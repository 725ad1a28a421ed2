package delivery

import (
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/queue"
)

// deliveryIndex lists kept deliveries in creation order (ascending
// created): all of them, or those of one webhook, account or event type.
// A page starts with a binary search in it. A dropped delivery stays in
// it as a tombstone (dead counts them) until those at its front are
// popped or it is compacted, once they are a quarter of it, so a page
// skips few of them and the index holds at most about 4/3 of the live
// records.
type deliveryIndex struct {
	q    queue.Queue[*deliveryRecord]
	dead int
}

func (ix *deliveryIndex) push(rec *deliveryRecord) { ix.q.Push(rec) }

// live counts the kept deliveries in the index.
func (ix *deliveryIndex) live() int { return ix.q.Len() - ix.dead }

func (ix *deliveryIndex) all() []*deliveryRecord { return ix.q.All() }

func (ix *deliveryIndex) front() *deliveryRecord { return ix.q.Front() }

// dropped counts one more of its records as dropped, pops the tombstones
// at its front and compacts it when they are a quarter of it.
func (ix *deliveryIndex) dropped() {
	ix.dead++
	for ix.q.Len() > 0 && ix.q.Front().dropped {
		ix.q.PopFront()
		ix.dead--
	}
	if ix.dead > 32 && 4*ix.dead > ix.q.Len() {
		ix.q.Filter(func(r *deliveryRecord) bool { return !r.dropped })
		ix.dead = 0
	}
}

// indexOf returns the index of key in m, made on first use.
func indexOf[K comparable](m map[K]*deliveryIndex, key K) *deliveryIndex {
	ix := m[key]
	if ix == nil {
		ix = &deliveryIndex{}
		m[key] = ix
	}
	return ix
}

// dropFrom counts a dropped record of key's index in m, and forgets the
// index once it holds no kept delivery, so that indexes of webhooks
// deleted long ago do not pile up.
func dropFrom[K comparable](m map[K]*deliveryIndex, key K) {
	if ix := m[key]; ix != nil {
		ix.dropped()
		if ix.live() == 0 {
			delete(m, key)
		}
	}
}

// indexLocked adds rec, just created, to every index.
func (d *Engine) indexLocked(rec *deliveryRecord) {
	d.order.push(rec)
	indexOf(d.byHook, rec.hook.id).push(rec)
	indexOf(d.byAccount, rec.hook.account).push(rec)
	indexOf(d.byType, rec.event.Type).push(rec)
}

// unindexLocked counts rec, just dropped, out of every index.
func (d *Engine) unindexLocked(rec *deliveryRecord) {
	d.order.dropped()
	dropFrom(d.byHook, rec.hook.id)
	dropFrom(d.byAccount, rec.hook.account)
	dropFrom(d.byType, rec.event.Type)
}

// candidatesLocked returns the records a list filtered by f walks, in
// creation order: the smallest of the indexes f selects (the event's own
// deliveries, its webhook's, account's or event type's), else all of them.
// A filter that names something no kept delivery has selects none. The
// slice holds tombstones (dropped records), which the caller skips.
func (d *Engine) candidatesLocked(f Filter) []*deliveryRecord {
	best := d.order.all()
	narrow := func(l []*deliveryRecord, ok bool) bool {
		if !ok {
			return false
		}
		if len(l) < len(best) {
			best = l
		}
		return true
	}
	if f.EventID != "" {
		l, ok := d.byEvent[f.EventID]
		if !narrow(l, ok) {
			return nil
		}
	}
	for _, c := range []struct {
		ix   *deliveryIndex
		used bool
	}{
		{d.byHook[f.WebhookID], f.WebhookID != ""},
		{d.byAccount[f.Account], f.Account != ""},
		{d.byType[f.EventType], f.EventType != ""},
	} {
		if !c.used {
			continue
		}
		if c.ix == nil {
			return nil
		}
		narrow(c.ix.all(), true)
	}
	return best
}

// matchRec reports whether rec passes f, without copying it.
func matchRec(f Filter, rec *deliveryRecord) bool {
	return model.MatchDelivery(f, rec.event.ID, rec.hook.id, rec.status.state(), rec.hook.account, rec.event.Type)
}

// Page returns copies of up to limit kept deliveries that match f, in
// creation order (newest first when start.desc), from start, and the
// position to continue from when more may follow (0 when none do). Its
// cost does not grow with its depth: see page.MaxScan.
func (d *Engine) Page(start page.Start, limit int, f Filter) (out []Delivery, next uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	src := d.candidatesLocked(f)
	out = make([]Delivery, 0, min(limit, len(src)))
	next = page.Walk(src, func(r *deliveryRecord) uint64 { return r.created }, start, limit, page.MaxScan,
		func(r *deliveryRecord) bool { return !r.dropped && matchRec(f, r) },
		func(r *deliveryRecord) { out = append(out, d.snapshotLocked(r)) })
	return out, next
}

// NextDue returns when the earliest waiting attempt is due, and false
// when none waits or the engine is closed.
func (d *Engine) NextDue() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || len(d.due) == 0 {
		return time.Time{}, false
	}
	return d.due[0].dueAt, true
}

// Counts returns the kept deliveries by state.
func (d *Engine) Counts() Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Counts{
		Pending:   len(d.recs) - d.nFinished,
		Succeeded: d.nFinished - d.nFailed,
		Failed:    d.nFailed,
	}
}

// indexMaps are the empty indexes of a new or reset engine.
func newIndexMaps() (map[string]*deliveryIndex, map[string]*deliveryIndex, map[contextsvc.EventType]*deliveryIndex) {
	return make(map[string]*deliveryIndex), make(map[string]*deliveryIndex), make(map[contextsvc.EventType]*deliveryIndex)
}
