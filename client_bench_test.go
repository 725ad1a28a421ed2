package contextsvc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/benchtest"
)

// BenchmarkContextsGet compares Contexts.Get through the client with the
// same request made with plain net/http and encoding/json, against the same
// local server, in the same run. The two sub-benchmarks run one after the
// other each time, so repeated runs (-count) give paired figures.
func BenchmarkContextsGet(b *testing.B) {
	srv := benchtest.Server(b)
	url := srv.URL + "/v1/contexts/" + benchtest.ContextID
	ctx := context.Background()

	b.Run("plain", func(b *testing.B) {
		benchtest.Plain(b, benchtest.Transport(), url, func(c *contextsvc.Context) bool { return c.Version == 7 })
	})

	// plain-readall decodes the way the client does (whole body, then
	// json.Unmarshal), to separate the cost of the client's layers from the
	// choice of decoder.
	b.Run("plain-readall", func(b *testing.B) {
		hc := &http.Client{Transport: benchtest.Transport()}
		b.ReportAllocs()
		for b.Loop() {
			resp := benchtest.Get(b, hc, url)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var c contextsvc.Context
			if err := json.Unmarshal(body, &c); err != nil {
				b.Fatal(err)
			}
			if c.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	})

	b.Run("client", func(b *testing.B) {
		client, err := contextsvc.NewClient("sk_bench", contextsvc.WithBaseURL(srv.URL+"/v1"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			c, err := client.Contexts.Get(ctx, benchtest.ContextID)
			if err != nil {
				b.Fatal(err)
			}
			if c.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	})

	// client-options is the same call with the per-call options a caller
	// typically gives (its Response and a tracing header), built per call.
	b.Run("client-options", func(b *testing.B) {
		client, err := contextsvc.NewClient("sk_bench", contextsvc.WithBaseURL(srv.URL+"/v1"))
		if err != nil {
			b.Fatal(err)
		}
		var resp contextsvc.Response
		b.ReportAllocs()
		for b.Loop() {
			c, err := client.Contexts.Get(ctx, benchtest.ContextID,
				contextsvc.WithResponseInto(&resp), contextsvc.WithRequestHeader("X-Trace-Id", "trace-1"))
			if err != nil {
				b.Fatal(err)
			}
			if c.Version != 7 || resp.RequestID != "req_bench" {
				b.Fatal("bad decode")
			}
		}
	})
}
