package state

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// The state document is JSON (the MockState schema of openapi.yaml states
// it field by field):
//
//	{"format":"contextsvc-mock-state","version":1,"savedAt":…,["clock":"fake",]"cursorSalt":…,"eventSeq":…,"deliverySeq":…,
//	 "accounts":[{"id":…,"contextSeq":…,"contexts":[{"id":…,"seq":…,"versions":[…]}],"webhooks":[…]}],
//	 "events":[envelope…],"deliveries":[…]}
//
// It is written as a stream, one context (webhook, event, delivery) to a
// line, so a fixture file diffs well, and read as a stream (read.go).
// A context holds its versions only (its current name, content and tags
// are its last version's), so each text is written once.

// Patterns of the ids and times in a state document: the same text as the
// document's schemas (TestDocumentPatternsAreTheServers).
const (
	TimestampPattern  = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`
	ContextIDPattern  = `^ctx_[a-z0-9]{20,}$`
	UserIDPattern     = `^user_[a-z0-9]{20,}$`
	WebhookIDPattern  = `^wh_[a-z0-9]{20,}$`
	DeliveryIDPattern = `^dlv_[a-z0-9]{20,}$`
	EventIDPattern    = `^evt_[a-z0-9]{20,}$`
	SaltPattern       = `^[0-9a-f]{32}$`
)

var (
	timestampRegexp  = regexp.MustCompile(TimestampPattern)
	contextIDRegexp  = regexp.MustCompile(ContextIDPattern)
	userIDRegexp     = regexp.MustCompile(UserIDPattern)
	webhookIDRegexp  = regexp.MustCompile(WebhookIDPattern)
	deliveryIDRegexp = regexp.MustCompile(DeliveryIDPattern)
	eventIDRegexp    = regexp.MustCompile(EventIDPattern)
	saltRegexp       = regexp.MustCompile(SaltPattern)
)

// maxStateSeq bounds the numbers of a document (sequence numbers, word
// count deltas, durations): 2^52, so that it and the number after it are
// exact in a float64, as JSON numbers are read.
const maxStateSeq = 1 << 52

// stateWriter writes the document with the JSON library's encoder: each
// item (the header, an account's header, a context, a webhook, a
// delivery) is encoded as a value of its own into item, and set in the
// document's frame with the line breaks between them. An event is written
// as the exact bytes its attempts sign. The first error sticks.
type stateWriter struct {
	tokens // an item's, written into item
	w      *bufio.Writer
	n      int64
	item   bytes.Buffer
	buf    []byte // a context's bytes (context)
	err    error
}

// stateEncoding is how the document's strings are written: as they were
// before the library wrote them (<, >, &, U+2028 and U+2029 escaped), so a
// file saved again is the same bytes. Names are the writer's own, never
// repeated; a string that is not valid UTF-8 (a receiver's answer) has
// each bad byte replaced.
var stateEncoding = []jsontext.Options{
	jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true),
	jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true),
}

// raw writes bytes of the document's frame.
func (sw *stateWriter) raw(b string) {
	if sw.err == nil {
		var n int
		n, sw.err = sw.w.WriteString(b)
		sw.n += int64(n)
	}
}

// begin starts an item.
func (sw *stateWriter) begin() {
	sw.item.Reset()
	sw.tok(jsontext.BeginObject)
}

// end ends an item and writes it, less its closing brace when open (the
// frame goes on with the item's lists).
func (sw *stateWriter) end(open bool) {
	sw.tok(jsontext.EndObject)
	if sw.err == nil {
		sw.err = sw.tokens.err
	}
	if sw.err != nil {
		return
	}
	b := bytes.TrimSuffix(sw.item.Bytes(), []byte("\n"))
	if open {
		b = b[:len(b)-1]
	}
	var n int
	n, sw.err = sw.w.Write(b)
	sw.n += int64(n)
}

// tokens writes tokens through an encoder; the first error sticks.
type tokens struct {
	e   *jsontext.Encoder
	err error
}

func (t *tokens) tok(tok jsontext.Token) {
	if t.err == nil {
		t.err = t.e.WriteToken(tok)
	}
}

func (t *tokens) str(name, v string) {
	t.tok(jsontext.String(name))
	t.tok(jsontext.String(v))
}

func (t *tokens) int(name string, v int64) {
	t.tok(jsontext.String(name))
	t.tok(jsontext.Int(v))
}

func (t *tokens) uint(name string, v uint64) {
	t.tok(jsontext.String(name))
	t.tok(jsontext.Uint(v))
}

func (t *tokens) time(name string, v time.Time) {
	t.tok(jsontext.String(name))
	if t.err == nil {
		// Formatted in place: a version has one, a delivery a few.
		var buf [40]byte
		b := append(buf[:0], '"')
		b = append(v.UTC().AppendFormat(b, jsonwire.TimeFormat), '"')
		t.err = t.e.WriteValue(b)
	}
}

// writeTo writes the document to w and returns the bytes written.
func (snap *Snapshot) WriteTo(w io.Writer) (int64, error) {
	// Through a function: a *bufio.Writer given as w is not taken over.
	sw := &stateWriter{w: bufio.NewWriterSize(writerFunc(w.Write), 256<<10)}
	sw.item.Grow(64 << 10)
	sw.e = jsontext.NewEncoder(&sw.item, stateEncoding...)
	sw.begin()
	sw.str("format", FormatName)
	sw.int("version", Version)
	sw.time("savedAt", snap.SavedAt)
	if snap.FakeClock {
		// Only then: a document of the wall clock stays as older
		// servers read it.
		sw.str("clock", ClockFake)
	}
	sw.str("cursorSalt", hex.EncodeToString(snap.Salt[:]))
	sw.uint("eventSeq", snap.EventSeq)
	sw.uint("deliverySeq", snap.DeliverySeq)
	sw.uint("webhookSeq", snap.Store.WebhookSeq)
	sw.end(true)
	sw.raw(`,"accounts":[`)
	for i := range snap.Store.Accounts {
		if i > 0 {
			sw.raw(",")
		}
		sw.raw("\n")
		sw.account(&snap.Store.Accounts[i])
	}
	sw.raw("\n],\"events\":[")
	// The events the pending deliveries need, each once: the exact bytes
	// their attempts sign.
	written := make(map[*delivery.Body]bool)
	for _, d := range snap.Deliveries {
		if written[d.Event] {
			continue
		}
		if len(written) > 0 {
			sw.raw(",")
		}
		written[d.Event] = true
		sw.raw("\n")
		sw.raw(string(d.Event.Bytes))
	}
	sw.raw("\n],\"deliveries\":[")
	for i := range snap.Deliveries {
		if i > 0 {
			sw.raw(",")
		}
		sw.raw("\n")
		sw.delivery(&snap.Deliveries[i])
	}
	sw.raw("\n]}\n")
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.n, sw.err
}

// writerFunc adapts a function to io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (sw *stateWriter) account(a *store.SavedAccount) {
	sw.begin()
	sw.str("id", a.ID)
	sw.uint("contextSeq", a.ContextSeq)
	sw.end(true)
	sw.raw(`,"contexts":[`)
	for i := range a.Contexts {
		if i > 0 {
			sw.raw(",")
		}
		sw.raw("\n")
		sw.context(&a.Contexts[i])
	}
	sw.raw("\n],\"webhooks\":[")
	for i := range a.Webhooks {
		if i > 0 {
			sw.raw(",")
		}
		sw.raw("\n")
		sw.webhook(&a.Webhooks[i])
	}
	sw.raw("\n]}")
}

// context writes a context with its versions, each as the store writes
// what a version records (model.VersionRecordJSON, a Version without its
// contextId). Contexts are nearly all of a document, so their bytes are
// appended (jsonwire quotes each string as the encoder would) rather than
// written through the encoder's tokens: see jsonwire.AppendString for the
// figures.
func (sw *stateWriter) context(c *store.SavedContext) {
	if sw.err != nil {
		return
	}
	b := append(sw.buf[:0], `{"id":`...)
	b = jsonwire.AppendString(b, c.ID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, c.Seq, 10)
	b = append(b, `,"versions":[`...)
	for i, v := range c.Versions {
		if i > 0 {
			b = append(b, ',')
		}
		b = store.AppendVersionRecordJSON(b, v)
	}
	b = append(b, "]}"...)
	var n int
	n, sw.err = sw.w.Write(b)
	sw.n += int64(n)
	if cap(b) <= 1<<20 {
		sw.buf = b // kept for the next context, unless one was huge
	}
}

func (sw *stateWriter) webhook(w *store.SavedWebhook) {
	sw.begin()
	sw.str("id", w.ID)
	sw.uint("seq", w.Seq)
	sw.str("url", w.State.URL)
	sw.tok(jsontext.String("events"))
	sw.tok(jsontext.BeginArray)
	for _, e := range w.State.Events {
		sw.tok(jsontext.String(string(e)))
	}
	sw.tok(jsontext.EndArray)
	sw.str("secret", w.State.Secret)
	sw.time("createdAt", w.CreatedAt)
	sw.tok(jsontext.String("active"))
	sw.tok(jsontext.Bool(w.State.Active))
	sw.end(false)
}

func (sw *stateWriter) delivery(d *delivery.Saved) {
	sw.begin()
	sw.str("id", d.ID)
	sw.uint("seq", d.Seq)
	sw.str("eventId", d.Event.ID)
	sw.str("webhookId", d.WebhookID)
	sw.str("url", d.URL)
	sw.time("createdAt", d.CreatedAt)
	sw.time("nextAttemptAt", d.DueAt)
	sw.int("retries", int64(d.Retries))
	sw.tok(jsontext.String("attempts"))
	sw.tok(jsontext.BeginArray)
	for _, a := range d.Attempts {
		// As the admin API shows an attempt (delivery.Attempt.MarshalJSON).
		sw.tok(jsontext.BeginObject)
		sw.int("number", int64(a.Number))
		sw.time("scheduledAt", a.ScheduledAt)
		sw.time("startedAt", a.StartedAt)
		sw.int("durationNs", int64(a.Duration))
		if a.StatusCode != 0 {
			sw.int("statusCode", int64(a.StatusCode))
		}
		if a.Error != "" {
			sw.str("error", a.Error)
		}
		if a.ResponseSnippet != "" {
			sw.str("responseSnippet", a.ResponseSnippet)
		}
		if a.TraceID != "" {
			sw.str("traceId", a.TraceID)
		}
		if a.Chaos.Action != "" {
			sw.tok(jsontext.String("chaos"))
			sw.tok(jsontext.BeginObject)
			sw.str("action", string(a.Chaos.Action))
			sw.int("delayNs", int64(a.Chaos.Delay))
			sw.tok(jsontext.EndObject)
		}
		sw.tok(jsontext.EndObject)
	}
	sw.tok(jsontext.EndArray)
	sw.end(false)
}
