package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// spec is the embedded document, loaded once for all tests.
var spec = sync.OnceValues(func() (*openapi3.T, error) {
	// The export formats kin-openapi has no decoder for are checked as
	// strings or opaque bytes.
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
	// The dashboard's files and stream are checked as strings; the
	// stream's events are checked one by one (validator_test.go).
	for _, ct := range []string{"text/javascript", "text/css", "image/svg+xml", "text/event-stream"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

var specRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := spec()
	if err != nil {
		return nil, err
	}
	// The server URL in the document is the command's default address;
	// tests run on random ports, so route on paths alone.
	d := *doc
	d.Servers = nil
	return legacy.NewRouter(&d)
})

// contractSpec is the document as internal/contract loads it, which holds
// requests to it (Spec.CheckRequest) for this package's validator as for
// the proxy.
var contractSpec = sync.OnceValues(func() (*contract.Spec, error) { return contract.LoadSpec(openAPIDocument) })

// checkRequest lists how ex's request breaks the document.
func checkRequest(ex *exchange) []contract.Mismatch {
	cs, err := contractSpec()
	if err != nil {
		return []contract.Mismatch{{Where: "document", Message: err.Error()}}
	}
	return cs.CheckRequest(&contract.Exchange{Method: ex.method, Path: ex.path, RawQuery: ex.rawQuery,
		RequestHeader: ex.reqHeader, RequestBody: ex.reqBody})
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	if _, err := specRouter(); err != nil {
		t.Fatal(err)
	}
}

// response is a received response with its body read.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

// errorOf returns the error body's type and param.
func (r *response) errorOf(t testing.TB) (typ, param string) {
	t.Helper()
	var e httpapi.ErrorBody
	r.json(t, &e)
	return e.Error.Type, e.Error.Param
}

// call describes one request of a test.
type call struct {
	method, path string
	body         string // raw body; "" for none
	key          string // bearer token; "" uses the default key; "-" sends no header
	header       map[string]string
}

// do sends c to ts over real HTTP and returns the response. The server's
// validating wrapper (validator_test.go) checks the exchange against
// openapi.yaml.
func do(t testing.TB, ts *TestServer, c call) *response {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, ts.HTTP.URL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	switch c.key {
	case "":
		req.Header.Set("Authorization", "Bearer "+ts.APIKey)
	case "-":
	default:
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		if k == "Host" {
			req.Host = v // what a browser sends for the page's name
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := ts.HTTP.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// checkEvents validates every recorded event envelope against its schema
// in the document.
func checkEvents(t testing.TB, s *Server) {
	t.Helper()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range s.Events() {
		var v any
		if err := json.Unmarshal(ev.Body, &v); err != nil {
			t.Fatalf("event %s: %v", ev.ID, err)
		}
		// The contract's table names each type's schema, for this test and
		// the conformance runner alike.
		e, _ := contract.EventOf(ev.Type)
		sch := doc.Components.Schemas[e.Schema]
		if sch == nil {
			t.Fatalf("no schema for event type %q", ev.Type)
		}
		if err := sch.Value.VisitJSON(v); err != nil {
			t.Errorf("event %s does not match %s: %v\n%s", ev.Type, e.Schema, err, ev.Body)
		}
		if err := doc.Components.Schemas["Event"].Value.VisitJSON(v); err != nil {
			t.Errorf("event %s does not match Event: %v", ev.Type, err)
		}
	}
}

// errorRecorder is a testing.TB that records Errorf calls instead of
// failing the test, so a test can check that the validator objects.
type errorRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (e *errorRecorder) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

func (e *errorRecorder) got() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.errs...)
}

// TestValidatorRejectsWrongResponses feeds the check that every exchange
// goes through responses that break the contract in one way each: every
// one must be reported, and the correct one must not.
func TestValidatorRejectsWrongResponses(t *testing.T) {
	t.Parallel()
	const (
		rid  = "req_abcdefghijklmnopqrst"
		id   = "ctx_abcdefghijklmnopqrst"
		ctx  = `{"id":"` + id + `","name":"n","content":"","tags":[],"version":1,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:51:00.123Z"}`
		errB = `{"error":{"type":"%s","message":"m","requestId":"` + rid + `"}}`
	)
	hdr := func(kv ...string) http.Header {
		h := http.Header{"X-Request-Id": {rid}, "Content-Type": {"application/json"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	get := call{method: "GET", path: "/v1/contexts/" + id}
	s := New()
	for _, tc := range []struct {
		name   string
		c      call
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"correct context", get, 200, hdr(), ctx, true},
		{"correct 401", get, 401, hdr("WWW-Authenticate", "Bearer"), fmt.Sprintf(errB, "unauthorized"), true},
		{"context without updatedAt", get, 200, hdr(), strings.Replace(ctx, `,"updatedAt":"2026-11-21T20:51:00.123Z"`, "", 1), false},
		{"context with an extra field", get, 200, hdr(), strings.Replace(ctx, `{`, `{"extra":1,`, 1), false},
		{"null tags", get, 200, hdr(), strings.Replace(ctx, `"tags":[]`, `"tags":null`, 1), false},
		{"name only white space", get, 200, hdr(), strings.Replace(ctx, `"name":"n"`, `"name":" \u3000 "`, 1), false},
		{"tag with a control character", get, 200, hdr(), strings.Replace(ctx, `"tags":[]`, `"tags":["a\u0007"]`, 1), false},
		{"time without milliseconds", get, 200, hdr(), strings.Replace(ctx, `00.123Z","updatedAt`, `00Z","updatedAt`, 1), false},
		{"no X-Request-Id", get, 200, http.Header{"Content-Type": {"application/json"}}, ctx, false},
		{"401 without WWW-Authenticate", get, 401, hdr(), fmt.Sprintf(errB, "unauthorized"), false},
		{"unknown error type", get, 404, hdr(), fmt.Sprintf(errB, "missing"), false},
		{"error without requestId", get, 404, hdr(), `{"error":{"type":"not_found","message":"m"}}`, false},
		{"status the operation does not declare", get, 403, hdr(), fmt.Sprintf(errB, "forbidden"), false},
		{"a 500 without a fault", get, 500, hdr(), fmt.Sprintf(errB, "internal"), false},
		{"429 without Retry-After", call{method: "GET", path: "/v1/contexts"}, 429, hdr(), fmt.Sprintf(errB, "rate_limited"), false},
		{"list without nextCursor", call{method: "GET", path: "/v1/contexts"}, 200, hdr(), `{"data":[],"hasMore":false}`, false},
		{"export without Content-Disposition", call{method: "GET", path: "/v1/contexts/" + id + "/export?format=json"}, 200, hdr(), ctx, false},
		{"405 without Allow", call{method: "PATCH", path: "/v1/contexts"}, 405, hdr(), fmt.Sprintf(errB, "method_not_allowed"), false},
		{"webhook with its secret", call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://e.x/h","events":["context.created"],"secret":"s"}`}, 201, hdr(),
			`{"id":"wh_abcdefghijklmnopqrst","url":"https://e.x/h","events":["context.created"],"createdAt":"2026-11-21T20:51:00.123Z","active":true,"secret":"s"}`, false},
		{"a request the document allows, refused", call{method: "POST", path: "/v1/contexts", body: `{"name":"a"}`}, 400, hdr(), fmt.Sprintf(errB, "invalid_request"), false},
		{"a request the document forbids, accepted", call{method: "POST", path: "/v1/contexts", body: `{"name":"a\u0000"}`}, 201, hdr(), ctx, false},
		{"admin list without hasMore", call{method: "GET", path: "/_mock/events"}, 200, hdr(), `{"data":[],"nextCursor":null}`, false},
		{"an empty state filter, accepted", call{method: "GET", path: "/_mock/deliveries?state="}, 200, hdr(), `{"data":[],"hasMore":false,"nextCursor":null}`, false},
	} {
		ex := &exchange{method: tc.c.method, reqHeader: http.Header{"Authorization": {"Bearer k"}}, reqBody: []byte(tc.c.body), bodyKnown: true,
			status: tc.status, header: tc.header, body: []byte(tc.body)}
		ex.path, ex.rawQuery, _ = strings.Cut(tc.c.path, "?")
		problems := checkExchange(s, ex)
		if tc.ok && len(problems) > 0 {
			t.Errorf("%s: rejected: %s", tc.name, problems)
		}
		if !tc.ok && len(problems) == 0 {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestValidatingWrapperCatchesWrongResponses proves that the wrapper every
// server of these tests runs behind fails a test on a wrong answer: a
// stored context is corrupted behind the server's back, and a plain GET of
// it over the network, and straight through ServeHTTP, is reported.
func TestValidatingWrapperCatchesWrongResponses(t *testing.T) {
	t.Parallel()
	rec := &errorRecorder{TB: t}
	ts := NewTestServer(rec)
	c := create(t, ts, `{"name":"Fine","tags":["ok"]}`)
	if errs := rec.got(); len(errs) > 0 {
		t.Fatalf("a correct exchange was reported: %s", errs)
	}
	// The store takes what it is given: the rules are the handlers'.
	empty := ""
	ts.svc.Store.Account(ts.DefaultKey().Account).Update(c.ID, store.Update{Name: &empty, Tags: []string{"bad\x00tag"}, HasTags: true}, ts.svc.Now, "user_x")
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID}); r.Status != 200 {
		t.Fatalf("GET: %d", r.Status)
	}
	errs := rec.got()
	if len(errs) != 1 || !strings.Contains(errs[0], "does not match openapi.yaml") {
		t.Fatalf("over the network, the wrapper reported %q", errs)
	}
	ts.ServeHTTP(newRecorder(), httptestRequest("GET", "/v1/contexts/"+c.ID, "", ts.APIKey))
	if errs := rec.got(); len(errs) != 2 {
		t.Fatalf("through ServeHTTP, the wrapper reported %q", errs[1:])
	}
}
