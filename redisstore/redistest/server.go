// Package redistest runs a real redis-server (Debian's, or any on the
// PATH) for tests, benchmarks and examples of code that uses package
// redisstore: on a free loopback port, with nothing written to disk unless
// asked, and stopped by its PID. This module's own tests, the repository's
// end-to-end tests and its fleet example run on it. It runs it three
// ways: one server ([Launch]), a Redis Cluster of three masters
// ([LaunchCluster], created with redis-cli, whose slots a test can move
// under load), and a master with a replica watched by three sentinels
// ([LaunchSentinel], whose master a test can kill and whose failover it
// can wait for). Every wait is on Redis's own state (PING, CLUSTER INFO,
// the sentinels' answers, WAIT), polled every 5 ms, never a fixed sleep.
//
// Tests use it through [Main], [Shared], [Start], [Client] and [Prefix]:
// one server per test binary is shared by every test (each keeps to its own
// key prefix), and a test that stops and restarts Redis gets a server of
// its own so it disturbs no other. [SharedCluster], [StartCluster],
// [ClusterClient], [StartSentinel] and [FailoverClient] do the same for
// the cluster and the sentinel group. Where redis-server (or, for a
// cluster, redis-cli) is not installed the tests skip and say how to
// install it; with CI=true they fail instead. Programs use [Launch] and
// [Server.Close].
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/contextsvc/contextsvc-go/redisstore/internal/testproc"
)

// InstallHint is how to install the program this package runs.
const InstallHint = "apt-get install redis-server"

// ErrNotInstalled is returned when redis-server is not on PATH.
var ErrNotInstalled = errors.New("redis-server not found on PATH")

// Options configures a server started by [Launch].
type Options struct {
	// Persistent turns the append-only file on (fsync on every write, in
	// the server's own temporary directory), so data outlives a
	// [Server.Stop] and [Server.Start], as it does on a production Redis
	// run with persistence. By default nothing is written to disk and a
	// restart empties the server.
	Persistent bool

	// Set by [LaunchCluster] and [LaunchSentinel] for the processes they
	// run.
	cluster   bool   // a cluster node, with a bus port of its own
	replicaOf string // the address of the master it replicates, if any
	sentinel  string // run as a sentinel with this configuration, if set
}

// Server is a redis-server process on 127.0.0.1. Its methods are safe for
// concurrent use.
type Server struct {
	opts    Options
	port    int
	busPort int    // a cluster node's bus port, 0 for any other
	dir     string // working directory, removed by Close

	mu   sync.Mutex
	cmd  *exec.Cmd     // nil while stopped
	done chan struct{} // closed when cmd has exited
	log  *tailBuffer   // the process's output, for error messages
}

// Launch starts a redis-server on a free loopback port and returns once it
// answers PING. Call Close to stop it and remove its directory.
func Launch(opts Options) (*Server, error) {
	path, err := Installed()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, dir: dir}
	// Between choosing a free port and redis-server binding it, another
	// process on this machine may take it: then choose again.
	for range 5 {
		// A cluster node's bus port defaults to its port + 10000, which is
		// past 65535 for most free ports; it gets a free one of its own.
		n := 1
		if opts.cluster {
			n = 2
		}
		var ports []int
		if ports, err = freePorts(n); err != nil {
			break
		}
		s.port = ports[0]
		if opts.cluster {
			s.busPort = ports[1]
		}
		if err = s.start(path); err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortInUse) {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

// Addr returns the server's address, 127.0.0.1:port. It stays the same
// across Stop and Start.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// PID returns the process id of the running redis-server, or 0 while it is
// stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop stops the server by its PID: SIGTERM (Redis's clean shutdown, which
// also flushes the append-only file of a persistent server), then SIGKILL
// if it has not exited after 10 seconds. Stopping a stopped server does
// nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd, done, err := s.signal(syscall.SIGTERM)
	if cmd == nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("redistest: redis-server (pid %d) ignored SIGTERM for 10 s and was killed", cmd.Process.Pid)
	}
}

// Kill kills the server by its PID with SIGKILL, as a crash or a lost host
// would end it: no shutdown, nothing flushed, no replica told. Killing a
// stopped server does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, done, err := s.signal(syscall.SIGKILL)
	if done != nil {
		<-done
	}
	return err
}

// signal sends sig to the running process and marks the server stopped.
// It returns the process and the channel closed when it exits, or nil
// ones if none was running (or it had exited already). The caller holds
// s.mu.
func (s *Server) signal(sig syscall.Signal) (*exec.Cmd, <-chan struct{}, error) {
	if s.cmd == nil {
		return nil, nil, nil
	}
	cmd, done := s.cmd, s.done
	s.cmd = nil
	if err := cmd.Process.Signal(sig); err != nil {
		select {
		case <-done: // it had exited already
			return nil, nil, nil
		default:
		}
		return nil, nil, fmt.Errorf("redistest: signalling redis-server (pid %d): %w", cmd.Process.Pid, err)
	}
	return cmd, done, nil
}

// Start starts a stopped server again on the same port and returns once it
// answers PING. Starting a running server does nothing.
func (s *Server) Start() error {
	path, err := Installed()
	if err != nil {
		return err
	}
	// The port was just released; if something else grabbed it, waiting a
	// little does not help, but a socket in TIME_WAIT does not block
	// Redis (it sets SO_REUSEADDR), so one try is what there is.
	return s.start(path)
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}

var errPortInUse = errors.New("redistest: port in use")

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "", // no RDB snapshots
		"--daemonize", "no",
		"--logfile", "", // log to stdout, which tailBuffer keeps
		"--loglevel", "warning",
		"--unixsocket", "",
		"--databases", "1",
		// A replica's first sync starts at once, not after the 5 s Redis
		// otherwise waits for more replicas to share it.
		"--repl-diskless-sync-delay", "0",
		// A master stopped by SIGTERM exits at once rather than waiting up
		// to 10 s for its replicas to acknowledge its last writes.
		"--shutdown-timeout", "0",
	}
	if s.opts.Persistent {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if s.opts.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(s.busPort))
	}
	if s.opts.replicaOf != "" {
		host, port, _ := net.SplitHostPort(s.opts.replicaOf)
		args = append(args, "--replicaof", host, port)
	}
	if s.opts.sentinel != "" {
		// A sentinel takes its configuration from a file it can rewrite
		// (it records what it learns there), named first.
		conf := filepath.Join(s.dir, "sentinel.conf")
		if _, err := os.Stat(conf); os.IsNotExist(err) {
			if err := os.WriteFile(conf, []byte(s.opts.sentinel), 0o600); err != nil {
				return err
			}
		}
		args = append([]string{conf, "--sentinel"}, args...)
	}
	cmd := exec.Command(path, args...)
	log := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = s.dir
	testproc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: starting redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	if err := waitReady(s.Addr(), cmd.Process.Pid, done, 10*time.Second); err != nil {
		cmd.Process.Kill()
		<-done
		out := log.String()
		if strings.Contains(out, "Address already in use") {
			return fmt.Errorf("%w: %d", errPortInUse, s.port)
		}
		return fmt.Errorf("redistest: redis-server on %s: %w; its output:\n%s", s.Addr(), err, out)
	}
	s.cmd, s.done, s.log = cmd, done, log
	return nil
}

// waitReady polls addr until the redis-server with process id pid answers
// PING, the process exits (done closes) or the timeout passes. A process
// just started has no other way to say it listens; the polls are 5 ms
// apart and end at the first PONG. A PONG counts only from pid (INFO
// server's process_id): on a machine where other test binaries start
// Redis servers too, another one may hold the port, and then this server
// fails to bind and exits while that one answers.
func waitReady(addr string, pid int, done <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if Ping(addr) == nil {
			if got, err := serverPID(addr); err == nil && got == pid {
				return nil
			}
		}
		select {
		case <-done:
			return errors.New("the process exited")
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG within %v", timeout)
		}
	}
}

// Ping sends PING to the Redis at addr over a new connection and reports
// an error unless it answers PONG within a second.
func Ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// serverPID asks the Redis at addr for its process id (INFO server).
func serverPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
	if !strings.HasPrefix(line, "$") || err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

// lookPath finds redis-server on PATH.
func lookPath() (string, error) { return exec.LookPath("redis-server") }

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago (held open together, so no two are the same).
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
