package mockserver

import (
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// The error types of the contract, one per status, plus two of the mock's
// own: conflict (409, an admin action that cannot apply now) and
// unavailable (503, the server is shutting down, or an injected fault).
const (
	errInvalidRequest   = "invalid_request"
	errUnauthorized     = "unauthorized"
	errForbidden        = "forbidden"
	errNotFound         = "not_found"
	errMethodNotAllowed = "method_not_allowed"
	errPayloadTooLarge  = "payload_too_large"
	errRateLimited      = "rate_limited"
	errInternal         = "internal"
	errConflict         = "conflict"
	errUnavailable      = "unavailable"
)

// apiError is a failure to report to the caller as the contract's error
// body. Handlers return it instead of writing, so every error goes through
// writeError.
type apiError struct {
	status  int
	typ     string
	message string
	param   string
	// closeConn asks for the connection to be closed after the answer:
	// the request body could not be read, so what follows on the
	// connection is not a request.
	closeConn bool
}

func (e *apiError) Error() string { return e.typ + ": " + e.message }

func badRequest(param, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: errInvalidRequest, message: msg, param: param}
}

func notFound(msg string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: errNotFound, message: msg}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Param     string `json:"param,omitempty"`
	RequestID string `json:"requestId"`
}

// writeError writes e as {"error":{…}} with the request id already set on
// the response by the request-id middleware. The message is written as
// it reads: "send Authorization: Bearer <key>", not "\u003ckey\u003e".
func writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	rid := h.Get("X-Request-Id")
	b, _ := jsonwire.MarshalText(errorBody{Error: errorDetail{Type: e.typ, Message: e.message, Param: e.param, RequestID: rid}})
	h["Content-Type"] = []string{"application/json"}
	h.Del("Content-Length")
	if e.closeConn {
		h["Connection"] = []string{"close"}
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// writeJSON writes pre-encoded JSON with status.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
