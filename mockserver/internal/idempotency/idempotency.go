// Package idempotency is the contract's idempotency keys: a POST may carry
// Idempotency-Key; the server keeps, per account and key, the request's
// method, path and body hash and the answer it gave, for 24 hours on its
// clock, and answers a repeat from there ([Store.Serve]).
//
// It owns the keys, their answers and their bounds (in keys, in bytes and
// in time). Which requests go through it, and what runs before (the key's
// authentication, its rate limit, the faults), is the /v1 request path's.
// It imports clock and httpapi, nothing else of the mock server.
package idempotency

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// Limits of the store, which mockserver re-exports (IdempotencyTTL and its
// neighbours). Every key expires TTL after its first
// request; besides, the store holds at most MaxKeys keys and MaxBytes of
// stored answers (over all accounts) and forgets the oldest finished key
// first when a new one would pass either limit (a key whose request is
// still running is kept, so its repeat is still a 409). A repeat of a
// forgotten key runs afresh, as after 24 hours.
const (
	TTL      = 24 * time.Hour
	MaxKeys  = 10_000
	MaxBytes = 64 << 20
)

// maxIdempotencyKeyLen is the contract's longest key.
const maxIdempotencyKeyLen = 255

// maxStoredAnswer bounds one stored answer. A context answer is at most
// about 6 MB (1,000,000 bytes of content, each escaped to at most six
// characters), so every answer of the API fits; one that did not would
// not be stored, and its repeat would run afresh.
const maxStoredAnswer = 8 << 20

// entryOverhead is what the store counts for an entry besides the bytes of
// its answer, key, account, path and stored headers: the struct, its list
// element, its map slot and the headers' slice, as measured
// (TestIdempotencyMemoryAccounting checks it against the heap).
const entryOverhead = 320

// Store is the server's idempotency keys. The zero value is
// empty and ready.
type Store struct {
	mu    sync.Mutex
	byKey map[keyID]*entry
	order list.List // of *idemEntry, oldest first (creation order)
	bytes int       // what the entries count, see entry.size
}

// keyID names a key within its account: keys of different accounts never
// meet.
type keyID struct{ account, key string }

// entry is one key: the request that first used it and, once that
// request has finished, its answer. The answer fields are written once,
// under the store's lock, before done is set, and never change after.
type entry struct {
	id       keyID
	method   string
	path     string
	bodyHash [sha256.Size]byte
	created  time.Time
	elem     *list.Element

	done   bool
	status int
	header []string // name, value pairs: storedHeaders that the answer had
	body   []byte
}

func (e *entry) size() int {
	n := len(e.body) + len(e.id.key) + len(e.id.account) + len(e.path) + entryOverhead
	for _, h := range e.header {
		n += len(h) + 16 // its bytes, and its string header in the slice
	}
	return n
}

// verdict is what begin found for a request.
type verdict int

const (
	verdictFresh    verdict = iota // a new key: run the request, then finish
	verdictReplay                  // the same request again: send the stored answer
	verdictRunning                 // the same request again while the first runs: 409
	verdictMismatch                // the key with another method, path or body: 400
)

// begin looks the key up at the clock's now and, when it is new, records the
// request as running.
func (st *Store) begin(clock clock.Clock, id keyID, method, path string, sum [sha256.Size]byte) (*entry, verdict) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := clock.Now()
	st.expire(now)
	if e := st.byKey[id]; e != nil {
		switch {
		case !now.Before(e.created.Add(TTL)):
			// Out of creation order (a real clock stepped back): expired
			// all the same.
			st.remove(e)
		case e.method != method || e.path != path || e.bodyHash != sum:
			return e, verdictMismatch
		case !e.done:
			return e, verdictRunning
		default:
			return e, verdictReplay
		}
	}
	if st.byKey == nil {
		st.byKey = make(map[keyID]*entry)
	}
	e := &entry{id: id, method: method, path: path, bodyHash: sum, created: now}
	st.byKey[id] = e
	e.elem = st.order.PushBack(e)
	st.bytes += e.size()
	st.evict()
	return e, verdictFresh
}

// finish records the answer of e's request. A 5xx is not kept (a repeat
// runs afresh), nor anything once e has been forgotten meanwhile (evicted,
// or the server reset).
func (st *Store) finish(e *entry, status int, header []string, body []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byKey[e.id] != e {
		return
	}
	if status >= 500 {
		st.remove(e)
		return
	}
	st.bytes -= e.size()
	e.status, e.header, e.body = status, header, body
	e.done = true
	st.bytes += e.size()
	st.evict()
}

// abandon forgets e without an answer: its request panicked (the server
// answers 500) or its answer was too large to keep. A repeat runs afresh.
func (st *Store) abandon(e *entry) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byKey[e.id] == e {
		st.remove(e)
	}
}

// expire forgets the keys whose 24 hours are over: the oldest come first.
func (st *Store) expire(now time.Time) {
	for f := st.order.Front(); f != nil; f = st.order.Front() {
		e := f.Value.(*entry)
		if now.Before(e.created.Add(TTL)) {
			return
		}
		st.remove(e)
	}
}

// evict forgets the oldest finished keys while the store is over a limit.
// A key whose request is still running is never forgotten for room: a
// repeat of it arriving then would run the request a second time. Running
// keys are as many as the requests in flight and hold no answer yet, so
// skipping them keeps the store within its limits but for those few.
func (st *Store) evict() {
	f := st.order.Front()
	for f != nil && (st.order.Len() > MaxKeys || st.bytes > MaxBytes) {
		e := f.Value.(*entry)
		f = f.Next()
		if e.done {
			st.remove(e)
		}
	}
}

func (st *Store) remove(e *entry) {
	delete(st.byKey, e.id)
	st.order.Remove(e.elem)
	st.bytes -= e.size()
}

// Reset forgets every key.
func (st *Store) Reset() {
	st.mu.Lock()
	st.byKey = nil
	st.order.Init()
	st.bytes = 0
	st.mu.Unlock()
}

// Stats returns how many keys are kept, and the bytes they count.
func (st *Store) Stats() (keys, bytes int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.order.Len(), st.bytes
}

// KeyProblem applies the contract's rule: 1 to 255 printable
// ASCII characters. It says what is wrong, "" when nothing is; it never
// quotes the key.
func KeyProblem(k string) string {
	if len(k) == 0 || len(k) > maxIdempotencyKeyLen {
		return fmt.Sprintf("Idempotency-Key must be 1 to %d printable ASCII characters, got %d characters", maxIdempotencyKeyLen, len(k))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < ' ' || k[i] > '~' {
			return fmt.Sprintf("Idempotency-Key must be printable ASCII; byte %d is not", i)
		}
	}
	return ""
}

// storedHeaders are the headers of an answer that describe it, and so are
// sent again with it; the others (X-Request-Id, X-RateLimit-*, Date) belong
// to each request. They are kept as name, value pairs rather than an
// http.Header: a map per key would cost more than most answers.
var storedHeaders = []string{"Content-Type", "Content-Disposition", "Location"}

// Serve runs a POST through the idempotency store when it carries
// an Idempotency-Key, and runs it plainly otherwise. It comes after
// authentication, the rate limit, injected faults that answer instead of
// the request, the scope check and the body limit: their answers are never
// stored (a 429 or 403 must not be replayed once the cause is gone). Every
// answer of the operation itself is, 4xx included, except a 5xx.
func (st *Store) Serve(w http.ResponseWriter, r *http.Request, clock clock.Clock, account string, h http.HandlerFunc) {
	keys := r.Header.Values("Idempotency-Key")
	if len(keys) == 0 {
		h(w, r)
		return
	}
	if len(keys) > 1 {
		httpapi.WriteError(w, httpapi.BadRequest("Idempotency-Key", "send one Idempotency-Key header, not several"))
		return
	}
	if p := KeyProblem(keys[0]); p != "" {
		httpapi.WriteError(w, httpapi.BadRequest("Idempotency-Key", p))
		return
	}
	// The whole body (at most 2 MiB, see authenticated) is hashed, then
	// handed to the operation as if unread.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpapi.WriteError(w, httpapi.TooLarge())
			return
		}
		httpapi.WriteError(w, httpapi.BadRequest("", "could not read the request body"))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	e, v := st.begin(clock, keyID{account, keys[0]}, r.Method, r.URL.Path, sha256.Sum256(body))
	switch v {
	case verdictMismatch:
		httpapi.WriteError(w, httpapi.BadRequest("Idempotency-Key", fmt.Sprintf(
			"this Idempotency-Key was used with another request (%s %s with another body, or another method or path); use a new key for a new request",
			e.method, e.path)))
		return
	case verdictRunning:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: "a request with this Idempotency-Key is still running; retry later to get its answer"})
		return
	case verdictReplay:
		hdr := w.Header()
		for i := 0; i+1 < len(e.header); i += 2 {
			hdr[e.header[i]] = append(hdr[e.header[i]], e.header[i+1])
		}
		hdr["Idempotent-Replayed"] = []string{"true"}
		w.WriteHeader(e.status)
		_, _ = w.Write(e.body)
		return
	}
	cw := &captureWriter{ResponseWriter: w}
	finished := false
	defer func() {
		if !finished {
			// The operation panicked: the server answers 500, which is
			// not kept.
			st.abandon(e)
		}
	}()
	h(cw, r)
	finished = true
	status := cw.status
	if status == 0 {
		status = http.StatusOK
	}
	var stored []string
	for _, name := range storedHeaders {
		for _, v := range w.Header()[name] {
			stored = append(stored, name, v)
		}
	}
	if cw.overflow {
		st.abandon(e)
		return
	}
	st.finish(e, status, stored, cw.body.Bytes())
}

// captureWriter passes an answer through while keeping a copy of its status
// and body (up to maxStoredAnswer) for the idempotency store.
type captureWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if !c.overflow {
		if c.body.Len()+len(b) > maxStoredAnswer {
			c.overflow = true
			c.body = bytes.Buffer{}
		} else {
			c.body.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
