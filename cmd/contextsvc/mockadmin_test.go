package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// authRecorder is a server that records the Authorization header of each
// request it gets.
type authRecorder struct {
	mu    sync.Mutex
	seen  []string // "METHOD PATH Authorization"
	serve http.HandlerFunc
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.serve(w, r)
}

func (a *authRecorder) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// mockChallenge answers the mock's 401 until the request carries Basic
// credentials, then as the mock's contract route.
func mockChallenge(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := r.BasicAuth(); !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="contextsvc-mock admin", charset="UTF-8"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.Write([]byte(`{"proxy":false}`))
}

// TestAdminCredentialsStayHome: the mock's admin credentials go only in
// answer to the mock's challenge, and never over plain http to a host
// that is not this machine; a server that is not the mock never sees
// them.
func TestAdminCredentialsStayHome(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		serve http.HandlerFunc
		// commands run against it, each with the exit code wanted
		runs []struct {
			args []string
			code int
		}
	}{
		{"404 to everything", http.NotFound, []struct {
			args []string
			code int
		}{{[]string{"trigger", "context.created"}, exitError}, {[]string{"events", "list"}, exitUnsupported}, {[]string{"clock", "advance", "1h"}, exitUnsupported},
			{[]string{"webhooks", "delete", "wh_x"}, exitUnsupported}}},
		{"another realm's challenge", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="intranet"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, []struct {
			args []string
			code int
		}{{[]string{"trigger", "context.created"}, exitError}, {[]string{"reset"}, exitUnsupported}}},
		{"the mock's realm named in another scheme", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Digest realm="contextsvc-mock admin", nonce="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, []struct {
			args []string
			code int
		}{{[]string{"trigger", "context.created"}, exitError}, {[]string{"chaos", "show"}, exitUnsupported}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &authRecorder{serve: tt.serve}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			c := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey,
				envAdminUser: "admin", envAdminPassword: "a long passphrase"}}
			for _, run := range tt.runs {
				if r := c.run(run.args...); r.code != run.code {
					t.Errorf("%q: exit %d, want %d\n%s", run.args, r.code, run.code, r.errOut)
				}
			}
			reqs := rec.requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the server")
			}
			for _, req := range reqs {
				if strings.HasSuffix(req, " ") {
					continue
				}
				if strings.Contains(req, "Basic") || strings.Contains(req, "/_mock/") {
					t.Errorf("the server got credentials: %q", req)
				}
			}
		})
	}
}

// TestAdminCredentialsTransport: the credentials answer the mock's
// challenge over https, and over http to this machine only; the first
// request never carries them.
func TestAdminCredentialsTransport(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		base string
		sent bool
	}{
		{"http://127.0.0.1:8080/v1", true},
		{"http://localhost:8080/v1", true},
		{"http://[::1]:8080/v1", true},
		{"https://mock.example/v1", true},
		{"http://mock.example/v1", false},
		{"http://192.168.1.20:8080/v1", false},
	} {
		rec := &authRecorder{serve: mockChallenge}
		m := newMockAdmin(tt.base, envMap{envAdminUser: "admin", envAdminPassword: "pw"}.get, nil)
		// Every request reaches rec, whatever the URL's host.
		m.hc.Transport = handlerTransport{rec}
		_, kind := probe(t.Context(), m)
		reqs := rec.requests()
		if len(reqs) == 0 || !strings.HasSuffix(reqs[0], " ") {
			t.Errorf("%s: the first request carried credentials: %q", tt.base, reqs)
		}
		if got := strings.Contains(strings.Join(reqs, "\n"), "Basic "); got != tt.sent {
			t.Errorf("%s: credentials sent %t, want %t: %q", tt.base, got, tt.sent, reqs)
		}
		if tt.sent {
			if kind != kindMock {
				t.Errorf("%s: kind %d, want the mock", tt.base, kind)
			}
			continue
		}
		err := m.lockedError()
		if kind != kindLockedMock || err == nil || !strings.Contains(err.Error(), "not sent over plain http to a host that is not this machine") {
			t.Errorf("%s: kind %d, %v", tt.base, kind, err)
		}
	}
}

// handlerTransport serves every request with a handler, in-process.
type handlerTransport struct{ h http.Handler }

func (h handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, req)
	return w.Result(), nil
}

type envMap map[string]string

func (e envMap) get(k string) string { return e[k] }

func TestBasicRealm(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		challenges []string
		realm      string
	}{
		{[]string{`Basic realm="contextsvc-mock admin", charset="UTF-8"`}, "contextsvc-mock admin"},
		{[]string{`basic charset="UTF-8", realm="contextsvc-mock admin"`}, "contextsvc-mock admin"},
		{[]string{`Bearer realm="x"`, `Basic realm="contextsvc-mock admin"`}, "contextsvc-mock admin"},
		{[]string{`Digest realm="contextsvc-mock admin"`}, ""},
		{[]string{`Basic realm="contextsvc-mock admin (not)"`}, "contextsvc-mock admin (not)"},
		{[]string{`Basic realm="unterminated`}, ""},
		{[]string{`Basic realm=plain`}, "plain"},
		{nil, ""},
	} {
		h := http.Header{}
		for _, c := range tt.challenges {
			h.Add("WWW-Authenticate", c)
		}
		if got := basicRealm(h); got != tt.realm {
			t.Errorf("%q: realm %q, want %q", tt.challenges, got, tt.realm)
		}
	}
}
