// Package redisstore shares what the SDK otherwise keeps in one process
// through Redis, for fleets: the client-side rate limiter of an API key
// ([NewLimiter]) across every process that uses the key, and the webhook
// handler's record of handled events ([NewDeduper]) across every replica
// of a receiver.
//
// Both take a [redis.UniversalClient] of github.com/redis/go-redis/v9, so
// one server, Sentinel and Cluster all work, and both touch exactly one
// key per command (Cluster never sees a cross-slot script). Redis 6.2 or
// later.
//
// Without the limiter, 20 workers sharing a Business key each pace
// themselves to the whole 1,000 requests a minute, and the service answers
// most of their requests 429. With it they pace to 1,000 a minute together,
// on GCRA (github.com/go-redis/redis_rate/v10), which is the service's own
// token bucket per key, counted on Redis's clock; the Redis key is a hash
// of the API key, never the key itself. When Redis cannot be reached the
// [FailureMode] decides: [FailOpen] (the default) paces each process
// locally to its share of the plan and asks Redis again every second,
// [FailClosed] fails every call with an error wrapping [ErrUnavailable].
//
//	lim, err := redisstore.NewLimiter(rdb, apiKey, contextsvc.BusinessPlan())
//	client, err := contextsvc.NewClient(apiKey, contextsvc.WithLimiter(lim))
//
// The service delivers each event once per matching webhook and again on
// every retry; behind a load balancer those copies reach different
// replicas. Giving every replica's handler the same Deduper makes each
// event handled once across them, with the rules of [contextsvc.Deduper]
// (a claim with a lease and an owner token, then the id remembered for the
// replay window), each step one atomic Lua script:
//
//	dedupe, err := redisstore.NewDeduper(rdb, "myapp:webhooks:")
//	h, err := contextsvc.NewWebhookHandler(secret, handle, contextsvc.WithDeduper(dedupe))
//
// The repository's guide docs/fleet.md says how each works and why, what
// Redis failing means for each (an outage, lost data, a Sentinel failover,
// a Cluster resharding, with the times measured), what they cost, and how
// they are tested.
//
// [redis.UniversalClient]: https://pkg.go.dev/github.com/redis/go-redis/v9#UniversalClient
package redisstore
