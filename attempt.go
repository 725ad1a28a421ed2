package contextsvc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// This file is what happens to each attempt of a call below the retry
// layer: its own time-out (WithAttemptTimeout), and whether a failed attempt
// may have reached the service (which Contexts.Delete needs to know).

// sendAttempt sends one attempt of the call cs through base.
func sendAttempt(base http.RoundTripper, req *http.Request, cs *callState) (*http.Response, error) {
	var cancel context.CancelFunc
	if cs.attemptTimeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), cs.attemptTimeout)
		req = req.WithContext(ctx)
	}
	var watch *writeWatch
	if cs.watchWrites {
		watch = &writeWatch{}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), watch.trace()))
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		if watch != nil && watch.reached(err) {
			cs.mayHaveActed = true
		}
		cs.lastStatus, cs.lastHeader = 0, nil
		return nil, err
	}
	cs.lastStatus, cs.lastHeader = resp.StatusCode, resp.Header
	if statusMayHaveActed(resp.StatusCode) {
		// A gateway's 502 or 504 may come after the service acted.
		cs.mayHaveActed = true
	}
	if cancel != nil {
		// The time-out covers reading the body, as http.Client.Timeout
		// does; closing the body (every path does) releases the timer.
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	}
	return resp, nil
}

// cancelOnClose ends an attempt's time-out when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// writeWatch learns from net/http's client trace whether an attempt's
// request was written to a connection. The hooks may run on the
// transport's own goroutines, hence the atomics.
type writeWatch struct {
	asked atomic.Bool // net/http's transport asked for a connection
	conn  atomic.Bool // a connection was obtained
	wrote atomic.Bool // the whole request was written to it
}

func (w *writeWatch) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) { w.asked.Store(true) },
		GotConn: func(httptrace.GotConnInfo) { w.conn.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				w.wrote.Store(true)
			}
		},
	}
}

// reached reports whether an attempt that failed with err may have reached
// the service, i.e. whether the service may have acted on it.
func (w *writeWatch) reached(err error) bool {
	if w.conn.Load() {
		return w.wrote.Load()
	}
	if w.asked.Load() {
		// net/http's transport was still waiting for a connection (dialing,
		// a TLS handshake, a full pool) when the attempt ended, e.g. by
		// WithAttemptTimeout: nothing of the request was sent. (Over HTTP/2
		// a pooled connection reports GotConn before anything is written.)
		return false
	}
	// No trace event: either nothing was sent because connecting failed,
	// or the transport is not net/http's (a caller's RoundTripper reports
	// no trace events). Only a failure to connect is known to have sent
	// nothing.
	return !connectFailure(err)
}

// connectFailure reports whether err is a failure to set up a connection
// (dialing, name resolution, the server's certificate), which happens
// before anything of the request is sent.
func connectFailure(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	return errors.As(err, &dnsErr) || errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr)
}
