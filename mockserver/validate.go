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
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
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
// reported). Raw values are kept so each field's type and null can be
// checked by name; the JSON library's decoder has checked the rest: the
// grammar, a field given twice, invalid UTF-8 and lone UTF-16 surrogate
// escapes ("\ud800", which would otherwise be stored as U+FFFD without a
// word), anywhere in the body.
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
	fields, err := objectFields(trimmed, false)
	if err != nil {
		return nil, bodyFault(trimmed, err, allowed)
	}
	if e := unknownField(fields, allowed); e != nil {
		return nil, e
	}
	for _, k := range allowed {
		if v, ok := fields[k]; ok && string(v) == "null" {
			return nil, badRequest(k, k+" must not be null")
		}
	}
	return fields, nil
}

// objectFields reads obj, a JSON object, into its top-level fields. The
// values alias obj (the decoder reads a bytes.Buffer in place). lenient
// takes names given twice (the last value kept) and invalid UTF-8, to
// list the names of a body refused for them.
func objectFields(obj []byte, lenient bool) (map[string]json.RawMessage, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(obj), jsontext.AllowDuplicateNames(lenient), jsontext.AllowInvalidUTF8(lenient))
	if _, err := dec.ReadToken(); err != nil { // '{', as the caller saw
		return nil, err
	}
	fields := make(map[string]json.RawMessage)
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		fields[name] = json.RawMessage(v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, &jsontext.SyntacticError{ByteOffset: dec.InputOffset(), Err: errors.New("more data after the object")}
	}
	return fields, nil
}

// unknownField refuses the first field not in allowed, by name.
func unknownField(fields map[string]json.RawMessage, allowed []string) *apiError {
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return badRequest(unknown[0], fmt.Sprintf("unknown field %q (allowed: %s)", unknown[0], strings.Join(allowed, ", ")))
}

// bodyFault turns the decoder's refusal of obj into the API's error. A
// body refused for a field given twice or for a string's bytes is refused
// for an unknown or null field first, as one read whole would be: its
// names are listed again, leniently.
func bodyFault(obj []byte, err error, allowed []string) *apiError {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return badRequest("", "malformed JSON: "+err.Error())
	}
	fault := jsonwire.StringFault(se)
	if se.Err == jsontext.ErrDuplicateName || fault != "" {
		if fields, lerr := objectFields(obj, true); lerr == nil {
			if e := unknownField(fields, allowed); e != nil {
				return e
			}
		}
	}
	param := ""
	for tok := range se.JSONPointer.Tokens() {
		param = tok // the top-level field the fault is in
		break
	}
	switch {
	case se.Err == jsontext.ErrDuplicateName:
		return badRequest(param, fmt.Sprintf("field %q is given more than once; give it once", param))
	case fault != "":
		_, label := jsonwire.ValuePlace(se.JSONPointer)
		return badRequest(param, label+fault)
	case jsonwire.IsCutShort(se):
		return badRequest("", fmt.Sprintf("malformed JSON at byte %d: the body ends inside a value", len(obj)))
	}
	return badRequest("", fmt.Sprintf("malformed JSON at byte %d: %v", se.ByteOffset, se.Err))
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

// decodeJSONString decodes a JSON string field the decoder has read (so of
// valid UTF-8, without a lone surrogate escape), and refuses control
// characters (Unicode category Cc: C0, DEL and C1), except tab, newline
// and carriage return when text is true. The scan is linear.
func decodeJSONString(field string, raw json.RawMessage, text bool) (string, *apiError) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", badRequest(field, field+" must be a string")
	}
	b := []byte(raw[1 : len(raw)-1]) // the text itself when it holds no escape: the string below is its one copy
	if bytes.IndexByte(b, '\\') >= 0 {
		var err error
		if b, err = jsontext.AppendUnquote(nil, raw); err != nil {
			return "", badRequest(field, field+" must be valid UTF-8")
		}
	}
	if !utf8.Valid(b) {
		return "", badRequest(field, field+" must be valid UTF-8")
	}
	kind := jsonwire.StrPlain
	if text {
		kind = jsonwire.StrText
	}
	if at, r := jsonwire.ControlChar(b, text); at >= 0 {
		return "", badRequest(field, field+jsonwire.ControlMessage(kind, at, r))
	}
	return string(b), nil
}

// decodeInteger decodes a field that must be a JSON number with an integer
// value (5, 5.0 and 5e0 alike, as JSON Schema's "integer" takes them) from
// min to max.
func decodeInteger(field string, raw json.RawMessage, minimum, maximum int) (int, *apiError) {
	msg := fmt.Sprintf("%s must be a whole number from %d to %d", field, minimum, maximum)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, badRequest(field, msg)
	}
	// A JSON number the decoder has read: ParseFloat takes its grammar.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
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
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	if _, err := dec.ReadToken(); err != nil {
		return nil, badRequest(field, field+" must be an array of strings")
	}
	var out []string
	for i := 0; dec.PeekKind() != ']'; i++ {
		it, err := dec.ReadValue()
		if err != nil {
			return nil, badRequest(field, field+" must be an array of strings")
		}
		s, e := decodeString(fmt.Sprintf("%s[%d]", field, i), json.RawMessage(it))
		if e != nil {
			e.param = field
			return nil, e
		}
		out = append(out, s)
	}
	if out == nil {
		out = []string{}
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
