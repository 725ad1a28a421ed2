package mockserver

import (
	"fmt"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Plan names a rate-limit plan of an API key.
type Plan = model.Plan

// The plans of the reference's rate-limit table, plus [PlanUnlimited] for
// load tests (a key on it is never limited and its responses carry no
// X-RateLimit-* headers).
const (
	PlanFree       Plan = model.PlanFree       // "free": 60 requests a minute, burst 10
	PlanPro        Plan = model.PlanPro        // "pro": 300 a minute, burst 50
	PlanBusiness   Plan = model.PlanBusiness   // "business": 1,000 a minute, burst 100
	PlanEnterprise Plan = model.PlanEnterprise // "enterprise": the key's own PerMinute and Burst
	PlanUnlimited  Plan = model.PlanUnlimited  // "unlimited": never limited
)

// Scope is what an API key may do.
type Scope = model.Scope

// The two scopes: ScopeRead may only read (GET); ScopeWrite may do anything.
const (
	ScopeRead  Scope = model.ScopeRead  // "read"
	ScopeWrite Scope = model.ScopeWrite // "write"
)

// Key is an API key the mock server accepts ([WithKey]): its Token, sent
// as "Authorization: Bearer <Token>" (no spaces or control characters,
// and never in String output or logs); its Account (1 to 64 characters of
// A-Z, a-z, 0-9, '_', '.' and '-'; when empty, one of the key's own,
// "acct_…", generated at each start): keys with the same Account see the
// same contexts and webhooks; its User, the user id recorded as
// createdBy/updatedBy (when empty, derived from the Account alone, so a
// named account's is the same at every start); its Plan (empty means
// [PlanPro]) and Scope (empty means [ScopeWrite]); and the Enterprise
// plan's own PerMinute and Burst, which other plans ignore. Its fields are
// documented with its definition, [model.Key].
type Key = model.Key

// DefaultAccount ("default") is the account of a key whose command-line
// form names none (see [ParseKey]): the command's keys without an account
// share it, and so does the key it makes without -key. A [Key] given to
// [WithKey] without an Account gets one of its own instead ("acct_…").
const DefaultAccount = keys.DefaultAccount

// ValidAccount reports whether name is a valid account name: 1 to 64
// characters of A-Z, a-z, 0-9, '_', '.' and '-'. Names are used as they
// are (they are the account ids the admin API shows), so they stay the
// same from one start to the next. The error never repeats the name: in a
// -key flag it sits beside the token.
//
// [Open] refuses a [Key] whose Account is not valid, and [ParseKey] a spec
// naming one, so a program that starts a mock has no need of it; a program
// that writes for one (a state document, as contextsvc snapshot does)
// checks its account names with it before it writes.
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
// A program that runs the mock reads the user of each key from
// [Server.Keys] (or [Server.DefaultKey]), which have their defaults filled
// in; one that only reaches a mock over HTTP (the command contextsvc)
// knows from it who the mock will say acted for a key of an account.
func AccountUser(account string) string { return mockrules.AccountUser(account) }

// ParseKey parses the command-line form KEY[:plan[:scope[:account]]] where
// plan is free, pro, business, unlimited or enterprise=PERMINUTE/BURST (for
// example "enterprise=5000/200"), scope is read or write, and account is 1
// to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-'. The defaults are
// plan pro, scope write and account [DefaultAccount], so keys that name no
// account share one. User is left empty, so [New] derives it from the
// account. An empty part (KEY::read) is an error, not a default; so is a
// KEY with a space or a control character. Its errors never repeat the
// token.
func ParseKey(spec string) (Key, error) { return keys.Parse(spec) }
