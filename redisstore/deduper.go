package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// The Deduper keeps one string key per event id, prefix + id:
//
//	"c:<token>"  claimed by the attempt holding <token>, expiring with its lease
//	"d"          done (handled), expiring when the replay window has passed
//
// Each method is one Lua script on that one key, so it is atomic and a
// Cluster never sees a cross-slot script. PX counts on the Redis server's
// clock, from when the script runs.
const (
	doneValue   = "d"
	claimPrefix = "c:"
)

// claimScript: KEYS[1] the event's key; ARGV[1] this attempt's claim
// value; ARGV[2] the lease in ms. Returns 1 acquired, 2 duplicate, 3 busy.
// Finding its own claim value (go-redis resent the script after a lost
// reply) is acquired too, so a retried Claim is not mistaken for busy.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then return 1 end
if v == 'd' then return 2 end
return 3
`)

// commitScript: ARGV[1] this attempt's claim value; ARGV[2] how long to
// remember, in ms (0: the event is past its window, forget it). Returns 1
// committed its own claim, 2 recorded an id nobody held, 3 already done,
// 0 another attempt's claim (left alone).
var commitScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
local ms = tonumber(ARGV[2])
if v == ARGV[1] then
  if ms > 0 then redis.call('SET', KEYS[1], 'd', 'PX', ms) else redis.call('DEL', KEYS[1]) end
  return 1
end
if not v then
  if ms > 0 then redis.call('SET', KEYS[1], 'd', 'PX', ms) end
  return 2
end
if v == 'd' then return 3 end
return 0
`)

// releaseScript: ARGV[1] this attempt's claim value. Deletes the key only
// while it holds that value. Returns 1 if it deleted, else 0.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// Deduper is a [contextsvc.Deduper] shared through Redis by every replica
// of a webhook receiver: give each replica's [contextsvc.NewWebhookHandler]
// one made with the same prefix, via [contextsvc.WithDeduper]. It follows
// the interface's rules (owner tokens, late Commit and Release) with one
// atomic Lua script per call, each on the event's one key, and every key
// expires: memory is bounded by the events of one replay window. It is
// safe for concurrent use.
//
// When Redis cannot be reached, every call returns an error: the handler
// answers 500 without handling the event and the service retries it later
// (fail closed: nothing is handled twice, nothing is lost). A Commit that
// fails that way (Redis went down while fn ran) leaves the claim in place:
// redeliveries are answered 409 until its lease lapses, and the retry
// after that handles the event again. A Redis that loses its
// data (restarted without persistence, or failed over to a replica that
// had not caught up) forgets the ids it held, so their redeliveries are
// handled again. Run it with persistence (appendonly yes) where that
// matters.
type Deduper struct {
	client redis.UniversalClient
	prefix string
}

// NewDeduper returns a Deduper keeping its keys in client (one server,
// Sentinel or Cluster) under prefix, e.g. "myapp:webhooks:". Replicas of
// one receiver share a prefix; receivers of different applications need
// different ones, or one would skip the events the other handled. So an
// empty prefix, like a nil client, is an error wrapping
// [contextsvc.ErrInvalidArgument].
func NewDeduper(client redis.UniversalClient, prefix string) (*Deduper, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: redisstore.NewDeduper: nil Redis client", contextsvc.ErrInvalidArgument)
	}
	if prefix == "" {
		return nil, fmt.Errorf("%w: redisstore.NewDeduper: empty prefix (receivers sharing a Redis need their own, e.g. \"myapp:webhooks:\")", contextsvc.ErrInvalidArgument)
	}
	return &Deduper{client: client, prefix: prefix}, nil
}

// Key returns the Redis key that holds event id's state.
func (d *Deduper) Key(id string) string { return d.prefix + id }

// Claim implements [contextsvc.Deduper].
func (d *Deduper) Claim(ctx context.Context, id string, lease time.Duration) (contextsvc.ClaimResult, contextsvc.ClaimToken, error) {
	if d.client == nil {
		return 0, "", errNotMade
	}
	if id == "" {
		return 0, "", fmt.Errorf("%w: redisstore: claim with an empty event id", contextsvc.ErrInvalidArgument)
	}
	if lease <= 0 {
		return 0, "", fmt.Errorf("%w: redisstore: claim %s with lease %v, want > 0", contextsvc.ErrInvalidArgument, id, lease)
	}
	token := contextsvc.ClaimToken(rand.Text()) // 128 random bits: no two attempts in the fleet share one
	n, err := claimScript.Run(ctx, d.client, []string{d.Key(id)}, claimPrefix+string(token), millis(lease)).Int()
	if err != nil {
		return 0, "", fmt.Errorf("redisstore: claim %s: %w", id, err)
	}
	switch n {
	case 1:
		return contextsvc.ClaimAcquired, token, nil
	case 2:
		return contextsvc.ClaimDuplicate, "", nil
	case 3:
		return contextsvc.ClaimBusy, "", nil
	}
	return 0, "", fmt.Errorf("redisstore: claim %s: the script answered %d", id, n)
}

// Commit implements [contextsvc.Deduper].
func (d *Deduper) Commit(ctx context.Context, id string, token contextsvc.ClaimToken, remember time.Duration) error {
	if err := d.checkToken("commit", id, token); err != nil {
		return err
	}
	n, err := commitScript.Run(ctx, d.client, []string{d.Key(id)}, claimPrefix+string(token), max(0, millis(remember))).Int()
	if err != nil {
		return fmt.Errorf("redisstore: commit %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("redisstore: commit %s: %w", id, contextsvc.ErrClaimLost)
	}
	return nil
}

// Release implements [contextsvc.Deduper].
func (d *Deduper) Release(ctx context.Context, id string, token contextsvc.ClaimToken) error {
	if err := d.checkToken("release", id, token); err != nil {
		return err
	}
	if err := releaseScript.Run(ctx, d.client, []string{d.Key(id)}, claimPrefix+string(token)).Err(); err != nil {
		return fmt.Errorf("redisstore: release %s: %w", id, err)
	}
	return nil
}

// errNotMade is the error of a Deduper not made by NewDeduper.
var errNotMade = fmt.Errorf("%w: redisstore: a Deduper not made by NewDeduper", contextsvc.ErrInvalidArgument)

func (d *Deduper) checkToken(op, id string, token contextsvc.ClaimToken) error {
	if d.client == nil {
		return errNotMade
	}
	if id == "" {
		return fmt.Errorf("%w: redisstore: %s with an empty event id", contextsvc.ErrInvalidArgument, op)
	}
	if token == "" {
		return fmt.Errorf("%w: redisstore: %s %s with an empty claim token", contextsvc.ErrInvalidArgument, op, id)
	}
	return nil
}

// millis is d in whole milliseconds, rounded up so that an entry never
// lapses before its time; <= 0 stays <= 0.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return int64(d / time.Millisecond)
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
