package contextsvc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testSecret = "whsec_handler_test_secret"

func eventBody(id string, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":"context.updated","timestamp":%q,"data":{"contextId":"ctx_1","name":"Plan","version":2,"updatedBy":"user_1","changes":{"sections_modified":["Intro"],"word_count_delta":3}}}`,
		id, ts.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}

func deliver(t *testing.T, h http.Handler, body []byte, sig string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig != "" {
		r.Header.Set(DefaultSignatureHeader, sig)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// eventRecorder is a receiver function that records the events it gets and
// fails while fail is set.
type eventRecorder struct {
	mu     sync.Mutex
	events []*Event
	fail   atomic.Bool
}

func (rc *eventRecorder) fn(_ context.Context, e *Event) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.events = append(rc.events, e)
	if rc.fail.Load() {
		return errors.New("receiver database down")
	}
	return nil
}

func (rc *eventRecorder) calls() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.events)
}

func TestWebhookHandlerSuccess(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now))
	body := eventBody("evt_ok", testStart)
	w := deliver(t, h, body, Sign(body, testSecret))
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d, body %q", w.Code, w.Body)
	}
	if rc.calls() != 1 {
		t.Fatalf("fn called %d times", rc.calls())
	}
	want, err := ParseEvent(body)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, rc.events[0]); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
	data, err := rc.events[0].ContextUpdated()
	if err != nil || data.Changes.WordCountDelta != 3 {
		t.Errorf("data = %+v, %v", data, err)
	}
}

func TestWebhookHandlerRefusals(t *testing.T) {
	t.Parallel()
	body := eventBody("evt_r", testStart)
	good := Sign(body, testSecret)
	malformed := []byte(`{"id":"evt_m","type":"context.updated"}`)
	badData := []byte(`{"id":"evt_d","type":"context.updated","timestamp":"2026-11-21T12:00:00Z","data":{"version":"x"}}`)
	cases := []struct {
		name   string
		method string
		body   []byte
		sig    string
		opts   []WebhookOption
		status int
	}{
		{"GET", http.MethodGet, nil, "", nil, http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, body, good, nil, http.StatusMethodNotAllowed},
		{"missing signature", http.MethodPost, body, "", nil, http.StatusUnauthorized},
		{"malformed signature", http.MethodPost, body, "sha1=abc", nil, http.StatusUnauthorized},
		{"other secret", http.MethodPost, body, Sign(body, "whsec_other"), nil, http.StatusUnauthorized},
		{"signature of another body", http.MethodPost, body, Sign(malformed, testSecret), nil, http.StatusUnauthorized},
		{"signature in another header", http.MethodPost, body, good, []WebhookOption{WithSignatureHeader("X-Acme-Signature")}, http.StatusUnauthorized},
		{"too large", http.MethodPost, body, good, []WebhookOption{WithMaxBodyBytes(int64(len(body) - 1))}, http.StatusRequestEntityTooLarge},
		{"malformed envelope, valid signature", http.MethodPost, malformed, Sign(malformed, testSecret), nil, http.StatusBadRequest},
		{"data of wrong shape, valid signature", http.MethodPost, badData, Sign(badData, testSecret), nil, http.StatusBadRequest},
		{"not JSON, valid signature", http.MethodPost, []byte("hello"), Sign([]byte("hello"), testSecret), nil, http.StatusBadRequest},
		{"not JSON, bad signature: never parsed", http.MethodPost, []byte("hello"), Sign(body, testSecret), nil, http.StatusUnauthorized},
		{"too large and unsigned: refused unread", http.MethodPost, body, "", []WebhookOption{WithMaxBodyBytes(10)}, http.StatusUnauthorized},
		{"too large, well-formed signature of another body", http.MethodPost, body, Sign(malformed, testSecret), []WebhookOption{WithMaxBodyBytes(10)}, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			clk := newTestClock(testStart)
			var rc eventRecorder
			opts := append([]WebhookOption{WithWebhookClock(clk.Now), WithWebhookLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, tc.opts...)
			h := newHandler(t, testSecret, rc.fn, opts...)
			r := httptest.NewRequest(tc.method, "/webhooks", bytes.NewReader(tc.body))
			if tc.sig != "" {
				r.Header.Set(DefaultSignatureHeader, tc.sig)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status = %d, want %d (body %q)", w.Code, tc.status, w.Body)
			}
			if rc.calls() != 0 {
				t.Errorf("fn called %d times on a refused delivery", rc.calls())
			}
			if tc.status == http.StatusMethodNotAllowed {
				if got := w.Header().Get("Allow"); got != http.MethodPost {
					t.Errorf("Allow = %q, want POST", got)
				}
			}
			// Refusals after the method check are logged (so the leak
			// checks below read real log lines, not an empty buffer).
			if tc.status != http.StatusMethodNotAllowed && !strings.Contains(logs.String(), "refused") {
				t.Errorf("refusal not logged: %q", logs.String())
			}
			if w.Body.Len() > 64 {
				t.Errorf("refusal body is %d bytes, want a short one: %q", w.Body.Len(), w.Body)
			}
			for _, leak := range []string{testSecret, good[len(SignaturePrefix):], tc.sig} {
				if leak == "" || len(leak) < 8 {
					continue
				}
				if strings.Contains(w.Body.String(), leak) {
					t.Errorf("response body reveals %q", leak)
				}
				if strings.Contains(logs.String(), leak) {
					t.Errorf("log reveals %q: %s", leak, logs.String())
				}
			}
		})
	}
}

// TestWebhookHandlerNilBody: a hand-made request without a Body (as in a
// receiver's own unit test) is refused like an empty body, not a panic.
func TestWebhookHandlerNilBody(t *testing.T) {
	t.Parallel()
	var rc eventRecorder
	h := newHandler(t, testSecret, rc.fn)
	r := &http.Request{Method: http.MethodPost, Header: http.Header{DefaultSignatureHeader: {Sign(nil, testSecret)}}}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest || rc.calls() != 0 {
		t.Errorf("nil body: status %d, fn calls %d; want 400 (validly signed, not an event), 0", w.Code, rc.calls())
	}
}

func TestWebhookHandlerBodyLimitEdge(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	body := eventBody("evt_edge", testStart)
	h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now), WithMaxBodyBytes(int64(len(body))))
	if w := deliver(t, h, body, Sign(body, testSecret)); w.Code != http.StatusOK {
		t.Fatalf("body of exactly the limit: status %d", w.Code)
	}
	// Default limit, over a real connection: declared (refused unread) and
	// streamed without a length (refused once a byte past it arrives).
	srv := httptest.NewServer(newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now)))
	defer srv.Close()
	big := bytes.Repeat([]byte("x"), DefaultWebhookMaxBodyBytes+1)
	for _, declared := range []bool{true, false} {
		var rd io.Reader = bytes.NewReader(big)
		if !declared {
			rd = io.MultiReader(rd) // a length net/http cannot see: chunked
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(DefaultSignatureHeader, Sign(big, "whsec_forger"))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("1 MiB + 1, length declared %v: status %d, want 413", declared, resp.StatusCode)
		}
	}
}

func TestWebhookHandlerCustomHeaderAndRotation(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	h := newHandler(t, "whsec_new", rc.fn, WithWebhookClock(clk.Now),
		WithWebhookSecrets("whsec_old"), WithSignatureHeader("X-Acme-Signature"))
	for i, secret := range []string{"whsec_new", "whsec_old", "whsec_retired"} {
		body := eventBody(fmt.Sprintf("evt_rot_%d", i), testStart)
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("X-Acme-Signature", Sign(body, secret))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := http.StatusOK
		if secret == "whsec_retired" {
			want = http.StatusUnauthorized
		}
		if w.Code != want {
			t.Errorf("signed with %s: status %d, want %d", secret, w.Code, want)
		}
	}
	if rc.calls() != 2 {
		t.Errorf("fn called %d times, want 2", rc.calls())
	}
}

func TestWebhookHandlerReplayWindow(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name   string
		age    time.Duration // now minus the event's timestamp
		opts   []WebhookOption
		status int
	}{
		{"now", 0, nil, http.StatusOK},
		{"last retry (26h36m)", (1 + 5 + 30 + 120 + 1440) * time.Minute, nil, http.StatusOK},
		{"exactly 27h old", DefaultReplayWindow, nil, http.StatusOK},
		{"27h and 1ms old", DefaultReplayWindow + ms, nil, http.StatusBadRequest},
		{"a week old", 7 * 24 * time.Hour, nil, http.StatusBadRequest},
		{"exactly 5 min ahead", -DefaultFutureSkew, nil, http.StatusOK},
		{"5 min and 1ms ahead", -DefaultFutureSkew - ms, nil, http.StatusBadRequest},
		{"custom window, inside", time.Hour, []WebhookOption{WithReplayWindow(time.Hour, 0)}, http.StatusOK},
		{"custom window, outside", time.Hour + ms, []WebhookOption{WithReplayWindow(time.Hour, 0)}, http.StatusBadRequest},
		{"custom window, no future allowed", -ms, []WebhookOption{WithReplayWindow(time.Hour, 0)}, http.StatusBadRequest},
		{"protection off", 365 * 24 * time.Hour, []WebhookOption{WithReplayWindow(0, 0)}, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newTestClock(testStart)
			var rc eventRecorder
			h := newHandler(t, testSecret, rc.fn, append([]WebhookOption{WithWebhookClock(clk.Now)}, tc.opts...)...)
			body := eventBody("evt_w", testStart.Add(-tc.age))
			w := deliver(t, h, body, Sign(body, testSecret))
			if w.Code != tc.status {
				t.Fatalf("status = %d, want %d (%q)", w.Code, tc.status, w.Body)
			}
			if wantCalls := map[bool]int{true: 1, false: 0}[tc.status == http.StatusOK]; rc.calls() != wantCalls {
				t.Errorf("fn called %d times, want %d", rc.calls(), wantCalls)
			}
		})
	}
}

func TestWebhookHandlerDuplicatesAndRetries(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now))
	body := eventBody("evt_dup", testStart)
	sig := Sign(body, testSecret)

	// The receiver fails: 500, and the id is not remembered.
	rc.fail.Store(true)
	if w := deliver(t, h, body, sig); w.Code != http.StatusInternalServerError {
		t.Fatalf("failing fn: status %d, want 500", w.Code)
	}
	if strings.Contains(deliver(t, h, body, sig).Body.String(), "database") {
		t.Error("500 body reveals the receiver's error")
	}
	// The sender's retry a minute later is handled.
	clk.Advance(time.Minute)
	rc.fail.Store(false)
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK {
		t.Fatalf("retry: status %d, want 200", w.Code)
	}
	if rc.calls() != 3 {
		t.Fatalf("fn called %d times, want 3 (two failures, one success)", rc.calls())
	}
	// Later deliveries of the same id (retries, other webhooks) are
	// acknowledged without calling fn, for the whole window.
	for _, after := range []time.Duration{time.Second, 5 * time.Minute, 26 * time.Hour} {
		clk.Set(testStart.Add(after))
		if w := deliver(t, h, body, sig); w.Code != http.StatusOK {
			t.Fatalf("duplicate after %v: status %d", after, w.Code)
		}
	}
	if rc.calls() != 3 {
		t.Errorf("fn called %d times after duplicates, want 3", rc.calls())
	}
	// A different id is handled.
	other := eventBody("evt_other", clk.Now())
	if w := deliver(t, h, other, Sign(other, testSecret)); w.Code != http.StatusOK || rc.calls() != 4 {
		t.Errorf("other id: status %d, calls %d", w.Code, rc.calls())
	}
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestWebhookHandlerConcurrentDuplicate: while one attempt is inside fn, a
// second delivery of the same id gets 409 and fn is not called again;
// after the first succeeds, a third gets 200 as a duplicate.
func TestWebhookHandlerConcurrentDuplicate(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int32
	fn := func(ctx context.Context, e *Event) error {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
		return nil
	}
	h := newHandler(t, testSecret, fn, WithWebhookClock(clk.Now))
	body := eventBody("evt_conc", testStart)
	sig := Sign(body, testSecret)

	first := make(chan int)
	go func() { first <- deliver(t, h, body, sig).Code }()
	<-entered
	if w := deliver(t, h, body, sig); w.Code != http.StatusConflict {
		t.Errorf("concurrent duplicate: status %d, want 409", w.Code)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("first: status %d", code)
	}
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK {
		t.Errorf("later duplicate: status %d", w.Code)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("fn called %d times, want 1", n)
	}
}

func TestWebhookHandlerManyConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := newHandler(t, testSecret, func(context.Context, *Event) error { calls.Add(1); return nil })
	body := eventBody("evt_many", time.Now())
	sig := Sign(body, testSecret)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			code := deliver(t, h, body, sig).Code
			if code != http.StatusOK && code != http.StatusConflict {
				t.Errorf("status %d", code)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("fn called %d times, want 1", n)
	}
}

func TestWebhookHandlerPanicReleasesClaim(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var panicked atomic.Bool
	var calls atomic.Int32
	fn := func(context.Context, *Event) error {
		calls.Add(1)
		if !panicked.Swap(true) {
			panic("receiver bug")
		}
		return nil
	}
	h := newHandler(t, testSecret, fn, WithWebhookClock(clk.Now))
	body := eventBody("evt_panic", testStart)
	sig := Sign(body, testSecret)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic not passed on")
			}
		}()
		deliver(t, h, body, sig)
	}()
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK || calls.Load() != 2 {
		t.Errorf("retry after panic: status %d, calls %d", w.Code, calls.Load())
	}
}

func TestWebhookHandlerMisconfigured(t *testing.T) {
	t.Parallel()
	var rc eventRecorder
	cases := []struct {
		name   string
		secret string
		fn     func(context.Context, *Event) error
		opts   []WebhookOption
		want   string
	}{
		{"empty secret", "", rc.fn, nil, "empty webhook secret"},
		{"nil fn", testSecret, nil, nil, "nil function"},
		{"empty extra secret", testSecret, rc.fn, []WebhookOption{WithWebhookSecrets("whsec_old", "")}, "WithWebhookSecrets"},
		{"empty signature header", testSecret, rc.fn, []WebhookOption{WithSignatureHeader("")}, "WithSignatureHeader"},
		{"signature header with a space", testSecret, rc.fn, []WebhookOption{WithSignatureHeader("X Sig")}, "WithSignatureHeader"},
		{"zero body limit", testSecret, rc.fn, []WebhookOption{WithMaxBodyBytes(0)}, "WithMaxBodyBytes(0)"},
		{"negative body limit", testSecret, rc.fn, []WebhookOption{WithMaxBodyBytes(-1)}, "WithMaxBodyBytes(-1)"},
		{"negative window", testSecret, rc.fn, []WebhookOption{WithReplayWindow(-time.Second, 0)}, "WithReplayWindow"},
		{"negative future", testSecret, rc.fn, []WebhookOption{WithReplayWindow(time.Hour, -time.Second)}, "WithReplayWindow"},
		{"nil clock", testSecret, rc.fn, []WebhookOption{WithWebhookClock(nil)}, "WithWebhookClock(nil)"},
		{"zero body time-out", testSecret, rc.fn, []WebhookOption{WithWebhookBodyTimeout(0)}, "WithWebhookBodyTimeout(0s)"},
		{"negative body time-out", testSecret, rc.fn, []WebhookOption{WithWebhookBodyTimeout(-time.Second)}, "WithWebhookBodyTimeout(-1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := NewWebhookHandler(tc.secret, tc.fn, tc.opts...)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) || h != nil {
				t.Fatalf("NewWebhookHandler = %v, %v; want nil and an ErrInvalidArgument saying %q", h, err, tc.want)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}

	// A WebhookHandler not made by NewWebhookHandler refuses every
	// delivery rather than panicking, accepting or dropping it.
	body := eventBody("evt_cfg", time.Now())
	if w := deliver(t, &WebhookHandler{}, body, Sign(body, testSecret)); w.Code != http.StatusInternalServerError {
		t.Errorf("zero WebhookHandler: status %d, want 500", w.Code)
	}
	if rc.calls() != 0 {
		t.Errorf("fn called %d times", rc.calls())
	}
}

// newHandler is NewWebhookHandler for options that must be accepted.
func newHandler(tb testing.TB, secret string, fn func(context.Context, *Event) error, opts ...WebhookOption) *WebhookHandler {
	tb.Helper()
	h, err := NewWebhookHandler(secret, fn, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// stubDeduper is a Deduper whose calls can fail and are recorded.
type stubDeduper struct {
	claimErr, commitErr error
	commitCtxErr        error
	commits, releases   atomic.Int32
	tokens              []ClaimToken // passed to Commit and Release
}

func (s *stubDeduper) Claim(context.Context, string, time.Duration) (ClaimResult, ClaimToken, error) {
	if s.claimErr != nil {
		return 0, "", s.claimErr
	}
	return ClaimAcquired, "stub-token", nil
}

func (s *stubDeduper) Commit(ctx context.Context, _ string, token ClaimToken, _ time.Duration) error {
	s.commits.Add(1)
	s.commitCtxErr = ctx.Err()
	s.tokens = append(s.tokens, token)
	return s.commitErr
}

func (s *stubDeduper) Release(_ context.Context, _ string, token ClaimToken) error {
	s.releases.Add(1)
	s.tokens = append(s.tokens, token)
	return nil
}

func TestWebhookHandlerDeduperErrors(t *testing.T) {
	t.Parallel()
	body := eventBody("evt_de", testStart)
	sig := Sign(body, testSecret)
	clk := newTestClock(testStart)

	t.Run("claim fails", func(t *testing.T) {
		t.Parallel()
		var rc eventRecorder
		d := &stubDeduper{claimErr: errors.New("redis down")}
		h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now), WithDeduper(d))
		if w := deliver(t, h, body, sig); w.Code != http.StatusInternalServerError || rc.calls() != 0 {
			t.Errorf("status %d, calls %d; want 500 and no call", w.Code, rc.calls())
		}
	})
	t.Run("commit fails", func(t *testing.T) {
		t.Parallel()
		var rc eventRecorder
		d := &stubDeduper{commitErr: errors.New("redis down")}
		h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now), WithDeduper(d))
		if w := deliver(t, h, body, sig); w.Code != http.StatusOK || rc.calls() != 1 {
			t.Errorf("status %d, calls %d; want 200 (fn succeeded)", w.Code, rc.calls())
		}
	})
	t.Run("commit survives a cancelled request", func(t *testing.T) {
		t.Parallel()
		d := &stubDeduper{}
		ctx, cancel := context.WithCancel(context.Background())
		h := newHandler(t, testSecret, func(context.Context, *Event) error { cancel(); return nil },
			WithWebhookClock(clk.Now), WithDeduper(d))
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set(DefaultSignatureHeader, sig)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if d.commits.Load() != 1 || d.commitCtxErr != nil {
			t.Errorf("commits %d, ctx err %v; want 1, nil", d.commits.Load(), d.commitCtxErr)
		}
		if diff := cmp.Diff([]ClaimToken{"stub-token"}, d.tokens); diff != "" {
			t.Errorf("tokens given to Commit (-want +got):\n%s", diff)
		}
	})
	t.Run("release on failure", func(t *testing.T) {
		t.Parallel()
		d := &stubDeduper{}
		h := newHandler(t, testSecret, func(context.Context, *Event) error { return io.ErrUnexpectedEOF },
			WithWebhookClock(clk.Now), WithDeduper(d))
		if w := deliver(t, h, body, sig); w.Code != http.StatusInternalServerError || d.releases.Load() != 1 || d.commits.Load() != 0 {
			t.Errorf("status %d, releases %d, commits %d", w.Code, d.releases.Load(), d.commits.Load())
		}
		if diff := cmp.Diff([]ClaimToken{"stub-token"}, d.tokens); diff != "" {
			t.Errorf("tokens given to Release (-want +got):\n%s", diff)
		}
	})
	t.Run("nil deduper: no deduplication", func(t *testing.T) {
		t.Parallel()
		var rc eventRecorder
		h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now), WithDeduper(nil))
		deliver(t, h, body, sig)
		deliver(t, h, body, sig)
		if rc.calls() != 2 {
			t.Errorf("calls %d, want 2", rc.calls())
		}
	})
}

// TestWebhookHandlerOverHTTP runs the handler behind a real server, as
// a receiver mounts it.
func TestWebhookHandlerOverHTTP(t *testing.T) {
	t.Parallel()
	var rc eventRecorder
	mux := http.NewServeMux()
	mux.Handle("/webhooks/contextsvc", newHandler(t, testSecret, rc.fn))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := eventBody("evt_http", time.Now())
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/contextsvc", bytes.NewReader(body))
	req.Header.Set(DefaultSignatureHeader, Sign(body, testSecret))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || rc.calls() != 1 {
		t.Errorf("status %d, calls %d", resp.StatusCode, rc.calls())
	}
	resp, err = srv.Client().Get(srv.URL + "/webhooks/contextsvc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestWebhookHandlerRemembersThroughWindow: a redelivery is a duplicate
// up to the last instant the window lets the event in (exactly 27 h old),
// after which the window refuses it and the deduper has forgotten the id,
// so memory does not grow with old events.
func TestWebhookHandlerRemembersThroughWindow(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	var rc eventRecorder
	d := newDeduper(t, DefaultMemoryDeduperSize, clk.Now)
	h := newHandler(t, testSecret, rc.fn, WithWebhookClock(clk.Now), WithDeduper(d))
	body := eventBody("evt_edge_dup", testStart)
	sig := Sign(body, testSecret)
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK {
		t.Fatalf("first delivery: status %d", w.Code)
	}
	clk.Set(testStart.Add(DefaultReplayWindow))
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK || rc.calls() != 1 {
		t.Errorf("redelivery exactly %v later: status %d, fn calls %d; want 200 and 1 (a duplicate)", DefaultReplayWindow, w.Code, rc.calls())
	}
	clk.Set(testStart.Add(DefaultReplayWindow + time.Millisecond))
	if w := deliver(t, h, body, sig); w.Code != http.StatusBadRequest || rc.calls() != 1 {
		t.Errorf("redelivery after the window: status %d, fn calls %d; want 400 and 1", w.Code, rc.calls())
	}
	clk.Set(testStart.Add(DefaultReplayWindow + time.Minute))
	if n := d.Len(); n != 0 {
		t.Errorf("deduper holds %d ids a minute after the window, want 0", n)
	}
}
