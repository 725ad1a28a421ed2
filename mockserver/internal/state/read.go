package state

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// This file reads and validates a state document (the MockState schema of
// openapi.yaml; write.go writes it) as a stream, with the JSON
// library's streaming decoder: a context is built as soon as it is read,
// and nothing holds the document's bytes. The decoder refuses a name given
// twice and invalid UTF-8 (lone surrogate escapes included); the
// unmarshaling refuses unknown members (RejectUnknownMembers), and the
// unmarshalers of the document's types refuse null; every field is held
// to the API's own rules, with its messages. The first fault stops the reading with an Error naming
// its path.

// stateReader reads one document.
type stateReader struct {
	cfg  ReadConfig
	src  readErrs
	st   *Loaded
	opts json.Options

	// ids seen so far: each kind is unique in the document
	contextIDs, accountIDs, deliveryIDs map[string]bool

	webhooks        map[string]*store.Webhook // by id, once their account is read
	webhookIDs      map[string]bool           // every webhook id read so far
	events          map[string]*delivery.Body
	refs            []deliveryRef
	lastDeliverySeq uint64
	webhookSeqs     map[uint64]bool // registration order: each webhook's place is its own
	lastWebhookSeq  uint64

	// What the lists being read add to: the account, the context (and
	// which of its versions need their changes worked out), the
	// delivery's attempts.
	acct     *draftAccount
	context  *draftContext
	need     []bool
	attempts []delivery.Attempt

	scratch []byte   // a string's text while it is checked
	tags    []string // a version's tags as read, reused
	// The objects read most often, reused: one each per read, not per
	// object (a version's is some 200 bytes, for every version).
	contextDoc contextDoc
	versionDoc versionDoc
	// interned holds the strings read as internStr and in tag, event and
	// section lists, each once: user ids, tags and section names repeat
	// across thousands of versions.
	interned map[string]string

	// The Markdown analysis of each context (and the changes its versions
	// do not give) is made by workers, beside the reading.
	analyses chan analysisJob
	analyzed sync.WaitGroup
}

// maxInterned bounds the interned strings.
const maxInterned = 100_000

// readErrs passes reads through, keeping the first error other than
// io.EOF: a failure to read the document is returned as it is, not as a
// fault of the document.
type readErrs struct {
	r   io.Reader
	err error
}

func (r *readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// analysisJob is a context whose analysis is to be made: its md, and the
// changes of the versions marked in need (nil: none).
type analysisJob struct {
	c    *store.Context
	need []bool
}

// deliveryRef is a read delivery whose event and webhook are looked up
// once the whole document is read (the events may come after).
type deliveryRef struct {
	index   int // in deliveries
	d       delivery.Saved
	eventID string
	hasURL  bool
}

// Read reads and validates a whole document; nothing is applied.
func Read(r io.Reader, cfg ReadConfig) (*Loaded, error) {
	rd := &stateReader{
		cfg: cfg, src: readErrs{r: r}, st: &Loaded{},
		contextIDs: make(map[string]bool), accountIDs: make(map[string]bool), deliveryIDs: make(map[string]bool),
		webhooks: make(map[string]*store.Webhook), webhookIDs: make(map[string]bool), events: make(map[string]*delivery.Body), webhookSeqs: make(map[uint64]bool),
	}
	rd.opts = rd.options()
	err := rd.document(jsontext.NewDecoder(&rd.src))
	if rd.analyses != nil {
		close(rd.analyses)
		rd.analyzed.Wait() // on an error too: no worker outlives the reading
	}
	if err != nil {
		return nil, err
	}
	return rd.st, nil
}

// options are the unmarshaling's: unknown members refused, and the
// document's own types read by the reader's functions (which refuse null:
// see peek).
func (rd *stateReader) options() json.Options {
	return json.JoinOptions(
		json.RejectUnknownMembers(true),
		json.WithUnmarshalers(json.JoinUnmarshalers(
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *plainStr) (err error) {
				s.v, err = rd.str(dec, jsonwire.StrPlain, false)
				s.ok = true
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *textStr) (err error) {
				s.v, err = rd.str(dec, jsonwire.StrText, false)
				s.ok = true
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *lenientStr) (err error) {
				s.v, err = rd.str(dec, jsonwire.StrLenient, false)
				s.ok = true
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *internStr) (err error) {
				s.v, err = rd.str(dec, jsonwire.StrPlain, true)
				s.ok = true
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, l *strList) (err error) {
				l.v, err = rd.strs(dec, jsonwire.StrPlain, l.v[:0])
				l.ok = true
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, l *sectionList) (err error) {
				l.v, err = rd.strs(dec, jsonwire.StrLenient, []string{})
				return err
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *accountList) error {
				return elements(dec, rd.account)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *contextList) error {
				return elements(dec, rd.contextAt)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, l *versionList) error {
				l.ok = true
				return elements(dec, rd.version)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *webhookList) error {
				return elements(dec, rd.webhook)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *eventList) error {
				return elements(dec, rd.event)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *deliveryList) error {
				return elements(dec, rd.delivery)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *attemptList) error {
				return elements(dec, rd.attempt)
			}),
		)))
}

// The document's fields. A field's type says how its value is read (the
// reader's functions above, or the type's method); ok tells a field given
// from one absent.
type (
	plainStr struct {
		v  string
		ok bool
	} // strPlain
	textStr struct {
		v  string
		ok bool
	} // strText: content
	lenientStr struct {
		v  string
		ok bool
	} // strLenient: a receiver's words
	internStr struct {
		v  string
		ok bool
	} // strPlain, held once: user ids
	strList struct {
		v  []string
		ok bool
	}
	// sectionList is a version's sections_modified: heading text, which
	// may hold a tab, so any character is taken.
	sectionList struct{ v []string }

	accountList  struct{}
	contextList  struct{}
	versionList  struct{ ok bool }
	webhookList  struct{}
	eventList    struct{}
	deliveryList struct{}
	attemptList  struct{}
)

// wholeNumber is a whole number (5, 5.0 and 5e0 alike, as JSON Schema's
// integer takes them) in R's bounds.
type wholeNumber[R numberRange] struct {
	v  int
	ok bool
}

type numberRange interface{ bounds() (int, int) }

type (
	seqRange     struct{} // sequence numbers: 1 to maxStateSeq
	countRange   struct{} // counts and durations: 0 to maxStateSeq
	deltaRange   struct{} // word count deltas
	statusRange  struct{} // an attempt's HTTP status, 0 when none came
	retriesRange struct{}
	// chaosDelayRange is a chaos delay in nanoseconds: 0 to
	// model.MaxChaosDelay.
	chaosDelayRange struct{}
)

func (seqRange) bounds() (int, int)     { return 1, maxStateSeq }
func (countRange) bounds() (int, int)   { return 0, maxStateSeq }
func (deltaRange) bounds() (int, int)   { return -maxStateSeq, maxStateSeq }
func (statusRange) bounds() (int, int)  { return 0, 999 }
func (retriesRange) bounds() (int, int) { return 0, 1_000_000 }
func (chaosDelayRange) bounds() (int, int) {
	return 0, int(model.MaxChaosDelay)
}

// UnmarshalJSONFrom reads the number, with the API's message.
func (n *wholeNumber[R]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var r R
	lo, hi := r.bounds()
	fail := func(read bool) error {
		path, label := jsonwire.ReadingPlace(dec, read)
		return stateErr(path, "%s must be a whole number from %d to %d", label, lo, hi)
	}
	if k, err := peek(dec); err != nil || k != '0' {
		return cmp.Or(err, fail(false))
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	f, err := tok.Float()
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return fail(true)
	}
	n.v, n.ok = int(f), true
	return nil
}

// docBool is true or false.
type docBool struct{ v, ok bool }

// UnmarshalJSONFrom reads the boolean, with the API's message.
func (b *docBool) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k, err := peek(dec); err != nil || (k != 't' && k != 'f') {
		if err != nil {
			return err
		}
		path, label := jsonwire.ReadingPlace(dec, false)
		return stateErr(path, "%s must be true or false", label)
	}
	tok, err := dec.ReadToken()
	b.v, b.ok = tok.Bool(), true
	return err
}

// docTime is a time as the API writes them.
type docTime struct {
	v  time.Time
	ok bool
}

// UnmarshalJSONFrom reads the time, with the API's message.
func (t *docTime) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	fail := func(read bool) error {
		path, _ := jsonwire.ReadingPlace(dec, read)
		return stateErr(path, "must be a time in RFC 3339, UTC, with milliseconds, such as 2026-11-21T20:51:00.123Z")
	}
	if k, err := peek(dec); err != nil || k != '"' {
		return cmp.Or(err, fail(false))
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var buf [32]byte
	b := jsonwire.UnquoteInto(buf[:0], v)
	if at, r := jsonwire.ControlChar(b, false); at >= 0 {
		path, label := jsonwire.ReadingPlace(dec, true)
		return stateErr(path, "%s%s", label, jsonwire.ControlMessage(jsonwire.StrPlain, at, r))
	}
	if !timestampRegexp.Match(b) {
		return fail(true)
	}
	if t.v, err = time.Parse(jsonwire.TimeFormat, string(b)); err != nil {
		return fail(true)
	}
	t.ok = true
	return nil
}

// eventData is an event's data: any JSON object, not checked further.
type eventData struct{ ok bool }

// UnmarshalJSONFrom skips the object.
func (d *eventData) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k, err := peek(dec); err != nil || k != '{' {
		if err != nil {
			return err
		}
		path, _ := jsonwire.ReadingPlace(dec, false)
		return stateErr(path, "must be a JSON object")
	}
	d.ok = true
	return dec.SkipValue()
}

// str reads a string held to the API's rules for its kind; intern keeps
// one copy of each distinct value.
func (rd *stateReader) str(dec *jsontext.Decoder, kind int, intern bool) (string, error) {
	if k, err := peek(dec); err != nil || k != '"' {
		if err != nil {
			return "", err
		}
		path, label := jsonwire.ReadingPlace(dec, false)
		return "", stateErr(path, "%s must be a string", label)
	}
	v, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	b := jsonwire.UnquoteInto(rd.scratch[:0], v)
	rd.scratch = b
	if kind != jsonwire.StrLenient {
		if at, r := jsonwire.ControlChar(b, kind == jsonwire.StrText); at >= 0 {
			path, label := jsonwire.ReadingPlace(dec, true)
			return "", stateErr(path, "%s%s", label, jsonwire.ControlMessage(kind, at, r))
		}
	}
	if !intern {
		return string(b), nil
	}
	if s, ok := rd.interned[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if rd.interned == nil {
		rd.interned = make(map[string]string)
	}
	if len(rd.interned) < maxInterned {
		rd.interned[s] = s
	}
	return s, nil
}

// strs reads an array of strings of kind, each held once, into buf.
func (rd *stateReader) strs(dec *jsontext.Decoder, kind int, buf []string) ([]string, error) {
	if k, err := peek(dec); err != nil || k != '[' {
		if err != nil {
			return buf, err
		}
		path, label := jsonwire.ReadingPlace(dec, false)
		return buf, stateErr(path, "%s must be an array of strings", label)
	}
	if _, err := dec.ReadToken(); err != nil {
		return buf, err
	}
	for dec.PeekKind() != ']' {
		s, err := rd.str(dec, kind, true)
		if err != nil {
			return buf, err
		}
		buf = append(buf, s)
	}
	_, err := dec.ReadToken()
	return buf, err
}

// peek returns the kind of the next value, or the decoder's error when
// there is none (the document breaks, or ends). Every reader of the
// document's values starts with it, so null is refused as a member's
// value (an array's element is its array's reader's to check).
func peek(dec *jsontext.Decoder) (jsontext.Kind, error) {
	if k := dec.PeekKind(); k == 'n' {
		if kind, _ := dec.StackIndex(dec.StackDepth()); kind == '{' {
			return 0, stateErr(jsonwire.PointerPath(dec.StackPointer()), "must not be null")
		}
		return k, nil
	} else if k != 0 {
		return k, nil
	}
	_, err := dec.ReadToken()
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}

// elements reads an array of objects, calling each to read each one (the
// decoder at its start).
func elements(dec *jsontext.Decoder, each func(dec *jsontext.Decoder, i int) error) error {
	if k, err := peek(dec); err != nil || k != '[' {
		if err != nil {
			return err
		}
		path, _ := jsonwire.ReadingPlace(dec, false)
		return stateErr(path, "must be an array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			return err
		case '{':
			if err := each(dec, i); err != nil {
				return err
			}
		case 0: // the decoder's error, or the end
			_, err := peek(dec)
			return err
		default:
			path, _ := jsonwire.ReadingPlace(dec, false)
			return stateErr(path, "must be a JSON object")
		}
	}
}

// fault is a StateError about field of the object the decoder has just
// read.
func fault(dec *jsontext.Decoder, field, format string, args ...any) *Error {
	return stateErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), field), format, args...)
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// given is whether a field (by its JSON name) was given.
type given struct {
	name string
	ok   bool
}

// required checks that each field of the object the decoder has just read
// was given.
func required(dec *jsontext.Decoder, fields ...given) error {
	for _, f := range fields {
		if !f.ok {
			return fault(dec, f.name, "is required")
		}
	}
	return nil
}

// analyze hands a read context to the workers, starting them with the
// first one.
func (rd *stateReader) analyze(job analysisJob) {
	if rd.analyses == nil {
		n := runtime.GOMAXPROCS(0)
		rd.analyses = make(chan analysisJob, 64*n)
		rd.analyzed.Add(n)
		for range n {
			go func() {
				defer rd.analyzed.Done()
				for job := range rd.analyses {
					job.c.Analyze(job.need)
				}
			}()
		}
	}
	rd.analyses <- job
}

func stateErr(path, format string, args ...any) *Error {
	return &Error{Path: path, Message: fmt.Sprintf(format, args...)}
}

// apiErr turns one of the API's field checks into a StateError at path.
func apiErr(path string, e *httpapi.Error) error { return &Error{Path: path, Message: e.Message} }

// stateDoc is the top-level object.
type stateDoc struct {
	Format      formatName              `json:"format"`
	Version     formatVersion           `json:"version"`
	SavedAt     docTime                 `json:"savedAt"`
	Clock       plainStr                `json:"clock"`
	CursorSalt  plainStr                `json:"cursorSalt"`
	EventSeq    wholeNumber[countRange] `json:"eventSeq"`
	DeliverySeq wholeNumber[countRange] `json:"deliverySeq"`
	WebhookSeq  wholeNumber[countRange] `json:"webhookSeq"`
	Accounts    accountList             `json:"accounts"`
	Events      eventList               `json:"events"`
	Deliveries  deliveryList            `json:"deliveries"`
}

// formatName is the document's "format", checked as soon as it is read: a
// JSON file of another kind is told apart by it.
type formatName struct{ ok bool }

// UnmarshalJSONFrom reads the format.
func (f *formatName) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	k, err := peek(dec)
	if err != nil {
		return err
	}
	if k == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err // the document breaks here, whatever its kind
		}
		if tok.String() == FormatName {
			f.ok = true
			return nil
		}
	}
	return stateErr("format", `must be "%s": this is no contextsvc-mock state document`, FormatName)
}

// formatVersion is the document's "version", checked as soon as it is
// read: a newer format may have fields this one does not know, and its
// version is what to report.
type formatVersion struct{ wholeNumber[seqRange] }

// UnmarshalJSONFrom reads the version.
func (v *formatVersion) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if err := v.wholeNumber.UnmarshalJSONFrom(dec); err != nil {
		return err
	}
	if v.v > Version {
		return model.StateTooNew("version", fmt.Sprintf(
			"format version %d is newer than this mock server reads (%d): the document was written by a newer contextsvc-mock; run that one, or start without this state",
			v.v, Version))
	}
	return nil
}

// document reads the top-level object, then resolves the references.
func (rd *stateReader) document(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{':
	case 0:
		_, err := dec.ReadToken()
		return rd.docErr(dec, err)
	default:
		return stateErr("", "must be a JSON object")
	}
	var doc stateDoc
	if err := json.UnmarshalDecode(dec, &doc, rd.opts); err != nil {
		return rd.docErr(dec, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if rd.src.err != nil {
			return rd.src.err
		}
		rest := dec.UnreadBuffer()
		return stateErr("", "more data after the document's end, at byte %d", dec.InputOffset()+int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))))
	}
	if !doc.Format.ok {
		return stateErr("format", `is missing: a state document starts {"format":"%s","version":%d,…}`, FormatName, Version)
	}
	if !doc.Version.ok {
		return stateErr("version", "is missing")
	}
	if doc.CursorSalt.ok {
		if !saltRegexp.MatchString(doc.CursorSalt.v) {
			return stateErr("cursorSalt", "must be 32 lowercase hexadecimal digits")
		}
		rd.st.Salt = new([16]byte)
		_, _ = hex.Decode(rd.st.Salt[:], []byte(doc.CursorSalt.v))
	}
	switch {
	case !doc.Clock.ok:
	case doc.Clock.v == ClockFake:
		rd.st.FakeClock = true
	case doc.Clock.v != ClockReal:
		return stateErr("clock", `must be "%s" or "%s"`, ClockFake, ClockReal)
	}
	rd.st.SavedAt = doc.SavedAt.v
	rd.st.EventSeq = uint64(doc.EventSeq.v)
	rd.st.DeliverySeq = uint64(doc.DeliverySeq.v)
	rd.st.Store.WebhookSeq = uint64(doc.WebhookSeq.v)
	return rd.finish()
}

// docErr turns what stopped the reading into a StateError saying where,
// or the error reading the document, as it is.
func (rd *stateReader) docErr(dec *jsontext.Decoder, err error) error {
	if rd.src.err != nil {
		return rd.src.err
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	read := dec.InputOffset() + int64(len(dec.UnreadBuffer())) // all of it, at the end
	switch {
	case err == io.EOF:
		if len(bytes.TrimLeft(dec.UnreadBuffer(), " \t\r\n")) == 0 && dec.InputOffset() == 0 {
			return stateErr("", "the document is empty")
		}
		return stateErr("", "the document ends early, at byte %d: it was cut short", read)
	case jsonwire.IsCutShort(err):
		return stateErr("", "the document ends early, at byte %d: it was cut short", read)
	}
	if p, allowed, ok := jsonwire.UnknownMember(err); ok {
		return stateErr(jsonwire.PointerPath(p), "unknown field (allowed: %s)", allowed)
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		switch {
		case se.Err == jsontext.ErrDuplicateName:
			return stateErr(jsonwire.PointerPath(se.JSONPointer), "the field appears twice")
		case jsonwire.StringFault(se) != "":
			path, label := jsonwire.ValuePlace(se.JSONPointer)
			return stateErr(path, "%s%s", label, jsonwire.StringFault(se))
		}
		return stateErr("", "malformed JSON at byte %d: %v", se.ByteOffset, se.Err)
	}
	var me *json.SemanticError
	if errors.As(err, &me) {
		return stateErr(jsonwire.PointerPath(me.JSONPointer), "%v", me.Err)
	}
	return err
}

// accountDoc is an account.
type accountDoc struct {
	ID         plainStr                `json:"id"`
	ContextSeq wholeNumber[countRange] `json:"contextSeq"`
	Contexts   contextList             `json:"contexts"`
	Webhooks   webhookList             `json:"webhooks"`
}

// account reads an account, a context at a time.
func (rd *stateReader) account(dec *jsontext.Decoder, _ int) error {
	la := &draftAccount{}
	rd.acct = la
	var doc accountDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	acct := doc.ID.v
	if err := required(dec, given{"id", doc.ID.ok}); err != nil {
		return err
	}
	if err := rules.Account(acct); err != nil {
		return fault(dec, "id", "%s", err.Error())
	}
	switch {
	case len(la.webhooks) > rd.cfg.MaxWebhooks:
		return fault(dec, "webhooks", "%d webhooks: an account has at most %d", len(la.webhooks), rd.cfg.MaxWebhooks)
	case rd.accountIDs[acct]:
		return fault(dec, "id", "account %q appears twice", acct)
	case !rd.cfg.AddAccounts && !rd.cfg.Known(acct):
		return fault(dec, "id", "no key of this server belongs to account %q: a state's accounts must be the server's own "+
			"(give it a key: the command's -key KEY:plan:scope:%s, or mockserver.WithKey)", acct, acct)
	}
	rd.accountIDs[acct] = true
	loaded := &store.LoadedAccount{ID: acct, Contexts: la.contexts}
	if n := len(la.contexts); n > 0 {
		loaded.ContextSeq = la.contexts[n-1].Seq()
	}
	if doc.ContextSeq.ok {
		if uint64(doc.ContextSeq.v) < loaded.ContextSeq {
			return fault(dec, "contextSeq", "%d is below the last context's seq %d", doc.ContextSeq.v, loaded.ContextSeq)
		}
		loaded.ContextSeq = uint64(doc.ContextSeq.v)
	}
	for _, d := range la.webhooks {
		wh := store.NewWebhook(d.id, acct, d.seq, d.createdAt, d.state)
		rd.webhooks[d.id] = wh
		loaded.Webhooks = append(loaded.Webhooks, wh)
	}
	rd.st.Store.Accounts = append(rd.st.Store.Accounts, loaded)
	return nil
}

// draftAccount is an account being read: its contexts, built as they are
// read, and its webhooks, built once its id is read.
type draftAccount struct {
	contexts []*store.Context // ascending seq
	webhooks []draftWebhook
}

// draftWebhook is a webhook read, its account not yet known.
type draftWebhook struct {
	id        string
	seq       uint64
	createdAt time.Time
	state     store.WebhookState
}

// draftContext is a context being read: its versions so far.
type draftContext struct {
	id       string
	versions []*store.Version
}

// contextDoc is a context: its versions, oldest first.
type contextDoc struct {
	ID       plainStr              `json:"id"`
	Seq      wholeNumber[seqRange] `json:"seq"`
	Versions versionList           `json:"versions"`
}

// contextAt reads one context of the account and builds its record: its
// current fields are its last version's; the workers make the rest
// (analyzeContext).
func (rd *stateReader) contextAt(dec *jsontext.Decoder, _ int) error {
	la := rd.acct
	c := &draftContext{}
	rd.context, rd.need = c, nil
	rd.contextDoc = contextDoc{}
	doc := &rd.contextDoc
	if err := json.UnmarshalDecode(dec, doc); err != nil {
		return err
	}
	if doc.ID.ok {
		if err := rd.checkID(dec, "id", doc.ID.v, contextIDRegexp, "context", rd.contextIDs); err != nil {
			return err
		}
		c.id = doc.ID.v
	}
	if err := required(dec, given{"id", doc.ID.ok}, given{"versions", doc.Versions.ok}); err != nil {
		return err
	}
	if len(c.versions) == 0 {
		return fault(dec, "versions", "must be an array of at least one version")
	}
	prev := uint64(0)
	if n := len(la.contexts); n > 0 {
		prev = la.contexts[n-1].Seq()
	}
	seq := prev + 1
	if doc.Seq.ok {
		if seq = uint64(doc.Seq.v); seq <= prev {
			return fault(dec, "seq", "%d is not above the seq of the context before it (%d): contexts are listed in creation order", seq, prev)
		}
	}
	built := store.NewContext(c.id, seq, c.versions)
	rd.analyze(analysisJob{built, rd.need})
	la.contexts = append(la.contexts, built)
	rd.st.Contexts++
	rd.st.Versions += len(c.versions)
	return nil
}

// checkID checks id, the value of field, against re and, when seen is not
// nil, its uniqueness among seen.
func (rd *stateReader) checkID(dec *jsontext.Decoder, field, id string, re *regexp.Regexp, what string, seen map[string]bool) error {
	if !re.MatchString(id) {
		return fault(dec, field, "%q is not a %s id (%s)", id, what, re.String())
	}
	if seen != nil {
		if seen[id] {
			return fault(dec, field, "%s id %q appears twice", what, id)
		}
		seen[id] = true
	}
	return nil
}

// versionDoc is a version.
type versionDoc struct {
	Version   wholeNumber[seqRange] `json:"version"`
	Name      plainStr              `json:"name"`
	Content   textStr               `json:"content"`
	Tags      strList               `json:"tags"`
	CreatedAt docTime               `json:"createdAt"`
	CreatedBy internStr             `json:"createdBy"`
	Changes   changesField          `json:"changes"`
}

// changesField is a version's changes, worked out by the workers when not
// given.
type changesField struct {
	v  contextsvc.Changes
	ok bool
}

// changesDoc is the object of changesField.
type changesDoc struct {
	SectionsModified sectionList             `json:"sections_modified"`
	WordCountDelta   wholeNumber[deltaRange] `json:"word_count_delta"`
}

// UnmarshalJSONFrom reads the changes.
func (ch *changesField) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k, err := peek(dec); err != nil || k != '{' {
		if err != nil {
			return err
		}
		path, _ := jsonwire.ReadingPlace(dec, false)
		return stateErr(path, "must be a JSON object")
	}
	var doc changesDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	if err := required(dec, given{"sections_modified", doc.SectionsModified.v != nil}, given{"word_count_delta", doc.WordCountDelta.ok}); err != nil {
		return err
	}
	ch.v, ch.ok = contextsvc.Changes{SectionsModified: doc.SectionsModified.v, WordCountDelta: doc.WordCountDelta.v}, true
	return nil
}

// version reads version number i+1 of the context being read.
func (rd *stateReader) version(dec *jsontext.Decoder, i int) error {
	c := rd.context
	rd.versionDoc = versionDoc{Tags: strList{v: rd.tags[:0]}}
	doc := &rd.versionDoc
	err := json.UnmarshalDecode(dec, doc)
	rd.tags = doc.Tags.v
	if err != nil {
		return err
	}
	v := &store.Version{Version: doc.Version.v, CreatedAt: doc.CreatedAt.v, CreatedBy: doc.CreatedBy.v, Tags: []string{}}
	if doc.Version.ok && v.Version != i+1 {
		return fault(dec, "version", "is %d, but versions are numbered 1, 2, 3… in order: this one must be %d", v.Version, i+1)
	}
	if doc.Name.ok {
		if e := rules.Name(doc.Name.v); e != nil {
			return apiErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), "name"), e)
		}
		v.Name = doc.Name.v
	}
	if doc.Content.ok {
		if e := rules.Content(doc.Content.v); e != nil {
			return apiErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), "content"), e)
		}
		v.Content = doc.Content.v
	}
	if doc.Tags.ok {
		var e *httpapi.Error
		if v.Tags, e = rules.Tags(doc.Tags.v); e != nil {
			return apiErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), "tags"), e)
		}
	}
	if doc.CreatedBy.ok {
		if err := rd.checkID(dec, "createdBy", v.CreatedBy, userIDRegexp, "user", nil); err != nil {
			return err
		}
	}
	if err := required(dec, given{"version", doc.Version.ok}, given{"name", doc.Name.ok}, given{"createdAt", doc.CreatedAt.ok}, given{"createdBy", doc.CreatedBy.ok}); err != nil {
		return err
	}
	if doc.Changes.ok {
		v.Changes = doc.Changes.v
	}
	// What an unchanged field shares with the version before, as the
	// server's own versions do: each text is held once.
	if n := len(c.versions); n > 0 {
		prev := c.versions[n-1]
		if v.Name == prev.Name {
			v.Name = prev.Name
		}
		if v.Content == prev.Content {
			v.Content = prev.Content
		}
		if slices.Equal(v.Tags, prev.Tags) {
			v.Tags = prev.Tags
		}
	}
	c.versions = append(c.versions, v)
	// The versions whose changes are to be worked out.
	if !doc.Changes.ok && rd.need == nil {
		rd.need = make([]bool, i, i+1)
	}
	if rd.need != nil {
		rd.need = append(rd.need, !doc.Changes.ok)
	}
	return nil
}

// webhookDoc is a webhook.
type webhookDoc struct {
	ID        plainStr              `json:"id"`
	Seq       wholeNumber[seqRange] `json:"seq"`
	URL       plainStr              `json:"url"`
	Events    strList               `json:"events"`
	Secret    plainStr              `json:"secret"`
	CreatedAt docTime               `json:"createdAt"`
	Active    docBool               `json:"active"`
}

// webhook reads a webhook of the account being read, its fields held to
// the rules of registration and of a change (PATCH
// /_mock/webhooks/{id}). Its account is set when the account is read. A
// seq not given is the one after the highest so far.
func (rd *stateReader) webhook(dec *jsontext.Decoder, _ int) error {
	var doc webhookDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	wh := draftWebhook{id: doc.ID.v, createdAt: doc.CreatedAt.v}
	st := &wh.state
	st.Active, st.URL, st.Secret = true, doc.URL.v, doc.Secret.v
	if doc.ID.ok {
		if err := rd.checkID(dec, "id", wh.id, webhookIDRegexp, "webhook", nil); err != nil {
			return err
		}
		if rd.webhookIDs[wh.id] {
			return fault(dec, "id", "webhook id %q appears twice", wh.id)
		}
	}
	// In the document's order; the messages never repeat the secret.
	var e *httpapi.Error
	field := "url"
	if doc.URL.ok {
		e = rules.WebhookURL(st.URL, rd.cfg.HTTPSOnly)
	}
	if e == nil && doc.Events.ok {
		types := make([]contextsvc.EventType, len(doc.Events.v))
		for i, ev := range doc.Events.v {
			types[i] = contextsvc.EventType(ev)
		}
		st.Events, e = rules.WebhookEvents(types)
		field = "events"
	}
	if e == nil && doc.Secret.ok {
		e, field = rules.WebhookSecret(st.Secret), "secret"
	}
	if e != nil {
		return apiErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), field), e)
	}
	if doc.Active.ok {
		st.Active = doc.Active.v
	}
	if err := required(dec, given{"id", doc.ID.ok}, given{"url", doc.URL.ok}, given{"events", doc.Events.ok}, given{"secret", doc.Secret.ok}, given{"createdAt", doc.CreatedAt.ok}); err != nil {
		return err
	}
	if !doc.Seq.ok {
		wh.seq = rd.lastWebhookSeq + 1
	} else if wh.seq = uint64(doc.Seq.v); rd.webhookSeqs[wh.seq] {
		return fault(dec, "seq", "%d is another webhook's seq too: each webhook has its own place in registration order", doc.Seq.v)
	}
	rd.webhookSeqs[wh.seq] = true
	rd.lastWebhookSeq = max(rd.lastWebhookSeq, wh.seq)
	rd.webhookIDs[wh.id] = true
	rd.st.Webhooks++
	rd.acct.webhooks = append(rd.acct.webhooks, wh)
	return nil
}

// eventDoc is an event envelope.
type eventDoc struct {
	ID        plainStr  `json:"id"`
	Type      plainStr  `json:"type"`
	Timestamp docTime   `json:"timestamp"`
	Data      eventData `json:"data"`
}

// event reads an event envelope that pending deliveries send: its bytes,
// compacted, are what their attempts sign. The envelope is read whole
// (the decoder checks it), then its fields.
func (rd *stateReader) event(dec *jsontext.Decoder, i int) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	body := slices.Clone(raw)
	if err := body.Compact(); err != nil {
		return err
	}
	var doc eventDoc
	if err := json.Unmarshal(body, &doc, rd.opts); err != nil {
		// Where in the event: its own decoder's paths are within it.
		err = rd.docErr(jsontext.NewDecoder(bytes.NewReader(nil)), err)
		var se *Error
		if errors.As(err, &se) && se.Path != "" {
			se.Path = fmt.Sprintf("events[%d].%s", i, se.Path)
		}
		return err
	}
	at := func(field string) string { return fmt.Sprintf("events[%d].%s", i, field) }
	ev := &delivery.Body{ID: doc.ID.v, Type: contextsvc.EventType(doc.Type.v), Bytes: body}
	if doc.ID.ok {
		if !eventIDRegexp.MatchString(ev.ID) {
			return stateErr(at("id"), "%q is not a event id (%s)", ev.ID, eventIDRegexp.String())
		}
		if rd.events[ev.ID] != nil {
			return stateErr(at("id"), "event id %q appears twice", ev.ID)
		}
	}
	if doc.Type.ok {
		if verr := rules.EventType(doc.Type.v); verr != nil {
			return stateErr(at("type"), "%s", verr.Error())
		}
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"id", doc.ID.ok}, {"type", doc.Type.ok}, {"timestamp", doc.Timestamp.ok}, {"data", doc.Data.ok}} {
		if !f.ok {
			return stateErr(at(f.name), "is required")
		}
	}
	rd.events[ev.ID] = ev
	return nil
}

// deliveryDoc is a pending delivery.
type deliveryDoc struct {
	ID            plainStr                  `json:"id"`
	Seq           wholeNumber[seqRange]     `json:"seq"`
	EventID       plainStr                  `json:"eventId"`
	WebhookID     plainStr                  `json:"webhookId"`
	URL           plainStr                  `json:"url"`
	CreatedAt     docTime                   `json:"createdAt"`
	NextAttemptAt docTime                   `json:"nextAttemptAt"`
	Retries       wholeNumber[retriesRange] `json:"retries"`
	Attempts      attemptList               `json:"attempts"`
}

// delivery reads a pending delivery; its event and webhook are looked up
// in finish.
func (rd *stateReader) delivery(dec *jsontext.Decoder, i int) error {
	rd.attempts = nil
	var doc deliveryDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	ref := deliveryRef{index: i, eventID: doc.EventID.v, hasURL: doc.URL.ok}
	d := &ref.d
	d.ID, d.WebhookID, d.URL, d.CreatedAt, d.DueAt, d.Attempts = doc.ID.v, doc.WebhookID.v, doc.URL.v, doc.CreatedAt.v, rd.cfg.Now, rd.attempts
	if doc.ID.ok {
		if err := rd.checkID(dec, "id", d.ID, deliveryIDRegexp, "delivery", rd.deliveryIDs); err != nil {
			return err
		}
	}
	if doc.URL.ok {
		if e := rules.WebhookURL(d.URL, rd.cfg.HTTPSOnly); e != nil {
			return apiErr(joinPath(jsonwire.PointerPath(dec.StackPointer()), "url"), e)
		}
	}
	if doc.NextAttemptAt.ok {
		d.DueAt = doc.NextAttemptAt.v
	}
	if err := required(dec, given{"id", doc.ID.ok}, given{"eventId", doc.EventID.ok}, given{"webhookId", doc.WebhookID.ok}, given{"createdAt", doc.CreatedAt.ok}); err != nil {
		return err
	}
	d.Seq = rd.lastDeliverySeq + 1
	if doc.Seq.ok {
		if d.Seq = uint64(doc.Seq.v); d.Seq <= rd.lastDeliverySeq {
			return fault(dec, "seq", "%d is not above the seq of the delivery before it (%d): deliveries are listed in creation order", d.Seq, rd.lastDeliverySeq)
		}
	}
	rd.lastDeliverySeq = d.Seq
	d.Retries = len(d.Attempts)
	if doc.Retries.ok {
		d.Retries = doc.Retries.v
	}
	rd.refs = append(rd.refs, ref)
	return nil
}

// attemptDoc is an attempt of a delivery. Its error and response snippet
// are the receiver's or the network's words, kept as they came.
type attemptDoc struct {
	Number          wholeNumber[seqRange]    `json:"number"`
	ScheduledAt     docTime                  `json:"scheduledAt"`
	StartedAt       docTime                  `json:"startedAt"`
	DurationNs      wholeNumber[countRange]  `json:"durationNs"`
	StatusCode      wholeNumber[statusRange] `json:"statusCode"`
	Error           lenientStr               `json:"error"`
	ResponseSnippet lenientStr               `json:"responseSnippet"`
	TraceID         plainStr                 `json:"traceId"`
	Chaos           chaosField               `json:"chaos"`
}

// chaosField is what the chaos mode did to an attempt.
type chaosField struct{ v model.ChaosEffect }

// chaosDoc is the object of chaosField.
type chaosDoc struct {
	Action  plainStr                     `json:"action"`
	DelayNs wholeNumber[chaosDelayRange] `json:"delayNs"`
}

// UnmarshalJSONFrom reads what chaos did.
func (cf *chaosField) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k, err := peek(dec); err != nil || k != '{' {
		if err != nil {
			return err
		}
		path, _ := jsonwire.ReadingPlace(dec, false)
		return stateErr(path, "must be a JSON object")
	}
	var doc chaosDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	if err := required(dec, given{"action", doc.Action.ok}, given{"delayNs", doc.DelayNs.ok}); err != nil {
		return err
	}
	switch a := model.ChaosAction(doc.Action.v); a {
	case model.ChaosHeld, model.ChaosDuplicate:
		cf.v = model.ChaosEffect{Action: a, Delay: time.Duration(doc.DelayNs.v)}
	default:
		return fault(dec, "action", "%q is not held or duplicate", doc.Action.v)
	}
	return nil
}

// attempt reads attempt number i+1 of the delivery being read.
func (rd *stateReader) attempt(dec *jsontext.Decoder, i int) error {
	var doc attemptDoc
	if err := json.UnmarshalDecode(dec, &doc); err != nil {
		return err
	}
	if doc.Number.ok && doc.Number.v != i+1 {
		return fault(dec, "number", "is %d, but attempts are numbered 1, 2, 3… in order: this one must be %d", doc.Number.v, i+1)
	}
	if utf8.RuneCountInString(doc.ResponseSnippet.v) > delivery.SnippetLimit {
		return fault(dec, "responseSnippet", "must be at most %d characters", delivery.SnippetLimit)
	}
	if doc.TraceID.ok && !traceID(doc.TraceID.v) {
		return fault(dec, "traceId", "must be an OpenTelemetry trace id: 32 lowercase hex digits, not all zero")
	}
	if err := required(dec, given{"number", doc.Number.ok}, given{"scheduledAt", doc.ScheduledAt.ok}, given{"startedAt", doc.StartedAt.ok}, given{"durationNs", doc.DurationNs.ok}); err != nil {
		return err
	}
	rd.attempts = append(rd.attempts, delivery.Attempt{
		Number: doc.Number.v, ScheduledAt: doc.ScheduledAt.v, StartedAt: doc.StartedAt.v, Duration: time.Duration(doc.DurationNs.v),
		StatusCode: doc.StatusCode.v, Error: doc.Error.v, ResponseSnippet: doc.ResponseSnippet.v, TraceID: doc.TraceID.v,
		Chaos: doc.Chaos.v,
	})
	return nil
}

// traceID reports whether s is a trace id as an attempt keeps it: 32
// lowercase hex digits, not all zero.
func traceID(s string) bool {
	if len(s) != 32 {
		return false
	}
	zero := true
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
		zero = zero && c == '0'
	}
	return !zero
}

// finish resolves each delivery's event and webhook: its attempts read
// the webhook's url and secret; when it gives no url (where its latest
// attempt went), it is the webhook's.
func (rd *stateReader) finish() error {
	for _, ref := range rd.refs {
		at := func(field string) string { return fmt.Sprintf("deliveries[%d].%s", ref.index, field) }
		ev := rd.events[ref.eventID]
		if ev == nil {
			return stateErr(at("eventId"), "no event %q in events", ref.eventID)
		}
		wh := rd.webhooks[ref.d.WebhookID]
		if wh == nil {
			return stateErr(at("webhookId"), "no webhook %q in any account", ref.d.WebhookID)
		}
		st := wh.State()
		if !st.Active {
			return stateErr(at("webhookId"), "webhook %q is inactive: an inactive webhook has no pending delivery", ref.d.WebhookID)
		}
		d := ref.d
		d.Event, d.Hook = ev, wh
		if !ref.hasURL {
			d.URL = st.URL
		}
		rd.st.Deliveries = append(rd.st.Deliveries, d)
	}
	rd.st.DeliverySeq = max(rd.st.DeliverySeq, rd.lastDeliverySeq)
	rd.st.Store.WebhookSeq = max(rd.st.Store.WebhookSeq, rd.lastWebhookSeq)
	return nil
}
