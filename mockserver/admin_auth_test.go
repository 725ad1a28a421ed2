package mockserver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
)

// testHash is a bcrypt hash of password at the lowest cost (a test's
// check then takes about a millisecond), made once per password.
var testHash = func() func(password string) string {
	var mu sync.Mutex
	made := map[string]string{}
	return func(password string) string {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := made[password]; ok {
			return h
		}
		h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		made[password] = string(h)
		return made[password]
	}
}()

// withTestAdminAuth is WithAdminAuth for a test's htpasswd text.
func withTestAdminAuth(htpasswd string) Option { return WithAdminAuth(strings.NewReader(htpasswd)) }

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// TestWithAdminAuthRefusesBadFiles: a credentials file that is not
// user:bcrypt-hash lines makes Open fail with an ErrInvalidOption naming
// the line and what is wrong, never quoting a hash.
func TestWithAdminAuthRefusesBadFiles(t *testing.T) {
	t.Parallel()
	good := testHash("pw")
	cost15 := strings.Replace(good, "$04$", "$15$", 1)
	var many strings.Builder
	for i := range access.MaxUsers + 1 {
		fmt.Fprintf(&many, "user%d:%s\n", i, good)
	}
	tests := []struct {
		name, file, want string
	}{
		{"empty", "", "WithAdminAuth: the admin credentials name no user"},
		{"only comments", "# admins\n\n  \n", "name no user"},
		{"no colon", "admin\n", "line 1: not user:hash"},
		{"no user name", "# x\n:" + good + "\n", "line 2: an admin user name must be 1 or more printable characters"},
		{"a control character in the name", "ad\tmin:" + good, `line 1: an admin user name must be 1 or more printable characters without ':', got "ad\tmin"`},
		{"an apr1 hash", "admin:$apr1$abc$def", `line 1: user "admin": the password hash is not bcrypt's`},
		{"a SHA hash", "admin:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "is not bcrypt's"},
		{"a plain password", "admin:hunter2", "is not bcrypt's"},
		{"a cut hash", "admin:" + good[:30], `line 1: user "admin": the bcrypt hash is malformed`},
		{"cost 15", "admin:" + cost15, "bcrypt cost 15 is over 14"},
		{"a user twice", "admin:" + good + "\nops:" + good + "\nadmin:" + good, `line 3: user "admin" is given twice`},
		{"too many users", many.String(), "line 1001: more than 1000 users"},
		{"over 1 MiB", "# " + strings.Repeat("x", access.MaxBytes), "over 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(WithAdminAuth(strings.NewReader(tt.file)))
			if !errors.Is(err, ErrInvalidOption) || s != nil {
				t.Fatalf("error %v, want an ErrInvalidOption saying %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), good[7:]) {
				t.Errorf("error %q, want it to say %q and quote no hash", err, tt.want)
			}
		})
	}
	// What htpasswd writes: $2y$, comments, blank lines, CRLF.
	ok := "# the mock's admins\r\n\r\nadmin:" + strings.Replace(good, "$2a$", "$2y$", 1) + "\r\nops:" + testHash("other") + "\n"
	if s, err := Open(WithAdminAuth(strings.NewReader(ok))); err != nil {
		t.Errorf("a file as htpasswd writes it: %v", err)
	} else {
		s.Close(t.Context())
	}
	if _, err := Open(WithAdminAuth(nil)); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "WithAdminAuth(nil)") {
		t.Errorf("WithAdminAuth(nil): %v", err)
	}
}

// TestAdminAuth: with credentials, every admin route (the dashboard, its
// stream and unknown paths included) is a 401 with a Basic challenge
// without them or with wrong ones, and changes nothing; the right ones
// are served; the /v1 API keeps its bearer keys; the cross-site check
// comes first.
func TestAdminAuth(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, withTestAdminAuth("admin:"+testHash("s3cret")+"\nops:"+testHash("0ps")))
	create(t, ts, `{"name":"Keep me"}`)
	good := basic("admin", "s3cret")
	tests := []struct {
		name, method, path, auth string
		header                   map[string]string
		status                   int
	}{
		{"no credentials", "POST", "/_mock/reset", "", nil, 401},
		{"a wrong password", "POST", "/_mock/reset", basic("admin", "s3cre"), nil, 401},
		{"another user's password", "POST", "/_mock/reset", basic("ops", "s3cret"), nil, 401},
		{"an unknown user", "POST", "/_mock/reset", basic("root", "s3cret"), nil, 401},
		{"a bearer key", "POST", "/_mock/reset", "Bearer " + ts.APIKey, nil, 401},
		{"the state without", "GET", "/_mock/state", "", nil, 401},
		{"the dashboard without", "GET", "/_mock/ui/", "", nil, 401},
		{"a dashboard file without", "GET", "/_mock/ui/app.js", "", nil, 401},
		{"the stream without", "GET", "/_mock/stream", "", nil, 401},
		{"an unknown admin path without", "GET", "/_mock/nope", "", nil, 401},
		{"cross-site, with credentials", "GET", "/_mock/state", good, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"the state", "GET", "/_mock/state", good, nil, 200},
		{"the dashboard", "GET", "/_mock/ui/", good, nil, 200},
		{"the other user", "GET", "/_mock/clock", basic("ops", "0ps"), nil, 200},
		{"an unknown admin path", "GET", "/_mock/nope", good, nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Authorization": tt.auth}
			for k, v := range tt.header {
				h[k] = v
			}
			r := do(t, ts, call{method: tt.method, path: tt.path, key: "-", header: h})
			if r.Status != tt.status {
				t.Fatalf("%d %.300s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.status == 401 {
				if got := r.Header.Get("WWW-Authenticate"); got != `Basic realm="contextsvc-mock admin", charset="UTF-8"` {
					t.Errorf("WWW-Authenticate %q", got)
				}
				if typ, _ := r.errorOf(t); typ != "unauthorized" {
					t.Errorf("type %q", typ)
				}
			}
			if n := len(ts.Snapshot().Contexts); n != 1 {
				t.Errorf("%d contexts after the request, want the one kept", n)
			}
		})
	}
	// The /v1 API asks for its key, not for the admin's password.
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts"}); r.Status != 200 {
		t.Errorf("GET /v1/contexts with its key: %d", r.Status)
	}
	r := do(t, ts, call{method: "GET", path: "/v1/contexts", key: "-", header: map[string]string{"Authorization": good}})
	if r.Status != 401 || r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("GET /v1/contexts with the admin's password: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	// With it, the admin acts.
	if r := do(t, ts, call{method: "POST", path: "/_mock/reset", key: "-", header: map[string]string{"Authorization": good}}); r.Status != 204 {
		t.Errorf("reset with credentials: %d %s", r.Status, r.Body)
	}
	if n := len(ts.Snapshot().Contexts); n != 0 {
		t.Errorf("%d contexts after the reset", n)
	}
}

// BenchmarkAdminAuth: an admin request (GET /_mock/clock) without
// credentials configured, the baseline, beside the same with credentials
// already verified (a keyed hash and a map lookup). The access package's
// BenchmarkAdminAuth measures one bcrypt check at cost 10, which only a
// new or wrong password pays.
func BenchmarkAdminAuth(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse"), 10)
	if err != nil {
		b.Fatal(err)
	}
	opt := WithAdminAuth(strings.NewReader("admin:" + string(hash)))
	serve := func(b *testing.B, s *Server, auth string) {
		for b.Loop() {
			req := httptest.NewRequest("GET", "/_mock/clock", nil)
			req.Host = "127.0.0.1"
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	}
	b.Run("none", func(b *testing.B) { serve(b, unvalidated(New()), "") })
	b.Run("remembered", func(b *testing.B) { serve(b, unvalidated(New(opt)), basic("admin", "correct horse")) })
}
