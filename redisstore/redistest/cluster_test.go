package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestCluster: a launched cluster serves keys on all three nodes through
// a cluster client, MoveSlots moves a slot and its keys to another node
// (the client finds them there), and Close stops every node by its PID
// and removes its directory.
func TestCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis Cluster (about 2 s); skipped with -short")
	}
	RequireCluster(t)
	c, err := LaunchCluster()
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			c.Close()
		}
	})
	if n := len(c.Nodes()); n != 3 {
		t.Fatalf("%d nodes, want 3", n)
	}
	cc := ClusterClient(t, c)
	ctx := context.Background()
	perNode := make([]int, 3)
	for i := range 300 {
		k := fmt.Sprint("key:", i)
		if err := cc.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		owner, err := c.Owner(ctx, int(cc.ClusterKeySlot(ctx, k).Val()))
		if err != nil {
			t.Fatal(err)
		}
		perNode[owner]++
	}
	for i, n := range perNode {
		if n == 0 {
			t.Errorf("node %d holds none of 300 keys: %v", i, perNode)
		}
	}

	const key = "key:7"
	slot := int(cc.ClusterKeySlot(ctx, key).Val())
	from, err := c.Owner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % 3
	if err := c.MoveSlots(ctx, []int{slot}, to, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Owner(ctx, slot); err != nil || got != to {
		t.Errorf("after MoveSlots([%d], %d): owner %d, %v", slot, to, got, err)
	}
	if v, err := cc.Get(ctx, key).Result(); err != nil || v != "7" {
		t.Errorf("GET %s after the move: %q, %v; want 7", key, v, err)
	}
	for i, cl := range c.admins() {
		n, err := cl.ClusterCountKeysInSlot(ctx, slot).Result()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: 1, false: 0}[i == to]; n < want || (i != to && n != 0) {
			t.Errorf("node %d holds %d keys of slot %d after the move to node %d", i, n, slot, to)
		}
	}
	m, err := c.BeginMove(ctx, []int{slot}, to)
	if err != nil || len(m.Slots()) != 0 {
		t.Errorf("moving a slot to its owner: %v, moving %v", err, m.Slots())
	}
	m.Finish(ctx)
	for _, bad := range []struct {
		slots []int
		to    int
	}{{[]int{16384}, 0}, {[]int{-1}, 0}, {[]int{0}, 3}} {
		if err := c.MoveSlots(ctx, bad.slots, bad.to, 1); err == nil {
			t.Errorf("MoveSlots(%v, %d): no error", bad.slots, bad.to)
		}
	}

	var pids []int
	var dirs []string
	for _, s := range c.Nodes() {
		pids, dirs = append(pids, s.PID()), append(dirs, s.dir)
	}
	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for i, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("node %d (pid %d) still exists after Close (kill -0: %v)", i, pid, err)
		}
		if _, err := os.Stat(dirs[i]); !os.IsNotExist(err) {
			t.Errorf("Close left %s behind (%v)", dirs[i], err)
		}
	}
}

func TestSharedCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis Cluster (about 2 s); skipped with -short")
	}
	c := SharedCluster(t)
	if SharedCluster(t) != c {
		t.Error("SharedCluster started a second cluster")
	}
	if err := ClusterClient(t, c).Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
