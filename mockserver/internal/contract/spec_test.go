package contract_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

var loadSpec = sync.OnceValues(func() (*contract.Spec, error) { return contract.LoadSpec(mockserver.OpenAPI()) })

func spec(t *testing.T) *contract.Spec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Well-formed pieces of answers.
const (
	reqID       = "req_abcdefghijklmnopqrstu"
	ctxID       = "ctx_abcdefghijklmnopqrstu"
	contextJSON = `{"id":"` + ctxID + `","name":"n","content":"","tags":[],"version":1,"createdAt":"2026-01-02T03:04:05.000Z","updatedAt":"2026-01-02T03:04:05.000Z"}`
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func jsonHeader(kv ...string) http.Header {
	return header(append([]string{"Content-Type", "application/json", "X-Request-Id", reqID}, kv...)...)
}

func errorJSON(typ, param string) string {
	p := ""
	if param != "" {
		p = `,"param":"` + param + `"`
	}
	return `{"error":{"type":"` + typ + `","message":"m"` + p + `,"requestId":"` + reqID + `"}}`
}

func TestLoadSpecRefusesBadDocuments(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not YAML":          "{",
		"not OpenAPI":       "openapi: 3.0.3\n",
		"a dangling $ref":   "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/Nope'}\n",
		"an empty document": "",
	} {
		if _, err := contract.LoadSpec([]byte(doc)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestCheckResponse(t *testing.T) {
	t.Parallel()
	s := spec(t)
	tests := []struct {
		name string
		ex   contract.Exchange
		opts contract.CheckOptions
		// want lists "where | rule" of each mismatch; none for a
		// conforming answer.
		want []string
	}{
		{"a context", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader(), Body: []byte(contextJSON)}, contract.CheckOptions{}, nil},
		{"a page", contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 200, Header: jsonHeader(),
			Body: []byte(`{"data":[` + contextJSON + `],"hasMore":false,"nextCursor":null}`)}, contract.CheckOptions{}, nil},
		{"a bare array", contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 200, Header: jsonHeader(), Body: []byte(`[` + contextJSON + `]`)}, contract.CheckOptions{},
			[]string{"body | #/components/schemas/ContextList/type"}},
		{"a bad id inside a page", contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 200, Header: jsonHeader(),
			Body: []byte(`{"data":[` + strings.Replace(contextJSON, ctxID, "ctx_SHORT", 1) + `],"hasMore":false,"nextCursor":null}`)}, contract.CheckOptions{},
			[]string{"body /data/0/id | #/components/schemas/ContextID/pattern"}},
		{"a missing field and an extra one", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader(),
			Body: []byte(strings.Replace(contextJSON, `"version":1`, `"v":1`, 1))}, contract.CheckOptions{},
			[]string{"body | #/components/schemas/Context/additionalProperties", "body /version | #/components/schemas/Context/required"}},
		{"no X-Request-Id", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: header("Content-Type", "application/json"), Body: []byte(contextJSON)}, contract.CheckOptions{},
			[]string{"header X-Request-Id | #/components/headers/X-Request-Id/required"}},
		{"no X-Request-Id, skipped", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: header("Content-Type", "application/json"), Body: []byte(contextJSON)},
			contract.CheckOptions{SkipHeaders: []string{"x-request-id"}}, nil},
		{"a rate limit that is no number", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: jsonHeader("X-RateLimit-Limit", "lots"), Body: []byte(contextJSON)}, contract.CheckOptions{},
			[]string{"header X-RateLimit-Limit | #/components/headers/X-RateLimit-Limit/schema/type"}},
		{"another Content-Type", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 200, Header: header("Content-Type", "text/html", "X-Request-Id", reqID), Body: []byte(contextJSON)}, contract.CheckOptions{},
			[]string{"header Content-Type | #/paths/~1v1~1contexts~1{id}/get/responses/200/content"}},
		{"a status the operation does not answer", contract.Exchange{Method: "DELETE", Path: "/v1/contexts/" + ctxID, Status: 204, Header: header("X-Request-Id", reqID)}, contract.CheckOptions{},
			[]string{"status | #/paths/~1v1~1contexts~1{id}/delete/responses"}},
		{"a 200 checked as the 201 of a create", contract.Exchange{Method: "POST", Path: "/v1/contexts", Status: 200, Header: jsonHeader(), Body: []byte(contextJSON)},
			contract.CheckOptions{AsStatus: 201}, nil},
		{"an error", contract.Exchange{Method: "GET", Path: "/v1/contexts", RawQuery: "limit=0", Status: 400, Header: jsonHeader(), Body: []byte(errorJSON("invalid_request", "limit"))}, contract.CheckOptions{}, nil},
		{"an error of another shape", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID, Status: 404, Header: jsonHeader(), Body: []byte(`{"code":"not_found"}`)}, contract.CheckOptions{},
			[]string{"body | #/components/schemas/Error/additionalProperties", "body /error | #/components/schemas/Error/required"}},
		{"a 401 without WWW-Authenticate", contract.Exchange{Method: "GET", Path: "/v1/contexts", Status: 401, Header: jsonHeader(), Body: []byte(errorJSON("unauthorized", ""))}, contract.CheckOptions{},
			[]string{"header WWW-Authenticate | #/components/headers/WWW-Authenticate/required"}},
		{"an unknown path", contract.Exchange{Method: "GET", Path: "/v1/nope", Status: 404, Header: jsonHeader(), Body: []byte(errorJSON("not_found", ""))}, contract.CheckOptions{}, nil},
		{"an unknown path answered 200", contract.Exchange{Method: "GET", Path: "/v1/nope", Status: 200, Header: jsonHeader(), Body: []byte(`{}`)}, contract.CheckOptions{},
			[]string{"status | #/paths"}},
		{"a method the path does not serve", contract.Exchange{Method: "PATCH", Path: "/v1/contexts/" + ctxID, Status: 405, Header: jsonHeader("Allow", "GET, PUT, DELETE"), Body: []byte(errorJSON("method_not_allowed", ""))}, contract.CheckOptions{}, nil},
		{"a 405 without Allow", contract.Exchange{Method: "PATCH", Path: "/v1/contexts/" + ctxID, Status: 405, Header: jsonHeader(), Body: []byte(errorJSON("method_not_allowed", ""))}, contract.CheckOptions{},
			[]string{"header Allow | #/components/headers/Allow/required"}},
		{"a PDF", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID + "/export", RawQuery: "format=pdf", Status: 200,
			Header: header("Content-Type", "application/pdf", "X-Request-Id", reqID, "Content-Disposition", `attachment; filename="n-v1.pdf"; filename*=UTF-8''n-v1.pdf`), Body: []byte("%PDF-1.7")}, contract.CheckOptions{}, nil},
		{"an export without Content-Disposition", contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID + "/export", Status: 200,
			Header: header("Content-Type", "text/markdown; charset=utf-8", "X-Request-Id", reqID), Body: []byte("# x")}, contract.CheckOptions{},
			[]string{"header Content-Disposition | #/components/headers/Content-Disposition/required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, m := range s.CheckResponse(&tt.ex, tt.opts) {
				if m.Message == "" {
					t.Errorf("a mismatch without a message: %+v", m)
				}
				got = append(got, m.Where+" | "+m.Rule)
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("mismatches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCheckEvent(t *testing.T) {
	t.Parallel()
	s := spec(t)
	const ok = `{"id":"evt_abcdefghijklmnopqrstu","type":"context.deleted","timestamp":"2026-01-02T03:04:05.000Z","data":{"contextId":"` + ctxID + `","name":"n","deletedBy":"user_abcdefghijklmnopqrstu"}}`
	tests := []struct {
		name, body string
		want       []string
	}{
		{"an event", ok, nil},
		{"a data field missing", strings.Replace(ok, `,"deletedBy":"user_abcdefghijklmnopqrstu"`, "", 1),
			[]string{"event /data/deletedBy | #/components/schemas/ContextDeletedEvent/properties/data/required"}},
		{"a timestamp of another form", strings.Replace(ok, "05.000Z", "05Z", 1),
			[]string{"event /timestamp | #/components/schemas/Timestamp/pattern"}},
		{"an unknown type", strings.Replace(ok, "context.deleted", "context.exploded", 1),
			[]string{"event /type | #/components/schemas/Event/discriminator"}},
		{"not JSON", "{", []string{"event | #/components/schemas/Event"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, m := range s.CheckEvent([]byte(tt.body)) {
				got = append(got, m.Where+" | "+m.Rule)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("mismatches %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTablesMatchTheDocument holds the contract's tables to openapi.yaml:
// the operations route to their ids and answer their success status, the
// export formats are the export's content types, each event type has its
// schema, each error type is in the Error schema.
func TestTablesMatchTheDocument(t *testing.T) {
	t.Parallel()
	s := spec(t)
	for _, op := range contract.Operations() {
		path := strings.ReplaceAll(op.Path, "{id}", ctxID)
		if got := s.Operation(op.Method, path); got != op.ID {
			t.Errorf("%s %s routes to %q, want %q", op.Method, path, got, op.ID)
		}
		ex := &contract.Exchange{Method: op.Method, Path: path, Status: op.Success, Header: http.Header{}}
		for _, m := range s.CheckResponse(ex, contract.CheckOptions{}) {
			if m.Where == "status" {
				t.Errorf("%s: %s", op.ID, m)
			}
		}
	}
	for _, f := range contract.ExportFormats() {
		ex := &contract.Exchange{Method: "GET", Path: "/v1/contexts/" + ctxID + "/export", Status: 200, Header: header("Content-Type", f.ContentType), Body: []byte(contextJSON)}
		for _, m := range s.CheckResponse(ex, contract.CheckOptions{}) {
			if m.Where == "header Content-Type" {
				t.Errorf("export format %s: %s", f.Name, m)
			}
		}
	}
	for _, e := range contract.Events() {
		for _, m := range s.CheckEvent([]byte(`{"type":"` + string(e.Type) + `"}`)) {
			if strings.Contains(m.Message, "has no schema") || strings.Contains(m.Where, "/type") {
				t.Errorf("event %s: %s", e.Type, m)
			}
		}
	}
	for _, et := range contract.ErrorTypes() {
		ex := &contract.Exchange{Method: "GET", Path: "/v1/nope", Status: 404, Header: jsonHeader(), Body: []byte(errorJSON(et.Type, ""))}
		if ms := s.CheckResponse(ex, contract.CheckOptions{}); len(ms) > 0 {
			t.Errorf("error type %s: %v", et.Type, ms)
		}
		if contract.ErrorTypeOf(et.Status) != et.Type {
			t.Errorf("ErrorTypeOf(%d) = %q, want %q", et.Status, contract.ErrorTypeOf(et.Status), et.Type)
		}
	}
	if got := contract.ErrorTypeOf(418); got != "" {
		t.Errorf("ErrorTypeOf(418) = %q", got)
	}
}

func TestDeclares(t *testing.T) {
	t.Parallel()
	s := spec(t)
	for _, tt := range []struct {
		method, path string
		status       int
		header       string
		want         bool
	}{
		{"GET", "/v1/contexts", 200, "X-RateLimit-Limit", true},
		{"GET", "/v1/contexts", 401, "X-RateLimit-Limit", false},
		{"GET", "/v1/contexts", 401, "www-authenticate", true},
		{"POST", "/v1/contexts", 413, "X-RateLimit-Limit", true},
		{"GET", "/v1/nope", 404, "X-RateLimit-Limit", false},
	} {
		ex := &contract.Exchange{Method: tt.method, Path: tt.path, Status: tt.status}
		if got := s.Declares(ex, tt.header); got != tt.want {
			t.Errorf("%s %s %d declares %s: %t, want %t", tt.method, tt.path, tt.status, tt.header, got, tt.want)
		}
	}
}

func TestAPIPath(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ base, path, want string }{
		{"/v1", "/v1/contexts", "/v1/contexts"},
		{"/api/v1", "/api/v1/contexts/ctx_1", "/v1/contexts/ctx_1"},
		{"/api/v1/", "/api/v1/webhooks", "/v1/webhooks"},
		{"/a/v1/b/v1", "/a/v1/b/v1/contexts", "/v1/contexts"},
		{"/api/v1", "/elsewhere", "/elsewhere"},
		{"/api", "/api/contexts", "/api/contexts"},
	} {
		if got := contract.APIPath(tt.base, tt.path); got != tt.want {
			t.Errorf("APIPath(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}
