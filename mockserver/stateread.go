package mockserver

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// This file reads and validates a state document (the MockState schema of
// openapi.yaml; statewrite.go writes it) as a stream: a context is built
// as soon as it is read, and nothing holds the document's bytes. Every
// field is held to the API's own rules, with its messages; the first fault
// stops the reading with a StateError naming its path.

// stateReader reads one document.
type stateReader struct {
	s           *Server
	j           *jsonReader
	addAccounts bool // accounts no key belongs to are kept (a state file at start)
	now         time.Time
	st          *loadedState

	// ids seen so far: each kind is unique in the document
	contextIDs, accountIDs, deliveryIDs map[string]bool

	webhooks        map[string]*webhook
	events          map[string]*eventBody
	refs            []deliveryRef
	lastDeliverySeq uint64
	webhookSeqs     map[uint64]bool // registration order: each webhook's place is its own
	lastWebhookSeq  uint64
	envelope        []byte   // an event's bytes while it is read
	tags            []string // a version's tags as read, reused

	// The Markdown analysis of each context (and the changes its versions
	// do not give) is made by workers, beside the reading.
	analyses chan analysisJob
	analyzed sync.WaitGroup
}

// analysisJob is a context whose analysis is to be made: its md, and the
// changes of the versions marked in need (nil: none).
type analysisJob struct {
	c    *contextRec
	need []bool
}

// deliveryRef is a read delivery whose event and webhook are looked up
// once the whole document is read (the events may come after).
type deliveryRef struct {
	w       where
	d       savedDelivery
	eventID string
	hasURL  bool
}

// readState reads and validates a whole document; nothing is applied.
func (s *Server) readState(r io.Reader, addAccounts bool) (*loadedState, error) {
	rd := &stateReader{
		s: s, j: newJSONReader(r), addAccounts: addAccounts, now: s.clock.Now(), st: &loadedState{},
		contextIDs: make(map[string]bool), accountIDs: make(map[string]bool), deliveryIDs: make(map[string]bool),
		webhooks: make(map[string]*webhook), events: make(map[string]*eventBody), webhookSeqs: make(map[uint64]bool),
	}
	err := rd.document()
	if rd.analyses != nil {
		close(rd.analyses)
		rd.analyzed.Wait() // on an error too: no worker outlives the reading
	}
	if err != nil {
		return nil, err
	}
	return rd.st, nil
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
					analyzeContext(job.c, job.need)
				}
			}()
		}
	}
	rd.analyses <- job
}

// analyzeContext makes what the server keeps of a context besides its
// versions, as createContext and updateContext would have: the analysis
// of its content (so the next update is diffed against it), its encoded
// fields, and the changes of the versions marked in need, worked out as
// the server does: a first version lists its sections, an update that
// keeps the text changes nothing, another is diffed against the one
// before.
func analyzeContext(c *contextRec, need []bool) {
	var prev analysis // of the previous version's content, when made
	for i, vr := range c.versions {
		v := &vr.v
		changed := i == 0 || v.Content != c.versions[i-1].v.Content
		switch {
		case need == nil || !need[i]:
			if changed {
				prev.ok = false
			}
		case !changed:
			v.Changes = contextsvc.Changes{SectionsModified: []string{}}
		default:
			cur := compactInfo(analyze([]byte(v.Content)))
			switch {
			case i == 0:
				v.Changes = diffInfo(nil, cur)
			case prev.ok:
				v.Changes = diffInfo(&prev.info, cur)
			default:
				old := compactInfo(analyze([]byte(c.versions[i-1].v.Content)))
				v.Changes = diffInfo(&old, cur)
			}
			prev = analysis{cur, true}
		}
	}
	if !prev.ok {
		prev.info = compactInfo(analyze([]byte(c.content)))
	}
	c.md = prev.info
	c.encodeMeta()
}

func stateErr(path, format string, args ...any) *StateError {
	return &StateError{Path: path, Message: fmt.Sprintf(format, args...)}
}

// apiErr turns one of the API's field checks into a StateError at path.
func apiErr(path string, e *apiError) error { return &StateError{Path: path, Message: e.message} }

// has reports whether key k of a seen set is there.
func has(seen uint64, k int) bool { return seen&(1<<k) != 0 }

// required checks that every key of fields whose index is in ks was seen.
func required(seen uint64, w where, fields []string, ks ...int) error {
	for _, k := range ks {
		if !has(seen, k) {
			return stateErr(w.field(fields[k]), "is required")
		}
	}
	return nil
}

var topFields = []string{"format", "version", "savedAt", "cursorSalt", "eventSeq", "deliverySeq", "webhookSeq", "accounts", "events", "deliveries"}

const (
	topFormat = iota
	topVersion
	topSavedAt
	topSalt
	topEventSeq
	topDeliverySeq
	topWebhookSeq
	topAccounts
	topEvents
	topDeliveries
)

// document reads the top-level object, then resolves the references.
func (rd *stateReader) document() error {
	j := rd.j
	root := where{}
	seen, err := j.object(root, topFields, func(k int) error {
		switch k {
		case topFormat:
			f, err := j.str(root, "format", -1, strPlain)
			if wholeDocument(err) {
				return err
			}
			if err != nil || f != stateFormatName {
				return stateErr("format", `must be "%s": this is no contextsvc-mock state document`, stateFormatName)
			}
		case topVersion:
			v, err := j.integer(root, "version", 1, maxStateSeq)
			if err != nil {
				return err
			}
			if v > StateFormatVersion {
				return &StateError{Path: "version", tooNew: true, Message: fmt.Sprintf(
					"format version %d is newer than this mock server reads (%d): the document was written by a newer contextsvc-mock; run that one, or start without this state",
					v, StateFormatVersion)}
			}
		case topSavedAt:
			_, err := rd.time(root, "savedAt")
			return err
		case topSalt:
			v, err := j.str(root, "cursorSalt", -1, strPlain)
			if wholeDocument(err) {
				return err
			}
			if err != nil || !saltRegexp.MatchString(v) {
				return stateErr("cursorSalt", "must be 32 lowercase hexadecimal digits")
			}
			rd.st.salt = new([16]byte)
			_, _ = hex.Decode(rd.st.salt[:], []byte(v))
		case topEventSeq, topDeliverySeq, topWebhookSeq:
			n, err := j.integer(root, topFields[k], 0, maxStateSeq)
			switch k {
			case topEventSeq:
				rd.st.eventSeq = uint64(n)
			case topDeliverySeq:
				rd.st.deliverySeq = uint64(n)
			default:
				rd.st.webhookSeq = uint64(n)
			}
			return err
		case topAccounts:
			return j.array("", "accounts", rd.account)
		case topEvents:
			return j.array("", "events", rd.event)
		case topDeliveries:
			return j.array("", "deliveries", rd.delivery)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := j.end(); err != nil {
		return err
	}
	if !has(seen, topFormat) {
		return stateErr("format", `is missing: a state document starts {"format":"%s","version":%d,…}`, stateFormatName, StateFormatVersion)
	}
	if !has(seen, topVersion) {
		return stateErr("version", "is missing")
	}
	return rd.finish()
}

// wholeDocument reports whether err is about the document as a whole
// (malformed JSON, cut short, unreadable), not about the value read: a
// field that words its own message for a bad value passes such an error
// on, or a file cut short in its format would be called no state document.
func wholeDocument(err error) bool {
	var se *StateError
	return err != nil && (!errors.As(err, &se) || se.Path == "")
}

// time reads a time of the document, as the API writes them.
func (rd *stateReader) time(w where, name string) (time.Time, error) {
	v, err := rd.j.str(w, name, -1, strPlain)
	if err == nil && timestampRegexp.MatchString(v) {
		if t, err := time.Parse(timeFormat, v); err == nil {
			return t, nil
		}
	}
	if wholeDocument(err) || (err != nil && !strings.HasSuffix(err.Error(), "must be a string")) {
		return time.Time{}, err
	}
	return time.Time{}, stateErr(w.field(name), "must be a time in RFC 3339, UTC, with milliseconds, such as 2026-11-21T20:51:00.123Z")
}

// id reads field name of the value at w, an id matching re that is unique
// among seen (when seen is not nil).
func (rd *stateReader) id(w where, name string, re *regexp.Regexp, what string, seen map[string]bool) (string, error) {
	kind := strPlain
	if what == "user" {
		kind |= strIntern // a few users write every version
	}
	v, err := rd.j.str(w, name, -1, kind)
	if err != nil {
		return "", err
	}
	if !re.MatchString(v) {
		return "", stateErr(w.field(name), "%q is not a %s id (%s)", v, what, re.String())
	}
	if seen != nil {
		if seen[v] {
			return "", stateErr(w.field(name), "%s id %q appears twice", what, v)
		}
		seen[v] = true
	}
	return v, nil
}

// strs reads field name of the value at w, an array of strings of kind,
// into buf (reused by the caller, who copies what it keeps).
func (rd *stateReader) strs(w where, name string, kind int, buf []string) ([]string, error) {
	out := buf[:0]
	err := rd.j.elements(
		func() error { return stateErr(w.field(name), "%s must be an array of strings", name) },
		func(i int) error {
			v, err := rd.j.str(w, name, i, kind)
			out = append(out, v)
			return err
		})
	return out, err
}

var accountFields = []string{"id", "contextSeq", "contexts", "webhooks"}

// account reads an account, a context at a time.
func (rd *stateReader) account(w where) error {
	j := rd.j
	la := &loadedAccount{}
	base := w.String()
	var acct string
	seqGiven := -1
	seen, err := j.object(w, accountFields, func(k int) error {
		var err error
		switch k {
		case 0:
			acct, err = j.str(w, "id", -1, strPlain)
		case 1:
			seqGiven, err = j.integer(w, "contextSeq", 0, maxStateSeq)
		case 2:
			err = j.array(base, "contexts", func(cw where) error {
				c, err := rd.context(cw, la)
				if err == nil {
					la.contexts = append(la.contexts, c)
				}
				return err
			})
		case 3:
			err = j.array(base, "webhooks", func(ww where) error {
				wh, err := rd.webhook(ww)
				if err == nil {
					la.webhooks = append(la.webhooks, wh)
				}
				return err
			})
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := required(seen, w, accountFields, 0); err != nil {
		return err
	}
	if err := ValidAccount(acct); err != nil {
		return stateErr(w.field("id"), "%s", strings.TrimPrefix(err.Error(), "mockserver: "))
	}
	switch {
	case len(la.webhooks) > MaxWebhooksPerAccount:
		return stateErr(w.field("webhooks"), "%d webhooks: an account has at most %d", len(la.webhooks), MaxWebhooksPerAccount)
	case rd.accountIDs[acct]:
		return stateErr(w.field("id"), "account %q appears twice", acct)
	case !rd.addAccounts && rd.s.accounts[acct] == nil:
		return stateErr(w.field("id"), "no key of this server belongs to account %q: a state's accounts must be the server's own "+
			"(give it a key: the command's -key KEY:plan:scope:%s, or mockserver.WithKey)", acct, acct)
	}
	rd.accountIDs[acct] = true
	la.id = acct
	if n := len(la.contexts); n > 0 {
		la.contextSeq = la.contexts[n-1].seq
	}
	if seqGiven >= 0 {
		if uint64(seqGiven) < la.contextSeq {
			return stateErr(w.field("contextSeq"), "%d is below the last context's seq %d", seqGiven, la.contextSeq)
		}
		la.contextSeq = uint64(seqGiven)
	}
	for _, wh := range la.webhooks {
		wh.account = acct
	}
	rd.st.accounts = append(rd.st.accounts, la)
	return nil
}

var stateContextFields = []string{"id", "seq", "versions"}

// context reads one context and builds its record: its current fields
// are its last version's; the workers make the rest (analyzeContext).
func (rd *stateReader) context(w where, la *loadedAccount) (*contextRec, error) {
	j := rd.j
	c := &contextRec{}
	prev := uint64(0)
	if n := len(la.contexts); n > 0 {
		prev = la.contexts[n-1].seq
	}
	seq := -1
	var need []bool // versions whose changes are to be worked out
	seen, err := j.object(w, stateContextFields, func(k int) error {
		var err error
		switch k {
		case 0:
			c.id, err = rd.id(w, "id", contextIDRegexp, "context", rd.contextIDs)
		case 1:
			seq, err = j.integer(w, "seq", 1, maxStateSeq)
		case 2:
			err = j.array(w.String(), "versions", func(vw where) error {
				var prevV *StoredVersion
				if n := len(c.versions); n > 0 {
					prevV = &c.versions[n-1].v
				}
				v, given, err := rd.version(vw, vw.index+1, prevV)
				if err == nil {
					c.versions = append(c.versions, newVersionRec(v))
					if !given && need == nil {
						need = make([]bool, vw.index, vw.index+1)
					}
					if need != nil {
						need = append(need, !given)
					}
				}
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := required(seen, w, stateContextFields, 0, 2); err != nil {
		return nil, err
	}
	if len(c.versions) == 0 {
		return nil, stateErr(w.field("versions"), "must be an array of at least one version")
	}
	c.seq = prev + 1
	if seq >= 0 {
		if c.seq = uint64(seq); c.seq <= prev {
			return nil, stateErr(w.field("seq"), "%d is not above the seq of the context before it (%d): contexts are listed in creation order", c.seq, prev)
		}
	}
	first, last := &c.versions[0].v, &c.versions[len(c.versions)-1].v
	c.name, c.content, c.tags, c.version = last.Name, last.Content, last.Tags, last.Version
	c.createdAt, c.updatedAt = first.CreatedAt, last.CreatedAt
	rd.analyze(analysisJob{c, need})
	rd.st.contexts++
	rd.st.versions += len(c.versions)
	return c, nil
}

// analysis is the Markdown analysis of a text, when it has been made.
type analysis struct {
	info mdInfo
	ok   bool
}

var versionFields = []string{"version", "name", "content", "tags", "createdAt", "createdBy", "changes"}

// version reads version number n, and whether it gives its changes.
func (rd *stateReader) version(w where, n int, prev *StoredVersion) (StoredVersion, bool, error) {
	j := rd.j
	v := StoredVersion{Tags: []string{}}
	var changesGiven bool
	seen, err := j.object(w, versionFields, func(k int) error {
		var err error
		switch k {
		case 0:
			v.Version, err = j.integer(w, "version", 1, maxStateSeq)
			if err == nil && v.Version != n {
				err = stateErr(w.field("version"), "is %d, but versions are numbered 1, 2, 3… in order: this one must be %d", v.Version, n)
			}
		case 1:
			if v.Name, err = j.str(w, "name", -1, strPlain); err == nil {
				if e := validName(v.Name); e != nil {
					err = apiErr(w.field("name"), e)
				}
			}
		case 2:
			if v.Content, err = j.str(w, "content", -1, strText); err == nil {
				if e := validContent(v.Content); e != nil {
					err = apiErr(w.field("content"), e)
				}
			}
		case 3:
			if rd.tags, err = rd.strs(w, "tags", strPlain|strIntern, rd.tags); err == nil {
				var e *apiError
				if v.Tags, e = cleanTags(rd.tags); e != nil {
					err = apiErr(w.field("tags"), e)
				}
			}
		case 4:
			v.CreatedAt, err = rd.time(w, "createdAt")
		case 5:
			v.CreatedBy, err = rd.id(w, "createdBy", userIDRegexp, "user", nil)
		case 6:
			changesGiven = true
			v.Changes, err = rd.changes(where{base: w.field("changes")})
		}
		return err
	})
	if err == nil {
		err = required(seen, w, versionFields, 0, 1, 4, 5)
	}
	if err != nil {
		return v, false, err
	}
	// What an unchanged field shares with the version before, as the
	// server's own versions do: each text is held once.
	if prev != nil {
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
	return v, changesGiven, nil
}

var changesFields = []string{"sections_modified", "word_count_delta"}

// changes reads a version's changes. Section names are heading text, which
// may hold a tab, so any character is taken.
func (rd *stateReader) changes(w where) (contextsvc.Changes, error) {
	var ch contextsvc.Changes
	seen, err := rd.j.object(w, changesFields, func(k int) error {
		var err error
		if k == 0 {
			ch.SectionsModified, err = rd.strs(w, "sections_modified", strLenient|strIntern, []string{})
		} else {
			ch.WordCountDelta, err = rd.j.integer(w, "word_count_delta", -maxStateSeq, maxStateSeq)
		}
		return err
	})
	if err == nil {
		err = required(seen, w, changesFields, 0, 1)
	}
	return ch, err
}

var stateWebhookFields = []string{"id", "seq", "url", "events", "secret", "createdAt", "active"}

// webhook reads a webhook, its fields held to the rules of registration
// and of a change (PATCH /_mock/webhooks/{id}). Its account is set when
// the account is read. A seq not given is the one after the highest so
// far.
func (rd *stateReader) webhook(w where) (*webhook, error) {
	j := rd.j
	wh := &webhook{}
	st := &webhookState{active: true}
	seq := -1
	seen, err := j.object(w, stateWebhookFields, func(k int) error {
		var err error
		var e *apiError
		switch k {
		case 0:
			if wh.id, err = rd.id(w, "id", webhookIDRegexp, "webhook", nil); err == nil && rd.webhooks[wh.id] != nil {
				err = stateErr(w.field("id"), "webhook id %q appears twice", wh.id)
			}
		case 1:
			seq, err = j.integer(w, "seq", 1, maxStateSeq)
		case 2:
			if st.url, err = j.str(w, "url", -1, strPlain); err == nil {
				e = rd.s.validWebhookURL(st.url)
			}
		case 3:
			var evs []string
			if evs, err = rd.strs(w, "events", strPlain|strIntern, nil); err == nil {
				types := make([]contextsvc.EventType, len(evs))
				for i, ev := range evs {
					types[i] = contextsvc.EventType(ev)
				}
				st.events, e = validWebhookEvents(types)
			}
		case 4:
			// The messages never repeat the secret.
			if st.secret, err = j.str(w, "secret", -1, strPlain); err == nil {
				e = validWebhookSecret(st.secret)
			}
		case 5:
			wh.createdAt, err = rd.time(w, "createdAt")
		case 6:
			st.active, err = j.boolean(w, "active")
		}
		if e != nil {
			err = apiErr(w.field(stateWebhookFields[k]), e)
		}
		return err
	})
	if err == nil {
		err = required(seen, w, stateWebhookFields, 0, 2, 3, 4, 5)
	}
	if err != nil {
		return nil, err
	}
	if seq < 0 {
		wh.seq = rd.lastWebhookSeq + 1
	} else if wh.seq = uint64(seq); rd.webhookSeqs[wh.seq] {
		return nil, stateErr(w.field("seq"), "%d is another webhook's seq too: each webhook has its own place in registration order", seq)
	}
	rd.webhookSeqs[wh.seq] = true
	rd.lastWebhookSeq = max(rd.lastWebhookSeq, wh.seq)
	wh.state.Store(st)
	rd.webhooks[wh.id] = wh
	rd.st.webhooks++
	return wh, nil
}

var eventFields = []string{"id", "type", "timestamp", "data"}

// event reads an event envelope that pending deliveries send: its bytes,
// compacted, are what their attempts sign.
func (rd *stateReader) event(w where) error {
	j := rd.j
	if _, err := j.peek(); err != nil {
		return err
	}
	rd.envelope = rd.envelope[:0]
	j.capture = &rd.envelope
	var ev eventBody
	seen, err := j.object(w, eventFields, func(k int) error {
		var err error
		switch k {
		case 0:
			if ev.id, err = rd.id(w, "id", eventIDRegexp, "event", nil); err == nil && rd.events[ev.id] != nil {
				err = stateErr(w.field("id"), "event id %q appears twice", ev.id)
			}
		case 1:
			var typ string
			if typ, err = j.str(w, "type", -1, strPlain); err == nil {
				if verr := validEventType(typ); verr != nil {
					err = stateErr(w.field("type"), "%s", strings.TrimPrefix(verr.Error(), ErrInvalidEvent.Error()+": "))
				}
			}
			ev.typ = contextsvc.EventType(typ)
		case 2:
			_, err = rd.time(w, "timestamp")
		case 3:
			if c, perr := j.peek(); perr != nil || c != '{' {
				if perr != nil {
					return perr
				}
				return stateErr(w.field("data"), "must be a JSON object")
			}
			err = j.skip(0)
		}
		return err
	})
	j.capture = nil
	if err == nil {
		err = required(seen, w, eventFields, 0, 1, 2, 3)
	}
	if err != nil {
		return err
	}
	var body bytes.Buffer
	body.Grow(len(rd.envelope))
	_ = json.Compact(&body, rd.envelope) // the reader has checked its grammar
	ev.body = body.Bytes()
	rd.events[ev.id] = &ev
	return nil
}

var deliveryFields = []string{"id", "seq", "eventId", "webhookId", "url", "createdAt", "nextAttemptAt", "retries", "attempts"}

// delivery reads a pending delivery; its event and webhook are looked up
// in finish.
func (rd *stateReader) delivery(w where) error {
	j := rd.j
	ref := deliveryRef{w: w}
	d := &ref.d
	d.dueAt = rd.now
	seq, retries := -1, -1
	seen, err := j.object(w, deliveryFields, func(k int) error {
		var err error
		switch k {
		case 0:
			d.id, err = rd.id(w, "id", deliveryIDRegexp, "delivery", rd.deliveryIDs)
		case 1:
			seq, err = j.integer(w, "seq", 1, maxStateSeq)
		case 2:
			ref.eventID, err = j.str(w, "eventId", -1, strPlain)
		case 3:
			d.webhookID, err = j.str(w, "webhookId", -1, strPlain)
		case 4:
			if d.url, err = j.str(w, "url", -1, strPlain); err == nil {
				if e := rd.s.validWebhookURL(d.url); e != nil {
					err = apiErr(w.field("url"), e)
				}
			}
			ref.hasURL = true
		case 5:
			d.createdAt, err = rd.time(w, "createdAt")
		case 6:
			d.dueAt, err = rd.time(w, "nextAttemptAt")
		case 7:
			retries, err = j.integer(w, "retries", 0, 1_000_000)
		case 8:
			err = j.array(w.String(), "attempts", func(aw where) error {
				a, err := rd.attempt(aw, aw.index+1)
				d.attempts = append(d.attempts, a)
				return err
			})
		}
		return err
	})
	if err == nil {
		err = required(seen, w, deliveryFields, 0, 2, 3, 5)
	}
	if err != nil {
		return err
	}
	d.seq = rd.lastDeliverySeq + 1
	if seq >= 0 {
		if d.seq = uint64(seq); d.seq <= rd.lastDeliverySeq {
			return stateErr(w.field("seq"), "%d is not above the seq of the delivery before it (%d): deliveries are listed in creation order", d.seq, rd.lastDeliverySeq)
		}
	}
	rd.lastDeliverySeq = d.seq
	d.retries = len(d.attempts)
	if retries >= 0 {
		d.retries = retries
	}
	rd.refs = append(rd.refs, ref)
	return nil
}

var attemptFields = []string{"number", "scheduledAt", "startedAt", "durationNs", "statusCode", "error", "responseSnippet"}

// attempt reads attempt number n of a delivery. Its error and response
// snippet are the receiver's or the network's words, kept as they came.
func (rd *stateReader) attempt(w where, n int) (DeliveryAttempt, error) {
	j := rd.j
	var a DeliveryAttempt
	seen, err := j.object(w, attemptFields, func(k int) error {
		var err error
		switch k {
		case 0:
			a.Number, err = j.integer(w, "number", 1, maxStateSeq)
			if err == nil && a.Number != n {
				err = stateErr(w.field("number"), "is %d, but attempts are numbered 1, 2, 3… in order: this one must be %d", a.Number, n)
			}
		case 1:
			a.ScheduledAt, err = rd.time(w, "scheduledAt")
		case 2:
			a.StartedAt, err = rd.time(w, "startedAt")
		case 3:
			var ns int
			ns, err = j.integer(w, "durationNs", 0, maxStateSeq)
			a.Duration = time.Duration(ns)
		case 4:
			a.StatusCode, err = j.integer(w, "statusCode", 0, 999)
		case 5:
			a.Error, err = j.str(w, "error", -1, strLenient)
		case 6:
			a.ResponseSnippet, err = j.str(w, "responseSnippet", -1, strLenient)
			if err == nil && utf8.RuneCountInString(a.ResponseSnippet) > responseSnippetLimit {
				err = stateErr(w.field("responseSnippet"), "must be at most %d characters", responseSnippetLimit)
			}
		}
		return err
	})
	if err == nil {
		err = required(seen, w, attemptFields, 0, 1, 2, 3)
	}
	return a, err
}

// finish resolves each delivery's event and webhook: its attempts read
// the webhook's url and secret; when it gives no url (where its latest
// attempt went), it is the webhook's.
func (rd *stateReader) finish() error {
	for _, ref := range rd.refs {
		ev := rd.events[ref.eventID]
		if ev == nil {
			return stateErr(ref.w.field("eventId"), "no event %q in events", ref.eventID)
		}
		wh := rd.webhooks[ref.d.webhookID]
		if wh == nil {
			return stateErr(ref.w.field("webhookId"), "no webhook %q in any account", ref.d.webhookID)
		}
		st := wh.state.Load()
		if !st.active {
			return stateErr(ref.w.field("webhookId"), "webhook %q is inactive: an inactive webhook has no pending delivery", ref.d.webhookID)
		}
		d := ref.d
		d.event, d.hook = ev, wh
		if !ref.hasURL {
			d.url = st.url
		}
		rd.st.deliveries = append(rd.st.deliveries, d)
	}
	rd.st.deliverySeq = max(rd.st.deliverySeq, rd.lastDeliverySeq)
	rd.st.webhookSeq = max(rd.st.webhookSeq, rd.lastWebhookSeq)
	return nil
}
