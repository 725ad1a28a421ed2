package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// TestMain lets the test binary stand in for the example's binary when
// run with -procs: a worker process it starts runs main. Otherwise the
// tests run through redistest.Main, which tells the terminal when they
// skipped for want of redis-server.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(redistest.Main(m))
}

// phaseTotals reads a phase's "total" row: requests, 429s, calls that
// gave up on 429s, other failed calls.
func phaseTotals(t *testing.T, text, phase string) (requests, tooMany, gaveUp, failed int) {
	t.Helper()
	i := strings.Index(text, "Phase "+phase+":")
	if i < 0 {
		t.Fatalf("no phase %s in the output:\n%s", phase, text)
	}
	m := regexp.MustCompile(`total\s+(\d+)\s+[\d.]+\s+(\d+)\s+(\d+)\s+(\d+)`).FindStringSubmatch(text[i:])
	if m == nil {
		t.Fatalf("no total row for phase %s:\n%s", phase, text)
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	return atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
}

// checkRun runs the example with cfg and checks both phases: the shared
// one within the plan, the local one meeting 429s. How many 429s the
// shared phase meets depends on the machine's load, not on the code: when
// it meets any, the output must say why and which option absorbs them.
func checkRun(t *testing.T, cfg config) string {
	t.Helper()
	var out strings.Builder
	if err := run(context.Background(), &out, cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	_, plan, _ := parsePlan(cfg.plan)
	requests, tooMany, _, failed := phaseTotals(t, text, "shared")
	if failed != 0 {
		t.Errorf("shared phase: %d calls failed otherwise than on the rate limit:\n%s", failed, text)
	}
	if tooMany > 0 && !strings.Contains(text, "Leave more\n  headroom: -headroom ") {
		t.Errorf("shared phase: %d answers 429 without saying why and what to change:\n%s", tooMany, text)
	}
	// The shared bucket holds burst-1 tokens and refills at the plan's
	// rate: no more can have been granted, however fast the machine.
	most := plan.Burst() - 1 + int(cfg.duration.Seconds()*perSecond(plan)) + 1
	if requests == 0 || requests > most {
		t.Errorf("shared phase: %d requests in %v, want 1 to %d:\n%s", requests, cfg.duration, most, text)
	}
	if _, tooMany, _, _ := phaseTotals(t, text, "local"); tooMany == 0 {
		t.Errorf("local phase: no 429, yet %d workers each had the plan's whole bucket:\n%s", cfg.workers, text)
	}
	return text
}

// TestRun runs a short fleet of goroutines, starting its own redis-server.
func TestRun(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	text := checkRun(t, config{workers: 4, duration: 1500 * time.Millisecond, plan: "enterprise=600/5", local: true, headroom: 100 * time.Millisecond})
	for _, want := range []string{
		"Redis: started redis-server on 127.0.0.1:",
		"the key is on the enterprise (600/min, burst 5) plan: 10.0 requests a second.",
		"4 workers, goroutines of this process",
		"the shared bucket leaves 1 of the plan's 5 tokens unused, for 100ms of arrival jitter (-headroom).",
		"worker 4",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestRunProcs runs the workers as separate processes against a Redis
// given with -redis-addr.
func TestRunProcs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes; skipped with -short")
	}
	srv := redistest.Start(t, redistest.Options{})
	text := checkRun(t, config{workers: 4, procs: 2, duration: 1500 * time.Millisecond, plan: "enterprise=600/5", local: true, redisAddr: srv.Addr(), headroom: 100 * time.Millisecond})
	for _, want := range []string{"Redis: " + srv.Addr(), "spread over 2 processes", "worker 4"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestParsePlan(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]contextsvc.Plan{
		"free":               contextsvc.FreePlan(),
		"pro":                contextsvc.ProPlan(),
		"business":           contextsvc.BusinessPlan(),
		"enterprise=6000/20": enterprisePlan(t, 6000, 20),
		"enterprise=120/3":   enterprisePlan(t, 120, 3),
	} {
		if _, got, err := parsePlan(in); err != nil || got != want {
			t.Errorf("parsePlan(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "gold", "unlimited", "enterprise=0/5", "enterprise=10"} {
		if _, _, err := parsePlan(in); err == nil {
			t.Errorf("parsePlan(%q) = nil error", in)
		}
	}
}

// TestFlags: -h lists the user's flags only; a worker process (childEnv
// set) also takes those its parent passes.
func TestFlags(t *testing.T) {
	t.Parallel()
	var help strings.Builder
	if _, err := parseFlags([]string{"-h"}, false, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-workers", "-procs", "-duration", "-plan", "-redis-addr", "-local", "-headroom"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("-h lacks %s:\n%s", want, help.String())
		}
	}
	for _, internal := range []string{"-phase", "-base-url", "-api-key", "-target", "-start-at", "-first", "internal"} {
		if strings.Contains(help.String(), internal) {
			t.Errorf("-h shows %s:\n%s", internal, help.String())
		}
	}
	if _, err := parseFlags([]string{"-phase", "shared"}, false, io.Discard); err == nil {
		t.Error("a user's -phase was accepted")
	}
	cfg, err := parseFlags([]string{"-phase", "shared", "-base-url", "http://x/v1", "-api-key", "k", "-target", "ctx_1",
		"-start-at", "5", "-first", "3", "-workers", "2", "-headroom", "1s"}, true, io.Discard)
	if err != nil || !cfg.child || cfg.phase != "shared" || cfg.baseURL != "http://x/v1" || cfg.first != 3 || cfg.startAt != 5 || cfg.headroom != time.Second {
		t.Errorf("child flags: %+v, %v", cfg, err)
	}
}

func TestExplain429(t *testing.T) {
	t.Parallel()
	_, plan, err := parsePlan("enterprise=6000/20")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	explain429(&out, totals{tooMany: 7, rateLimited: 1}, 100*time.Millisecond, plan)
	for _, want := range []string{"answered 7 requests 429", "later than 100ms of jitter", "(1 calls gave up)",
		"Leave more\n  headroom: -headroom 200ms here, redisstore.WithHeadroom(20) in your code."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, out.String())
		}
	}
}

func TestHeadroomTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plan string
		d    time.Duration
		want int
	}{
		{"enterprise=6000/20", 100 * time.Millisecond, 10},
		{"enterprise=6000/20", 50 * time.Millisecond, 5},
		{"enterprise=600/5", 100 * time.Millisecond, 1},
		{"free", 100 * time.Millisecond, 1},
		{"free", 0, 0},
	} {
		_, plan, err := parsePlan(tc.plan)
		if err != nil {
			t.Fatal(err)
		}
		if got := headroomTokens(plan, tc.d); got != tc.want {
			t.Errorf("headroomTokens(%s, %v) = %d, want %d", tc.plan, tc.d, got, tc.want)
		}
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []config{
		{workers: 0, duration: time.Second, plan: "free"},
		{workers: 2, procs: 3, duration: time.Second, plan: "free"},
		{workers: 2, procs: -1, duration: time.Second, plan: "free"},
		{workers: 2, duration: 0, plan: "free"},
		{workers: 2, duration: time.Second, plan: "gold"},
		{workers: 2, duration: time.Second, plan: "free", redisAddr: "127.0.0.1:1"},
		{workers: 2, duration: time.Second, plan: "free", headroom: -time.Second},
	} {
		var out strings.Builder
		if err := run(context.Background(), &out, cfg); err == nil {
			t.Errorf("run(%+v) = nil, want an error", cfg)
		}
	}
}

// enterprisePlan is contextsvc.EnterprisePlan for limits a test knows are
// valid.
func enterprisePlan(tb testing.TB, perMinute, burst int) contextsvc.Plan {
	tb.Helper()
	p, err := contextsvc.EnterprisePlan(perMinute, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
