package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// FuzzStateString holds the state reader's strings to encoding/json: a
// JSON string it accepts is the one json.Unmarshal reads, and it refuses
// exactly the strings of invalid UTF-8 or with a lone surrogate escape,
// which json.Unmarshal would turn into U+FFFD without a word. A value
// that is no string is refused, a malformed one with a syntax error.
func FuzzStateString(f *testing.F) {
	for _, s := range []string{
		`"x"`, `""`, `"\u00e9\ud83d\ude00\n\t\\\/\""`, `"\ud800"`, `"\udc00\ud800x"`, `"\ud800\u0041"`, "\"\xff\"", "\"caf\xc3\"",
		`"\ufffd"`, "\"\xef\xbf\xbd\"", `"a\u0000b"`, "\"\u0085\"", `"tab\there"`, `5`, `null`, `[]`, `{}`, `"abc`, `"\x"`, `"\u12"`,
		"\"a\x01\"", ` "padded" `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j := newJSONReader(bytes.NewReader(data))
		got, err := j.str(where{}, "s", -1, strLenient)
		if err == nil {
			err = j.end()
		}
		trimmed := bytes.TrimSpace(data)
		var want string
		switch {
		case !json.Valid(data):
			if err == nil {
				t.Fatalf("%q: not JSON, yet read as %q", data, got)
			}
		case len(trimmed) == 0 || trimmed[0] != '"':
			if err == nil {
				t.Fatalf("%q: no string, yet read as %q", data, got)
			}
		case json.Unmarshal(trimmed, &want) != nil:
			t.Fatalf("%q: json.Valid, yet not a string", data)
		case !utf8.Valid(trimmed) || loneSurrogate(trimmed) >= 0:
			if err == nil {
				t.Fatalf("%q: accepted as %q, though invalid UTF-8 or with a lone surrogate", data, got)
			}
		case err != nil:
			t.Fatalf("%q: refused (%v), though valid UTF-8 without a lone surrogate", data, err)
		case got != want:
			t.Fatalf("%q: read %q, encoding/json reads %q", data, got, want)
		}
	})
}

// TestStateStringKinds: the kinds of str refuse the control characters
// the API refuses in names and in content, wherever they come from (an
// escape or the raw byte), and say where; interned strings are one copy.
func TestStateStringKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		kind int
		msg  string // "" when accepted
	}{
		{`"plain"`, strPlain, ""},
		{`"a\tb"`, strPlain, "s must not contain control characters (U+0009 at byte 1)"},
		{`"a\tb\n"`, strText, ""},
		{`"a\u0007b"`, strText, "other than tab, newline and carriage return (U+0007 at byte 1)"},
		{"\"a\u0085\"", strPlain, "(U+0085 at byte 1)"},
		{"\"a\x7f\"", strText, "(U+007F at byte 1)"},
		{`"a\u0007"`, strLenient, ""},
		{`null`, strPlain, "must not be null"},
		{`["x"]`, strPlain, "s must be a string"},
	} {
		_, err := newJSONReader(strings.NewReader(tc.doc)).str(where{base: "f"}, "s", -1, tc.kind)
		if (tc.msg == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s (kind %d): %v, want %q", tc.doc, tc.kind, err, tc.msg)
		}
	}
	j := newJSONReader(strings.NewReader(`["user_x","user_x","us\u0065r_x"]`))
	var got []string
	if err := j.elements("a", func() error { return errors.New("not an array") }, func(int) error {
		s, err := j.str(where{}, "a", 0, strPlain|strIntern)
		got = append(got, s)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "user_x" || got[1] != "user_x" || got[2] != "user_x" ||
		unsafe.StringData(got[1]) != unsafe.StringData(got[0]) || unsafe.StringData(got[2]) != unsafe.StringData(got[0]) || len(j.interned) != 1 {
		t.Errorf("interned: %q, %d kept", got, len(j.interned))
	}
}

// TestJSONReaderErrors: a document that breaks JSON's grammar is refused
// saying so, by byte (encoding/json's offset and words, which are not
// pinned here: they may change from one Go release to the next); one that
// ends early says it was cut short, and where it ends.
func TestJSONReaderErrors(t *testing.T) {
	t.Parallel()
	s := New(stateKeys...)
	for _, tc := range []struct{ doc, msg string }{
		{``, "the document is empty"},
		{"  \n", "the document is empty"},
		{`{"format":`, "the document ends early, at byte 10: it was cut short"},
		{`{"format":"contextsvc-mock-st`, "the document ends early, at byte 29: it was cut short"},
		{`{"format" 1}`, "malformed JSON at byte "},
		{`{"format":"contextsvc-mock-state","version":1,"accounts":[{"id" "acme"}]}`, "malformed JSON at byte "},
		{`{"format":"contextsvc-mock-state","version":1,"accounts":[],}`, "malformed JSON at byte"},
		{"{\"format\":\"a\nb\"}", "malformed JSON at byte "},
		{`{"format":"\q"}`, "malformed JSON at byte "},
		{`{"format":"contextsvc-mock-state","version":1,"eventSeq":01}`, "malformed JSON at byte"},
		{`{"format":"contextsvc-mock-state","version":1} {}`, "more data after the document's end, at byte 46"},
		{`{"format":"contextsvc-mock-state","version":1}]`, "more data after the document's end, at byte 46"},
		{`{"format":"contextsvc-mock-state","version":1,"events":[{"id":` + strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001) + `}]}`, "exceeded max depth"},
	} {
		_, err := s.readState(strings.NewReader(tc.doc), false)
		var se *StateError
		if !errors.As(err, &se) || se.Path != "" || !strings.Contains(se.Message, tc.msg) {
			t.Errorf("%.60q: %v, want %q", tc.doc, err, tc.msg)
		}
	}
}
