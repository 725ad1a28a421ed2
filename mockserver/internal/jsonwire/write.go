package jsonwire

import (
	"sync"
	"time"
	"unicode/utf8"
)

// jsonSafe marks the ASCII bytes a JSON string holds as they are: the
// others are escaped (as encoding/json escapes them, <, > and & too).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it: the short escapes for \b \f \n \r \t " and \\, \u00XX for
// other control bytes and for < > &, U+2028 and U+2029 escaped, and each
// byte of invalid UTF-8 (which no stored string holds) replaced by U+FFFD,
// byte for byte what the JSON library's encoder writes with
// EscapeForHTML, EscapeForJS and AllowInvalidUTF8.
//
// It is written here, not through the library's encoder, for the state
// file: saving 100,000 contexts through the encoder's tokens took 1.34x
// the time of the hand-written writer the library replaced (paired rounds,
// BENCHMARKS.md), past the 1.3x allowed; with each context appended with
// this function, 0.88x (0.84x at 10,000 contexts). The wire answers use
// it too (a GET 0.92x, a POST 0.98x of the encoder's quoting).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if jsonSafe[c] {
				continue
			}
			dst = append(dst, s[start:i-1]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
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
