package contextsvcotel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

const webhookSecret = "whsec_otel_test_secret"

var deliveredAt = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func eventBody(id string, typ contextsvc.EventType) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":%q,"timestamp":"2026-11-21T12:00:00.000Z","data":{"contextId":"ctx_1","name":"Plan","version":2,"updatedBy":"user_1","changes":{"sections_modified":["Intro"],"word_count_delta":3}}}`, id, typ)
}

// The delivery attempt that sent a delivery (its traceparent), and a
// server span of another trace that a receiver's own middleware may have
// started.
var (
	attemptSpan = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	otherServerSpan = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01},
		SpanID:     trace.SpanID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08},
		TraceFlags: trace.FlagsSampled,
	})
	sameTraceServerSpan = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    attemptSpan.TraceID(),
		SpanID:     trace.SpanID{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11},
		TraceFlags: trace.FlagsSampled,
	})
)

func traceparent(sc trace.SpanContext) string {
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
}

// TestWebhookTelemetry delivers requests to an instrumented handler and
// checks the delivery's span: name, kind, parent (the delivery attempt
// when it sent a traceparent), links, attributes and status, and that the
// receiver's function runs with it.
func TestWebhookTelemetry(t *testing.T) {
	t.Parallel()
	body := eventBody("evt_1", contextsvc.EventContextUpdated)
	unknown := eventBody("evt_2", "context.archived")
	messaging := map[string]string{"messaging.system": "contextsvc", "messaging.operation.name": "process", "messaging.operation.type": "process"}
	handled := with(messaging, "messaging.message.id", "evt_1", "contextsvc.event.type", "context.updated",
		"contextsvc.delivery.id", "dlv_1", "contextsvc.delivery.attempt", "2",
		"contextsvc.webhook.outcome", "handled", "http.response.status_code", "200")
	tests := []struct {
		name    string
		body    []byte
		sig     string
		tp      string            // traceparent header
		server  trace.SpanContext // a span already in the request's context
		fnErr   error
		panics  bool // the function panics: nothing is answered
		want    spanView
		fnSpans bool // the function saw the delivery's span
	}{
		{
			name: "continues the delivery attempt's trace",
			body: body, sig: contextsvc.Sign(body, webhookSecret), tp: traceparent(attemptSpan),
			want:    spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Parent: "delivery attempt", Attrs: handled, Status: "Unset"},
			fnSpans: true,
		},
		{
			name: "a server span of another trace stays the parent; the attempt is a link",
			body: body, sig: contextsvc.Sign(body, webhookSecret), tp: traceparent(attemptSpan), server: otherServerSpan,
			want:    spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Parent: "server", Attrs: handled, Links: 1, Status: "Unset"},
			fnSpans: true,
		},
		{
			name: "a server span of the same trace stays the parent, with no link",
			body: body, sig: contextsvc.Sign(body, webhookSecret), tp: traceparent(attemptSpan), server: sameTraceServerSpan,
			want:    spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Parent: "server", Attrs: handled, Status: "Unset"},
			fnSpans: true,
		},
		{
			name: "no traceparent: a trace of its own",
			body: body, sig: contextsvc.Sign(body, webhookSecret),
			want:    spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Attrs: handled, Status: "Unset"},
			fnSpans: true,
		},
		{
			name: "bad signature: the span is not named by anything unverified",
			body: body, sig: contextsvc.Sign(body, "whsec_forged"), tp: traceparent(attemptSpan),
			want: spanView{Name: "process", Kind: trace.SpanKindConsumer, Parent: "delivery attempt",
				Attrs: with(messaging, "contextsvc.delivery.id", "dlv_1", "contextsvc.delivery.attempt", "2",
					"contextsvc.webhook.outcome", "bad_signature", "http.response.status_code", "401", "error.type", "bad_signature"),
				Status: "Error: contextsvc: webhook signature does not match the payload"},
		},
		{
			name: "the function fails",
			body: body, sig: contextsvc.Sign(body, webhookSecret), tp: traceparent(attemptSpan), fnErr: errors.New("receiver database down"),
			want: spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Parent: "delivery attempt",
				Attrs: with(messaging, "messaging.message.id", "evt_1", "contextsvc.event.type", "context.updated",
					"contextsvc.delivery.id", "dlv_1", "contextsvc.delivery.attempt", "2",
					"contextsvc.webhook.outcome", "handler_error", "http.response.status_code", "500", "error.type", "handler_error"),
				Status: "Error: receiver database down"},
			fnSpans: true,
		},
		{
			name: "the function panics: no status, since nothing was answered",
			body: body, sig: contextsvc.Sign(body, webhookSecret), tp: traceparent(attemptSpan), panics: true,
			want: spanView{Name: "process context.updated", Kind: trace.SpanKindConsumer, Parent: "delivery attempt",
				Attrs: with(messaging, "messaging.message.id", "evt_1", "contextsvc.event.type", "context.updated",
					"contextsvc.delivery.id", "dlv_1", "contextsvc.delivery.attempt", "2",
					"contextsvc.webhook.outcome", "panicked", "error.type", "panicked"),
				Status: "Error: contextsvc: handling the delivery panicked; nothing was answered"},
			fnSpans: true,
		},
		{
			name: "an event type the SDK does not know",
			body: unknown, sig: contextsvc.Sign(unknown, webhookSecret), tp: traceparent(attemptSpan),
			want: spanView{Name: "process", Kind: trace.SpanKindConsumer, Parent: "delivery attempt",
				Attrs: with(messaging, "messaging.message.id", "evt_2", "contextsvc.event.type", "context.archived",
					"contextsvc.delivery.id", "dlv_1", "contextsvc.delivery.attempt", "2",
					"contextsvc.webhook.outcome", "handled", "http.response.status_code", "200"),
				Status: "Unset"},
			fnSpans: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tel := newTelemetry(t)
			opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithMeterProvider(tel.mp))
			if err != nil {
				t.Fatal(err)
			}
			var fnSpan trace.SpanContext
			fn := func(ctx context.Context, _ *contextsvc.Event) error {
				fnSpan = trace.SpanContextFromContext(ctx)
				if tt.panics {
					panic("receiver bug")
				}
				return tt.fnErr
			}
			h, err := contextsvc.NewWebhookHandler(webhookSecret, fn, opt, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }))
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(tt.body))
			r.Header.Set(contextsvc.DefaultSignatureHeader, tt.sig)
			r.Header.Set("X-Service-Event", "context.forged") // unsigned: never used
			r.Header.Set("X-Service-Delivery", "dlv_1")
			r.Header.Set("X-Service-Delivery-Attempt", "2")
			if tt.tp != "" {
				r.Header.Set("Traceparent", tt.tp)
			}
			if tt.server.IsValid() {
				r = r.WithContext(trace.ContextWithRemoteSpanContext(r.Context(), tt.server))
			}
			func() {
				defer func() {
					if p := recover(); (p != nil) != tt.panics {
						t.Errorf("recovered %v, want a panic: %t", p, tt.panics)
					}
				}()
				h.ServeHTTP(httptest.NewRecorder(), r)
			}()

			got := tel.views(t, map[trace.SpanID]string{attemptSpan.SpanID(): "delivery attempt", tt.server.SpanID(): "server"})
			if diff := cmp.Diff([]spanView{tt.want}, got); diff != "" {
				t.Fatalf("spans (-want +got):\n%s", diff)
			}
			span := tel.spans.GetSpans()[0]
			wantTrace := trace.TraceID{}
			switch {
			case tt.server.IsValid():
				wantTrace = tt.server.TraceID()
			case tt.tp != "":
				wantTrace = attemptSpan.TraceID()
			}
			if wantTrace.IsValid() && span.SpanContext.TraceID() != wantTrace {
				t.Errorf("trace %s, want %s", span.SpanContext.TraceID(), wantTrace)
			}
			if len(span.Links) == 1 && span.Links[0].SpanContext.SpanID() != attemptSpan.SpanID() {
				t.Errorf("link to %s, want the delivery attempt %s", span.Links[0].SpanContext.SpanID(), attemptSpan.SpanID())
			}
			if tt.fnSpans && fnSpan.SpanID() != span.SpanContext.SpanID() {
				t.Errorf("the function's context carries span %s, want the delivery's %s", fnSpan.SpanID(), span.SpanContext.SpanID())
			}
		})
	}
}

// TestWebhookMetrics: messaging.process.duration counts deliveries by
// outcome and by the event type (known types only).
func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t)
	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	failing := errors.New("receiver database down")
	fn := func(_ context.Context, ev *contextsvc.Event) error {
		if ev.ID == "evt_fails" {
			return failing
		}
		return nil
	}
	h, err := contextsvc.NewWebhookHandler(webhookSecret, fn, opt, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }))
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(body []byte, secret string) {
		r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, secret))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	ok := eventBody("evt_ok", contextsvc.EventContextCreated)
	deliver(ok, webhookSecret)
	deliver(ok, webhookSecret) // a duplicate
	deliver(eventBody("evt_fails", contextsvc.EventContextUpdated), webhookSecret)
	deliver(eventBody("evt_new", "context.archived"), webhookSecret)
	deliver(ok, "whsec_forged")
	deliver(ok, "whsec_forged")

	const base = " messaging.operation.name=process messaging.system=contextsvc"
	want := []point{
		{Attrs: "contextsvc.event.type=_OTHER contextsvc.webhook.outcome=handled" + base, Count: 1},
		{Attrs: "contextsvc.event.type=context.created contextsvc.webhook.outcome=duplicate" + base, Count: 1},
		{Attrs: "contextsvc.event.type=context.created contextsvc.webhook.outcome=handled" + base, Count: 1},
		{Attrs: "contextsvc.event.type=context.updated contextsvc.webhook.outcome=handler_error error.type=handler_error" + base, Count: 1},
		{Attrs: "contextsvc.webhook.outcome=bad_signature error.type=bad_signature" + base, Count: 2},
	}
	got := tel.metrics(t)["messaging.process.duration"]
	for i := range got {
		got[i].Sum = 0 // real time
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messaging.process.duration (-want +got):\n%s", diff)
	}
}

// TestWebhookSpanStartsWithWhatIsKnown: a sampler sees a delivery's
// messaging attributes as its span starts; what the delivery was comes
// as it ends, once verified.
func TestWebhookSpanStartsWithWhatIsKnown(t *testing.T) {
	t.Parallel()
	sampler := &startSampler{}
	tel := newTelemetry(t, sdktrace.WithSampler(sampler))
	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tel.tp))
	if err != nil {
		t.Fatal(err)
	}
	h, err := contextsvc.NewWebhookHandler(webhookSecret, func(context.Context, *contextsvc.Event) error { return nil },
		opt, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }))
	if err != nil {
		t.Fatal(err)
	}
	body := eventBody("evt_1", contextsvc.EventContextUpdated)
	r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, webhookSecret))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("answered %d: %s", w.Code, w.Body)
	}
	want := []spanStart{{"process", map[string]string{
		"messaging.system": "contextsvc", "messaging.operation.name": "process", "messaging.operation.type": "process",
	}}}
	if diff := cmp.Diff(want, sampler.seen()); diff != "" {
		t.Errorf("what the sampler saw as the span started (-want +got):\n%s", diff)
	}
}
