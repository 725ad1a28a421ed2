package mockserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonReader reads the state document (stateread.go) with encoding/json's
// Decoder, as a stream: Token walks the objects and arrays, so each key is
// seen (an unknown one, one given twice and a null are refused, which
// json.Unmarshal into structs would let pass), and each scalar is decoded
// into one reused json.RawMessage, so a string's bytes are checked before
// they are unquoted (json.Unmarshal would turn invalid UTF-8 and lone
// surrogate escapes into U+FFFD without a word). Only the value being read
// is held, never the document. BenchmarkState and BENCHMARKS.md compare it
// with the hand-written reader it replaced.
type jsonReader struct {
	dec *json.Decoder
	in  *countedReader
	raw json.RawMessage // the value read last, reused
	// started is set once a token has been read: an end of the stream
	// before it is an empty document, after it one cut short.
	started bool
	// interned holds the strings read with strIntern, each once: user
	// ids, tags and section names repeat across thousands of versions.
	interned map[string]string
}

// maxInterned bounds the interned strings.
const maxInterned = 100_000

// countedReader counts the bytes read, so that a document cut short is
// reported with its length, and keeps those the decoder has not yet
// consumed (and a little more), so that a string's bytes can be checked
// as they came: encoding/json decodes invalid UTF-8 and lone surrogate
// escapes into U+FFFD without a word.
type countedReader struct {
	r   io.Reader
	n   int64  // bytes read
	buf []byte // the last bytes read: from n-len(buf) to n
}

func (c *countedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.buf = append(c.buf, p[:n]...)
	return n, err
}

// between returns the bytes read from offset from to offset to.
func (c *countedReader) between(from, to int64) []byte {
	base := c.n - int64(len(c.buf))
	return c.buf[from-base : to-base]
}

// forget drops the bytes before offset off once they are most of what is
// kept, so that keeping them costs one copy of each byte at most.
func (c *countedReader) forget(off int64) {
	if k := int(off - (c.n - int64(len(c.buf)))); k > len(c.buf)/2 && k > 64<<10 {
		c.buf = c.buf[:copy(c.buf, c.buf[k:])]
	}
}

func newJSONReader(r io.Reader) *jsonReader {
	// The decoder reads in small pieces once its buffer is nearly full: a
	// large buffer under it keeps those reads off the file system.
	switch br, ok := r.(*bufio.Reader); {
	case ok && br.Size() >= 64<<10:
	case isInMemory(r):
	default:
		r = bufio.NewReaderSize(r, 256<<10)
	}
	in := &countedReader{r: r}
	return &jsonReader{dec: json.NewDecoder(in), in: in}
}

// isInMemory reports whether reads of r cost no system call.
func isInMemory(r io.Reader) bool {
	switch r.(type) {
	case *bytes.Reader, *bytes.Buffer:
		return true
	}
	return false
}

// fail turns an error of the decoder into a StateError: a syntax error
// says at which byte, the end of the stream says the document is empty or
// cut short. Another read error is returned as it is.
func (j *jsonReader) fail(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return stateErr("", "malformed JSON at byte %d: %s", se.Offset, se.Error())
	case (err == io.EOF || err == io.ErrUnexpectedEOF) && !j.started:
		return stateErr("", "the document is empty")
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return stateErr("", "the document ends early, at byte %d: it was cut short", j.in.n)
	}
	return err
}

// token reads the next token: a delimiter, an object's key, or a scalar
// (read whole where a delimiter was expected).
func (j *jsonReader) token() (json.Token, error) {
	t, err := j.dec.Token()
	if err != nil {
		return nil, j.fail(err)
	}
	j.started = true
	return t, nil
}

// value reads the next value whole into j.raw (valid JSON, as the
// decoder checked it), reused by the next call.
func (j *jsonReader) value() ([]byte, error) {
	j.raw = j.raw[:0]
	if err := j.dec.Decode(&j.raw); err != nil {
		return nil, j.fail(err)
	}
	j.started = true
	return j.raw, nil
}

// end checks that nothing but white space follows the document.
func (j *jsonReader) end() error {
	at := j.dec.InputOffset()
	_, err := j.dec.Token()
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
		return nil
	case err == nil || errors.As(err, &se):
		return stateErr("", "more data after the document's end, at byte %d", at)
	}
	return err
}

// where is a place in the document, for an error to name: the field
// list's element index of base ("accounts[0]" and "contexts", 3 is
// "accounts[0].contexts[3]"), or base itself when list is empty. It is
// made into a string only when an error names it.
type where struct {
	base, list string
	index      int
}

func (w where) String() string {
	if w.list == "" {
		return w.base
	}
	return joinPath(w.base, w.list) + "[" + strconv.Itoa(w.index) + "]"
}

// field is the path of a field of the value at w.
func (w where) field(name string) string { return joinPath(w.String(), name) }

// isField reports whether w is an object's field (not an array's element,
// nor the document): where a null is refused as such.
func (w where) isField() bool { return w.list == "" && w.base != "" }

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// object reads the object at w, whose keys must be among allowed (at most
// 64), each at most once: for each key, each is called with the key's
// index to read its value (the reader of the value refuses a null). It
// returns the set of keys seen. A value that is not an object is a
// StateError at w saying so.
func (j *jsonReader) object(w where, allowed []string, each func(k int) error) (seen uint64, err error) {
	t, err := j.token()
	if err != nil {
		return 0, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		if t == nil && w.isField() {
			return 0, stateErr(w.String(), "must not be null")
		}
		return 0, stateErr(w.String(), "must be a JSON object")
	}
	for j.dec.More() {
		t, err := j.token()
		if err != nil {
			return seen, err
		}
		key, _ := t.(string)
		k := -1
		for i, a := range allowed {
			if key == a {
				k = i
				break
			}
		}
		switch {
		case k < 0:
			return seen, stateErr(w.field(key), "unknown field (allowed: %s)", joinFields(allowed))
		case seen&(1<<k) != 0:
			return seen, stateErr(w.field(allowed[k]), "the field appears twice")
		}
		seen |= 1 << k
		if err := each(k); err != nil {
			return seen, err
		}
	}
	_, err = j.token() // '}': the decoder checks that it is one
	return seen, err
}

func joinFields(l []string) string {
	var b bytes.Buffer
	for i, s := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// array reads the array in field list of the value at base, calling each
// to read each element, with the element's place. A value that is not an
// array is a StateError saying so.
func (j *jsonReader) array(base, list string, each func(w where) error) error {
	path := joinPath(base, list)
	return j.elements(path,
		func() error { return stateErr(path, "must be an array") },
		func(i int) error { return each(where{base, list, i}) })
}

// elements reads the array in the field at path, calling each with each
// element's index; a value that is not an array is notArray's error.
func (j *jsonReader) elements(path string, notArray func() error, each func(i int) error) error {
	t, err := j.token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		if t == nil {
			return stateErr(path, "must not be null")
		}
		return notArray()
	}
	for i := 0; j.dec.More(); i++ {
		if err := each(i); err != nil {
			return err
		}
	}
	_, err = j.token() // ']'
	return err
}

// String kinds of str: what a string may hold besides valid UTF-8 without
// lone surrogate escapes.
const (
	strPlain   = iota // no control characters (names, tags, ids, urls)
	strText           // no control characters but tab, newline, carriage return (content)
	strLenient        // any character (a receiver's answer, a heading's text)

	// strIntern, added to a kind, keeps one copy of each distinct value.
	strIntern = 1 << 4
)

// str reads field name of the value at w, a string held to the API's
// rules for its kind, with the API's messages (decodeJSONString). index is
// the string's place in an array field (tags), or -1.
func (j *jsonReader) str(w where, name string, index, kind int) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		label := name
		if index >= 0 {
			label += "[" + strconv.Itoa(index) + "]"
		}
		return "", stateErr(w.field(name), format, append([]any{label}, args...)...)
	}
	// The string is decoded straight from the stream; its bytes, which
	// the reader keeps, are checked for what decoding would hide.
	from := j.dec.InputOffset()
	var s string
	derr := j.dec.Decode(&s)
	var te *json.UnmarshalTypeError
	if derr != nil && !errors.As(derr, &te) {
		return "", j.fail(derr)
	}
	j.started = true
	to := j.dec.InputOffset()
	raw := bytes.TrimLeft(j.in.between(from, to), " \t\r\n:,")
	defer j.in.forget(to) // after raw's last use: it moves the bytes
	if raw[0] == 'n' && index < 0 {
		return "", stateErr(w.field(name), "must not be null")
	}
	if raw[0] != '"' {
		return fail("%s must be a string")
	}
	if !utf8.Valid(raw) {
		return fail("%s must be valid UTF-8")
	}
	if at := loneSurrogate(raw); at >= 0 {
		return fail("%s holds a lone UTF-16 surrogate escape (%s): such a string has no UTF-8 form", raw[at:at+6])
	}
	intern := kind&strIntern != 0
	kind &^= strIntern
	if kind != strLenient {
		if at, r := controlChar(s, kind == strText); at >= 0 {
			allowed := ""
			if kind == strText {
				allowed = " other than tab, newline and carriage return"
			}
			return fail("%s must not contain control characters%s (%U at byte %d)", allowed, r, at)
		}
	}
	if !intern {
		return s, nil
	}
	if v, ok := j.interned[s]; ok {
		return v, nil
	}
	if j.interned == nil {
		j.interned = make(map[string]string)
	}
	if len(j.interned) < maxInterned {
		j.interned[s] = s
	}
	return s, nil
}

// controlChar returns the offset and rune of the first control character
// (Unicode Cc: C0, DEL, C1) of valid UTF-8 s, but tab, newline and
// carriage return when text is true; -1 when there is none. C1 is U+0080
// to U+009F, encoded 0xC2 0x80 to 0xC2 0x9F.
func controlChar(s string, text bool) (int, rune) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20:
			if !text || (c != '\t' && c != '\n' && c != '\r') {
				return i, rune(c)
			}
		case c == 0x7F:
			return i, rune(c)
		case c == 0xC2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9F:
			return i, rune(s[i+1])
		}
	}
	return -1, 0
}

// integer reads field name of the value at w, a whole number (5, 5.0 and
// 5e0 alike, as JSON Schema's integer takes them) from minimum to maximum,
// with the API's message.
func (j *jsonReader) integer(w where, name string, minimum, maximum int) (int, error) {
	raw, err := j.value()
	if err != nil {
		return 0, err
	}
	if raw[0] == 'n' {
		return 0, stateErr(w.field(name), "must not be null")
	}
	if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
		f, err := strconv.ParseFloat(string(raw), 64)
		if err == nil && f == float64(int64(f)) && f >= float64(minimum) && f <= float64(maximum) {
			return int(f), nil
		}
	}
	return 0, stateErr(w.field(name), "%s must be a whole number from %d to %d", name, minimum, maximum)
}

// boolean reads field name of the value at w, true or false.
func (j *jsonReader) boolean(w where, name string) (bool, error) {
	raw, err := j.value()
	if err != nil {
		return false, err
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return false, stateErr(w.field(name), "must not be null")
	}
	return false, stateErr(w.field(name), "%s must be true or false", name)
}
