package contextsvc

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// pipeBase is a base URL for a client of servePipe's server (any host
// reaches it).
const pipeBase = "http://pipe.test/v1"

// pipeNet is an in-memory network for tests in a synctest bubble: its
// dialer hands one end of a net.Pipe to the client and the other to an
// http.Server, so net/http's own transport and server run with every wait
// on the bubble's clock (a real socket's would not be).
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	// dial, when set, replaces a dial (the test's hook); it calls
	// connect to get the connection the server accepts.
	dial func(ctx context.Context, connect func() (net.Conn, error)) (net.Conn, error)
}

// serve serves h on a new pipeNet until the test ends, and returns the
// network and an http.Client whose transport dials it.
func servePipe(t *testing.T, h http.Handler) (*pipeNet, *http.Client) {
	t.Helper()
	n := &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go srv.Serve(n)
	tr := &http.Transport{DialContext: n.dialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return n, &http.Client{Transport: tr}
}

func (n *pipeNet) dialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	connect := func() (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case n.conns <- server:
			return client, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-n.done:
			return nil, net.ErrClosed
		}
	}
	if n.dial != nil {
		return n.dial(ctx, connect)
	}
	return connect()
}

// Accept, Close and Addr make pipeNet the server's net.Listener.
func (n *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.done:
		return nil, net.ErrClosed
	}
}

func (n *pipeNet) Close() error {
	n.once.Do(func() { close(n.done) })
	return nil
}

func (n *pipeNet) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
