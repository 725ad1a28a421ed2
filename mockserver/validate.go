package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	if bytes.HasPrefix(trimmed, []byte("\ufeff")) {
		return nil, badRequest("", "the request body starts with a byte order mark (U+FEFF): send the JSON object without it")
	}
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
	if name, twice := repeatedField(trimmed, len(fields)); twice {
		return nil, badRequest(name, fmt.Sprintf("field %q is given more than once; give it once", name))
	}
	for _, k := range allowed {
		if v, ok := fields[k]; ok && string(v) == "null" {
			return nil, badRequest(k, k+" must not be null")
		}
	}
	return fields, nil
}

// repeatedField returns the first top-level field of obj, a valid JSON
// object whose fields have n distinct names, that is given more than once
// (names compared after unescaping). encoding/json keeps the last of
// them without a word, so {"content":"new","content":"old"} would store
// "old": such a body is refused instead, as an unknown field is. The scan
// is linear, and skipped when obj cannot hold more than n fields.
func repeatedField(obj []byte, n int) (string, bool) {
	if bytes.Count(obj, []byte{':'}) <= n {
		return "", false // every field has its ':', so there are n of them
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return "", false
	}
	seen := make(map[string]bool, n)
	var skip json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// decodeString decodes a field that must be a JSON string of valid UTF-8
// without control characters (see decodeText).
func decodeString(field string, raw json.RawMessage) (string, *apiError) {
	return decodeJSONString(field, raw, false)
}

// decodeText decodes a field that must be a JSON string of valid UTF-8
// whose only control characters are tab, newline and carriage return: the
// text of a Markdown document.
func decodeText(field string, raw json.RawMessage) (string, *apiError) {
	return decodeJSONString(field, raw, true)
}

// decodeJSONString decodes a JSON string field and refuses what would
// otherwise be stored changed or hard to see: a lone UTF-16 surrogate
// escape ("\ud800", which encoding/json turns into U+FFFD without a word)
// and control characters (Unicode category Cc: C0, DEL and C1), except tab,
// newline and carriage return when text is true. Both scans are linear.
func decodeJSONString(field string, raw json.RawMessage, text bool) (string, *apiError) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", badRequest(field, field+" must be a string")
	}
	if !utf8.Valid(raw) {
		return "", badRequest(field, field+" must be valid UTF-8")
	}
	if at := loneSurrogate(raw); at >= 0 {
		return "", badRequest(field, fmt.Sprintf("%s holds a lone UTF-16 surrogate escape (%s): such a string has no UTF-8 form", field, raw[at:at+6]))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badRequest(field, field+" must be a string")
	}
	for i, r := range s {
		if unicode.IsControl(r) && !(text && (r == '\t' || r == '\n' || r == '\r')) {
			allowed := ""
			if text {
				allowed = " other than tab, newline and carriage return"
			}
			return "", badRequest(field, fmt.Sprintf("%s must not contain control characters%s (%U at byte %d)", field, allowed, r, i))
		}
	}
	return s, nil
}

// loneSurrogate returns the offset in raw, a JSON string literal, of a
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

// decodeInteger decodes a field that must be a JSON number with an integer
// value (5, 5.0 and 5e0 alike, as JSON Schema's "integer" takes them) from
// min to max.
func decodeInteger(field string, raw json.RawMessage, minimum, maximum int) (int, *apiError) {
	msg := fmt.Sprintf("%s must be a whole number from %d to %d", field, minimum, maximum)
	var f float64
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &f) != nil {
		return 0, badRequest(field, msg)
	}
	if f != math.Trunc(f) || f < float64(minimum) || f > float64(maximum) {
		return 0, badRequest(field, msg)
	}
	return int(f), nil
}

// decodeStrings decodes a field that must be an array of strings, each as
// decodeString takes it.
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
		s, e := decodeString(fmt.Sprintf("%s[%d]", field, i), it)
		if e != nil {
			e.param = field
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
	for i, t := range tags {
		n := utf8.RuneCountInString(t)
		if n < 1 || n > maxTagRunes {
			return nil, badRequest("tags", fmt.Sprintf("tags[%d] must be 1 to %d characters, got %d", i, maxTagRunes, n))
		}
		if slices.Contains(out, t) {
			continue
		}
		if len(out) == maxTags {
			return nil, badRequest("tags", fmt.Sprintf("at most %d tags (after duplicates are dropped), got %d", maxTags, distinctCount(tags)))
		}
		out = append(out, t)
	}
	return out, nil
}

// distinctCount counts the distinct strings of l, in linear time.
func distinctCount(l []string) int {
	seen := make(map[string]struct{}, len(l))
	for _, s := range l {
		seen[s] = struct{}{}
	}
	return len(seen)
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
		s, e := decodeText("content", raw)
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
