package mockserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// Every request any test of this package sends to a Server, over the
// network or straight to ServeHTTP, goes through validatingHandler: the
// response is checked against openapi.yaml (status, headers, body), and
// the request too, to hold the two to each other both ways: a request the
// document allows must not be refused with a 400, and one it forbids must
// not be accepted, unless the refusal (or acceptance) comes from a rule
// the document can only state in words (the inexpressible* functions).
// A server that NewTestServer made fails its own test; one made with New
// fails the run in TestMain.

func TestMain(m *testing.M) {
	testHandler = validatingHandler
	testServerStarted = exchanges.bind
	// browsertest.Main runs the tests, then stops the browser the
	// dashboard's tests shared (if any ran).
	code := browsertest.Main(m)
	if v := exchanges.unbound(); len(v) > 0 {
		fmt.Fprintf(os.Stderr, "--- FAIL: servers made with New (no test to fail) answered %d exchanges that do not match openapi.yaml:\n%s\n",
			len(v), strings.Join(v, "\n"))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// unvalidated takes s out of the validation, for a benchmark (whose
// figures must not include the validator) or a test that makes the server
// misbehave on purpose.
func unvalidated(s *Server) *Server {
	s.handler = http.HandlerFunc(s.serve)
	return s
}

// exchangeLog routes what the validator finds to the test that owns the
// server, or keeps it for TestMain.
type exchangeLog struct {
	mu      sync.Mutex
	tests   map[*Server]testing.TB
	orphans []string
}

var exchanges = &exchangeLog{tests: make(map[*Server]testing.TB)}

func (l *exchangeLog) bind(t testing.TB, s *Server) {
	if _, ok := t.(*testing.B); ok {
		unvalidated(s)
		return
	}
	l.mu.Lock()
	l.tests[s] = t
	l.mu.Unlock()
	// Registered before NewTestServer's own clean-ups, so it runs after
	// the server has stopped.
	t.Cleanup(func() {
		l.mu.Lock()
		delete(l.tests, s)
		l.mu.Unlock()
	})
}

func (l *exchangeLog) report(s *Server, msg string) {
	l.mu.Lock()
	t := l.tests[s]
	if t == nil {
		l.orphans = append(l.orphans, msg)
	}
	l.mu.Unlock()
	if t != nil {
		t.Errorf("%s", msg)
	}
}

func (l *exchangeLog) unbound() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.orphans
}

// validatingHandler records the exchange, checks it, reports any problem,
// and then sends the response on.
func validatingHandler(s *Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tee := &teeBody{ReadCloser: r.Body}
		hasBody := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
		if hasBody {
			r.Body = tee
		}
		rec := &recordingWriter{real: w, header: http.Header{}, req: r, server: s}
		next.ServeHTTP(rec, r)
		if rec.stream != nil {
			rec.stream.end()
			return // an event stream, checked as it went
		}
		if rec.status == 0 && r.Context().Err() != nil {
			return // the client went away (a canceled fault latency): nothing was answered
		}
		if rec.hijacked {
			return // a drop fault closed the connection: nothing was answered
		}
		ex := &exchange{
			method: r.Method, path: r.URL.Path, rawQuery: r.URL.RawQuery, reqHeader: r.Header,
			reqBody: tee.buf.Bytes(), bodyKnown: !hasBody || tee.eof,
			status: rec.status, header: rec.header, body: rec.body.Bytes(),
		}
		if rec.status == 0 {
			ex.status = http.StatusOK
		}
		if problems := checkExchange(s, ex); len(problems) > 0 {
			exchanges.report(s, fmt.Sprintf("%s %s -> %d: %s\n  body: %.400s", ex.method, ex.target(), ex.status,
				strings.Join(problems, "\n  "), ex.body))
		}
		rec.send()
	})
}

// teeBody keeps what the handler reads of a request body (up to the
// body limit and one byte), and whether it read to the end.
type teeBody struct {
	io.ReadCloser
	buf bytes.Buffer
	eof bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if t.buf.Len() <= httpapi.MaxBody {
		t.buf.Write(p[:min(n, httpapi.MaxBody+1-t.buf.Len())])
	}
	if err == io.EOF && t.buf.Len() <= httpapi.MaxBody {
		t.eof = true
	}
	return n, err
}

// recordingWriter holds the response until it has been checked. Unwrap
// lets http.ResponseController reach the connection (read deadlines). An
// event stream (a 200 of Content-Type text/event-stream) cannot be held
// until it ends: its status and headers are checked when they are
// written, then its bytes go through at once, each event checked as it
// passes (streamChecker).
type recordingWriter struct {
	real     http.ResponseWriter
	header   http.Header
	status   int
	body     bytes.Buffer
	hijacked bool

	req    *http.Request
	server *Server
	stream *streamChecker // set once the response is an event stream
}

// Hijack takes the connection over (a drop fault closes it unanswered) and
// remembers that nothing is to be sent or checked.
func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.real).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

func (w *recordingWriter) Header() http.Header { return w.header }

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if code == http.StatusOK && strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream") {
			w.stream = newStreamChecker(w)
			w.send()
		}
	}
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.stream != nil {
		w.stream.check(b)
		return w.real.Write(b)
	}
	return w.body.Write(b)
}

// Flush passes an event stream's bytes on; other responses are held
// until checked.
func (w *recordingWriter) Flush() {
	if w.stream != nil {
		_ = http.NewResponseController(w.real).Flush()
	}
}

// FlushError is Flush with the error http.ResponseController passes on.
func (w *recordingWriter) FlushError() error {
	if w.stream != nil {
		return http.NewResponseController(w.real).Flush()
	}
	return nil
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.real }

func (w *recordingWriter) send() {
	h := w.real.Header()
	for k, v := range w.header {
		h[k] = v
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.real.WriteHeader(w.status)
	_, _ = w.real.Write(w.body.Bytes())
}

// exchange is one request and its response.
type exchange struct {
	method, path, rawQuery string
	reqHeader              http.Header
	reqBody                []byte
	bodyKnown              bool // the whole body was read (or there was none)
	status                 int
	header                 http.Header
	body                   []byte
}

func (ex *exchange) target() string {
	if ex.rawQuery == "" {
		return ex.path
	}
	return ex.path + "?" + ex.rawQuery
}

// errorDetail returns the error body's detail, if the body is one.
func (ex *exchange) errorDetail() (httpapi.ErrorDetail, bool) {
	var e httpapi.ErrorBody
	if json.Unmarshal(ex.body, &e) != nil || e.Error.Type == "" {
		return httpapi.ErrorDetail{}, false
	}
	return e.Error, true
}

// checkExchange lists what is wrong with ex by openapi.yaml.
func checkExchange(s *Server, ex *exchange) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !strings.HasPrefix(ex.header.Get("X-Request-Id"), "req_") {
		fail("X-Request-Id = %q", ex.header.Get("X-Request-Id"))
	}
	detail, isError := ex.errorDetail()
	// A fault's answer, or the chaos mode's (api-error).
	injected := isError && (strings.HasPrefix(detail.Message, "injected fault: ") || strings.HasPrefix(detail.Message, "chaos: "))
	if ex.status == http.StatusInternalServerError && !injected {
		fail("a 500 that no fault or chaos injected")
	}
	router, err := specRouter()
	if err != nil {
		fail("%v", err)
		return problems
	}
	vreq, _ := http.NewRequest(ex.method, "http://mock"+ex.target(), bytes.NewReader(ex.reqBody))
	vreq.Header = ex.reqHeader.Clone()
	if len(ex.reqBody) > 0 {
		// The server reads the body as JSON whatever its Content-Type (the
		// document says so in words).
		vreq.Header.Set("Content-Type", "application/json")
	}
	route, params, err := router.FindRoute(vreq)
	// The legacy router is lenient about trailing slashes and methods, so
	// a 405, or a 404 its matched operation does not declare, is a route
	// the document does not have.
	if err != nil || ex.status == http.StatusMethodNotAllowed ||
		(ex.status == http.StatusNotFound && route.Operation.Responses.Status(ex.status) == nil) {
		return append(problems, checkOffDocument(ex)...)
	}
	op := route.Operation.OperationID
	// Every /v1 operation has a "default" response for injected faults,
	// which would accept any status; outside a fault the status must be
	// one the operation declares.
	if !injected && route.Operation.Responses.Status(ex.status) == nil {
		fail("status %d is not declared for %s", ex.status, op)
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: ex.status, Header: ex.header,
		Body: io.NopCloser(bytes.NewReader(ex.body)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		fail("the response does not match openapi.yaml: %v", err)
	}
	if !ex.bodyKnown || injected {
		// The server stopped reading the body, or a fault answered: there
		// is nothing to hold the request to.
		return problems
	}
	// The request, against the document (as the proxy holds requests to
	// it), both ways.
	var reqErr error
	if mismatches := checkRequest(ex); len(mismatches) > 0 {
		reqErr = errors.New(mismatches[0].String())
	}
	wellFormed := len(ex.reqBody) == 0 || (utf8.Valid(ex.reqBody) && json.Valid(ex.reqBody))
	docValid := reqErr == nil && wellFormed
	switch {
	case docValid && ex.status == http.StatusBadRequest:
		if why := inexpressibleRefusal(s, op, ex, detail.Param); why == "" {
			fail("openapi.yaml allows this request, but the server refused it (param %q: %s)", detail.Param, detail.Message)
		}
	case !docValid && ex.status >= 200 && ex.status <= 299:
		if why := inexpressibleAcceptance(op, ex); why == "" {
			if reqErr == nil {
				reqErr = fmt.Errorf("the body is not one JSON value in UTF-8")
			}
			fail("openapi.yaml forbids this request, but the server accepted it: %v", reqErr)
		}
	}
	return problems
}

// inexpressibleRefusal says which rule, stated in the document's words
// only (no schema can say it), explains the refusal of a request the
// schemas allow; "" when none does.
func inexpressibleRefusal(s *Server, op string, ex *exchange, param string) string {
	q, qerr := url.ParseQuery(ex.rawQuery)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(ex.reqBody, &fields)
	switch {
	case qerr != nil:
		return "a malformed query string"
	case len(q[param]) > 1:
		return "a repeated query parameter"
	case param == "cursor":
		return "a cursor the server did not issue"
	case strings.HasPrefix(op, "mock") && q.Has(param) && !documentedQueryParam(op, param):
		// OpenAPI lists the parameters a route takes, but cannot forbid the
		// others.
		return "a query parameter the admin route does not take"
	case param == "Idempotency-Key" && len(ex.reqHeader.Values("Idempotency-Key")) == 1:
		return "an Idempotency-Key used before with another method, path or body"
	case fields[param] != nil && loneSurrogate(fields[param]) >= 0:
		return "a lone surrogate escape"
	case fields[param] != nil && topLevelCount(ex.reqBody, param) > 1:
		return "a field given more than once"
	case param == "content" && (op == "createContext" || op == "updateContext"):
		var c string
		if json.Unmarshal(fields["content"], &c) == nil && len(c) > rules.MaxContentLen {
			return "content over 1,000,000 bytes"
		}
	case param == "account" && op == "mockEmitEvent":
		return "an account the server does not have"
	case param == "url" && (op == "registerWebhook" || op == "mockUpdateWebhook") && s.svc.HTTPSOnly:
		return "an http url on a server with https-only webhooks"
	case op == "mockReplaceState" && (param == "accounts" || param == "events" || param == "deliveries"):
		// The document lists these rules in words: ids unique, versions and
		// attempts numbered, references that resolve, the server's
		// accounts, and the API's own unwritable rules.
		return "a rule of the state document stated in words"
	case op == "mockReplaceState" && param == "savedAt":
		return "a time that is no real date"
	case op == "mockReplaceState" && strings.HasSuffix(errorMessage(ex), ": the field appears twice"):
		return "a field given twice in one object"
	case op == "mockSetChaos" && param == "spec":
		// Its grammar (each key once, its value's range) is in words.
		return "a SPEC the chaos mode cannot use"
	case param == "" && op == "registerWebhook" && webhookLimitReached(ex):
		return "an account that already has MaxWebhooksPerAccount webhooks"
	}
	return ""
}

// errorMessage is the message of ex's error body, if it is one.
func errorMessage(ex *exchange) string {
	d, _ := ex.errorDetail()
	return d.Message
}

// topLevelCount counts the top-level fields of the JSON object body named
// name (after unescaping); 0 when body is no JSON object.
func topLevelCount(body []byte, name string) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if tok == name {
			n++
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return 0
		}
	}
	return n
}

// webhookLimitReached reports whether ex is the refusal of a registration
// past MaxWebhooksPerAccount.
func webhookLimitReached(ex *exchange) bool {
	d, ok := ex.errorDetail()
	return ok && strings.Contains(d.Message, fmt.Sprintf("already has %d webhooks", MaxWebhooksPerAccount))
}

// inexpressibleAcceptance says which rule, stated in the document's words
// only, explains the acceptance of a request the schemas forbid; "" when
// none does.
// documentedQueryParam reports whether the document lists name as a query
// parameter of the operation op.
func documentedQueryParam(op, name string) bool {
	doc, err := spec()
	if err != nil {
		return false
	}
	for _, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			if o.OperationID != op {
				continue
			}
			for _, p := range append(item.Parameters, o.Parameters...) {
				if p.Value != nil && p.Value.In == "query" && p.Value.Name == name {
					return true
				}
			}
		}
	}
	return false
}

func inexpressibleAcceptance(op string, ex *exchange) string {
	if op != "createContext" && op != "updateContext" {
		return ""
	}
	var body struct{ Tags []string }
	if json.Unmarshal(ex.reqBody, &body) != nil || len(body.Tags) <= rules.MaxTags {
		return ""
	}
	distinct := map[string]bool{}
	for _, t := range body.Tags {
		distinct[t] = true
	}
	if len(distinct) <= rules.MaxTags {
		return "more than 20 tags, 20 or fewer once duplicates are dropped"
	}
	return ""
}

// checkOffDocument checks a 404 (unknown path), a 405 or, under /_mock/,
// a 403 (the Host and cross-site checks), 401 or 429 (the credentials)
// against the document's Error schema and the headers its responses
// require.
func checkOffDocument(ex *exchange) []string {
	doc, _ := spec()
	var problems []string
	var name string
	switch ex.status {
	case http.StatusNotFound:
		name = "NotFound"
	case http.StatusMethodNotAllowed:
		name = "MethodNotAllowed"
		if ex.header.Get("Allow") == "" {
			problems = append(problems, "405 without Allow")
		}
	case http.StatusForbidden, http.StatusUnauthorized, http.StatusTooManyRequests:
		// The Host, cross-site and credentials checks answer before
		// routing, on any /_mock/ path.
		if !adminapi.IsPath(ex.path) {
			return append(problems, fmt.Sprintf("a %d for a route not in openapi.yaml outside /_mock/", ex.status))
		}
		name = map[int]string{http.StatusForbidden: "AdminRefused", http.StatusUnauthorized: "AdminUnauthorized",
			http.StatusTooManyRequests: "AdminChecksBusy"}[ex.status]
		if ex.status == http.StatusUnauthorized && ex.header.Get("WWW-Authenticate") != access.Challenge {
			problems = append(problems, fmt.Sprintf("401 with WWW-Authenticate %q", ex.header.Get("WWW-Authenticate")))
		}
	default:
		return append(problems, fmt.Sprintf("status %d for a route not in openapi.yaml", ex.status))
	}
	if ct := ex.header.Get("Content-Type"); ct != "application/json" {
		problems = append(problems, fmt.Sprintf("Content-Type %q", ct))
	}
	var v any
	if err := json.Unmarshal(ex.body, &v); err != nil {
		return append(problems, "the body is not JSON")
	}
	resp := doc.Components.Responses[name].Value
	if err := resp.Content.Get("application/json").Schema.Value.VisitJSON(v); err != nil {
		problems = append(problems, fmt.Sprintf("%d body does not match openapi.yaml: %v", ex.status, err))
	}
	return problems
}

// streamChecker checks an event stream as it passes: the status and
// headers against the document when they are written, then each event's
// name and data (MockClock for "hello", MockChange for "change", {} for
// "resync"). What it finds goes to the server's test, as the validator's
// other findings do.
type streamChecker struct {
	w       *recordingWriter
	partial []byte // the unfinished event
	events  int
}

func newStreamChecker(w *recordingWriter) *streamChecker {
	c := &streamChecker{w: w}
	ex := &exchange{method: w.req.Method, path: w.req.URL.Path, rawQuery: w.req.URL.RawQuery, reqHeader: w.req.Header,
		bodyKnown: true, status: w.status, header: w.header}
	for _, p := range checkExchange(w.server, ex) {
		c.report(p)
	}
	return c
}

func (c *streamChecker) report(problem string) {
	exchanges.report(c.w.server, fmt.Sprintf("%s %s (event stream): %s", c.w.req.Method, c.w.req.URL.Path, problem))
}

// check reads the events that b completes.
func (c *streamChecker) check(b []byte) {
	c.partial = append(c.partial, b...)
	for {
		i := bytes.Index(c.partial, []byte("\n\n"))
		if i < 0 {
			return
		}
		c.event(string(c.partial[:i]))
		c.partial = c.partial[i+2:]
	}
}

// end reports an event the stream left unfinished.
func (c *streamChecker) end() {
	if len(bytes.TrimSpace(c.partial)) > 0 {
		c.report(fmt.Sprintf("the stream ended inside an event: %.200q", c.partial))
	}
}

// event checks one event, the lines between two blank ones.
func (c *streamChecker) event(block string) {
	var name, data string
	for line := range strings.SplitSeq(block, "\n") {
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "": // a comment (keep-alive)
		case "retry":
			if c.events > 0 || value != "2000" {
				c.report(fmt.Sprintf("retry %q as event %d", value, c.events))
			}
		case "event":
			name = value
		case "data":
			if data != "" {
				c.report("an event with two data lines: " + block)
			}
			data = value
		default:
			c.report(fmt.Sprintf("unknown field %q in %q", field, block))
		}
	}
	if name == "" && data == "" {
		return
	}
	c.events++
	doc, _ := spec()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		c.report(fmt.Sprintf("event %q: data is not JSON: %q", name, data))
		return
	}
	var schema string
	switch name {
	case "hello":
		schema = "MockClock"
		if c.events != 1 {
			c.report("hello is not the first event")
		}
	case "change":
		schema = "MockChange"
	case "resync":
		if data != "{}" {
			c.report("resync with data " + data)
		}
		return
	default:
		c.report(fmt.Sprintf("unknown event %q", name))
		return
	}
	if err := doc.Components.Schemas[schema].Value.VisitJSON(v); err != nil {
		c.report(fmt.Sprintf("event %q does not match %s: %v\n  data: %s", name, schema, err, data))
	}
}

// loneSurrogate (for the tests: the decoder refuses such escapes) returns the offset in raw, a JSON string literal, of a
// \uXXXX escape of a UTF-16 surrogate that is not half of a pair (a high
// one followed by an escaped low one), or -1 when there is none.
func loneSurrogate(raw []byte) int {
	for i := 0; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j + 1 // the escaped character
		if i >= len(raw) || raw[i] != 'u' {
			continue // \" \\ \n …: one character, skipped by the loop
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			return -1 // malformed: json.Unmarshal refuses it
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return i - 1
		case r >= 0xD800 && r <= 0xDBFF:
			if len(raw) >= i+11 && raw[i+5] == '\\' && raw[i+6] == 'u' {
				if lo, ok := hex4(raw[i+7:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 10 // the pair
					continue
				}
			}
			return i - 1
		}
		i += 4
	}
	return -1
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
