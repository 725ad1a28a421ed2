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

	"github.com/contextsvc/contextsvc-go/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
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
	// Token is the secret sent as "Authorization: Bearer <Token>": no
	// spaces or control characters (a client could not send it as it is).
	// It never appears in String output or logs.
	Token string
	// Account groups keys: 1 to 64 characters of A-Z, a-z, 0-9, '_', '.'
	// and '-' (see [ValidAccount]). It is generated ("acct_…") when empty.
	Account string
	// User is the user id (user_…) recorded as createdBy/updatedBy. When
	// empty it is derived from Account (see [AccountUser]): every key of an
	// account given without a User is that one user, and the id is the same
	// at every start of a server with the same accounts.
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

// validToken refuses a token that no client can send as it is: one with
// a space or a control character (HTTP trims the spaces around it, and
// contextsvc.NewClient refuses such a key). The error never repeats it.
func validToken(token string) error {
	if strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("mockserver: the key contains spaces or control characters, which no client sends as they are")
	}
	return nil
}

// validate checks a key given to WithKey after defaults are applied.
func (k Key) validate() error {
	if k.Token == "" {
		return errors.New("mockserver: key with an empty token")
	}
	if err := validToken(k.Token); err != nil {
		return err
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
	if err := ValidAccount(k.Account); err != nil {
		return err
	}
	if !strings.HasPrefix(k.User, "user_") {
		return fmt.Errorf("mockserver: user id %q lacks the user_ prefix", k.User)
	}
	return nil
}

// DefaultAccount is the account of a key whose command-line form names none
// (see [ParseKey]): the command's keys without an account share it.
const DefaultAccount = "default"

// ValidAccount reports whether name is a valid account name: 1 to 64
// characters of A-Z, a-z, 0-9, '_', '.' and '-'. Names are used as they
// are (they are the account ids the admin API shows), so they stay the
// same from one start to the next. The error never repeats the name: in a
// -key flag it sits beside the token.
//
// Deprecated: it was made for the command contextsvc-mock, which checks
// its flags with rules of its own now. A program has no need of it:
// [Open] refuses a [Key] whose Account is not valid, and [ParseKey] a
// spec naming one, each with an error saying why.
func ValidAccount(name string) error {
	if err := mockrules.Account(name); err != nil {
		return fmt.Errorf("mockserver: %w", err)
	}
	return nil
}

// AccountUser returns the user id that [New] gives the keys of an account
// that have no User: "user_" and 26 lowercase base32 characters of the
// SHA-256 of the account name. It depends on the name alone (never on a
// token), so the same account has the same user at every start, and the
// createdBy, updatedBy… of stored versions and events stay true across
// restarts.
//
// Deprecated: it was made for the command contextsvc-mock. A program
// reads the user of each key from [Server.Keys] (or [Server.DefaultKey]),
// which have their defaults filled in.
func AccountUser(account string) string { return mockrules.AccountUser(account) }

// ParseKey parses the command-line form KEY[:plan[:scope[:account]]] where
// plan is free, pro, business, unlimited or enterprise=PERMINUTE/BURST (for
// example "enterprise=5000/200"), scope is read or write, and account is 1
// to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-'. The defaults are
// plan pro, scope write and account [DefaultAccount], so keys that name no
// account share one. User is left empty, so [New] derives it from the
// account ([AccountUser]). An empty part (KEY::read) is an error, not a
// default; so is a KEY with a space or a control character. Its errors
// never repeat the token.
func ParseKey(spec string) (Key, error) {
	parts := strings.Split(spec, ":")
	if len(parts) > 4 {
		return Key{}, errors.New("mockserver: key spec has more than KEY:plan:scope:account")
	}
	k := Key{Token: parts[0], Plan: PlanPro, Scope: ScopeWrite, Account: DefaultAccount}
	if k.Token == "" {
		return Key{}, errors.New("mockserver: key spec with an empty key")
	}
	if err := validToken(k.Token); err != nil {
		return Key{}, err
	}
	// An empty part is a slip (KEY::read), not a default: the defaults
	// are had by leaving the parts out from the right.
	for i, name := range []string{"", "plan", "scope", "account"} {
		if i > 0 && i < len(parts) && parts[i] == "" {
			return Key{}, fmt.Errorf("mockserver: the %s (part %d of KEY:plan:scope:account) is empty: give one, or leave it out with its ':' (and the parts after it)", name, i+1)
		}
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
	if len(parts) > 3 {
		if err := ValidAccount(parts[3]); err != nil {
			return Key{}, err
		}
		k.Account = parts[3]
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
	acct      *store.Account
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
