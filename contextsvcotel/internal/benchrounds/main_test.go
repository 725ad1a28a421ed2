package main

import (
	"regexp"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		out  string
		want result
		ok   bool
	}{
		{"goos: linux\nBenchmarkClientTelemetry/client-otel-2   \t   20000\t     51234 ns/op\t    7693 B/op\t      96 allocs/op\nPASS\n",
			result{ns: 51234, bytes: 7693, allocs: 96}, true},
		{"BenchmarkServeGET-2 1000 1906.5 ns/op 1312 B/op 15 allocs/op\n", result{ns: 1906.5, bytes: 1312, allocs: 15}, true},
		{"BenchmarkX 10 5 ns/op 3.0 custom-unit\n", result{ns: 5}, true},
		{"PASS\nok\n", result{}, false},
		{"BenchmarkX-2 --- FAIL\n", result{}, false},
	}
	for _, tt := range tests {
		got, ok := parse(tt.out)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	ns := func(v ...float64) []result {
		rs := make([]result, len(v))
		for i := range v {
			rs[i].ns = v[i]
		}
		return rs
	}
	f := func(r result) float64 { return r.ns }
	for _, tt := range []struct {
		in            []result
		med, lo, high float64
	}{
		{ns(3, 1, 2), 2, 1, 3},
		{ns(4, 1, 3, 2), 2.5, 1, 4},
		{ns(-5), -5, -5, -5},
	} {
		if med, lo, hi := spread(tt.in, f); med != tt.med || lo != tt.lo || hi != tt.high {
			t.Errorf("spread(%v) = %v %v %v, want %v %v %v", tt.in, med, lo, hi, tt.med, tt.lo, tt.high)
		}
	}
}

func TestAnchored(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(anchored("BenchmarkClientTelemetry/client"))
	if re.String() != "^BenchmarkClientTelemetry$/^client$" {
		t.Errorf("anchored = %q", re.String())
	}
}

func TestParsePair(t *testing.T) {
	t.Parallel()
	if p, err := parsePair("ours=BenchmarkA/x:BenchmarkA/y"); err != nil || p != (pair{"ours", "BenchmarkA/x", "BenchmarkA/y"}) {
		t.Errorf("parsePair = %+v, %v", p, err)
	}
	for _, bad := range []string{"", "ours", "ours=a", "=a:b", "ours=:b", "ours=a:"} {
		if _, err := parsePair(bad); err == nil {
			t.Errorf("parsePair(%q): no error", bad)
		}
	}
}
