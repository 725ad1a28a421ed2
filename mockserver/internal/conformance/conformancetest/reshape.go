// Package conformancetest holds what the tests of the contract's checks
// share: a server that answers in the other plausible shapes the
// contract leaves to a real service, for the conformance runner's tests
// and the validating proxy's to find each difference in.
package conformancetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Reshape answers as a plausible real service would where the contract
// left room and the SDK is tolerant: lists as bare arrays, deletes as 204
// without a body, creates as 200, error bodies as {"code","message"} (and a
// gateway's plain text for a path or method the API does not serve), and
// no rate-limit headers.
func Reshape(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		h := rec.Header()
		for _, k := range []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"} {
			h.Del(k)
		}
		status, body := rec.Code, rec.Body.Bytes()
		list := r.Method == http.MethodGet && (r.URL.Path == "/v1/contexts" || strings.HasSuffix(r.URL.Path, "/versions"))
		switch {
		case status == http.StatusMethodNotAllowed || status == http.StatusNotFound && strings.HasPrefix(string(body), `{"error":{"type":"not_found","message":"no such path`):
			h.Set("Content-Type", "text/plain; charset=utf-8")
			body = []byte(http.StatusText(status) + "\n")
		case status >= 400:
			var e struct {
				Error struct{ Type, Message string }
			}
			_ = json.Unmarshal(body, &e)
			body, _ = json.Marshal(map[string]string{"code": e.Error.Type, "message": e.Error.Message})
		case list && status == http.StatusOK:
			var p struct{ Data json.RawMessage }
			_ = json.Unmarshal(body, &p)
			body = p.Data
		case r.Method == http.MethodDelete && status == http.StatusOK:
			status, body = http.StatusNoContent, nil
			h.Del("Content-Type")
		case r.Method == http.MethodPost && r.URL.Path == "/v1/contexts" && status == http.StatusCreated:
			status = http.StatusOK
		}
		for k, v := range h {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}
