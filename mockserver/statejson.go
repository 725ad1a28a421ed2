package mockserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonReader reads one JSON document from a stream, a token at a time,
// for the state document's reader (stateread.go). It accepts exactly the
// JSON grammar (FuzzJSONReader holds it to encoding/json), and reports
// where a document breaks it.
//
// Why not encoding/json: the state document must be read exactly (a key
// unknown, repeated or null refused; invalid UTF-8 and lone surrogate
// escapes refused, which json.Unmarshal turns into U+FFFD without a word)
// and as a stream (it holds every version's text, possibly hundreds of
// megabytes). json.Unmarshal into structs does neither. The best
// encoding/json reader found (commit 4ada836: Decoder.Token over the
// objects, each string decoded straight from the stream with its raw bytes
// checked beside) passed every state test but loaded 10,000 contexts in
// 2.3x to 2.9x this reader's time, with 4.9x its allocations (5.36 M
// against 1.10 M; 257 MB against 144 MB allocated; the same live heap):
// in token mode the Decoder builds a SyntaxError, message text included,
// for every scalar followed by a comma or a brace, and a string and an
// interface for every key, and its scanner steps through every byte with a
// function call. This reader unquotes a string in one pass and checks it
// in one more, and builds paths only for the error it reports
// (BENCHMARKS.md, "BenchmarkState").
type jsonReader struct {
	r       *bufio.Reader
	off     int64 // bytes consumed
	started bool  // a byte other than white space was seen
	// capture, when set, receives every byte consumed (an event's
	// envelope is kept byte for byte).
	capture *[]byte
	scratch []byte // a key or a skipped string, reused
	// interned holds the strings read with strIntern, each once: user
	// ids, tags and section names repeat across thousands of versions.
	interned map[string]string
}

// maxInterned bounds the interned strings.
const maxInterned = 100_000

// maxJSONDepth is how deeply values may nest, as in encoding/json.
const maxJSONDepth = 10000

func newJSONReader(r io.Reader) *jsonReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	return &jsonReader{r: br}
}

// syntaxErr reports where the document breaks JSON's grammar.
func (j *jsonReader) syntaxErr(format string, args ...any) error {
	return stateErr("", "malformed JSON at byte %d: %s", j.off, fmt.Sprintf(format, args...))
}

// ioErr turns the end of the stream into a StateError (the document ends
// too early); another read error is returned as it is.
func (j *jsonReader) ioErr(err error) error {
	switch {
	case err != io.EOF:
		return err
	case !j.started:
		return stateErr("", "the document is empty")
	}
	return stateErr("", "the document ends early, at byte %d: it was cut short", j.off)
}

// discard consumes n bytes already buffered (b holds them).
func (j *jsonReader) discard(b []byte) {
	_, _ = j.r.Discard(len(b))
	j.off += int64(len(b))
	if j.capture != nil {
		*j.capture = append(*j.capture, b...)
	}
}

// readByte consumes one byte.
func (j *jsonReader) readByte() (byte, error) {
	c, err := j.r.ReadByte()
	if err != nil {
		return 0, j.ioErr(err)
	}
	j.off++
	if j.capture != nil {
		*j.capture = append(*j.capture, c)
	}
	return c, nil
}

// peek skips white space and returns the next byte, not consumed.
func (j *jsonReader) peek() (byte, error) {
	for {
		c, err := j.skipSpace()
		if err != nil {
			return 0, j.ioErr(err)
		}
		if c >= 0 {
			j.started = true
			return byte(c), nil
		}
	}
}

// skipSpace consumes the white space buffered (a pretty-printed document
// has runs of it, skipped a buffer at a time) and returns the byte after
// it, or -1 when the buffer held only white space.
func (j *jsonReader) skipSpace() (int, error) {
	if _, err := j.r.Peek(1); err != nil {
		return 0, err
	}
	chunk, _ := j.r.Peek(j.r.Buffered())
	i := 0
	for i < len(chunk) && (chunk[i] == ' ' || chunk[i] == '\t' || chunk[i] == '\n' || chunk[i] == '\r') {
		i++
	}
	c := -1
	if i < len(chunk) {
		c = int(chunk[i])
	}
	j.discard(chunk[:i])
	return c, nil
}

// end checks that nothing but white space follows the document.
func (j *jsonReader) end() error {
	for {
		c, err := j.skipSpace()
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case c >= 0:
			return stateErr("", "more data after the document's end, at byte %d", j.off)
		}
	}
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

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// expect consumes the byte want, after white space.
func (j *jsonReader) expect(want byte, what string) error {
	c, err := j.peek()
	if err != nil {
		return err
	}
	if c != want {
		return j.syntaxErr("expected %s, found %s", what, quoteByte(c))
	}
	_, err = j.readByte()
	return err
}

func quoteByte(c byte) string {
	if c >= ' ' && c <= '~' {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// isNull reports whether the next value is null, and consumes it if so.
func (j *jsonReader) isNull() (bool, error) {
	c, err := j.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, j.literal("null")
}

// literal consumes the literal want (true, false or null).
func (j *jsonReader) literal(want string) error {
	for i := 0; i < len(want); i++ {
		c, err := j.readByte()
		if err != nil {
			return err
		}
		if c != want[i] {
			return j.syntaxErr("invalid literal (expected %s)", want)
		}
	}
	return nil
}

// object reads the object at w, whose keys must be among allowed (at most
// 64), each at most once, none null: for each key, each is called with
// the key's index to read its value. It returns the set of keys seen. A
// value that is not an object is a StateError at w saying so.
func (j *jsonReader) object(w where, allowed []string, each func(k int) error) (seen uint64, err error) {
	c, err := j.peek()
	if err != nil {
		return 0, err
	}
	if c != '{' {
		return 0, stateErr(w.String(), "must be a JSON object")
	}
	if _, err := j.readByte(); err != nil {
		return 0, err
	}
	if c, err = j.peek(); err != nil {
		return 0, err
	}
	if c == '}' {
		_, err = j.readByte()
		return 0, err
	}
	for {
		if c, err = j.peek(); err != nil {
			return seen, err
		}
		if c != '"' {
			return seen, j.syntaxErr("expected a string key, found %s", quoteByte(c))
		}
		_, _ = j.readByte()
		key, _, err := j.stringBytes(j.scratch[:0])
		if err != nil {
			return seen, err
		}
		j.scratch = key
		k := -1
		for i, a := range allowed {
			if string(key) == a {
				k = i
				break
			}
		}
		switch {
		case k < 0:
			return seen, stateErr(w.field(string(key)), "unknown field (allowed: %s)", joinFields(allowed))
		case seen&(1<<k) != 0:
			return seen, stateErr(w.field(allowed[k]), "the field appears twice")
		}
		if err := j.expect(':', "':' after a key"); err != nil {
			return seen, err
		}
		seen |= 1 << k
		if null, err := j.isNull(); err != nil || null {
			if err == nil {
				err = stateErr(w.field(allowed[k]), "must not be null")
			}
			return seen, err
		}
		if err := each(k); err != nil {
			return seen, err
		}
		if c, err = j.peek(); err != nil {
			return seen, err
		}
		if _, err := j.readByte(); err != nil {
			return seen, err
		}
		switch c {
		case ',':
		case '}':
			return seen, nil
		default:
			return seen, j.syntaxErr("expected ',' or '}' after an object's value, found %s", quoteByte(c))
		}
	}
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
	return j.elements(
		func() error { return stateErr(joinPath(base, list), "must be an array") },
		func(i int) error { return each(where{base, list, i}) })
}

// elements reads an array, calling each with each element's index; a
// value that is not an array is notArray's error.
func (j *jsonReader) elements(notArray func() error, each func(i int) error) error {
	c, err := j.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		return notArray()
	}
	if _, err := j.readByte(); err != nil {
		return err
	}
	if c, err = j.peek(); err != nil {
		return err
	}
	if c == ']' {
		_, err = j.readByte()
		return err
	}
	for i := 0; ; i++ {
		if err := each(i); err != nil {
			return err
		}
		if c, err = j.peek(); err != nil {
			return err
		}
		if _, err := j.readByte(); err != nil {
			return err
		}
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return j.syntaxErr("expected ',' or ']' after an array's element, found %s", quoteByte(c))
		}
	}
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
	c, err := j.peek()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return fail("%s must be a string")
	}
	_, _ = j.readByte()
	b, lone, err := j.stringBytes(j.scratch[:0])
	if err != nil {
		return "", err
	}
	j.scratch = b[:0]
	if !utf8.Valid(b) {
		return fail("%s must be valid UTF-8")
	}
	if lone != "" {
		return fail("%s holds a lone UTF-16 surrogate escape (%s): such a string has no UTF-8 form", lone)
	}
	intern := kind&strIntern != 0
	kind &^= strIntern
	if kind != strLenient {
		if at, r := controlChar(b, kind == strText); at >= 0 {
			allowed := ""
			if kind == strText {
				allowed = " other than tab, newline and carriage return"
			}
			return fail("%s must not contain control characters%s (%U at byte %d)", allowed, r, at)
		}
	}
	if !intern {
		return string(b), nil
	}
	if v, ok := j.interned[string(b)]; ok {
		return v, nil
	}
	v := string(b)
	if j.interned == nil {
		j.interned = make(map[string]string)
	}
	if len(j.interned) < maxInterned {
		j.interned[v] = v
	}
	return v, nil
}

// controlChar returns the offset and rune of the first control character
// (Unicode Cc: C0, DEL, C1) of valid UTF-8 b, but tab, newline and
// carriage return when text is true; -1 when there is none. C1 is U+0080
// to U+009F, encoded 0xC2 0x80 to 0xC2 0x9F.
func controlChar(b []byte, text bool) (int, rune) {
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

// stringBytes reads the rest of a string whose opening quote is consumed,
// appending its unquoted bytes to dst. An escaped UTF-16 surrogate that is
// not half of a pair is written as U+FFFD (as encoding/json does) and its
// escape is returned in lone (the first one), for the caller to refuse.
// Raw bytes are copied as they are: the caller checks UTF-8.
func (j *jsonReader) stringBytes(dst []byte) (out []byte, lone string, err error) {
	for {
		// Peek(1) fills the buffer when it is empty; then the whole buffer
		// is scanned at once.
		if _, err := j.r.Peek(1); err != nil {
			return dst, lone, j.ioErr(err)
		}
		chunk, _ := j.r.Peek(j.r.Buffered())
		i := 0
		for i < len(chunk) {
			if c := chunk[i]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		dst = append(dst, chunk[:i]...)
		j.discard(chunk[:i])
		if i == len(chunk) {
			continue
		}
		c, _ := j.readByte()
		switch {
		case c == '"':
			return dst, lone, nil
		case c < 0x20:
			j.off--
			return dst, lone, j.syntaxErr("control character %s in a string (it must be escaped)", quoteByte(c))
		}
		e, err := j.readByte()
		if err != nil {
			return dst, lone, err
		}
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, err := j.hex4()
			if err != nil {
				return dst, lone, err
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				if lone == "" {
					lone = fmt.Sprintf(`\u%04x`, r)
				}
				r = utf8.RuneError
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok, err := j.lowSurrogate()
				if err != nil {
					return dst, lone, err
				}
				if ok {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				} else {
					if lone == "" {
						lone = fmt.Sprintf(`\u%04x`, r)
					}
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, lone, j.syntaxErr("invalid escape %s in a string", quoteByte(e))
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (j *jsonReader) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := j.readByte()
		if err != nil {
			return 0, err
		}
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, j.syntaxErr(`invalid \u escape in a string`)
		}
	}
	return r, nil
}

// lowSurrogate reads the \uXXXX low surrogate that follows a high one, if
// the next escape is one; otherwise it consumes nothing.
func (j *jsonReader) lowSurrogate() (rune, bool, error) {
	b, err := j.r.Peek(6)
	if err != nil || b[0] != '\\' || b[1] != 'u' {
		return 0, false, nil // the string goes on (or breaks) without one
	}
	lo, ok := hex4(b[2:])
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0, false, nil
	}
	j.discard(b)
	return lo, true, nil
}

// integer reads field name of the value at w, a whole number (5, 5.0 and
// 5e0 alike, as JSON Schema's integer takes them) from minimum to maximum,
// with the API's message.
func (j *jsonReader) integer(w where, name string, minimum, maximum int) (int, error) {
	fail := func() (int, error) {
		return 0, stateErr(w.field(name), "%s must be a whole number from %d to %d", name, minimum, maximum)
	}
	c, err := j.peek()
	if err != nil {
		return 0, err
	}
	if c != '-' && (c < '0' || c > '9') {
		return fail()
	}
	num, err := j.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != float64(int64(f)) || f < float64(minimum) || f > float64(maximum) {
		return fail()
	}
	return int(f), nil
}

// number consumes a JSON number and returns its bytes (in scratch).
func (j *jsonReader) number() ([]byte, error) {
	b := j.scratch[:0]
	for {
		buf, err := j.r.Peek(1)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c := buf[0]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		b = append(b, c)
		_, _ = j.readByte()
	}
	j.scratch = b
	if !validNumber(b) {
		return nil, j.syntaxErr("invalid number %q", b)
	}
	return b, nil
}

// validNumber reports whether b is a number by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// boolean reads field name of the value at w, true or false.
func (j *jsonReader) boolean(w where, name string) (bool, error) {
	c, err := j.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case 't':
		return true, j.literal("true")
	case 'f':
		return false, j.literal("false")
	}
	return false, stateErr(w.field(name), "%s must be true or false", name)
}

// skip consumes any one value, checking its grammar; its strings may hold
// any bytes (an emitted event's data is not checked further).
func (j *jsonReader) skip(depth int) error {
	if depth > maxJSONDepth {
		return j.syntaxErr("values nested more than %d deep", maxJSONDepth)
	}
	c, err := j.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		_, _ = j.readByte()
		if c, err = j.peek(); err != nil || c == '}' {
			if err == nil {
				_, err = j.readByte()
			}
			return err
		}
		for {
			if c, err = j.peek(); err != nil {
				return err
			}
			if c != '"' {
				return j.syntaxErr("expected a string key, found %s", quoteByte(c))
			}
			_, _ = j.readByte()
			if j.scratch, _, err = j.stringBytes(j.scratch[:0]); err != nil {
				return err
			}
			if err := j.expect(':', "':' after a key"); err != nil {
				return err
			}
			if err := j.skip(depth + 1); err != nil {
				return err
			}
			if c, err = j.peek(); err != nil {
				return err
			}
			_, _ = j.readByte()
			if c == '}' {
				return nil
			}
			if c != ',' {
				return j.syntaxErr("expected ',' or '}' after an object's value, found %s", quoteByte(c))
			}
		}
	case c == '[':
		_, _ = j.readByte()
		if c, err = j.peek(); err != nil || c == ']' {
			if err == nil {
				_, err = j.readByte()
			}
			return err
		}
		for {
			if err := j.skip(depth + 1); err != nil {
				return err
			}
			if c, err = j.peek(); err != nil {
				return err
			}
			_, _ = j.readByte()
			if c == ']' {
				return nil
			}
			if c != ',' {
				return j.syntaxErr("expected ',' or ']' after an array's element, found %s", quoteByte(c))
			}
		}
	case c == '"':
		_, _ = j.readByte()
		j.scratch, _, err = j.stringBytes(j.scratch[:0])
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err = j.number()
		return err
	case c == 't':
		return j.literal("true")
	case c == 'f':
		return j.literal("false")
	case c == 'n':
		return j.literal("null")
	}
	return j.syntaxErr("expected a value, found %s", quoteByte(c))
}
