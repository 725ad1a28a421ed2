package httpapi

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
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// MaxBody is the contract's request body limit (2 MiB); past it a request
// is a 413 and the rest of the body is not read.
const MaxBody = 2 << 20

// TooLarge is the 413 of a body past MaxBody.
func TooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Type: TypePayloadTooLarge,
		Message: "request body exceeds 2 MiB"}
}

// ReadObject reads a request body (already capped by MaxBytesReader) and
// decodes it into its top-level fields, rejecting anything but a JSON
// object, and any field not in allowed (the first unknown one by name is
// reported). Raw values are kept so each field's type and null can be
// checked by name; the JSON library's decoder has checked the rest: the
// grammar, a field given twice, invalid UTF-8 and lone UTF-16 surrogate
// escapes ("\ud800", which would otherwise be stored as U+FFFD without a
// word), anywhere in the body.
func ReadObject(r *http.Request, allowed ...string) (map[string]json.RawMessage, *Error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, TooLarge()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, CloseConn: true,
				Message: "the request body did not arrive in time (the server's read-body time-out)"}
		}
		return nil, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, CloseConn: true,
			Message: "could not read the request body"}
	}
	trimmed := bytes.TrimSpace(body)
	if bytes.HasPrefix(trimmed, []byte("\ufeff")) {
		return nil, BadRequest("", "the request body starts with a byte order mark (U+FEFF): send the JSON object without it")
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, BadRequest("", "the request body must be a JSON object")
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
			return nil, BadRequest(k, k+" must not be null")
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
func unknownField(fields map[string]json.RawMessage, allowed []string) *Error {
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
	return BadRequest(unknown[0], fmt.Sprintf("unknown field %q (allowed: %s)", unknown[0], strings.Join(allowed, ", ")))
}

// bodyFault turns the decoder's refusal of obj into the API's error. A
// body refused for a field given twice or for a string's bytes is refused
// for an unknown or null field first, as one read whole would be: its
// names are listed again, leniently.
func bodyFault(obj []byte, err error, allowed []string) *Error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return BadRequest("", "malformed JSON: "+err.Error())
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
		return BadRequest(param, fmt.Sprintf("field %q is given more than once; give it once", param))
	case fault != "":
		_, label := jsonwire.ValuePlace(se.JSONPointer)
		return BadRequest(param, label+fault)
	case jsonwire.IsCutShort(se):
		return BadRequest("", fmt.Sprintf("malformed JSON at byte %d: the body ends inside a value", len(obj)))
	}
	return BadRequest("", fmt.Sprintf("malformed JSON at byte %d: %v", se.ByteOffset, se.Err))
}

// DecodeString decodes a field that must be a JSON string of valid UTF-8
// without control characters (see decodeText).
func DecodeString(field string, raw json.RawMessage) (string, *Error) {
	return decodeJSONString(field, raw, false)
}

// DecodeText decodes a field that must be a JSON string of valid UTF-8
// whose only control characters are tab, newline and carriage return: the
// text of a Markdown document.
func DecodeText(field string, raw json.RawMessage) (string, *Error) {
	return decodeJSONString(field, raw, true)
}

// decodeJSONString decodes a JSON string field the decoder has read (so of
// valid UTF-8, without a lone surrogate escape), and refuses control
// characters (Unicode category Cc: C0, DEL and C1), except tab, newline
// and carriage return when text is true. The scan is linear.
func decodeJSONString(field string, raw json.RawMessage, text bool) (string, *Error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", BadRequest(field, field+" must be a string")
	}
	b := []byte(raw[1 : len(raw)-1]) // the text itself when it holds no escape: the string below is its one copy
	if bytes.IndexByte(b, '\\') >= 0 {
		var err error
		if b, err = jsontext.AppendUnquote(nil, raw); err != nil {
			return "", BadRequest(field, field+" must be valid UTF-8")
		}
	}
	if !utf8.Valid(b) {
		return "", BadRequest(field, field+" must be valid UTF-8")
	}
	kind := jsonwire.StrPlain
	if text {
		kind = jsonwire.StrText
	}
	if at, r := jsonwire.ControlChar(b, text); at >= 0 {
		return "", BadRequest(field, field+jsonwire.ControlMessage(kind, at, r))
	}
	return string(b), nil
}

// DecodeInteger decodes a field that must be a JSON number with an integer
// value (5, 5.0 and 5e0 alike, as JSON Schema's "integer" takes them) from
// min to max.
func DecodeInteger(field string, raw json.RawMessage, minimum, maximum int) (int, *Error) {
	msg := fmt.Sprintf("%s must be a whole number from %d to %d", field, minimum, maximum)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, BadRequest(field, msg)
	}
	// A JSON number the decoder has read: ParseFloat takes its grammar.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, BadRequest(field, msg)
	}
	if f != math.Trunc(f) || f < float64(minimum) || f > float64(maximum) {
		return 0, BadRequest(field, msg)
	}
	return int(f), nil
}

// DecodeStrings decodes a field that must be an array of strings, each as
// decodeString takes it.
func DecodeStrings(field string, raw json.RawMessage) ([]string, *Error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, BadRequest(field, field+" must be an array of strings")
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	if _, err := dec.ReadToken(); err != nil {
		return nil, BadRequest(field, field+" must be an array of strings")
	}
	var out []string
	for i := 0; dec.PeekKind() != ']'; i++ {
		it, err := dec.ReadValue()
		if err != nil {
			return nil, BadRequest(field, field+" must be an array of strings")
		}
		s, e := DecodeString(fmt.Sprintf("%s[%d]", field, i), json.RawMessage(it))
		if e != nil {
			e.Param = field
			return nil, e
		}
		out = append(out, s)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}
