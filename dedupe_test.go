package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

func mustClaim(t *testing.T, d Deduper, id string, until time.Time, want ClaimResult) {
	t.Helper()
	got, err := d.Claim(context.Background(), id, until)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Claim(%s) = %v, want %v", id, got, want)
	}
}

func TestMemoryDeduperLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newTestClock(testStart)
	d := NewMemoryDeduper(10, clk.Now)
	lease := testStart.Add(time.Minute)

	mustClaim(t, d, "evt_a", lease, ClaimAcquired)
	mustClaim(t, d, "evt_a", lease, ClaimBusy)
	// A failed attempt releases; the retry acquires again.
	if err := d.Release(ctx, "evt_a"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, d, "evt_a", lease, ClaimAcquired)
	if err := d.Commit(ctx, "evt_a", testStart.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, d, "evt_a", lease, ClaimDuplicate)
	// Release after commit does not forget a handled id.
	if err := d.Release(ctx, "evt_a"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, d, "evt_a", lease, ClaimDuplicate)

	// Remembered until exactly rememberUntil, forgotten then.
	clk.Advance(time.Hour - time.Nanosecond)
	mustClaim(t, d, "evt_a", clk.Now().Add(time.Minute), ClaimDuplicate)
	clk.Advance(time.Nanosecond)
	if n := d.Len(); n != 0 {
		t.Errorf("Len = %d after expiry, want 0", n)
	}
	mustClaim(t, d, "evt_a", clk.Now().Add(time.Minute), ClaimAcquired)
}

func TestMemoryDeduperLeaseLapses(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	d := NewMemoryDeduper(10, clk.Now)
	mustClaim(t, d, "evt_a", testStart.Add(10*time.Minute), ClaimAcquired)
	clk.Advance(10*time.Minute - 1)
	mustClaim(t, d, "evt_a", clk.Now().Add(10*time.Minute), ClaimBusy)
	clk.Advance(1)
	// The holder died: after the lease the id is free again.
	mustClaim(t, d, "evt_a", clk.Now().Add(10*time.Minute), ClaimAcquired)
}

func TestMemoryDeduperBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newTestClock(testStart)
	const size = 5
	d := NewMemoryDeduper(size, clk.Now)
	for i := range 3 * size {
		id := fmt.Sprintf("evt_%02d", i)
		mustClaim(t, d, id, testStart.Add(time.Hour), ClaimAcquired)
		// Later ids are remembered longer, so the oldest go first.
		if err := d.Commit(ctx, id, testStart.Add(time.Duration(i+2)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := d.Len(); n > size {
			t.Fatalf("Len = %d, bound %d", n, size)
		}
	}
	// The newest ids are still remembered; the first ones were evicted.
	mustClaim(t, d, fmt.Sprintf("evt_%02d", 3*size-1), testStart.Add(time.Hour), ClaimDuplicate)
	mustClaim(t, d, "evt_00", testStart.Add(time.Hour), ClaimAcquired)
}

func TestMemoryDeduperCommitInPastForgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newTestClock(testStart)
	d := NewMemoryDeduper(0, clk.Now)
	mustClaim(t, d, "evt_a", testStart.Add(time.Minute), ClaimAcquired)
	if err := d.Commit(ctx, "evt_a", testStart); err != nil {
		t.Fatal(err)
	}
	if n := d.Len(); n != 0 {
		t.Errorf("Len = %d, want 0", n)
	}
	// Commit without a claim (it lapsed) still records the id.
	if err := d.Commit(ctx, "evt_b", testStart.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, d, "evt_b", testStart.Add(time.Minute), ClaimDuplicate)
}

// TestMemoryDeduperConcurrentClaims: of many goroutines claiming one id at
// once, exactly one acquires it.
func TestMemoryDeduperConcurrentClaims(t *testing.T) {
	t.Parallel()
	d := NewMemoryDeduper(0, nil)
	var acquired atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			<-start
			r, err := d.Claim(context.Background(), "evt_same", time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if r == ClaimAcquired {
				acquired.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := acquired.Load(); n != 1 {
		t.Errorf("%d goroutines acquired the id, want 1", n)
	}
}

func TestClaimResultString(t *testing.T) {
	t.Parallel()
	for r, want := range map[ClaimResult]string{ClaimAcquired: "acquired", ClaimDuplicate: "duplicate", ClaimBusy: "busy", 0: "unknown"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}

// redisStore mimics the Redis commands the Deduper documentation maps the
// interface onto, with Redis's semantics: each command is atomic, a key
// carries an absolute expiry in whole milliseconds (PXAT) and is gone from
// that millisecond on. It is a stand-in for a Redis server, so the tests
// show that a Deduper made of exactly those commands gives the handler
// what it needs.
type redisStore struct {
	mu   sync.Mutex
	now  func() time.Time
	keys map[string]redisKey
	// beforeGet, if set, runs between Claim's failed SET NX and its GET,
	// to let a key lapse there.
	beforeGet func()
}

type redisKey struct {
	val  string
	pxat int64 // Unix milliseconds
}

func newRedisStore(now func() time.Time) *redisStore {
	return &redisStore{now: now, keys: make(map[string]redisKey)}
}

// live returns key's value unless absent or expired. r.mu must be held.
func (r *redisStore) live(key string) (string, bool) {
	k, ok := r.keys[key]
	if ok && r.now().UnixMilli() >= k.pxat {
		delete(r.keys, key)
		return "", false
	}
	return k.val, ok
}

// set is SET key val [NX] PXAT at; it reports whether it set the key.
func (r *redisStore) set(key, val string, at time.Time, nx bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, exists := r.live(key); exists && nx {
		return false
	}
	r.keys[key] = redisKey{val: val, pxat: at.UnixMilli()}
	return true
}

// get is GET key.
func (r *redisStore) get(key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live(key)
}

// del is DEL key.
func (r *redisStore) del(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.keys, key)
}

// releaseScript is the Lua script of the Deduper documentation.
func (r *redisStore) releaseScript(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.live(key); ok && v == "busy" {
		delete(r.keys, key)
	}
}

// dbsize is DBSIZE after expiry, the number of live keys.
func (r *redisStore) dbsize() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key := range r.keys {
		r.live(key)
	}
	return len(r.keys)
}

// redisDeduper is the Deduper the documentation describes, over redisStore.
type redisDeduper struct{ r *redisStore }

func (d redisDeduper) Claim(_ context.Context, id string, leaseUntil time.Time) (ClaimResult, error) {
	key := "evt:" + id
	for {
		if d.r.set(key, "busy", leaseUntil, true) {
			return ClaimAcquired, nil
		}
		if d.r.beforeGet != nil {
			d.r.beforeGet()
		}
		switch v, ok := d.r.get(key); {
		case !ok:
			continue // lapsed between the two commands: SET again
		case v == "done":
			return ClaimDuplicate, nil
		default:
			return ClaimBusy, nil
		}
	}
}

func (d redisDeduper) Commit(_ context.Context, id string, rememberUntil time.Time) error {
	if !rememberUntil.After(d.r.now()) {
		d.r.del("evt:" + id)
		return nil
	}
	d.r.set("evt:"+id, "done", rememberUntil, false)
	return nil
}

func (d redisDeduper) Release(_ context.Context, id string) error {
	d.r.releaseScript("evt:" + id)
	return nil
}

// TestDeduperThroughHandler runs the same delivery story through the
// handler with the in-memory Deduper and with the Redis mapping: a failing
// fn and its successful retry, duplicates, a concurrent duplicate, the
// window's last instant, and forgetting after the window.
func TestDeduperThroughHandler(t *testing.T) {
	t.Parallel()
	type store struct {
		d    Deduper
		size func() int
	}
	cases := []struct {
		name string
		make func(now func() time.Time) store
	}{
		{"memory", func(now func() time.Time) store {
			d := NewMemoryDeduper(0, now)
			return store{d, d.Len}
		}},
		{"redis mapping", func(now func() time.Time) store {
			r := newRedisStore(now)
			return store{redisDeduper{r}, r.dbsize}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newTestClock(testStart)
			st := tc.make(clk.Now)
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
			h := NewWebhookHandler(testSecret, fn, WithWebhookClock(clk.Now), WithDeduper(st.d))
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
			if n := st.size(); n != 0 {
				t.Errorf("%d ids held an hour after the window, want 0", n)
			}
		})
	}
}

// TestRedisMappingClaimRetriesLapsedKey: when the key lapses between
// Claim's SET NX and its GET, the mapping sets it again and acquires.
func TestRedisMappingClaimRetriesLapsedKey(t *testing.T) {
	t.Parallel()
	clk := newTestClock(testStart)
	r := newRedisStore(clk.Now)
	d := redisDeduper{r}
	mustClaim(t, d, "evt_a", testStart.Add(time.Minute), ClaimAcquired)
	r.beforeGet = func() { clk.Advance(time.Minute) } // the holder's lease lapses
	mustClaim(t, d, "evt_a", clk.Now().Add(2*time.Minute), ClaimAcquired)
}
