package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// benchServer returns a server holding n contexts of one account (every
// tenth tagged "ten", all tagged "all") and its token.
func benchServer(b *testing.B, n int) *Server {
	b.Helper()
	// Out of the validation, which would weigh more than the server.
	s := unvalidated(New(WithKey(Key{Token: "bench", Plan: PlanUnlimited})))
	for i := range n {
		tags := `["all"]`
		if i%10 == 0 {
			tags = `["all","ten"]`
		}
		req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(fmt.Sprintf(`{"name":"ctx %d","content":"# Title\n\nSome words here.","tags":%s}`, i, tags)))
		req.Header.Set("Authorization", "Bearer bench")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 201 {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	return s
}

// BenchmarkListPage compares page 1 with page 500 (limit 20) of 10,000
// contexts, unfiltered and filtered by two tags: the cost of a page must
// not grow with its depth.
func BenchmarkListPage(b *testing.B) {
	s := benchServer(b, 10_000)
	for _, bc := range []struct {
		name  string
		after uint64
		query string
	}{
		{"page=1", 0, "limit=20"},
		{"page=500", 9980, "limit=20"},
		{"tags/page=1", 0, "limit=20&tag=ten&tag=all"},
		{"tags/page=50", 9800, "limit=20&tag=ten&tag=all"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := bc.query
			if bc.after > 0 {
				scope := httpapi.ListScope(s.DefaultKey().Account)
				if strings.Contains(q, "tag=") {
					scope = httpapi.ListScope(s.DefaultKey().Account, "all", "ten")
				}
				q += "&cursor=" + url.QueryEscape(s.svc.Cursors.Encode(httpapi.CursorContexts, bc.after, scope))
			}
			req := httptest.NewRequest("GET", "/v1/contexts?"+q, nil)
			req.Header.Set("Authorization", "Bearer bench")
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"hasMore"`) {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// bareJSON is the bare handler's answer: a fixed 300-byte JSON body.
var bareJSON = func() []byte {
	b := []byte(`{"id":"ctx_aaaaaaaaaaaaaaaaaaaaaaaa","name":"Bare handler","content":"`)
	tail := []byte(`","tags":["bench"],"version":1,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:51:00.123Z"}`)
	for len(b)+len(tail) < 300 {
		b = append(b, 'x')
	}
	return append(b, tail...)
}()

func bareHandler() http.Handler {
	mux := http.NewServeMux()
	h := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(bareJSON)
		}
	}
	mux.Handle("GET /v1/contexts/{id}", h(200))
	mux.Handle("POST /v1/contexts", h(201))
	return mux
}

// BenchmarkServeGET measures the mock's own cost of a getContext (no
// network): authentication, routing, the store read and the write.
func BenchmarkServeGET(b *testing.B) {
	s := benchServer(b, 1)
	id := s.Snapshot().Contexts[0].ID
	req := httptest.NewRequest("GET", "/v1/contexts/"+id, nil)
	req.Header.Set("Authorization", "Bearer bench")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
	}
}

// BenchmarkLoopback is the load generator: 50 concurrent clients over
// loopback HTTP/1.1 keep-alive connections, against a bare net/http
// handler answering a fixed 300-byte JSON and against the mock server, on
// the same route. The two alternate in 100 ms windows so that both see the
// same machine noise (other processes share these cores); each iteration
// is one pair of windows. It reports both rates and their ratio.
func BenchmarkLoopback(b *testing.B) {
	if len(bareJSON) != 300 {
		b.Fatalf("bare body is %d bytes", len(bareJSON))
	}
	mock := benchServer(b, 1)
	id := mock.Snapshot().Contexts[0].ID
	const conns = 50
	type target struct {
		hs     *httptest.Server
		client *http.Client
		n      int64
		d      time.Duration
	}
	var targets [2]*target
	for i, h := range []http.Handler{bareHandler(), mock} {
		tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
		targets[i] = &target{hs: httptest.NewServer(h), client: &http.Client{Transport: tr}}
		defer targets[i].hs.Close()
		defer tr.CloseIdleConnections()
	}
	for _, op := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"GET", "GET", "/v1/contexts/" + id, "", 200},
		{"POST", "POST", "/v1/contexts", `{"name":"Load test","content":"# Title\n\nSome words here.","tags":["load"]}`, 201},
	} {
		b.Run(op.name, func(b *testing.B) {
			window := func(t *target) {
				var count atomic.Int64
				var wg sync.WaitGroup
				start := time.Now()
				deadline := start.Add(100 * time.Millisecond)
				for range conns {
					wg.Go(func() {
						for time.Now().Before(deadline) {
							var body io.Reader
							if op.body != "" {
								body = strings.NewReader(op.body)
							}
							req, _ := http.NewRequest(op.method, t.hs.URL+op.path, body)
							req.Header.Set("Authorization", "Bearer bench")
							res, err := t.client.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							_, _ = io.Copy(io.Discard, res.Body)
							res.Body.Close()
							if res.StatusCode != op.status {
								b.Errorf("status %d", res.StatusCode)
								return
							}
							count.Add(1)
						}
					})
				}
				wg.Wait()
				t.n += count.Load()
				t.d += time.Since(start)
			}
			// Warm both: connections open, caches hot.
			window(targets[0])
			window(targets[1])
			for _, t := range targets {
				t.n, t.d = 0, 0
			}
			for b.Loop() {
				window(targets[0])
				window(targets[1])
			}
			bare := float64(targets[0].n) / targets[0].d.Seconds()
			mk := float64(targets[1].n) / targets[1].d.Seconds()
			b.ReportMetric(bare, "bare-req/s")
			b.ReportMetric(mk, "mock-req/s")
			b.ReportMetric(mk/bare, "mock/bare")
		})
	}
}

// BenchmarkServePOST measures the mock's own cost of a createContext (no
// network): decoding, validation, the Markdown sections and word count of
// version 1, the store write and two events.
func BenchmarkServePOST(b *testing.B) {
	s := benchServer(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(`{"name":"Load test","content":"# Title\n\nSome words here.","tags":["load"]}`))
		req.Header.Set("Authorization", "Bearer bench")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
	}
}

// BenchmarkAdminListPage compares the first page of the admin event and
// delivery lists with a page at the end of 10,000 kept ones: like the /v1
// lists, a page starts with a binary search, so depth must cost nothing.
func BenchmarkAdminListPage(b *testing.B) {
	s := unvalidated(New(WithClock(NewFakeClock(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)))))
	// Closed, the engine keeps the deliveries pending and sends nothing.
	_ = s.Close(context.Background())
	hook := httptest.NewRequest("POST", "/v1/webhooks", strings.NewReader(`{"url":"https://hooks.example.com/x","events":["team.member.added"],"secret":"s"}`))
	hook.Header.Set("Authorization", "Bearer "+s.DefaultKey().Token)
	s.ServeHTTP(httptest.NewRecorder(), hook)
	for range 10_000 {
		if _, err := s.EmitEvent(context.Background(), "", "team.member.added", json.RawMessage(`{"teamId":"team_1","userId":"user_1","role":"editor"}`)); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name, path string
		kind       byte
		scope      string // the unfiltered list's (its filters, all empty)
		after      uint64
	}{
		{"events/page=1", "/_mock/events", httpapi.CursorEvents, httpapi.ListScope("", ""), 0},
		{"events/page=500", "/_mock/events", httpapi.CursorEvents, httpapi.ListScope("", ""), 9980},
		{"deliveries/page=1", "/_mock/deliveries", httpapi.CursorDeliveries, httpapi.ListScope("", "", "", "", ""), 0},
		{"deliveries/page=500", "/_mock/deliveries", httpapi.CursorDeliveries, httpapi.ListScope("", "", "", "", ""), 9980},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := "?limit=20"
			if bc.after > 0 {
				q += "&cursor=" + url.QueryEscape(s.svc.Cursors.Encode(bc.kind, bc.after, bc.scope))
			}
			req := httptest.NewRequest("GET", bc.path+q, nil)
			req.Host = "127.0.0.1" // the admin routes refuse httptest's example.com
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != 200 || strings.Count(rec.Body.String(), `"id":`) < 20 {
					b.Fatalf("%d %.200s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// TestServeGETAllocations holds the mock's own allocations for a GET of a
// context (its request id, the writer that tracks the answer, the route,
// the key, the store read and the answer) to what they are, counted
// beside the bare handler's through the same recorder: a change that adds
// one to every request shows here before it shows in BenchmarkLoopback.
func TestServeGETAllocations(t *testing.T) {
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	s := unvalidated(New(WithKey(Key{Token: "bench", Plan: PlanUnlimited})))
	id := createDirect(s, `{"name":"Doc","content":"# Title\n\nSome words here."}`)
	get := func(h http.Handler) func() {
		req := httptest.NewRequest("GET", "/v1/contexts/"+id, nil)
		req.Header.Set("Authorization", "Bearer bench")
		return func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	}
	mock, bare := testing.AllocsPerRun(200, get(s)), testing.AllocsPerRun(200, get(bareHandler()))
	// The request id's text and its header value, and the tracking writer,
	// less the Content-Type value every answer shares (the bare handler
	// makes its own).
	const budget = 1
	if mock-bare > budget {
		t.Errorf("a GET allocates %v times, the bare handler %v: %v of the mock's own, want at most %d", mock, bare, mock-bare, budget)
	}
}
