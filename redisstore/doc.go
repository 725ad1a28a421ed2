// Package redisstore shares what the SDK otherwise keeps in one process
// through Redis, for fleets: the client-side rate limiter of an API key
// ([NewLimiter]) across every process that uses the key, and the webhook
// handler's record of handled events ([NewDeduper]) across every replica
// of a receiver.
//
// Both take a [redis.UniversalClient] of github.com/redis/go-redis/v9, so
// one server, Sentinel and Cluster all work, and both touch exactly one
// key per command (Cluster never sees a cross-slot script). Redis 6.2 or
// later. Their tests run them on a real three-master Redis Cluster, with
// slots moved under load (the ASK and MOVED answers of a move never reach
// a caller), and through a Sentinel failover with the master killed under
// load: until a replica is promoted, a call first waits out go-redis's
// retries, then meets the failure behaviour described below for a Redis
// that cannot be reached. The repository's docs/fleet.md, "When Redis
// fails", gives the times.
//
// # The limiter
//
// Without it, 20 workers sharing a Business key each pace themselves to
// the whole 1,000 requests a minute, and the service answers most of their
// requests 429. With it they pace to 1,000 a minute together:
//
//	lim, err := redisstore.NewLimiter(rdb, apiKey, contextsvc.BusinessPlan())
//	client, err := contextsvc.NewClient(apiKey, contextsvc.WithLimiter(lim))
//
// It runs GCRA, the generic cell rate algorithm, through
// github.com/go-redis/redis_rate/v10 rather than a script of this
// package's own. GCRA with a burst of B and an emission interval of
// 60 s / PerMinute is exactly a token bucket holding B tokens and
// refilling PerMinute a minute, which is the bucket the service keeps per
// key, so a plan maps onto it with nothing lost: B is the plan's burst
// minus the one token of headroom [contextsvc.LocalLimiter] also keeps
// (arrival jitter between the limiter and the service must not meet a
// 429; [WithHeadroom] leaves more for fleets whose requests reach the
// service in a more shuffled order). redis_rate's script stores one number per key (the theoretical
// arrival time), reads the time from Redis itself, so the fleet shares one
// clock and skew between hosts does not matter, and sets the key to
// expire once the bucket would be full again, so an idle key costs
// nothing. When it refuses, it says how long until the next token is due,
// and Wait sleeps exactly that long on a timer before asking again (another
// process may have taken that token). A script that instead reserved
// future tokens would need one call per request rather than one per round,
// but a waiter cancelled after reserving would waste its token for the
// whole fleet; GCRA's refusals cost nothing.
//
// The Redis key is "rate:" + prefix ([DefaultKeyPrefix]) + the hex SHA-256
// of the API key: the key itself never reaches Redis, its logs or an
// error.
//
// When Redis cannot be reached, the [FailureMode] decides. The default is
// [FailOpen]: the process paces itself with a local bucket of its share
// of the plan (the plan divided by the number of limiters sharing the key,
// which they count through Redis every second while it answers), logs the
// change once (with [WithLogger]), and asks Redis again, in the
// background, every second ([WithRecheckInterval]). A fleet that loses
// Redis together, as in a Sentinel failover, so keeps to about the plan's
// rate. Coming back, each limiter charges the shared bucket with what it
// sent meanwhile (the service counted it; the shared bucket refilled), and
// keeps to its share for one recheck interval more while the others come
// back; one whose round trip waited out go-redis's retries does the same.
// A failover so costs the fleet at most one burst of 429s. The service
// enforces the limit anyway and the client retries its 429s, so an outage
// of Redis costs at most some 429s and retries rather than every call: a
// pacing aid should not take the product down with it. [FailClosed] makes
// every call fail at once instead, with an error wrapping [ErrUnavailable]
// and the cause. Redis losing the key (a restart without persistence)
// refills the shared bucket: at most one burst too many, which the service
// answers 429.
//
// Cost: one EVALSHA round trip per request when a token is free, one more
// per wait otherwise, and for a [FailOpen] limiter one heartbeat script a
// second, in the background. Redis spends 7 to 10 µs running the script,
// depending on the CPU, against 0.1 µs for a PING: on loopback a Wait
// measured 1.2x to 1.7x a PING on the same client, depending on the CPU
// and on how busy its cores are (BENCHMARKS.md); against an API call over
// a network it is small. A fleet at 6,000 requests a minute
// adds about 100 scripts a second to Redis, more while clients wait.
//
// # The deduper
//
// The service delivers each event once per matching webhook and again on
// every retry; behind a load balancer those copies reach different
// replicas of the receiver. Giving every replica's handler the same
// Deduper makes each event handled once across them:
//
//	dedupe, err := redisstore.NewDeduper(rdb, "myapp:webhooks:")
//	h, err := contextsvc.NewWebhookHandler(secret, handle, contextsvc.WithDeduper(dedupe))
//
// Each event id is one key, prefix + id, whose value is "c:<token>" while
// an attempt holds it (expiring with the claim's 10-minute lease) and "d"
// once handled (expiring when the replay window has passed, 27 hours after
// the event). Claim, Commit and Release are one Lua script each, so every
// step is atomic, and Commit and Release compare the stored claim with
// their own token before they change it: an attempt whose lease lapsed
// can never release or overwrite the claim another attempt now holds (the
// rules are in the [contextsvc.Deduper] documentation). Memory is bounded
// by one replay window of events: about 190 bytes of Redis memory per id
// (a 45-character key), so a receiver of one event a second holds about
// 18 MB at most.
//
// When Redis cannot be reached, Claim fails and the handler answers 500
// without handling the event; the service retries it later. See
// [Deduper] for what Redis losing its data means.
//
// Cost: two round trips per handled delivery (Claim, then Commit or
// Release), one per duplicate.
//
// [redis.UniversalClient]: https://pkg.go.dev/github.com/redis/go-redis/v9#UniversalClient
package redisstore
