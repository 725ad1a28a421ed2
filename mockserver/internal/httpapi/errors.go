// Package httpapi is what the mock server's two HTTP APIs (/v1 and the
// admin API under /_mock/) share: the contract's error answer ([Error],
// [WriteError]), JSON answers and list pages ([WriteJSON], [WritePage]),
// the strict reading of a request body's JSON object ([ReadObject] and
// the Decode functions), the strict query string ([CheckQuery]), and the
// lists' cursors ([Cursors]: opaque, keyed, bound to their list).
//
// It owns how an answer is written and how a request's body, query and
// cursor are read; what a field may hold (the contract's rules) and what
// a list holds are its callers'. It imports jsonwire and page, nothing
// else of the mock server.
package httpapi

import (
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// The error types of the contract, one per status, plus two of the mock's
// own: conflict (409, an admin action that cannot apply now) and
// unavailable (503: the server is shutting down, the event streams are
// all taken, or an injected fault; and a validating proxy's 502 and 504,
// whose upstream did not answer, or not in time).
const (
	TypeInvalidRequest   = "invalid_request"
	TypeUnauthorized     = "unauthorized"
	TypeForbidden        = "forbidden"
	TypeNotFound         = "not_found"
	TypeMethodNotAllowed = "method_not_allowed"
	TypePayloadTooLarge  = "payload_too_large"
	TypeRateLimited      = "rate_limited"
	TypeInternal         = "internal"
	TypeConflict         = "conflict"
	TypeUnavailable      = "unavailable"
)

// Error is a failure to report to the caller as the contract's error
// body. Handlers return it instead of writing, so every error goes through
// WriteError.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Type is the error type, one of the Type constants.
	Type string
	// Message says what is wrong, in words.
	Message string
	// Param names the request's field or parameter at fault, if one is.
	Param string
	// CloseConn asks for the connection to be closed after the answer:
	// the request body could not be read, so what follows on the
	// connection is not a request.
	CloseConn bool
}

// Error returns "TYPE: MESSAGE".
func (e *Error) Error() string { return e.Type + ": " + e.Message }

// BadRequest is a 400 invalid_request about param.
func BadRequest(param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Message: msg, Param: param}
}

// NotFound is a 404 not_found.
func NotFound(msg string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeNotFound, Message: msg}
}

// ErrorBody is the contract's error answer: {"error":{…}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error answer's "error" object.
type ErrorDetail struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Param     string `json:"param,omitempty"`
	RequestID string `json:"requestId"`
}

// WriteError writes e as {"error":{…}} with the request id already set on
// the response by the request-id middleware. The message is written as
// it reads: "send Authorization: Bearer <key>", not "\u003ckey\u003e".
func WriteError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	rid := h.Get("X-Request-Id")
	b, _ := jsonwire.MarshalText(ErrorBody{Error: ErrorDetail{Type: e.Type, Message: e.Message, Param: e.Param, RequestID: rid}})
	h["Content-Type"] = jsonType
	h.Del("Content-Length")
	if e.CloseConn {
		h["Connection"] = []string{"close"}
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}
