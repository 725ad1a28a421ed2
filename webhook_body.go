package contextsvc

import (
	"errors"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// This file is how the webhook handler reads a body from a sender it does
// not trust: only what arrives, up to the limit, within the time-out.

var (
	// errBodyTooLarge: the body is over the handler's limit.
	errBodyTooLarge = errors.New("contextsvc: webhook body over the limit")
	// errBodyTooSlow is the Err of a DeliveryTooSlow result.
	errBodyTooSlow = errors.New("contextsvc: webhook body not received within the handler's body time-out")
)

// bodyMinRead is the least room a read is given, so that a body that
// arrives in small pieces does not grow the buffer a few bytes at a time.
const bodyMinRead = 512

// aLongTimeAgo is a read deadline already past: setting it makes a read
// blocked on the connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// The states of a bodyReader's read.
const (
	bodyIdle     int32 = iota // between reads (in the pool)
	bodyReading               // the timer may end it
	bodyDone                  // read (or failed) before the timer fired
	bodyTimedOut              // the timer fired first
)

// bodyReader reads one request's body at a time. The handler pools them:
// the buffer grows to the largest body read so far and is reused, and the
// timer is made once.
type bodyReader struct {
	buf   []byte
	timer *time.Timer // calls expire; made on first use
	mu    sync.Mutex  // serialises expire against the end of a read
	state atomic.Int32
	w     http.ResponseWriter // the request's, while reading
	// stale is set when the timer could not be stopped before it fired:
	// its function may still run, so b must not serve another request.
	stale bool
}

// read reads r's body whole, growing the buffer only as bytes arrive
// (never to the declared Content-Length). It returns errBodyTooLarge past
// limit bytes, and errBodyTooSlow when the body is not whole within
// timeout: then a read blocked on the connection is interrupted through
// w's read deadline. A ResponseWriter that has no deadline to set (a test
// recorder, a wrapper without Unwrap) cannot be interrupted: its read ends
// by itself, and the loop stops at the next piece. The deadline is only
// ever brought forward, never pushed back past the server's own.
func (b *bodyReader) read(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, error) {
	rb := r.Body
	if rb == nil { // a hand-made *http.Request (servers always set Body)
		rb = http.NoBody
	}
	b.mu.Lock()
	b.w = w
	b.state.Store(bodyReading)
	b.mu.Unlock()
	if b.timer == nil {
		b.timer = time.AfterFunc(timeout, b.expire)
	} else {
		b.timer.Reset(timeout)
	}

	body := b.buf[:0]
	var err error
	for {
		if len(body) == cap(body) {
			body = growBody(body, r.ContentLength, limit)
		}
		var n int
		n, err = rb.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if int64(len(body)) > limit {
			err = errBodyTooLarge
			break
		}
		if b.state.Load() == bodyTimedOut {
			err = errBodyTooSlow
			break
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			break
		}
	}
	b.buf = body[:0]

	b.mu.Lock()
	if !b.state.CompareAndSwap(bodyReading, bodyDone) {
		// The timer fired, perhaps as the last piece arrived: the read
		// deadline is past now, so the body counts as too slow.
		err = errBodyTooSlow
	}
	b.w = nil
	b.mu.Unlock()
	b.stale = !b.timer.Stop()
	if err != nil {
		return nil, err
	}
	return body, nil
}

// growBody returns body with more room, for a read of a body of declared
// length (-1: unknown) under limit: twice the room it had, so the buffer
// grows with what arrived, but no further than one byte past the declared
// length or the limit (enough to see the end, or a body over the limit).
// A declared length only ever caps the growth, never drives it.
func growBody(body []byte, declared, limit int64) []byte {
	have := int64(len(body))
	next := max(2*int64(cap(body)), bodyMinRead)
	if declared >= have && next >= declared && declared < math.MaxInt64 {
		next = declared + 1 // the rest and the end, in one read
	}
	if limit < math.MaxInt64 {
		next = min(next, limit+1)
	}
	next = max(next, have+1)
	nb := make([]byte, have, next)
	copy(nb, body)
	return nb
}

// expire is the timer's function: it ends a read still in progress.
func (b *bodyReader) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.state.CompareAndSwap(bodyReading, bodyTimedOut) {
		return
	}
	_ = http.NewResponseController(b.w).SetReadDeadline(aLongTimeAgo)
}

// reusable reports whether b may go back to the pool: not when its timer
// fired, since its function could then run during the next request's read.
func (b *bodyReader) reusable() bool {
	if b.stale {
		return false
	}
	b.state.Store(bodyIdle)
	return true
}
