package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Exchange is one recorded request and its answer.
type Exchange struct {
	// Method is the request's method.
	Method string
	// Path is the request's path as the document names it: from its /v1
	// segment on ("/v1/contexts/ctx_…"), whatever comes before it in the
	// base URL (see [APIPath]).
	Path string
	// RawQuery is the request's query, without the "?".
	RawQuery string
	// RequestHeader holds the request's headers (never its Authorization).
	RequestHeader http.Header
	// RequestBody is the request's body, possibly cut short.
	RequestBody []byte
	// Status, Header and Body are the answer's.
	Status int
	Header http.Header
	Body   []byte
}

// Target returns the path and query, e.g. "/v1/contexts?limit=1".
func (ex *Exchange) Target() string {
	if ex.RawQuery == "" {
		return ex.Path
	}
	return ex.Path + "?" + ex.RawQuery
}

// APIPath returns the path of a request as the document names it: the part
// of requestPath from the base path's last "/v1" segment on. basePath is
// the base URL's path ("/api/v1"); a requestPath outside it is returned as
// it is.
func APIPath(basePath, requestPath string) string {
	basePath = strings.TrimSuffix(basePath, "/")
	prefix := strings.TrimSuffix(basePath, "/v1")
	if prefix == basePath || !strings.HasPrefix(requestPath, basePath) {
		return requestPath
	}
	return requestPath[len(prefix):]
}

// Mismatch is one way an answer breaks the OpenAPI document.
type Mismatch struct {
	// Where is the part of the answer: "status", "header X-Request-Id",
	// "body", "body /data/0/id", "event /data/version".
	Where string `json:"where"`
	// Rule is where in the document the rule broken is, as a JSON pointer
	// into it with the schema keyword last, e.g.
	// "#/components/schemas/ContextID/pattern".
	Rule string `json:"rule"`
	// Message says how the answer breaks it.
	Message string `json:"message"`
}

// String formats the mismatch as "where: message (rule)".
func (m Mismatch) String() string {
	if m.Rule == "" {
		return m.Where + ": " + m.Message
	}
	return m.Where + ": " + m.Message + " (" + m.Rule + ")"
}

// Spec is the OpenAPI document, loaded and validated, ready to check
// answers against. It is safe for concurrent use.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadSpec loads and validates an OpenAPI 3 document (the mock server's,
// mockserver.OpenAPI()).
func LoadSpec(document []byte) (*Spec, error) {
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("contract: loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("contract: the OpenAPI document is invalid: %w", err)
	}
	// The document's server is the mock command's default address; route
	// on paths alone, whatever server the answers come from.
	routed := *doc
	routed.Servers = nil
	r, err := legacy.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("contract: routing the OpenAPI document: %w", err)
	}
	return &Spec{doc: doc, router: r}, nil
}

// Operation returns the operation id of method and path (a path as the
// document names it, see [APIPath]), or "" when the document has no such
// operation.
func (s *Spec) Operation(method, path string) string {
	route, _ := s.route(method, path)
	if route == nil {
		return ""
	}
	return route.Operation.OperationID
}

func (s *Spec) route(method, path string) (*routers.Route, error) {
	req := &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}}
	route, _, err := s.router.FindRoute(req)
	return route, err
}

// CheckOptions tunes [Spec.CheckResponse].
type CheckOptions struct {
	// SkipHeaders are headers not to check (a caller that checks them
	// across all its answers at once, say).
	SkipHeaders []string
	// AsStatus, when not 0, checks the headers and body against the
	// document's answer of this status instead of the answer's own (for a
	// 200 where the contract says 201, say).
	AsStatus int
}

// CheckResponse lists how ex's answer breaks the document: a status the
// operation does not declare, a declared header missing or malformed, a
// Content-Type it does not list, a body that does not match its schema
// (every way, each with the schema it breaks). An answer for a path or
// method the document does not serve must be its NotFound or
// MethodNotAllowed answer. The document's "default" answers (the mock's
// injected faults) are not taken as declaring every status.
func (s *Spec) CheckResponse(ex *Exchange, opts CheckOptions) []Mismatch {
	status := ex.Status
	if opts.AsStatus != 0 {
		status = opts.AsStatus
	}
	route, err := s.route(ex.Method, ex.Path)
	if err != nil || route == nil {
		return s.checkOffDocument(ex, status, opts)
	}
	op := route.Operation
	ref := op.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			// The legacy router is lenient about methods on a known path.
			return s.checkOffDocument(ex, status, opts)
		}
		return []Mismatch{{Where: "status", Rule: pointer("paths", route.Path, strings.ToLower(route.Method), "responses"),
			Message: fmt.Sprintf("%s does not answer %d (it declares %s)", op.OperationID, status, declared(op.Responses))}}
	}
	rule := pointer("paths", route.Path, strings.ToLower(route.Method), "responses", strconv.Itoa(status))
	if ref.Ref != "" {
		rule = ref.Ref
	}
	return s.checkAnswer(ex, ref.Value, rule, opts)
}

// Declares reports whether the document's answer to ex (its operation and
// status) declares the header: whether the document puts it on such an
// answer.
func (s *Spec) Declares(ex *Exchange, header string) bool {
	route, err := s.route(ex.Method, ex.Path)
	if err != nil || route == nil {
		return false
	}
	ref := route.Operation.Responses.Status(ex.Status)
	if ref == nil || ref.Value == nil {
		return false
	}
	for name := range ref.Value.Headers {
		if strings.EqualFold(name, header) {
			return true
		}
	}
	return false
}

// declared lists the statuses an operation declares, without "default".
func declared(rs *openapi3.Responses) string {
	var out []string
	for code := range rs.Map() {
		if code != "default" {
			out = append(out, code)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// checkOffDocument checks an answer for a route the document does not have:
// only a 404 (an unknown path) or a 405 (a method the path does not serve)
// may answer it.
func (s *Spec) checkOffDocument(ex *Exchange, status int, opts CheckOptions) []Mismatch {
	name := ""
	switch status {
	case http.StatusNotFound:
		name = "NotFound"
	case http.StatusMethodNotAllowed:
		name = "MethodNotAllowed"
	default:
		return []Mismatch{{Where: "status", Rule: "#/paths",
			Message: fmt.Sprintf("the document has no %s %s, so only a 404 or a 405 may answer it, not %d", ex.Method, ex.Path, status)}}
	}
	ref := s.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return []Mismatch{{Where: "status", Rule: "#/components/responses", Message: "the document has no " + name + " answer"}}
	}
	return s.checkAnswer(ex, ref.Value, "#/components/responses/"+name, opts)
}

// checkAnswer checks headers, Content-Type and body against one answer of
// the document; rule is where that answer is.
func (s *Spec) checkAnswer(ex *Exchange, resp *openapi3.Response, rule string, opts CheckOptions) []Mismatch {
	var out []Mismatch
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if slices.ContainsFunc(opts.SkipHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
			continue
		}
		h := resp.Headers[name]
		hrule := rule + "/headers/" + escape(name)
		if h.Ref != "" {
			hrule = h.Ref
		}
		out = append(out, checkHeader(h.Value, name, ex.Header.Values(name), hrule)...)
	}
	if len(resp.Content) == 0 {
		return out
	}
	ct := ex.Header.Get("Content-Type")
	media := resp.Content.Get(ct)
	if media == nil {
		var listed []string
		for k := range resp.Content {
			listed = append(listed, k)
		}
		slices.Sort(listed)
		return append(out, Mismatch{Where: "header Content-Type", Rule: rule + "/content",
			Message: fmt.Sprintf("%q is none of %s", ct, strings.Join(listed, ", "))})
	}
	if media.Schema == nil || media.Schema.Value == nil {
		return out
	}
	mt, _, _ := mime.ParseMediaType(ct)
	brule := rule + "/content/" + escape(mt) + "/schema"
	var value any
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		if err := json.Unmarshal(ex.Body, &value); err != nil {
			return append(out, Mismatch{Where: "body", Rule: brule, Message: "not JSON: " + err.Error()})
		}
	case strings.HasPrefix(mt, "text/"):
		value = string(ex.Body)
	default:
		return out // a binary document: nothing a schema can say
	}
	return append(out, visit(media.Schema, brule, "body", value)...)
}

// checkHeader checks the values of one header against its declaration.
func checkHeader(h *openapi3.Header, name string, values []string, rule string) []Mismatch {
	where := "header " + name
	if len(values) == 0 {
		if h.Required {
			return []Mismatch{{Where: where, Rule: rule + "/required", Message: "missing"}}
		}
		return nil
	}
	if len(values) > 1 {
		return []Mismatch{{Where: where, Rule: rule, Message: fmt.Sprintf("given %d times", len(values))}}
	}
	if h.Schema == nil || h.Schema.Value == nil {
		return nil
	}
	var value any = values[0]
	if h.Schema.Value.Type.Is("integer") || h.Schema.Value.Type.Is("number") {
		f, err := strconv.ParseFloat(strings.TrimSpace(values[0]), 64)
		if err != nil {
			return []Mismatch{{Where: where, Rule: rule + "/schema/type", Message: fmt.Sprintf("%q is not a number", values[0])}}
		}
		value = f
	}
	return visit(h.Schema, rule+"/schema", where, value)
}

// visit validates value against a schema and turns each failure into a
// Mismatch naming the schema it breaks.
func visit(ref *openapi3.SchemaRef, rule, where string, value any) []Mismatch {
	return visitAs(ref, rule, where, value, openapi3.VisitAsResponse())
}

// visitAs is visit for an answer (openapi3.VisitAsResponse) or a request
// (openapi3.VisitAsRequest): readOnly and writeOnly properties differ.
func visitAs(ref *openapi3.SchemaRef, rule, where string, value any, as openapi3.SchemaValidationOption) []Mismatch {
	err := ref.Value.VisitJSON(value, openapi3.MultiErrors(), as)
	if err == nil {
		return nil
	}
	if ref.Ref != "" {
		rule = ref.Ref
	}
	var out []Mismatch
	for _, se := range schemaErrors(err) {
		ptr := se.JSONPointer()
		w := where
		if len(ptr) > 0 {
			w += " /" + strings.Join(ptr, "/")
		}
		out = append(out, Mismatch{Where: w, Rule: schemaRule(ref, rule, ptr, se.SchemaField), Message: reason(se)})
	}
	if len(out) == 0 {
		out = append(out, Mismatch{Where: where, Rule: rule, Message: err.Error()})
	}
	return out
}

// schemaErrors flattens what VisitJSON returns into its schema errors.
func schemaErrors(err error) []*openapi3.SchemaError {
	switch e := err.(type) {
	case openapi3.MultiError:
		var out []*openapi3.SchemaError
		for _, inner := range e {
			out = append(out, schemaErrors(inner)...)
		}
		return out
	case *openapi3.SchemaError:
		return []*openapi3.SchemaError{e}
	}
	return nil
}

// schemaRule follows a value's JSON pointer down a schema (properties,
// items, additionalProperties, through $refs) and returns where the schema
// that holds the failed keyword is in the document, with the keyword last.
// A missing property's pointer names the property; its "required" is its
// parent's. A property no schema allows is refused by its parent's
// additionalProperties.
func schemaRule(ref *openapi3.SchemaRef, rule string, ptr []string, field string) string {
	if field == "required" && len(ptr) > 0 {
		ptr = ptr[:len(ptr)-1]
	}
	cur := ref
	for _, seg := range ptr {
		if cur == nil || cur.Value == nil {
			break
		}
		var next *openapi3.SchemaRef
		var step string
		switch {
		case cur.Value.Properties[seg] != nil:
			next, step = cur.Value.Properties[seg], "/properties/"+escape(seg)
		case cur.Value.Items != nil && isIndex(seg):
			next, step = cur.Value.Items, "/items"
		case cur.Value.AdditionalProperties.Schema != nil:
			next, step = cur.Value.AdditionalProperties.Schema, "/additionalProperties"
		default:
			cur = nil
			continue
		}
		if next.Ref != "" {
			rule = next.Ref
		} else {
			rule += step
		}
		cur = next
	}
	if field == "properties" && cur != nil && cur.Value != nil && cur.Value.AdditionalProperties.Has != nil && !*cur.Value.AdditionalProperties.Has {
		field = "additionalProperties"
	}
	if field != "" {
		rule += "/" + field
	}
	return rule
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// pointer builds a JSON pointer into the document from its segments.
func pointer(segs ...string) string {
	var b strings.Builder
	b.WriteString("#")
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escape(s))
	}
	return b.String()
}

// pointerEscapes are RFC 6901's escapes, made once: a Replacer is built
// on its first use, and a new one per call cost most of a check.
var pointerEscapes = strings.NewReplacer("~", "~0", "/", "~1")

// escape escapes one JSON pointer segment (RFC 6901).
func escape(s string) string { return pointerEscapes.Replace(s) }

// CheckEvent lists how a delivered event envelope breaks the document: the
// schema of its type ([Event].Schema; the Event schema is their oneOf),
// each mismatch with the schema it breaks. An event type the contract does
// not know is a mismatch.
func (s *Spec) CheckEvent(body []byte) []Mismatch {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return []Mismatch{{Where: "event", Rule: "#/components/schemas/Event", Message: "not JSON: " + err.Error()}}
	}
	var env struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &env)
	for _, e := range Events() {
		if string(e.Type) == env.Type {
			return s.visitComponent(e.Schema, "event", value)
		}
	}
	return []Mismatch{{Where: "event /type", Rule: "#/components/schemas/Event/discriminator",
		Message: fmt.Sprintf("%q is not an event type of the contract", env.Type)}}
}

func (s *Spec) visitComponent(name, where string, value any) []Mismatch {
	ref := s.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return []Mismatch{{Where: where, Rule: "#/components/schemas", Message: "the document has no schema " + name}}
	}
	return visit(&openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: ref.Value}, "#/components/schemas/"+name, where, value)
}

// CheckHeaderValue checks a header value against the header the document
// declares under components/headers (X-Request-Id, say); a header it does
// not declare there is a mismatch.
func (s *Spec) CheckHeaderValue(name, value string) []Mismatch {
	ref := s.doc.Components.Headers[name]
	if ref == nil || ref.Value == nil {
		return []Mismatch{{Where: "header " + name, Rule: "#/components/headers", Message: "the document does not declare it"}}
	}
	return checkHeader(ref.Value, name, []string{value}, "#/components/headers/"+escape(name))
}
