package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// FuzzOpenAPIRequests makes requests from openapi.yaml's own schemas, for
// every operation: a valid one (every parameter and body field drawn from
// its schema) must be accepted (a 2xx, or a status the document gives for
// what no schema decides: 404 for an unknown id, 409 or 503 for a
// redelivery the closed engine cannot make, 409 for an event resent to a
// webhook that cannot take it); an invalid one (one thing in
// a valid request broken so that the document forbids it) must get the
// contract's 400 invalid_request naming that parameter or field, and
// leave the server exactly as it was. Every exchange also goes through the
// validating wrapper. The seed corpus (each operation, valid and broken a
// few ways) runs as an ordinary test.
func FuzzOpenAPIRequests(f *testing.F) {
	ops := fuzzOperations(f)
	for i := range ops {
		for mode := range uint8(4) {
			f.Add(uint64(1000*i)+uint64(mode), uint8(i), mode)
		}
	}
	f.Fuzz(func(t *testing.T, seed uint64, opIndex, mode uint8) {
		op := ops[int(opIndex)%len(ops)]
		r := rand.New(rand.NewPCG(seed, uint64(opIndex)<<8|uint64(mode)))
		fx := newFuzzServer(t)
		req, ok := fx.build(t, op, r)
		if !ok {
			t.Fatalf("%s: could not draw a valid request", op.id)
		}
		wantParam := ""
		if mode > 0 {
			if wantParam, ok = fx.breakRequest(t, op, req, r); !ok {
				return // nothing in this operation a schema can forbid
			}
		}
		before := fx.state()
		status, detail := fx.send(req)
		t.Logf("%s %.200s (%s): %d %s", req.method, req.target(), cmpOr(req.broken, "valid"), status, detail.Param)
		if mode == 0 {
			switch {
			case status >= 200 && status <= 299, status == http.StatusNotFound: // an unknown id or version
			case op.id == "mockRedeliver" && status == http.StatusServiceUnavailable: // the engine is closed
			case op.id == "mockAdvanceClock" && status == http.StatusConflict: // toNextDue, and no attempt waits (the engine is closed)
			case op.id == "mockResendEvent" && status == http.StatusConflict: // a webhook that cannot take the event, or none that can
			default:
				t.Fatalf("%s %s (valid): %d %s: %s\nbody: %s", req.method, req.target(), status, detail.Param, detail.Message, req.body)
			}
			return
		}
		if status != http.StatusBadRequest || detail.Type != "invalid_request" || detail.Param != wantParam {
			t.Fatalf("%s %s (invalid: %s): %d %s param %q, want 400 invalid_request param %q\nbody: %.300s",
				req.method, req.target(), req.broken, status, detail.Type, detail.Param, wantParam, req.body)
		}
		if diff := cmp.Diff(before, fx.state()); diff != "" {
			t.Fatalf("%s %s (invalid: %s) changed the server (-before +after):\n%s", req.method, req.target(), req.broken, diff)
		}
	})
}

// fuzzOp is one operation of the document.
type fuzzOp struct {
	id, method, path string
	op               *openapi3.Operation
	params           []*openapi3.Parameter
}

func fuzzOperations(tb testing.TB) []fuzzOp {
	doc, err := spec()
	if err != nil {
		tb.Fatal(err)
	}
	var ops []fuzzOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "mockStream" {
				continue // it never ends; TestStream* check it
			}
			fo := fuzzOp{id: op.OperationID, method: method, path: path, op: op}
			for _, ps := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range ps {
					fo.params = append(fo.params, p.Value)
				}
			}
			ops = append(ops, fo)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops
}

// fuzzServer is a server with a little of everything: a context with
// versions, a webhook, events and deliveries. Its delivery engine is
// closed, so a webhook the fuzzer registers is never called.
type fuzzServer struct {
	s        *Server
	key      string
	account  string
	context  string
	delivery string
	webhook  string
}

func newFuzzServer(t *testing.T) *fuzzServer {
	s := New(WithClock(NewFakeClock(dlvT0)), WithKey(Key{Token: "fuzz", Plan: PlanUnlimited}))
	exchanges.bind(t, s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	fx := &fuzzServer{s: s, key: "fuzz", account: s.DefaultKey().Account}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/webhooks", `{"url":"https://hooks.example.com/in","events":["context.created","context.updated"],"secret":"s"}`},
		{"POST", "/v1/contexts", `{"name":"Runbook","content":"# One\n\ntext","tags":["ops"]}`},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptestRequest(c.method, c.path, c.body, fx.key))
		if rec.Code/100 != 2 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
	fx.context = s.Snapshot().Contexts[0].ID
	for _, body := range []string{`{"content":"# Two\n\nmore text"}`, `{"tags":["ops","db"]}`} {
		s.ServeHTTP(httptest.NewRecorder(), httptestRequest("PUT", "/v1/contexts/"+fx.context, body, fx.key))
	}
	fx.delivery = s.Deliveries(DeliveryFilter{})[0].ID
	fx.webhook = s.Webhooks()[0].ID
	return fx
}

// fuzzState is what an invalid request must leave as it was.
type fuzzState struct {
	Snap       Snapshot
	Events     []Event
	Deliveries []Delivery
	Faults     []Fault
	Now        time.Time
}

func (fx *fuzzServer) state() fuzzState {
	return fuzzState{fx.s.Snapshot(), fx.s.Events(), fx.s.Deliveries(DeliveryFilter{}), fx.s.Faults(), fx.s.Clock().Now()}
}

// fuzzRequest is a request being drawn.
type fuzzRequest struct {
	method, path string
	query        []queryPair
	body         []byte // nil: none
	hasBody      bool
	randomID     bool   // a path id that names nothing
	broken       string // what breakRequest broke
}

type queryPair struct{ name, value string }

func (q *fuzzRequest) target() string {
	if len(q.query) == 0 {
		return q.path
	}
	parts := make([]string, len(q.query))
	for i, p := range q.query {
		parts[i] = url.QueryEscape(p.name) + "=" + url.QueryEscape(p.value)
	}
	return q.path + "?" + strings.Join(parts, "&")
}

func (fx *fuzzServer) send(req *fuzzRequest) (int, httpapi.ErrorDetail) {
	hr := httptestRequest(req.method, req.target(), "", fx.key)
	if req.hasBody {
		hr = httptestRequest(req.method, req.target(), string(req.body), fx.key)
		if len(req.body) == 0 {
			hr.Body = http.NoBody
		}
	}
	rec := httptest.NewRecorder()
	fx.s.ServeHTTP(rec, hr)
	var e httpapi.ErrorBody
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return rec.Code, e.Error
}

// cursorKinds gives each paged operation its cursor kind, to mint cursors
// the server would have issued.
var cursorKinds = map[string]byte{
	"listContexts": httpapi.CursorContexts, "listVersions": httpapi.CursorVersions, "mockListEvents": httpapi.CursorEvents,
	"mockListDeliveries": httpapi.CursorDeliveries, "mockListFaults": httpapi.CursorFaults, "mockListWebhooks": httpapi.CursorWebhooks,
	"mockListAccounts": httpapi.CursorAccounts, "mockListContexts": httpapi.CursorAdminContexts, "mockListContextVersions": httpapi.CursorContextVersions,
	"mockListContractMismatches": httpapi.CursorContract,
}

// listScopeOf names the list that a request of op (with the path id id
// and the query query) reads, as the server scopes its cursors: the
// account and the distinct tags in any order, the account and the
// context, or the admin list's filters (and its order, when newest
// first).
func (fx *fuzzServer) listScopeOf(op, id string, query []queryPair) string {
	scope := fx.unorderedScopeOf(op, id, query)
	for _, q := range query {
		if q.name == "order" && q.value == "desc" {
			return scope + "\x00desc"
		}
	}
	return scope
}

// unorderedScopeOf is listScopeOf before the order.
func (fx *fuzzServer) unorderedScopeOf(op, id string, query []queryPair) string {
	var values []string
	first := func(name string) string {
		for _, q := range query {
			if q.name == name {
				return q.value
			}
		}
		return ""
	}
	switch op {
	case "listContexts":
		for _, q := range query {
			if q.name == "tag" && !slices.Contains(values, q.value) {
				values = append(values, q.value)
			}
		}
		slices.Sort(values)
		return httpapi.ListScope(append([]string{fx.account}, values...)...)
	case "listVersions":
		return httpapi.ListScope(fx.account, id)
	case "mockListEvents":
		return httpapi.ListScope(first("type"), first("account"))
	case "mockListDeliveries":
		return httpapi.ListScope(first("eventId"), first("webhookId"), first("state"), first("account"), first("type"))
	case "mockListWebhooks", "mockListContexts":
		return httpapi.ListScope(first("account"))
	case "mockListContextVersions":
		return httpapi.ListScope(id)
	case "mockListContractMismatches":
		return httpapi.ListScope(first("operation"))
	}
	return ""
}

// build draws a valid request of op.
func (fx *fuzzServer) build(t *testing.T, op fuzzOp, r *rand.Rand) (*fuzzRequest, bool) {
	req := &fuzzRequest{method: op.method, path: op.path}
	var pathID string
	withCursor := false
	for _, p := range op.params {
		switch {
		case p.In == openapi3.ParameterInPath:
			id := fx.context
			switch {
			case strings.HasPrefix(op.path, "/_mock/deliveries/"):
				id = fx.delivery
			case strings.HasPrefix(op.path, "/_mock/webhooks/"):
				id = fx.webhook
			}
			if r.IntN(4) == 0 {
				// Any segment names nothing, and is a 404; one with a '/'
				// or a dot segment would be another path.
				id, req.randomID = url.PathEscape(genMatchingPattern(`^[A-Za-z0-9_~é日-]{1,30}$`, r)), true
			}
			pathID, _ = url.PathUnescape(id)
			req.path = strings.Replace(req.path, "{"+p.Name+"}", id, 1)
		case p.Name == "cursor":
			withCursor = r.IntN(2) == 0
		case p.Required || r.IntN(2) == 0:
			v, ok := drawValid(p.Schema.Value, r)
			if !ok {
				return nil, false
			}
			req.query = append(req.query, queryValues(p.Name, v)...)
		}
	}
	if withCursor {
		// Minted once the filters are drawn: a cursor continues only its
		// own list.
		scope := fx.listScopeOf(op.id, pathID, req.query)
		req.query = append(req.query, queryPair{"cursor", fx.s.svc.Cursors.Encode(cursorKinds[op.id], uint64(r.IntN(5)), scope)})
	}
	if op.op.RequestBody == nil {
		return req, true
	}
	if op.id == "mockReplaceState" {
		// A state document's fields refer to one another (ids unique,
		// versions numbered, deliveries naming events and webhooks, accounts
		// the server's), which no schema says: the valid document is the
		// server's own, not one drawn from the schema.
		var b bytes.Buffer
		if err := fx.s.SaveState(&b); err != nil {
			t.Fatal(err)
		}
		req.body = b.Bytes()
	} else {
		schema := op.op.RequestBody.Value.Content.Get("application/json").Schema.Value
		v, ok := drawValid(schema, r)
		if !ok {
			return nil, false
		}
		if m, ok := v.(map[string]any); ok && op.id == "mockEmitEvent" && m["account"] != nil {
			m["account"] = fx.account // the document cannot know the server's accounts
		}
		req.body, _ = json.Marshal(v)
	}
	req.hasBody = true
	if !fx.docValid(t, op, req) {
		return nil, false
	}
	return req, true
}

// queryValues serializes a drawn value as the form style does.
func queryValues(name string, v any) []queryPair {
	if a, ok := v.([]any); ok {
		var out []queryPair
		for _, it := range a {
			out = append(out, queryPairs(name, it))
		}
		return out
	}
	return []queryPair{queryPairs(name, v)}
}

func queryPairs(name string, v any) queryPair {
	switch x := v.(type) {
	case float64:
		return queryPair{name, strconv.FormatFloat(x, 'f', -1, 64)}
	case string:
		return queryPair{name, x}
	}
	return queryPair{name, fmt.Sprint(v)}
}

// docValid reports whether the document allows req (contract's
// Spec.CheckRequest, as the validator and the proxy hold requests to it).
func (fx *fuzzServer) docValid(t *testing.T, op fuzzOp, req *fuzzRequest) bool {
	path, rawQuery, _ := strings.Cut(req.target(), "?")
	mismatches := checkRequest(&exchange{method: req.method, path: path, rawQuery: rawQuery,
		reqHeader: http.Header{}, reqBody: req.body})
	return len(mismatches) == 0 && (!req.hasBody || json.Valid(req.body))
}

// breakRequest changes one thing in a valid request so that the document
// forbids it, and returns the param the server's 400 must name.
func (fx *fuzzServer) breakRequest(t *testing.T, op fuzzOp, req *fuzzRequest, r *rand.Rand) (string, bool) {
	type target struct {
		name   string
		schema *openapi3.Schema
		query  bool
	}
	var targets []target
	for _, p := range op.params {
		if p.In == openapi3.ParameterInQuery && p.Name != "cursor" {
			targets = append(targets, target{p.Name, p.Schema.Value, true})
		}
	}
	var bodySchema *openapi3.Schema
	if op.op.RequestBody != nil {
		bodySchema = op.op.RequestBody.Value.Content.Get("application/json").Schema.Value
		targets = append(targets, target{"", bodySchema, false})
		for name, p := range objectProperties(bodySchema) {
			targets = append(targets, target{name, p, false})
		}
	}
	if len(targets) == 0 {
		return "", false
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	orig := *req
	for range 20 {
		*req = orig
		req.query = slices.Clone(orig.query)
		tg := targets[r.IntN(len(targets))]
		var param string
		switch {
		case tg.query:
			v, how := drawInvalid(tg.schema, r)
			req.query = slices.DeleteFunc(req.query, func(p queryPair) bool { return p.name == tg.name })
			if how == "empty" {
				req.query = append(req.query, queryPair{tg.name, ""})
			} else {
				req.query = append(req.query, queryValues(tg.name, v)...)
			}
			param, req.broken = tg.name, "query "+tg.name+": "+how
		case tg.name == "":
			var body any
			_ = json.Unmarshal(orig.body, &body)
			m, _ := body.(map[string]any)
			switch k := r.IntN(4); {
			case k == 0:
				req.body, req.broken = []byte([]string{`[]`, `"text"`, `42`, `null`, `true`}[r.IntN(5)]), "body not an object"
			case k == 1 && len(bodySchema.Required) > 0:
				name := bodySchema.Required[r.IntN(len(bodySchema.Required))]
				delete(m, name)
				req.body, _ = json.Marshal(m)
				param, req.broken = name, "missing "+name
			case k == 2 && bodySchema.MinProps > 0:
				// What the document forbids by minProperties alone: where
				// a field is required, {} is "missing" it (k == 1), and the
				// server names it.
				req.body, req.broken = []byte(`{}`), "empty object"
			default:
				m["zz_unknown"] = 1
				req.body, _ = json.Marshal(m)
				param, req.broken = "zz_unknown", "unknown field"
			}
		default:
			var body map[string]any
			_ = json.Unmarshal(orig.body, &body)
			if _, present := body[tg.name]; !present && hasOneOf(bodySchema) {
				continue // adding a field would also break "exactly one of"
			}
			v, how := drawInvalid(tg.schema, r)
			body[tg.name] = v
			req.body, _ = json.Marshal(body)
			param, req.broken = tg.name, tg.name+": "+how
		}
		if !fx.docValid(t, op, req) {
			return param, true
		}
	}
	return "", false
}

func hasOneOf(s *openapi3.Schema) bool {
	if len(s.OneOf) > 0 {
		return true
	}
	for _, sub := range s.AllOf {
		if hasOneOf(sub.Value) {
			return true
		}
	}
	return false
}

// objectProperties returns the properties of an object schema, through
// allOf, and those of each branch of a oneOf or anyOf of objects.
func objectProperties(s *openapi3.Schema) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	for name, p := range s.Properties {
		out[name] = p.Value
	}
	for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
		for name, p := range objectProperties(sub.Value) {
			out[name] = p
		}
	}
	return out
}

// branches returns the branches of a schema that is only a choice of
// schemas (a oneOf or anyOf with nothing beside it), or nil.
func branches(s *openapi3.Schema) openapi3.SchemaRefs {
	if len(s.Properties) > 0 || len(s.AllOf) > 0 || s.Type != nil && len(s.Type.Slice()) > 0 {
		return nil
	}
	return slices.Concat(s.OneOf, s.AnyOf)
}

// drawValid draws a value the schema allows (checked with kin-openapi),
// trying a few times.
func drawValid(s *openapi3.Schema, r *rand.Rand) (any, bool) {
	for range 100 {
		v := draw(s, r)
		if s.VisitJSON(v) == nil {
			return v, true
		}
	}
	return nil, false
}

// draw draws a value from the schema's type, bounds, enum and pattern;
// drawValid rejects the few that break its other rules.
func draw(s *openapi3.Schema, r *rand.Rand) any {
	if b := branches(s); len(b) > 0 {
		return draw(b[r.IntN(len(b))].Value, r)
	}
	if len(s.AllOf) > 0 {
		return draw(s.AllOf[0].Value, r)
	}
	if len(s.Enum) > 0 {
		return s.Enum[r.IntN(len(s.Enum))]
	}
	switch {
	case s.Type.Is("string"):
		return drawString(s, r)
	case s.Type.Is("integer"), s.Type.Is("number"):
		lo, hi := -1000.0, 1000.0
		if s.Min != nil {
			lo = *s.Min
			hi = lo + 1000
		}
		if s.Max != nil {
			hi = *s.Max
			if s.Min == nil {
				lo = hi - 1000
			}
		}
		// The bounds themselves are the likeliest to be wrong.
		switch r.IntN(4) {
		case 0:
			return lo
		case 1:
			return hi
		}
		v := lo + math.Floor(r.Float64()*(hi-lo+1))
		if s.Type.Is("number") && r.IntN(2) == 0 {
			v = math.Min(hi, v+0.5)
		}
		return v
	case s.Type.Is("boolean"):
		return r.IntN(2) == 0
	case s.Type.Is("array"):
		lo, hi := int(s.MinItems), 6
		if s.MaxItems != nil {
			hi = min(int(*s.MaxItems), lo+21)
		}
		out := make([]any, lo+r.IntN(hi-lo+1))
		for i := range out {
			out[i] = draw(s.Items.Value, r)
		}
		return out
	case s.Type.Is("object"):
		m := map[string]any{}
		props := objectProperties(s)
		if len(props) == 0 {
			if r.IntN(2) == 0 {
				m["k"] = randomText(r, 0, 10)
			}
			return m
		}
		exclude := map[string]bool{}
		include := slices.Clone(s.Required)
		// An object needing exactly one of some fields (oneOf of
		// required lists) gets one branch's.
		if len(s.OneOf) > 0 {
			pick := r.IntN(len(s.OneOf))
			for i, b := range s.OneOf {
				for _, name := range b.Value.Required {
					if i == pick {
						include = append(include, name)
					} else {
						exclude[name] = true
					}
				}
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !exclude[name] && (slices.Contains(include, name) || r.IntN(2) == 0) {
				m[name] = draw(props[name], r)
			}
		}
		return m
	}
	return nil
}

// drawString draws from the pattern when there is one, else from a mixed
// alphabet, within the length bounds.
func drawString(s *openapi3.Schema, r *rand.Rand) string {
	lo, hi := int(s.MinLength), int(s.MinLength)+12
	if s.MaxLength != nil {
		hi = min(int(*s.MaxLength), lo+60)
	}
	var out string
	switch {
	case s.Pattern == "":
		out = randomText(r, lo, hi)
	case strings.HasPrefix(s.Pattern, "^"):
		out = genMatchingPattern(s.Pattern, r)
	default: // unanchored: somewhere in the string
		out = randomText(r, 0, 3) + genMatchingPattern(s.Pattern, r) + randomText(r, 0, 3)
	}
	if s.MaxLength != nil && uint64(utf8.RuneCountInString(out)) > *s.MaxLength {
		out = string([]rune(out)[:*s.MaxLength])
	}
	return out
}

// genMatchingPattern draws a string matching a document pattern.
func genMatchingPattern(pattern string, r *rand.Rand) string {
	return genMatching(nopTB{}, goRegexp(pattern), r)
}

// goRegexp is a document pattern (written for ECMA 262) as a Go regexp:
// \uXXXX escapes become Go's \x{XXXX}, as kin-openapi does.
func goRegexp(pattern string) string {
	re := strings.NewReplacer(`\u`, `\x{`).Replace(pattern)
	// \x{XXXX needs its closing brace after the four digits.
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		b.WriteByte(re[i])
		if strings.HasPrefix(re[i:], `\x{`) {
			b.WriteString(re[i+1 : i+7])
			b.WriteByte('}')
			i += 6
		}
	}
	return b.String()
}

// nopTB is the testing.TB genMatching needs, for patterns known to parse.
type nopTB struct{ testing.TB }

func (nopTB) Helper()           {}
func (nopTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// randomText draws lo to hi characters from ASCII letters, digits,
// punctuation and space, and a few others (accented, CJK, an emoji, a
// no-break space).
func randomText(r *rand.Rand, lo, hi int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.~!#$&'()*+,/:;=?@[]{}|<>\"\\%`^éß日本😀\u00a0"
	runes := []rune(alphabet)
	n := lo
	if hi > lo {
		n += r.IntN(hi - lo + 1)
	}
	var b strings.Builder
	for range n {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// drawInvalid draws a value the schema forbids, and says how (or "empty"
// for a query parameter sent with no value).
func drawInvalid(s *openapi3.Schema, r *rand.Rand) (any, string) {
	for {
		switch k := r.IntN(8); {
		case k == 0:
			return nil, "null"
		case k == 1:
			return "empty", "empty"
		case k == 2 && s.Type != nil && len(s.Type.Slice()) > 0 && !s.Type.Is("string"):
			return "not a " + s.Type.Slice()[0], "wrong type"
		case k == 2 && s.Type.Is("string"):
			return 7.0, "wrong type"
		case k == 3 && len(s.Enum) > 0:
			return "zz-not-one-of-them", "not in the enum"
		case k == 4 && s.Type.Is("string") && (s.Pattern != "" || s.Not != nil):
			return "a\u0007 b\n", "breaks the pattern"
		case k == 5 && s.Type.Is("string") && s.MaxLength != nil && *s.MaxLength < 10000:
			return strings.Repeat("x", int(*s.MaxLength)+1), "too long"
		case k == 5 && s.Type.Is("string") && s.MinLength > 0:
			return "", "too short"
		case k == 6 && (s.Type.Is("integer") || s.Type.Is("number")) && s.Min != nil:
			return *s.Min - 1, "below the minimum"
		case k == 6 && (s.Type.Is("integer") || s.Type.Is("number")) && s.Max != nil:
			return *s.Max + 1, "above the maximum"
		case k == 7 && s.Type.Is("integer"):
			return 1.5, "not a whole number"
		case k == 7 && s.Type.Is("array") && s.MaxItems != nil:
			out := make([]any, *s.MaxItems+1)
			for i := range out {
				out[i] = fmt.Sprint("t", i)
			}
			return out, "too many items"
		case k == 7 && s.Type.Is("array"):
			v, how := drawInvalid(s.Items.Value, r)
			if how == "empty" {
				continue
			}
			return []any{v}, "an item " + how
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
