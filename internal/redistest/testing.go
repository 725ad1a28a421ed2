package redistest

import (
	"crypto/rand"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The one server a test binary shares, started by the first test that
// asks for it and stopped by Main after the last test.
var (
	mainRunning atomic.Bool
	sharedOnce  sync.Once
	shared      *Server
	sharedErr   error
)

// Main runs the tests of a package that uses [Shared], then stops the
// shared server. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
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

// Require skips tb when redis-server is not installed, saying how to
// install it, or fails it when CI=true (CI installs it, so its absence is
// a broken CI).
func Require(tb testing.TB) {
	tb.Helper()
	if _, err := Installed(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("redis-server is not installed and CI=true: %s (.ci/run does)", InstallHint)
		}
		tb.Skipf("redis-server is not installed; to run this test: %s", InstallHint)
	}
}

// Installed returns the path of redis-server, or [ErrNotInstalled].
func Installed() (string, error) {
	path, err := lookPath()
	if err != nil {
		return "", ErrNotInstalled
	}
	return path, nil
}

// Shared returns the server this test binary shares, starting it on first
// use. The package's TestMain must call [Main], which stops it. Tests
// sharing it keep to their own keys (see [Prefix]) and never stop it.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	Require(tb)
	if !mainRunning.Load() {
		tb.Fatal("redistest.Shared: the package's TestMain must call redistest.Main, which stops the shared server")
	}
	sharedOnce.Do(func() { shared, sharedErr = Launch(Options{}) })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// Start starts a server of the test's own, closed when the test ends: for
// tests that stop and restart Redis, which would disturb the others on the
// shared one.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	Require(tb)
	s, err := Launch(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// Client returns a go-redis client of its own (its own connection pool)
// for s, closed when the test ends. opts, if given, is copied and its Addr
// set.
func Client(tb testing.TB, s *Server, opts ...*redis.Options) *redis.Client {
	tb.Helper()
	o := &redis.Options{}
	if len(opts) > 0 && opts[0] != nil {
		c := *opts[0]
		o = &c
	}
	o.Addr = s.Addr()
	c := redis.NewClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}

// Prefix returns a key prefix of the test's own, "test:<name>:<random>:",
// so tests sharing a server never see each other's keys.
func Prefix(tb testing.TB) string {
	name := strings.NewReplacer(" ", "_", "/", ".").Replace(tb.Name())
	return "test:" + name + ":" + rand.Text()[:8] + ":"
}
