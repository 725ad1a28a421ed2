package v1api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestMatchIsServeMuxs: the routes match exactly the paths, and name
// exactly the context ids, that http.ServeMux would with the same
// patterns, escaped segments included.
func TestMatchIsServeMuxs(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	for _, rt := range []*route{&contextsRoute, &contextRoute, &versionsRoute, &exportRoute, &webhooksRoute} {
		mux.HandleFunc(rt.pattern, func(http.ResponseWriter, *http.Request) {})
	}
	for _, path := range []string{
		"/v1/contexts", "/v1/contexts/", "/v1/contexts/ctx_1", "/v1/contexts/ctx_1/", "/v1/contexts/ctx_1/versions",
		"/v1/contexts/ctx_1/versions/", "/v1/contexts/ctx_1/export", "/v1/contexts/ctx_1/exports", "/v1/contexts/ctx_1/export/x",
		"/v1/contexts/a%2Fb", "/v1/contexts/a%2Fb/versions", "/v1/contexts/%63tx", "/v1/context%73", "/v1/context%73/ctx_1",
		"/v1/contexts/ctx_1/version%73", "/v1/contexts/%25", "/v1/contexts/a%20b", "/v1/webhooks", "/v1/webhooks/",
		"/v1/webhooks/wh_1", "/v1", "/v1/", "/v2/contexts", "/v1/contexts/ctx_1/versions/export", "/V1/contexts",
	} {
		r := httptest.NewRequest("GET", path, nil)
		_, want := mux.Handler(r)
		rt, id, ok := match(r)
		got := ""
		if ok {
			got = rt.pattern
		}
		if got != want {
			t.Errorf("%s: route %q, ServeMux's %q", path, got, want)
			continue
		}
		if !ok {
			continue
		}
		// ServeMux sets the wildcard's value as it serves.
		var wantID string
		probe := http.NewServeMux()
		probe.HandleFunc(rt.pattern, func(_ http.ResponseWriter, r *http.Request) { wantID = r.PathValue("id") })
		probe.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		if id != wantID {
			t.Errorf("%s: id %q, ServeMux's %q", path, id, wantID)
		}
	}
}

// TestMatchAllocatesNothing: routing a request costs no allocation.
func TestMatchAllocatesNothing(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/contexts/ctx_aaaaaaaaaaaaaaaaaaaaaaaa/versions", nil)
	if n := testing.AllocsPerRun(100, func() {
		if _, _, ok := match(r); !ok {
			t.Fatal("no route")
		}
	}); n != 0 {
		t.Errorf("match allocates %v times", n)
	}
}
