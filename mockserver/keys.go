package mockserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// Plan names a rate-limit plan of an API key.
type Plan string

// The plans of the reference's rate-limit table, plus [PlanUnlimited] for
// load tests (a key on it is never limited and its responses carry no
// X-RateLimit-* headers).
const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanBusiness   Plan = "business"
	PlanEnterprise Plan = "enterprise"
	PlanUnlimited  Plan = "unlimited"
)

// Scope is what an API key may do.
type Scope string

// The two scopes: ScopeRead may only read (GET); ScopeWrite may do anything.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Key is an API key the mock server accepts. Keys with the same Account see
// the same contexts and webhooks.
type Key struct {
	// Token is the secret sent as "Authorization: Bearer <Token>". It never
	// appears in String output or logs.
	Token string
	// Account groups keys; it is generated when empty.
	Account string
	// User is the user id (user_…) recorded as createdBy/updatedBy; it is
	// generated when empty.
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

// limits returns the per-minute limit and burst of the key's plan; ok is
// false for an unlimited key.
func (k Key) limits() (perMinute, burst int, ok bool) {
	switch k.Plan {
	case PlanFree:
		return 60, 10, true
	case PlanPro, "":
		return 300, 50, true
	case PlanBusiness:
		return 1000, 100, true
	case PlanEnterprise:
		return k.PerMinute, k.Burst, true
	}
	return 0, 0, false
}

// validate checks a key given to WithKey after defaults are applied.
func (k Key) validate() error {
	if k.Token == "" {
		return errors.New("mockserver: key with an empty token")
	}
	switch k.Plan {
	case PlanFree, PlanPro, PlanBusiness, PlanUnlimited:
	case PlanEnterprise:
		if k.PerMinute <= 0 || k.Burst <= 0 {
			return errors.New("mockserver: enterprise key needs PerMinute and Burst > 0")
		}
	default:
		return fmt.Errorf("mockserver: unknown plan %q", k.Plan)
	}
	if k.Scope != ScopeRead && k.Scope != ScopeWrite {
		return fmt.Errorf("mockserver: unknown scope %q", k.Scope)
	}
	if !strings.HasPrefix(k.User, "user_") {
		return fmt.Errorf("mockserver: user id %q lacks the user_ prefix", k.User)
	}
	return nil
}

// ParseKey parses the command-line form KEY[:plan[:scope]] where plan is
// free, pro, business, unlimited or enterprise=PERMINUTE/BURST (for example
// "enterprise=5000/200") and scope is read or write. The defaults are plan
// pro and scope write. Account and User are left empty, so [New] generates
// them; the command gives every key it parses the same Account, so all its
// keys see the same contexts.
func ParseKey(spec string) (Key, error) {
	parts := strings.Split(spec, ":")
	if len(parts) > 3 {
		return Key{}, errors.New("mockserver: key spec has more than KEY:plan:scope")
	}
	k := Key{Token: parts[0], Plan: PlanPro, Scope: ScopeWrite}
	if k.Token == "" {
		return Key{}, errors.New("mockserver: key spec with an empty key")
	}
	if len(parts) > 1 {
		p := parts[1]
		switch {
		case p == "free" || p == "pro" || p == "business" || p == "unlimited":
			k.Plan = Plan(p)
		case strings.HasPrefix(p, "enterprise="):
			n, b, ok := strings.Cut(strings.TrimPrefix(p, "enterprise="), "/")
			pm, err1 := strconv.Atoi(n)
			bu, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil || pm <= 0 || bu <= 0 {
				return Key{}, fmt.Errorf("mockserver: enterprise plan must be enterprise=PERMINUTE/BURST with positive numbers, got %q", p)
			}
			k.Plan, k.PerMinute, k.Burst = PlanEnterprise, pm, bu
		default:
			return Key{}, fmt.Errorf("mockserver: unknown plan %q (free, pro, business, enterprise=N/B, unlimited)", p)
		}
	}
	if len(parts) > 2 {
		switch s := Scope(parts[2]); s {
		case ScopeRead, ScopeWrite:
			k.Scope = s
		default:
			return Key{}, fmt.Errorf("mockserver: unknown scope %q (read, write)", parts[2])
		}
	}
	return k, nil
}

// apiKey is a configured key with its rate limiter and token hash.
type apiKey struct {
	Key
	hash [sha256.Size]byte
	// limiter is nil for unlimited keys; Reset swaps in a full one.
	limiter   atomic.Pointer[rate.Limiter]
	perMinute int
	burst     int
	limitHdr  []string // precomputed X-RateLimit-Limit value
	acct      *account
}

// lookupKey finds the key whose token is token. Every configured key is
// compared, in constant time over a fixed-size hash, so neither the
// position of the first differing byte nor the token's length leaks.
func (s *Server) lookupKey(token string) *apiKey {
	h := sha256.Sum256([]byte(token))
	var found *apiKey
	for _, k := range s.keys {
		if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
			found = k
		}
	}
	return found
}
