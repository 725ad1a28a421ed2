package idempotency

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/memtest"
)

func TestIdempotencyStoreIsBounded(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	var st Store
	sum := sha256.Sum256(nil)
	add := func(key string, body []byte) {
		e, outcome := st.begin(fc, keyID{"acct", key}, "POST", "/v1/contexts", sum)
		if outcome != verdictFresh {
			t.Fatalf("%s: outcome %d, want fresh", key, outcome)
		}
		st.finish(e, 201, nil, body)
	}
	outcome := func(key string) verdict {
		e, o := st.begin(fc, keyID{"acct", key}, "POST", "/v1/contexts", sum)
		if o == verdictFresh {
			st.abandon(e)
		}
		return o
	}

	// Count: one key more than the limit forgets the oldest.
	for i := range MaxKeys + 1 {
		add(fmt.Sprint("k", i), []byte("{}"))
	}
	if keys, _ := st.Stats(); keys != MaxKeys {
		t.Errorf("%d keys kept, want the limit %d", keys, MaxKeys)
	}
	// (Looking up a forgotten key records it anew, which forgets the
	// oldest again: look up the kept one first.)
	if o := outcome("k1"); o != verdictReplay {
		t.Errorf("the second oldest: outcome %d, want kept", o)
	}
	if o := outcome("k0"); o != verdictFresh {
		t.Errorf("the oldest key: outcome %d, want forgotten", o)
	}

	// Bytes: 1 MiB answers, twice the byte limit of them.
	st.Reset()
	big := make([]byte, 1<<20)
	n := 2 * MaxBytes / len(big)
	for i := range n {
		add(fmt.Sprint("big", i), big)
	}
	keys, bytes := st.Stats()
	if bytes > MaxBytes || keys >= n/2 || keys < n/2-2 {
		t.Errorf("%d keys of 1 MiB, %d bytes kept; want about %d within %d bytes", keys, bytes, n/2, MaxBytes)
	}
	if o := outcome(fmt.Sprint("big", n-1)); o != verdictReplay {
		t.Errorf("the newest large answer: outcome %d, want kept", o)
	}
	if o := outcome("big0"); o != verdictFresh {
		t.Errorf("the oldest large answer: outcome %d, want forgotten", o)
	}

	// Expiry empties it.
	fc.Advance(TTL)
	add("fresh", nil)
	if keys, _ := st.Stats(); keys != 1 {
		t.Errorf("after 24 h %d keys kept, want 1", keys)
	}
}

// A key whose request is still running is never forgotten to make room:
// a repeat arriving while it runs must still be a 409, never a second run.
func TestIdempotencyEvictionKeepsRunningKeys(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	var st Store
	sum := sha256.Sum256(nil)
	running, outcome := st.begin(fc, keyID{"acct", "running"}, "POST", "/v1/contexts", sum)
	if outcome != verdictFresh {
		t.Fatalf("first use: outcome %d, want fresh", outcome)
	}
	for i := range MaxKeys + 5 {
		e, o := st.begin(fc, keyID{"acct", fmt.Sprint("k", i)}, "POST", "/v1/contexts", sum)
		if o != verdictFresh {
			t.Fatalf("k%d: outcome %d, want fresh", i, o)
		}
		st.finish(e, 201, nil, []byte("{}"))
	}
	if keys, _ := st.Stats(); keys != MaxKeys {
		t.Errorf("%d keys kept, want the limit %d", keys, MaxKeys)
	}
	if _, o := st.begin(fc, keyID{"acct", "running"}, "POST", "/v1/contexts", sum); o != verdictRunning {
		t.Errorf("the running key, the oldest of all: outcome %d, want still running (409)", o)
	}
	st.finish(running, 201, nil, []byte("{}"))
	if _, o := st.begin(fc, keyID{"acct", "running"}, "POST", "/v1/contexts", sum); o != verdictReplay {
		t.Errorf("the running key once finished: outcome %d, want a replay", o)
	}
}

// TestIdempotencyMemoryAccounting: what the store counts against
// MaxBytes is what its entries take on the heap, within a
// margin, so the stated limit bounds the memory. Not parallel: it reads the
// heap size, which other tests' allocations would blur.
func TestIdempotencyMemoryAccounting(t *testing.T) {
	const n = 10_000
	for _, bodyLen := range []int{0, 300, 3000} {
		fc := clock.New(t0)
		var st Store
		sum := sha256.Sum256(nil)
		// Keys and answers exist before the store takes them, as in the
		// server; their bytes are added to the heap growth below.
		keys, bodies := make([]string, n), make([][]byte, n)
		given := 0
		for i := range n {
			keys[i] = fmt.Sprintf("%026d", i)
			bodies[i] = make([]byte, bodyLen)
			given += len(keys[i]) + bodyLen
		}
		memtest.CheckAccounting(t, fmt.Sprintf("answers of %d bytes", bodyLen), given, func() {
			for i := range n {
				e, _ := st.begin(fc, keyID{"acct_default", keys[i]}, "POST", "/v1/contexts", sum)
				// What serveIdempotent stores for a create's answer.
				st.finish(e, http.StatusCreated, append([]string(nil), "Content-Type", "application/json"), bodies[i])
			}
		}, func() int { _, b := st.Stats(); return b })
		runtime.KeepAlive(&st)
		runtime.KeepAlive(keys)
		runtime.KeepAlive(bodies)
	}
}

// t0 is when the tests' clocks start.
var t0 = time.Date(2026, 11, 21, 20, 51, 0, 123_000_000, time.UTC)
