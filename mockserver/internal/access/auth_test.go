package access

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// testHash is a bcrypt hash of password at the lowest cost (a test's
// check then takes about a millisecond).
func testHash(password string) string {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// parseAdminAuth reads a credentials file into a checker.
func parseAdminAuth(r io.Reader) (*Auth, error) {
	users, err := ParseUsers(r)
	if err != nil {
		return nil, err
	}
	return NewAuth(users), nil
}

// response is what a check answered.
type response struct {
	Status int
	Header http.Header
	Body   []byte
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
		if a.Check(w, req) {
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
			if a.Check(w, req) {
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

// BenchmarkAdminAuth measures one bcrypt check at cost 10 (what
// -hash-password makes), which only a new or wrong password pays; the
// mockserver package's BenchmarkAdminAuth measures the requests that
// need none.
func BenchmarkAdminAuth(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse"), 10)
	if err != nil {
		b.Fatal(err)
	}
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
