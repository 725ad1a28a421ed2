package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a settable clock for the deduper and handler tests.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var testStart = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// mustClaim claims id and fails t unless the result is want; it returns the
// token.
func mustClaim(t *testing.T, d Deduper, id string, lease time.Duration, want ClaimResult) ClaimToken {
	t.Helper()
	got, token, err := d.Claim(context.Background(), id, lease)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Claim(%s) = %v, want %v", id, got, want)
	}
	return token
}

func mustCommit(t *testing.T, d Deduper, id string, token ClaimToken, remember time.Duration) {
	t.Helper()
	if err := d.Commit(context.Background(), id, token, remember); err != nil {
		t.Fatal(err)
	}
}

// newDeduper is NewMemoryDeduper of size ids on the clock now.
func newDeduper(tb testing.TB, size int, now func() time.Time) *MemoryDeduper {
	tb.Helper()
	d, err := NewMemoryDeduper(size, WithDeduperClock(now))
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestNewMemoryDeduperRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int
		opts []MemoryDeduperOption
		want string
	}{
		{"zero size", 0, nil, "NewMemoryDeduper(0)"},
		{"negative size", -5, nil, "NewMemoryDeduper(-5)"},
		{"nil clock", 10, []MemoryDeduperOption{WithDeduperClock(nil)}, "WithDeduperClock(nil)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := NewMemoryDeduper(tc.size, tc.opts...)
			if d != nil || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewMemoryDeduper = %v, %v; want an ErrInvalidArgument saying %q", d, err, tc.want)
			}
		})
	}
}

// The rules every Deduper follows are checked by package dedupetest (see
// dedupe_conformance_test.go); these tests are the MemoryDeduper's own:
// exact expiry instants on its clock, and its bound.

// TestMemoryDeduperExactExpiry: an entry is there until, and gone from,
// the instant its duration has passed.
func TestMemoryDeduperExactExpiry(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	d := newDeduper(t, 10, clk.Now)

	tok := mustClaim(t, d, "evt_a", time.Minute, ClaimAcquired)
	mustCommit(t, d, "evt_a", tok, time.Hour)
	clk.Advance(time.Hour - time.Nanosecond)
	mustClaim(t, d, "evt_a", time.Minute, ClaimDuplicate)
	clk.Advance(time.Nanosecond)
	if n := d.Len(); n != 0 {
		t.Errorf("Len = %d after expiry, want 0", n)
	}
	mustClaim(t, d, "evt_a", time.Minute, ClaimAcquired)

	mustClaim(t, d, "evt_b", 10*time.Minute, ClaimAcquired)
	clk.Advance(10*time.Minute - 1)
	mustClaim(t, d, "evt_b", 10*time.Minute, ClaimBusy)
	clk.Advance(1)
	// The holder died: after the lease the id is free again.
	mustClaim(t, d, "evt_b", 10*time.Minute, ClaimAcquired)
}

func TestMemoryDeduperBounded(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	const size = 5
	d := newDeduper(t, size, clk.Now)
	for i := range 3 * size {
		id := fmt.Sprintf("evt_%02d", i)
		tok := mustClaim(t, d, id, time.Hour, ClaimAcquired)
		// Later ids are remembered longer, so the oldest go first.
		mustCommit(t, d, id, tok, time.Duration(i+2)*time.Hour)
		if n := d.Len(); n > size {
			t.Fatalf("Len = %d, bound %d", n, size)
		}
	}
	// The newest ids are still remembered; the first ones were evicted.
	mustClaim(t, d, fmt.Sprintf("evt_%02d", 3*size-1), time.Hour, ClaimDuplicate)
	mustClaim(t, d, "evt_00", time.Hour, ClaimAcquired)
}

// TestMemoryDeduperEvictsDoneBeforeClaims: when full, a remembered id goes,
// even one remembered for far longer than any claim's lease, and never a
// claim in progress; full of claims only, a new claim is refused with
// ErrDeduperFull until one of them ends.
func TestMemoryDeduperEvictsDoneBeforeClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newTestClock(testStart)
	d := newDeduper(t, 4, clk.Now)
	claims := map[string]ClaimToken{}
	for _, id := range []string{"evt_c1", "evt_c2"} {
		claims[id] = mustClaim(t, d, id, 10*time.Minute, ClaimAcquired)
	}
	for i, id := range []string{"evt_d1", "evt_d2"} {
		tok := mustClaim(t, d, id, 10*time.Minute, ClaimAcquired)
		mustCommit(t, d, id, tok, time.Duration(27+i)*time.Hour)
	}
	// Full. Each new claim drops the remembered id that lapses soonest.
	claims["evt_c3"] = mustClaim(t, d, "evt_c3", 10*time.Minute, ClaimAcquired)
	mustClaim(t, d, "evt_d2", 10*time.Minute, ClaimDuplicate)
	claims["evt_c4"] = mustClaim(t, d, "evt_c4", 10*time.Minute, ClaimAcquired)
	for id := range claims {
		mustClaim(t, d, id, 10*time.Minute, ClaimBusy)
	}
	// Full of claims only: refused, and nothing was dropped.
	if _, _, err := d.Claim(ctx, "evt_new", 10*time.Minute); !errors.Is(err, ErrDeduperFull) {
		t.Fatalf("Claim when full of claims: %v, want ErrDeduperFull", err)
	}
	for id := range claims {
		mustClaim(t, d, id, 10*time.Minute, ClaimBusy)
	}
	// A late Commit that must record afresh cannot either.
	if err := d.Commit(ctx, "evt_gone", "tok", time.Hour); !errors.Is(err, ErrDeduperFull) {
		t.Fatalf("late Commit when full of claims: %v, want ErrDeduperFull", err)
	}
	// A claim's own Commit needs no slot; the done id it leaves is the
	// next to go.
	mustCommit(t, d, "evt_c1", claims["evt_c1"], time.Hour)
	mustClaim(t, d, "evt_new", 10*time.Minute, ClaimAcquired)
	if n := d.Len(); n != 4 {
		t.Errorf("Len = %d, want 4", n)
	}
	// A released claim frees its slot; evt_c1 was evicted, so it is free
	// again rather than a duplicate.
	if err := d.Release(ctx, "evt_c2", claims["evt_c2"]); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, d, "evt_c1", 10*time.Minute, ClaimAcquired)
	// Lapsed claims free their slots.
	clk.Advance(10 * time.Minute)
	if n := d.Len(); n != 0 {
		t.Errorf("Len = %d after every lease lapsed, want 0", n)
	}
}

// TestMemoryDeduperManyEvictions feeds an input that only a linear search
// for the entry to evict would choke on: a full deduper of 20,000 ids
// taking 40,000 more, each evicting one. It asserts no time; a quadratic
// path would make it run for minutes.
func TestMemoryDeduperManyEvictions(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	const size = 20_000
	d := newDeduper(t, size, clk.Now)
	for i := range 3 * size {
		id := "evt_" + strconv.Itoa(i)
		tok := mustClaim(t, d, id, time.Minute, ClaimAcquired)
		mustCommit(t, d, id, tok, time.Duration(i+1)*time.Second)
	}
	if n := d.Len(); n != size {
		t.Errorf("Len = %d, want %d", n, size)
	}
	mustClaim(t, d, "evt_"+strconv.Itoa(2*size), time.Minute, ClaimDuplicate)  // kept
	mustClaim(t, d, "evt_"+strconv.Itoa(2*size-1), time.Minute, ClaimAcquired) // evicted
}

func TestClaimResultString(t *testing.T) {
	t.Parallel()
	for r, want := range map[ClaimResult]string{ClaimAcquired: "acquired", ClaimDuplicate: "duplicate", ClaimBusy: "busy", 0: "unknown"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}

// TestDeduperThroughHandler runs a delivery story through the handler
// with the in-memory Deduper: a failing fn and its successful retry,
// duplicates, a concurrent duplicate, the window's last instant, and
// forgetting after the window. redisstore runs the same story on Redis.
func TestDeduperThroughHandler(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	d := newDeduper(t, DefaultMemoryDeduperSize, clk.Now)
	var calls atomic.Int32
	var fail atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	fn := func(_ context.Context, e *Event) error {
		calls.Add(1)
		if e.ID == "evt_slow" {
			close(entered)
			<-release
		}
		if fail.Load() {
			return errors.New("receiver down")
		}
		return nil
	}
	h := newHandler(t, testSecret, fn, WithWebhookClock(clk.Now), WithDeduper(d))
	body := eventBody("evt_story", testStart)
	sig := Sign(body, testSecret)
	step := func(name string, wantCode int, wantCalls int32) {
		t.Helper()
		if w := deliver(t, h, body, sig); w.Code != wantCode || calls.Load() != wantCalls {
			t.Fatalf("%s: status %d, fn calls %d; want %d, %d", name, w.Code, calls.Load(), wantCode, wantCalls)
		}
	}

	fail.Store(true)
	step("failing fn", http.StatusInternalServerError, 1)
	fail.Store(false)
	clk.Advance(time.Minute)
	step("retry", http.StatusOK, 2)
	clk.Advance(5 * time.Minute)
	step("duplicate", http.StatusOK, 2)

	slow := eventBody("evt_slow", clk.Now())
	slowSig := Sign(slow, testSecret)
	first := make(chan int)
	go func() { first <- deliver(t, h, slow, slowSig).Code }()
	<-entered
	if w := deliver(t, h, slow, slowSig); w.Code != http.StatusConflict {
		t.Errorf("concurrent duplicate: status %d, want 409", w.Code)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("slow event: status %d", code)
	}
	if w := deliver(t, h, slow, slowSig); w.Code != http.StatusOK || calls.Load() != 3 {
		t.Errorf("slow event again: status %d, calls %d; want 200, 3", w.Code, calls.Load())
	}

	clk.Set(testStart.Add(DefaultReplayWindow))
	step("duplicate at the window's last instant", http.StatusOK, 3)
	clk.Set(testStart.Add(DefaultReplayWindow + time.Hour))
	if n := d.Len(); n != 0 {
		t.Errorf("%d ids held an hour after the window, want 0", n)
	}
}

// TestWebhookHandlerLeaseLapses: fn runs past its claim's 10-minute
// lease, a redelivery claims the event meanwhile and fails; the first
// attempt's late success is not recorded over the second's claim (the
// handler logs it), and the second's Release frees the id for the next
// retry, which sees the event afresh.
func TestWebhookHandlerLeaseLapses(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	d := newDeduper(t, DefaultMemoryDeduperSize, clk.Now)
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	var calls atomic.Int32
	entered, finish := make(chan struct{}), make(chan struct{})
	secondEntered, secondFinish := make(chan struct{}), make(chan struct{})
	fn := func(context.Context, *Event) error {
		switch calls.Add(1) {
		case 1:
			close(entered)
			<-finish
			return nil
		case 2:
			close(secondEntered)
			<-secondFinish
			return errors.New("second attempt fails")
		}
		return nil
	}
	h := newHandler(t, testSecret, fn, WithWebhookClock(clk.Now), WithDeduper(d), WithWebhookLogger(logger))
	body := eventBody("evt_lapse", testStart)
	sig := Sign(body, testSecret)

	first := make(chan int)
	go func() { first <- deliver(t, h, body, sig).Code }()
	<-entered
	clk.Advance(webhookClaimLease) // the first attempt's lease lapses
	second := make(chan int)
	go func() { second <- deliver(t, h, body, sig).Code }()
	<-secondEntered
	close(finish) // the first attempt succeeds, late
	if code := <-first; code != http.StatusOK {
		t.Errorf("first attempt: status %d, want 200 (fn succeeded)", code)
	}
	if w := deliver(t, h, body, sig); w.Code != http.StatusConflict {
		t.Errorf("while the second attempt runs: status %d, want 409 (its claim stands)", w.Code)
	}
	close(secondFinish)
	if code := <-second; code != http.StatusInternalServerError {
		t.Errorf("second attempt: status %d, want 500", code)
	}
	if w := deliver(t, h, body, sig); w.Code != http.StatusOK || calls.Load() != 3 {
		t.Errorf("retry: status %d, calls %d; want 200, 3", w.Code, calls.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "outlived its claim's lease") {
		t.Errorf("no warning about the lapsed lease in the log:\n%s", logs.String())
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestZeroValues: the zero MemoryDeduper works (the default size, on
// time.Now), and the zero LocalLimiter refuses instead of panicking.
func TestZeroValues(t *testing.T) {
	t.Parallel()
	var d MemoryDeduper
	tok := mustClaim(t, &d, "evt_z", time.Minute, ClaimAcquired)
	mustCommit(t, &d, "evt_z", tok, time.Hour)
	mustClaim(t, &d, "evt_z", time.Minute, ClaimDuplicate)
	if n := d.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
	if err := new(LocalLimiter).Wait(context.Background()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero LocalLimiter's Wait: %v, want ErrInvalidArgument", err)
	}
}
