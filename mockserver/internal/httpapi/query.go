package httpapi

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// maxParamEcho bounds how much of a malformed parameter name an error
// repeats.
const maxParamEcho = 100

// CheckQuery refuses a malformed query string with a 400 naming the
// parameter at fault. url.URL.Query drops a pair it cannot decode (a bad
// percent-escape such as cursor=%%%garbage, or a semicolon) without a word,
// so without this check such a request would be served as if the
// parameter were absent: the first page instead of an error. Handlers then
// read r.URL.Query(), which holds every pair.
func CheckQuery(r *http.Request) *Error {
	raw := r.URL.RawQuery
	if raw == "" {
		return nil
	}
	if _, err := url.ParseQuery(raw); err == nil {
		return nil
	}
	// Find the first pair url.ParseQuery refuses, to name its parameter.
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		name, kerr := url.QueryUnescape(key)
		if kerr != nil || name == "" {
			name = key
		}
		if len(name) > maxParamEcho {
			name = name[:maxParamEcho]
		}
		if name == "" {
			name = "(empty)"
		}
		switch _, verr := url.QueryUnescape(value); {
		case strings.Contains(pair, ";"):
			return BadRequest(name, "the query string separates parameters with ';': use '&'")
		case kerr != nil:
			return BadRequest(name, "a query parameter's name has a malformed percent-escape")
		case verr != nil:
			return BadRequest(name, "query parameter "+name+" has a malformed percent-escape")
		}
	}
	return BadRequest("", "the query string is malformed")
}

// UnknownParam returns a 400 naming the first query parameter of r, in
// the order written, that is not one of allowed, saying which the route
// takes: a misspelt or unsupported filter is refused rather than ignored,
// so a list never quietly answers another question than the one asked
// (?order=desc on a list kept in one order). r's query is well formed
// (CheckQuery).
func UnknownParam(r *http.Request, allowed []string) *Error {
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		key, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if slices.Contains(allowed, name) {
			continue
		}
		if len(name) > maxParamEcho {
			name = name[:maxParamEcho]
		}
		takes := "it takes none"
		if len(allowed) > 0 {
			takes = "it takes " + strings.Join(allowed, ", ")
		}
		return BadRequest(name, strconv.Quote(name)+" is not a query parameter of this route: "+takes)
	}
	return nil
}

// ParseVersion reads a version number query parameter: an integer of 1 or
// more, as strconv.Atoi reads it (and the document's "integer" allows). A
// number too large for an int is no version any context has, so it is the
// largest int (a 404), not a 400.
func ParseVersion(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	if errors.Is(err, strconv.ErrRange) && v[0] != '-' {
		return math.MaxInt, true
	}
	return n, err == nil && n >= 1
}
