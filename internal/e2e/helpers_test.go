package e2e_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// newClient returns a client of the test server authenticating with its
// default key (or token, when not empty). It is the second of the "two
// lines" the README shows.
func newClient(t *testing.T, ts *mockserver.TestServer, token string, opts ...contextsvc.Option) *contextsvc.Client {
	t.Helper()
	if token == "" {
		token = ts.APIKey
	}
	c, err := contextsvc.NewClient(token, append([]contextsvc.Option{contextsvc.WithBaseURL(ts.URL)}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// asContext is what the client should decode for a context the mock server
// stores: the server's Go API is the reference the wire is compared with.
func asContext(sc mockserver.StoredContext) *contextsvc.Context {
	tags := sc.Tags
	if tags == nil {
		tags = []string{}
	}
	return &contextsvc.Context{
		ID: sc.ID, Name: sc.Name, Content: sc.Content, Tags: tags,
		Version: sc.Version, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt,
	}
}

// asVersion is what the client should decode for a stored version.
func asVersion(contextID string, sv mockserver.StoredVersion) *contextsvc.Version {
	tags := sv.Tags
	if tags == nil {
		tags = []string{}
	}
	ch := sv.Changes
	if ch.SectionsModified == nil {
		ch.SectionsModified = []string{}
	}
	return &contextsvc.Version{
		ContextID: contextID, Version: sv.Version, Name: sv.Name, Content: sv.Content, Tags: tags,
		CreatedAt: sv.CreatedAt, CreatedBy: sv.CreatedBy, Changes: ch,
	}
}

// stored returns what the server stores for id, failing the test when it
// stores nothing.
func stored(t *testing.T, ts *mockserver.TestServer, id string) mockserver.StoredContext {
	t.Helper()
	sc, ok := ts.Context(id)
	if !ok {
		t.Fatalf("the mock server stores no context %s", id)
	}
	return sc
}

// eventsOf returns the server's recorded events of one type, with their data
// decoded into T.
func eventsOf[T any](t *testing.T, s *mockserver.Server, typ contextsvc.EventType) []T {
	t.Helper()
	var out []T
	for _, ev := range s.Events() {
		if ev.Type != typ {
			continue
		}
		var d T
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %s (%s): %v", ev.ID, typ, err)
		}
		out = append(out, d)
	}
	return out
}

// exchange is one attempt as the wire saw it, below the client's retries and
// limiter.
type exchange struct {
	Method, Path string
	Status       int
	RetryAfter   string
	Sent, Done   time.Time // real time
}

// recordingTransport records every attempt the client makes, so a test sees
// each status the server answered, including those the client's retries
// hide. onResponse, when set, runs after each response (e.g. to drive a fake
// clock).
type recordingTransport struct {
	base       http.RoundTripper
	onResponse func(*http.Response)
	// stampSent adds the send time to each request (sentHeader).
	stampSent bool

	mu  sync.Mutex
	log []exchange
}

func newRecordingTransport() *recordingTransport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128
	return &recordingTransport{base: t}
}

// RoundTrip implements http.RoundTripper.
func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	if rt.stampSent {
		// RoundTrip must not change the caller's request.
		req = req.Clone(req.Context())
		req.Header.Set(sentHeader, strconv.FormatInt(sent.UnixNano(), 10))
	}
	resp, err := rt.base.RoundTrip(req)
	ex := exchange{Method: req.Method, Path: req.URL.Path, Sent: sent, Done: time.Now()}
	if err == nil {
		ex.Status = resp.StatusCode
		ex.RetryAfter = resp.Header.Get("Retry-After")
		if rt.onResponse != nil {
			rt.onResponse(resp)
		}
	}
	rt.mu.Lock()
	rt.log = append(rt.log, ex)
	rt.mu.Unlock()
	return resp, err
}

// exchanges returns a copy of the log.
func (rt *recordingTransport) exchanges() []exchange {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.log)
}

// statuses counts the answers by status.
func (rt *recordingTransport) statuses() map[int]int {
	m := map[int]int{}
	for _, ex := range rt.exchanges() {
		m[ex.Status]++
	}
	return m
}

// httpClient returns an *http.Client sending through rt, for
// contextsvc.WithHTTPClient.
func (rt *recordingTransport) httpClient() *http.Client { return &http.Client{Transport: rt} }

// enterprisePlan is contextsvc.EnterprisePlan for limits a test knows are
// valid.
func enterprisePlan(tb testing.TB, perMinute, burst int) contextsvc.Plan {
	tb.Helper()
	p, err := contextsvc.EnterprisePlan(perMinute, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
