package mockserver

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// The state document is JSON (the MockState schema of openapi.yaml states
// it field by field):
//
//	{"format":"contextsvc-mock-state","version":1,"savedAt":…,"cursorSalt":…,"eventSeq":…,"deliverySeq":…,
//	 "accounts":[{"id":…,"contextSeq":…,"contexts":[{"id":…,"seq":…,"versions":[…]}],"webhooks":[…]}],
//	 "events":[envelope…],"deliveries":[…]}
//
// It is written as a stream, one context (webhook, event, delivery) to a
// line, so a fixture file diffs well, and read as a stream: a context at a
// time is held as raw bytes, never the whole document. A context holds its
// versions only (its current name, content and tags are its last
// version's), so each text is written once.

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

func (sw *stateWriter) webhook(w *webhook) {
	b := append(sw.b, `{"id":`...)
	b = appendJSONString(b, w.id)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, w.url)
	b = append(b, `,"events":[`...)
	for i, e := range w.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, string(e))
	}
	b = append(b, `],"secret":`...)
	b = appendJSONString(b, w.secret)
	b = append(b, `,"createdAt":"`...)
	b = w.createdAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","active":`...)
	b = strconv.AppendBool(b, w.active)
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

// stateReader reads and validates a state document as a stream.
type stateReader struct {
	s           *Server
	dec         *json.Decoder
	addAccounts bool // accounts no key belongs to are kept (a state file at start)
	now         time.Time
	st          *loadedState

	// ids seen so far, each kind unique in the document
	contextIDs, accountIDs, webhookIDs, eventIDs, deliveryIDs map[string]bool

	webhooks        map[string]*webhook
	events          map[string]*eventBody
	refs            []deliveryRef
	lastDeliverySeq uint64
}

// deliveryRef is a read delivery whose event and webhook are resolved once
// the whole document is read (the events may come after the deliveries).
type deliveryRef struct {
	path    string
	d       savedDelivery
	eventID string
	hasURL  bool
}

// readState reads and validates a whole document; nothing is applied.
func (s *Server) readState(r io.Reader, addAccounts bool) (*loadedState, error) {
	rd := &stateReader{
		s: s, dec: json.NewDecoder(r), addAccounts: addAccounts, now: s.clock.Now(), st: &loadedState{},
		contextIDs: make(map[string]bool), accountIDs: make(map[string]bool), webhookIDs: make(map[string]bool),
		eventIDs: make(map[string]bool), deliveryIDs: make(map[string]bool),
		webhooks: make(map[string]*webhook), events: make(map[string]*eventBody),
	}
	if err := rd.document(); err != nil {
		return nil, err
	}
	return rd.st, nil
}

func stateErr(path, format string, args ...any) *StateError {
	return &StateError{Path: path, Message: fmt.Sprintf(format, args...)}
}

// jsonErr turns the decoder's error into a StateError saying where the
// JSON breaks, or returns a read error as it is.
func (rd *stateReader) jsonErr(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return stateErr("", "malformed JSON at byte %d: %v", se.Offset, err)
	case err == io.EOF && rd.dec.InputOffset() == 0:
		return stateErr("", "the document is empty")
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return stateErr("", "the document ends early, at byte %d (in %s): it was cut short", rd.dec.InputOffset(), cmp.Or(path, "the document"))
	}
	return err
}

// document reads the top-level object.
func (rd *stateReader) document() error {
	if err := rd.delim("", '{', "the document must be a JSON object"); err != nil {
		return err
	}
	seen := make(map[string]bool)
	for rd.dec.More() {
		key, err := rd.key("")
		if err != nil {
			return err
		}
		if seen[key] {
			return stateErr(key, "the field appears twice")
		}
		seen[key] = true
		if err := rd.topField(key); err != nil {
			return err
		}
	}
	if _, err := rd.dec.Token(); err != nil {
		return rd.jsonErr("", err)
	}
	if _, err := rd.dec.Token(); err != io.EOF {
		return stateErr("", "more data after the document's end, at byte %d", rd.dec.InputOffset())
	}
	if !seen["format"] {
		return stateErr("format", `is missing: a state document starts {"format":"%s","version":%d,…}`, stateFormatName, StateFormatVersion)
	}
	if !seen["version"] {
		return stateErr("version", "is missing")
	}
	return rd.finish()
}

// delim reads the next token, which must be the delimiter want.
func (rd *stateReader) delim(path string, want json.Delim, msg string) error {
	tok, err := rd.dec.Token()
	if err != nil {
		return rd.jsonErr(path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return stateErr(path, "%s", msg)
	}
	return nil
}

// key reads an object's next key.
func (rd *stateReader) key(path string) (string, error) {
	tok, err := rd.dec.Token()
	if err != nil {
		return "", rd.jsonErr(path, err)
	}
	return tok.(string), nil // inside an object, the decoder gives a string or an error
}

// value reads the next value as raw bytes.
func (rd *stateReader) value(path string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := rd.dec.Decode(&raw); err != nil {
		return nil, rd.jsonErr(path, err)
	}
	return raw, nil
}

// array reads an array, handing each element's raw bytes to each.
func (rd *stateReader) array(path string, each func(raw json.RawMessage, path string) error) error {
	if err := rd.delim(path, '[', "must be an array"); err != nil {
		return err
	}
	for i := 0; rd.dec.More(); i++ {
		p := path + "[" + strconv.Itoa(i) + "]"
		raw, err := rd.value(p)
		if err != nil {
			return err
		}
		if err := each(raw, p); err != nil {
			return err
		}
	}
	_, err := rd.dec.Token()
	return rd.jsonErrOrNil(path, err)
}

func (rd *stateReader) jsonErrOrNil(path string, err error) error {
	if err != nil {
		return rd.jsonErr(path, err)
	}
	return nil
}

var topFields = []string{"format", "version", "savedAt", "cursorSalt", "eventSeq", "deliverySeq", "accounts", "events", "deliveries"}

func (rd *stateReader) topField(key string) error {
	switch key {
	case "accounts":
		return rd.accounts()
	case "events":
		return rd.array("events", rd.event)
	case "deliveries":
		return rd.array("deliveries", rd.delivery)
	}
	if !slices.Contains(topFields, key) {
		return stateErr(key, "unknown field (allowed: %s)", strings.Join(topFields, ", "))
	}
	raw, err := rd.value(key)
	if err != nil {
		return err
	}
	switch key {
	case "format":
		f, e := decodeString(key, raw)
		if e != nil || f != stateFormatName {
			return stateErr(key, `must be "%s": this is no contextsvc-mock state document`, stateFormatName)
		}
	case "version":
		v, e := decodeInteger(key, raw, 1, maxStateSeq)
		if e != nil {
			return stateErr(key, "%s", e.message)
		}
		if v > StateFormatVersion {
			return &StateError{Path: key, tooNew: true, Message: fmt.Sprintf(
				"format version %d is newer than this mock server reads (%d): the document was written by a newer contextsvc-mock; run that one, or start without this state",
				v, StateFormatVersion)}
		}
	case "savedAt":
		_, err = stateTime(raw, key)
	case "cursorSalt":
		v, e := decodeString(key, raw)
		if e != nil || !saltRegexp.MatchString(v) {
			return stateErr(key, "must be 32 lowercase hexadecimal digits")
		}
		salt := new([16]byte)
		_, _ = hex.Decode(salt[:], []byte(v))
		rd.st.salt = salt
	case "eventSeq", "deliverySeq":
		n, err := rd.seq(raw, key, 0)
		if err != nil {
			return err
		}
		if key == "eventSeq" {
			rd.st.eventSeq = n
		} else {
			rd.st.deliverySeq = n
		}
	}
	return err
}

// seq reads a sequence number from min.
func (rd *stateReader) seq(raw json.RawMessage, path string, minimum int) (uint64, error) {
	n, e := decodeInteger(lastName(path), raw, minimum, maxStateSeq)
	if e != nil {
		return 0, stateErr(path, "%s", e.message)
	}
	return uint64(n), nil
}

// lastName is the last field name of a path ("name" of "a[0].b.name").
func lastName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// stateTime reads a time of the document, as the API writes them.
func stateTime(raw json.RawMessage, path string) (time.Time, error) {
	v, e := decodeString(lastName(path), raw)
	if e == nil && timestampRegexp.MatchString(v) {
		if t, err := time.Parse(timeFormat, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, stateErr(path, "must be a time in RFC 3339, UTC, with milliseconds, such as 2026-11-21T20:51:00.123Z")
}

// fields decodes an object of the document into its fields, refusing
// anything but an object, an unknown field (the first by name) and null.
func fields(raw json.RawMessage, path string, allowed ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, stateErr(path, "must be a JSON object")
	}
	var unknown []string
	for k, v := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		} else if string(v) == "null" {
			return nil, stateErr(path+"."+k, "must not be null")
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, stateErr(path+"."+unknown[0], "unknown field (allowed: %s)", strings.Join(allowed, ", "))
	}
	return m, nil
}

// required checks that f has every one of names.
func required(f map[string]json.RawMessage, path string, names ...string) error {
	for _, n := range names {
		if _, ok := f[n]; !ok {
			return stateErr(path+"."+n, "is required")
		}
	}
	return nil
}

// apiErr turns a field check's 400 into a StateError at path.
func apiErr(path string, e *apiError) error { return &StateError{Path: path, Message: e.message} }

// id reads an id matching re, unique among seen.
func id(raw json.RawMessage, path string, re *regexp.Regexp, what string, seen map[string]bool) (string, error) {
	v, e := decodeString(lastName(path), raw)
	if e != nil {
		return "", apiErr(path, e)
	}
	if !re.MatchString(v) {
		return "", stateErr(path, "%q is not a %s id (%s)", v, what, re.String())
	}
	if seen[v] {
		return "", stateErr(path, "%s id %q appears twice", what, v)
	}
	seen[v] = true
	return v, nil
}

// accounts reads the accounts array, an account at a time, a context at a
// time.
func (rd *stateReader) accounts() error {
	if err := rd.delim("accounts", '[', "must be an array"); err != nil {
		return err
	}
	for i := 0; rd.dec.More(); i++ {
		if err := rd.account("accounts[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
	_, err := rd.dec.Token()
	return rd.jsonErrOrNil("accounts", err)
}

var accountFields = []string{"id", "contextSeq", "contexts", "webhooks"}

func (rd *stateReader) account(path string) error {
	if err := rd.delim(path, '{', "must be a JSON object"); err != nil {
		return err
	}
	la := &loadedAccount{}
	var idRaw, seqRaw json.RawMessage
	seen := make(map[string]bool)
	for rd.dec.More() {
		key, err := rd.key(path)
		if err != nil {
			return err
		}
		p := path + "." + key
		if seen[key] {
			return stateErr(p, "the field appears twice")
		}
		seen[key] = true
		switch key {
		case "contexts":
			err = rd.array(p, func(raw json.RawMessage, path string) error {
				c, err := rd.context(raw, path, la)
				if err == nil {
					la.contexts = append(la.contexts, c)
				}
				return err
			})
		case "webhooks":
			err = rd.array(p, func(raw json.RawMessage, path string) error {
				w, err := rd.webhook(raw, path)
				if err == nil {
					la.webhooks = append(la.webhooks, w)
				}
				return err
			})
		case "id", "contextSeq":
			var raw json.RawMessage
			if raw, err = rd.value(p); err == nil && string(raw) == "null" {
				err = stateErr(p, "must not be null")
			}
			if key == "id" {
				idRaw = raw
			} else {
				seqRaw = raw
			}
		default:
			err = stateErr(p, "unknown field (allowed: %s)", strings.Join(accountFields, ", "))
		}
		if err != nil {
			return err
		}
	}
	if _, err := rd.dec.Token(); err != nil {
		return rd.jsonErr(path, err)
	}
	if idRaw == nil {
		return stateErr(path+".id", "is required")
	}
	acct, e := decodeString("id", idRaw)
	if e != nil {
		return apiErr(path+".id", e)
	}
	switch {
	case acct == "":
		return stateErr(path+".id", "must not be empty")
	case rd.accountIDs[acct]:
		return stateErr(path+".id", "account %q appears twice", acct)
	case !rd.addAccounts && rd.s.accounts[acct] == nil:
		return stateErr(path+".id", "no key of this server belongs to account %q: a state's accounts must be the server's own "+
			"(give it a key: the command's -key KEY:plan:scope:%s, or mockserver.WithKey)", acct, acct)
	}
	rd.accountIDs[acct] = true
	la.id = acct
	last := uint64(0)
	if n := len(la.contexts); n > 0 {
		last = la.contexts[n-1].seq
	}
	la.contextSeq = last
	if seqRaw != nil {
		n, err := rd.seq(seqRaw, path+".contextSeq", 0)
		if err != nil {
			return err
		}
		if n < last {
			return stateErr(path+".contextSeq", "%d is below the last context's seq %d", n, last)
		}
		la.contextSeq = n
	}
	for _, w := range la.webhooks {
		w.account = acct
	}
	rd.st.accounts = append(rd.st.accounts, la)
	return nil
}

// context reads one context and builds its record as createContext and
// updateContext would have: its current fields are its last version's,
// its analysis that of its content; changes absent from a version are
// worked out as an update would have.
func (rd *stateReader) context(raw json.RawMessage, path string, la *loadedAccount) (*contextRec, error) {
	f, err := fields(raw, path, "id", "seq", "versions")
	if err != nil {
		return nil, err
	}
	if err := required(f, path, "id", "versions"); err != nil {
		return nil, err
	}
	c := &contextRec{}
	if c.id, err = id(f["id"], path+".id", contextIDRegexp, "context", rd.contextIDs); err != nil {
		return nil, err
	}
	prev := uint64(0)
	if n := len(la.contexts); n > 0 {
		prev = la.contexts[n-1].seq
	}
	c.seq = prev + 1
	if raw, ok := f["seq"]; ok {
		if c.seq, err = rd.seq(raw, path+".seq", 1); err != nil {
			return nil, err
		}
		if c.seq <= prev {
			return nil, stateErr(path+".seq", "%d is not above the seq of the context before it (%d): contexts are listed in creation order", c.seq, prev)
		}
	}
	var vraws []json.RawMessage
	if f["versions"][0] != '[' || json.Unmarshal(f["versions"], &vraws) != nil || len(vraws) == 0 {
		return nil, stateErr(path+".versions", "must be an array of at least one version")
	}
	c.versions = make([]*versionRec, len(vraws))
	var an analysis // of the previous version's content, when made
	for i, vraw := range vraws {
		var prevV *StoredVersion
		if i > 0 {
			prevV = &c.versions[i-1].v
		}
		v, err := rd.version(vraw, path+".versions["+strconv.Itoa(i)+"]", i+1, prevV, &an)
		if err != nil {
			return nil, err
		}
		c.versions[i] = newVersionRec(v)
	}
	first, last := &c.versions[0].v, &c.versions[len(c.versions)-1].v
	c.name, c.content, c.tags, c.version = last.Name, last.Content, last.Tags, last.Version
	c.createdAt, c.updatedAt = first.CreatedAt, last.CreatedAt
	if !an.ok {
		an.info = compactInfo(analyze([]byte(c.content)))
	}
	c.md = an.info
	c.encodeMeta()
	rd.st.contexts++
	rd.st.versions += len(c.versions)
	return c, nil
}

var versionFields = []string{"version", "name", "content", "tags", "createdAt", "createdBy", "changes"}

// analysis is the Markdown analysis of a text, when it has been made.
type analysis struct {
	info mdInfo
	ok   bool
}

// version reads version number n. an holds the analysis of the previous
// version's content, if made, and gets this one's when it is made.
func (rd *stateReader) version(raw json.RawMessage, path string, n int, prev *StoredVersion, an *analysis) (StoredVersion, error) {
	var v StoredVersion
	f, err := fields(raw, path, versionFields...)
	if err != nil {
		return v, err
	}
	if err := required(f, path, "version", "name", "createdAt", "createdBy"); err != nil {
		return v, err
	}
	num, e := decodeInteger("version", f["version"], 1, maxStateSeq)
	if e != nil {
		return v, apiErr(path+".version", e)
	}
	if num != n {
		return v, stateErr(path+".version", "is %d, but versions are numbered 1, 2, 3… in order: this one must be %d", num, n)
	}
	v.Version = n
	if v.Name, e = decodeString("name", f["name"]); e == nil {
		e = validName(v.Name)
	}
	if e != nil {
		return v, apiErr(path+".name", e)
	}
	if raw, ok := f["content"]; ok {
		if v.Content, e = decodeText("content", raw); e == nil {
			e = validContent(v.Content)
		}
		if e != nil {
			return v, apiErr(path+".content", e)
		}
	}
	v.Tags = []string{}
	if raw, ok := f["tags"]; ok {
		l, e := decodeStrings("tags", raw)
		if e == nil {
			l, e = cleanTags(l)
		}
		if e != nil {
			return v, apiErr(path+".tags", e)
		}
		v.Tags = l
	}
	if v.CreatedAt, err = stateTime(f["createdAt"], path+".createdAt"); err != nil {
		return v, err
	}
	if v.CreatedBy, e = decodeString("createdBy", f["createdBy"]); e != nil {
		return v, apiErr(path+".createdBy", e)
	}
	if !userIDRegexp.MatchString(v.CreatedBy) {
		return v, stateErr(path+".createdBy", "%q is not a user id (%s)", v.CreatedBy, userIDPattern)
	}
	// What an unchanged field shares with the version before, as the
	// server's own versions do: each text is held once.
	if prev != nil {
		if v.Content == prev.Content {
			v.Content = prev.Content
		}
		if slices.Equal(v.Tags, prev.Tags) {
			v.Tags = prev.Tags
		}
	}
	contentChanged := prev == nil || v.Content != prev.Content
	if raw, ok := f["changes"]; ok {
		if contentChanged {
			an.ok = false // the previous analysis no longer describes the text
		}
		v.Changes, err = changes(raw, path+".changes")
		return v, err
	}
	// Worked out as the server does: a first version lists its sections,
	// an update that keeps the text changes nothing, another is diffed.
	if !contentChanged {
		v.Changes = contextsvc.Changes{SectionsModified: []string{}}
		return v, nil
	}
	cur := compactInfo(analyze([]byte(v.Content)))
	switch {
	case prev == nil:
		v.Changes = diffInfo(nil, cur)
	case an.ok:
		v.Changes = diffInfo(&an.info, cur)
	default:
		old := compactInfo(analyze([]byte(prev.Content)))
		v.Changes = diffInfo(&old, cur)
	}
	*an = analysis{cur, true}
	return v, nil
}

// changes reads a version's changes. Section names are heading text, which
// may hold a tab, so only their JSON is checked.
func changes(raw json.RawMessage, path string) (contextsvc.Changes, error) {
	var ch contextsvc.Changes
	f, err := fields(raw, path, "sections_modified", "word_count_delta")
	if err != nil {
		return ch, err
	}
	if err := required(f, path, "sections_modified", "word_count_delta"); err != nil {
		return ch, err
	}
	sm := f["sections_modified"]
	if sm[0] != '[' || !utf8.Valid(sm) || loneSurrogate(sm) >= 0 || json.Unmarshal(sm, &ch.SectionsModified) != nil {
		return ch, stateErr(path+".sections_modified", "must be an array of strings (valid UTF-8, no lone surrogate escapes)")
	}
	n, e := decodeInteger("word_count_delta", f["word_count_delta"], -maxStateSeq, maxStateSeq)
	if e != nil {
		return ch, apiErr(path+".word_count_delta", e)
	}
	ch.WordCountDelta = n
	return ch, nil
}

var webhookFields = []string{"id", "url", "events", "secret", "createdAt", "active"}

// webhook reads a webhook, its fields held to registerWebhook's rules.
func (rd *stateReader) webhook(raw json.RawMessage, path string) (*webhook, error) {
	f, err := fields(raw, path, webhookFields...)
	if err != nil {
		return nil, err
	}
	if err := required(f, path, "id", "url", "events", "secret", "createdAt"); err != nil {
		return nil, err
	}
	w := &webhook{active: true}
	if w.id, err = id(f["id"], path+".id", webhookIDRegexp, "webhook", rd.webhookIDs); err != nil {
		return nil, err
	}
	var e *apiError
	if w.url, e = decodeString("url", f["url"]); e == nil {
		e = rd.s.validWebhookURL(w.url)
	}
	if e != nil {
		return nil, apiErr(path+".url", e)
	}
	evs, e := decodeStrings("events", f["events"])
	if e != nil {
		return nil, apiErr(path+".events", e)
	}
	if len(evs) == 0 {
		return nil, stateErr(path+".events", "must name at least one event type")
	}
	for _, ev := range evs {
		t := contextsvc.EventType(ev)
		if !t.Known() {
			return nil, stateErr(path+".events", "unknown event type %q", ev)
		}
		if !slices.Contains(w.events, t) {
			w.events = append(w.events, t)
		}
	}
	if w.secret, e = decodeString("secret", f["secret"]); e != nil {
		return nil, apiErr(path+".secret", e)
	}
	if n := utf8.RuneCountInString(w.secret); n < 1 || n > maxSecretRunes {
		return nil, stateErr(path+".secret", "must be 1 to %d characters", maxSecretRunes) // never echoed
	}
	if w.createdAt, err = stateTime(f["createdAt"], path+".createdAt"); err != nil {
		return nil, err
	}
	if raw, ok := f["active"]; ok {
		if string(raw) != "true" && string(raw) != "false" {
			return nil, stateErr(path+".active", "must be true or false")
		}
		w.active = string(raw) == "true"
	}
	rd.webhooks[w.id] = w
	rd.st.webhooks++
	return w, nil
}

// event reads an event envelope that a pending delivery sends: its bytes,
// compacted, are what the attempts sign.
func (rd *stateReader) event(raw json.RawMessage, path string) error {
	f, err := fields(raw, path, "id", "type", "timestamp", "data")
	if err != nil {
		return err
	}
	if err := required(f, path, "id", "type", "timestamp", "data"); err != nil {
		return err
	}
	evID, err := id(f["id"], path+".id", eventIDRegexp, "event", rd.eventIDs)
	if err != nil {
		return err
	}
	typ, e := decodeString("type", f["type"])
	if e != nil {
		return apiErr(path+".type", e)
	}
	if err := validEventType(typ); err != nil {
		return stateErr(path+".type", "%s", strings.TrimPrefix(err.Error(), ErrInvalidEvent.Error()+": "))
	}
	if _, err := stateTime(f["timestamp"], path+".timestamp"); err != nil {
		return err
	}
	if f["data"][0] != '{' {
		return stateErr(path+".data", "must be a JSON object")
	}
	var body bytes.Buffer
	_ = json.Compact(&body, raw) // raw is valid JSON: the decoder read it
	rd.events[evID] = &eventBody{id: evID, typ: contextsvc.EventType(typ), body: body.Bytes()}
	return nil
}

var deliveryFields = []string{"id", "seq", "eventId", "webhookId", "url", "createdAt", "nextAttemptAt", "retries", "attempts"}

// delivery reads a pending delivery; its event and webhook are looked up
// in finish.
func (rd *stateReader) delivery(raw json.RawMessage, path string) error {
	f, err := fields(raw, path, deliveryFields...)
	if err != nil {
		return err
	}
	if err := required(f, path, "id", "eventId", "webhookId", "createdAt"); err != nil {
		return err
	}
	ref := deliveryRef{path: path}
	d := &ref.d
	if d.id, err = id(f["id"], path+".id", deliveryIDRegexp, "delivery", rd.deliveryIDs); err != nil {
		return err
	}
	d.seq = rd.lastDeliverySeq + 1
	if raw, ok := f["seq"]; ok {
		if d.seq, err = rd.seq(raw, path+".seq", 1); err != nil {
			return err
		}
		if d.seq <= rd.lastDeliverySeq {
			return stateErr(path+".seq", "%d is not above the seq of the delivery before it (%d): deliveries are listed in creation order", d.seq, rd.lastDeliverySeq)
		}
	}
	rd.lastDeliverySeq = d.seq
	var e *apiError
	if ref.eventID, e = decodeString("eventId", f["eventId"]); e != nil {
		return apiErr(path+".eventId", e)
	}
	if d.webhookID, e = decodeString("webhookId", f["webhookId"]); e != nil {
		return apiErr(path+".webhookId", e)
	}
	if raw, ok := f["url"]; ok {
		if d.url, e = decodeString("url", raw); e == nil {
			e = rd.s.validWebhookURL(d.url)
		}
		if e != nil {
			return apiErr(path+".url", e)
		}
		ref.hasURL = true
	}
	if d.createdAt, err = stateTime(f["createdAt"], path+".createdAt"); err != nil {
		return err
	}
	d.dueAt = rd.now
	if raw, ok := f["nextAttemptAt"]; ok {
		if d.dueAt, err = stateTime(raw, path+".nextAttemptAt"); err != nil {
			return err
		}
	}
	if raw, ok := f["retries"]; ok {
		if d.retries, e = decodeInteger("retries", raw, 0, 1_000_000); e != nil {
			return apiErr(path+".retries", e)
		}
	}
	if raw, ok := f["attempts"]; ok {
		var araws []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &araws) != nil {
			return stateErr(path+".attempts", "must be an array of attempts")
		}
		d.attempts = make([]DeliveryAttempt, len(araws))
		for i, araw := range araws {
			if d.attempts[i], err = attempt(araw, path+".attempts["+strconv.Itoa(i)+"]", i+1); err != nil {
				return err
			}
		}
		if _, ok := f["retries"]; !ok {
			d.retries = len(d.attempts)
		}
	}
	rd.refs = append(rd.refs, ref)
	return nil
}

// attempt reads attempt number n of a delivery. Its error and response
// snippet are the receiver's or the network's words, kept as they came.
func attempt(raw json.RawMessage, path string, n int) (DeliveryAttempt, error) {
	var a DeliveryAttempt
	f, err := fields(raw, path, "number", "scheduledAt", "startedAt", "durationNs", "statusCode", "error", "responseSnippet")
	if err != nil {
		return a, err
	}
	if err := required(f, path, "number", "scheduledAt", "startedAt", "durationNs"); err != nil {
		return a, err
	}
	num, e := decodeInteger("number", f["number"], 1, maxStateSeq)
	if e != nil {
		return a, apiErr(path+".number", e)
	}
	if num != n {
		return a, stateErr(path+".number", "is %d, but attempts are numbered 1, 2, 3… in order: this one must be %d", num, n)
	}
	a.Number = n
	if a.ScheduledAt, err = stateTime(f["scheduledAt"], path+".scheduledAt"); err != nil {
		return a, err
	}
	if a.StartedAt, err = stateTime(f["startedAt"], path+".startedAt"); err != nil {
		return a, err
	}
	ns, e := decodeInteger("durationNs", f["durationNs"], 0, maxStateSeq)
	if e != nil {
		return a, apiErr(path+".durationNs", e)
	}
	a.Duration = time.Duration(ns)
	if raw, ok := f["statusCode"]; ok {
		if a.StatusCode, e = decodeInteger("statusCode", raw, 0, 999); e != nil {
			return a, apiErr(path+".statusCode", e)
		}
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"error", &a.Error}, {"responseSnippet", &a.ResponseSnippet}} {
		raw, ok := f[s.name]
		if !ok {
			continue
		}
		if raw[0] != '"' || json.Unmarshal(raw, s.dst) != nil {
			return a, stateErr(path+"."+s.name, "must be a string")
		}
	}
	if utf8.RuneCountInString(a.ResponseSnippet) > responseSnippetLimit {
		return a, stateErr(path+".responseSnippet", "must be at most %d characters", responseSnippetLimit)
	}
	return a, nil
}

// finish resolves each delivery's event and webhook; a delivery takes its
// secret (and, when it gives none, its url) from its webhook.
func (rd *stateReader) finish() error {
	for _, ref := range rd.refs {
		ev := rd.events[ref.eventID]
		if ev == nil {
			return stateErr(ref.path+".eventId", "no event %q in events", ref.eventID)
		}
		w := rd.webhooks[ref.d.webhookID]
		if w == nil {
			return stateErr(ref.path+".webhookId", "no webhook %q in any account", ref.d.webhookID)
		}
		d := ref.d
		d.event, d.secret = ev, w.secret
		if !ref.hasURL {
			d.url = w.url
		}
		rd.st.deliveries = append(rd.st.deliveries, d)
	}
	rd.st.deliverySeq = max(rd.st.deliverySeq, rd.lastDeliverySeq)
	return nil
}
