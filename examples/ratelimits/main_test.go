package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRun runs both phases on the Pro plan (burst 50, 5 a second), short
// enough for a test: phase 1 paces past the burst, phase 2 meets 429s.
func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	start := time.Now()
	if err := run(context.Background(), &out, config{n: 55, n2: 60, workers: 3, plan: "pro"}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"keys on the pro (300/min, burst 50) plan",
		"This takes about 3s",
		"Phase 1: 55 requests, client made WithPlan(pro).",
		"  Done: 55 requests in ",
		"Phase 2: 60 requests from 3 workers, limiter off.",
		"  Done: 60 requests in ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, ", 0 errors"); n != 2 {
		t.Errorf("%d phases report 0 errors, want 2:\n%s", n, text)
	}
	// Phase 2 sends 60 requests against a bucket of 50 refilling 5 a
	// second: the server must have said 429, unless the machine was so
	// slow that the requests took the 2 s the bucket needs for 10 more.
	m := regexp.MustCompile(`Done: 60 requests in ([\d.]+)s, \d+ errors; the server answered 429 (\d+) times`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no phase 2 summary:\n%s", text)
	}
	if secs, _ := strconv.ParseFloat(m[1], 64); m[2] == "0" && secs < 1.9 {
		t.Errorf("phase 2 reports no 429 in %ss:\n%s", m[1], text)
	}
	// Phase 1's five requests past the burst take a second at 5 a second.
	if d := time.Since(start); d < time.Second {
		t.Errorf("run took %v: the limiter did not pace", d)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []config{
		{n: 1, workers: 1, plan: "gold"},
		{n: 0, workers: 1, plan: "free"},
		{n: 1, workers: 0, plan: "free"},
		{n: 1, n2: -1, workers: 1, plan: "free"},
	} {
		var out strings.Builder
		if err := run(context.Background(), &out, cfg); err == nil {
			t.Errorf("run(%+v) = nil, want an error", cfg)
		}
	}
}

func TestPaceTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plan string
		n    int
		want time.Duration
	}{
		{"free", 200, 190 * time.Second},
		{"free", 10, 0},
		{"pro", 55, time.Second},
		{"business", 1100, 60 * time.Second},
	} {
		if got := paceTime(plans[tc.plan].client, tc.n); got != tc.want {
			t.Errorf("paceTime(%s, %d) = %v, want %v", tc.plan, tc.n, got, tc.want)
		}
	}
}
