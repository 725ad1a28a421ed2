package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// One redis-server for the whole test binary (see package redistest);
// tests that stop Redis start their own.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// countingHook counts the scripts a go-redis client runs on a limiter's
// bucket (keys "rate:…"), to prove how many round trips a call made; the
// heartbeats counting the limiters of a key are not among them.
type countingHook struct{ scripts atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := strings.ToLower(cmd.Name()); name == "evalsha" || name == "eval" {
			if key := fmt.Sprint(cmd.Args()[3]); strings.HasPrefix(key, "rate:") { // EVALSHA sha numkeys key …
				h.scripts.Add(1)
			}
		}
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// logRecorder is a slog.Handler keeping every record's level, message
// and attributes, and when it was logged.
type logRecorder struct {
	mu      sync.Mutex
	records []string
	times   []time.Time
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, b.String())
	r.times = append(r.times, rec.Time)
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.records...)
}

// last returns the last record starting with prefix and when it was
// logged, or ok false if there is none.
func (r *logRecorder) last(prefix string) (line string, at time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.records) - 1; i >= 0; i-- {
		if strings.HasPrefix(r.records[i], prefix) {
			return r.records[i], r.times[i], true
		}
	}
	return "", time.Time{}, false
}

// isNetError reports whether err is a network error (Redis unreachable).
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// waitFor polls cond every 5 ms until it holds: for a state that Redis,
// or code running against it, reaches in its own time. It fails t only
// when the test binary's -timeout is near, never on a wall-clock bound
// of its own.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
			if d, set := dl.Deadline(); set && time.Until(d) < 10*time.Second {
				t.Fatalf("still waiting for %s when the test binary's -timeout is near", what)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// enterprisePlan is contextsvc.EnterprisePlan for limits a test knows are
// valid.
func enterprisePlan(tb testing.TB, perMinute, burst int) contextsvc.Plan {
	tb.Helper()
	p, err := contextsvc.EnterprisePlan(perMinute, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
