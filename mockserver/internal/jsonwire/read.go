// Package jsonwire is how the mock server reads and writes JSON, for both
// of its APIs and its state document: strings and times appended as the
// contract writes them (AppendString, AppendTime, FormatTime), pooled
// buffers for answers, and what the strict readers (request bodies and
// the state document, both on github.com/go-json-experiment/json, whose
// decoder refuses what the API refuses: a name given twice, invalid
// UTF-8, a lone UTF-16 surrogate escape, anything past the grammar) share
// to turn its errors into the API's words, naming the field by its place
// (a JSON pointer made into "accounts[0].contexts[3].name").
//
// It owns the JSON spelling and the wording of JSON faults; which fields a
// document has, and their rules, are its callers'. It imports nothing of
// the mock server.
package jsonwire

import (
	"errors"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// String kinds: what a string may hold besides valid UTF-8.
const (
	StrPlain   = iota // no control characters (names, tags, ids, urls)
	StrText           // no control characters but tab, newline, carriage return (content)
	StrLenient        // any character (a receiver's answer, a heading's text)
)

// ControlChar returns the offset and rune of the first control character
// (Unicode Cc: C0, DEL, C1) of valid UTF-8 b, but tab, newline and
// carriage return when text is true; -1 when there is none. C1 is U+0080
// to U+009F, encoded 0xC2 0x80 to 0xC2 0x9F.
func ControlChar[S ~[]byte | ~string](b S, text bool) (int, rune) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c < 0x20:
			if !text || (c != '\t' && c != '\n' && c != '\r') {
				return i, rune(c)
			}
		case c == 0x7F:
			return i, rune(c)
		case c == 0xC2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9F:
			return i, rune(b[i+1])
		}
	}
	return -1, 0
}

// ControlMessage is the API's message for a control character at byte at
// of a string of kind (strPlain or strText), after the field's label.
func ControlMessage(kind int, at int, r rune) string {
	allowed := ""
	if kind == StrText {
		allowed = " other than tab, newline and carriage return"
	}
	return " must not contain control characters" + allowed + " (" + formatRune(r) + " at byte " + strconv.Itoa(at) + ")"
}

// formatRune is fmt's %U.
func formatRune(r rune) string {
	s := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for len(s) < 4 {
		s = "0" + s
	}
	return "U+" + s
}

// UnquoteInto appends the text of v, a JSON string the decoder has read
// (so valid), to dst; v's bytes are used as they are when it holds no
// escape.
func UnquoteInto(dst []byte, v jsontext.Value) []byte {
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' {
			dst, _ = jsontext.AppendUnquote(dst, v)
			return dst
		}
	}
	return append(dst, body...)
}

// PointerPath turns a JSON pointer into the path the API's errors name:
// "/accounts/0/contexts/3/name" is "accounts[0].contexts[3].name". A
// token of digits only is an array index (no object of the API has such
// a member name).
func PointerPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if isIndex(tok) {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ValuePlace is where an error about the value at p is reported: the
// field's path and its label in the message. A member "/a/name" is path
// "a.name", label "name"; an element "/a/tags/2" is path "a.tags" (the
// field holding it), label "tags[2]".
func ValuePlace(p jsontext.Pointer) (path, label string) {
	last := p.LastToken()
	if isIndex(last) && p != "" {
		parent := p.Parent()
		return PointerPath(parent), parent.LastToken() + "[" + last + "]"
	}
	return PointerPath(p), last
}

// ReadingPlace is ValuePlace for the value the decoder is at: the one it
// has just read (read) or the one it reads next.
func ReadingPlace(dec *jsontext.Decoder, read bool) (path, label string) {
	p := dec.StackPointer()
	if kind, n := dec.StackIndex(dec.StackDepth()); kind == '[' && !read {
		p = p.AppendToken(strconv.FormatInt(n, 10))
	}
	return ValuePlace(p)
}

// surrogateEscape finds the \uXXXX escape a decoder's error names.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F][0-9a-fA-F]{2}`)

// errInvalidUTF8 is the decoder's error for invalid UTF-8 (not exported
// by the library: taken from it once).
var errInvalidUTF8 = func() error {
	_, err := jsontext.NewDecoder(strings.NewReader("\"\xff\"")).ReadToken()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}()

// StringFault says what is wrong with a string the decoder refused for
// what it holds (invalid UTF-8, a lone surrogate escape), after the
// field's label; "" when the fault is another.
func StringFault(se *jsontext.SyntacticError) string {
	if se.Err == errInvalidUTF8 {
		return " must be valid UTF-8"
	}
	msg := se.Err.Error()
	if strings.HasPrefix(msg, "invalid surrogate pair") || strings.HasPrefix(msg, "invalid escape sequence") {
		if esc := surrogateEscape.FindString(msg); esc != "" {
			return " holds a lone UTF-16 surrogate escape (" + esc + "): such a string has no UTF-8 form"
		}
	}
	return ""
}

// memberNames lists the JSON names of struct type t's fields, for a
// message about a member that is none of them.
func memberNames(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	var names []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// UnknownMember reports whether err is the decoder's refusal of a member
// RejectUnknownMembers does not allow, with where and the allowed names.
func UnknownMember(err error) (p jsontext.Pointer, allowed string, ok bool) {
	var me *json.SemanticError
	if errors.As(err, &me) && errors.Is(me.Err, json.ErrUnknownName) {
		return me.JSONPointer, memberNames(me.GoType), true
	}
	return "", "", false
}

// IsCutShort reports whether err is the decoder's for input that ends
// inside a value.
func IsCutShort(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }
