// Command tracing runs the quickstart's steps with OpenTelemetry on every
// side and prints each step's trace as a waterfall:
//
//	go run ./examples/tracing
//
// The mock server runs in-process (mockserver.WithTracerProvider), a
// verifying receiver beside it (contextsvcotel.NewWebhookOption), and the
// client calls it (contextsvcotel.NewMiddleware); all three send their
// spans to one in-memory exporter. Each step is one trace: the client's
// call and its attempts, the mock's handling of each, the events the call
// fired, every delivery attempt of those events, and the receiver's
// handling of each. To show retries, the mock answers the first create
// with a 503 (the client retries it), and the receiver fails the first
// delivery of context.created (the mock retries it one minute later on
// its fake clock, which the example then advances: the retry's span is
// timed on the real clock, moments after the first). The client's call is
// an internal span named for the operation (contextsvc.contexts.create),
// with each HTTP attempt a client span under it.
//
// In a service, the exporter is an OTLP one (go.opentelemetry.io/otel/
// exporters/otlp/otlptrace/otlptracehttp) and the traces go to your
// collector; the command contextsvc-mock -otel exports the mock's.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/contextsvc/contextsvc-go/mockserver"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tracing:", err)
		os.Exit(1)
	}
}

// run runs the steps and prints their traces to w.
func run(ctx context.Context, w io.Writer) error {
	spans := tracetest.NewInMemoryExporter()
	open := newOpenSpans()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(open), sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	clock := mockserver.NewFakeClock(time.Now())
	srv, err := mockserver.Open(mockserver.WithClock(clock), mockserver.WithTracerProvider(tp),
		mockserver.WithRetrySchedule([]time.Duration{time.Minute, 5 * time.Minute}))
	if err != nil {
		return err
	}
	api, err := listen(srv)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Close(closeCtx)
		api.Close()
	}()

	// The receiver fails the first delivery of context.created, once.
	var failed atomic.Bool
	hookOpt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	secret := rand.Text()
	hook, err := contextsvc.NewWebhookHandler(secret, func(_ context.Context, ev *contextsvc.Event) error {
		if ev.Type == contextsvc.EventContextCreated && failed.CompareAndSwap(false, true) {
			return errors.New("the receiver's database is restarting")
		}
		return nil
	}, hookOpt)
	if err != nil {
		return err
	}
	receiver, err := listen(hook)
	if err != nil {
		return err
	}
	defer receiver.Close()

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	client, err := contextsvc.NewClient(srv.DefaultKey().Token, contextsvc.WithBaseURL("http://"+api.addr+"/v1"),
		contextsvc.WithMiddleware(mw), contextsvc.WithRetryWait(5*time.Millisecond, 5*time.Millisecond))
	if err != nil {
		return err
	}
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
		URL: "http://" + receiver.addr + "/webhooks", Events: contextsvc.AllEventTypes(), Secret: secret,
	}); err != nil {
		return fmt.Errorf("register webhook: %w", err)
	}
	if err := srv.AddFault(mockserver.Fault{Method: http.MethodPost, Path: "/v1/contexts", Status: http.StatusServiceUnavailable}); err != nil {
		return err
	}

	fmt.Fprintf(w, "Each step's trace: when each span started (from the trace's start), how long it took, where it falls, and what it did.\n")
	fmt.Fprintf(w, "The mock runs on a fake clock: a delivery retry it schedules a minute later on that clock is sent as soon as\n"+
		"the example advances it, so the waterfall (timed by the wall clock) shows it milliseconds after the failed attempt.\n")
	tracer := tp.Tracer("examples/tracing")
	var id string
	steps := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"1. create (the mock answers 503 first; the receiver fails the first context.created)", func(ctx context.Context) error {
			c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Tracing runbook", Content: "# Deploy\n\nPush it.\n"})
			if err == nil {
				id = c.ID
			}
			return err
		}},
		{"2. update", func(ctx context.Context) error {
			_, err := client.Contexts.Update(ctx, id, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr("# Deploy\n\nTag it, then push it.\n")})
			return err
		}},
		{"3. list", func(ctx context.Context) error {
			_, err := client.Contexts.List(ctx, nil)
			return err
		}},
		{"4. versions", func(ctx context.Context) error {
			_, err := client.Contexts.ListVersions(ctx, id, nil)
			return err
		}},
		{"5. export Markdown", func(ctx context.Context) error {
			exp, err := client.Contexts.Export(ctx, id, &contextsvc.ExportOptions{Format: contextsvc.ExportMarkdown})
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, exp.Body)
			return errors.Join(err, exp.Body.Close())
		}},
		{"6. delete", func(ctx context.Context) error {
			_, err := client.Contexts.Delete(ctx, id)
			return err
		}},
	}
	for _, st := range steps {
		sctx, root := tracer.Start(ctx, st.name)
		err := st.do(sctx)
		root.End()
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		// The deliveries the step's events got; a failed one is retried
		// a minute later on the mock's clock.
		if err := srv.WaitIdle(ctx); err != nil {
			return err
		}
		if next, ok := srv.NextAttemptAt(); ok {
			clock.Advance(next.Sub(clock.Now()))
		}
		if err := open.wait(ctx, root.SpanContext().TraceID()); err != nil {
			return err
		}
		fmt.Fprintln(w)
		printWaterfall(w, spans.GetSpans(), root.SpanContext().TraceID())
	}
	return nil
}

// printWaterfall prints the spans of one trace as an indented tree, each
// with its start (from the trace's), its duration, a bar placing it in
// the trace, and what it did.
func printWaterfall(w io.Writer, all tracetest.SpanStubs, id trace.TraceID) {
	var spans []tracetest.SpanStub
	in := map[trace.SpanID]bool{}
	for _, s := range all {
		if s.SpanContext.TraceID() == id {
			spans = append(spans, s)
			in[s.SpanContext.SpanID()] = true
		}
	}
	if len(spans) == 0 {
		return
	}
	slices.SortStableFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	start, end := spans[0].StartTime, spans[0].EndTime
	for _, s := range spans {
		if s.EndTime.After(end) {
			end = s.EndTime
		}
	}
	total := end.Sub(start)
	children := map[trace.SpanID][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID(); in[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	fmt.Fprintf(w, "trace %s  %s\n", id, ms(total))
	const width = 24
	var walk func(ss []tracetest.SpanStub, depth int)
	walk = func(ss []tracetest.SpanStub, depth int) {
		for _, s := range ss {
			from, to := 0, width
			if total > 0 {
				from = int(int64(width) * int64(s.StartTime.Sub(start)) / int64(total))
				to = int(int64(width) * int64(s.EndTime.Sub(start)) / int64(total))
			}
			to = max(to, from+1)
			to = min(to, width)
			from = min(from, to-1)
			bar := strings.Repeat(" ", from) + strings.Repeat("█", to-from) + strings.Repeat(" ", width-to)
			fmt.Fprintf(w, "%9s %9s |%s| %s%s%s\n", ms(s.StartTime.Sub(start)), ms(s.EndTime.Sub(s.StartTime)), bar,
				strings.Repeat("  ", depth), s.Name, describe(s))
			walk(children[s.SpanContext.SpanID()], depth+1)
		}
	}
	walk(roots, 0)
}

// describe says what a span did, from its kind and attributes.
func describe(s tracetest.SpanStub) string {
	attrs := map[string]string{}
	for _, kv := range s.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	var parts []string
	switch s.SpanKind {
	case trace.SpanKindInternal:
		if attrs["contextsvc.attempts"] != "" {
			parts = append(parts, "call "+attrs["contextsvc.operation"]+", "+attrs["contextsvc.attempts"]+" attempt(s)")
		}
	case trace.SpanKindClient:
		switch {
		case attrs["contextsvc.delivery.attempt"] != "":
			parts = append(parts, "delivery attempt "+attrs["contextsvc.delivery.attempt"]+" (mock → receiver)")
		default:
			n := "1"
			if r := attrs["http.request.resend_count"]; r != "" {
				n = fmt.Sprint(atoi(r) + 1)
			}
			parts = append(parts, "attempt "+n)
		}
	case trace.SpanKindServer:
		parts = append(parts, "the mock's handling")
	case trace.SpanKindProducer:
		parts = append(parts, "event "+attrs["messaging.message.id"]+", webhooks: "+attrs["contextsvc.event.deliveries"])
	case trace.SpanKindConsumer:
		parts = append(parts, "the receiver's handling: "+attrs["contextsvc.webhook.outcome"])
	}
	if v := attrs["http.response.status_code"]; v != "" {
		parts = append(parts, v)
	}
	if v := attrs["error.type"]; v != "" && v != attrs["http.response.status_code"] {
		parts = append(parts, "error "+v)
	}
	for _, e := range s.Events {
		parts = append(parts, e.Name)
	}
	if len(parts) == 0 {
		return ""
	}
	return "  · " + strings.Join(parts, ", ")
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// openSpans is a span processor that counts the spans of each trace that
// have started and not ended, so that a trace is printed whole: the
// mock's handling of a request ends just after the client has its answer.
type openSpans struct {
	mu      sync.Mutex
	open    map[trace.TraceID]int
	changed chan struct{} // closed and replaced when a span ends
}

func newOpenSpans() *openSpans {
	return &openSpans{open: map[trace.TraceID]int{}, changed: make(chan struct{})}
}

func (o *openSpans) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	o.mu.Lock()
	o.open[s.SpanContext().TraceID()]++
	o.mu.Unlock()
}

func (o *openSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	o.mu.Lock()
	o.open[s.SpanContext().TraceID()]--
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

func (o *openSpans) Shutdown(context.Context) error   { return nil }
func (o *openSpans) ForceFlush(context.Context) error { return nil }

// wait returns once every span of trace id that started has ended.
func (o *openSpans) wait(ctx context.Context, id trace.TraceID) error {
	for {
		o.mu.Lock()
		n, changed := o.open[id], o.changed
		o.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// server is an http.Server on a loopback port.
type server struct {
	addr string
	hs   *http.Server
}

// listen serves h on a free loopback port, with time-outs on every read
// and write of a connection, as a server facing the internet needs.
func listen(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
	}
	go hs.Serve(ln)
	return &server{addr: ln.Addr().String(), hs: hs}, nil
}

// Close stops the server at once: everything the example waited for has
// happened.
func (s *server) Close() { s.hs.Close() }
