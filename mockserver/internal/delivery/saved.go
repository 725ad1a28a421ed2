package delivery

import "time"

// This file is the delivery engine's side of the state document
// (state.go): one function copies out the pending deliveries, one puts
// them back. Nothing else of the state code touches the engine's records.

// Saved is a pending delivery as the state document keeps it:
// enough to continue its schedule after a restart (the attempts made, so
// numbering continues; the retries used, so the schedule continues; when
// the next attempt is due).
type Saved struct {
	ID        string
	Seq       uint64 // creation order, the key of the admin list's cursors
	Event     *Body
	WebhookID string
	Hook      Hook   // when restoring: the webhook, whose url and secret each attempt reads
	URL       string // where the latest attempt went
	CreatedAt time.Time
	Attempts  []Attempt
	DueAt     time.Time
	Retries   int
}

// SavePending returns copies of the pending deliveries, in creation order,
// and the creation counter. An attempt running now is saved as due at the
// time it was due, so after a crash it is made again (receivers
// deduplicate by event id); a graceful stop lets it finish first.
func (d *Engine) SavePending() ([]Saved, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Saved, 0, d.order.live()-d.nFinished)
	for _, rec := range d.order.all() {
		if rec.dropped || rec.status != statusPending {
			continue
		}
		out = append(out, Saved{
			ID: rec.id, Seq: rec.created, Event: rec.event, WebhookID: rec.hook.id, URL: rec.url,
			CreatedAt: rec.createdAt, Attempts: append([]Attempt(nil), rec.attempts...),
			DueAt: rec.dueAt, Retries: int(rec.retries),
		})
	}
	return out, d.created
}

// Restore replaces every delivery with the given pending ones (in creation
// order, each with its webhook), as reset does first: running
// attempts are canceled and forgotten. The creation counter becomes at
// least seq, so later deliveries sort after the restored ones and after
// any that an old cursor names. Deliveries due now start at once, unless
// the engine is closed.
func (d *Engine) Restore(saved []Saved, seq uint64) {
	d.Reset()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range saved {
		sd := &saved[i]
		rec := &deliveryRecord{
			id: sd.ID, created: sd.Seq, event: sd.Event, hook: d.hookLocked(sd.Hook), url: sd.URL,
			attempts: sd.Attempts, createdAt: sd.CreatedAt, heapIndex: -1, retries: int32(sd.Retries),
		}
		d.linkLocked(rec)
		d.events[sd.Event.ID] = sd.Event
		d.recs[rec.id] = rec
		d.indexLocked(rec)
		d.byEvent[sd.Event.ID] = append(d.byEvent[sd.Event.ID], rec)
		// Counted as the engine counts its own, so the limits hold after a
		// restore: past -delivery-backlog new events wait for room, and
		// past -retry-limit a failed attempt gets no retry, until the
		// restored ones have had theirs. (A file saved with higher limits
		// may hold more than these; none of it is dropped.)
		if len(rec.attempts) == 0 {
			rec.inBacklog = true
			d.backlog++
		} else {
			rec.inRetry = true
			d.retrying++
		}
		d.pushLocked(rec, sd.DueAt)
		d.created = max(d.created, sd.Seq)
		d.notifyLocked(rec, "created")
	}
	d.created = max(d.created, seq)
	d.pumpLocked()
}
