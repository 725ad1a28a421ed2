package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec    string
		want    Key
		wantErr bool
	}{
		{spec: "sk_1", want: Key{Token: "sk_1", Plan: PlanPro, Scope: ScopeWrite, Account: DefaultAccount}},
		{spec: "sk_1:free", want: Key{Token: "sk_1", Plan: PlanFree, Scope: ScopeWrite, Account: DefaultAccount}},
		{spec: "sk_1:business:read", want: Key{Token: "sk_1", Plan: PlanBusiness, Scope: ScopeRead, Account: DefaultAccount}},
		{spec: "sk_1:unlimited:write", want: Key{Token: "sk_1", Plan: PlanUnlimited, Scope: ScopeWrite, Account: DefaultAccount}},
		{spec: "sk_1:enterprise=5000/200", want: Key{Token: "sk_1", Plan: PlanEnterprise, Scope: ScopeWrite, PerMinute: 5000, Burst: 200, Account: DefaultAccount}},
		{spec: "sk_1:pro:read:acme", want: Key{Token: "sk_1", Plan: PlanPro, Scope: ScopeRead, Account: "acme"}},
		{spec: "sk_1:free:write:Team_2.eu-west", want: Key{Token: "sk_1", Plan: PlanFree, Scope: ScopeWrite, Account: "Team_2.eu-west"}},
		{spec: "sk_1:pro:write:" + strings.Repeat("a", 64), want: Key{Token: "sk_1", Plan: PlanPro, Scope: ScopeWrite, Account: strings.Repeat("a", 64)}},
		{spec: "", wantErr: true},
		{spec: ":pro", wantErr: true},
		{spec: "k:gold", wantErr: true},
		{spec: "k:enterprise", wantErr: true},
		{spec: "k:enterprise=0/5", wantErr: true},
		{spec: "k:enterprise=10/x", wantErr: true},
		{spec: "k:pro:admin", wantErr: true},
		{spec: "k:pro:read:", wantErr: true},
		{spec: "k:pro:read:a b", wantErr: true},
		{spec: "k:pro:read:acme/eu", wantErr: true},
		{spec: "k:pro:read:caf\u00e9", wantErr: true},
		{spec: "k:pro:read:" + strings.Repeat("a", 65), wantErr: true},
		{spec: "k:pro:read:acme:extra", wantErr: true},
	} {
		got, err := ParseKey(tc.spec)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseKey(%q) error %v", tc.spec, err)
			continue
		}
		if err != nil && strings.Contains(err.Error(), tc.spec) && tc.spec != "" && !strings.Contains(tc.spec, ":") {
			t.Errorf("error leaks the key: %v", err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseKey(%q) (-want +got):\n%s", tc.spec, d)
		}
	}
}

// TestParseKeyErrors: a refused spec's error says which part is wrong:
// an empty part is named as such (not as an unknown plan ""), and a key
// no client can send is refused rather than served and never matched.
func TestParseKeyErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, msg string }{
		{"k:", "the plan (part 2 of KEY:plan:scope:account) is empty"},
		{"k::read", "the plan (part 2 of KEY:plan:scope:account) is empty"},
		{"k:pro:", "the scope (part 3 of KEY:plan:scope:account) is empty"},
		{"k:pro::acme", "the scope (part 3 of KEY:plan:scope:account) is empty"},
		{"k:pro:read:", "the account (part 4 of KEY:plan:scope:account) is empty"},
		{"k:gold", `unknown plan "gold"`},
		{"k:pro:admin", `unknown scope "admin"`},
		{"sk live", "the key contains spaces or control characters"},
		{" sk_live", "the key contains spaces or control characters"},
		{"sk_live\t", "the key contains spaces or control characters"},
		{"sk_live\x7f", "the key contains spaces or control characters"},
		{"sk_\x01live:free", "the key contains spaces or control characters"},
		{"sk_l\u00efve", ""}, // not ASCII, but a header carries it
	} {
		_, err := ParseKey(tc.spec)
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("ParseKey(%q): %v", tc.spec, err)
		case tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("ParseKey(%q): %v, want %q", tc.spec, err, tc.msg)
		}
	}
	for _, token := range []string{"sk live", "sk_live\x7f", "sk_\x01live"} {
		if err := keys.Check(Key{Token: token, Plan: PlanPro, Scope: ScopeWrite, Account: "a", User: "user_a"}); err == nil {
			t.Errorf("WithKey takes %q", token)
		}
	}
}

// TestParseKeyErrorsHideToken: a refused spec's error names what is wrong
// and never the token, whichever field is at fault.
func TestParseKeyErrorsHideToken(t *testing.T) {
	t.Parallel()
	for _, rest := range []string{":gold", ":pro:admin", ":pro:read:", ":pro:read:a/b", ":pro:read:" + strings.Repeat("x", 65), ":pro:read:acme:more", ":enterprise=1/0"} {
		_, err := ParseKey("sk_live_T0ken" + rest)
		if err == nil {
			t.Errorf("%q accepted", rest)
			continue
		}
		if strings.Contains(err.Error(), "sk_live_T0ken") || strings.Contains(err.Error(), "T0ken") {
			t.Errorf("%q: the error shows the token: %v", rest, err)
		}
	}
}

// TestAccountUser: the user of an account's keys is derived from its name
// alone, is a valid user id, and is what New gives keys without a User.
func TestAccountUser(t *testing.T) {
	t.Parallel()
	u := AccountUser("acme")
	if u != AccountUser("acme") || u == AccountUser("globex") || u == AccountUser(DefaultAccount) {
		t.Errorf("AccountUser not one per account name: %s %s %s", u, AccountUser("globex"), AccountUser(DefaultAccount))
	}
	if ok, _ := regexp.MatchString(`^user_[a-z0-9]{26}$`, u); !ok {
		t.Errorf("AccountUser(acme) = %q, not a user id of the contract", u)
	}
	s := New(WithKey(Key{Token: "a1", Account: "acme"}), WithKey(Key{Token: "a2", Account: "acme", Scope: ScopeRead}),
		WithKey(Key{Token: "g", Account: "globex"}), WithKey(Key{Token: "own", Account: "acme", User: "user_own"}))
	ks := s.Keys()
	if ks[0].User != u || ks[1].User != u || ks[2].User != AccountUser("globex") || ks[3].User != "user_own" {
		t.Errorf("keys %v", ks)
	}
	// Another server with the same accounts has the same users.
	if again := New(WithKey(Key{Token: "other", Account: "acme"})); again.DefaultKey().User != u {
		t.Errorf("user %s on a second server, want %s", again.DefaultKey().User, u)
	}
	for _, bad := range []string{"a b", "acme/eu", strings.Repeat("a", 65), "caf\u00e9"} {
		if err := ValidAccount(bad); err == nil {
			t.Errorf("ValidAccount(%q) = nil", bad)
		}
		if s, err := Open(WithKey(Key{Token: "x", Account: bad})); !errors.Is(err, ErrInvalidOption) || s != nil {
			t.Errorf("Open accepted the account %q: %v", bad, err)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"k", "k:pro", "k:enterprise=1/1:read", "::", "k:enterprise=/", "k:free:write", "k:free:write:acme", "k:pro:read:a/b", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, err := ParseKey(spec)
		if err != nil {
			return
		}
		// A parsed key is usable by New.
		k.User = mockrules.AccountUser(k.Account)
		if err := keys.Check(k); err != nil {
			t.Fatalf("ParseKey(%q) = %v, which New rejects: %v", spec, k, err)
		}
	})
}

func TestKeyStringHidesToken(t *testing.T) {
	t.Parallel()
	k := Key{Token: "sk_live_secret", Account: "a", User: "user_x", Plan: PlanPro, Scope: ScopeWrite}
	for _, s := range []string{k.String(), fmt.Sprint(k), fmt.Sprintf("%v %+v %#v", k, k, k)} {
		if strings.Contains(s, "sk_live_secret") {
			t.Errorf("token in %q", s)
		}
	}
}

func TestDefaultKeyAndKeys(t *testing.T) {
	t.Parallel()
	s := New()
	k := s.DefaultKey()
	if k.Plan != PlanBusiness || k.Scope != ScopeWrite || !strings.HasPrefix(k.User, "user_") || k.Account == "" || k.Token == "" {
		t.Fatalf("default key %v", k)
	}
	if d := cmp.Diff([]Key{k}, s.Keys()); d != "" {
		t.Fatal(d)
	}
	s2 := New(WithKey(Key{Token: "a"}), WithKey(Key{Token: "b", Account: "shared"}), WithKey(Key{Token: "c", Account: "shared", User: "user_c"}))
	ks := s2.Keys()
	if len(ks) != 3 || ks[0].Plan != PlanPro || ks[1].Account != "shared" || ks[2].User != "user_c" || ks[0].Account == "shared" {
		t.Fatalf("keys %v", ks)
	}
	if s2.DefaultKey().Token != "a" {
		t.Fatal("DefaultKey is not the first key")
	}
	for _, bad := range [][]Key{{{Token: ""}}, {{Token: "x", Plan: "gold"}}, {{Token: "x", Plan: PlanEnterprise}}, {{Token: "x", Scope: "admin"}}, {{Token: "x", User: "u1"}}, {{Token: "x"}, {Token: "x"}}} {
		var opts []Option
		for _, k := range bad {
			opts = append(opts, WithKey(k))
		}
		if s, err := Open(opts...); !errors.Is(err, ErrInvalidOption) || s != nil {
			t.Errorf("Open accepted %v: %v", bad, err)
		}
	}
}

// FuzzCreateBody sends any body to createContext: the answer is a 201, a
// 400 or a 413, never a panic or a 500, and a failure stores nothing.
func FuzzCreateBody(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"name":"a","tags":["x","x"]}`, `[]`, `{"name":null}`, "{\"name\":\"\xff\"}", `{"name":"a","content":1}`, `{"name":"\u0000"}`, `{`, ``} {
		f.Add(s)
	}
	s := New(WithKey(Key{Token: "k", Plan: PlanUnlimited}))
	f.Fuzz(func(t *testing.T, body string) {
		exchanges.bind(t, s) // the validating wrapper fails this input
		before := len(s.Snapshot().Contexts)
		req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		after := len(s.Snapshot().Contexts)
		switch rec.Code {
		case http.StatusCreated:
			if after != before+1 {
				t.Fatalf("201 but %d -> %d contexts", before, after)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if after != before {
				t.Fatalf("%d but the store changed", rec.Code)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzDecodeCursor checks that no string crashes cursor decoding, that
// only cursors the server made are accepted, and that they round-trip
// within their list and nowhere else.
func FuzzDecodeCursor(f *testing.F) {
	s := New()
	scope := httpapi.ListScope("acct", "ctx_1")
	f.Add(s.svc.Cursors.Encode(httpapi.CursorContexts, 42, scope), uint64(7), "acct")
	f.Add("", uint64(0), "")
	f.Add("AAAAAAAAAAAAAAAAAAAA", uint64(1<<63), "ctx_1")
	f.Fuzz(func(t *testing.T, c string, pos uint64, part string) {
		if p, ok := s.svc.Cursors.Decode(httpapi.CursorContexts, c, scope); ok && s.svc.Cursors.Encode(httpapi.CursorContexts, p, scope) != c {
			t.Fatalf("accepted %q, which the server would not make", c)
		}
		enc := s.svc.Cursors.Encode(httpapi.CursorVersions, pos, scope)
		if p, ok := s.svc.Cursors.Decode(httpapi.CursorVersions, enc, scope); !ok || p != pos {
			t.Fatalf("round trip of %d: %d %v", pos, p, ok)
		}
		if _, ok := s.svc.Cursors.Decode(httpapi.CursorContexts, enc, scope); ok {
			t.Fatal("a versions cursor passed as a contexts cursor")
		}
		if other := httpapi.ListScope("acct", "ctx_1", part); other != scope {
			if _, ok := s.svc.Cursors.Decode(httpapi.CursorVersions, enc, other); ok {
				t.Fatalf("a cursor of list %q passed in list %q", scope, other)
			}
		}
	})
}
