package contextsvc

import (
	"context"
	"fmt"
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
