package redistest

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestSentinelFailover: a failover client writes through the master the
// sentinels name; once the master is killed, WaitFailover returns the
// replica as the new master, which holds the write, and the same client
// writes there. Close stops all five processes.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for a failover (about 2 s); skipped with -short")
	}
	s := StartSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	master, err := s.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if master != s.Servers()[0] {
		t.Fatalf("the sentinels name %s, want the first server %s", master.Addr(), s.Servers()[0].Addr())
	}
	c := FailoverClient(t, s)
	if err := c.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT: the write has reached the replica, so the failover keeps it.
	if n, err := c.Wait(ctx, 1, 0).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 0: %d, %v", n, err)
	}

	pid := master.PID()
	start := time.Now()
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the master (pid %d) still exists after Kill (kill -0: %v)", pid, err)
	}
	next, err := s.WaitFailover(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover complete %v after the kill", time.Since(start))
	if next != s.Servers()[1] {
		t.Errorf("new master %s, want the replica %s", next.Addr(), s.Servers()[1].Addr())
	}
	if got, err := s.Master(ctx); err != nil || got != next {
		t.Errorf("Master after the failover: %v, %v", got, err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Errorf("GET k on the new master: %q, %v", v, err)
	}
	if err := c.Set(ctx, "k", "after", 0).Err(); err != nil {
		t.Errorf("SET on the new master: %v", err)
	}

	pids := []int{next.PID()}
	for _, sen := range s.sentinels {
		pids = append(pids, sen.PID())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Close (kill -0: %v)", pid, err)
		}
	}
}
