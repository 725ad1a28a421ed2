package jsonwire

import (
	"bytes"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

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

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it. The encoder appends in place when dst has the room.
func AppendString(dst []byte, s string) []byte {
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

// AppendStrings appends ss as a JSON array of strings; nil is [].
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// AppendTime appends t as a JSON string in the contract's format,
// what formatTime gives (2026-11-21T20:51:00.123Z), without parsing the
// layout each time: a page of contexts writes forty of them.
func AppendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, TimeFormat)
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

// jsonBuffers holds response buffers for reuse; one that grew past
// maxPooledBuffer (a large context) is left to the garbage collector.
var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBuffer = 64 << 10

// GetBuffer returns an empty buffer from the pool; give it back with
// PutBuffer once its bytes are written.
func GetBuffer() *[]byte { return jsonBuffers.Get().(*[]byte) }

// PutBuffer returns b to the pool, unless it grew past maxPooledBuffer.
func PutBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		jsonBuffers.Put(b)
	}
}

// TimeFormat is RFC 3339 in UTC with millisecond precision, as the contract
// asks.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t in TimeFormat, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
