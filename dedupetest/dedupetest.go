// Package dedupetest checks that a [contextsvc.Deduper] follows the rules
// the interface's documentation states: owner tokens, late Commit and
// Release after a lapsed lease, expiry, and atomic claims. Every Deduper the
// project ships runs it ([contextsvc.MemoryDeduper] on a fake clock, the
// Redis one of package redisstore on a real redis-server), so all obey the
// same contract; a Deduper of your own (on a database your receivers
// share) runs it from a test of its own:
//
//	func TestMyDeduper(t *testing.T) {
//		dedupetest.Run(t, dedupetest.Harness{
//			New: func(t *testing.T) (contextsvc.Deduper, func(time.Duration)) {
//				return newMyDeduper(t), time.Sleep
//			},
//			Short: 50 * time.Millisecond,
//		})
//	}
package dedupetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Harness is what [Run] needs of one implementation.
type Harness struct {
	// New returns an empty Deduper for one subtest, and elapse, which lets
	// at least d pass on the Deduper's clock: a fake clock's Advance, or a
	// real sleep for a store that keeps its own time.
	New func(t *testing.T) (d contextsvc.Deduper, elapse func(d time.Duration))
	// Short is a lease or remember duration that elapse can let pass
	// cheaply. Whatever is given Short is only ever checked after it has
	// passed, never while it should still hold, so a slow machine cannot
	// make the suite fail.
	Short time.Duration
}

// long is a lease or remember duration that never passes during a test.
const long = time.Hour

// Run runs the suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Run("lifecycle", func(t *testing.T) { t.Parallel(); lifecycle(t, h) })
	t.Run("late release after takeover", func(t *testing.T) { t.Parallel(); lateReleaseAfterTakeover(t, h) })
	t.Run("late commit after takeover", func(t *testing.T) { t.Parallel(); lateCommitAfterTakeover(t, h) })
	t.Run("late commit, nobody holds it", func(t *testing.T) { t.Parallel(); lateCommitUnheld(t, h) })
	t.Run("late release, nobody holds it", func(t *testing.T) { t.Parallel(); lateReleaseUnheld(t, h) })
	t.Run("late calls after another commit", func(t *testing.T) { t.Parallel(); lateAfterOtherCommit(t, h) })
	t.Run("commit past the window forgets", func(t *testing.T) { t.Parallel(); commitPastWindow(t, h) })
	t.Run("remembered ids lapse", func(t *testing.T) { t.Parallel(); rememberLapses(t, h) })
	t.Run("concurrent claims", func(t *testing.T) { t.Parallel(); concurrentClaims(t, h) })
	t.Run("tokens are unique", func(t *testing.T) { t.Parallel(); uniqueTokens(t, h) })
	t.Run("invalid arguments", func(t *testing.T) { t.Parallel(); invalidArguments(t, h) })
}

// Claim claims id and fails t unless the result is want; it returns the
// token, which must be non-empty exactly when acquired.
func Claim(t *testing.T, d contextsvc.Deduper, id string, lease time.Duration, want contextsvc.ClaimResult) contextsvc.ClaimToken {
	t.Helper()
	got, token, err := d.Claim(context.Background(), id, lease)
	if err != nil {
		t.Fatalf("Claim(%s): %v", id, err)
	}
	if got != want {
		t.Fatalf("Claim(%s) = %v, want %v", id, got, want)
	}
	if (token != "") != (got == contextsvc.ClaimAcquired) {
		t.Fatalf("Claim(%s) = %v with token %q: a token comes with acquired, and only then", id, got, token)
	}
	return token
}

func commit(t *testing.T, d contextsvc.Deduper, id string, token contextsvc.ClaimToken, remember time.Duration, want error) {
	t.Helper()
	err := d.Commit(context.Background(), id, token, remember)
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("Commit(%s, %s, %v) = %v, want %v", id, token, remember, err, want)
	}
}

func release(t *testing.T, d contextsvc.Deduper, id string, token contextsvc.ClaimToken) {
	t.Helper()
	if err := d.Release(context.Background(), id, token); err != nil {
		t.Fatalf("Release(%s, %s) = %v", id, token, err)
	}
}

const (
	acquired  = contextsvc.ClaimAcquired
	duplicate = contextsvc.ClaimDuplicate
	busy      = contextsvc.ClaimBusy
)

func lifecycle(t *testing.T, h Harness) {
	d, _ := h.New(t)
	tok := Claim(t, d, "evt_a", long, acquired)
	Claim(t, d, "evt_a", long, busy)
	// Another attempt's token (or a made-up one) changes nothing.
	release(t, d, "evt_a", "not-the-token")
	commit(t, d, "evt_a", "not-the-token", long, contextsvc.ErrClaimLost)
	Claim(t, d, "evt_a", long, busy)
	// A failed attempt releases; the retry acquires, with a new token.
	release(t, d, "evt_a", tok)
	tok2 := Claim(t, d, "evt_a", long, acquired)
	if tok2 == tok {
		t.Fatalf("the second claim got the first one's token %q", tok)
	}
	// The first attempt's token is dead: its Release does not free the
	// second attempt's claim.
	release(t, d, "evt_a", tok)
	Claim(t, d, "evt_a", long, busy)
	commit(t, d, "evt_a", tok2, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
	// Release and Commit after the commit do not forget a handled id.
	release(t, d, "evt_a", tok2)
	commit(t, d, "evt_a", tok2, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
	// Other ids are independent.
	Claim(t, d, "evt_b", long, acquired)
}

// lateReleaseAfterTakeover: attempt A's lease lapses while it runs,
// attempt B claims the id; A's late Release must not free B's claim.
func lateReleaseAfterTakeover(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	b := Claim(t, d, "evt_a", long, acquired)
	release(t, d, "evt_a", a)
	Claim(t, d, "evt_a", long, busy) // B still holds it
	commit(t, d, "evt_a", b, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
}

// lateCommitAfterTakeover: A's late Commit must not overwrite B's claim,
// and says so; B's outcome decides.
func lateCommitAfterTakeover(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	b := Claim(t, d, "evt_a", long, acquired)
	commit(t, d, "evt_a", a, long, contextsvc.ErrClaimLost)
	Claim(t, d, "evt_a", long, busy) // still B's claim, not done
	// B fails: its Release works, so its own token still matched.
	release(t, d, "evt_a", b)
	Claim(t, d, "evt_a", long, acquired)
}

// lateCommitUnheld: the lease lapsed and nobody took the id over; the
// event was handled, so the late Commit records it.
func lateCommitUnheld(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	commit(t, d, "evt_a", a, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
}

// lateReleaseUnheld: a late Release of a lapsed claim leaves the id free.
func lateReleaseUnheld(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	release(t, d, "evt_a", a)
	Claim(t, d, "evt_a", long, acquired)
}

// lateAfterOtherCommit: after B committed, A's late Release and Commit
// change nothing and are not errors.
func lateAfterOtherCommit(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	b := Claim(t, d, "evt_a", long, acquired)
	commit(t, d, "evt_a", b, long, nil)
	release(t, d, "evt_a", a)
	commit(t, d, "evt_a", a, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
}

// commitPastWindow: a Commit with remember <= 0 (the event is already out
// of the replay window) forgets its own claim and records nothing.
func commitPastWindow(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", long, acquired)
	commit(t, d, "evt_a", a, 0, nil)
	b := Claim(t, d, "evt_a", long, acquired)
	commit(t, d, "evt_a", b, -time.Second, nil)
	c := Claim(t, d, "evt_a", h.Short, acquired)
	elapse(2 * h.Short)
	commit(t, d, "evt_a", c, 0, nil) // lapsed and past the window: nothing
	e := Claim(t, d, "evt_a", long, acquired)
	// Past the window or not, another attempt's claim is not this one's
	// to remove.
	commit(t, d, "evt_a", c, 0, contextsvc.ErrClaimLost)
	Claim(t, d, "evt_a", long, busy)
	commit(t, d, "evt_a", e, long, nil)
	Claim(t, d, "evt_a", long, duplicate)
}

// rememberLapses: a done id is forgotten once remember has passed.
func rememberLapses(t *testing.T, h Harness) {
	d, elapse := h.New(t)
	a := Claim(t, d, "evt_a", long, acquired)
	commit(t, d, "evt_a", a, h.Short, nil)
	elapse(2 * h.Short)
	Claim(t, d, "evt_a", long, acquired)
}

// concurrentClaims: of many goroutines claiming one id at once, exactly
// one acquires it; the others see busy.
func concurrentClaims(t *testing.T, h Harness) {
	d, _ := h.New(t)
	var acq, bsy atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			<-start
			r, _, err := d.Claim(context.Background(), "evt_same", long)
			switch {
			case err != nil:
				t.Error(err)
			case r == acquired:
				acq.Add(1)
			case r == busy:
				bsy.Add(1)
			default:
				t.Errorf("Claim = %v", r)
			}
		})
	}
	close(start)
	wg.Wait()
	if acq.Load() != 1 || bsy.Load() != 15 {
		t.Errorf("%d goroutines acquired the id and %d saw it busy, want 1 and 15", acq.Load(), bsy.Load())
	}
}

// uniqueTokens: every acquired claim has its own token.
func uniqueTokens(t *testing.T, h Harness) {
	d, _ := h.New(t)
	seen := map[contextsvc.ClaimToken]bool{}
	for i := range 100 {
		tok := Claim(t, d, fmt.Sprintf("evt_%03d", i), long, acquired)
		if seen[tok] {
			t.Fatalf("token %q given twice", tok)
		}
		seen[tok] = true
	}
}

func invalidArguments(t *testing.T, h Harness) {
	d, _ := h.New(t)
	ctx := context.Background()
	tok := Claim(t, d, "evt_a", long, acquired)
	for name, err := range map[string]error{
		"claim with an empty id":     second(d.Claim(ctx, "", long)),
		"claim with a zero lease":    second(d.Claim(ctx, "evt_b", 0)),
		"claim with a negative one":  second(d.Claim(ctx, "evt_b", -time.Second)),
		"commit with an empty id":    d.Commit(ctx, "", tok, long),
		"commit with an empty token": d.Commit(ctx, "evt_a", "", long),
		"release with an empty id":   d.Release(ctx, "", tok),
		"release with no token":      d.Release(ctx, "evt_a", ""),
	} {
		if !errors.Is(err, contextsvc.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	// Nothing of that touched the real claim.
	Claim(t, d, "evt_a", long, busy)
	Claim(t, d, "evt_b", long, acquired)
}

func second(_ contextsvc.ClaimResult, _ contextsvc.ClaimToken, err error) error { return err }
