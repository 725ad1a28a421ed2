package keys

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// TestNewDefaults: empty fields get their defaults, a server without keys
// gets one of its own, and Bind puts each key's account in the store.
func TestNewDefaults(t *testing.T) {
	t.Parallel()
	set, err := New([]model.Key{{Token: "a"}, {Token: "b", Account: "acme", Plan: model.PlanFree, Scope: model.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	all := set.All()
	if k := all[0]; k.Plan != model.PlanPro || k.Scope != model.ScopeWrite || !strings.HasPrefix(k.Account, "acct_") || k.User != mockrules.AccountUser(k.Account) {
		t.Errorf("defaults: %v", k)
	}
	if k := all[1]; k.Account != "acme" || k.User != mockrules.AccountUser("acme") || k.Plan != model.PlanFree || k.Scope != model.ScopeRead {
		t.Errorf("given: %v", k)
	}
	if set.Default() != all[0] || !set.Has("acme") || set.Has("globex") {
		t.Errorf("Default %v, Has acme %t, Has globex %t", set.Default(), set.Has("acme"), set.Has("globex"))
	}
	st := store.New()
	set.Bind(st)
	if k := set.Lookup("b"); k == nil || k.Data != st.Account("acme") || k.Data == nil {
		t.Errorf("the key b is not bound to its account: %+v", k)
	}

	own, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := own.Default(); !regexp.MustCompile(`^sk_test_[a-z2-7]{24}$`).MatchString(k.Token) || k.Plan != model.PlanBusiness || k.Scope != model.ScopeWrite {
		t.Errorf("the key made for a server without keys: %v (token %q)", k, k.Token)
	}
}

// TestNewRefuses: a key New cannot take is named by its position, never
// by its token.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keys []model.Key
		want string
	}{
		{[]model.Key{{Token: "sk_secret"}, {Token: "sk_secret"}}, "WithKey #2: the same token as key #1"},
		{[]model.Key{{Token: "sk_secret", Plan: "gold"}}, `WithKey #1: unknown plan "gold"`},
		{[]model.Key{{Token: "sk_secret", Plan: model.PlanEnterprise}}, "WithKey #1: enterprise key needs PerMinute and Burst > 0"},
		{[]model.Key{{Token: "sk_secret", Scope: "admin"}}, `WithKey #1: unknown scope "admin"`},
		{[]model.Key{{Token: "sk secret"}}, "WithKey #1: the key contains spaces"},
		{[]model.Key{{Token: "sk_secret", Account: "a b"}}, "WithKey #1: an account may hold only"},
		{[]model.Key{{Token: "sk_secret", User: "u1"}}, `WithKey #1: user id "u1" lacks the user_ prefix`},
	} {
		_, err := New(tc.keys)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.keys, err, tc.want)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error shows the token: %v", tc.keys, err)
		}
	}
}

// TestTake: a key's bucket holds its plan's burst and refills at its rate
// on the clock it is given; an empty bucket refuses with the wait; an
// unlimited key always passes and sends no header.
func TestTake(t *testing.T) {
	t.Parallel()
	set, err := New([]model.Key{
		{Token: "ent", Plan: model.PlanEnterprise, PerMinute: 60, Burst: 2},
		{Token: "free", Plan: model.PlanUnlimited},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	k := set.Lookup("ent")
	for i, want := range []struct {
		ok                           bool
		remaining, reset, retryAfter int
	}{{true, 1, 1, 0}, {true, 0, 2, 0}, {false, 0, 2, 1}} {
		got, ok := k.Take(now)
		if ok != want.ok || got.Remaining != want.remaining || got.Reset != want.reset || got.RetryAfter != want.retryAfter ||
			len(got.Limit) != 1 || got.Limit[0] != "60" {
			t.Errorf("take #%d: %+v %t, want %+v", i+1, got, ok, want)
		}
	}
	if _, ok := k.Take(now.Add(time.Second)); !ok {
		t.Error("a second later the bucket holds no token")
	}
	set.Refill()
	if got, ok := k.Take(now.Add(time.Second)); !ok || got.Remaining != 1 {
		t.Errorf("after Refill: %+v %t, want a full bucket", got, ok)
	}
	for range 1000 {
		if got, ok := set.Lookup("free").Take(now); !ok || got.Limit != nil {
			t.Fatalf("an unlimited key: %+v %t", got, ok)
		}
	}
	if set.Lookup("nope") != nil || set.Lookup("") != nil {
		t.Error("Lookup found a key for a token no key has")
	}
}
