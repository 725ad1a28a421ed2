package conformance

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// webhookCheck is the run's webhook and the context whose events it
// follows from creation to deletion.
type webhookCheck struct {
	url string // registered: the receiver URL with the run's parameter
	id  string
	// subject is the context the deliveries check follows.
	subject *contextsvc.Context
	// exportSize is the size of its export.
	exportSize int
}

// eventDue is a number of events the receiver must get for one context:
// exactly want distinct events of the type.
type eventDue struct {
	what      string // what fired them, for the report
	typ       string
	contextID string
	want      int
}

// exportsOf is what the export check exported of one context.
type exportsOf struct {
	contextID string
	done      []exportDone
}

// subscribed are the event types the run's webhook receives: those a /v1
// operation fires (the others only the mock's admin actions fire).
func subscribed() []contextsvc.EventType {
	var out []contextsvc.EventType
	for _, e := range contract.Events() {
		if len(e.FiredBy) > 0 {
			out = append(out, e.Type)
		}
	}
	return out
}

// checkRegister registers the run's webhook (with a repeated event type,
// which the contract drops) and creates the context whose deliveries
// webhooks.deliveries follows; the receiver fails the first attempt of its
// context.created delivery, for webhooks.retry.
func (r *runner) checkRegister(c *checker) {
	events := subscribed()
	sent := append(append([]contextsvc.EventType(nil), events...), events[0])
	body := jsonBytes(map[string]any{"url": r.webhook.url, "events": sent, "secret": r.secret})
	ex := c.send(request{method: http.MethodPost, path: "/webhooks", body: body})
	r.keepAnswer(ex)
	if !c.answer(ex, http.StatusCreated, "with the webhook, its events without repeats, active, and no secret", contract.Expect{}) {
		return
	}
	got, _ := decode[struct {
		ID     string                 `json:"id"`
		URL    string                 `json:"url"`
		Events []contextsvc.EventType `json:"events"`
		Active bool                   `json:"active"`
	}](ex)
	r.webhook.id = got.ID
	if got.URL != r.webhook.url {
		c.value(ex, "registerWebhook: the url answered is not the one registered", "url "+r.webhook.url, "url "+got.URL)
	}
	if !slices.Equal(got.Events, events) {
		c.value(ex, "registerWebhook: the events answered are not the ones registered, repeats dropped", show(events), show(got.Events))
	}
	if !got.Active {
		c.value(ex, "registerWebhook: a new webhook is not active", `"active":true`, shownAnswer(ex))
	}
	if bytes.Contains(ex.Body, []byte(r.secret)) {
		c.value(ex, "registerWebhook: the answer holds the secret", "no secret in the answer", "the secret, in the answer")
	}
	subject, ok := c.create(r.name("webhook"), "# Webhook\n\nFirst words.\n", nil)
	if !ok {
		return
	}
	r.webhook.subject = subject
}

// expectedEvent is one event the deliveries check waits for, and its data.
type expectedEvent struct {
	typ     contextsvc.EventType
	version int // 0: the type has no version
	data    map[string]any
}

// checkDeliveries changes, exports and deletes the subject context, waits
// for the delivery of each event that fires, and holds every delivery the
// receiver got to the contract: the SDK verifies its signature, its
// headers, its envelope and data against the document, and the data's
// values.
func (r *runner) checkDeliveries(c *checker) {
	w := r.webhook
	if w.subject == nil {
		c.skip("no webhook registered, or its context not created (see webhooks.register)")
		return
	}
	id := w.subject.ID
	// Each step is held to the contract, and the next follows whenever the
	// server did what was asked, whatever the form of its answer.
	const content2 = "# Webhook\n\nFirst words and more.\n"
	ex := c.send(request{method: http.MethodPut, path: "/contexts/" + url.PathEscape(id), body: jsonBytes(map[string]any{"content": content2})})
	c.answer(ex, http.StatusOK, "with the context as it is after the update", contract.Expect{})
	if !done(ex) {
		return
	}
	ex = c.send(request{method: http.MethodGet, path: "/contexts/" + url.PathEscape(id) + "/export?format=markdown"})
	c.answer(ex, http.StatusOK, "with the document", contract.Expect{})
	if !done(ex) {
		return
	}
	w.exportSize = len(ex.Body)
	ex = c.send(request{method: http.MethodDelete, path: "/contexts/" + url.PathEscape(id)})
	c.answer(ex, http.StatusOK, "with the deletion result", contract.Expect{})
	if !done(ex) {
		return
	}
	want := []expectedEvent{
		{contextsvc.EventContextCreated, 1, map[string]any{"contextId": id, "name": w.subject.Name, "version": 1, "tags": []any{r.tag}}},
		{contextsvc.EventContextVersionCreated, 1, map[string]any{"contextId": id, "version": 1}},
		{contextsvc.EventContextUpdated, 2, map[string]any{"contextId": id, "name": w.subject.Name, "version": 2,
			"changes": map[string]any{"sections_modified": []any{"Webhook"}, "word_count_delta": 2}}},
		{contextsvc.EventContextVersionCreated, 2, map[string]any{"contextId": id, "version": 2}},
		{contextsvc.EventExportCompleted, 2, map[string]any{"contextId": id, "version": 2, "format": "markdown", "sizeBytes": w.exportSize}},
		{contextsvc.EventContextDeleted, 0, map[string]any{"contextId": id, "name": w.subject.Name}},
	}
	r.progress("waiting up to %s for %d deliveries", r.cfg.DeliveryTimeout, len(want))
	r.rcv.wait(c.ctx, r.cfg.DeliveryTimeout, func(ds []*delivery) bool {
		for _, e := range want {
			if firstDelivery(ds, e) == nil {
				return false
			}
		}
		return true
	})
	ds := r.rcv.all()
	for _, e := range want {
		d := firstDelivery(ds, e)
		if d == nil {
			c.note(KindMissing, fmt.Sprintf("no %s delivery arrived within %s", e.typ, r.cfg.DeliveryTimeout),
				fmt.Sprintf("a delivery of %s for %s", e.typ, id), "none"+r.rcv.droppedNote(), "nothing arrives for the SDK to read: a receiver written against the mock waits for it in vain")
			continue
		}
		c.deliveryData(d, e)
	}
	r.checkEveryDelivery(c, ds)
}

// firstDelivery returns the first delivery of an event of e's type, context
// and version that the SDK verified.
func firstDelivery(ds []*delivery, e expectedEvent) *delivery {
	for _, d := range ds {
		if d.ev == nil || d.ev.Type != e.typ || d.contextID() != e.data["contextId"] {
			continue
		}
		if v, _ := d.data()["version"].(float64); e.version != 0 && int(v) != e.version {
			continue
		}
		return d
	}
	return nil
}

// deliveryData holds a delivery's data to what the run did, and the users
// in it to the versions' createdBy.
func (c *checker) deliveryData(d *delivery, e expectedEvent) {
	got := d.data()
	for k, want := range e.data {
		if show(got[k]) != show(want) {
			c.deliveryDiff(d, fmt.Sprintf("%s: data.%s is not what the run did", e.typ, k), fmt.Sprintf("data.%s %s", k, show(want)), fmt.Sprintf("data.%s %s", k, show(got[k])))
		}
	}
	for _, k := range []string{"createdBy", "updatedBy", "deletedBy"} {
		if v, ok := got[k].(string); ok && c.r.user != "" && v != c.r.user {
			c.deliveryDiff(d, fmt.Sprintf("%s: data.%s is not the key's user", e.typ, k), "data."+k+" "+c.r.user+" (the versions' createdBy)", "data."+k+" "+v)
		}
	}
	if e.typ == contextsvc.EventExportCompleted {
		if v, _ := got["exportId"].(string); !strings.HasPrefix(v, contract.PrefixExport) {
			c.deliveryDiff(d, "export.completed: data.exportId is no export id", "data.exportId exp_…", "data.exportId "+show(got["exportId"]))
		}
	}
}

// deliveryDiff records a difference in a delivery; the SDK's verdict is
// its reading of the delivery.
func (c *checker) deliveryDiff(d *delivery, summary, contractSays, got string) {
	c.add(&Difference{Kind: KindDelivery, Summary: summary, Request: showDelivery(d), Contract: contractSays, Got: got,
		judge: func() contract.Verdict { return contract.JudgeDelivery(d.body, d.reading) }})
}

// showDelivery shows a delivery as the report does.
func showDelivery(d *delivery) string {
	return fmt.Sprintf("delivery %s attempt %s of %s: %s", d.header.Get(contract.HeaderDelivery), d.header.Get(contract.HeaderDeliveryAttempt),
		d.header.Get(contract.HeaderEvent), excerpt(d.body, 300))
}

// checkEveryDelivery holds every delivery the receiver got to the contract:
// the SDK verifies and parses it, its headers are the contract's, its
// envelope matches the document.
func (r *runner) checkEveryDelivery(c *checker, ds []*delivery) {
	seen := map[string]bool{}
	for _, d := range ds {
		if d.reading.Err != nil {
			c.deliveryDiff(d, "a delivery the SDK refuses: "+d.reading.Err.Error(), "a delivery ConstructEvent verifies and parses with the webhook's secret", showDelivery(d))
			continue
		}
		ct, _, _ := mime.ParseMediaType(d.header.Get("Content-Type"))
		for _, h := range []struct{ name, want, got string }{
			{"Content-Type", "application/json", ct},
			{contract.HeaderEvent, string(d.ev.Type), d.header.Get(contract.HeaderEvent)},
		} {
			if h.got != h.want {
				c.deliveryDiff(d, fmt.Sprintf("a delivery's %s is not the contract's", h.name), h.name+": "+h.want, h.name+": "+h.got)
			}
		}
		if !strings.HasPrefix(d.header.Get(contract.HeaderDelivery), contract.PrefixDelivery) {
			c.deliveryDiff(d, "a delivery without its delivery id", contract.HeaderDelivery+": dlv_…", contract.HeaderDelivery+": "+d.header.Get(contract.HeaderDelivery))
		}
		if d.attempt() < 1 {
			c.deliveryDiff(d, "a delivery without its attempt number", contract.HeaderDeliveryAttempt+": 1, 2, …", contract.HeaderDeliveryAttempt+": "+d.header.Get(contract.HeaderDeliveryAttempt))
		}
		if seen[d.ev.ID] {
			continue // its envelope was checked with its first attempt
		}
		seen[d.ev.ID] = true
		if ms := r.spec.CheckEvent(d.body); len(ms) > 0 {
			c.add(&Difference{Kind: KindDelivery, Summary: string(d.ev.Type) + ": " + mismatchSummary(ms), Request: showDelivery(d),
				Contract: "an event as openapi.yaml states it", Got: excerpt(d.body, 300), Document: ms,
				judge: func() contract.Verdict { return contract.JudgeDelivery(d.body, d.reading) }})
		}
	}
}

// checkRetry waits for the retry of the delivery attempt the receiver
// failed, and holds it to the contract: the same delivery and event, the
// next attempt number, the same body signed anew, after the schedule's
// first delay.
func (r *runner) checkRetry(c *checker) {
	if r.webhook.subject == nil {
		c.skip("no webhook registered, or its context not created (see webhooks.register)")
		return
	}
	r.rcv.wait(c.ctx, r.cfg.DeliveryTimeout, func([]*delivery) bool { _, f := r.rcv.snapshot(); return f != nil })
	_, failed := r.rcv.snapshot()
	if failed == nil {
		c.note(KindMissing, "no delivery attempt arrived to fail", "a context.created delivery for "+r.webhook.subject.ID, "none",
			"nothing arrives for the SDK to read: a receiver written against the mock waits for it in vain")
		return
	}
	delay := contract.RetrySchedule()[0]
	if r.cfg.OnRetryWait != nil {
		r.cfg.OnRetryWait()
	}
	deliveryID := failed.header.Get(contract.HeaderDelivery)
	r.progress("waiting up to %s for the retry of delivery %s (the contract retries after %s)", r.cfg.RetryTimeout, deliveryID, delay)
	var retry *delivery
	r.rcv.wait(c.ctx, r.cfg.RetryTimeout, func(ds []*delivery) bool {
		for _, d := range ds {
			if d != failed && d.header.Get(contract.HeaderDelivery) == deliveryID && d.attempt() > failed.attempt() {
				retry = d
				return true
			}
		}
		return false
	})
	if retry == nil {
		c.note(KindMissing, "a failed delivery attempt is not retried", fmt.Sprintf("attempt %d of delivery %s after %s", failed.attempt()+1, deliveryID, delay),
			fmt.Sprintf("nothing within %s", r.cfg.RetryTimeout), "a receiver that fails once loses the event for good, where the mock retries it")
		return
	}
	after := retry.at.Sub(failed.at)
	c.res.Note = fmt.Sprintf("retried after %s", after.Round(time.Second))
	switch {
	case retry.attempt() != failed.attempt()+1:
		c.deliveryDiff(retry, "a retry's attempt number does not follow the failed one's", fmt.Sprintf("%s: %d", contract.HeaderDeliveryAttempt, failed.attempt()+1), fmt.Sprintf("%s: %d", contract.HeaderDeliveryAttempt, retry.attempt()))
	case retry.ev == nil:
		c.deliveryDiff(retry, "a retry the SDK refuses", "the same event, signed with the webhook's secret", showDelivery(retry))
	case retry.ev.ID != failed.ev.ID || !bytes.Equal(retry.body, failed.body):
		c.deliveryDiff(retry, "a retry does not send the same event", "the failed attempt's body, byte for byte", excerpt(retry.body, 300))
	}
	if after < delay-time.Second || after > delay+30*time.Second {
		c.note(KindValue, "a failed delivery attempt is retried on another schedule", fmt.Sprintf("the retry %s after the failed attempt", delay),
			fmt.Sprintf("the retry %s after it", after.Round(time.Second)), "the SDK does not see when a retry comes; a receiver that counts on the schedule does")
	}
}

// checkOnce counts, for the contexts of the other checks, the distinct
// events each fired: each change once, none for an idempotent repeat or an
// update that changed nothing; and holds each export.completed to the
// export that fired it.
func (r *runner) checkOnce(c *checker) {
	if r.webhook.id == "" {
		c.skip("no webhook registered (see webhooks.register)")
		return
	}
	if len(r.eventsDue) == 0 {
		c.skip("the checks whose events it counts did not run")
		return
	}
	count := func(ds []*delivery, e eventDue) int {
		ids := map[string]bool{}
		for _, d := range ds {
			if d.ev != nil && string(d.ev.Type) == e.typ && d.contextID() == e.contextID {
				ids[d.ev.ID] = true
			}
		}
		return len(ids)
	}
	r.progress("waiting up to %s for the events of the other checks", r.cfg.DeliveryTimeout)
	r.rcv.wait(c.ctx, r.cfg.DeliveryTimeout, func(ds []*delivery) bool {
		for _, e := range r.eventsDue {
			if count(ds, e) < e.want {
				return false
			}
		}
		return true
	})
	ds := r.rcv.all()
	for _, e := range r.eventsDue {
		if n := count(ds, e); n != e.want {
			c.note(KindValue, fmt.Sprintf("%s: the %s fired another number of events", e.typ, e.what),
				fmt.Sprintf("%d %s events for %s", e.want, e.typ, e.contextID), fmt.Sprintf("%d%s", n, r.rcv.droppedNote()),
				"the SDK hands every event it verifies to the receiver's function: code that counts on the mock's events sees others")
		}
	}
	for _, x := range r.exports {
		for _, d := range ds {
			if d.ev == nil || d.ev.Type != contextsvc.EventExportCompleted || d.contextID() != x.contextID {
				continue
			}
			data := d.data()
			format, _ := data["format"].(string)
			version, _ := data["version"].(float64)
			size, _ := data["sizeBytes"].(float64)
			if !slices.ContainsFunc(x.done, func(e exportDone) bool {
				return e.format == format && e.version == int(version) && e.size == int(size)
			}) {
				c.deliveryDiff(d, "export.completed: no export of that format, version and size",
					"the canonical format, version and size of an export the run made: "+fmt.Sprint(x.done), show(data))
			}
		}
	}
}
