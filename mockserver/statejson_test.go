package mockserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSONReader holds the state document's JSON reader to encoding/json:
// it accepts exactly the documents json.Valid accepts, and a string it
// reads is the one json.Unmarshal reads (or refused, for invalid UTF-8 or
// a lone surrogate escape, which encoding/json would turn into U+FFFD).
func FuzzJSONReader(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[1,-2.5e+3,true,false,null,"x"]}`, ` {"a" : { "b" : [ ] } } `, `"\u00e9\ud83d\ude00\n\t\\\/\""`,
		`01`, `1.`, `-`, `1e`, `.5`, `+1`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `'x'`, "\"a\x01\"", `"\x"`, `"\u12"`, `tru`, `nul`,
		`[1] [2]`, `"\ud800"`, `"\udc00\ud800x"`, "\"\xff\"", `[[[[]]]]`, `{"a":1}x`, ``, ` `, `"abc`, `{"a":`, `-0.0E-0`, `1E400`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j := newJSONReader(bytes.NewReader(data))
		err := j.skip(0)
		if err == nil {
			err = j.end()
		}
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("%q: the reader says %v, json.Valid %v", data, err, valid)
		}
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '"' || !json.Valid(trimmed) {
			return
		}
		var want string
		if err := json.Unmarshal(trimmed, &want); err != nil {
			t.Fatal(err)
		}
		j = newJSONReader(bytes.NewReader(trimmed))
		got, err := j.str(where{}, "s", -1, strLenient)
		switch {
		case err == nil && got != want:
			t.Fatalf("%q: read %q, encoding/json reads %q", trimmed, got, want)
		case err != nil && utf8.Valid(trimmed) && loneSurrogate(trimmed) < 0:
			t.Fatalf("%q: refused (%v), though valid UTF-8 without a lone surrogate", trimmed, err)
		case err == nil && (!utf8.Valid(trimmed) || loneSurrogate(trimmed) >= 0):
			t.Fatalf("%q: accepted, though invalid UTF-8 or with a lone surrogate", trimmed)
		}
	})
}

// TestJSONReaderErrors: where a document breaks the grammar is said, by
// byte.
func TestJSONReaderErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ doc, msg string }{
		{``, "the document is empty"},
		{`  `, "the document is empty"},
		{`{"a":`, "the document ends early, at byte 5: it was cut short"},
		{`{"a" 1}`, "malformed JSON at byte 5: expected ':' after a key, found '1'"},
		{`[1 2]`, "malformed JSON at byte 4: expected ',' or ']' after an array's element, found '2'"},
		{`"a` + "\n" + `"`, "malformed JSON at byte 2: control character byte 0x0a in a string (it must be escaped)"},
		{`"\q"`, `malformed JSON at byte 3: invalid escape 'q' in a string`},
		{`01`, `malformed JSON at byte 2: invalid number "01"`},
		{`{} {}`, "more data after the document's end, at byte 3"},
		{strings.Repeat("[", maxJSONDepth+2), "nested more than 10000 deep"},
	} {
		j := newJSONReader(strings.NewReader(tc.doc))
		err := j.skip(0)
		if err == nil {
			err = j.end()
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%.40q: %v, want %q", tc.doc, err, tc.msg)
		}
	}
}
