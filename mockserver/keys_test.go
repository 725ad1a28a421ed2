package mockserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec    string
		want    Key
		wantErr bool
	}{
		{spec: "sk_1", want: Key{Token: "sk_1", Plan: PlanPro, Scope: ScopeWrite}},
		{spec: "sk_1:free", want: Key{Token: "sk_1", Plan: PlanFree, Scope: ScopeWrite}},
		{spec: "sk_1:business:read", want: Key{Token: "sk_1", Plan: PlanBusiness, Scope: ScopeRead}},
		{spec: "sk_1:unlimited:write", want: Key{Token: "sk_1", Plan: PlanUnlimited, Scope: ScopeWrite}},
		{spec: "sk_1:enterprise=5000/200", want: Key{Token: "sk_1", Plan: PlanEnterprise, Scope: ScopeWrite, PerMinute: 5000, Burst: 200}},
		{spec: "", wantErr: true},
		{spec: ":pro", wantErr: true},
		{spec: "k:gold", wantErr: true},
		{spec: "k:enterprise", wantErr: true},
		{spec: "k:enterprise=0/5", wantErr: true},
		{spec: "k:enterprise=10/x", wantErr: true},
		{spec: "k:pro:admin", wantErr: true},
		{spec: "k:pro:read:extra", wantErr: true},
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

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"k", "k:pro", "k:enterprise=1/1:read", "::", "k:enterprise=/", "k:free:write"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, err := ParseKey(spec)
		if err != nil {
			return
		}
		// A parsed key is usable by New.
		k.User, k.Account = "user_fuzz", "acct_fuzz"
		if err := k.validate(); err != nil {
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
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted %v", bad)
				}
			}()
			var opts []Option
			for _, k := range bad {
				opts = append(opts, WithKey(k))
			}
			New(opts...)
		}()
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
// only cursors the server made are accepted, and that they round-trip.
func FuzzDecodeCursor(f *testing.F) {
	s := New()
	f.Add(s.encodeCursor(cursorContexts, 42), uint64(7))
	f.Add("", uint64(0))
	f.Add("AAAAAAAAAAAAAAAAAAAA", uint64(1<<63))
	f.Fuzz(func(t *testing.T, c string, pos uint64) {
		if p, ok := s.decodeCursor(cursorContexts, c); ok && s.encodeCursor(cursorContexts, p) != c {
			t.Fatalf("accepted %q, which the server would not make", c)
		}
		enc := s.encodeCursor(cursorVersions, pos)
		if p, ok := s.decodeCursor(cursorVersions, enc); !ok || p != pos {
			t.Fatalf("round trip of %d: %d %v", pos, p, ok)
		}
		if _, ok := s.decodeCursor(cursorContexts, enc); ok {
			t.Fatal("a versions cursor passed as a contexts cursor")
		}
	})
}
