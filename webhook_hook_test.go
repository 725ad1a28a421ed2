package contextsvc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// hookRecorder is a DeliveryHook that keeps every result and marks the
// context it hands on.
type hookRecorder struct {
	mu      sync.Mutex
	results []DeliveryResult
}

type hookMark struct{}

func (hr *hookRecorder) hook(r *http.Request) (context.Context, func(DeliveryResult)) {
	return context.WithValue(r.Context(), hookMark{}, "hooked"), func(res DeliveryResult) {
		hr.mu.Lock()
		hr.results = append(hr.results, res)
		hr.mu.Unlock()
	}
}

func (hr *hookRecorder) last(t *testing.T) DeliveryResult {
	t.Helper()
	hr.mu.Lock()
	defer hr.mu.Unlock()
	if len(hr.results) == 0 {
		t.Fatal("the hook's end was never called")
	}
	return hr.results[len(hr.results)-1]
}

// busyDeduper answers every claim as held by another attempt.
type busyDeduper struct{ stubDeduper }

func (*busyDeduper) Claim(context.Context, string, time.Duration) (ClaimResult, ClaimToken, error) {
	return ClaimBusy, "", nil
}

type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestDeliveryHook: the hook hears of every request with its outcome, the
// status answered, the verified event, the delivery headers (only when
// well formed) and the cause; the function runs with the hook's context.
func TestDeliveryHook(t *testing.T) {
	t.Parallel()
	body := eventBody("evt_hook", testStart)
	good := Sign(body, testSecret)
	old := eventBody("evt_old", testStart.Add(-48*time.Hour))
	malformed := []byte(`{"id":"evt_m"}`)
	delivery := map[string]string{"X-Service-Delivery": "dlv_01J9", "X-Service-Delivery-Attempt": "3"}
	fnErr := errors.New("receiver database down")
	tests := []struct {
		name       string
		method     string
		body       io.Reader
		sig        string
		headers    map[string]string
		opts       []WebhookOption
		fn         func(context.Context, *Event) error
		twice      bool // deliver once before the request checked
		want       DeliveryResult
		wantEvent  bool
		wantErr    error // errors.Is the result's Err; nil: Err must be nil
		wantCalled bool
	}{
		{name: "handled", body: bytes.NewReader(body), sig: good, headers: delivery,
			want: DeliveryResult{Outcome: DeliveryHandled, StatusCode: 200, DeliveryID: "dlv_01J9", Attempt: 3}, wantEvent: true, wantCalled: true},
		{name: "duplicate", body: bytes.NewReader(body), sig: good, twice: true,
			want: DeliveryResult{Outcome: DeliveryDuplicate, StatusCode: 200}, wantEvent: true},
		{name: "busy", body: bytes.NewReader(body), sig: good, opts: []WebhookOption{WithDeduper(&busyDeduper{})},
			want: DeliveryResult{Outcome: DeliveryBusy, StatusCode: 409}, wantEvent: true},
		{name: "no signature", body: bytes.NewReader(body), headers: delivery,
			want: DeliveryResult{Outcome: DeliveryBadSignature, StatusCode: 401, DeliveryID: "dlv_01J9", Attempt: 3}, wantErr: ErrMissingSignature},
		{name: "wrong signature", body: bytes.NewReader(body), sig: Sign(body, "whsec_other"),
			want: DeliveryResult{Outcome: DeliveryBadSignature, StatusCode: 401}, wantErr: ErrSignatureMismatch},
		{name: "malformed", body: bytes.NewReader(malformed), sig: Sign(malformed, testSecret),
			want: DeliveryResult{Outcome: DeliveryMalformed, StatusCode: 400}, wantErr: ErrMalformedEvent},
		{name: "outside the window", body: bytes.NewReader(old), sig: Sign(old, testSecret),
			want: DeliveryResult{Outcome: DeliveryOutsideWindow, StatusCode: 400}, wantEvent: true, wantErr: ErrOutsideReplayWindow},
		{name: "too large", body: bytes.NewReader(body), sig: good, opts: []WebhookOption{WithMaxBodyBytes(10)},
			want: DeliveryResult{Outcome: DeliveryTooLarge, StatusCode: 413}},
		{name: "unreadable", body: failingBody{}, sig: good,
			want: DeliveryResult{Outcome: DeliveryUnreadable, StatusCode: 400}, wantErr: io.ErrUnexpectedEOF},
		{name: "handler error", body: bytes.NewReader(body), sig: good, fn: func(context.Context, *Event) error { return fnErr },
			want: DeliveryResult{Outcome: DeliveryHandlerError, StatusCode: 500}, wantEvent: true, wantErr: fnErr, wantCalled: true},
		{name: "deduper error", body: bytes.NewReader(body), sig: good, opts: []WebhookOption{WithDeduper(&stubDeduper{claimErr: errDedupeDown})},
			want: DeliveryResult{Outcome: DeliveryDeduperError, StatusCode: 500}, wantEvent: true, wantErr: errDedupeDown},
		{name: "not a POST", method: http.MethodGet, body: http.NoBody,
			want: DeliveryResult{Outcome: DeliveryMethodNotAllowed, StatusCode: 405}},
		{name: "headers named after the signature header", body: bytes.NewReader(body), sig: good,
			headers: map[string]string{"X-Acme-Delivery": "dlv_acme", "X-Acme-Delivery-Attempt": "6", "X-Service-Delivery": "dlv_other"},
			opts:    []WebhookOption{WithSignatureHeader("x-acme-signature")},
			want:    DeliveryResult{Outcome: DeliveryHandled, StatusCode: 200, DeliveryID: "dlv_acme", Attempt: 6}, wantEvent: true, wantCalled: true},
		{name: "malformed delivery headers are left out", body: bytes.NewReader(body), sig: good,
			headers: map[string]string{"X-Service-Delivery": "dlv_1 <script>", "X-Service-Delivery-Attempt": "+3"},
			want:    DeliveryResult{Outcome: DeliveryHandled, StatusCode: 200}, wantEvent: true, wantCalled: true},
		{name: "an overlong delivery id is left out", body: bytes.NewReader(body), sig: good,
			headers: map[string]string{"X-Service-Delivery": "dlv_" + strings.Repeat("a", 125), "X-Service-Delivery-Attempt": "0"},
			want:    DeliveryResult{Outcome: DeliveryHandled, StatusCode: 200}, wantEvent: true, wantCalled: true},
		{name: "an overlong attempt number is left out", body: bytes.NewReader(body), sig: good,
			headers: map[string]string{"X-Service-Delivery": "dlv_" + strings.Repeat("a", 124), "X-Service-Delivery-Attempt": "1234567890"},
			want:    DeliveryResult{Outcome: DeliveryHandled, StatusCode: 200, DeliveryID: "dlv_" + strings.Repeat("a", 124)}, wantEvent: true, wantCalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hr hookRecorder
			var sawCtx any
			called := false
			fn := tt.fn
			if fn == nil {
				fn = func(context.Context, *Event) error { return nil }
			}
			wrapped := func(ctx context.Context, ev *Event) error {
				called, sawCtx = true, ctx.Value(hookMark{})
				return fn(ctx, ev)
			}
			clk := newTestClock(testStart)
			opts := append([]WebhookOption{WithWebhookClock(clk.Now), WithDeliveryHook(hr.hook)}, tt.opts...)
			h, err := NewWebhookHandler(testSecret, wrapped, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if tt.twice {
				deliver(t, h, body, good)
				called = false
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			r := httptest.NewRequest(method, "/webhooks", tt.body)
			if tt.sig != "" {
				r.Header.Set(DefaultSignatureHeader, tt.sig)
				r.Header.Set("X-Acme-Signature", tt.sig)
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got := hr.last(t)
			if w.Code != got.StatusCode {
				t.Errorf("answered %d, the hook was told %d", w.Code, got.StatusCode)
			}
			if (got.Event != nil) != tt.wantEvent {
				t.Errorf("Event = %v, want one: %v", got.Event, tt.wantEvent)
			}
			if got.Event != nil && got.Event.Type != EventContextUpdated {
				t.Errorf("Event.Type = %q", got.Event.Type)
			}
			if (tt.wantErr == nil) != (got.Err == nil) || (tt.wantErr != nil && !errors.Is(got.Err, tt.wantErr)) {
				t.Errorf("Err = %v, want %v", got.Err, tt.wantErr)
			}
			got.Event, got.Err = nil, nil
			if got != tt.want {
				t.Errorf("result %+v, want %+v", got, tt.want)
			}
			if called != tt.wantCalled || (called && sawCtx != "hooked") {
				t.Errorf("fn called %v with the hook's context %v, want called %v", called, sawCtx, tt.wantCalled)
			}
		})
	}
}

var errDedupeDown = errors.New("dedupe store down")

// TestDeliveryHookPanic: when the function panics, the hook still hears of
// the request, as what happened (a panic, with the event being handled, and
// no status, since none was sent), and the panic goes on to net/http.
func TestDeliveryHookPanic(t *testing.T) {
	t.Parallel()
	var hr hookRecorder
	h, err := NewWebhookHandler(testSecret, func(context.Context, *Event) error { panic("receiver bug") },
		WithWebhookClock(newTestClock(testStart).Now), WithDeliveryHook(hr.hook))
	if err != nil {
		t.Fatal(err)
	}
	body := eventBody("evt_panic_hook", testStart)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic not passed on")
			}
		}()
		deliver(t, h, body, Sign(body, testSecret))
	}()
	got := hr.last(t)
	if got.Outcome != DeliveryPanicked || got.StatusCode != 0 || !errors.Is(got.Err, errDeliveryPanicked) {
		t.Errorf("result %+v, want a panic with no status", got)
	}
	if got.Event == nil || got.Event.ID != "evt_panic_hook" {
		t.Errorf("Event = %+v, want the event being handled", got.Event)
	}
}

// TestDeliveryHookPanicOverHTTP: when the function panics, the sender gets
// no answer (net/http closes the connection), and the hook says so: a
// panic, no status.
func TestDeliveryHookPanicOverHTTP(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var hr hookRecorder
		// ErrAbortHandler: net/http closes the connection without logging.
		h := newHandler(t, testSecret, func(context.Context, *Event) error { panic(http.ErrAbortHandler) }, WithDeliveryHook(hr.hook))
		_, client := servePipe(t, h)
		body := eventBody("evt_panic_http", time.Now())
		req, _ := http.NewRequest(http.MethodPost, pipeBase, bytes.NewReader(body))
		req.Header.Set(DefaultSignatureHeader, Sign(body, testSecret))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("the sender got an answer, %d", resp.StatusCode)
		}
		got := hr.last(t)
		if got.Outcome != DeliveryPanicked || got.StatusCode != 0 || got.Event == nil || got.Event.ID != "evt_panic_http" {
			t.Errorf("hook heard %+v, want a panic, no status, the event", got)
		}
	})
}
