package conformcmd

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
)

const testKey = "sk_test_conform_cmd"

// runCmd runs the command with args and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), args, &stdout, &stderr)
	for _, out := range []string{stdout.String(), stderr.String()} {
		if strings.Contains(out, testKey) {
			t.Errorf("the output shows the key:\n%s", out)
		}
	}
	return code, stdout.String(), stderr.String()
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("CONTEXTSVC_BASE_URL", "")
	t.Setenv("CONTEXTSVC_API_KEY", "")
	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no base URL", nil, "no base URL"},
		{"no key", []string{"-base-url", "http://127.0.0.1:1/v1"}, "no API key"},
		{"a base URL without /v1", []string{"-base-url", "http://127.0.0.1:1/", "-api-key", testKey}, "ending in /v1"},
		{"an unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"an argument", []string{"extra"}, `unexpected argument "extra"`},
		{"an unknown plan", []string{"-plan", "gold"}, "must be free, pro, business"},
		{"a bad enterprise plan", []string{"-plan", "enterprise=0/5"}, "positive numbers"},
		{"a request time-out of zero", []string{"-request-timeout", "0s"}, "-request-timeout must be positive"},
		{"a read-only run with a receiver", []string{"-base-url", "http://127.0.0.1:1/v1", "-api-key", testKey, "-read-only", "-receiver-listen", "127.0.0.1:0"}, "registers no webhook"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, exitUsage, tt.stderr)
			}
		})
	}
	// The help, on stdout, shows each flag's default once, never a value
	// of the environment.
	t.Setenv("CONTEXTSVC_BASE_URL", "http://127.0.0.1:20263/v1")
	if code, stdout, stderr := runCmd(t, "-h"); code != exitPassed || stderr != "" ||
		!strings.Contains(stdout, "Exit status: 0 all passed, 1 a difference (or interrupted), 2 usage, 3 the server cannot be reached") ||
		strings.Contains(stdout, "20263") || !strings.Contains(stdout, "  --base-url URL\n    \tthe server's base URL, ending in /v1 (default $CONTEXTSVC_BASE_URL)\n") {
		t.Errorf("-h: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	// A mistake: one line, and where the help is.
	if code, _, stderr := runCmd(t, "-plan", "gold"); code != exitUsage || strings.Count(stderr, "\n") != 2 || !strings.HasSuffix(stderr, "\nRun 'contextsvc-conform --help' for usage.\n") {
		t.Errorf("-plan gold: exit %d:\n%s", code, stderr)
	}
}

// TestRunAgainstMock runs the command read-only against the mock: it
// passes (exit 0), as text and as JSON; with the plan's limit stated
// wrongly, the difference exits 1.
func TestRunAgainstMock(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t, mockserver.WithKey(mockserver.Key{Token: testKey, Plan: mockserver.PlanBusiness}))
	args := []string{"-base-url", ts.URL, "-api-key", testKey, "-read-only", "-quiet"}
	code, stdout, stderr := runCmd(t, append(args, "-plan", "business")...)
	if code != exitPassed || !strings.Contains(stdout, "everything the run checked follows the contract") || stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, append(args, "-plan", "business", "-json")...)
	var rep struct {
		Passed bool `json:"passed"`
		Checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitPassed || !rep.Passed || len(rep.Checks) == 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	code, stdout, _ = runCmd(t, append(args, "-plan", "pro")...)
	if code != exitDiffers || !strings.Contains(stdout, "X-RateLimit-Limit is not the plan's") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}

func TestPlanFlag(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value     string
		perMinute int
		unlimited bool
		paced     bool
	}{
		{"free", 60, false, true},
		{"pro", 300, false, true},
		{"business", 1000, false, true},
		{"enterprise=5000/200", 5000, false, true},
		{"unlimited", 0, true, false},
	} {
		var p planFlag
		if err := p.Set(tt.value); err != nil {
			t.Errorf("%s: %v", tt.value, err)
			continue
		}
		var cfg conformance.Config
		if err := p.apply(&cfg); err != nil {
			t.Errorf("%s: %v", tt.value, err)
			continue
		}
		if cfg.PerMinute != tt.perMinute || cfg.Unlimited != tt.unlimited || (cfg.Limiter != nil) != tt.paced {
			t.Errorf("%s: %d/min, unlimited %t, paced %t", tt.value, cfg.PerMinute, cfg.Unlimited, cfg.Limiter != nil)
		}
	}
	for _, bad := range []string{"", "Free", "enterprise=", "enterprise=10", "enterprise=10/x", "enterprise=-1/5"} {
		var p planFlag
		if err := p.Set(bad); err == nil {
			t.Errorf("-plan %q accepted", bad)
		}
	}
}

// TestUnreachableServer runs the command against a closed port: it says
// once, before anything else, that it cannot reach the server and why,
// shows no PASS, and exits 3; with -json the same goes to stderr and the
// report says it.
func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"-base-url", "http://" + addr + "/v1", "-api-key", testKey}
	for _, extra := range [][]string{nil, {"-read-only"}, {"-quiet"}} {
		code, stdout, stderr := runCmd(t, append(args, extra...)...)
		if code != exitUnreachable || strings.Count(stdout+stderr, "cannot reach the server") != 1 ||
			!strings.Contains(stdout, "connection refused: nothing listens at "+addr) || strings.Contains(stdout+stderr, "PASS") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", extra, code, stdout, stderr)
		}
	}
	code, stdout, stderr := runCmd(t, append(args, "-json", "-quiet")...)
	var rep struct {
		Passed      bool `json:"passed"`
		Unreachable struct {
			Reason string `json:"reason"`
		} `json:"unreachable"`
		Counts struct{ Passed, Skipped int }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitUnreachable || rep.Passed || rep.Unreachable.Reason != "connection-refused" ||
		rep.Counts.Passed != 0 || !strings.Contains(stderr, "cannot reach the server: connection refused") {
		t.Errorf("-json: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
}
