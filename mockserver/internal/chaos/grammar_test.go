package chaos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

var (
	specRegexp   = regexp.MustCompile(SpecPattern)
	repeatRegexp = regexp.MustCompile(SpecNotPattern)
)

// inGrammar reports whether the grammar has spec: what openapi.yaml
// allows of a SPEC.
func inGrammar(spec string) bool {
	return len(spec) <= MaxSpec && specRegexp.MatchString(spec) && !repeatRegexp.MatchString(spec)
}

// grammarCases are SPECs and whether Parse reads them, at the edges of
// each rule.
var grammarCases = []struct {
	spec string
	ok   bool
}{
	{"", true},
	{"     ", true},
	{"\t", false}, // the space alone: the admin API refuses control characters
	{"seed=1\t", false},
	{"\vseed=1", false},
	{"seed=\f1", false},
	{"seed\r=1", false},
	{"\n", false}, // no newline: Python's $ matches before a final one
	{"seed=1\n", false},
	{"\nseed=1", false},
	{"seed=1,\nreorder=0", false},
	{"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1", true},
	{"api-error=0.3 , seed=7", true},
	{" seed = 3 ", true},
	{" delay = 1m30s , reorder = 1 ", true},
	{"NUL", false},
	{"seed", false},
	{"seed=", false},
	{"=1", false},
	{",", false},
	{"seed=1,", false},
	{",seed=1", false},
	{"seed=1,,reorder=0", false},
	{"Seed=1", false},
	{"api_error=0.1", false},
	{"seed=1\u00a0", false}, // white space beyond ASCII
	{"\u2003seed=1", false},
	{"seed=1\x00", false},
	{"seed=1=2", false},
	{"seed=1;reorder=0", false},
	// Up to 16 white-space characters in a row.
	{strings.Repeat(" ", 16), true},
	{strings.Repeat(" ", 17), false},
	{strings.Repeat(" ", 16) + "seed" + strings.Repeat(" ", 16) + "=" + strings.Repeat(" ", 16) + "1" + strings.Repeat(" ", 16) + "," +
		strings.Repeat(" ", 16) + "reorder=0" + strings.Repeat(" ", 16), true},
	{strings.Repeat(" ", 17) + "seed=1", false},
	{"seed=1" + strings.Repeat(" ", 17), false},
	{"seed" + strings.Repeat(" ", 17) + "=1", false},
	{"seed=" + strings.Repeat(" ", 17) + "1", false},
	{"seed=1" + strings.Repeat(" ", 17) + ",reorder=0", false},
	{"seed=1," + strings.Repeat(" ", 17) + "reorder=0", false},
	{"seed=1" + strings.Repeat(" ", 16) + "," + strings.Repeat(" ", 16) + "reorder=0", true},
	// A key at most once, in any order.
	{"seed=1,seed=1", false},
	{"duplicate=0.1,reorder=0.2,duplicate=0.1", false},
	{"delay=1s , api-error=0.1,delay = 1s", false},
	{"api-error=0,reorder=0,duplicate=0,delay=1ms,seed=1", true},
	// seed: 1 to 2^53-1.
	{"seed=1", true},
	{"seed=0", false},
	{"seed=0000", false},
	{"seed=007", true},
	{"seed=9007199254740991", true},
	{"seed=" + strings.Repeat("0", 16) + "9007199254740991", true},
	{"seed=" + strings.Repeat("0", 17) + "1", false},
	{"seed=09007199254740991", true},
	{"seed=9007199254740992", false},
	{"seed=9999999999999999", false},
	{"seed=10000000000000000", false},
	{"seed=+5", false},
	{"seed=-5", false},
	{"seed=4.2", false},
	{"seed=1e3", false},
	{"seed=0x10", false},
	{"seed=1_000", false},
	// Probabilities: 0 to 1, as decimals or with a negative exponent.
	{"duplicate=0", true},
	{"duplicate=00", true},
	{"duplicate=0.", true},
	{"duplicate=.5", true},
	{"duplicate=0.25", true},
	{"duplicate=1", true},
	{"duplicate=1.", true},
	{"duplicate=1.000", true},
	{"duplicate=01", true},
	{"duplicate=0.99999999999999999999", true},
	{"duplicate=1e-1", true},
	{"duplicate=5.e-3", true},
	{"duplicate=.5E-1", true},
	{"duplicate=9.999e-0001", true},
	{"duplicate=4.9e-324", true},
	{"duplicate=1e-400", true}, // 0, as ParseFloat reads it
	{"duplicate=1e-9999", true},
	{"duplicate=1e-000000009999", true},
	{"duplicate=1e-10000", false},
	{"duplicate=1e-0000000001", false},
	{"duplicate=0." + strings.Repeat("3", 32), true},
	{"duplicate=0." + strings.Repeat("3", 33), false},
	{"duplicate=" + strings.Repeat("0", 16) + "." + strings.Repeat("3", 32), true},
	{"duplicate=" + strings.Repeat("0", 17) + ".5", false},
	{"duplicate=" + strings.Repeat("0", 16) + "1." + strings.Repeat("0", 32), true},
	{"duplicate=1." + strings.Repeat("0", 33), false},
	{"duplicate=5." + strings.Repeat("5", 32) + "e-1", true},
	{"duplicate=5." + strings.Repeat("5", 33) + "e-1", false},
	{"duplicate=1.0000000000000001", false},
	{"duplicate=1.5", false},
	{"duplicate=2", false},
	{"duplicate=.", false},
	{"duplicate=-0", false},
	{"duplicate=+0.5", false},
	{"duplicate=1e-0", false},
	{"duplicate=1e0", false},
	{"duplicate=50e-2", false},
	{"duplicate=1e+1", false},
	{"duplicate=0x1p-2", false},
	{"duplicate=0_5", false},
	{"duplicate=NaN", false},
	{"duplicate=inf", false},
	// delay: whole milliseconds from 1 ms to 5 min.
	{"delay=1ms", true},
	{"delay=999ms", true},
	{"delay=1500ms", true},
	{"delay=300000ms", true},
	{"delay=300001ms", false},
	{"delay=0ms", false},
	{"delay=0500ms", false},
	{"delay=1.5ms", false},
	{"delay=0.001s", true},
	{"delay=.001s", true},
	{"delay=0.0010s", true},
	{"delay=0.0005s", false},
	{"delay=0.s", false},
	{"delay=0s", false},
	{"delay=1.s", true},
	{"delay=1.5s", true},
	{"delay=59.999s", true},
	{"delay=299.999000s", true},
	{"delay=300s", true},
	{"delay=300.000s", true},
	{"delay=300." + strings.Repeat("0", 16) + "s", true},
	{"delay=300." + strings.Repeat("0", 17) + "s", false},
	{"delay=1.5" + strings.Repeat("0", 18) + "s", true},
	{"delay=1.5" + strings.Repeat("0", 19) + "s", false},
	{"delay=300.001s", false},
	{"delay=301s", false},
	{"delay=1m", true},
	{"delay=5m", true},
	{"delay=6m", false},
	{"delay=0m", false},
	{"delay=1m0s", true},
	{"delay=1m30.5s", true},
	{"delay=4m59.999s", true},
	{"delay=4m60s", false},
	{"delay=1m05s", false},
	{"delay=5m0s", true},
	{"delay=5m0.000s", true},
	{"delay=5m0.001s", false},
	{"delay=1h", false},
	{"delay=0h1m", false},
	{"delay=1s500ms", false},
	{"delay=1000000us", false},
	{"delay=1000000000ns", false},
	{"delay=0.5m", false},
	{"delay=+2s", false},
	{"delay=2", false},
}

// TestGrammarIsParse holds the grammar and Parse to the same SPECs on
// grammarCases.
func TestGrammarIsParse(t *testing.T) {
	t.Parallel()
	for _, tc := range grammarCases {
		_, err := Parse(tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("Parse(%q): %v, want read: %v", tc.spec, err, tc.ok)
		}
		if inGrammar(tc.spec) != tc.ok {
			t.Errorf("the grammar has %q: %v, want %v", tc.spec, inGrammar(tc.spec), tc.ok)
		}
	}
}

// TestGrammarIsBounded checks that no SPEC SpecPattern matches is longer
// than MaxSpec bytes, so that the document needs no maxLength.
func TestGrammarIsBounded(t *testing.T) {
	t.Parallel()
	re, err := syntax.Parse(SpecPattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := longest(re)
	if !ok || n > MaxSpec {
		t.Fatalf("SpecPattern matches SPECs of up to %d bytes (bounded: %v), more than MaxSpec (%d)", n, ok, MaxSpec)
	}
	t.Logf("the longest SPEC is %d bytes", n)
}

// longest returns the length in bytes of the longest string re matches,
// and false when there is none.
func longest(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return 0, true
	case syntax.OpLiteral:
		return len(string(re.Rune)), true
	case syntax.OpCharClass:
		return utf8.RuneLen(re.Rune[len(re.Rune)-1]), true
	case syntax.OpCapture:
		return longest(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n, ok := longest(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total, true
	case syntax.OpQuest, syntax.OpRepeat:
		n, ok := longest(re.Sub[0])
		if re.Op == syntax.OpQuest {
			return n, ok
		}
		return n * re.Max, ok && re.Max >= 0
	}
	return 0, false // a star, a plus, any character
}

// TestGrammarSeedEdges tries each digit of MaxChaosSeed one up and one
// down, and numbers of every length, where a range written digit by digit
// would go wrong.
func TestGrammarSeedEdges(t *testing.T) {
	t.Parallel()
	max := strconv.FormatUint(model.MaxChaosSeed, 10)
	var seeds []string
	for i := range len(max) {
		for _, d := range []int{-1, 1} {
			c := int(max[i]-'0') + d
			if c < 0 || c > 9 || (i == 0 && c == 0) {
				continue
			}
			seeds = append(seeds, max[:i]+strconv.Itoa(c)+max[i+1:])
		}
	}
	for n := 1; n <= 17; n++ {
		seeds = append(seeds, strings.Repeat("9", n), "1"+strings.Repeat("0", n-1))
	}
	for _, s := range seeds {
		n, err := strconv.ParseUint(s, 10, 64)
		want := err == nil && n >= 1 && n <= model.MaxChaosSeed
		if got := valueRegexps[KeySeed].MatchString(s); got != want {
			t.Errorf("seed %s: the grammar has it: %v, want %v", s, got, want)
		}
		if _, err := Parse("seed=" + s); (err == nil) != want {
			t.Errorf("Parse(seed=%s): %v", s, err)
		}
	}
}

// TestGrammarHasWhatStringWrites checks that every delay and a spread of
// probabilities, as String writes them, are in the grammar: what GET
// /_mock/chaos answers can be PUT back.
func TestGrammarHasWhatStringWrites(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for d := time.Millisecond; d <= model.MaxChaosDelay; d += time.Duration(1+r.IntN(293)) * time.Millisecond {
		for _, s := range []string{d.String(), strconv.FormatInt(d.Milliseconds(), 10) + "ms"} {
			if !valueRegexps[KeyDelay].MatchString(s) {
				t.Fatalf("delay=%s is not in the grammar", s)
			}
		}
	}
	if s := model.MaxChaosDelay.String(); !valueRegexps[KeyDelay].MatchString(s) {
		t.Fatalf("delay=%s is not in the grammar", s)
	}
	for range 2000 {
		p := r.Float64() * math.Pow(10, -float64(r.IntN(330)))
		c := model.Chaos{Seed: 1 + r.Uint64N(model.MaxChaosSeed), Duplicate: p, Reorder: 1 - p, APIError: math.Nextafter(1, 0),
			Delay: time.Duration(1+r.Int64N(int64(model.MaxChaosDelay/time.Millisecond))) * time.Millisecond}
		if s := c.String(); !inGrammar(s) {
			t.Fatalf("%q, which String wrote, is not in the grammar", s)
		}
	}
}

// FuzzGrammar builds SPECs from keys and values written in every way
// ParseUint, ParseFloat and ParseDuration read, near each range's edges,
// and holds the grammar and Parse to the same verdict on each.
func FuzzGrammar(f *testing.F) {
	for i := range uint64(8) {
		f.Add(i)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed>>32))
		for range 200 {
			spec := randomSpec(r)
			_, err := Parse(spec)
			if (err == nil) != inGrammar(spec) {
				t.Fatalf("Parse(%q): %v, but the grammar has it: %v", spec, err, inGrammar(spec))
			}
		}
	})
}

var keys = []string{KeySeed, KeyDuplicate, KeyReorder, KeyDelay, KeyAPIError}

func randomSpec(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(randomSpace(r))
	for i := range r.IntN(7) {
		if i > 0 {
			b.WriteString(randomSpace(r) + "," + randomSpace(r))
		}
		key := keys[r.IntN(len(keys))]
		if r.IntN(30) == 0 {
			key = strings.ToUpper(key)
		}
		b.WriteString(key + randomSpace(r) + "=" + randomSpace(r))
		switch strings.ToLower(key) {
		case KeySeed:
			b.WriteString(randomSeed(r))
		case KeyDelay:
			b.WriteString(randomDelay(r))
		default:
			b.WriteString(randomProbability(r))
		}
	}
	b.WriteString(randomSpace(r))
	return b.String()
}

func randomSpace(r *rand.Rand) string {
	if r.IntN(3) > 0 {
		return ""
	}
	n := 1 + r.IntN(3)
	if r.IntN(4) == 0 {
		n = 14 + r.IntN(5) // about MaxSpaceRun
	}
	b := []rune(strings.Repeat(" ", n))
	if r.IntN(10) == 0 {
		others := []rune("\t\v\f\r\n\u00a0\u0085\u3000")
		b[r.IntN(n)] = others[r.IntN(len(others))]
	}
	return string(b)
}

func randomSeed(r *rand.Rand) string {
	var n uint64
	switch r.IntN(4) {
	case 0:
		n = model.MaxChaosSeed - 5 + r.Uint64N(10)
	case 1:
		n = r.Uint64N(20)
	default:
		n = r.Uint64() >> r.IntN(64)
	}
	s := strconv.FormatUint(n, 10)
	switch r.IntN(10) {
	case 0:
		s = "0" + s
	case 1:
		s = "+" + s
	case 2:
		s = strconv.FormatFloat(float64(n), 'g', -1, 64)
	}
	return s
}

func randomProbability(r *rand.Rand) string {
	var p float64
	switch r.IntN(5) {
	case 0:
		p = 1 + (r.Float64()-0.5)*math.Pow(10, -float64(r.IntN(18)))
	case 1:
		p = float64(r.IntN(3))
	case 2:
		p = r.Float64() * math.Pow(10, -float64(r.IntN(330)))
	default:
		p = r.Float64()*1.4 - 0.2
	}
	formats := []byte{'g', 'e', 'E', 'f', 'x', 'b'}
	s := strconv.FormatFloat(p, formats[r.IntN(len(formats))], r.IntN(22)-1, 64)
	switch r.IntN(12) {
	case 0:
		s = "0" + s
	case 1:
		s = strings.TrimPrefix(s, "0")
	case 2:
		s = "+" + s
	case 3:
		s = strings.Replace(s, ".", "._", 1)
	case 4:
		s += "0"
	case 5:
		s = []string{"NaN", "Inf", "-0", ".", "1.", "0.", "1e-0", "10e-1", "0x1p-1", "0e5"}[r.IntN(10)]
	}
	return s
}

func randomDelay(r *rand.Rand) string {
	units := []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second}
	d := time.Duration(r.Int64N(int64(model.MaxChaosDelay/units[r.IntN(4)])+2)) * units[r.IntN(4)]
	if r.IntN(8) == 0 {
		d = model.MaxChaosDelay + time.Duration(r.IntN(3)-1)*time.Millisecond
	}
	if r.IntN(20) == 0 {
		d = -d
	}
	switch r.IntN(6) {
	case 0, 1:
		return d.String()
	case 2:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case 3:
		return strconv.FormatFloat(d.Seconds(), 'f', r.IntN(10)-1, 64) + "s"
	case 4:
		return fmt.Sprintf("%dm%gs", int(d.Minutes()), (d % time.Minute).Seconds())
	}
	us := []string{"ns", "us", "µs", "ms", "s", "m", "h"}
	return strconv.FormatFloat(float64(d)/float64(unitOf(us[r.IntN(len(us))])), 'f', r.IntN(6)-1, 64) + us[r.IntN(len(us))]
}

func unitOf(u string) time.Duration {
	d, _ := time.ParseDuration("1" + u)
	return d
}
