package jsonwire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzAppendJSONString checks the string quoting against encoding/json:
// byte for byte on valid UTF-8; on invalid UTF-8 (which no stored string
// holds), where Go releases differ (1.26 writes each bad byte as \ufffd,
// 1.27 as a literal U+FFFD), what it writes is valid JSON that decodes to
// what encoding/json decodes its own output to.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80", "\U0001F600", `\ufffd`, "\ufffd\xff", "\\\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatalf("appendJSONString(%q) lost what dst held", s)
		}
		got = got[1:]
		// Byte for byte what the JSON library's encoder writes, invalid
		// UTF-8 included: the state file was written by it.
		var lib bytes.Buffer
		enc := jsontext.NewEncoder(&lib, jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true), jsontext.AllowInvalidUTF8(true))
		if err := enc.WriteToken(jsontext.String(s)); err != nil {
			t.Fatal(err)
		}
		if want := bytes.TrimSuffix(lib.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, the library's encoder %s", s, got, want)
		}
		if utf8.ValidString(s) {
			if string(got) != string(want) {
				t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
			}
			return
		}
		var gotS, wantS string
		if err := json.Unmarshal(got, &gotS); err != nil || !utf8.Valid(got) {
			t.Fatalf("appendJSONString(%q) = %s: not valid JSON of valid UTF-8 (%v)", s, got, err)
		}
		if err := json.Unmarshal(want, &wantS); err != nil || gotS != wantS {
			t.Fatalf("appendJSONString(%q) = %s decodes to %q; encoding/json's %s to %q", s, got, gotS, want, wantS)
		}
	})
}

// TestAppendJSONTime checks the fast timestamp writer against formatTime.
func TestAppendJSONTime(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{
		time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", -7*3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		if got, want := string(AppendTime(nil, at)), `"`+FormatTime(at)+`"`; got != want {
			t.Errorf("%v: %s, want %s", at, got, want)
		}
	}
}
