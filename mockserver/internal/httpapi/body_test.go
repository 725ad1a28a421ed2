package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

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
		_, e := ReadObject(r, "name", "content", "tags")
		if e == nil || e.Param != tc.param || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %+v, want param %q and %q", tc.name, e, tc.param, tc.msg)
		}
	}
}
