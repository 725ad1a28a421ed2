package mockserver

import "github.com/contextsvc/contextsvc-go/mockserver/internal/idempotency"

// Limits of the idempotency store. Every key expires IdempotencyTTL (24
// hours) after its first request; besides, the store holds at most
// MaxIdempotencyKeys (10,000) keys and MaxIdempotencyBytes (64 MiB) of
// stored answers (over all accounts) and forgets the oldest finished key
// first when a new one would pass either limit (a key whose request is
// still running is kept, so its repeat is still a 409). A repeat of a
// forgotten key runs afresh, as after 24 hours.
const (
	IdempotencyTTL      = idempotency.TTL
	MaxIdempotencyKeys  = idempotency.MaxKeys
	MaxIdempotencyBytes = idempotency.MaxBytes
)
