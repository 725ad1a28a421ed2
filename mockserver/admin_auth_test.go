package mockserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
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
	for i := range maxAdminUsers + 1 {
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
		{"over 1 MiB", "# " + strings.Repeat("x", maxAdminAuthBytes), "over 1048576 bytes"},
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

// TestAdminAuthChecks: a password is checked with bcrypt once, then
// remembered (by a keyed hash, the set bounded); checks of others wait
// their turn, and past the waiting room or the rate a request is a 429
// with Retry-After, while remembered credentials still pass.
func TestAdminAuthChecks(t *testing.T) {
	t.Parallel()
	a, err := parseAdminAuth(strings.NewReader("admin:" + testHash("s3cret") + "\nops:" + testHash("0ps")))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ctx context.Context, user, pass string) *response {
		req, _ := http.NewRequestWithContext(ctx, "GET", "/_mock/clock", nil)
		req.Header.Set("Authorization", basic(user, pass))
		w := httptest.NewRecorder()
		if a.check(w, req) {
			return &response{Status: 200, Header: w.Header()}
		}
		return &response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	}
	if r := ask(t.Context(), "admin", "s3cret"); r.Status != 200 {
		t.Fatalf("the right password: %d %s", r.Status, r.Body)
	}
	if len(a.verified) != 1 {
		t.Fatalf("%d credentials remembered, want 1", len(a.verified))
	}
	for k := range a.verified {
		if strings.Contains(string(k[:]), "s3cret") {
			t.Error("the set holds the password")
		}
	}

	// Every check slot taken, and the rate spent: remembered credentials
	// pass without a check; new ones are a 429 at once.
	a.checks <- struct{}{}
	for range maxCheckWaiters {
		a.waiting <- struct{}{}
	}
	if r := ask(t.Context(), "admin", "s3cret"); r.Status != 200 {
		t.Errorf("remembered credentials while checks are busy: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ user, pass string }{{"ops", "0ps"}, {"admin", "guess"}} {
		r := ask(t.Context(), tc.user, tc.pass)
		if r.Status != 429 || r.Header.Get("Retry-After") != "1" || !strings.Contains(string(r.Body), "too many admin password checks") {
			t.Errorf("%s with every waiting slot taken: %d %q %s", tc.user, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	// One slot free to wait in: a request waits for the check until it
	// ends, then goes without a check.
	<-a.waiting
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if r := ask(ctx, "ops", "0ps"); r.Status != 429 {
		t.Errorf("a request that ended while waiting: %d", r.Status)
	}
	<-a.checks
	for range maxCheckWaiters - 1 {
		<-a.waiting
	}
	// The rate of checks spent: a 429, remembered credentials still pass.
	a.limiter = rate.NewLimiter(0, 0)
	if r := ask(t.Context(), "ops", "0ps"); r.Status != 429 {
		t.Errorf("past the rate of checks: %d", r.Status)
	}
	if r := ask(t.Context(), "admin", "s3cret"); r.Status != 200 {
		t.Errorf("remembered credentials past the rate: %d", r.Status)
	}
	a.limiter = rate.NewLimiter(rate.Inf, 1)
	if r := ask(t.Context(), "ops", "0ps"); r.Status != 200 {
		t.Errorf("the other user once checks are free: %d %s", r.Status, r.Body)
	}
	// A wrong password is never remembered; the set starts over when full.
	for range 3 {
		if r := ask(t.Context(), "ops", "wrong"); r.Status != 401 {
			t.Errorf("a wrong password: %d", r.Status)
		}
	}
	if len(a.verified) != 2 {
		t.Errorf("%d credentials remembered, want 2", len(a.verified))
	}
	for i := len(a.verified); i < maxVerified; i++ {
		a.verified[a.credentialKey(fmt.Sprint("u", i), "p")] = struct{}{}
	}
	if r := ask(t.Context(), "admin", "s3cret"); r.Status != 200 || len(a.verified) != maxVerified {
		t.Errorf("a remembered credential with the set full: %d, %d in the set", r.Status, len(a.verified))
	}
	delete(a.verified, a.credentialKey("admin", "s3cret"))
	a.verified[a.credentialKey("x", "y")] = struct{}{}
	if r := ask(t.Context(), "admin", "s3cret"); r.Status != 200 || len(a.verified) != 1 {
		t.Errorf("a new credential with the set full: %d, %d in the set, want it alone", r.Status, len(a.verified))
	}
}

// TestAdminAuthWaitersShareACheck: a request that waited for the check
// while another verified the same credentials passes without a check of
// its own (here none could run: the rate is spent).
func TestAdminAuthWaitersShareACheck(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a, err := parseAdminAuth(strings.NewReader("ops:" + testHash("0ps")))
		if err != nil {
			t.Fatal(err)
		}
		a.limiter = rate.NewLimiter(0, 0)
		a.checks <- struct{}{} // another request's check runs
		done := make(chan int, 1)
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "/_mock/clock", nil)
			req.Header.Set("Authorization", basic("ops", "0ps"))
			w := httptest.NewRecorder()
			if a.check(w, req) {
				done <- 200
				return
			}
			done <- w.Code
		}()
		synctest.Wait() // the request waits for the check
		a.mu.Lock()
		a.verified[a.credentialKey("ops", "0ps")] = struct{}{} // what the other check found
		a.mu.Unlock()
		<-a.checks
		if code := <-done; code != 200 {
			t.Errorf("the waiting request: %d, want it served", code)
		}
	})
}

// BenchmarkAdminAuth: an admin request (GET /_mock/clock) without
// credentials configured, the baseline, beside the same with credentials
// already verified (a keyed hash and a map lookup), and one bcrypt check
// at cost 10 (what -hash-password makes), which only a new or wrong
// password pays.
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
	b.Run("bcrypt-cost-10", func(b *testing.B) {
		a, _ := parseAdminAuth(strings.NewReader("admin:" + string(hash)))
		a.limiter = rate.NewLimiter(rate.Inf, 1)
		req := httptest.NewRequest("GET", "/_mock/clock", nil)
		for b.Loop() {
			if ok, e := a.verify(req, a.credentialKey("admin", "x"), "admin", "correct horse"); !ok || e != nil {
				b.Fatal(ok, e)
			}
		}
	})
}
