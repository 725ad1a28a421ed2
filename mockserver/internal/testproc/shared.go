// Package testproc holds what the test helpers that run a real program
// (chromium for the mock server's browser tests, redis-server for package
// redistest, the contextsvc command's own binary and pdftotext for its
// tests) have in common: one process a whole test binary shares, started
// by the first test that asks for it and stopped after the last, and the
// rule for a program that is not installed (skip locally, fail with
// CI=true).
//
// Each module that uses this package keeps a copy of it (modules version
// apart, so none imports another's internal packages); the repository's
// module checks (internal/tools/modules) hold the copies identical.
package testproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Shared is the one process of type T a test binary shares. Its zero
// value is not usable: set Program and Launch. Declare it as a package
// variable of the helper package (a test binary is one process, so the
// shared program is too).
type Shared[T interface{ Close() error }] struct {
	// Program names the program in messages ("chromium").
	Program string
	// Main names the helper's Main in messages ("browsertest.Main").
	Main string
	// Launch starts the program.
	Launch func() (T, error)

	running atomic.Bool
	once    sync.Once
	v       T
	started bool
	err     error
}

// Run runs the tests, then stops the shared process if a test started it,
// and returns the exit code: 1 if the tests passed but the stop failed.
// It also tells the terminal which tests skipped for want of a program
// (see AnnounceSkips). The helper's Main calls it from the package's
// TestMain with the *testing.M, or, for a helper sharing several
// processes, with a Runner that runs the next one's Run.
func (s *Shared[T]) Run(m Runner) int {
	s.running.Store(true)
	code := m.Run()
	AnnounceSkips()
	if s.started {
		if err := s.v.Close(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Runner runs a test binary's tests and returns its exit code, as
// *testing.M does.
type Runner interface{ Run() int }

// RunFunc is a [Runner] made of a function.
type RunFunc func() int

// Run calls f.
func (f RunFunc) Run() int { return f() }

// Get returns the shared process, starting it on first use. It fails tb
// when the package's TestMain does not go through Run, which alone stops
// the process.
func (s *Shared[T]) Get(tb testing.TB) T {
	tb.Helper()
	if !s.running.Load() {
		tb.Fatalf("the package's TestMain must call %s, which stops the shared %s", s.Main, s.Program)
	}
	s.once.Do(func() {
		s.v, s.err = s.Launch()
		s.started = s.err == nil
	})
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.v
}

// Require skips tb when program is not installed (installedErr is not
// nil), saying in one line why and how to install it (hint), or fails it
// when CI=true: CI installs every such program (.ci/run), so its absence
// there is a broken CI, not a reason to skip.
func Require(tb testing.TB, program, hint string, installedErr error) {
	tb.Helper()
	if installedErr == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not installed and CI=true (.ci/run installs it): %v", program, installedErr)
	}
	skips.note(program + " is not installed (" + hint + ")")
	tb.Skipf("%v; to run this test: %s", installedErr, hint)
}

// skips counts the tests Require skipped in this test binary, by reason.
var skips skipCounter

type skipCounter struct {
	mu      sync.Mutex
	reasons []string
	n       map[string]int
}

func (c *skipCounter) note(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[reason] == 0 {
		c.reasons = append(c.reasons, reason)
	}
	c.n[reason]++
}

// summary is one line per reason, "pkg: 3 tests skipped: redis-server is
// not installed (apt-get install redis-server)", or "" when no test
// skipped. It empties the counts, so shared processes run one inside the
// other (Run with a Runner) announce them once.
func (c *skipCounter) summary(pkg string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { c.reasons, c.n = nil, nil }()
	var b strings.Builder
	for _, r := range c.reasons {
		tests := "tests"
		if c.n[r] == 1 {
			tests = "test"
		}
		fmt.Fprintf(&b, "%s: %d %s skipped: %s\n", pkg, c.n[r], tests, r)
	}
	return b.String()
}

// AnnounceSkips writes to the terminal how many tests Require skipped and
// why. go test shows nothing of a passing package but "ok", which would
// hide that a part was not tested; the terminal (/dev/tty) is outside what
// go test captures, so the line shows beside the "ok". Without a terminal
// (CI, where a missing program fails instead) it writes nothing.
func AnnounceSkips() {
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	line := skips.summary(pkg)
	if line == "" {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	_, _ = tty.WriteString(line)
}
