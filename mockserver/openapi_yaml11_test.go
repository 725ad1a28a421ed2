package mockserver

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml "github.com/oasdiff/yaml3"
)

// openapi.yaml is read by two kinds of YAML parser: the server's
// (kin-openapi, on go-yaml v3, close to YAML 1.2's core schema) and the
// YAML 1.1 ones most tools use (PyYAML, and so schemathesis, and others).
// A plain scalar such as on, no, 0755 or 1:30 means a string, a number or
// a boolean depending on which one reads it; quoted, it is the same string
// in both. These tests hold every plain scalar of the document, key or
// value, to the same reading in both.

// yaml11 is YAML 1.1's reading of a plain scalar (its bool, null, int,
// float and timestamp types, and merge and value keys), as PyYAML's
// resolver has it, with y, Y, n and N as booleans too (the 1.1 spec has
// them; PyYAML leaves them out).
var yaml11 = []struct {
	tag string
	re  *regexp.Regexp
}{
	{"bool", regexp.MustCompile(`^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
	{"null", regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)},
	{"int", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
	{"float", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)},
	{"timestamp", regexp.MustCompile(`^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$`)},
	{"merge", regexp.MustCompile(`^<<$`)},
	{"value", regexp.MustCompile(`^=$`)},
}

// readYAML11 returns the value YAML 1.1 reads a plain scalar as: a bool,
// nil, a *big.Int, a float64, a string (the timestamp, merge and value
// types, which the server reads otherwise, as their tag) or, for a
// string, the scalar itself.
func readYAML11(s string) any {
	for _, t := range yaml11 {
		if !t.re.MatchString(s) {
			continue
		}
		switch t.tag {
		case "bool":
			switch strings.ToLower(s) {
			case "y", "yes", "true", "on":
				return true
			}
			return false
		case "null":
			return nil
		case "int":
			return yaml11Int(s)
		case "float":
			return yaml11Float(s)
		default:
			return "!!" + t.tag
		}
	}
	return s
}

func yaml11Int(s string) *big.Int {
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg, s = s[0] == '-', s[1:]
	}
	n := new(big.Int)
	switch {
	case strings.Contains(s, ":"): // sexagesimal: 1:30 is 90
		for part := range strings.SplitSeq(s, ":") {
			d, _ := strconv.ParseInt(part, 10, 64)
			n.Mul(n, big.NewInt(60)).Add(n, big.NewInt(d))
		}
	case strings.HasPrefix(s, "0b"):
		n.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		n.SetString(s[2:], 16)
	case len(s) > 1 && s[0] == '0': // 0755 is octal
		n.SetString(s[1:], 8)
	default:
		n.SetString(s, 10)
	}
	if neg {
		n.Neg(n)
	}
	return n
}

func yaml11Float(s string) float64 {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if s[0] == '-' {
		sign = -1
	}
	s = strings.TrimLeft(s, "+-")
	switch {
	case s == ".inf":
		return sign * math.Inf(1)
	case s == ".nan":
		return math.NaN()
	case strings.Contains(s, ":"): // sexagesimal: 1:30.5 is 90.5
		v := 0.0
		for part := range strings.SplitSeq(s, ":") {
			d, _ := strconv.ParseFloat(part, 64)
			v = v*60 + d
		}
		return sign * v
	}
	v, _ := strconv.ParseFloat(s, 64)
	return sign * v
}

// readServer returns the value the server's loader reads a plain scalar
// node as, in readYAML11's terms: go-yaml v3's, with timestamps left as
// strings (kin-openapi turns them off).
func readServer(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case time.Time:
		return n.Value, nil
	case int:
		return big.NewInt(int64(v)), nil
	case int64:
		return big.NewInt(v), nil
	case uint64:
		return new(big.Int).SetUint64(v), nil
	}
	if n.Tag == "!!merge" {
		return "!!merge", nil
	}
	return v, nil
}

// sameReading reports whether a and b, from readYAML11 and readServer,
// are the same value of the same type.
func sameReading(a, b any) bool {
	switch a := a.(type) {
	case *big.Int:
		b, ok := b.(*big.Int)
		return ok && a.Cmp(b) == 0
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || math.IsNaN(a) && math.IsNaN(b))
	}
	return reflect.DeepEqual(a, b)
}

// yaml11Differences lists the plain scalars of the YAML document doc that
// YAML 1.1 reads otherwise than the server does, with their lines.
func yaml11Differences(doc []byte) ([]string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	var diffs []string
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		const notPlain = yaml.TaggedStyle | yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
		if n.Kind != yaml.ScalarNode || n.Style&notPlain != 0 {
			return nil
		}
		server, err := readServer(n)
		if err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		if old := readYAML11(n.Value); !sameReading(old, server) {
			diffs = append(diffs, fmt.Sprintf("line %d: %s is %s to YAML 1.1, %s to the server (quote it)",
				n.Line, n.Value, describe(old), describe(server)))
		}
		return nil
	}
	return diffs, walk(&root)
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if strings.HasPrefix(v, "!!") {
			return "a " + v[2:]
		}
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%T %v", v, v)
}

// TestDocumentReadsTheSameInYAML11 parses openapi.yaml as YAML 1.1 does
// and as the server does, and fails on each key or value that the two
// read differently.
func TestDocumentReadsTheSameInYAML11(t *testing.T) {
	t.Parallel()
	diffs, err := yaml11Differences(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestYAML11Differences checks the comparison itself on what YAML 1.1 and
// 1.2 read differently, and on what they read alike.
func TestYAML11Differences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		diff bool
	}{
		{"on: {type: boolean}", true},
		{"'on': {type: boolean}", false},
		{`required: [on, off]`, true},
		{`required: ["on"]`, false},
		{"a: yes", true},
		{"a: No", true},
		{"a: OFF", true},
		{"a: y", true},
		{"N: 1", true},
		{"a: ~", false},
		{"a: null", false},
		{"a: true", false},
		{"a: False", false},
		{"a: 0755", false}, // octal to both
		{"a: 0o755", true}, // octal to 1.2 only
		{"a: 1:30", true},  // 90 to 1.1
		{"a: 1:30.5", true},
		{"a: 1e5", true}, // a string to 1.1: its float has a dot and a signed exponent
		{"a: 1.5e+3", false},
		{"a: 1_000", false},
		{"a: 0x1F", false},
		{"a: 0b101", false},
		{"a: 12", false},
		{"a: 2.5", false},
		{"a: .inf", false},
		{"a: .nan", false},
		{"a: 2024-01-02", true}, // a date to 1.1, a string to the server
		{"a: '2024-01-02'", false},
		{"a: [x, '1', 2, {b: c}]", false},
		{"a: |\n  on\n", false},
		{"a: !!str on", false},
		{"<<: {a: b}", false},
	} {
		diffs, err := yaml11Differences([]byte(tc.doc))
		if err != nil {
			t.Errorf("%q: %v", tc.doc, err)
			continue
		}
		if (len(diffs) > 0) != tc.diff {
			t.Errorf("%q: differences %q, want some: %v", tc.doc, diffs, tc.diff)
		}
	}
}
