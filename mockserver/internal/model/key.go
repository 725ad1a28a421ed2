package model

import "fmt"

// Plan names a rate-limit plan of an API key: mockserver.Plan.
type Plan string

// The plans of the reference's rate-limit table, plus PlanUnlimited for
// load tests (a key on it is never limited and its responses carry no
// X-RateLimit-* headers).
const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanBusiness   Plan = "business"
	PlanEnterprise Plan = "enterprise"
	PlanUnlimited  Plan = "unlimited"
)

// Scope is what an API key may do: mockserver.Scope.
type Scope string

// The two scopes: ScopeRead may only read (GET); ScopeWrite may do anything.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Key is an API key the mock server accepts: mockserver.Key. Keys with the
// same Account see the same contexts and webhooks.
type Key struct {
	// Token is the secret sent as "Authorization: Bearer <Token>": no
	// spaces or control characters (a client could not send it as it is).
	// It never appears in String output or logs.
	Token string
	// Account groups keys: 1 to 64 characters of A-Z, a-z, 0-9, '_', '.'
	// and '-'. When empty, the key gets an account of its own ("acct_…"),
	// generated at each start.
	Account string
	// User is the user id (user_…) recorded as createdBy/updatedBy. When
	// empty it is derived from Account: every key of an account given
	// without a User is that one user, and the id is the same at every
	// start of a server with the same accounts.
	User string
	// Plan selects the rate limit; empty means PlanPro.
	Plan Plan
	// Scope is read or write; empty means ScopeWrite.
	Scope Scope
	// PerMinute is the Enterprise plan's custom requests per minute. Other
	// plans ignore it and use the reference's table.
	PerMinute int
	// Burst is the Enterprise plan's custom burst; other plans ignore it.
	Burst int
}

// String describes the key without its token, so a Key is safe to log.
func (k Key) String() string {
	return fmt.Sprintf("Key{Account:%s User:%s Plan:%s Scope:%s Token:[redacted]}", k.Account, k.User, k.Plan, k.Scope)
}

// GoString is String, so %#v does not print the token either.
func (k Key) GoString() string { return k.String() }
