package contextsvcotel_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is an SDK tracer provider exporting into memory and a meter
// provider read by hand: what a test inspects.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T, opts ...sdktrace.TracerProviderOption) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(tel.spans)}, opts...)...)
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// spanView is what a test compares of a span: its parent by name (the
// span's own name for a parent outside the recorded spans: "remote" or
// "caller" as the test sets), attributes as text, events with their offset
// from the span's start.
type spanView struct {
	Name   string
	Kind   trace.SpanKind
	Parent string
	Attrs  map[string]string
	Events []string
	Links  int
	Status string
}

// views returns the ended spans in the order they started, and checks that
// they all share one trace id.
func (tel *telemetry) views(t *testing.T, outside map[trace.SpanID]string) []spanView {
	t.Helper()
	stubs := tel.spans.GetSpans()
	// By start time, a parent before its children when they start together
	// (as on a fake clock).
	parents := map[trace.SpanID]trace.SpanID{}
	for _, s := range stubs {
		parents[s.SpanContext.SpanID()] = s.Parent.SpanID()
	}
	depth := func(id trace.SpanID) int {
		n := 0
		for p, ok := parents[id]; ok; p, ok = parents[p] {
			n++
		}
		return n
	}
	sort.SliceStable(stubs, func(i, j int) bool {
		if !stubs[i].StartTime.Equal(stubs[j].StartTime) {
			return stubs[i].StartTime.Before(stubs[j].StartTime)
		}
		return depth(stubs[i].SpanContext.SpanID()) < depth(stubs[j].SpanContext.SpanID())
	})
	names := map[trace.SpanID]string{}
	for id, n := range outside {
		names[id] = n
	}
	for _, s := range stubs {
		names[s.SpanContext.SpanID()] = s.Name
	}
	var out []spanView
	for _, s := range stubs {
		if s.SpanContext.TraceID() != stubs[0].SpanContext.TraceID() {
			t.Errorf("span %q is in trace %s, the first in %s", s.Name, s.SpanContext.TraceID(), stubs[0].SpanContext.TraceID())
		}
		v := spanView{Name: s.Name, Kind: s.SpanKind, Attrs: attrText(s.Attributes), Links: len(s.Links)}
		if s.Parent.IsValid() {
			v.Parent = names[s.Parent.SpanID()]
			if v.Parent == "" {
				v.Parent = "unknown " + s.Parent.SpanID().String()
			}
		}
		for _, e := range s.Events {
			v.Events = append(v.Events, fmt.Sprintf("%s +%v %s", e.Name, e.Time.Sub(s.StartTime), attrLine(e.Attributes)))
		}
		v.Status = s.Status.Code.String()
		if s.Status.Description != "" {
			v.Status += ": " + s.Status.Description
		}
		out = append(out, v)
	}
	return out
}

func attrText(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func attrLine(kvs []attribute.KeyValue) string {
	parts := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// point is one data point of a metric, with its attributes as one line.
type point struct {
	Attrs string
	Count uint64  // histograms
	Sum   float64 // histograms: the sum; counters: the value
}

// metrics collects every metric: name to its points, sorted by attributes.
func (tel *telemetry) metrics(t *testing.T) map[string][]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string][]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var pts []point
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					pts = append(pts, point{Attrs: attrLine(dp.Attributes.ToSlice()), Count: dp.Count, Sum: round(dp.Sum)})
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					pts = append(pts, point{Attrs: attrLine(dp.Attributes.ToSlice()), Sum: float64(dp.Value)})
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i].Attrs < pts[j].Attrs })
			out[m.Name] = pts
		}
	}
	return out
}

// round keeps a sum of durations to the microsecond, so sums of exact
// durations on a fake clock compare equal.
func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// with returns base's attributes plus the given key, value pairs.
func with(base map[string]string, kv ...string) map[string]string {
	m := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// startSampler samples every span and keeps what a sampler is shown as
// each starts: its name and attributes as text, in the order they started.
type startSampler struct {
	mu     sync.Mutex
	starts []spanStart
}

type spanStart struct {
	Name  string
	Attrs map[string]string
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	attrs := map[string]string{}
	for _, kv := range p.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	s.mu.Lock()
	s.starts = append(s.starts, spanStart{p.Name, attrs})
	s.mu.Unlock()
	return sdktrace.AlwaysSample().ShouldSample(p)
}

func (s *startSampler) Description() string { return "startSampler" }

func (s *startSampler) seen() []spanStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.starts)
}
