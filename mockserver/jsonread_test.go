package mockserver

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
)

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

// TestReadObjectFaults: what the decoder refuses in a request body is the
// API's 400, naming the field and saying what is wrong; a body with an
// unknown field is refused for it first, whatever else is wrong.
func TestReadObjectFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, param, msg string
	}{
		{"given twice", `{"name":"a","name":"b"}`, "name", `field "name" is given more than once; give it once`},
		{"invalid UTF-8", "{\"name\":\"a\",\"content\":\"x\xffy\"}", "content", "content must be valid UTF-8"},
		{"lone surrogate", `{"name":"a\ud83dA"}`, "name", `name holds a lone UTF-16 surrogate escape (\ud83d): such a string has no UTF-8 form`},
		{"lone surrogate in a tag", `{"name":"a","tags":["x","\uDC00"]}`, "tags", `tags[1] holds a lone UTF-16 surrogate escape (\uDC00)`},
		{"unknown before twice", `{"name":"a","name":"b","zz":1}`, "zz", `unknown field "zz"`},
		{"unknown before invalid UTF-8", "{\"name\":\"\xff\",\"tilte\":1}", "tilte", `unknown field "tilte"`},
		{"null", `{"name":null}`, "name", "name must not be null"},
		{"cut short", `{"name":`, "", "malformed JSON at byte 8"},
		{"more after the object", `{"name":"a"} {}`, "", "malformed JSON at byte"},
		{"broken", `{"name" "a"}`, "", "malformed JSON at byte"},
	} {
		r := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(tc.body))
		_, e := readObject(r, "name", "content", "tags")
		if e == nil || e.param != tc.param || !strings.Contains(e.message, tc.msg) {
			t.Errorf("%s: %+v, want param %q and %q", tc.name, e, tc.param, tc.msg)
		}
	}
}
