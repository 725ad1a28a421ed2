// Package keys is the mock server's API keys: a key's defaults and rules
// ([New]), its command-line form ([Parse]), the token bucket of each key
// on the server's clock ([Key.Take]), and finding a key by its token in
// constant time ([Set.Lookup]).
//
// It owns the configured keys and their buckets. A key as the user gives
// it is model's (mockserver.Key); its account is the store's, where Bind
// adds it. It imports model, store and ids, nothing else of the mock
// server, and mockrules for the rules of account names and user ids,
// which the command shares.
package keys

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// DefaultAccount is the account of a key whose command-line form names
// none: mockserver.DefaultAccount.
const DefaultAccount = "default"

// Key is a configured key: the user's key with its defaults filled in,
// the hash of its token, its account's data and its bucket.
type Key struct {
	model.Key
	// Data is the key's account in the store (Bind).
	Data *store.Account

	hash [sha256.Size]byte
	// limiter is nil for an unlimited key; Refill swaps in a full one.
	limiter   atomic.Pointer[rate.Limiter]
	perMinute int
	burst     int
	limitHdr  []string // the X-RateLimit-Limit value, made once
}

// Set is the server's keys, in the order given. It is made before the
// server serves and never changes after, so it is read without a lock.
type Set struct {
	keys []*Key
}

// New fills in the defaults of ks (plan pro, scope write, a generated
// account, the account's user) and checks each. Without keys it makes
// one: a random token, plan business, scope write. A key New refuses, or
// a token given twice, is an error naming the key by its position
// ("WithKey #2: …"), never by its token.
func New(ks []model.Key) (*Set, error) {
	if len(ks) == 0 {
		ks = []model.Key{{Token: "sk_test_" + strings.TrimPrefix(ids.New("k_"), "k_"), Plan: model.PlanBusiness, Scope: model.ScopeWrite}}
	}
	set := &Set{keys: make([]*Key, 0, len(ks))}
	tokens := make(map[string]int, len(ks))
	for i, k := range ks {
		if first, ok := tokens[k.Token]; ok && k.Token != "" {
			return nil, fmt.Errorf("WithKey #%d: the same token as key #%d", i+1, first)
		}
		tokens[k.Token] = i + 1
		k = withDefaults(k)
		if err := Check(k); err != nil {
			return nil, fmt.Errorf("WithKey #%d: %s", i+1, strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		ck := &Key{Key: k, hash: sha256.Sum256([]byte(k.Token))}
		if pm, b, limited := limits(k); limited {
			ck.perMinute, ck.burst = pm, b
			ck.limiter.Store(rate.NewLimiter(rate.Limit(float64(pm)/60), b))
			ck.limitHdr = []string{strconv.Itoa(pm)}
		}
		set.keys = append(set.keys, ck)
	}
	return set, nil
}

// Bind adds the keys' accounts, with their users, to st, and points each
// key at its account there. Call it once, before the store is shared.
func (s *Set) Bind(st *store.Store) {
	for _, k := range s.keys {
		k.Data = st.AddAccount(k.Account)
		k.Data.AddUser(k.User)
	}
}

// withDefaults fills in what k leaves empty: plan pro, scope write, a
// generated account ("acct_…") and the account's user.
func withDefaults(k model.Key) model.Key {
	if k.Plan == "" {
		k.Plan = model.PlanPro
	}
	if k.Scope == "" {
		k.Scope = model.ScopeWrite
	}
	if k.Account == "" {
		k.Account = ids.New("acct_")
	}
	if k.User == "" {
		k.User = mockrules.AccountUser(k.Account)
	}
	return k
}

// limits returns the per-minute limit and burst of k's plan; ok is false
// for an unlimited key.
func limits(k model.Key) (perMinute, burst int, ok bool) {
	switch k.Plan {
	case model.PlanFree:
		return 60, 10, true
	case model.PlanPro, "":
		return 300, 50, true
	case model.PlanBusiness:
		return 1000, 100, true
	case model.PlanEnterprise:
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

// Check checks a key whose defaults are filled in. Its errors never repeat
// the token.
func Check(k model.Key) error {
	if k.Token == "" {
		return errors.New("mockserver: key with an empty token")
	}
	if err := validToken(k.Token); err != nil {
		return err
	}
	switch k.Plan {
	case model.PlanFree, model.PlanPro, model.PlanBusiness, model.PlanUnlimited:
	case model.PlanEnterprise:
		if k.PerMinute <= 0 || k.Burst <= 0 {
			return errors.New("mockserver: enterprise key needs PerMinute and Burst > 0")
		}
	default:
		return fmt.Errorf("mockserver: unknown plan %q", k.Plan)
	}
	if k.Scope != model.ScopeRead && k.Scope != model.ScopeWrite {
		return fmt.Errorf("mockserver: unknown scope %q", k.Scope)
	}
	if err := mockrules.Account(k.Account); err != nil {
		return fmt.Errorf("mockserver: %w", err)
	}
	if !strings.HasPrefix(k.User, "user_") {
		return fmt.Errorf("mockserver: user id %q lacks the user_ prefix", k.User)
	}
	return nil
}

// Parse parses the command-line form KEY[:plan[:scope[:account]]]
// (mockserver.ParseKey documents it). Its errors never repeat the token.
func Parse(spec string) (model.Key, error) {
	parts := strings.Split(spec, ":")
	if len(parts) > 4 {
		return model.Key{}, errors.New("mockserver: key spec has more than KEY:plan:scope:account")
	}
	k := model.Key{Token: parts[0], Plan: model.PlanPro, Scope: model.ScopeWrite, Account: DefaultAccount}
	if k.Token == "" {
		return model.Key{}, errors.New("mockserver: key spec with an empty key")
	}
	if err := validToken(k.Token); err != nil {
		return model.Key{}, err
	}
	// An empty part is a slip (KEY::read), not a default: the defaults
	// are had by leaving the parts out from the right.
	for i, name := range []string{"", "plan", "scope", "account"} {
		if i > 0 && i < len(parts) && parts[i] == "" {
			return model.Key{}, fmt.Errorf("mockserver: the %s (part %d of KEY:plan:scope:account) is empty: give one, or leave it out with its ':' (and the parts after it)", name, i+1)
		}
	}
	if len(parts) > 1 {
		p := parts[1]
		switch {
		case p == "free" || p == "pro" || p == "business" || p == "unlimited":
			k.Plan = model.Plan(p)
		case strings.HasPrefix(p, "enterprise="):
			n, b, ok := strings.Cut(strings.TrimPrefix(p, "enterprise="), "/")
			pm, err1 := strconv.Atoi(n)
			bu, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil || pm <= 0 || bu <= 0 {
				return model.Key{}, fmt.Errorf("mockserver: enterprise plan must be enterprise=PERMINUTE/BURST with positive numbers, got %q", p)
			}
			k.Plan, k.PerMinute, k.Burst = model.PlanEnterprise, pm, bu
		default:
			return model.Key{}, fmt.Errorf("mockserver: unknown plan %q (free, pro, business, enterprise=N/B, unlimited)", p)
		}
	}
	if len(parts) > 2 {
		switch s := model.Scope(parts[2]); s {
		case model.ScopeRead, model.ScopeWrite:
			k.Scope = s
		default:
			return model.Key{}, fmt.Errorf("mockserver: unknown scope %q (read, write)", parts[2])
		}
	}
	if len(parts) > 3 {
		if err := mockrules.Account(parts[3]); err != nil {
			return model.Key{}, fmt.Errorf("mockserver: %w", err)
		}
		k.Account = parts[3]
	}
	return k, nil
}

// Lookup finds the key whose token is token, or nil. Every key is
// compared, in constant time over a fixed-size hash, so neither the
// position of the first differing byte nor the token's length leaks.
func (s *Set) Lookup(token string) *Key {
	h := sha256.Sum256([]byte(token))
	var found *Key
	for _, k := range s.keys {
		if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
			found = k
		}
	}
	return found
}

// All returns every key, in the order given, with its defaults filled in.
func (s *Set) All() []model.Key {
	out := make([]model.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.Key
	}
	return out
}

// Default returns the first key (the one New made when given none).
func (s *Set) Default() model.Key { return s.keys[0].Key }

// Has reports whether a key belongs to the account.
func (s *Set) Has(account string) bool {
	for _, k := range s.keys {
		if k.Account == account {
			return true
		}
	}
	return false
}

// Refill gives every limited key a full bucket again.
func (s *Set) Refill() {
	for _, k := range s.keys {
		if k.limiter.Load() != nil {
			k.limiter.Store(rate.NewLimiter(rate.Limit(float64(k.perMinute)/60), k.burst))
		}
	}
}

// Taken is what a request took from its key's bucket: the values of the
// X-RateLimit-* headers, and how long to wait when the bucket was empty.
type Taken struct {
	// Limit is the X-RateLimit-Limit header's value, shared by the key's
	// requests (never change it); nil for an unlimited key, which sends
	// no X-RateLimit-* header.
	Limit []string
	// Remaining and Reset are X-RateLimit-Remaining (tokens left) and
	// X-RateLimit-Reset (seconds until the bucket is full).
	Remaining, Reset int
	// RetryAfter is the Retry-After of a refused request, in whole seconds
	// (at least 1); 0 when the request may go on.
	RetryAfter int
}

// Take takes one token from k's bucket at now and reports what it took;
// ok is false when the bucket was empty (nothing is taken then). An
// unlimited key always passes.
func (k *Key) Take(now time.Time) (t Taken, ok bool) {
	lim := k.limiter.Load()
	if lim == nil {
		return Taken{}, true
	}
	res := lim.ReserveN(now, 1)
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	tokens := lim.TokensAt(now)
	t.Limit = k.limitHdr
	t.Remaining = max(int(math.Floor(tokens)), 0)
	t.Reset = max(int(math.Ceil((float64(k.burst)-tokens)/(float64(k.perMinute)/60))), 0)
	if delay <= 0 {
		return t, true
	}
	t.RetryAfter = max(int(math.Ceil(delay.Seconds())), 1)
	return t, false
}
