package contextsvc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// benchContext is what the server answers: a context of typical size.
const benchContext = `{"id":"ctx_0123456789abcdefghij","name":"Runbook","content":"# Deploy\n\nRun the pipeline, then check the dashboards.\n\n## Rollback\n\nRevert the release tag.","tags":["ops","deploy"],"version":7,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:52:00.456Z"}`

func benchServer(b *testing.B) *httptest.Server {
	body := []byte(benchContext)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["X-Request-Id"] = []string{"req_bench"}
		h["X-Ratelimit-Limit"] = []string{"1000"}
		h["X-Ratelimit-Remaining"] = []string{"99"}
		h["X-Ratelimit-Reset"] = []string{"0"}
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkContextsGet compares Contexts.Get through the client with the
// same request made with plain net/http and encoding/json, against the same
// local server, in the same run. The two sub-benchmarks run one after the
// other each time, so repeated runs (-count) give paired figures.
func BenchmarkContextsGet(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()

	b.Run("plain", func(b *testing.B) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		hc := &http.Client{Transport: t}
		url := srv.URL + "/v1/contexts/ctx_0123456789abcdefghij"
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer sk_bench")
			req.Header.Set("User-Agent", "bench")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var c contextsvc.Context
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if c.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	})

	// plain-readall decodes the way the client does (whole body, then
	// json.Unmarshal), to separate the cost of the client's layers from the
	// choice of decoder.
	b.Run("plain-readall", func(b *testing.B) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		hc := &http.Client{Transport: t}
		url := srv.URL + "/v1/contexts/ctx_0123456789abcdefghij"
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer sk_bench")
			req.Header.Set("User-Agent", "bench")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
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
			c, err := client.Contexts.Get(ctx, "ctx_0123456789abcdefghij")
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
			c, err := client.Contexts.Get(ctx, "ctx_0123456789abcdefghij",
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
