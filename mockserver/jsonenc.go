package mockserver

import (
	"bytes"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// The wire shapes of contexts and versions are written into a reused
// buffer: a context's text is held once, in its version, and encoded on
// each read, so encoding must cost little more than quoting the text. Each
// string is quoted by the JSON library's encoder, escaped as encoding/json
// escapes it (<, >, & and U+2028, U+2029 too), so the output is byte for
// byte what encoding/json writes for contextJSON and versionJSON
// (TestContextJSON compares them).

// quoter quotes strings with an encoder of its own, writing into the
// caller's buffer.
type quoter struct {
	buf bytes.Buffer
	enc *jsontext.Encoder
}

// wireEncoding is how strings are quoted on the wire: as encoding/json
// quotes them, with each byte of invalid UTF-8 (which no stored string
// holds) replaced.
var wireEncoding = []jsontext.Options{jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true), jsontext.AllowInvalidUTF8(true)}

var quoters = sync.Pool{New: func() any {
	q := new(quoter)
	q.enc = jsontext.NewEncoder(&q.buf, wireEncoding...)
	return q
}}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it. The encoder appends in place when dst has the room.
func appendJSONString(dst []byte, s string) []byte {
	q := quoters.Get().(*quoter)
	q.buf = *bytes.NewBuffer(dst)
	q.enc.Reset(&q.buf, wireEncoding...)
	_ = q.enc.WriteToken(jsontext.String(s))             // cannot fail: invalid UTF-8 is replaced, a bytes.Buffer takes every write
	out := bytes.TrimSuffix(q.buf.Bytes(), []byte("\n")) // the encoder ends a top-level value with one
	// Pooled, the encoder must not hold on to a large dst (a response of
	// a megabyte, say): it is set on an empty buffer. A small one it may
	// keep until its next use (which sets it on its own dst first), as
	// the buffer pool does.
	q.buf = bytes.Buffer{}
	if cap(out) > maxPooledBuffer {
		q.enc.Reset(&q.buf, wireEncoding...)
	}
	quoters.Put(q)
	return out
}

// appendJSONStrings appends ss as a JSON array of strings; nil is [].
func appendJSONStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendJSONTime appends t as a JSON string in the contract's format,
// what formatTime gives (2026-11-21T20:51:00.123Z), without parsing the
// layout each time: a page of contexts writes forty of them.
func appendJSONTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, timeFormat)
		return append(dst, '"')
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	var b [26]byte
	b[0] = '"'
	put := func(i, v, width int) {
		for j := i + width - 1; j >= i; j-- {
			b[j] = byte('0' + v%10)
			v /= 10
		}
	}
	put(1, year, 4)
	b[5] = '-'
	put(6, int(month), 2)
	b[8] = '-'
	put(9, day, 2)
	b[11] = 'T'
	put(12, hour, 2)
	b[14] = ':'
	put(15, minute, 2)
	b[17] = ':'
	put(18, sec, 2)
	b[20] = '.'
	put(21, ms, 3)
	b[24] = 'Z'
	b[25] = '"'
	return append(dst, b[:]...)
}

// contextView is what a read needs of a context, copied under the
// account's lock and encoded after it is released: the Context JSON's
// fields before the content and after it, encoded when the context last
// changed, and the content itself. None of them is changed in place once
// stored, so the copy is safe.
type contextView struct {
	head    []byte // {"id":…,"name":…,"content":
	content string
	tail    []byte // ,"tags":[…],"version":N,"createdAt":…,"updatedAt":…}
}

// appendJSON appends the Context object {"id","name","content","tags",
// "version","createdAt","updatedAt"}.
func (v *contextView) appendJSON(dst []byte) []byte {
	dst = append(dst, v.head...)
	dst = appendJSONString(dst, v.content)
	return append(dst, v.tail...)
}

// newContextView encodes the fields of a Context around its content.
func newContextView(id, name, content string, tags []string, version int, createdAt, updatedAt time.Time) contextView {
	head := make([]byte, 0, 32+len(id)+len(name))
	head = append(head, `{"id":`...)
	head = appendJSONString(head, id)
	head = append(head, `,"name":`...)
	head = appendJSONString(head, name)
	head = append(head, `,"content":`...)
	tail := make([]byte, 0, 100+8*len(tags))
	tail = append(tail, `,"tags":`...)
	tail = appendJSONStrings(tail, tags)
	tail = append(tail, `,"version":`...)
	tail = strconv.AppendInt(tail, int64(version), 10)
	tail = append(tail, `,"createdAt":`...)
	tail = appendJSONTime(tail, createdAt)
	tail = append(tail, `,"updatedAt":`...)
	tail = appendJSONTime(tail, updatedAt)
	tail = append(tail, '}')
	// Kept with every context: without the room the encoder leaves after
	// what it wrote.
	return contextView{head: bytes.Clone(head), content: content, tail: bytes.Clone(tail)}
}

// appendVersionJSON appends the Version object of v, a version of the
// context contextID.
func appendVersionJSON(dst []byte, contextID string, v *StoredVersion) []byte {
	dst = append(dst, `{"contextId":`...)
	dst = appendJSONString(dst, contextID)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(v.Version), 10)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, v.Name)
	dst = append(dst, `,"content":`...)
	dst = appendJSONString(dst, v.Content)
	dst = append(dst, `,"tags":`...)
	dst = appendJSONStrings(dst, v.Tags)
	dst = append(dst, `,"createdAt":`...)
	dst = appendJSONTime(dst, v.CreatedAt)
	dst = append(dst, `,"createdBy":`...)
	dst = appendJSONString(dst, v.CreatedBy)
	dst = append(dst, `,"changes":`...)
	dst = appendChangesJSON(dst, v.Changes)
	return append(dst, '}')
}

// appendChangesJSON appends {"sections_modified":[…],"word_count_delta":N}.
func appendChangesJSON(dst []byte, c contextsvc.Changes) []byte {
	dst = append(dst, `{"sections_modified":`...)
	dst = appendJSONStrings(dst, c.SectionsModified)
	dst = append(dst, `,"word_count_delta":`...)
	dst = strconv.AppendInt(dst, int64(c.WordCountDelta), 10)
	return append(dst, '}')
}

// jsonBuffers holds response buffers for reuse; one that grew past
// maxPooledBuffer (a large context) is left to the garbage collector.
var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBuffer = 64 << 10

func getBuffer() *[]byte { return jsonBuffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		jsonBuffers.Put(b)
	}
}
