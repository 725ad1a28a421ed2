package mockserver

import (
	"bytes"
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
)

// spec is the embedded document, loaded once for all tests.
var spec = sync.OnceValues(func() (*openapi3.T, error) {
	// The export formats kin-openapi has no decoder for are checked as
	// strings or opaque bytes.
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
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
	var e errorBody
	r.json(t, &e)
	return e.Error.Type, e.Error.Param
}

// call describes one request of a test.
type call struct {
	method, path string
	body         string // raw body; "" for none
	key          string // bearer token; "" uses the default key; "-" sends no header
	header       map[string]string
	// invalid marks a request that is deliberately outside the document:
	// only its response is validated.
	invalid bool
	// want500 marks a request answered by an injected fault: a 500, or a
	// status its operation covers only through the document's "default"
	// response. Otherwise both are test failures.
	want500 bool
}

// do sends c to ts over real HTTP and validates the response (and, unless
// c.invalid, the request) against openapi.yaml. Responses for paths or
// methods the document does not have (404 unknown path, 405) are checked
// against the Error schema and their required headers instead.
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
	r := &response{Status: res.StatusCode, Header: res.Header, Body: b}
	validate(t, c, req, r)
	return r
}

func validate(t testing.TB, c call, req *http.Request, r *response) {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("X-Request-Id"), "req_") {
		t.Errorf("%s %s: X-Request-Id = %q", c.method, c.path, r.Header.Get("X-Request-Id"))
	}
	if r.Status == http.StatusInternalServerError && !c.want500 {
		t.Errorf("%s %s: 500: %s", c.method, c.path, r.Body)
	}
	router, err := specRouter()
	if err != nil {
		t.Fatal(err)
	}
	// A fresh request for the validator: the sent one's body is consumed.
	vreq, _ := http.NewRequest(c.method, "http://mock"+c.path, strings.NewReader(c.body))
	vreq.Header = req.Header.Clone()
	route, params, err := router.FindRoute(vreq)
	// The legacy router is lenient about trailing slashes and methods, so
	// a 405, or a 404 its matched operation does not declare, is a route
	// the document does not have.
	if err != nil || r.Status == http.StatusMethodNotAllowed ||
		(r.Status == http.StatusNotFound && route.Operation.Responses.Status(r.Status) == nil) {
		checkOffDocument(t, c, r)
		return
	}
	// Every /v1 operation has a "default" response for injected faults,
	// which would accept any status; outside a fault the status must be
	// one the operation declares.
	if !c.want500 && route.Operation.Responses.Status(r.Status) == nil {
		t.Errorf("%s %s: status %d is not declared for %s in openapi.yaml: %.300s", c.method, c.path, r.Status, route.Operation.OperationID, r.Body)
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	if !c.invalid {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s %s: request does not match openapi.yaml: %v", c.method, c.path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: r.Status, Header: r.Header,
		Body: io.NopCloser(bytes.NewReader(r.Body)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s: response %d does not match openapi.yaml: %v\nbody: %.500s", c.method, c.path, r.Status, err, r.Body)
	}
}

// checkOffDocument validates a 404 (unknown path) or 405 response against
// the document's Error schema and the headers its responses require.
func checkOffDocument(t testing.TB, c call, r *response) {
	t.Helper()
	doc, _ := spec()
	var name string
	switch r.Status {
	case http.StatusNotFound:
		name = "NotFound"
	case http.StatusMethodNotAllowed:
		name = "MethodNotAllowed"
		if r.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	default:
		t.Errorf("%s %s: status %d for a route not in openapi.yaml", c.method, c.path, r.Status)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
	}
	resp := doc.Components.Responses[name].Value
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Errorf("%s %s: body is not JSON: %s", c.method, c.path, r.Body)
		return
	}
	if err := resp.Content.Get("application/json").Schema.Value.VisitJSON(v); err != nil {
		t.Errorf("%s %s: %d body does not match openapi.yaml: %v", c.method, c.path, r.Status, err)
	}
}

// checkEvents validates every recorded event envelope against its schema
// in the document.
func checkEvents(t testing.TB, s *Server) {
	t.Helper()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"context.created": "ContextCreatedEvent", "context.updated": "ContextUpdatedEvent",
		"context.deleted": "ContextDeletedEvent", "context.published": "ContextPublishedEvent",
		"context.version.created": "ContextVersionCreatedEvent", "team.member.added": "TeamMemberAddedEvent",
		"team.member.removed": "TeamMemberRemovedEvent", "export.completed": "ExportCompletedEvent",
	}
	for _, ev := range s.Events() {
		var v any
		if err := json.Unmarshal(ev.Body, &v); err != nil {
			t.Fatalf("event %s: %v", ev.ID, err)
		}
		sch := doc.Components.Schemas[names[string(ev.Type)]]
		if sch == nil {
			t.Fatalf("no schema for event type %q", ev.Type)
		}
		if err := sch.Value.VisitJSON(v); err != nil {
			t.Errorf("event %s does not match %s: %v\n%s", ev.Type, names[string(ev.Type)], err, ev.Body)
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
	errs []string
}

func (e *errorRecorder) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestValidatorRejectsWrongResponses feeds the response validator that
// every other test relies on responses that break the contract in one way
// each: every one must be reported, and the correct one must not.
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
		{"time without milliseconds", get, 200, hdr(), strings.Replace(ctx, `00.123Z","updatedAt`, `00Z","updatedAt`, 1), false},
		{"no X-Request-Id", get, 200, http.Header{"Content-Type": {"application/json"}}, ctx, false},
		{"401 without WWW-Authenticate", get, 401, hdr(), fmt.Sprintf(errB, "unauthorized"), false},
		{"unknown error type", get, 404, hdr(), fmt.Sprintf(errB, "missing"), false},
		{"error without requestId", get, 404, hdr(), `{"error":{"type":"not_found","message":"m"}}`, false},
		{"status the operation does not declare", get, 403, hdr(), fmt.Sprintf(errB, "forbidden"), false},
		{"429 without Retry-After", call{method: "GET", path: "/v1/contexts"}, 429, hdr(), fmt.Sprintf(errB, "rate_limited"), false},
		{"list without nextCursor", call{method: "GET", path: "/v1/contexts"}, 200, hdr(), `{"data":[],"hasMore":false}`, false},
		{"export without Content-Disposition", call{method: "GET", path: "/v1/contexts/" + id + "/export?format=json"}, 200, hdr(), ctx, false},
		{"405 without Allow", call{method: "PATCH", path: "/v1/contexts"}, 405, hdr(), fmt.Sprintf(errB, "method_not_allowed"), false},
		{"webhook with its secret", call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://e.x/h","events":["context.created"],"secret":"s"}`}, 201, hdr(),
			`{"id":"wh_abcdefghijklmnopqrst","url":"https://e.x/h","events":["context.created"],"createdAt":"2026-11-21T20:51:00.123Z","active":true,"secret":"s"}`, false},
	} {
		req, err := http.NewRequest(tc.c.method, "http://mock"+tc.c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		if tc.c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := &errorRecorder{TB: t}
		validate(rec, tc.c, req, &response{Status: tc.status, Header: tc.header, Body: []byte(tc.body)})
		if tc.ok && len(rec.errs) > 0 {
			t.Errorf("%s: rejected: %s", tc.name, rec.errs)
		}
		if !tc.ok && len(rec.errs) == 0 {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
