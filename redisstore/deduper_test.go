package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/dedupetest"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// newDeduper builds a Deduper on c under prefix, failing the test on error.
func newDeduper(t *testing.T, c redis.UniversalClient, prefix string) *redisstore.Deduper {
	t.Helper()
	d, err := redisstore.NewDeduper(c, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// replicas spreads the calls over several Dedupers with the same prefix,
// each on its own go-redis client, as receiver replicas would: a claim
// made through one is committed or released through another.
type replicas struct {
	ds []*redisstore.Deduper
	n  atomic.Uint64
}

func (r *replicas) next() *redisstore.Deduper { return r.ds[r.n.Add(1)%uint64(len(r.ds))] }

func (r *replicas) Claim(ctx context.Context, id string, lease time.Duration) (contextsvc.ClaimResult, contextsvc.ClaimToken, error) {
	return r.next().Claim(ctx, id, lease)
}

func (r *replicas) Commit(ctx context.Context, id string, token contextsvc.ClaimToken, remember time.Duration) error {
	return r.next().Commit(ctx, id, token, remember)
}

func (r *replicas) Release(ctx context.Context, id string, token contextsvc.ClaimToken) error {
	return r.next().Release(ctx, id, token)
}

// TestDeduperContract runs the rules every Deduper follows on Redis, with
// the calls spread over three clients. Leases and remember times that must
// lapse are 30 ms, and lapse on Redis's own clock while the test sleeps.
func TestDeduperContract(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	clients := []*redis.Client{redistest.Client(t, srv), redistest.Client(t, srv), redistest.Client(t, srv)}
	dedupetest.Run(t, dedupetest.Harness{
		New: func(t *testing.T) (contextsvc.Deduper, func(time.Duration)) {
			prefix := redistest.Prefix(t)
			r := &replicas{}
			for _, c := range clients {
				r.ds = append(r.ds, newDeduper(t, c, prefix))
			}
			return r, time.Sleep
		},
		Short: 30 * time.Millisecond,
	})
}

// TestDeduperKeysExpire: every key the Deduper writes expires when the
// contract says (PTTL read back from Redis, no waiting), a released claim
// leaves no key, and the key is prefix + id.
func TestDeduperKeysExpire(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	prefix := redistest.Prefix(t)
	d := newDeduper(t, c, prefix)
	ctx := context.Background()
	pttl := func(id string) time.Duration {
		t.Helper()
		ttl, err := c.PTTL(ctx, d.Key(id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ttl
	}
	within := func(what string, got, want time.Duration) {
		t.Helper()
		// PTTL counts down from the moment the script ran.
		if got > want || got < want-5*time.Second {
			t.Errorf("%s: PTTL %v, want just under %v", what, got, want)
		}
	}
	if d.Key("evt_a") != prefix+"evt_a" {
		t.Errorf("Key(evt_a) = %q", d.Key("evt_a"))
	}

	tok := dedupetest.Claim(t, d, "evt_a", 10*time.Minute, contextsvc.ClaimAcquired)
	within("claim", pttl("evt_a"), 10*time.Minute)
	if err := d.Commit(ctx, "evt_a", tok, 27*time.Hour); err != nil {
		t.Fatal(err)
	}
	within("done", pttl("evt_a"), 27*time.Hour)
	if v := c.Get(ctx, d.Key("evt_a")).Val(); v != "d" {
		t.Errorf("done key holds %q, want d", v)
	}

	// A sub-millisecond duration is rounded up, never to "no expiry".
	dedupetest.Claim(t, d, "evt_b", time.Microsecond, contextsvc.ClaimAcquired)
	// -1 (go-redis: -1 ns) would be no expiry; -2, already gone, is fine.
	if ttl := pttl("evt_b"); ttl == -1 || ttl > time.Millisecond {
		t.Errorf("claim for 1 µs: PTTL %v, want at most 1 ms", ttl)
	}
	tok = dedupetest.Claim(t, d, "evt_c", time.Minute, contextsvc.ClaimAcquired)
	if err := d.Release(ctx, "evt_c", tok); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, d.Key("evt_c")).Val(); n != 0 {
		t.Error("a released claim left its key")
	}

	// A late Commit recording an id nobody held gives it the remember time
	// too.
	if err := d.Commit(ctx, "evt_late", "some-lapsed-token", time.Hour); err != nil {
		t.Fatal(err)
	}
	within("late commit", pttl("evt_late"), time.Hour)

	// No key of the Deduper lives forever (PTTL -1).
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		// go-redis reports Redis's -1 (no expiry) as -1 ns; -2 (gone
		// meanwhile, like the 1 µs claim) is fine.
		if ttl := c.PTTL(ctx, k).Val(); ttl == -1 {
			t.Errorf("key %s has no expiry (PTTL %v)", k, ttl)
		}
	}
}

// TestDeduperThroughHandler runs the handler's delivery story on the Redis
// Deduper with the handler on a fake clock: a failing fn and its retry,
// duplicates, a concurrent duplicate, and the window's last instant. The
// handler counts remember from its own (fake) now and Redis from its real
// one, so the id is remembered through the window however far the fake
// clock jumps.
func TestDeduperThroughHandler(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	d := newDeduper(t, c, redistest.Prefix(t))
	const secret = "whsec_redisstore_test"
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	now := start
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	set := func(t time.Time) { clockMu.Lock(); now = t; clockMu.Unlock() }

	var calls atomic.Int32
	var fail atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	fn := func(_ context.Context, e *contextsvc.Event) error {
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
	h, err := contextsvc.NewWebhookHandler(secret, fn, contextsvc.WithWebhookClock(clock), contextsvc.WithDeduper(d))
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string, ts time.Time) int {
		body := eventJSON(id, ts)
		r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, secret))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	step := func(name string, wantCode int, wantCalls int32) {
		t.Helper()
		if code := send("evt_story", start); code != wantCode || calls.Load() != wantCalls {
			t.Fatalf("%s: status %d, fn calls %d; want %d, %d", name, code, calls.Load(), wantCode, wantCalls)
		}
	}

	fail.Store(true)
	step("failing fn", http.StatusInternalServerError, 1)
	fail.Store(false)
	set(start.Add(time.Minute))
	step("retry", http.StatusOK, 2)
	// Remembered for the rest of the window as of the handler's clock:
	// 27 h + 1 s from the event, less the minute already gone.
	ttl := c.PTTL(context.Background(), d.Key("evt_story")).Val()
	if want := contextsvc.DefaultReplayWindow + time.Second - time.Minute; ttl > want || ttl < want-5*time.Second {
		t.Errorf("done key PTTL %v, want just under %v", ttl, want)
	}
	set(start.Add(6 * time.Minute))
	step("duplicate", http.StatusOK, 2)

	slowAt := clock()
	first := make(chan int)
	go func() { first <- send("evt_slow", slowAt) }()
	<-entered
	if code := send("evt_slow", slowAt); code != http.StatusConflict {
		t.Errorf("concurrent duplicate: status %d, want 409", code)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("slow event: status %d", code)
	}
	if code := send("evt_slow", slowAt); code != http.StatusOK || calls.Load() != 3 {
		t.Errorf("slow event again: status %d, calls %d; want 200, 3", code, calls.Load())
	}

	set(start.Add(contextsvc.DefaultReplayWindow))
	step("duplicate at the window's last instant", http.StatusOK, 3)
	set(start.Add(contextsvc.DefaultReplayWindow + time.Millisecond))
	if code := send("evt_story", start); code != http.StatusBadRequest || calls.Load() != 3 {
		t.Errorf("after the window: status %d, calls %d; want 400, 3", code, calls.Load())
	}
}

// TestDeduperRedisRestart: Redis (persistent, as a production deduper's
// should be) is stopped and started again, once between deliveries and
// once while an attempt is inside fn. While it is down, the documented
// failure mode happens: every delivery is answered 500 and nothing is
// handled. Once it is back, the event handled before the outage is still
// a duplicate, the one refused during it is handled, once, and the one
// whose Commit failed still has its claim, so its redelivery is answered
// 409 rather than handled again (until the lease lapses, as documented).
func TestDeduperRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Persistent: true})
	c := redistest.Client(t, srv, &redis.Options{MaxRetries: -1, DialerRetries: 1})
	d := newDeduper(t, c, "app:webhooks:")
	const secret = "whsec_restart"
	var mu sync.Mutex
	calls := map[string]int{}
	entered, finish := make(chan struct{}), make(chan struct{})
	h, err := contextsvc.NewWebhookHandler(secret, func(_ context.Context, e *contextsvc.Event) error {
		mu.Lock()
		calls[e.ID]++
		mu.Unlock()
		if e.ID == "evt_inflight" {
			close(entered)
			<-finish
		}
		return nil
	}, contextsvc.WithDeduper(d))
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string) int {
		body := eventJSON(id, time.Now())
		r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, secret))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	expect := func(when, id string, want int) {
		t.Helper()
		if code := send(id); code != want {
			t.Errorf("%s: %s answered %d, want %d", when, id, code, want)
		}
	}

	expect("before the outage", "evt_before", http.StatusOK)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	expect("Redis down", "evt_before", http.StatusInternalServerError)
	expect("Redis down", "evt_during", http.StatusInternalServerError)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	expect("after the restart", "evt_before", http.StatusOK)
	expect("after the restart", "evt_during", http.StatusOK)
	expect("after the restart, again", "evt_during", http.StatusOK)

	// Redis stops while fn runs: the Commit fails (logged), fn did
	// succeed, so the sender gets 200.
	inflight := make(chan int)
	go func() { inflight <- send("evt_inflight") }()
	<-entered
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	close(finish)
	if code := <-inflight; code != http.StatusOK {
		t.Errorf("attempt whose Commit failed: %d, want 200", code)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	expect("after the second restart", "evt_inflight", http.StatusConflict)

	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"evt_before": 1, "evt_during": 1, "evt_inflight": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("fn calls per event %v, want %v", calls, want)
	}
}

// TestDeduperErrors: with Redis unreachable every call returns an error
// saying what failed, wrapping the cause.
func TestDeduperErrors(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	c := redistest.Client(t, srv, &redis.Options{MaxRetries: -1, DialerRetries: 1})
	d := newDeduper(t, c, "app:")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _, err := d.Claim(ctx, "evt_x", time.Minute)
	for name, err := range map[string]error{
		"redisstore: claim evt_x: ":   err,
		"redisstore: commit evt_x: ":  d.Commit(ctx, "evt_x", "tok", time.Minute),
		"redisstore: release evt_x: ": d.Release(ctx, "evt_x", "tok"),
	} {
		if err == nil || !isNetError(err) || !bytes.HasPrefix([]byte(err.Error()), []byte(name)) {
			t.Errorf("%s…: got %v, want that prefix and a network error", name, err)
		}
	}
}

func TestNewDeduperRefusesBadArguments(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	if _, err := redisstore.NewDeduper(nil, "app:"); !errors.Is(err, contextsvc.ErrInvalidArgument) {
		t.Errorf("nil client: %v", err)
	}
	if _, err := redisstore.NewDeduper(c, ""); !errors.Is(err, contextsvc.ErrInvalidArgument) {
		t.Errorf("empty prefix: %v", err)
	}
}

// eventJSON is a valid context.updated envelope with the given id and
// timestamp.
func eventJSON(id string, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":"context.updated","timestamp":%q,"data":{"contextId":"ctx_1","name":"Plan","version":2,"updatedBy":"user_1","changes":{"sections_modified":["Intro"],"word_count_delta":3}}}`,
		id, ts.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}

// TestDeduperMemoryPerEvent measures what a remembered event costs Redis:
// 10,000 handled ids (evt_ and 26 characters, under a 15-character
// prefix), read from INFO's used_memory on a server of the test's own. The
// package doc quotes the figure; the bound guards it.
func TestDeduperMemoryPerEvent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis of its own and writes 10,000 keys; skipped with -short")
	}
	srv := redistest.Start(t, redistest.Options{})
	c := redistest.Client(t, srv)
	d := newDeduper(t, c, "myapp:webhooks:")
	ctx := context.Background()
	used := func() int64 {
		t.Helper()
		var n int64
		info := c.Info(ctx, "memory").Val()
		if _, err := fmt.Sscanf(info[bytes.Index([]byte(info), []byte("used_memory:")):], "used_memory:%d", &n); err != nil {
			t.Fatalf("reading used_memory: %v", err)
		}
		return n
	}
	// Warm the script cache and the client's buffers first.
	if _, tok, err := d.Claim(ctx, "evt_warm", time.Hour); err != nil || d.Commit(ctx, "evt_warm", tok, time.Hour) != nil {
		t.Fatal(err)
	}
	const n = 10_000
	before := used()
	for i := range n {
		id := fmt.Sprintf("evt_%026d", i)
		_, tok, err := d.Claim(ctx, id, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(ctx, id, tok, 27*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	per := float64(used()-before) / n
	t.Logf("Redis memory per remembered event: %.0f bytes", per)
	if per > 256 {
		t.Errorf("%.0f bytes of Redis memory per remembered event, want at most 256", per)
	}
}
