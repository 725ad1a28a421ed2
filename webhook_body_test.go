package contextsvc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// rawPost writes the head of a POST to /webhooks on conn, declaring length
// bytes of body, signed with sig (none when empty); the body is the
// caller's to send.
func rawPost(t *testing.T, conn net.Conn, length int64, sig string) {
	t.Helper()
	head := fmt.Sprintf("POST /webhooks HTTP/1.1\r\nHost: pipe.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", length)
	if sig != "" {
		head += DefaultSignatureHeader + ": " + sig + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
}

// dialPipe opens a connection to n's server.
func dialPipe(t *testing.T, n *pipeNet) net.Conn {
	t.Helper()
	conn, err := n.dialContext(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// lingerClose waits out the 500 ms net/http lingers on a connection it
// closes after an answer, so that the bubble's goroutines all end.
func lingerClose() { time.Sleep(time.Second) }

// forgedSig is a well-formed signature header that verifies nothing: what
// a sender without the secret can put in front of a body.
var forgedSig = SignaturePrefix + strings.Repeat("0", 64)

// TestWebhookHandlerSlowBody: a body trickling at one byte a second, or
// stalling after the headers, is answered 408 once the handler's body
// time-out has passed, on a server with no time-outs of its own; the
// connection is closed, the hook hears why, and the next delivery is
// handled as usual.
func TestWebhookHandlerSlowBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		opts    []WebhookOption
		timeout time.Duration
		trickle bool // one byte a second; otherwise nothing after the headers
	}{
		{"default time-out, one byte a second", nil, DefaultWebhookBodyTimeout, true},
		{"default time-out, nothing after the headers", nil, DefaultWebhookBodyTimeout, false},
		{"3 s, one byte a second", []WebhookOption{WithWebhookBodyTimeout(3 * time.Second)}, 3 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var hr hookRecorder
				var rc eventRecorder
				h := newHandler(t, testSecret, rc.fn, append([]WebhookOption{WithDeliveryHook(hr.hook)}, tc.opts...)...)
				n, client := servePipe(t, h)

				conn := dialPipe(t, n)
				start := time.Now()
				rawPost(t, conn, 1000, forgedSig)
				if tc.trickle {
					go func() {
						for {
							if _, err := conn.Write([]byte("x")); err != nil {
								return // the server hung up
							}
							time.Sleep(time.Second)
						}
					}()
				}
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if elapsed := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || elapsed != tc.timeout {
					t.Errorf("answered %d after %v, want 408 after %v", resp.StatusCode, elapsed, tc.timeout)
				}
				if !resp.Close {
					t.Error("the connection is kept open after a refused body")
				}
				conn.Close()
				got := hr.last(t)
				if got.Outcome != DeliveryTooSlow || got.StatusCode != http.StatusRequestTimeout || !errors.Is(got.Err, errBodyTooSlow) {
					t.Errorf("hook heard %+v, want too_slow, 408", got)
				}

				// The next delivery is handled, from start to end.
				body := eventBody("evt_after_slow", time.Now())
				req, _ := http.NewRequest(http.MethodPost, pipeBase, bytes.NewReader(body))
				req.Header.Set(DefaultSignatureHeader, Sign(body, testSecret))
				resp, err = client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || rc.calls() != 1 {
					t.Errorf("next delivery: status %d, fn calls %d; want 200, 1", resp.StatusCode, rc.calls())
				}
				lingerClose()
			})
		})
	}
}

// tricklingBody is a request body that gives one byte per second of the
// bubble's clock.
type tricklingBody struct{ left int }

func (b *tricklingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(time.Second)
	b.left--
	p[0] = 'x'
	return 1, nil
}

// TestWebhookHandlerSlowBodyWithoutDeadline: behind a ResponseWriter that
// cannot set a read deadline (a recorder here, a wrapper without Unwrap in
// a program), a trickling body still ends with a 408 at the first byte
// after the time-out.
func TestWebhookHandlerSlowBodyWithoutDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rc eventRecorder
		h := newHandler(t, testSecret, rc.fn, WithWebhookBodyTimeout(5*time.Second))
		r := httptest.NewRequest(http.MethodPost, "/webhooks", &tricklingBody{left: 1000})
		r.Header.Set(DefaultSignatureHeader, forgedSig)
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r)
		if elapsed := time.Since(start); w.Code != http.StatusRequestTimeout || elapsed < 5*time.Second || elapsed > 6*time.Second {
			t.Errorf("answered %d after %v, want 408 after 5 or 6 s", w.Code, elapsed)
		}
	})
}

// TestWebhookHandlerDeclaredLengthNotReserved: the handler reserves no
// memory for what a sender only declares. 300 connections declaring 1 MiB
// bodies and sending none (with a well-formed forged signature, so that the
// handler reads), and one declaring 60 GiB to a handler whose limit is
// 64 GiB, raise the live heap by a few MiB, not by what they declare.
// Not parallel: it measures the process's heap.
func TestWebhookHandlerDeclaredLengthNotReserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, testSecret, func(context.Context, *Event) error { return nil }, WithMaxBodyBytes(64<<30))
		n, _ := servePipe(t, h)
		heap := func() uint64 {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		before := heap()
		conns := make([]net.Conn, 0, 301)
		for range 300 {
			c := dialPipe(t, n)
			rawPost(t, c, 1<<20, forgedSig)
			conns = append(conns, c)
		}
		c := dialPipe(t, n)
		rawPost(t, c, 60<<30, forgedSig)
		io.WriteString(c, `{"id":"evt_huge",`) // a start, then nothing
		conns = append(conns, c)
		synctest.Wait() // every handler is blocked reading its body
		after := heap()
		const bound = 32 << 20
		t.Logf("live heap: %.1f MiB more with the 301 bodies in flight", float64(int64(after)-int64(before))/(1<<20))
		if after > before+bound {
			t.Errorf("301 bodies declared and not sent raised the live heap by %d MiB, want at most %d MiB", (after-before)>>20, bound>>20)
		}
		for _, c := range conns {
			c.Close()
		}
		lingerClose()
	})
}

// TestWebhookHandlerRefusesUnread: a request without a well-formed
// signature, or one declaring a body over the limit, is answered at once,
// without the body being read, and its connection closed (net/http would
// otherwise wait for the body to discard it).
func TestWebhookHandlerRefusesUnread(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		length int64
		sig    string
		want   int
	}{
		{"no signature", 1000, "", http.StatusUnauthorized},
		{"no signature, 1 MiB declared", 1 << 20, "", http.StatusUnauthorized},
		{"malformed signature", 1000, "sha256=xyz", http.StatusUnauthorized},
		{"declared over the limit", DefaultWebhookMaxBodyBytes + 1, forgedSig, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var hr hookRecorder
				var rc eventRecorder
				h := newHandler(t, testSecret, rc.fn, WithDeliveryHook(hr.hook))
				n, _ := servePipe(t, h)
				conn := dialPipe(t, n)
				start := time.Now()
				rawPost(t, conn, tc.length, tc.sig)
				// No body is sent: on a synchronous pipe, an answer proves
				// that nobody waited for one.
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want || time.Since(start) != 0 || !resp.Close {
					t.Errorf("answered %d after %v, closing %v; want %d at once, closing", resp.StatusCode, time.Since(start), resp.Close, tc.want)
				}
				if got := hr.last(t); got.StatusCode != tc.want {
					t.Errorf("hook heard %+v", got)
				}
				// The server may still be waiting on the connection (for
				// the body it will not read): closed here, it ends inside
				// the bubble.
				conn.Close()
				lingerClose()
			})
		})
	}

	// Through a recorder: the body is never read.
	for _, sig := range []string{"", "sha1=abc", "sha256=" + strings.Repeat("A", 64)} {
		var reads atomic.Int32
		r := httptest.NewRequest(http.MethodPost, "/webhooks", countingReader{&reads})
		if sig != "" {
			r.Header.Set(DefaultSignatureHeader, sig)
		}
		w := httptest.NewRecorder()
		newHandler(t, testSecret, func(context.Context, *Event) error { return nil }).ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || reads.Load() != 0 {
			t.Errorf("signature %q: status %d after %d reads of the body; want 401 and none", sig, w.Code, reads.Load())
		}
	}
}

// countingReader counts its reads and gives an endless body.
type countingReader struct{ n *atomic.Int32 }

func (c countingReader) Read(p []byte) (int, error) {
	c.n.Add(1)
	return copy(p, "xxxxxxxx"), nil
}

// TestWebhookHandlerEventOutlivesBuffer: the handler reuses its body
// buffers, and an event handed to fn is a copy, unchanged by the
// deliveries after it.
func TestWebhookHandlerEventOutlivesBuffer(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now))
	first := eventBody("evt_first", testStart)
	deliver(t, h, first, Sign(first, testSecret))
	for i := range 20 {
		next := eventBody(fmt.Sprintf("evt_next_%d", i), testStart)
		next = bytes.ReplaceAll(next, []byte("Plan"), []byte("XXXX"))
		deliver(t, h, next, Sign(next, testSecret))
	}
	want, err := ParseEvent(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := rc.events[0]; got.ID != want.ID || !bytes.Equal(got.Data, want.Data) {
		t.Errorf("the first event changed after later deliveries:\n got %s %s\nwant %s %s", got.ID, got.Data, want.ID, want.Data)
	}
}

// TestGrowBody: the buffer doubles with what arrived, never past one byte
// beyond the declared length or the limit, and always gains room.
func TestGrowBody(t *testing.T) {
	t.Parallel()
	const maxInt64 = 1<<63 - 1
	cases := []struct {
		name            string
		have            int // the buffer's length, and capacity, before
		declared, limit int64
		want            int // the capacity asked for (the allocator may round up)
	}{
		{"empty, no length declared", 0, -1, 1 << 20, bodyMinRead},
		{"empty, 100 declared", 0, 100, 1 << 20, 101},
		{"512 read, 1 KiB declared", 512, 1024, 1 << 20, 1025},
		{"512 read, 60 GiB declared", 512, 60 << 30, 64 << 30, 1024},
		{"4 KiB read, limit 5000", 4096, -1, 5000, 5001},
		{"no limit to speak of", 4096, -1, maxInt64, 8192},
		{"1 MiB read of 1 MiB declared", 1 << 20, 1 << 20, 2 << 20, 1<<20 + 1},
		{"more than declared (a hand-made request)", 600, 100, 1 << 20, 1200},
	}
	for _, tc := range cases {
		got := growBody(make([]byte, tc.have), tc.declared, tc.limit)
		if len(got) != tc.have || cap(got) < tc.want || cap(got) > tc.want+tc.want/8 {
			t.Errorf("%s: len %d cap %d, want len %d and room for %d (or a size class above)", tc.name, len(got), cap(got), tc.have, tc.want)
		}
	}
}
