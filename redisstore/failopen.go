package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// What a [FailOpen] limiter does without Redis, and how it comes back.
//
// Without Redis no process can know what the others send, so each paces
// itself to its share of the plan: the plan's rate and burst divided by
// the number of limiters sharing the key, which each limiter learns from a
// heartbeat on Redis while it answers. A fleet that loses Redis together
// then sends about the plan's rate together, as it did through Redis.
//
// Coming back, the shared bucket is not what the service's is: it refilled
// while nobody asked it (or was lost with a master, and starts full),
// while the service counted every request sent meanwhile. Each limiter
// therefore charges the shared bucket with the tokens it granted itself
// (as many as it holds). And the fleet's limiters come back one by one,
// each with its own probe: for one recheck interval after coming back, a
// limiter keeps to its share as well as to the shared bucket, so that the
// fleet together stays within the plan while the last of them still pace
// outside the shared bucket. A Wait still waiting for a local token when
// Redis comes back takes it, uncharged, and then asks Redis too.

// Membership of the fleet: each limiter adds itself to a sorted set of
// the key's limiters (score: the Redis server's time) at most once per
// heartbeat, and a member not seen for fleetTTL is gone. A count is at
// most one heartbeat old when Redis goes: a fleet that just grew is
// undercounted that long at most; one that shrank is overcounted (each
// paces to less than its share) for fleetTTL at most. The set holds one
// entry (a 26-character name, about 80 bytes of Redis memory) per limiter
// that called Wait in the last fleetTTL, and expires with the last of them.
const (
	heartbeat      = time.Second
	firstHeartbeat = 100 * time.Millisecond // between the first two
	fleetTTL       = 10 * time.Second
)

// fleetScript: KEYS[1] the fleet's sorted set; ARGV[1] this limiter's
// name; ARGV[2] fleetTTL in ms. Adds or refreshes the name, drops names
// not seen for fleetTTL, keeps the set for fleetTTL after the last
// heartbeat, and returns how many remain (this one included). TIME makes
// the script non-deterministic; Redis 5 and later replicate its effects,
// not the script.
var fleetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('ZCARD', KEYS[1])
`)

// newMemberName names a limiter in its fleet's set.
func newMemberName() string { return rand.Text() }

// heartbeat starts, once per [heartbeat] and in the background, the
// script that counts the limiters sharing the key. A failure changes
// nothing: the count stays what it was, and Wait's own round trip meets
// the outage.
func (l *Limiter) heartbeat() {
	now := time.Now().UnixNano()
	due := l.beatDue.Load()
	next := heartbeat
	if due == 0 {
		// The first count comes soon after the first: limiters that
		// started together undercount each other in their first.
		next = firstHeartbeat
	}
	if now < due || !l.beatDue.CompareAndSwap(due, now+int64(next)) {
		return
	}
	go func() {
		n, err := fleetScript.Run(context.Background(), l.rdb, []string{l.fleet}, l.id, fleetTTL.Milliseconds()).Int()
		if err != nil || n < 1 {
			return
		}
		l.mu.Lock()
		l.share = n
		l.mu.Unlock()
	}()
}

// fallback is the local bucket of one outage.
type fallback struct {
	bucket *rate.Limiter
	spent  int           // tokens granted and not yet charged to the shared bucket; guarded by Limiter.mu
	back   chan struct{} // closed when Redis is back
}

// fallBack switches to a local bucket of this process's share of the
// plan (shareBucket) after Redis failed with cause, logging only the
// switch, not every failed call, starts the first probe at once (a
// failover may have promoted a replica while this call waited out
// go-redis's retries), and returns the bucket.
func (l *Limiter) fallBack(cause error) *fallback {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.degraded.Load() {
		return l.local
	}
	share, bucket := l.shareBucket()
	l.local = &fallback{bucket: bucket, back: make(chan struct{})}
	l.lastUsed = time.Now()
	l.graceUntil.Store(0)
	l.degraded.Store(true)
	if !l.probing {
		l.startProbe()
	}
	l.log.Warn("contextsvc rate limiter: Redis unreachable; pacing this process alone with a local bucket of its share of the plan until it answers again",
		"key", l.Key(), "plan", l.plan.String(), "limiters", share, "perMinute", float64(bucket.Limit())*60, "recheck", l.recheck, "error", cause)
	return l.local
}

// shareBucket returns a bucket of this process's share of the shared
// bucket (its rate and burst divided by the number of limiters sharing the
// key, as the last heartbeat counted them; the whole plan before any
// count), and that number; l.mu is held. It starts empty, since the
// service's bucket may be, and filled by a random part of a token: the
// fleet's limiters fall back at the same moment, and their first tokens
// must not all come together.
func (l *Limiter) shareBucket() (share int, bucket *rate.Limiter) {
	share = max(1, l.share)
	perSecond := float64(l.limit.Rate) / l.limit.Period.Seconds() / float64(share)
	burst := max(1, l.limit.Burst/share)
	bucket = rate.NewLimiter(rate.Limit(perSecond), burst)
	phase := time.Duration(mrand.Int64N(int64(time.Duration(float64(time.Second) / perSecond))))
	bucket.AllowN(time.Now().Add(-phase), burst)
	return share, bucket
}

// satThrough is called after a round trip to Redis that took longer than
// the recheck interval: this limiter waited out an outage in go-redis's
// retries, while others of the fleet may have fallen back and be pacing
// to their share outside the shared bucket. It keeps to its own share for
// one recheck interval, as one coming back from its local bucket does.
func (l *Limiter) satThrough() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.degraded.Load() || time.Now().UnixNano() < l.graceUntil.Load() {
		return
	}
	_, l.grace = l.shareBucket()
	l.graceUntil.Store(time.Now().Add(l.recheck).UnixNano())
}

// paceLocally returns the local bucket this Wait uses because Redis could
// not be reached (nil once it is back), and starts a probe when one is
// due and none is running or scheduled.
func (l *Limiter) paceLocally() *fallback {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.degraded.Load() {
		return nil
	}
	l.lastUsed = time.Now()
	if !l.probing && !l.lastUsed.Before(l.probeAt) {
		l.startProbe()
	}
	return l.local
}

// waitLocal waits for a token of the local bucket f and counts it, to be
// charged to the shared bucket once Redis is back; granted is false when
// Redis came back before the token (the caller then asks Redis too) or on
// an error. When the token would come after ctx's deadline it returns at
// once, with an error wrapping context.DeadlineExceeded.
func (l *Limiter) waitLocal(ctx context.Context, f *fallback) (granted bool, err error) {
	now := time.Now()
	l.mu.Lock() // the bucket's reservation and its count together, so that a charge sees either both or neither
	r := f.bucket.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait == 0 {
		f.spent++
	}
	l.mu.Unlock()
	if wait == 0 {
		return true, nil
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(now.Add(wait)) {
		r.CancelAt(now)
		return false, fmt.Errorf("redisstore: the local bucket's next token is %v away, past the context's deadline: %w", wait, context.DeadlineExceeded)
	}
	// Redis coming back meanwhile does not cut the wait short: the token
	// is this process's share, which it keeps to for a while after (see
	// recovered); it then asks Redis too.
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		l.mu.Lock()
		defer l.mu.Unlock()
		select {
		case <-f.back: // charged without this one: ask Redis
			return false, nil
		default:
			f.spent++
			return true, nil
		}
	case <-ctx.Done():
		r.Cancel()
		return false, ctx.Err()
	}
}

// startProbe starts a probe in the background; l.mu is held. Probes run
// in the background rather than in a Wait: against a Redis that is down, a
// round trip takes go-redis's every dial retry (about 1.75 s with its
// defaults), and against one that stopped answering its read time-outs
// and retries, and no caller should pay that. One runs at a time, each at
// least a recheck interval after the one before began.
func (l *Limiter) startProbe() {
	l.probing = true
	l.probeAt = time.Now().Add(l.recheck)
	go l.probe()
}

// probe asks Redis whether it answers again with the script Wait runs,
// charging the shared bucket with the tokens this process granted itself
// (as many as the bucket holds: AllowAtMost), or with none, and switches
// back once every local grant is charged: Waits that ask Redis before the
// charge lands would be granted those tokens a second time. Its duration
// is bounded by the go-redis client's time-outs.
func (l *Limiter) probe() {
	charged := 0
	// Local grants made during a round trip are charged by the next; a
	// few rounds at most, at a share's rate.
	for range maxChargeRounds {
		l.mu.Lock()
		if !l.degraded.Load() { // a Wait found Redis first
			l.probing = false
			l.mu.Unlock()
			return
		}
		owed := l.local.spent - charged
		l.mu.Unlock()
		if owed == 0 && charged > 0 {
			break
		}
		if _, err := l.rl.AllowAtMost(context.Background(), l.key, l.limit, owed); err != nil {
			l.probeFailed()
			return
		}
		charged += owed
		if owed == 0 {
			break
		}
	}
	l.recovered(charged)
}

// maxChargeRounds bounds the round trips of a probe that finds Redis.
const maxChargeRounds = 4

// probeIdle is how long a limiter no Wait uses keeps asking Redis.
const probeIdle = time.Minute

// probeFailed schedules the next probe after one failed: a recheck
// interval after the last began (at once after a probe that took longer,
// as one waiting out go-redis's retries does), whether or not a Wait comes
// then, so that the fleet's limiters come back within one recheck interval
// of Redis answering again, even those whose callers are backing off
// after a 429. A limiter whose local bucket no Wait used for probeIdle
// stops asking; its next Wait starts again.
func (l *Limiter) probeFailed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastUsed) > probeIdle || !l.degraded.Load() {
		l.probing = false
		return
	}
	time.AfterFunc(time.Until(l.probeAt), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.probing && l.degraded.Load() {
			l.startProbe()
		}
	})
}

// recovered switches back to Redis after a call through it succeeded that
// charged the shared bucket with charged tokens: Waits still waiting for a
// local token ask Redis too once it comes, and the local grants not
// charged yet (those made while the call ran) are charged in the
// background.
//
// For one recheck interval more, each Wait also keeps to the local
// bucket's share: the other limiters of the fleet come back one by one,
// each with its next probe, and until then they send their share outside
// the shared bucket; a limiter back on Redis that took the whole plan
// meanwhile would make the fleet send more than the plan.
func (l *Limiter) recovered(charged int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	if !l.degraded.Swap(false) {
		return
	}
	f := l.local
	l.local = nil
	close(f.back)
	l.grace = f.bucket
	l.graceUntil.Store(time.Now().Add(l.recheck).UnixNano())
	if unpaid := f.spent - charged; unpaid > 0 {
		go func() {
			// Best effort: Redis was just seen.
			_, _ = l.rl.AllowAtMost(context.Background(), l.key, l.limit, unpaid)
		}()
	}
	l.log.Info("contextsvc rate limiter: Redis reachable again; sharing the plan's rate with the fleet again", "key", l.Key())
}

// keepShare waits, in the recheck interval after Redis came back, for a
// token of the share this limiter paced to without it (see recovered).
func (l *Limiter) keepShare(ctx context.Context) error {
	until := l.graceUntil.Load()
	if until == 0 {
		return nil
	}
	if time.Now().UnixNano() >= until {
		l.graceUntil.CompareAndSwap(until, 0)
		return nil
	}
	l.mu.Lock()
	bucket := l.grace
	l.mu.Unlock()
	if bucket == nil {
		return nil
	}
	if err := bucket.Wait(ctx); err != nil {
		if _, ok := ctx.Deadline(); ok && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("redisstore: the fleet's share of the plan: %w: %w", context.DeadlineExceeded, err)
		}
		return err
	}
	return nil
}
