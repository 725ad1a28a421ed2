package otelkit

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
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
