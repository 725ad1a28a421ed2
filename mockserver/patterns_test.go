package mockserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
)

// TestDocumentPatternsAreTheServers checks that the patterns openapi.yaml
// gives are the very ones the server matches, so the two cannot drift.
func TestDocumentPatternsAreTheServers(t *testing.T) {
	t.Parallel()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"WebhookURL":    rules.WebhookURLPattern,
		"MockDuration":  adminapi.DurationPattern,
		"MockEventType": rules.EventTypePattern,
		"Timestamp":     state.TimestampPattern,
		"ContextID":     state.ContextIDPattern,
		"UserID":        state.UserIDPattern,
		"EventID":       state.EventIDPattern,
		"AccountID":     rules.AccountPattern,
		"MockChaosSpec": chaos.SpecPattern,
	} {
		if got := doc.Components.Schemas[name].Value.Pattern; got != want {
			t.Errorf("%s: the document's pattern\n%s\nis not the server's\n%s", name, got, want)
		}
	}
	if got := doc.Components.Schemas["MockChaosSpec"].Value.Not.Value.Pattern; got != chaos.SpecNotPattern {
		t.Errorf("MockChaosSpec: the document's not pattern\n%s\nis not the server's\n%s", got, chaos.SpecNotPattern)
	}
	// The state document's own patterns.
	for _, p := range []struct{ schema, property, want string }{
		{"MockState", "cursorSalt", state.SaltPattern},
		{"MockStateWebhook", "id", state.WebhookIDPattern},
		{"MockStateDelivery", "id", state.DeliveryIDPattern},
		{"MockStateDelivery", "webhookId", state.WebhookIDPattern},
	} {
		if got := doc.Components.Schemas[p.schema].Value.Properties[p.property].Value.Pattern; got != p.want {
			t.Errorf("%s.%s: the document's pattern\n%s\nis not the server's\n%s", p.schema, p.property, got, p.want)
		}
	}
}

// genString appends to b a random string that re matches, preferring
// printable ASCII in wide character classes and never a surrogate, with
// unbounded repeats kept short.
func genString(b *strings.Builder, re *syntax.Regexp, r *rand.Rand) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.SimpleFold(c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		b.WriteRune(pickRune(re.Rune, r))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(rune(' ' + r.IntN(95)))
	case syntax.OpCapture:
		genString(b, re.Sub[0], r)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genString(b, s, r)
		}
	case syntax.OpAlternate:
		genString(b, re.Sub[r.IntN(len(re.Sub))], r)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, 6
		case syntax.OpPlus:
			lo, hi = 1, 6
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			hi = lo + 6
		}
		for range lo + r.IntN(hi-lo+1) {
			genString(b, re.Sub[0], r)
		}
	}
}

// pickRune picks a rune of the class ranges (pairs lo, hi).
func pickRune(ranges []rune, r *rand.Rand) rune {
	// Mostly printable ASCII when the class has some, else anything.
	if r.IntN(5) > 0 {
		var ascii []rune
		for i := 0; i < len(ranges); i += 2 {
			for c := max(ranges[i], ' '); c <= min(ranges[i+1], '~'); c++ {
				ascii = append(ascii, c)
			}
		}
		if len(ascii) > 0 {
			return ascii[r.IntN(len(ascii))]
		}
	}
	for {
		i := 2 * r.IntN(len(ranges)/2)
		lo, hi := ranges[i], min(ranges[i+1], 0x2FFFF)
		if lo > hi {
			continue
		}
		c := lo + rune(r.Int64N(int64(hi-lo+1)))
		if utf8.ValidRune(c) {
			return c
		}
	}
}

// genMatching returns a random string matching pattern (a Go regexp).
func genMatching(t testing.TB, pattern string, r *rand.Rand) string {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	genString(&b, re, r)
	return b.String()
}

// FuzzWebhookURL checks that every url the pattern admits (made from the
// pattern, or given by the fuzzer) is one url.Parse reads with a host, and
// that an http one names a loopback host: the server's url.Parse and
// loopback checks never refuse what the document allows.
func FuzzWebhookURL(f *testing.F) {
	for _, s := range []string{"https://example.com/h", "http://127.0.0.1:8080/x?y#z", "http://[::1]/", "https://u:p@h/%41", "https://h:/", "http://localhost"} {
		f.Add(s, uint64(0))
	}
	f.Add("", uint64(1))
	f.Add("", uint64(2))
	s := New()
	f.Fuzz(func(t *testing.T, raw string, seed uint64) {
		if seed != 0 {
			raw = genMatching(t, rules.WebhookURLPattern, rand.New(rand.NewPCG(seed, seed)))
			if !rules.WebhookURLRegexp.MatchString(raw) {
				t.Fatalf("made %q from the pattern, which does not match it", raw)
			}
		}
		if !rules.WebhookURLRegexp.MatchString(raw) || len(raw) > rules.MaxURLLen {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || !u.IsAbs() {
			t.Fatalf("the pattern admits %q, which url.Parse reads as %v, %v", raw, u, err)
		}
		if strings.EqualFold(u.Scheme, "http") && !rules.IsLoopback(u.Hostname()) {
			t.Fatalf("the pattern admits http to %q, not a loopback host", u.Hostname())
		}
		if e := rules.WebhookURL(raw, s.svc.HTTPSOnly); e != nil {
			t.Fatalf("the server refuses %q, which the pattern admits: %s", raw, e.Message)
		}
	})
}

// FuzzDurationPattern checks that every duration the pattern admits is
// one time.ParseDuration reads, without overflow and not negative, and
// that event types match their pattern exactly when validEventType takes
// them.
func FuzzDurationPattern(f *testing.F) {
	for _, s := range []string{"0", "90s", "1h30m", "1.5h", "7µs", "999999h", "-1s", "1h1h"} {
		f.Add(s, uint64(0))
	}
	f.Add("", uint64(1))
	f.Add("", uint64(2))
	events := regexp.MustCompile(rules.EventTypePattern)
	durationRegexp := regexp.MustCompile(adminapi.DurationPattern) // the admin API's
	f.Fuzz(func(t *testing.T, raw string, seed uint64) {
		if seed != 0 {
			raw = genMatching(t, adminapi.DurationPattern, rand.New(rand.NewPCG(seed, 1)))
		}
		if (service.ValidEventType(raw) == nil) != events.MatchString(raw) {
			t.Fatalf("event type %q: validEventType and the pattern disagree", raw)
		}
		// The document's minLength 1 keeps "" out (the server refuses it).
		if raw == "" || !durationRegexp.MatchString(raw) {
			return
		}
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 {
			t.Fatalf("the pattern admits %q, which ParseDuration reads as %v, %v", raw, d, err)
		}
	})
}

// FuzzAccountPattern checks that ValidAccount takes exactly the names the
// document's AccountID pattern admits.
func FuzzAccountPattern(f *testing.F) {
	for _, s := range []string{"default", "acme", "Team_2.eu-west", "", "a b", "acme/eu", "café", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n"} {
		f.Add(s)
	}
	accounts := regexp.MustCompile(rules.AccountPattern)
	f.Fuzz(func(t *testing.T, name string) {
		if (ValidAccount(name) == nil) != accounts.MatchString(name) {
			t.Fatalf("account %q: ValidAccount and the pattern disagree", name)
		}
	})
}

// FuzzChaosSpecPattern holds the document's MockChaosSpec (its pattern
// and not pattern, compiled from the document) and PUT /_mock/chaos to the
// same SPECs, made from the pattern or given by the fuzzer: one the
// document allows is set (200), one it forbids is a 400 naming spec.
func FuzzChaosSpecPattern(f *testing.F) {
	for _, s := range []string{"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1", "", " ", "NUL", "seed=1,seed=2",
		"delay=4m59.999s", "delay=300001ms", "duplicate=1e-05", "duplicate=50e-2", "seed=9007199254740992", "seed=1\u00a0",
		"seed=1\t", "seed=1\n", "seed=1" + strings.Repeat(" ", 17), strings.Repeat(" ", 17), "seed=" + strings.Repeat("0", 1020) + "1"} {
		f.Add(s, uint64(0))
	}
	for i := range uint64(4) {
		f.Add("", i+1)
	}
	doc, err := spec()
	if err != nil {
		f.Fatal(err)
	}
	schema := doc.Components.Schemas["MockChaosSpec"].Value
	allowed := regexp.MustCompile(schema.Pattern)
	forbidden := regexp.MustCompile(schema.Not.Value.Pattern)
	s := New()
	f.Fuzz(func(t *testing.T, raw string, seed uint64) {
		if seed != 0 {
			raw = genMatching(t, schema.Pattern, rand.New(rand.NewPCG(seed, 3)))
			if !allowed.MatchString(raw) {
				t.Fatalf("made %q from the pattern, which does not match it", raw)
			}
		}
		body, _ := json.Marshal(map[string]string{"spec": raw})
		var sent struct{ Spec string }
		_ = json.Unmarshal(body, &sent) // as the server reads it: invalid UTF-8 is U+FFFD
		documented := allowed.MatchString(sent.Spec) && !forbidden.MatchString(sent.Spec)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptestRequest("PUT", "/_mock/chaos", string(body), "-"))
		switch {
		case documented && rec.Code != http.StatusOK:
			t.Fatalf("spec %q, which the document allows: %d %s", sent.Spec, rec.Code, rec.Body)
		case !documented && (rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"param":"spec"`)):
			t.Fatalf("spec %q, which the document forbids: %d %s, want a 400 naming spec", sent.Spec, rec.Code, rec.Body)
		}
	})
}

// TestRequestPatternsReadAlikeInPython checks each pattern a request
// body's field is held to, as Python's re reads it: its $ also matches
// before a final newline, so a tool built on it (schemathesis, through
// hypothesis) takes "v\n" for any v the pattern matches. Where the server
// refuses that, the schema must refuse it too (a not pattern that matches
// the newline), or such a tool sends it as a valid request. Parameters are
// left out: kin-openapi, which holds requests to the document (the
// validating proxy, these tests), cannot decode a parameter whose schema
// has a not, so a query parameter's pattern keeps that one difference.
func TestRequestPatternsReadAlikeInPython(t *testing.T) {
	t.Parallel()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{} // a schema, and the not patterns beside it
	// nots are the not patterns that hold beside s: its own, and those of
	// the schemas it is in the allOf of.
	var check func(where string, s *openapi3.Schema, nots []string)
	check = func(where string, s *openapi3.Schema, nots []string) {
		key := fmt.Sprintf("%p %q", s, nots)
		if s == nil || seen[key] {
			return
		}
		seen[key] = true
		if s.Not != nil && s.Not.Value.Pattern != "" {
			nots = append(slices.Clip(nots), s.Not.Value.Pattern)
		}
		if p := s.Pattern; strings.HasSuffix(p, "$") && !strings.HasSuffix(p, `\$`) {
			re := regexp.MustCompile(goRegexp(p))
			refused := func(v string) bool {
				for _, n := range nots {
					if regexp.MustCompile(goRegexp(n)).MatchString(v) {
						return true
					}
				}
				return s.MaxLength != nil && uint64(utf8.RuneCountInString(v)) > *s.MaxLength
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				if v := genMatchingPattern(p, r) + "\n"; !re.MatchString(v) && !refused(v) {
					t.Errorf("%s: Python's re reads the pattern %.60s… as matching %q, which the server refuses", where, p, v)
					break
				}
			}
		}
		for name, p := range s.Properties {
			check(where+"."+name, p.Value, nil)
		}
		for _, sub := range s.AllOf {
			check(where, sub.Value, nots)
		}
		for _, sub := range slices.Concat(s.AnyOf, s.OneOf) {
			check(where, sub.Value, nil)
		}
		if s.Items != nil {
			check(where+"[]", s.Items.Value, nil)
		}
		if s.AdditionalProperties.Schema != nil {
			check(where+".*", s.AdditionalProperties.Schema.Value, nil)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Value.Content {
					check(method+" "+path+" body", mt.Schema.Value, nil)
				}
			}
		}
	}
}
