package mockserver

import "time"

// This file is the delivery engine's side of the state document
// (state.go): one function copies out the pending deliveries, one puts
// them back. Nothing else of the state code touches the engine's records.

// savedDelivery is a pending delivery as the state document keeps it:
// enough to continue its schedule after a restart (the attempts made, so
// numbering continues; the retries used, so the schedule continues; when
// the next attempt is due).
type savedDelivery struct {
	id        string
	seq       uint64 // creation order, the key of the admin list's cursors
	event     *eventBody
	webhookID string
	hook      deliveryTarget // when restoring: the webhook, whose url and secret each attempt reads
	url       string   // where the latest attempt went
	createdAt time.Time
	attempts  []DeliveryAttempt
	dueAt     time.Time
	retries   int
}

// savePending returns copies of the pending deliveries, in creation order,
// and the creation counter. An attempt running now is saved as due at the
// time it was due, so after a crash it is made again (receivers
// deduplicate by event id); a graceful stop lets it finish first.
func (d *deliverer) savePending() ([]savedDelivery, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]savedDelivery, 0, d.order.live()-d.nFinished)
	for _, rec := range d.order.all() {
		if rec.dropped || rec.status != statusPending {
			continue
		}
		out = append(out, savedDelivery{
			id: rec.id, seq: rec.created, event: rec.event, webhookID: rec.hook.id, url: rec.url,
			createdAt: rec.createdAt, attempts: append([]DeliveryAttempt(nil), rec.attempts...),
			dueAt: rec.dueAt, retries: int(rec.retries),
		})
	}
	return out, d.created
}

// restore replaces every delivery with the given pending ones (in creation
// order, each with its webhook), as reset does first: running
// attempts are canceled and forgotten. The creation counter becomes at
// least seq, so later deliveries sort after the restored ones and after
// any that an old cursor names. Deliveries due now start at once, unless
// the engine is closed.
func (d *deliverer) restore(saved []savedDelivery, seq uint64) {
	d.reset()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range saved {
		sd := &saved[i]
		rec := &deliveryRecord{
			id: sd.id, created: sd.seq, event: sd.event, hook: d.hookLocked(sd.hook), url: sd.url,
			attempts: sd.attempts, createdAt: sd.createdAt, heapIndex: -1, retries: int32(sd.retries),
		}
		d.linkLocked(rec)
		d.events[sd.event.id] = sd.event
		d.recs[rec.id] = rec
		d.indexLocked(rec)
		d.byEvent[sd.event.id] = append(d.byEvent[sd.event.id], rec)
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
		d.pushLocked(rec, sd.dueAt)
		d.created = max(d.created, sd.seq)
		d.notifyLocked(rec, "created")
	}
	d.created = max(d.created, seq)
	d.pumpLocked()
}
