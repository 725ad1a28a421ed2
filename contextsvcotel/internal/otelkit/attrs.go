package otelkit

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// MaxAttrs is the most attributes a buffer from [Attrs] holds.
const MaxAttrs = 16

// attrBuffers keeps the buffers Attrs lends.
var attrBuffers = sync.Pool{New: func() any { return new([MaxAttrs]attribute.KeyValue) }}

// Attrs lends a buffer to build a span's attribute list in: a span copies
// the list it is given to SetAttributes (the OpenTelemetry SDK appends it
// to its own; a variadic argument is the caller's), so the list needs no
// allocation of its own, where a local array passed to SetAttributes would
// escape to the heap. Give it back with [Release] once the span has it.
// A list given at a span's start (trace.WithAttributes) may be lent too:
// trace.NewSpanStartConfig, the only reader of start options, copies it
// into the span's configuration before Start returns.
func Attrs() *[MaxAttrs]attribute.KeyValue {
	return attrBuffers.Get().(*[MaxAttrs]attribute.KeyValue)
}

// Release gives back a buffer from [Attrs], cleared so that it holds on
// to nothing.
func Release(b *[MaxAttrs]attribute.KeyValue) {
	clear(b[:])
	attrBuffers.Put(b)
}

// Start is a lent list of a span's start attributes with the start option
// over it. trace.WithAttributes boxes its list in an interface, an
// allocation at every start; a Start makes that option once for each
// length its list takes and keeps it, so a span that starts with the
// attributes known before its work costs only the copies the SDK makes.
type Start struct {
	kv   [MaxAttrs]attribute.KeyValue
	n    int
	opts [MaxAttrs + 1]trace.SpanStartOption
}

// starts keeps the lists StartAttrs lends.
var starts = sync.Pool{New: func() any { return new(Start) }}

// StartAttrs lends an empty list. Give it back with [Start.Release] once
// the span has started.
func StartAttrs() *Start { return starts.Get().(*Start) }

// Add appends attributes to the list; past [MaxAttrs] the rest are
// dropped.
func (s *Start) Add(kv ...attribute.KeyValue) {
	s.n += copy(s.kv[s.n:], kv)
}

// Option returns the start option that gives a span the list's
// attributes. It reads the list when the span starts (trace.NewSpanStartConfig
// copies it there), so it is used at once, before Release. A tracer reads
// its options through trace.NewSpanStartConfig (their methods are the trace
// package's own) and, being handed them for one Start, reads them in it; one
// that kept the options to read after Start returned would find the list
// cleared or reused.
func (s *Start) Option() trace.SpanStartOption {
	if s.opts[s.n] == nil {
		s.opts[s.n] = trace.WithAttributes(s.kv[:s.n]...)
	}
	return s.opts[s.n]
}

// Release gives the list back, cleared so that it holds on to nothing.
func (s *Start) Release() {
	clear(s.kv[:s.n])
	s.n = 0
	starts.Put(s)
}
