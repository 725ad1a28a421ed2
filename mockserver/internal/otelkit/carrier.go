package otelkit

import (
	"net/http"
	"net/textproto"

	"go.opentelemetry.io/otel/propagation"
)

// HeaderCarrier is propagation.HeaderCarrier without the allocation of
// canonicalising the W3C field names (traceparent, tracestate, baggage)
// on every injection and extraction.
type HeaderCarrier http.Header

var _ propagation.TextMapCarrier = HeaderCarrier(nil)

// Get returns the first value of a field.
func (h HeaderCarrier) Get(key string) string {
	if v := h[canonicalField(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set sets a field to one value.
func (h HeaderCarrier) Set(key, value string) { h[canonicalField(key)] = []string{value} }

// Keys lists the fields.
func (h HeaderCarrier) Keys() []string { return propagation.HeaderCarrier(h).Keys() }

// canonicalField is the canonical header name of a propagator's field,
// without allocating for those of W3C Trace Context and Baggage.
func canonicalField(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return textproto.CanonicalMIMEHeaderKey(key)
}
