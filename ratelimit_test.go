package contextsvc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

// *rate.Limiter is usable as a Limiter as it is.
var _ Limiter = (*rate.Limiter)(nil)

// enterprisePlan is EnterprisePlan for limits that must be accepted.
func enterprisePlan(tb testing.TB, perMinute, burst int) Plan {
	tb.Helper()
	p, err := EnterprisePlan(perMinute, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPlans(t *testing.T) {
	t.Parallel()
	type plan struct {
		Name             string
		PerMinute, Burst int
		String           string
	}
	got := []plan{}
	for _, p := range []Plan{FreePlan(), ProPlan(), BusinessPlan(), enterprisePlan(t, 5000, 400)} {
		got = append(got, plan{p.Name(), p.PerMinute(), p.Burst(), p.String()})
	}
	want := []plan{
		{"free", 60, 10, "free (60/min, burst 10)"},
		{"pro", 300, 50, "pro (300/min, burst 50)"},
		{"business", 1000, 100, "business (1000/min, burst 100)"},
		{"enterprise", 5000, 400, "enterprise (5000/min, burst 400)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	l, err := NewLocalLimiter(ProPlan())
	if err != nil {
		t.Fatal(err)
	}
	// One token below the plan's burst: the headroom for arrival jitter.
	if l.rl.Burst() != 49 || l.rl.Limit() != 5 || l.Plan() != ProPlan() {
		t.Errorf("pro limiter: burst %d, %v/s, plan %v; want 49, 5/s, pro", l.rl.Burst(), l.rl.Limit(), l.Plan())
	}
	if l, err := NewLocalLimiter(enterprisePlan(t, 60, 1)); err != nil || l.rl.Burst() != 1 {
		t.Errorf("a burst-1 plan must still let one request through at once: %v", err)
	}
	if _, err := NewLocalLimiter(Plan{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewLocalLimiter(Plan{}) err = %v", err)
	}
	for _, limits := range [][2]int{{0, 1}, {1, 0}, {-1, 5}} {
		if p, err := EnterprisePlan(limits[0], limits[1]); !errors.Is(err, ErrInvalidArgument) || p != (Plan{}) {
			t.Errorf("EnterprisePlan(%d, %d) = %v, %v; want the zero Plan and ErrInvalidArgument", limits[0], limits[1], p, err)
		}
	}
}

func TestLimiterBurstThenWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// One token a minute, burst 3 (so 2 in the client's bucket): two
		// calls pass at once, the third must wait most of a minute, which
		// a 150 ms deadline does not allow: it is refused at once.
		c, mt, rec := newTestClient(t, WithPlan(enterprisePlan(t, 1, 3)))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, `{"id":"ctx_1"}`)))
		for i := range 2 {
			if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Contexts.Get(ctx, "ctx_1")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("third call: err = %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the refused wait took %v, want none", d)
		}
		if n := rec.count(); n != 2 {
			t.Errorf("%d requests reached the server, want 2", n)
		}
	})
}

func TestLimiterPacesRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// 3000/min is one token every 20 ms; with burst 1, three calls
		// take exactly two refills on the bubble's clock.
		c, mt, _ := newTestClient(t, WithPlan(enterprisePlan(t, 3000, 1)))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(200, `{"id":"ctx_1"}`))
		start := time.Now()
		for range 3 {
			if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 40*time.Millisecond {
			t.Errorf("three calls took %v, want two 20 ms refills", d)
		}
	})
}

// countingLimiter counts waits and lets each through, or fails with err.
type countingLimiter struct {
	waits atomic.Int32
	err   error
}

func (l *countingLimiter) Wait(context.Context) error {
	l.waits.Add(1)
	return l.err
}

func TestRetriesSpendTokens(t *testing.T) {
	t.Parallel()
	lim := &countingLimiter{}
	c, mt, rec := newTestClient(t, WithLimiter(lim))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(sequence(
		respond(503, `{}`), respond(429, `{}`, "Retry-After", "0"), respond(200, `{"id":"ctx_1"}`))))
	if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		t.Fatal(err)
	}
	if w, n := lim.waits.Load(), rec.count(); w != 3 || n != 3 {
		t.Errorf("%d limiter waits for %d attempts, want 3 and 3", w, n)
	}
}

func TestLimiterFailureIsNotRetried(t *testing.T) {
	t.Parallel()
	boom := errors.New("shared limiter unreachable")
	lim := &countingLimiter{err: boom}
	c, mt, rec := newTestClient(t, WithLimiter(lim))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, `{}`)))
	_, err := c.Contexts.Get(context.Background(), "ctx_1")
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if want := "contextsvc: GET /contexts/ctx_1: waiting for the rate limiter: shared limiter unreachable"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if w, n := lim.waits.Load(), rec.count(); w != 1 || n != 0 {
		t.Errorf("%d waits, %d requests; want 1 and 0", w, n)
	}

	// With a deadline, the limiter's own failure is still not reported as
	// one.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err = c.Contexts.Get(ctx, "ctx_1")
	if !errors.Is(err, boom) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with a deadline: err = %v, want %v and no DeadlineExceeded", err, boom)
	}
}

// signallingLimiter tells the test when a call starts waiting.
type signallingLimiter struct {
	inner   Limiter
	waiting chan struct{}
}

func (l *signallingLimiter) Wait(ctx context.Context) error {
	select {
	case l.waiting <- struct{}{}:
	default:
	}
	return l.inner.Wait(ctx)
}

func TestLimiterWaitHonoursCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// One token a minute: the second call would wait 60 s.
		inner, err := NewLocalLimiter(enterprisePlan(t, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		lim := &signallingLimiter{inner: inner, waiting: make(chan struct{}, 1)}
		c, mt, rec := newTestClient(t, WithLimiter(lim))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, `{"id":"ctx_1"}`)))
		if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
			t.Fatal(err)
		}
		<-lim.waiting // drain the first call's signal

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := c.Contexts.Get(ctx, "ctx_1")
			done <- err
		}()
		<-lim.waiting
		synctest.Wait() // the call is blocked in the limiter
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the call returned %v after it started, want at once", d)
		}
		if n := rec.count(); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want RateLimit
	}{
		{http.Header{}, RateLimit{}},
		{http.Header{"X-Ratelimit-Limit": {"x"}}, RateLimit{}},
		{http.Header{"X-Ratelimit-Limit": {"300"}, "X-Ratelimit-Remaining": {"12"}, "X-Ratelimit-Reset": {"8"}},
			RateLimit{Limit: 300, Remaining: 12, Reset: 8 * time.Second, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"0.5"}},
			RateLimit{Limit: 60, Reset: 500 * time.Millisecond, Observed: now}},
		// Values that cannot be are refused, never turned into a negative
		// count or an overflowed duration.
		{http.Header{"X-Ratelimit-Limit": {"-1"}, "X-Ratelimit-Remaining": {"5"}, "X-Ratelimit-Reset": {"8"}}, RateLimit{}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"-3"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"Inf"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"+Inf"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"NaN"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"1e300"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"-8"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Reset": {"86401"}}, RateLimit{Limit: 60, Observed: now}},
		{http.Header{"X-Ratelimit-Limit": {"99999999999999999999"}}, RateLimit{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parseRateLimit(tt.h, now)); diff != "" {
			t.Errorf("parseRateLimit(%v) (-want +got):\n%s", tt.h, diff)
		}
	}
}

// gateLimiter lets the first wait through and blocks every later one until
// its context ends, telling the test when it starts blocking.
type gateLimiter struct {
	waits   atomic.Int32
	blocked chan struct{}
}

func (l *gateLimiter) Wait(ctx context.Context) error {
	if l.waits.Add(1) == 1 {
		return nil
	}
	l.blocked <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

func TestRetryCancelledAtTheLimiter(t *testing.T) {
	t.Parallel()
	// The first attempt gets a 503; its retry waits for a token and the
	// caller gives up: the call reports context.Canceled after the one
	// attempt that was sent.
	lim := &gateLimiter{blocked: make(chan struct{}, 1)}
	c, mt, rec := newTestClient(t, WithLimiter(lim))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(503, `{}`)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Contexts.Get(ctx, "ctx_1")
		done <- err
	}()
	<-lim.blocked
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rec.count() != 1 || strings.Contains(err.Error(), "attempts") {
		t.Errorf("%d requests sent, error %q; want 1 and no retry count", rec.count(), err)
	}
}

func FuzzParseRateLimit(f *testing.F) {
	for _, v := range [][3]string{{"300", "12", "8"}, {"60", "", "0.5"}, {"-1", "-1", "-1"}, {"60", "1", "Inf"}, {"60", "1", "1e300"}, {"60", "1", "NaN"}} {
		f.Add(v[0], v[1], v[2])
	}
	f.Fuzz(func(t *testing.T, limit, remaining, reset string) {
		h := http.Header{"X-Ratelimit-Limit": {limit}, "X-Ratelimit-Remaining": {remaining}, "X-Ratelimit-Reset": {reset}}
		rl := parseRateLimit(h, time.Time{})
		if rl.Limit < 0 || rl.Remaining < 0 || rl.Reset < 0 || rl.Reset > 24*time.Hour {
			t.Errorf("parseRateLimit(%q, %q, %q) = %+v: a value that cannot be", limit, remaining, reset, rl)
		}
	})
}

func TestParsePlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		perMinute int
		burst     int
		err       string
	}{
		{"free", 60, 10, ""},
		{"pro", 300, 50, ""},
		{"business", 1000, 100, ""},
		{"enterprise=1200/10", 1200, 10, ""},
		{"enterprise=1200", 0, 0, "takes two positive numbers"},
		{"enterprise=0/10", 0, 0, "takes two positive numbers"},
		{"enterprise=-5/10", 0, 0, "takes two positive numbers"},
		{"enterprise=x/y", 0, 0, "takes two positive numbers"},
		{"enterprise=10/5/1", 0, 0, "takes two positive numbers"},
		{"gold", 0, 0, "must be free, pro, business or enterprise=PERMINUTE/BURST"},
		{"", 0, 0, "must be free"},
		{"Pro", 0, 0, "must be free"},
	} {
		p, err := ParsePlan(tc.in)
		switch {
		case tc.err != "":
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePlan(%q) = %v, %v; want an ErrInvalidArgument saying %q", tc.in, p, err, tc.err)
			}
		case err != nil || p.PerMinute() != tc.perMinute || p.Burst() != tc.burst:
			t.Errorf("ParsePlan(%q) = %v, %v; want %d/min burst %d", tc.in, p, err, tc.perMinute, tc.burst)
		}
	}
}
