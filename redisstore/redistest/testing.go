package redistest

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/contextsvc/contextsvc-go/redisstore/internal/testproc"
)

// shared is the one server a test binary shares, and sharedCluster its
// one cluster, each started by the first test that asks for it and
// stopped by Main after the last test.
var (
	shared = &testproc.Shared[*Server]{Program: "redis-server", Main: "redistest.Main",
		Launch: func() (*Server, error) { return Launch(Options{}) }}
	sharedCluster = &testproc.Shared[*Cluster]{Program: "Redis Cluster", Main: "redistest.Main",
		Launch: LaunchCluster}
)

// Main runs the tests of a package that uses [Shared] or [SharedCluster],
// then stops the shared server and cluster. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
func Main(m *testing.M) int {
	return shared.Run(testproc.RunFunc(func() int { return sharedCluster.Run(m) }))
}

// Require skips tb when redis-server is not installed, saying how to
// install it, or fails it when CI=true (CI installs it, so its absence is
// a broken CI).
func Require(tb testing.TB) {
	tb.Helper()
	_, err := Installed()
	testproc.Require(tb, "redis-server", InstallHint, err)
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
	return shared.Get(tb)
}

// Start starts a server of the test's own, closed when the test ends: for
// tests that stop and restart Redis, which would disturb the others on the
// shared one.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	Require(tb)
	return own(tb, func() (*Server, error) { return Launch(opts) })
}

// own launches a process (or a group of them) of the test's own, failing
// tb if it cannot, and closes it when the test ends.
func own[T interface{ Close() error }](tb testing.TB, launch func() (T, error)) T {
	tb.Helper()
	v, err := launch()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := v.Close(); err != nil {
			tb.Error(err)
		}
	})
	return v
}

// Client returns a go-redis client of its own (its own connection pool)
// for s, closed when the test ends. opts, if given, is copied and its Addr
// set.
func Client(tb testing.TB, s *Server, opts ...*redis.Options) *redis.Client {
	tb.Helper()
	o := optionsCopy(opts)
	o.Addr = s.Addr()
	c := redis.NewClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}

// optionsCopy returns a copy of the first of opts, or new options if
// there is none.
func optionsCopy[O any](opts []*O) *O {
	o := new(O)
	if len(opts) > 0 && opts[0] != nil {
		*o = *opts[0]
	}
	return o
}

// Prefix returns a key prefix of the test's own, "test:<name>:<random>:",
// so tests sharing a server never see each other's keys.
func Prefix(tb testing.TB) string {
	name := strings.NewReplacer(" ", "_", "/", ".").Replace(tb.Name())
	return "test:" + name + ":" + rand.Text()[:8] + ":"
}

// RequireCluster is [Require] for a [Cluster], which also needs redis-cli
// to create it.
func RequireCluster(tb testing.TB) {
	tb.Helper()
	Require(tb)
	_, err := CLIInstalled()
	testproc.Require(tb, "redis-cli", ClusterInstallHint, err)
}

// SharedCluster returns the cluster this test binary shares, starting it
// on first use. The package's TestMain must call [Main], which stops it.
// Tests sharing it keep to their own keys and never stop a node or move a
// slot.
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	RequireCluster(tb)
	return sharedCluster.Get(tb)
}

// StartCluster starts a cluster of the test's own, closed when the test
// ends: for tests that move slots or stop nodes.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	RequireCluster(tb)
	return own(tb, LaunchCluster)
}

// ClusterClient returns a go-redis cluster client of its own for c,
// closed when the test ends. opts, if given, is copied and its Addrs set.
func ClusterClient(tb testing.TB, c *Cluster, opts ...*redis.ClusterOptions) *redis.ClusterClient {
	tb.Helper()
	o := optionsCopy(opts)
	o.Addrs = c.Addrs()
	cc := redis.NewClusterClient(o)
	tb.Cleanup(func() { cc.Close() })
	return cc
}

// StartSentinel starts a [Sentinel] group of the test's own (a master, a
// replica, three sentinels), closed when the test ends.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	Require(tb)
	return own(tb, LaunchSentinel)
}

// FailoverClient returns a go-redis client of its own that finds s's
// master through its sentinels (redis.NewFailoverClient), closed when the
// test ends. opts, if given, is copied and its MasterName and
// SentinelAddrs set.
func FailoverClient(tb testing.TB, s *Sentinel, opts ...*redis.FailoverOptions) *redis.Client {
	tb.Helper()
	o := optionsCopy(opts)
	o.MasterName, o.SentinelAddrs = MasterName, s.SentinelAddrs()
	c := redis.NewFailoverClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}
