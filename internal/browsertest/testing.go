package browsertest

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// The one browser a test binary shares, started by the first test that
// asks for it and stopped by Main after the last test.
var (
	mainRunning atomic.Bool
	sharedOnce  sync.Once
	shared      *Browser
	sharedErr   error
)

// Main runs the tests of a package that uses [New] or [Shared], then stops
// the shared browser. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }
func Main(m *testing.M) int {
	mainRunning.Store(true)
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Require skips tb when chromium is not installed, saying how to install
// it, or fails it when CI=true (CI installs it, so its absence is a broken
// CI).
func Require(tb testing.TB) {
	tb.Helper()
	if _, err := Installed(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("chromium is not installed and CI=true: %v (.ci/run installs it)", err)
		}
		tb.Skipf("chromium is not installed; to run this test: %s (or set %s): %v", InstallHint, ProgramEnv, err)
	}
}

// Shared returns the browser this test binary shares, starting it on
// first use. The package's TestMain must call [Main], which stops it.
func Shared(tb testing.TB) *Browser {
	tb.Helper()
	Require(tb)
	if !mainRunning.Load() {
		tb.Fatal("browsertest.Shared: the package's TestMain must call browsertest.Main, which stops the shared browser")
	}
	sharedOnce.Do(func() { shared, sharedErr = Launch() })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// New opens a tab in the shared browser, in a browser context of its own
// (cookies, storage and cache no other test sees), and returns its
// chromedp context: pass it to chromedp.Run and chromedp.Do, and to
// [Messages], [NoErrors], [Screenshot] and [PageTiming]. The tab's console
// is recorded from the start. When the test ends the tab and its browser
// context are closed, and if the test failed the console is logged.
//
// Start the servers the page talks to before calling New: cleanups run
// last-registered first, so the tab then closes before the servers, and
// a stream the page holds open (Server-Sent Events) does not keep a
// server's Close waiting.
//
// The tab has no deadline of its own; a test bounds a wait with
// context.WithTimeout on the returned context.
func New(tb testing.TB) context.Context {
	tb.Helper()
	b := Shared(tb)
	ctx, cancel, err := b.NewTab()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			logConsole(tb, ctx)
		}
		cancel()
	})
	return ctx
}
