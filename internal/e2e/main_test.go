package e2e_test

import (
	"os"
	"testing"

	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// The fleet tests share one redis-server per test binary (started on first
// use, stopped here after the last test).
func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
