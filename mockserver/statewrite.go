package mockserver

import (
	"bufio"
	"encoding/hex"
	"io"
	"regexp"
	"strconv"
)

// The state document is JSON (the MockState schema of openapi.yaml states
// it field by field):
//
//	{"format":"contextsvc-mock-state","version":1,"savedAt":…,"cursorSalt":…,"eventSeq":…,"deliverySeq":…,
//	 "accounts":[{"id":…,"contextSeq":…,"contexts":[{"id":…,"seq":…,"versions":[…]}],"webhooks":[…]}],
//	 "events":[envelope…],"deliveries":[…]}
//
// It is written as a stream, one context (webhook, event, delivery) to a
// line, so a fixture file diffs well, and read as a stream (stateread.go).
// A context holds its versions only (its current name, content and tags
// are its last version's), so each text is written once.

// Patterns of the ids and times in a state document: the same text as the
// document's schemas (TestDocumentPatternsAreTheServers).
const (
	timestampPattern  = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`
	contextIDPattern  = `^ctx_[a-z0-9]{20,}$`
	userIDPattern     = `^user_[a-z0-9]{20,}$`
	webhookIDPattern  = `^wh_[a-z0-9]{20,}$`
	deliveryIDPattern = `^dlv_[a-z0-9]{20,}$`
	eventIDPattern    = `^evt_[a-z0-9]{20,}$`
	saltPattern       = `^[0-9a-f]{32}$`
)

var (
	timestampRegexp  = regexp.MustCompile(timestampPattern)
	contextIDRegexp  = regexp.MustCompile(contextIDPattern)
	userIDRegexp     = regexp.MustCompile(userIDPattern)
	webhookIDRegexp  = regexp.MustCompile(webhookIDPattern)
	deliveryIDRegexp = regexp.MustCompile(deliveryIDPattern)
	eventIDRegexp    = regexp.MustCompile(eventIDPattern)
	saltRegexp       = regexp.MustCompile(saltPattern)
)

// maxStateSeq bounds the numbers of a document (sequence numbers, word
// count deltas, durations): 2^52, so that it and the number after it are
// exact in a float64, as JSON numbers are read.
const maxStateSeq = 1 << 52

// stateWriter writes the document through a buffer, encoding each item
// into b first; the first error sticks.
type stateWriter struct {
	w   *bufio.Writer
	n   int64
	b   []byte
	err error
}

func (sw *stateWriter) Write(p []byte) (int, error) {
	n, err := sw.w.Write(p)
	sw.n += int64(n)
	return n, err
}

// flush moves b to the buffered writer once it is large (or when forced).
func (sw *stateWriter) flush(force bool) {
	if sw.err != nil || (!force && len(sw.b) < 64<<10) {
		return
	}
	_, sw.err = sw.w.Write(sw.b)
	sw.n += int64(len(sw.b))
	sw.b = sw.b[:0]
}

// writeTo writes the document to w and returns the bytes written.
func (snap *stateSnapshot) writeTo(w io.Writer) (int64, error) {
	sw := &stateWriter{b: make([]byte, 0, 128<<10)}
	sw.w = bufio.NewWriterSize(writerFunc(func(p []byte) (int, error) { return w.Write(p) }), 256<<10)
	b := sw.b
	b = append(b, `{"format":"`+stateFormatName+`","version":`...)
	b = strconv.AppendInt(b, StateFormatVersion, 10)
	b = append(b, `,"savedAt":"`...)
	b = snap.savedAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","cursorSalt":"`...)
	b = hex.AppendEncode(b, snap.salt[:])
	b = append(b, `","eventSeq":`...)
	b = strconv.AppendUint(b, snap.eventSeq, 10)
	b = append(b, `,"deliverySeq":`...)
	b = strconv.AppendUint(b, snap.deliverySeq, 10)
	b = append(b, `,"webhookSeq":`...)
	b = strconv.AppendUint(b, snap.webhookSeq, 10)
	b = append(b, `,"accounts":[`...)
	sw.b = b
	for i := range snap.accounts {
		sw.account(&snap.accounts[i], i == 0)
	}
	sw.b = append(sw.b, "\n],\"events\":["...)
	// The events the pending deliveries need, each once: the exact bytes
	// their attempts sign.
	written := make(map[*eventBody]bool)
	for _, d := range snap.deliveries {
		if written[d.event] {
			continue
		}
		if len(written) > 0 {
			sw.b = append(sw.b, ',')
		}
		written[d.event] = true
		sw.b = append(sw.b, '\n')
		sw.b = append(sw.b, d.event.body...)
		sw.flush(false)
	}
	sw.b = append(sw.b, "\n],\"deliveries\":["...)
	for i := range snap.deliveries {
		if i > 0 {
			sw.b = append(sw.b, ',')
		}
		sw.b = append(sw.b, '\n')
		sw.delivery(&snap.deliveries[i])
		sw.flush(false)
	}
	sw.b = append(sw.b, "\n]}\n"...)
	sw.flush(true)
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.n, sw.err
}

// writerFunc adapts a function to io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (sw *stateWriter) account(a *savedAccount, first bool) {
	if !first {
		sw.b = append(sw.b, ',')
	}
	sw.b = append(sw.b, "\n{\"id\":"...)
	sw.b = appendJSONString(sw.b, a.id)
	sw.b = append(sw.b, `,"contextSeq":`...)
	sw.b = strconv.AppendUint(sw.b, a.contextSeq, 10)
	sw.b = append(sw.b, `,"contexts":[`...)
	for i := range a.contexts {
		if i > 0 {
			sw.b = append(sw.b, ',')
		}
		sw.b = append(sw.b, '\n')
		sw.context(&a.contexts[i])
		sw.flush(false)
	}
	sw.b = append(sw.b, "\n],\"webhooks\":["...)
	for i := range a.webhooks {
		if i > 0 {
			sw.b = append(sw.b, ',')
		}
		sw.b = append(sw.b, '\n')
		sw.webhook(&a.webhooks[i])
	}
	sw.b = append(sw.b, "\n]}"...)
}

func (sw *stateWriter) context(c *savedContext) {
	b := append(sw.b, `{"id":`...)
	b = appendJSONString(b, c.id)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, c.seq, 10)
	b = append(b, `,"versions":[`...)
	for i, vr := range c.versions {
		if i > 0 {
			b = append(b, ',')
		}
		v := &vr.v
		b = append(b, `{"version":`...)
		b = strconv.AppendInt(b, int64(v.Version), 10)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, v.Name)
		b = append(b, `,"content":`...)
		b = appendJSONString(b, v.Content)
		b = append(b, `,"tags":`...)
		b = appendStrings(b, v.Tags)
		b = append(b, `,"createdAt":"`...)
		b = v.CreatedAt.UTC().AppendFormat(b, timeFormat)
		b = append(b, `","createdBy":`...)
		b = appendJSONString(b, v.CreatedBy)
		b = append(b, `,"changes":{"sections_modified":`...)
		b = appendStrings(b, v.Changes.SectionsModified)
		b = append(b, `,"word_count_delta":`...)
		b = strconv.AppendInt(b, int64(v.Changes.WordCountDelta), 10)
		b = append(b, "}}"...)
	}
	sw.b = append(b, "]}"...)
}

func appendStrings(b []byte, l []string) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

func (sw *stateWriter) webhook(w *savedWebhook) {
	b := append(sw.b, `{"id":`...)
	b = appendJSONString(b, w.id)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, w.seq, 10)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, w.state.url)
	b = append(b, `,"events":[`...)
	for i, e := range w.state.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, string(e))
	}
	b = append(b, `],"secret":`...)
	b = appendJSONString(b, w.state.secret)
	b = append(b, `,"createdAt":"`...)
	b = w.createdAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","active":`...)
	b = strconv.AppendBool(b, w.state.active)
	sw.b = append(b, '}')
}

func (sw *stateWriter) delivery(d *savedDelivery) {
	b := append(sw.b, `{"id":`...)
	b = appendJSONString(b, d.id)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, d.seq, 10)
	b = append(b, `,"eventId":`...)
	b = appendJSONString(b, d.event.id)
	b = append(b, `,"webhookId":`...)
	b = appendJSONString(b, d.webhookID)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, d.url)
	b = append(b, `,"createdAt":"`...)
	b = d.createdAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","nextAttemptAt":"`...)
	b = d.dueAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","retries":`...)
	b = strconv.AppendInt(b, int64(d.retries), 10)
	b = append(b, `,"attempts":[`...)
	for i, a := range d.attempts {
		if i > 0 {
			b = append(b, ',')
		}
		j, err := a.MarshalJSON()
		if err != nil && sw.err == nil {
			sw.err = err
		}
		b = append(b, j...)
	}
	sw.b = append(b, "]}"...)
}
