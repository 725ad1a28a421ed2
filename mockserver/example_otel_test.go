package mockserver_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// With a tracer provider the mock traces every request (named by method
// and route, never an id), every event it fires and every delivery
// attempt; with a meter provider it measures them. Give it the providers
// your test or program exports to; without them nothing is traced.
func ExampleWithTracerProvider() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := metric.NewMeterProvider()
	srv, err := mockserver.Open(mockserver.WithTracerProvider(tp), mockserver.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close(context.Background())

	fmt.Println(serve(srv, "GET", "/v1/contexts/ctx_unknown", ""))
	if _, err := srv.EmitEvent(context.Background(), "", contextsvc.EventContextPublished, []byte(`{"contextId":"ctx_1"}`)); err != nil {
		log.Fatal(err)
	}
	for _, s := range exp.GetSpans() {
		fmt.Printf("%s (%s)\n", s.Name, s.SpanKind)
	}
	// Output:
	// 404
	// GET /v1/contexts/{id} (server)
	// create context.published (producer)
}
