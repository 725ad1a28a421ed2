package proxy

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// The upstream's time limits. An upstream may be down, overloaded or
// hostile: one that never answers, or sends its answer a byte at a time
// with long pauses, must not hold the caller (and the proxy's goroutines)
// for as long as it likes.
//
//   - DefaultTimeout: from forwarding the request to the beginning of its
//     answer, its headers and the first bytes of its body (or its end).
//     The headers go to the caller with those first bytes, so past the
//     limit the caller still gets an answer of its own: a 504 with the
//     contract's error body.
//   - DefaultIdleTimeout: each wait for more of the body once it has
//     begun. The caller has the status by then; past the limit the answer
//     is cut short (the caller's connection is closed mid-answer, so it
//     cannot take the answer for whole).
//
// Either way a finding (and a log line at Warn) says which limit was
// passed. These are real time, whatever the server's clock.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultIdleTimeout = 30 * time.Second
)

// limitError is the time limit an upstream passed: the cause the
// exchange's context is canceled with.
type limitError struct {
	idle bool
	d    time.Duration
}

func (e *limitError) Error() string {
	if e.idle {
		return fmt.Sprintf("the answer's body paused for longer than the upstream idle time-out (%s)", e.d)
	}
	return fmt.Sprintf("its answer did not begin within the upstream time-out (%s)", e.d)
}

// begin waits, within the time-out the exchange's headers came in, for
// the body's first bytes (or its end), and returns the body to stream
// from there: those bytes, then the rest with each wait bounded by the
// idle time-out. Its error is the limit passed, or the body's. The first
// bytes are read into one of the copy buffers, given back once streamed.
func begin(ex *exchange, rc io.ReadCloser) (io.ReadCloser, error) {
	buf := copyBuffers.Get().(*[]byte)
	var n int
	var err error
	for n == 0 && err == nil {
		n, err = rc.Read(*buf)
	}
	if !ex.begun.Stop() || (err != nil && err != io.EOF) {
		copyBuffers.Put(buf)
		if le := ex.limit(); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("its answer broke off: %w", err)
	}
	b := &idleBody{rc: rc, buf: buf, first: (*buf)[:n], idle: ex.p.c.IdleTimeout, ex: ex}
	if err == io.EOF {
		b.err = io.EOF
	}
	return b, nil
}

// idleBody is an answer's body whose every wait for more is bounded by
// idle: past it, the exchange's context is canceled with the limit as its
// cause, which ends the transport's read, and Read returns the limit.
type idleBody struct {
	rc    io.ReadCloser
	first []byte // read by begin, not yet returned
	err   error  // io.EOF once begin met the end
	idle  time.Duration
	ex    *exchange

	mu    sync.Mutex // guards timer and buf against Close during a Read
	timer *time.Timer
	buf   *[]byte // first's copy buffer, until given back
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		if len(b.first) == 0 {
			b.release()
		}
		b.mu.Unlock()
		return n, nil
	}
	b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	b.mu.Lock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.expire)
	} else {
		b.timer.Reset(b.idle)
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.timer.Stop()
	b.mu.Unlock()
	if err != nil && err != io.EOF {
		if le := b.ex.limit(); le != nil {
			err = le
		}
	}
	return n, err
}

// expire cancels the exchange for its idle body.
func (b *idleBody) expire() {
	b.ex.cancel(&limitError{idle: true, d: b.idle})
}

func (b *idleBody) Close() error {
	b.mu.Lock()
	if b.timer != nil {
		b.timer.Stop()
	}
	b.first = nil
	b.release()
	b.mu.Unlock()
	return b.rc.Close()
}

// release gives the first bytes' buffer back; b.mu is held.
func (b *idleBody) release() {
	if b.buf != nil {
		copyBuffers.Put(b.buf)
		b.buf = nil
	}
}
