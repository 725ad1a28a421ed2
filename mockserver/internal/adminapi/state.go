package adminapi

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// reset empties the server (Backend.Reset).
func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	h.svc.Reset()
	w.WriteHeader(http.StatusNoContent)
}

// MaxStateBody bounds the body of PUT /_mock/state: a state document holds
// many contexts of up to 1,000,000 bytes each, so the API's 2 MiB would
// not do. A larger state goes through a state file (-state-file), which
// has no limit.
const MaxStateBody = 256 << 20

// getState sends the state document (Backend.SaveState), written as it is
// made.
func (h *Handler) getState(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(http.StatusOK)
	// A write error means the client went away; there is no one to tell.
	_ = h.svc.SaveState(w)
}

// TopField is the state document's top-level field a path in it is in
// ("accounts" for "accounts[0].contexts[3].name"), the param of PUT
// /_mock/state's 400.
func TopField(path string) string {
	if i := strings.IndexAny(path, "[."); i >= 0 {
		return path[:i]
	}
	return path
}

// putState replaces the state with the document in the body
// (Backend.LoadState): a document that breaks a rule is a 400 whose param is the
// top-level field it is in and whose message says where, and changes
// nothing.
func (h *Handler) putState(w http.ResponseWriter, r *http.Request) {
	tooBig := &httpapi.Error{Status: http.StatusRequestEntityTooLarge, Type: httpapi.TypePayloadTooLarge,
		Message: "a state document may be at most 256 MiB here; load a larger one with a state file (-state-file)"}
	if r.ContentLength > MaxStateBody {
		httpapi.WriteError(w, tooBig)
		return
	}
	err := h.svc.LoadState(http.MaxBytesReader(w, r.Body, MaxStateBody))
	var se *model.StateError
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &se):
		msg := se.Message
		if se.Path != "" {
			msg = se.Path + ": " + msg
		}
		httpapi.WriteError(w, httpapi.BadRequest(TopField(se.Path), msg))
	case errors.As(err, &mbe):
		httpapi.WriteError(w, tooBig)
	case errors.As(err, &ne) && ne.Timeout():
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusBadRequest, Type: httpapi.TypeInvalidRequest, CloseConn: true,
			Message: "the request body did not arrive in time (the server's read-body time-out)"})
	default:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusBadRequest, Type: httpapi.TypeInvalidRequest, CloseConn: true,
			Message: "could not read the request body"})
	}
}
