package otelkit

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestCache: past MaxCached keys, values are built and not kept.
func TestCache(t *testing.T) {
	t.Parallel()
	var c Cache[int, int]
	builds := 0
	build := func(v int) func() int { return func() int { builds++; return v * 2 } }
	for i := range MaxCached + 10 {
		if got := c.Get(i, build(i)); got != i*2 {
			t.Fatalf("Get(%d) = %d", i, got)
		}
	}
	if c.Len() != MaxCached {
		t.Errorf("%d entries kept, want %d", c.Len(), MaxCached)
	}
	builds = 0
	c.Get(1, build(1))
	c.Get(MaxCached+5, build(MaxCached+5))
	if builds != 1 {
		t.Errorf("%d builds for a kept key and one past the bound, want 1", builds)
	}
}

// TestHeaderCarrier: the W3C propagator injects and extracts through it as
// through propagation.HeaderCarrier.
func TestHeaderCarrier(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	ours, theirs := http.Header{}, http.Header{}
	prop.Inject(ctx, HeaderCarrier(ours))
	prop.Inject(ctx, propagation.HeaderCarrier(theirs))
	if ours.Get("Traceparent") == "" || ours.Get("Traceparent") != theirs.Get("Traceparent") {
		t.Errorf("injected %q, propagation.HeaderCarrier %q", ours, theirs)
	}
	if got := trace.SpanContextFromContext(prop.Extract(context.Background(), HeaderCarrier(ours))); !got.Equal(sc.WithRemote(true)) {
		t.Errorf("extracted %v, want %v", got, sc)
	}
	h := HeaderCarrier{"X-Custom": {"v"}}
	if h.Get("x-custom") != "v" || h.Get("traceparent") != "" || len(h.Keys()) != 1 {
		t.Errorf("Get/Keys on %v", h)
	}
}

// TestAttrs: a buffer comes back cleared.
func TestAttrs(t *testing.T) {
	t.Parallel()
	b := Attrs()
	attrs := append(b[:0], attribute.String("k", "v"))
	if len(attrs) != 1 || &attrs[0] != &b[0] {
		t.Fatalf("the list is not built in the buffer")
	}
	Release(b)
	if b[0].Valid() {
		t.Errorf("a released buffer holds %v", b[0])
	}
}

// TestStart: a span started with a Start's option has exactly the list's
// attributes, whatever lengths the list took before; the option is made
// once per length; and a released list holds nothing. Not parallel: it
// counts allocations.
func TestStart(t *testing.T) {
	a, b, c := attribute.String("a", "1"), attribute.Int("b", 2), attribute.Bool("c", true)
	s := new(Start)
	for _, tc := range [][]attribute.KeyValue{{a, b}, {a}, {a, b, c}, {}, {c, a}} {
		s.Add(tc...)
		cfg := trace.NewSpanStartConfig(s.Option())
		got := cfg.Attributes()
		if len(got) != len(tc) {
			t.Fatalf("started with %v, want %v", got, tc)
		}
		for i := range tc {
			if got[i] != tc[i] {
				t.Errorf("started with %v, want %v", got, tc)
			}
		}
		clear(s.kv[:s.n])
		s.n = 0
	}
	s.Add(a, b)
	s.Option()
	if allocs := testing.AllocsPerRun(100, func() { _ = s.Option() }); allocs != 0 {
		t.Errorf("the option of a length made before costs %v allocations, want 0", allocs)
	}
	s.Add(make([]attribute.KeyValue, MaxAttrs)...)
	if s.n != MaxAttrs {
		t.Errorf("a full list holds %d", s.n)
	}
	s.Release()
	if s.n != 0 || s.kv[0].Valid() {
		t.Errorf("a released list holds %d attributes, %v", s.n, s.kv[0])
	}
}
