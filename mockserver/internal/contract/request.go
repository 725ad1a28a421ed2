package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// CheckRequest lists how ex's request breaks the document: a path or
// method it does not serve, a parameter (path, query or header) that its
// schema refuses or that is required and missing, a query parameter given
// an empty value (OpenAPI forbids it unless the parameter allows it), and
// a body that is missing where the operation requires one, is not one JSON
// value in UTF-8, or does not match its schema (every way, each with the
// schema it breaks). The body is read as JSON whatever its Content-Type,
// as the API reads it. ex.RequestBody must be the whole body; the answer's
// fields are not looked at. Rules stated in the document's words only
// (an Idempotency-Key used before with another body, a cursor the server
// did not issue) are for the caller to hold the request to.
func (s *Spec) CheckRequest(ex *Exchange) []Mismatch {
	route, params, err := s.router.FindRoute(&http.Request{Method: ex.Method,
		URL: &url.URL{Path: ex.Path, RawQuery: ex.RawQuery}, Header: http.Header{}})
	if err != nil || route == nil {
		return []Mismatch{{Where: "request", Rule: "#/paths",
			Message: fmt.Sprintf("the document has no %s %s", ex.Method, ex.Path)}}
	}
	op := route.Operation
	opRule := pointer("paths", route.Path, strings.ToLower(route.Method))
	req := &http.Request{Method: ex.Method, URL: &url.URL{Path: ex.Path, RawQuery: ex.RawQuery},
		Header: ex.RequestHeader.Clone(), Body: http.NoBody}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	var out []Mismatch
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		out = append(out, s.parameterMismatches(err, route.PathItem.Parameters, op.Parameters, opRule)...)
	}
	for _, m := range emptyQueryValues(route.PathItem.Parameters, op.Parameters, opRule, ex.RawQuery) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return append(out, checkRequestBody(op.RequestBody, opRule, ex.RequestBody)...)
}

// parameterMismatches turns ValidateRequest's errors about parameters into
// mismatches, each naming the parameter's place in the document (its
// $ref, or its index under the path or the operation) and the keyword of
// its schema broken.
func (s *Spec) parameterMismatches(err error, pathParams, opParams openapi3.Parameters, opRule string) []Mismatch {
	var errs []error
	var me openapi3.MultiError
	if errors.As(err, &me) {
		errs = me
	} else {
		errs = []error{err}
	}
	var out []Mismatch
	for _, e := range errs {
		var re *openapi3filter.RequestError
		if !errors.As(e, &re) || re.Parameter == nil {
			out = append(out, Mismatch{Where: "request", Rule: opRule, Message: e.Error()})
			continue
		}
		p := re.Parameter
		where := p.In + " " + p.Name
		rule := paramRule(p, pathParams, opParams, opRule)
		schemaErrs := schemaErrors(re.Err)
		if len(schemaErrs) == 0 || p.Schema == nil {
			msg := re.Reason
			if msg == "" && re.Err != nil {
				msg = re.Err.Error()
			}
			switch {
			case errors.Is(re.Err, openapi3filter.ErrInvalidEmptyValue):
				rule += "/allowEmptyValue"
				msg = "an empty value"
			case errors.Is(re.Err, openapi3filter.ErrInvalidRequired) || msg == "":
				rule += "/required"
				msg = "required, and missing"
			}
			out = append(out, Mismatch{Where: where, Rule: rule, Message: msg})
			continue
		}
		for _, se := range schemaErrs {
			srule := rule + "/schema"
			if p.Schema.Ref != "" {
				srule = p.Schema.Ref
			}
			out = append(out, Mismatch{Where: where, Rule: schemaRule(p.Schema, srule, se.JSONPointer(), se.SchemaField), Message: reason(se)})
		}
	}
	return out
}

// paramRule is where a parameter is declared: its $ref, or its place in
// the path item's or the operation's list.
func paramRule(p *openapi3.Parameter, pathParams, opParams openapi3.Parameters, opRule string) string {
	for i, ref := range opParams {
		if ref.Value == p {
			if ref.Ref != "" {
				return ref.Ref
			}
			return opRule + "/parameters/" + strconv.Itoa(i)
		}
	}
	for i, ref := range pathParams {
		if ref.Value == p {
			if ref.Ref != "" {
				return ref.Ref
			}
			// The path item's rule: the operation's without its method.
			return opRule[:strings.LastIndexByte(opRule, '/')] + "/parameters/" + strconv.Itoa(i)
		}
	}
	return opRule + "/parameters"
}

// emptyQueryValues reports each query parameter sent with an empty value
// ("limit="), which OpenAPI forbids unless the parameter says
// allowEmptyValue, and kin-openapi lets through.
func emptyQueryValues(pathParams, opParams openapi3.Parameters, opRule, rawQuery string) []Mismatch {
	q, _ := url.ParseQuery(rawQuery)
	var out []Mismatch
	for _, ps := range []openapi3.Parameters{pathParams, opParams} {
		for _, ref := range ps {
			p := ref.Value
			if p == nil || p.In != openapi3.ParameterInQuery || p.AllowEmptyValue {
				continue
			}
			for _, v := range q[p.Name] {
				if v == "" {
					out = append(out, Mismatch{Where: "query " + p.Name, Rule: paramRule(p, pathParams, opParams, opRule) + "/allowEmptyValue",
						Message: "an empty value"})
					break
				}
			}
		}
	}
	return out
}

// checkRequestBody holds a request's body to the operation's requestBody.
func checkRequestBody(ref *openapi3.RequestBodyRef, opRule string, body []byte) []Mismatch {
	if ref == nil || ref.Value == nil {
		return nil
	}
	rule := opRule + "/requestBody"
	if ref.Ref != "" {
		rule = ref.Ref
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if ref.Value.Required {
			return []Mismatch{{Where: "body", Rule: rule + "/required", Message: "required, and missing"}}
		}
		return nil
	}
	media := ref.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil || media.Schema.Value == nil {
		return nil
	}
	brule := rule + "/content/application~1json/schema"
	if !utf8.Valid(body) {
		return []Mismatch{{Where: "body", Rule: brule, Message: "not UTF-8"}}
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return []Mismatch{{Where: "body", Rule: brule, Message: "not JSON: " + err.Error()}}
	}
	return visitAs(media.Schema, brule, "body", value, openapi3.VisitAsRequest())
}

// reason is a schema error's message.
func reason(se *openapi3.SchemaError) string {
	if se.Reason != "" {
		return se.Reason
	}
	return se.Error()
}
