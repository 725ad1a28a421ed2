package chaos

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		want model.Chaos
		// text is String's SPEC for want.
		text string
	}{
		{"", model.Chaos{}, ""},
		{"  ", model.Chaos{}, ""},
		{"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1",
			model.Chaos{Seed: 42, Duplicate: 0.2, Reorder: 0.3, Delay: 2 * time.Second, APIError: 0.1},
			"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1"},
		{"api-error=0.3 , seed=7", model.Chaos{Seed: 7, APIError: 0.3}, "seed=7,api-error=0.3"},
		{"duplicate=1", model.Chaos{Duplicate: 1}, "duplicate=1,delay=2s"},
		{"reorder=.5,delay=1500ms", model.Chaos{Reorder: 0.5, Delay: 1500 * time.Millisecond}, "reorder=0.5,delay=1.5s"},
		{"delay=5m,reorder=0", model.Chaos{Delay: 5 * time.Minute}, ""},
		{"seed=9007199254740991", model.Chaos{Seed: model.MaxChaosSeed}, "seed=9007199254740991"},
		{"duplicate=1e-1", model.Chaos{Duplicate: 0.1}, "duplicate=0.1,delay=2s"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.spec, got, tc.want)
			}
			if s := got.String(); s != tc.text {
				t.Errorf("String() = %q, want %q", s, tc.text)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec, key, says string
	}{
		{"seed=0", "seed", "0 is no seed"},
		{"seed=-1", "seed", "not a whole number from 1 to 9007199254740991"},
		{"seed=9007199254740992", "seed", "not a whole number"},
		{"seed=4.2", "seed", "not a whole number"},
		{"duplicate=1.5", "duplicate", "not a probability from 0 to 1"},
		{"reorder=-0.1", "reorder", "not a probability"},
		{"api-error=NaN", "api-error", "not a probability"},
		{"api-error=Inf", "api-error", "not a probability"},
		{"api-error=lots", "api-error", `"lots" is not a probability`},
		{"delay=0", "delay", "0 holds nothing back"},
		{"delay=2", "delay", "not a duration such as 500ms"},
		{"delay=-1s", "delay", "not from 1ms to 5m0s"},
		{"delay=6m", "delay", "not from 1ms to 5m0s"},
		{"delay=1500us", "delay", "not a whole number of milliseconds"},
		{"seed=1,seed=2", "seed", "given twice"},
		{"api_error=0.1", "", `unknown key "api_error": the keys are seed, duplicate, reorder, delay and api-error`},
		{"duplicate", "", `"duplicate" has no value`},
		{"seed=1,,duplicate=0.2", "", "an empty item"},
		{"seed=1,", "", "an empty item"},
		{strings.Repeat("x", MaxSpec+1), "", "at most 1024 bytes"},
		{"unknown" + strings.Repeat("é", 100) + "=1", "", "…"},
	} {
		t.Run(tc.spec[:min(len(tc.spec), 30)], func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.spec)
			ce, ok := errors.AsType[*model.ChaosError](err)
			if !ok || !errors.Is(err, model.ErrInvalidChaos) {
				t.Fatalf("Parse(%q) = %v, want a *ChaosError matching ErrInvalidChaos", tc.spec, err)
			}
			if ce.Key != tc.key || !strings.Contains(ce.Message, tc.says) {
				t.Errorf("Parse(%q): key %q, %q; want key %q and %q", tc.spec, ce.Key, ce.Message, tc.key, tc.says)
			}
			if len(err.Error()) > 300 {
				t.Errorf("Parse(%q): a %d-byte error quotes too much: %s", tc.spec, len(err.Error()), err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c   model.Chaos
		key string
	}{
		{model.Chaos{}, ""},
		{model.Chaos{Seed: model.MaxChaosSeed, Duplicate: 1, Reorder: 0, Delay: model.MaxChaosDelay, APIError: 0.5}, ""},
		{model.Chaos{Seed: model.MaxChaosSeed + 1}, KeySeed},
		{model.Chaos{Duplicate: math.NaN()}, KeyDuplicate},
		{model.Chaos{Reorder: 2}, KeyReorder},
		{model.Chaos{APIError: -1}, KeyAPIError},
		{model.Chaos{Delay: -time.Second}, KeyDelay},
		{model.Chaos{Delay: time.Millisecond + 1}, KeyDelay},
	} {
		err := Check(tc.c)
		if tc.key == "" {
			if err != nil {
				t.Errorf("Check(%+v): %v", tc.c, err)
			}
			continue
		}
		if ce, ok := errors.AsType[*model.ChaosError](err); !ok || ce.Key != tc.key {
			t.Errorf("Check(%+v) = %v, want an error about %s", tc.c, err, tc.key)
		}
	}
}

// FuzzParse: a SPEC is read or refused with a *ChaosError, never a panic;
// it is read exactly when the grammar (SpecPattern, SpecNotPattern,
// MaxSpec) has it; what is read passes Check, and its String reads back to
// it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1", "", "seed=0", "delay=1h", "a=b=c",
		"duplicate=0x1p-2", "seed=+5", "reorder=1e-300,delay=1ms", " seed = 3 ", "api-error=0.30000000000000004",
		"NUL", "seed=1,seed=2", "\tdelay =\v1m30.5s ,\n", "seed=9007199254740991", "seed=9007199254740992", "duplicate=1.0000000000000001",
		"reorder=9.99e-1", "reorder=10e-1", "delay=300000ms", "delay=300.001s", "delay=0.0005s", "delay=5m0.000s", "seed=1\u00a0"} {
		f.Add(s)
	}
	for _, tc := range grammarCases {
		f.Add(tc.spec)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := Parse(spec)
		if (err == nil) != inGrammar(spec) {
			t.Fatalf("Parse(%q): %v, but the grammar has it: %v", spec, err, inGrammar(spec))
		}
		if err != nil {
			if _, ok := errors.AsType[*model.ChaosError](err); !ok {
				t.Fatalf("Parse(%q): %v is no *ChaosError", spec, err)
			}
			return
		}
		if err := Check(c); err != nil {
			t.Fatalf("Parse(%q) = %+v, which Check refuses: %v", spec, c, err)
		}
		back, err := Parse(c.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not read back: %v", spec, c.String(), err)
		}
		// String leaves out a delay nothing uses, and writes the default
		// one when something does.
		norm := func(c model.Chaos) model.Chaos {
			switch {
			case c.Duplicate == 0 && c.Reorder == 0:
				c.Delay = 0
			case c.Delay == 0:
				c.Delay = model.DefaultChaosDelay
			}
			return c
		}
		if norm(back) != norm(c) {
			t.Fatalf("Parse(%q) = %+v, read back from %q as %+v", spec, c, c.String(), back)
		}
	})
}
