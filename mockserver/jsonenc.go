package mockserver

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// The wire shapes of contexts and versions are written by hand into a
// reused buffer: a context's text is held once, in its version, and
// encoded on each read, so encoding must cost little more than copying the
// bytes. The output is byte for byte what encoding/json writes for
// contextJSON and versionJSON (FuzzAppendJSONString and TestContextJSON
// compare them).

// jsonSafe marks the ASCII bytes a JSON string holds as they are:
// encoding/json (with its default HTML escaping) escapes the others.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: the short escapes for \b \f \n \r \t " and \\, \u00XX for
// other control bytes and for < > &, \u2028 and \u2029 escaped, and each
// byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
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
	return contextView{head: head, content: content, tail: tail}
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
