package contextsvc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// This file is what happens to each attempt of a call below the retry
// layer: its time bounds (WithHeaderTimeout, WithStallTimeout and
// WithAttemptTimeout; see attemptWatch), and whether a failed attempt may
// have reached the service (which Contexts.Delete needs to know).

// sendAttempt sends one attempt of the call cs through base, under the
// attempt's bounds: its context ends, with a *timeoutError as its cause,
// when the answer's headers do not come in time (or the call's bound runs
// out), and the answer's body it returns bounds each read (see attempt).
func sendAttempt(base http.RoundTripper, req *http.Request, cs *callState) (*http.Response, error) {
	// Most calls make one attempt: its state comes with the call's.
	a := &cs.firstAttempt
	if a.cs != nil {
		a = &attempt{}
	}
	a.cs = cs
	ctx, cancel := context.WithCancelCause((*attemptParent)(cs))
	a.cancel = cancel
	if cs.attemptTimeout > 0 {
		ctx, a.stopTimeout = context.WithTimeoutCause(ctx, cs.attemptTimeout, &timeoutError{bound: boundAttempt, d: cs.attemptTimeout})
	}
	var watch *writeWatch
	if cs.watchWrites {
		watch = &writeWatch{}
		ctx = httptrace.WithClientTrace(ctx, watch.trace())
	}
	req = req.WithContext(ctx)
	if err := cs.begin(a); err != nil {
		a.release()
		cs.lastStatus, cs.lastHeader = 0, nil
		return nil, err
	}
	resp, err := base.RoundTrip(req)
	if err == nil {
		if te := cs.headersCame(a, resp.Body); te != nil {
			// The headers came as a bound ran out: too late.
			resp.Body.Close()
			resp, err = nil, te
		}
	}
	if err != nil {
		if te := a.failed.Load(); te != nil {
			// Whatever the transport made of the ended context (its
			// cause, or context.Canceled), the bound that ended it.
			err = te
		} else if te, ok := context.Cause(ctx).(*timeoutError); ok && ctx.Err() != nil {
			err = te // WithAttemptTimeout's
		}
		cs.leave(a)
		a.release()
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
	// Closing the body (every path does) ends the attempt and its
	// contexts; WithAttemptTimeout covers reading the body too, as
	// http.Client.Timeout does.
	resp.Body = a
	return resp, nil
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
