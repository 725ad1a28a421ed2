package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

// chaosJSON is the chaos mode on the wire (components/schemas/MockChaos):
// its settings when on, the delay in milliseconds, then its counts and
// newest decisions.
type chaosJSON struct {
	On bool `json:"on"`
	*chaosSettingsJSON
	Requests   uint64         `json:"requests"`
	Events     uint64         `json:"events"`
	APIErrors  uint64         `json:"apiErrors"`
	Held       uint64         `json:"held"`
	Duplicates uint64         `json:"duplicates"`
	Decisions  []decisionJSON `json:"decisions"`
}

type chaosSettingsJSON struct {
	Spec       string  `json:"spec"`
	Seed       uint64  `json:"seed"`
	SeedChosen bool    `json:"seedChosen"`
	Duplicate  float64 `json:"duplicate"`
	Reorder    float64 `json:"reorder"`
	DelayMs    int64   `json:"delayMs"`
	APIError   float64 `json:"apiError"`
	Since      string  `json:"since"`
}

// decisionJSON is one decision; the fields of its action only.
type decisionJSON struct {
	Action     model.ChaosAction `json:"action"`
	At         string            `json:"at"`
	Request    uint64            `json:"request,omitempty"`
	Method     string            `json:"method,omitempty"`
	Path       string            `json:"path,omitempty"`
	RequestID  string            `json:"requestId,omitempty"`
	Status     int               `json:"status,omitempty"`
	Event      uint64            `json:"event,omitempty"`
	EventID    string            `json:"eventId,omitempty"`
	DeliveryID string            `json:"deliveryId,omitempty"`
	Attempt    int               `json:"attempt,omitempty"`
	DelayMs    int64             `json:"delayMs,omitempty"`
}

func toChaosJSON(r model.ChaosReport) chaosJSON {
	j := chaosJSON{On: r.On, Requests: r.Requests, Events: r.Events, APIErrors: r.APIErrors, Held: r.Held, Duplicates: r.Duplicates,
		Decisions: make([]decisionJSON, len(r.Decisions))}
	if r.On {
		c := r.Chaos
		j.chaosSettingsJSON = &chaosSettingsJSON{Spec: c.String(), Seed: c.Seed, SeedChosen: r.SeedChosen, Duplicate: c.Duplicate,
			Reorder: c.Reorder, DelayMs: c.Delay.Milliseconds(), APIError: c.APIError, Since: jsonwire.FormatTime(r.Since)}
	}
	for i, d := range r.Decisions {
		j.Decisions[i] = decisionJSON{Action: d.Action, At: jsonwire.FormatTime(d.At), Request: d.Request, Method: d.Method, Path: d.Path,
			RequestID: d.RequestID, Status: d.Status, Event: d.Event, EventID: d.EventID, DeliveryID: d.DeliveryID, Attempt: d.Attempt,
			DelayMs: d.Delay.Milliseconds()}
	}
	return j
}

func (h *Handler) getChaos(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteValue(w, http.StatusOK, toChaosJSON(h.svc.Chaos.Report()))
}

// chaosParams are the admin API's names of the SPEC's keys.
var chaosParams = map[string]string{
	chaos.KeySeed: "seed", chaos.KeyDuplicate: "duplicate", chaos.KeyReorder: "reorder", chaos.KeyDelay: "delayMs",
	chaos.KeyAPIError: "apiError",
}

// putChaos sets the chaos mode from {"spec":"SPEC"} or from its fields
// ({"seed","duplicate","reorder","delayMs","apiError"}), as the command's
// -chaos and mockserver.WithChaos do, and answers the mode as it now
// stands.
func (h *Handler) putChaos(w http.ResponseWriter, r *http.Request) {
	if h.svc.Proxy != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict, Message: service.ProxyChaos})
		return
	}
	f, e := readObject(w, r, "spec", "seed", "duplicate", "reorder", "delayMs", "apiError")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	c, e := chaosFromFields(f)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	_, fromSpec := f["spec"]
	rep, err := h.svc.SetChaos(c)
	if ce, ok := errors.AsType[*model.ChaosError](err); ok {
		param := "spec"
		if !fromSpec && chaosParams[ce.Key] != "" {
			param = chaosParams[ce.Key]
		}
		httpapi.WriteError(w, httpapi.BadRequest(param, err.Error()))
		return
	} else if err != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: err.Error()})
		return
	}
	httpapi.WriteValue(w, http.StatusOK, toChaosJSON(rep))
}

// chaosFromFields reads the settings of a PUT: the SPEC, or the fields.
func chaosFromFields(f map[string]json.RawMessage) (model.Chaos, *httpapi.Error) {
	if raw, ok := f["spec"]; ok {
		if len(f) > 1 {
			return model.Chaos{}, httpapi.BadRequest("spec", "give either spec or the fields (seed, duplicate, reorder, delayMs, apiError), not both")
		}
		spec, e := httpapi.DecodeString("spec", raw)
		if e != nil {
			return model.Chaos{}, e
		}
		c, err := chaos.Parse(spec)
		if err != nil {
			return model.Chaos{}, httpapi.BadRequest("spec", err.Error())
		}
		return c, nil
	}
	var c model.Chaos
	if raw, ok := f["seed"]; ok {
		n, e := httpapi.DecodeInteger("seed", raw, 1, model.MaxChaosSeed)
		if e != nil {
			e.Message += " (leave seed out to have one chosen)"
			return model.Chaos{}, e
		}
		c.Seed = uint64(n)
	}
	if raw, ok := f["delayMs"]; ok {
		n, e := httpapi.DecodeInteger("delayMs", raw, 1, int(model.MaxChaosDelay/time.Millisecond))
		if e != nil {
			return model.Chaos{}, e
		}
		c.Delay = time.Duration(n) * time.Millisecond
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"duplicate", &c.Duplicate}, {"reorder", &c.Reorder}, {"apiError", &c.APIError}} {
		raw, ok := f[p.name]
		if !ok {
			continue
		}
		v, e := decodeProbability(p.name, raw)
		if e != nil {
			return model.Chaos{}, e
		}
		*p.v = v
	}
	return c, nil
}

// decodeProbability decodes a field that must be a JSON number from 0 to
// 1.
func decodeProbability(field string, raw json.RawMessage) (float64, *httpapi.Error) {
	msg := field + " must be a probability: a number from 0 to 1"
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, httpapi.BadRequest(field, msg)
	}
	// A JSON number the decoder has read: ParseFloat takes its grammar.
	p, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || !(p >= 0 && p <= 1) {
		return 0, httpapi.BadRequest(field, msg)
	}
	return p, nil
}

func (h *Handler) stopChaos(w http.ResponseWriter, r *http.Request) {
	h.svc.StopChaos()
	w.WriteHeader(http.StatusNoContent)
}
