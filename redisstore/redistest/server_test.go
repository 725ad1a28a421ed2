package redistest

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestStopStart: a server stops by its PID (the process is gone and the
// port refuses), starts again on the same address, and keeps its data
// across the restart only when persistent.
func TestStopStart(t *testing.T) {
	t.Parallel()
	for _, persistent := range []bool{false, true} {
		name := map[bool]string{false: "no persistence", true: "persistent"}[persistent]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := Start(t, Options{Persistent: persistent})
			c := Client(t, s, &redis.Options{MaxRetries: -1})
			ctx := context.Background()
			if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			addr, pid := s.Addr(), s.PID()
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if s.PID() != 0 {
				t.Errorf("PID = %d after Stop, want 0", s.PID())
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still exists after Stop (kill -0: %v)", pid, err)
			}
			if err := Ping(addr); err == nil {
				t.Error("PING answered after Stop")
			}
			if err := c.Ping(ctx).Err(); err == nil {
				t.Error("the client reached the stopped server")
			}
			if err := s.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			if s.Addr() != addr {
				t.Errorf("restarted on %s, want %s", s.Addr(), addr)
			}
			got, err := c.Get(ctx, "k").Result()
			switch {
			case persistent && (err != nil || got != "v"):
				t.Errorf("after the restart GET k = %q, %v; want v (persistent)", got, err)
			case !persistent && !errors.Is(err, redis.Nil):
				t.Errorf("after the restart GET k = %q, %v; want nil (no persistence)", got, err)
			}
		})
	}
}

func TestSharedAndClose(t *testing.T) {
	t.Parallel()
	s := Shared(t)
	if Shared(t) != s {
		t.Error("Shared started a second server")
	}
	if err := Ping(s.Addr()); err != nil {
		t.Fatal(err)
	}
	if p1, p2 := Prefix(t), Prefix(t); p1 == p2 {
		t.Errorf("Prefix returned %q twice", p1)
	}

	own, err := Launch(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := own.dir
	if err := own.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s behind (%v)", dir, err)
	}
}

// TestStartOnATakenPort: when another Redis already listens on the port, a
// PONG from it is not taken for the new server's. start reports the port in
// use (so Launch picks another) instead of handing the tests a server that
// is not theirs and a PID that has already exited.
func TestStartOnATakenPort(t *testing.T) {
	t.Parallel()
	other := Start(t, Options{})
	path, err := Installed()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: t.TempDir(), port: other.port}
	err = s.start(path)
	if !errors.Is(err, errPortInUse) {
		t.Errorf("start on a port another Redis holds: %v, want errPortInUse", err)
		s.Stop()
	}
	if pid := s.PID(); pid != 0 {
		t.Errorf("PID = %d after a failed start, want 0", pid)
	}
	if err := Ping(other.Addr()); err != nil {
		t.Errorf("the other server: %v", err)
	}
}
