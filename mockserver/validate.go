package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field limits of the contract.
const (
	maxNameRunes   = 200
	maxContentLen  = 1_000_000
	maxTags        = 20
	maxTagRunes    = 50
	maxSecretRunes = 256
	maxURLLen      = 2048
)

// readObject reads a request body (already capped by MaxBytesReader) and
// decodes it into its top-level fields, rejecting anything but a JSON
// object, and any field not in allowed (the first unknown one by name is
// reported). Raw values are kept so each field's type, null and UTF-8 can
// be checked by name.
func readObject(r *http.Request, allowed ...string) (map[string]json.RawMessage, *apiError) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &apiError{status: http.StatusBadRequest, typ: errInvalidRequest, closeConn: true,
				message: "the request body did not arrive in time (the server's read-body time-out)"}
		}
		return nil, &apiError{status: http.StatusBadRequest, typ: errInvalidRequest, closeConn: true,
			message: "could not read the request body"}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, badRequest("", "the request body must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, badRequest("", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se))
		}
		return nil, badRequest("", "malformed JSON: "+err.Error())
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badRequest(unknown[0], fmt.Sprintf("unknown field %q (allowed: %s)", unknown[0], strings.Join(allowed, ", ")))
	}
	for _, k := range allowed {
		if v, ok := fields[k]; ok && string(v) == "null" {
			return nil, badRequest(k, k+" must not be null")
		}
	}
	return fields, nil
}

// decodeString decodes a field that must be a JSON string of valid UTF-8.
func decodeString(field string, raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", badRequest(field, field+" must be a string")
	}
	if !utf8.Valid(raw) {
		return "", badRequest(field, field+" must be valid UTF-8")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badRequest(field, field+" must be a string")
	}
	return s, nil
}

// decodeStrings decodes a field that must be an array of strings.
func decodeStrings(field string, raw json.RawMessage) ([]string, *apiError) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, badRequest(field, field+" must be an array of strings")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest(field, field+" must be an array of strings")
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, e := decodeString(field, it)
		if e != nil {
			e.message = fmt.Sprintf("%s[%d] must be a string of valid UTF-8", field, i)
			return nil, e
		}
		out = append(out, s)
	}
	return out, nil
}

func validName(name string) *apiError {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > maxNameRunes {
		return badRequest("name", fmt.Sprintf("name must be 1 to %d characters, got %d", maxNameRunes, n))
	}
	if strings.TrimFunc(name, unicode.IsSpace) == "" {
		return badRequest("name", "name must not be only white space")
	}
	return nil
}

func validContent(content string) *apiError {
	if len(content) > maxContentLen {
		return badRequest("content", fmt.Sprintf("content must be at most %d bytes, got %d", maxContentLen, len(content)))
	}
	return nil
}

// cleanTags drops duplicates (first kept, order kept) and checks the
// limits; the count limit applies after duplicates are dropped, as that is
// what would be stored. It stops at the first distinct tag past the limit,
// so the duplicate check never scans more than maxTags kept tags: a 2 MiB
// body holds some 300,000 short tags, and checking each against all the
// ones before it took minutes of CPU.
func cleanTags(tags []string) ([]string, *apiError) {
	out := make([]string, 0, min(len(tags), maxTags))
	for _, t := range tags {
		n := utf8.RuneCountInString(t)
		if n < 1 || n > maxTagRunes {
			return nil, badRequest("tags", fmt.Sprintf("each tag must be 1 to %d characters, got %d", maxTagRunes, n))
		}
		if slices.Contains(out, t) {
			continue
		}
		if len(out) == maxTags {
			return nil, badRequest("tags", fmt.Sprintf("at most %d tags (after duplicates are dropped), got more", maxTags))
		}
		out = append(out, t)
	}
	return out, nil
}

// contextFields are the decoded fields of a create or update body; nil
// means absent.
type contextFields struct {
	name, content *string
	tags          []string
	hasTags       bool
}

func decodeContextFields(r *http.Request) (contextFields, int, *apiError) {
	var cf contextFields
	fields, e := readObject(r, "name", "content", "tags")
	if e != nil {
		return cf, 0, e
	}
	if raw, ok := fields["name"]; ok {
		s, e := decodeString("name", raw)
		if e != nil {
			return cf, 0, e
		}
		if e := validName(s); e != nil {
			return cf, 0, e
		}
		cf.name = &s
	}
	if raw, ok := fields["content"]; ok {
		s, e := decodeString("content", raw)
		if e != nil {
			return cf, 0, e
		}
		if e := validContent(s); e != nil {
			return cf, 0, e
		}
		cf.content = &s
	}
	if raw, ok := fields["tags"]; ok {
		l, e := decodeStrings("tags", raw)
		if e != nil {
			return cf, 0, e
		}
		if l, e = cleanTags(l); e != nil {
			return cf, 0, e
		}
		cf.tags, cf.hasTags = l, true
	}
	return cf, len(fields), nil
}
