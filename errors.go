package contextsvc

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
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

// maxErrorBody bounds how much of an error response is kept: enough for any
// sensible error document, small enough that a misbehaving proxy returning a
// huge HTML page cannot bloat every error value.
const maxErrorBody = 4 << 10

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
	// Body is the raw response body, cut to 4 KiB.
	Body []byte
}

// Error formats the error like
// `contextsvc: 404 not_found: no such context "ctx_x" (request req_y)`.
func (e *Error) Error() string {
	var b strings.Builder
	b.Grow(64 + len(e.Message))
	b.WriteString("contextsvc: ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if e.Type != "" {
		b.WriteByte(' ')
		b.WriteString(e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" || e.Attempts > 1 {
		b.WriteString(" (")
		if e.RequestID != "" {
			b.WriteString("request ")
			b.WriteString(e.RequestID)
		}
		if e.Attempts > 1 {
			if e.RequestID != "" {
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
// and (already cut) body. It never fails: a body it cannot read as an error
// document becomes the message.
func newError(resp *http.Response, body []byte, attempts int) *Error {
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
	if len(body) > 0 && json.Unmarshal(body, &doc) == nil {
		e.Type, e.Message, e.Param, e.RequestID = doc.Type, doc.Message, doc.Param, doc.RequestID
		if len(doc.Error) > 0 {
			var det errorDetail
			var text string
			switch {
			case json.Unmarshal(doc.Error, &det) == nil:
				e.Type = firstNonEmpty(det.Type, e.Type)
				e.Message = firstNonEmpty(det.Message, e.Message)
				e.Param = firstNonEmpty(det.Param, e.Param)
				e.RequestID = firstNonEmpty(det.RequestID, e.RequestID)
			case json.Unmarshal(doc.Error, &text) == nil:
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
	return e
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
