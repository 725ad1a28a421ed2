package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/testproc"
)

// shared is the one browser a test binary shares, started by the first
// test that asks for it and stopped by Main after the last test.
var shared = &testproc.Shared[*Browser]{Program: "chromium", Main: "browsertest.Main", Launch: Launch}

// Main runs the tests of a package that uses [New] or [Shared], then stops
// the shared browser. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }
func Main(m *testing.M) int { return shared.Run(m) }

// Require skips tb when chromium is not installed, saying how to install
// it, or fails it when CI=true (CI installs it, so its absence is a broken
// CI).
func Require(tb testing.TB) {
	tb.Helper()
	_, err := Installed()
	testproc.Require(tb, "chromium", InstallHint+" (or set "+ProgramEnv+")", err)
}

// Shared returns the browser this test binary shares, starting it on
// first use. The package's TestMain must call [Main], which stops it.
func Shared(tb testing.TB) *Browser {
	tb.Helper()
	Require(tb)
	return shared.Get(tb)
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
// The tab has no deadline of its own; [Bounded] gives a test's waits one
// that fails the test, saying what it waited for, before the test binary's
// -timeout would end it.
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

// Bounded returns ctx ended shortly before the test binary's -timeout (see
// testing.T.Deadline), or ctx itself when there is none: a page that never
// does what a test waits for fails the test with its own message, while a
// slow machine, however slow, is never a failure.
func Bounded(t interface {
	Deadline() (time.Time, bool)
	Cleanup(func())
}, ctx context.Context) context.Context {
	dl, ok := t.Deadline()
	if !ok {
		return ctx
	}
	ctx, cancel := context.WithDeadline(ctx, dl.Add(-10*time.Second))
	t.Cleanup(cancel)
	return ctx
}
