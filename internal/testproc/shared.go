// Package testproc holds what the test helpers that run a real program
// (internal/browsertest: chromium, internal/redistest: redis-server) have
// in common: one process a whole test binary shares, started by the first
// test that asks for it and stopped after the last, and the rule for a
// program that is not installed (skip locally, fail with CI=true).
package testproc

import (
	"os"
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
// The helper's Main calls it from the package's TestMain with the
// *testing.M, or, for a helper sharing several processes, with a Runner
// that runs the next one's Run.
func (s *Shared[T]) Run(m Runner) int {
	s.running.Store(true)
	code := m.Run()
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
// nil), saying how to install it (hint), or fails it when CI=true: CI
// installs every such program (.ci/run), so its absence there is a broken
// CI, not a reason to skip.
func Require(tb testing.TB, program, hint string, installedErr error) {
	tb.Helper()
	if installedErr == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not installed and CI=true (.ci/run installs it): %v", program, installedErr)
	}
	tb.Skipf("%s is not installed; to run this test: %s: %v", program, hint, installedErr)
}
