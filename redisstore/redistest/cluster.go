package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextsvc/contextsvc-go/redisstore/internal/testproc"
)

// ClusterInstallHint is how to install the programs [LaunchCluster] runs:
// redis-server, and redis-cli (Debian's redis-tools) to create the
// cluster.
const ClusterInstallHint = "apt-get install redis-server redis-tools"

// ErrCLINotInstalled is returned when redis-cli is not on PATH.
var ErrCLINotInstalled = errors.New("redistest: redis-cli not found on PATH (" + ClusterInstallHint + ")")

// clusterNodes is how many masters a [Cluster] has: the fewest
// `redis-cli --cluster create` accepts.
const clusterNodes = 3

// Cluster is a Redis Cluster of three masters without replicas, each a
// redis-server on free loopback ports (its port and its bus port), with no
// persistence. Its methods are safe for concurrent use.
type Cluster struct {
	nodes []*Server
}

// LaunchCluster starts three cluster-enabled redis-servers, joins them
// with `redis-cli --cluster create` (the 16,384 slots split in three
// ranges), and returns once every node reports cluster_state:ok, knows the
// other two and sees every slot served. Call Close to stop them.
func LaunchCluster() (*Cluster, error) {
	cli, err := CLIInstalled()
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	for range clusterNodes {
		s, err := Launch(Options{cluster: true})
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		c.nodes = append(c.nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	cmd := exec.CommandContext(ctx, cli, args...)
	testproc.OwnGroup(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.Join(fmt.Errorf("redistest: redis-cli --cluster create: %w; its output:\n%s", err, out), c.Close())
	}
	if err := c.waitOK(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// Addrs returns the nodes' addresses, 127.0.0.1:port each: the seed list
// for redis.ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Nodes returns the cluster's redis-servers, in the order the slots were
// given to them: the first serves slots 0 to 5460.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// Close stops every node by its PID and removes its directory.
func (c *Cluster) Close() error {
	var errs []error
	for _, s := range c.nodes {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// waitOK polls every node's CLUSTER INFO until each reports
// cluster_state:ok, all nodes known and all slots served. The nodes learn
// of each other by gossip after redis-cli's CLUSTER MEETs, which takes
// some milliseconds; the cluster's own state is the only sign that they
// have.
func (c *Cluster) waitOK(ctx context.Context) error {
	want := []string{"cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:" + strconv.Itoa(len(c.nodes))}
	clients := c.admins()
	defer closeAll(clients)
	var last string
	for {
		ready := true
		for i, s := range c.nodes {
			info, err := clients[i].ClusterInfo(ctx).Result()
			if err != nil {
				last, ready = err.Error(), false
				break
			}
			for _, w := range want {
				if !strings.Contains(info, w+"\r\n") {
					last, ready = s.Addr()+": "+strings.ReplaceAll(strings.TrimSpace(info), "\r\n", " "), false
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: the cluster did not reach cluster_state:ok: %w; last CLUSTER INFO: %s", ctx.Err(), last)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// admin returns a client of node s alone, for cluster administration: one
// connection, no retries. The caller closes it.
func (c *Cluster) admin(s *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
}

// admins returns an admin client of each node, in the order of Nodes. The
// caller closes them (closeAll).
func (c *Cluster) admins() []*redis.Client {
	clients := make([]*redis.Client, len(c.nodes))
	for i, s := range c.nodes {
		clients[i] = c.admin(s)
	}
	return clients
}

// closeAll closes the clients.
func closeAll[C interface{ Close() error }](clients []C) {
	for _, cl := range clients {
		cl.Close()
	}
}

// MoveSlots moves slots, and every key in them, to node to (an index into
// Nodes), as [Cluster.BeginMove], [SlotMove.MigrateKeys] with batch and
// [SlotMove.Finish] do one after the other.
func (c *Cluster) MoveSlots(ctx context.Context, slots []int, to, batch int) error {
	m, err := c.BeginMove(ctx, slots, to)
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.MigrateKeys(ctx, batch); err != nil {
		return err
	}
	return m.Finish(ctx)
}

// SlotMove is slots on their way to another node, moved the way Redis
// Cluster resharding moves them (`redis-cli --cluster reshard` runs the
// same commands), in three steps a test can run traffic between:
// [Cluster.BeginMove], [SlotMove.MigrateKeys] and [SlotMove.Finish].
type SlotMove struct {
	c       *Cluster
	to      int
	slots   []int       // the slots that change owner
	from    map[int]int // slot → the node it leaves
	clients []*redis.Client
	ids     []string // the nodes' ids, in the order of Nodes
}

// BeginMove starts moving slots to node to: the target is told it is
// IMPORTING each slot and the owner that it is MIGRATING it. From then on,
// a command for a key of such a slot runs on the owner while the key is
// there, and is answered ASK (try the target, this once) when it is not:
// a new key, or one already migrated. Slots to already serves are left
// alone. Call Finish, which ends the move.
func (c *Cluster) BeginMove(ctx context.Context, slots []int, to int) (*SlotMove, error) {
	if to < 0 || to >= len(c.nodes) {
		return nil, fmt.Errorf("redistest: BeginMove to node %d, want 0 to %d", to, len(c.nodes)-1)
	}
	m := &SlotMove{c: c, to: to, from: map[int]int{}, clients: c.admins()}
	for i, cl := range m.clients {
		id, err := cl.ClusterMyID(ctx).Result()
		if err != nil {
			m.close()
			return nil, fmt.Errorf("redistest: CLUSTER MYID on %s: %w", c.nodes[i].Addr(), err)
		}
		m.ids = append(m.ids, id)
	}
	owners, err := c.owners(ctx, m.clients[to])
	if err != nil {
		m.close()
		return nil, err
	}
	for _, slot := range slots {
		if slot < 0 || slot >= 16384 || owners[slot] < 0 {
			m.close()
			return nil, fmt.Errorf("redistest: BeginMove of slot %d, want a served slot, 0 to 16383", slot)
		}
		from := owners[slot]
		if from == to {
			continue
		}
		if err := m.setslot(ctx, to, slot, "importing", m.ids[from]); err != nil {
			m.close()
			return nil, err
		}
		if err := m.setslot(ctx, from, slot, "migrating", m.ids[to]); err != nil {
			m.close()
			return nil, err
		}
		m.slots = append(m.slots, slot)
		m.from[slot] = from
	}
	return m, nil
}

// MigrateKeys moves the keys of the slots being moved to the target, batch
// keys per MIGRATE, until their old owners hold none.
func (m *SlotMove) MigrateKeys(ctx context.Context, batch int) error {
	if batch <= 0 {
		return fmt.Errorf("redistest: MigrateKeys in batches of %d, want > 0", batch)
	}
	for _, slot := range m.slots {
		src := m.clients[m.from[slot]]
		for {
			keys, err := src.ClusterGetKeysInSlot(ctx, slot, batch).Result()
			if err != nil {
				return fmt.Errorf("redistest: CLUSTER GETKEYSINSLOT %d on %s: %w", slot, src.Options().Addr, err)
			}
			if len(keys) == 0 {
				break
			}
			args := []any{"migrate", "127.0.0.1", m.c.nodes[m.to].port, "", 0, 5000, "keys"}
			for _, k := range keys {
				args = append(args, k)
			}
			// NOKEY (every key expired meanwhile) is a status, not an error.
			if err := src.Do(ctx, args...).Err(); err != nil {
				return fmt.Errorf("redistest: MIGRATE of %d keys of slot %d: %w", len(keys), slot, err)
			}
		}
	}
	return nil
}

// Finish migrates the keys still on the old owners (all of them, if
// MigrateKeys was not called), then tells every node the slots' new owner
// (CLUSTER SETSLOT NODE, the target first), so clients still asking the
// old owner are answered MOVED.
func (m *SlotMove) Finish(ctx context.Context) error {
	defer m.close()
	if err := m.MigrateKeys(ctx, 100); err != nil {
		return err
	}
	for _, slot := range m.slots {
		if err := m.setslot(ctx, m.to, slot, "node", m.ids[m.to]); err != nil {
			return err
		}
		for i := range m.clients {
			if i != m.to {
				if err := m.setslot(ctx, i, slot, "node", m.ids[m.to]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Slots returns the slots that change owner.
func (m *SlotMove) Slots() []int { return m.slots }

func (m *SlotMove) setslot(ctx context.Context, node, slot int, args ...any) error {
	args = append([]any{"cluster", "setslot", slot}, args...)
	if err := m.clients[node].Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("redistest: %v on %s: %w", args, m.c.nodes[node].Addr(), err)
	}
	return nil
}

func (m *SlotMove) close() { closeAll(m.clients) }

// owners returns, for each of the 16,384 slots, the index into Nodes of
// the node serving it as cl sees it (CLUSTER SHARDS), -1 for none.
func (c *Cluster) owners(ctx context.Context, cl *redis.Client) ([]int, error) {
	shards, err := cl.ClusterShards(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER SHARDS on %s: %w", cl.Options().Addr, err)
	}
	owners := slices.Repeat([]int{-1}, 16384)
	addrs := c.Addrs()
	for _, sh := range shards {
		m := slices.IndexFunc(sh.Nodes, func(n redis.Node) bool { return n.Role == "master" })
		if m < 0 {
			continue
		}
		addr := net.JoinHostPort(sh.Nodes[m].IP, strconv.FormatInt(sh.Nodes[m].Port, 10))
		i := slices.Index(addrs, addr)
		if i < 0 {
			return nil, fmt.Errorf("redistest: a shard is served by %s, not a node of this cluster", addr)
		}
		for _, r := range sh.Slots {
			for s := max(r.Start, 0); s <= min(r.End, int64(len(owners)-1)); s++ {
				owners[s] = i
			}
		}
	}
	return owners, nil
}

// Owner returns the index into Nodes of the node serving slot.
func (c *Cluster) Owner(ctx context.Context, slot int) (int, error) {
	if slot < 0 || slot >= 16384 {
		return -1, fmt.Errorf("redistest: slot %d, want 0 to 16383", slot)
	}
	cl := c.admin(c.nodes[0])
	defer cl.Close()
	owners, err := c.owners(ctx, cl)
	if err != nil {
		return -1, err
	}
	if owners[slot] < 0 {
		return -1, fmt.Errorf("redistest: no node serves slot %d", slot)
	}
	return owners[slot], nil
}

// Slots returns the slots node (an index into Nodes) serves, in order.
func (c *Cluster) Slots(ctx context.Context, node int) ([]int, error) {
	cl := c.admin(c.nodes[0])
	defer cl.Close()
	owners, err := c.owners(ctx, cl)
	if err != nil {
		return nil, err
	}
	var slots []int
	for s, o := range owners {
		if o == node {
			slots = append(slots, s)
		}
	}
	return slots, nil
}

// CLIInstalled returns the path of redis-cli, or [ErrCLINotInstalled].
func CLIInstalled() (string, error) {
	path, err := exec.LookPath("redis-cli")
	if err != nil {
		return "", ErrCLINotInstalled
	}
	return path, nil
}
