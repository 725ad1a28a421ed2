package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name under which a [Sentinel]'s sentinels monitor
// its master: redis.FailoverOptions.MasterName.
const MasterName = "redistest"

// Sentinel settings that make a failover quick (one to two seconds after
// the master dies, on loopback) yet leave no room for a false one on a
// loaded machine: the master is down after 500 ms without an answer, a quorum of
// 2 of the 3 sentinels agrees, and a failover that stalls is tried again
// after 2 × failover-timeout. LaunchSentinel shortens two periods more.
const (
	sentinelDownAfter       = 500 * time.Millisecond
	sentinelFailoverTimeout = 2 * time.Second
	sentinelQuorum          = 2
	sentinels               = 3
)

// Sentinel is a replicated Redis watched by Redis Sentinel: a master, one
// replica, and three sentinels (redis-server --sentinel, the program
// Debian's redis-sentinel runs), each on a free loopback port, with no
// persistence. Its methods are safe for concurrent use.
type Sentinel struct {
	data      []*Server // the master and the replica as started; the roles change on a failover
	sentinels []*Server
}

// LaunchSentinel starts a master, a replica of it and three sentinels
// monitoring it as [MasterName], and returns once the replica has
// acknowledged a write and every sentinel knows the replica and the two
// other sentinels (the sentinels' own state, read with SENTINEL MASTER),
// so that a failover can happen and keeps what was written. Call Close to
// stop them.
func LaunchSentinel() (*Sentinel, error) {
	s := &Sentinel{}
	master, err := Launch(Options{})
	if err != nil {
		return nil, err
	}
	s.data = append(s.data, master)
	replica, err := Launch(Options{replicaOf: master.Addr()})
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.data = append(s.data, replica)
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d %[3]d\n"+
		"sentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s %[5]d\n",
		MasterName, master.port, sentinelQuorum, sentinelDownAfter.Milliseconds(), sentinelFailoverTimeout.Milliseconds())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range sentinels {
		sen, err := Launch(Options{sentinel: conf})
		if err != nil {
			return nil, errors.Join(err, s.Close())
		}
		s.sentinels = append(s.sentinels, sen)
		// Redis 7's SENTINEL DEBUG shortens two periods: the hello
		// message by which sentinels find each other (2 s), and the
		// question a sentinel that finds the master down asks the others
		// before a quorum calls it down (1 s). The ping and INFO periods
		// stay: the failover's checks of the replica are tied to them.
		c := redis.NewSentinelClient(&redis.Options{Addr: sen.Addr(), PoolSize: 1, MaxRetries: -1})
		err = c.Process(ctx, redis.NewStatusCmd(ctx, "sentinel", "debug", "publish-period", 100, "ask-period", 100))
		c.Close()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("redistest: SENTINEL DEBUG on %s: %w", sen.Addr(), err), s.Close())
		}
	}
	if err := s.waitReady(ctx, master.Addr()); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// SentinelAddrs returns the sentinels' addresses:
// redis.FailoverOptions.SentinelAddrs.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.sentinels))
	for i, sen := range s.sentinels {
		addrs[i] = sen.Addr()
	}
	return addrs
}

// Servers returns the master and the replica as they were started (the
// first was the master). After a failover, [Sentinel.Master] says which
// is which.
func (s *Sentinel) Servers() []*Server { return s.data }

// Close stops the sentinels, then the data servers, by their PIDs, and
// removes their directories.
func (s *Sentinel) Close() error {
	var errs []error
	for _, sen := range s.sentinels {
		errs = append(errs, sen.Close())
	}
	for _, d := range s.data {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// Master returns the server every sentinel names as the master (SENTINEL
// GET-MASTER-ADDR-BY-NAME), or an error if they disagree or name none of
// this group's servers.
func (s *Sentinel) Master(ctx context.Context) (*Server, error) {
	clients := s.sentinelClients()
	defer closeAll(clients)
	addr, err := s.agreedMaster(ctx, clients)
	if err != nil {
		return nil, err
	}
	return s.server(addr)
}

// WaitFailover waits until a failover away from old is complete, as the
// group itself reports it: every sentinel names the same other server as
// the master, and that server's INFO replication says role:master. It
// polls every 5 ms, and returns the new master, or ctx's error (with the
// sentinels' last answers) if it ends first.
func (s *Sentinel) WaitFailover(ctx context.Context, old *Server) (*Server, error) {
	clients := s.sentinelClients()
	defer closeAll(clients)
	var last string
	for {
		addr, err := s.agreedMaster(ctx, clients)
		if err == nil && addr != old.Addr() {
			var srv *Server
			if srv, err = s.server(addr); err == nil {
				var role string
				if role, err = replicationField(ctx, addr, "role"); err == nil && role == "master" {
					return srv, nil
				}
				if err == nil {
					err = fmt.Errorf("%s is %s", addr, role)
				}
			}
		}
		if err != nil {
			last = err.Error()
		} else {
			last = "the sentinels still name " + addr
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("redistest: no failover from %s: %w; last: %s", old.Addr(), ctx.Err(), last)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitReady polls until the replica acknowledges a write to the master
// and every sentinel sees the master up, the replica, and the other
// sentinels: before that, a dead master could not be failed over, or its
// replica would lack what it had. The replica's link status and the
// master's "state=online" are not enough: after a diskless first sync the
// master holds back the writes it makes for the replica until the
// replica's first REPLCONF ACK (up to a second later), and a master killed
// before then takes them with it.
func (s *Sentinel) waitReady(ctx context.Context, master string) error {
	clients := s.sentinelClients()
	defer closeAll(clients)
	var last string
	for {
		last = ""
		if err := replicated(ctx, master); err != nil {
			last = err.Error()
		}
		for i, c := range clients {
			if last != "" {
				break
			}
			m, err := c.Master(ctx, MasterName).Result()
			switch {
			case err != nil:
				last = fmt.Sprintf("sentinel %s: %v", s.sentinels[i].Addr(), err)
			case m["flags"] != "master" || m["num-slaves"] != "1" || m["num-other-sentinels"] != strconv.Itoa(sentinels-1):
				last = fmt.Sprintf("sentinel %s: flags %s, %s replicas, %s other sentinels", s.sentinels[i].Addr(), m["flags"], m["num-slaves"], m["num-other-sentinels"])
			}
		}
		if last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: the sentinels did not get ready: %w; last: %s", ctx.Err(), last)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// sentinelClients returns a client of each sentinel, one connection, no
// retries; the caller closes them.
func (s *Sentinel) sentinelClients() []*redis.SentinelClient {
	clients := make([]*redis.SentinelClient, len(s.sentinels))
	for i, sen := range s.sentinels {
		clients[i] = redis.NewSentinelClient(&redis.Options{Addr: sen.Addr(), PoolSize: 1, MaxRetries: -1})
	}
	return clients
}

// agreedMaster returns the master address every sentinel names.
func (s *Sentinel) agreedMaster(ctx context.Context, clients []*redis.SentinelClient) (string, error) {
	var addr string
	for i, c := range clients {
		hp, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		if err != nil {
			return "", fmt.Errorf("sentinel %s: %w", s.sentinels[i].Addr(), err)
		}
		a := net.JoinHostPort(hp[0], hp[1])
		if i > 0 && a != addr {
			return "", fmt.Errorf("the sentinels disagree: %s and %s", addr, a)
		}
		addr = a
	}
	return addr, nil
}

// server returns the group's server at addr.
func (s *Sentinel) server(addr string) (*Server, error) {
	i := slices.IndexFunc(s.data, func(d *Server) bool { return d.Addr() == addr })
	if i < 0 {
		return nil, fmt.Errorf("redistest: the sentinels name %s, not a server of this group", addr)
	}
	return s.data[i], nil
}

// replicationField returns one field of INFO replication of the Redis at
// addr.
func replicationField(ctx context.Context, addr, field string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	for l := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("INFO replication of %s has no %s", addr, field)
}

// replicated writes a key to the master at addr and reports whether its
// replica acknowledged it within 100 ms (WAIT), then deletes the key.
func replicated(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1})
	defer c.Close()
	const key = "redistest:replicated"
	if err := c.Set(ctx, key, 1, 0).Err(); err != nil {
		return fmt.Errorf("master %s: %w", addr, err)
	}
	n, err := c.Wait(ctx, 1, 100*time.Millisecond).Result()
	if err != nil || n < 1 {
		return fmt.Errorf("master %s: WAIT 1: %d replicas, %v", addr, n, err)
	}
	return c.Del(ctx, key).Err()
}
