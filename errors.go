package contextsvc

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Sentinel errors matched by an [*Error] through [errors.Is], so callers can
// branch on the kind of failure without knowing every status code.
var (
	// ErrBadRequest matches 400 (and the other "the request itself is
	// wrong" statuses: 405, 413, 422).
	ErrBadRequest = errors.New("contextsvc: bad request")
	// ErrUnauthorized matches 401: no key, or a key the service does not know.
	ErrUnauthorized = errors.New("contextsvc: unauthorized")
	// ErrForbidden matches 403: the key may not do this (e.g. a read-only key
	// writing).
	ErrForbidden = errors.New("contextsvc: forbidden")
	// ErrNotFound matches 404: no such resource in this account.
	ErrNotFound = errors.New("contextsvc: not found")
	// ErrRateLimited matches 429: too many requests.
	ErrRateLimited = errors.New("contextsvc: rate limited")
	// ErrServer matches every 5xx status.
	ErrServer = errors.New("contextsvc: server error")
)

// ErrInvalidArgument is returned (wrapped, with the reason) before any
// request is sent when an argument or a client option is unusable, e.g. an
// empty context id, an update that sets nothing, or a base URL without /v1.
var ErrInvalidArgument = errors.New("contextsvc: invalid argument")

// Errors about answers the client refuses, matched through [errors.Is]. A
// server the client does not control (a proxy, a gateway, a broken or
// hostile deployment) may answer anything; these say what was wrong with
// the answer rather than act on it.
var (
	// ErrRedirectRefused matches a call whose answer was a redirect the
	// client does not follow: to another origin (scheme, host or port) than
	// the base URL's, where the API key must not go; back to a URL already
	// visited (a loop); or the 11th redirect in a row. It is never retried.
	ErrRedirectRefused = errors.New("contextsvc: redirect refused")
	// ErrResponseTooLarge matches a call whose answer's body is longer than
	// the client reads ([DefaultMaxResponseBytes], or [WithMaxResponseBytes]),
	// counted after decompression. Reading stops there.
	ErrResponseTooLarge = errors.New("contextsvc: response too large")
	// ErrMalformedResponse matches a 2xx answer that is not what the
	// operation returns: not JSON, JSON with trailing data, null, an object
	// without the fields the contract requires (a context without its id, a
	// list without its data), or a list with a null entry.
	ErrMalformedResponse = errors.New("contextsvc: malformed response")
	// ErrPaginationLoop matches the error that ends [ContextsService.All] or
	// [ContextsService.AllVersions] when the pages would never end: a page
	// saying more follow without a cursor, a cursor already followed in the
	// same iteration (a cycle), or more than [MaxEmptyPages] empty pages in
	// a row that each say more follow.
	ErrPaginationLoop = errors.New("contextsvc: pagination does not end")
)

// ErrTimeout matches a call that the client ended because one of its own
// time bounds ran out: the whole call's ([WithCallTimeout]), an attempt's
// wait for the answer's headers ([WithHeaderTimeout]), a read of the
// answer's body that got nothing ([WithStallTimeout], also while you read
// an export's Body) or an attempt's own ([WithAttemptTimeout]). Such an
// error matches [context.DeadlineExceeded] too, as does the error of a
// call that your context's deadline ended: errors.Is(err,
// context.DeadlineExceeded) tells that a call ran out of time, whoever's
// bound it was, and ErrTimeout that it was the client's. Its text says
// which bound it was.
var ErrTimeout = errors.New("contextsvc: timeout")

// maxErrorBody bounds how much of an error response is kept: enough for any
// sensible error document, small enough that a misbehaving proxy returning a
// huge HTML page cannot bloat every error value.
const maxErrorBody = 4 << 10

// Bounds of the pieces of an [Error] that the server supplies, in bytes
// after control characters are escaped: together they keep Error() under
// 2 KiB whatever the server sends.
const (
	maxErrorMessage = 1 << 10
	maxErrorToken   = 256 // Type, Param, RequestID
)

// Error is the error returned for every non-2xx response of the service.
// It carries what the response said, so callers can log or branch on it;
// use errors.Is with the sentinels (ErrNotFound, ErrRateLimited…) for the
// common cases and errors.As for the details.
type Error struct {
	// StatusCode is the HTTP status of the (last) response.
	StatusCode int
	// Type is the service's error type, e.g. "not_found"; empty when the
	// body did not say.
	Type string
	// Message is the service's human-readable message, or a short excerpt
	// of a body that was not an error document, or the status text.
	//
	// Message, Type, Param and RequestID come from the server, so the
	// client makes them inert: cut to at most 1 KiB (Message) or 256 bytes
	// (the others), with control and format characters (line breaks,
	// terminal escapes, bidirectional overrides) and invalid UTF-8 written
	// as escapes (\n, \x1b, \u202e), and the client's API key, if the
	// server echoed it (also JSON-escaped), replaced by [REDACTED].
	Message string
	// Param names the request field at fault, when one is.
	Param string
	// RequestID identifies the request in the service's logs (from the
	// body, else from the X-Request-Id header).
	RequestID string
	// RetryAfter is the wait the service asked for (Retry-After header),
	// zero when it asked for none.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent, retries included.
	Attempts int
	// RateLimit holds the X-RateLimit-* headers of the response, if any.
	RateLimit RateLimit
	// Body is the raw response body, cut to 4 KiB, with any echo of the
	// client's API key (literal or JSON-escaped) replaced by [REDACTED].
	Body []byte
}

// Error formats the error like
// `contextsvc: 404 not_found: no such context "ctx_x" (request req_y)`. It
// is one line of at most 2 KiB, whatever the fields hold (see Message).
func (e *Error) Error() string {
	typ, msg, reqID := inert(e.Type, maxErrorToken), inert(e.Message, maxErrorMessage), inert(e.RequestID, maxErrorToken)
	var b strings.Builder
	b.Grow(64 + len(typ) + len(msg) + len(reqID))
	b.WriteString("contextsvc: ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if typ != "" {
		b.WriteByte(' ')
		b.WriteString(typ)
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	if reqID != "" || e.Attempts > 1 {
		b.WriteString(" (")
		if reqID != "" {
			b.WriteString("request ")
			b.WriteString(reqID)
		}
		if e.Attempts > 1 {
			if reqID != "" {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(e.Attempts))
			b.WriteString(" attempts")
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Is reports whether the error belongs to the sentinel's class of statuses.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		switch e.StatusCode {
		case http.StatusBadRequest, http.StatusMethodNotAllowed,
			http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return true
		}
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	}
	return false
}

// errorDocument accepts the contract's {"error":{…}} shape as well as a flat
// {"type","message"} object or {"error":"text"}: the service behind a proxy
// may answer in any of them.
type errorDocument struct {
	Error     json.RawMessage `json:"error"`
	Type      string          `json:"type"`
	Message   string          `json:"message"`
	Param     string          `json:"param"`
	RequestID string          `json:"requestId"`
}

type errorDetail struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Param     string `json:"param"`
	RequestID string `json:"requestId"`
}

// newError builds the *Error for a non-2xx response from its status, headers
// and body (already cut, and with the key redacted: see redactKey). It never
// fails: a body it cannot read as an error document becomes the message.
// Every field taken from the server is made inert (see [Error.Message]);
// key, when not empty, is redacted from the decoded fields too.
func newError(resp *http.Response, body []byte, attempts int, key string) *Error {
	e := &Error{
		StatusCode: resp.StatusCode,
		Attempts:   attempts,
		Body:       body,
		RateLimit:  parseRateLimit(resp.Header, time.Now()),
	}
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	var doc errorDocument
	if len(body) > 0 && unmarshalJSON(body, &doc) == nil {
		e.Type, e.Message, e.Param, e.RequestID = doc.Type, doc.Message, doc.Param, doc.RequestID
		if len(doc.Error) > 0 {
			var det errorDetail
			var text string
			switch {
			case unmarshalJSON(doc.Error, &det) == nil:
				e.Type = firstNonEmpty(det.Type, e.Type)
				e.Message = firstNonEmpty(det.Message, e.Message)
				e.Param = firstNonEmpty(det.Param, e.Param)
				e.RequestID = firstNonEmpty(det.RequestID, e.RequestID)
			case unmarshalJSON(doc.Error, &text) == nil:
				e.Message = firstNonEmpty(e.Message, text)
			}
		}
	}
	// A body that is an error document without a message says nothing more
	// than its type; repeating its JSON in the message would only clutter
	// it (the body stays in Body).
	if e.Message == "" && e.Type == "" {
		e.Message = bodyExcerpt(body)
	}
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	// The decoded fields are redacted again: an echo the body carried in an
	// escaped form redactKey does not know is the key once decoded.
	e.Type = inert(redactString(e.Type, key), maxErrorToken)
	e.Message = inert(redactString(e.Message, key), maxErrorMessage)
	e.Param = inert(redactString(e.Param, key), maxErrorToken)
	e.RequestID = inert(redactString(e.RequestID, key), maxErrorToken)
	return e
}

// redactString replaces every echo of key in s with [REDACTED], literal or
// JSON-escaped (see redactKey): a header or a decoded field may carry the
// key escaped, as text.
func redactString(s, key string) string {
	// Any echo, whole or cut short, holds the key's first characters or
	// an escape.
	if key == "" || !strings.Contains(s, key[:min(len(key), 6)]) && strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return string(redactKey([]byte(s), key, math.MaxInt))
}

// keyEchoReadAhead is how much more of an error body than maxErrorBody the
// client reads for a key of n bytes: the longest JSON-escaped form of the
// key (six bytes per byte, "\u0073"), so that an echo of the key straddling
// the cut is seen whole and removed whole, rather than leaving its start
// behind.
func keyEchoReadAhead(n int) int { return 6*n + 6 }

// redactKey returns raw cut to limit bytes, with every echo of key in it
// replaced by [REDACTED]: literal, or JSON-escaped in any mix ("\u0073k_…",
// "\/" for a slash, a surrogate pair for a character beyond U+FFFF). raw may
// extend past limit (see keyEchoReadAhead): an echo that starts before the
// cut is replaced whole. An echo cut short by the end of raw itself (the
// server's own cut), at least 6 characters of the key or all of a shorter
// one, is replaced too. It returns raw itself when there is nothing to
// replace.
func redactKey(raw []byte, key string, limit int) []byte {
	end := min(len(raw), limit)
	if key == "" {
		return raw[:end]
	}
	var out []byte
	last := 0
	for i := 0; i < end; i++ {
		if raw[i] != key[0] && raw[i] != '\\' {
			continue
		}
		j, ok := matchKey(raw, i, key)
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, end+len(redacted))
		}
		out = append(out, raw[last:i]...)
		out = append(out, redacted...)
		last = j
		i = j - 1
	}
	if out == nil {
		return raw[:end]
	}
	if last < end {
		out = append(out, raw[last:end]...)
	}
	// A marker longer than the echoes it replaced may run past the limit.
	return out[:min(len(out), limit)]
}

// matchKey reports whether an echo of key starts at raw[i] (see redactKey),
// and where it ends.
func matchKey(raw []byte, i int, key string) (end int, ok bool) {
	j, matched := i, 0
	for _, r := range key {
		n := matchRune(raw[j:], r)
		if n == 0 {
			// The echo may stop where raw does, cut by the server.
			return j, j == len(raw) && matched >= min(6, utf8.RuneCountInString(key))
		}
		j += n
		matched++
	}
	return j, true
}

// matchRune returns how many bytes at the start of b spell r, literally or
// as a JSON escape, or 0 when they do not.
func matchRune(b []byte, r rune) int {
	var enc [utf8.UTFMax]byte
	n := utf8.EncodeRune(enc[:], r)
	if len(b) >= n && string(b[:n]) == string(enc[:n]) {
		return n
	}
	if len(b) < 2 || b[0] != '\\' {
		return 0
	}
	switch b[1] {
	case '/', '"', '\\':
		if rune(b[1]) == r {
			return 2
		}
		return 0
	case 'u':
	default:
		return 0
	}
	u1, ok := hex4(b[2:])
	if !ok {
		return 0
	}
	if u1 == r {
		return 6
	}
	if r > 0xffff && u1 >= 0xd800 && u1 < 0xdc00 && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if u2, ok := hex4(b[8:]); ok && utf16.DecodeRune(u1, u2) == r {
			return 12
		}
	}
	return 0
}

// hex4 reads four hexadecimal digits (of either case).
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// bodyExcerpt turns a body that is not an error document into a one-line
// message short enough to read in a log line.
func bodyExcerpt(body []byte) string {
	const max = 200
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return strings.Join(strings.Fields(s), " ")
}

// inert returns s made safe to print on one line of a log: cut to at most
// max bytes (on a character boundary, "…" marking the cut) after control
// and format characters and invalid UTF-8 are written as Go escapes ("\n",
// "\x1b", "\u202e"). A short string of printable ASCII, the usual case, is
// returned as it is without allocating.
func inert(s string, max int) string {
	clean := len(s) <= max
	for i := 0; clean && i < len(s); i++ {
		clean = s[i] >= ' ' && s[i] < 0x7f
	}
	if clean {
		return s
	}
	const cut = "…"
	var b strings.Builder
	b.Grow(min(len(s), max) + len(cut))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = `\x` + hex2(s[i])
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case r < 0x80 && (r < ' ' || r == 0x7f):
			piece = `\x` + hex2(byte(r))
		case r >= 0x80 && (unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)):
			piece = strconv.QuoteRuneToASCII(r)
			piece = piece[1 : len(piece)-1]
		default:
			piece = s[i : i+size]
		}
		if b.Len()+len(piece) > max {
			b.WriteString(cut)
			break
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// hex2 is a byte as two lower-case hexadecimal digits.
func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
