package adminapi

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// faultJSON is a Fault on the wire; latency in milliseconds, retryAfter
// in seconds.
type faultJSON struct {
	Method     string `json:"method,omitempty"`
	Path       string `json:"path,omitempty"`
	Status     int    `json:"status,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
	LatencyMs  int64  `json:"latencyMs,omitempty"`
	Times      int    `json:"times"`
	Mode       string `json:"mode,omitempty"`
}

// MarshalJSON is the default encoding; it lets httpapi.WritePage encode faults.
func (f faultJSON) MarshalJSON() ([]byte, error) {
	type plain faultJSON
	return json.Marshal(plain(f))
}

func toFaultJSON(f faults.Fault) faultJSON {
	return faultJSON{Method: f.Method, Path: f.Path, Status: f.Status, RetryAfter: int(f.RetryAfter / time.Second),
		LatencyMs: f.Latency.Milliseconds(), Times: f.Times, Mode: string(f.Mode)}
}

// listFaults pages through the active faults, oldest first, like the
// /v1 lists (limit, cursor).
func (h *Handler) listFaults(w http.ResponseWriter, r *http.Request) {
	limit, after, e := h.svc.Cursors.PageParams(r.URL.Query(), httpapi.CursorFaults, "")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	fs, next := h.svc.Faults.Page(after, limit)
	items := make([]faultJSON, len(fs))
	for i, f := range fs {
		items[i] = toFaultJSON(f)
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorFaults, "", items, next)
}

func (h *Handler) addFault(w http.ResponseWriter, r *http.Request) {
	f, e := readObject(w, r, "method", "path", "status", "retryAfter", "latencyMs", "times", "mode")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var ft faults.Fault
	for _, name := range []string{"method", "path", "mode"} {
		raw, ok := f[name]
		if !ok {
			continue
		}
		v, e := httpapi.DecodeString(name, raw)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		switch name {
		case "method":
			ft.Method = v
		case "path":
			ft.Path = v
		default:
			ft.Mode = faults.Mode(v)
		}
	}
	var latencyMs, retryAfter int
	for _, p := range []struct {
		name     string
		v        *int
		min, max int
	}{
		// A status given is one to answer: 0 would mean none, so it is
		// refused rather than ignored.
		{"status", &ft.Status, 400, 599},
		{"retryAfter", &retryAfter, 0, math.MaxInt32},
		{"latencyMs", &latencyMs, 0, int(faults.MaxLatency.Milliseconds())},
		{"times", &ft.Times, 0, math.MaxInt32},
	} {
		raw, ok := f[p.name]
		if !ok {
			continue
		}
		n, e := httpapi.DecodeInteger(p.name, raw, p.min, p.max)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		*p.v = n
	}
	ft.Latency = time.Duration(latencyMs) * time.Millisecond
	ft.RetryAfter = time.Duration(retryAfter) * time.Second
	added, err := h.svc.Faults.Add(ft)
	if errors.Is(err, model.ErrTooManyFaults) {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict, Message: err.Error()})
		return
	} else if err != nil {
		param, _ := faults.Validate(ft)
		httpapi.WriteError(w, httpapi.BadRequest(param, err.Error()))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, toFaultJSON(added))
}

func (h *Handler) clearFaults(w http.ResponseWriter, r *http.Request) {
	h.svc.Faults.Clear(true)
	w.WriteHeader(http.StatusNoContent)
}
