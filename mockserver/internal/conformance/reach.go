package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// Reasons a server cannot be reached, in [Unreachable].Reason.
const (
	// ReasonConnectionRefused: nothing listens at the address (or a
	// firewall refuses the connection).
	ReasonConnectionRefused = "connection-refused"
	// ReasonDNS: the host name does not resolve.
	ReasonDNS = "dns"
	// ReasonTLS: the TLS handshake failed (a certificate the client does
	// not trust, another host's, an expired one; a server that does not
	// speak TLS).
	ReasonTLS = "tls"
	// ReasonTimeout: no answer within the request time-out.
	ReasonTimeout = "timeout"
	// ReasonNetwork: any other failure to get an HTTP answer (no route to
	// the host, the connection closed or reset before an answer).
	ReasonNetwork = "network"
)

// Unreachable says why the server could not be reached. A run that cannot
// reach the server runs no check.
type Unreachable struct {
	// Reason is one of the Reason constants.
	Reason string `json:"reason"`
	// Message says it for a reader: what failed, on which address, and the
	// error as the network gave it.
	Message string `json:"message"`
}

// reach sends one request the server answers whatever the key (a list
// without credentials: 401 by the contract) and reports whether any HTTP
// answer came. It carries no key, so it is not paced and spends nothing of
// the key's bucket; it is counted in the run's requests but not held to
// the contract. It returns nil when an answer came or ctx ended (the run
// then stops as interrupted).
func (r *runner) reach(ctx context.Context) *Unreachable {
	_, err := r.send.do(ctx, request{method: http.MethodGet, path: "/contexts?limit=1", auth: contract.AuthNone, unpaced: true, untracked: true})
	if err == nil || ctx.Err() != nil {
		return nil
	}
	return unreachable(r.base.Host, err)
}

// unreachable classifies a transport error: connection refused, DNS, TLS,
// a time-out, or another network failure.
func unreachable(host string, err error) *Unreachable {
	var (
		dnsErr    *net.DNSError
		verifyErr *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		netErr    net.Error
	)
	u := &Unreachable{Reason: ReasonNetwork}
	var why string
	switch {
	case errors.As(err, &dnsErr):
		u.Reason = ReasonDNS
		why = fmt.Sprintf("the host name %q does not resolve (DNS)", dnsErr.Name)
		if dnsErr.IsTimeout {
			why = fmt.Sprintf("the DNS lookup of %q timed out", dnsErr.Name)
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		u.Reason = ReasonConnectionRefused
		why = "connection refused: nothing listens at " + host
	case errors.As(err, &verifyErr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid):
		u.Reason = ReasonTLS
		why = "TLS: the server's certificate is not trusted for " + host
	case errors.As(err, &record), errors.Is(err, http.ErrSchemeMismatch):
		u.Reason = ReasonTLS
		why = "TLS: the server at " + host + " does not speak TLS (is the URL http://?)"
	case errors.As(err, &alert):
		u.Reason = ReasonTLS
		why = "TLS: the server at " + host + " refused the handshake"
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		u.Reason = ReasonTimeout
		why = "no answer from " + host + " within the request time-out"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		why = "no route to " + host
	default:
		why = "no HTTP answer from " + host
	}
	u.Message = why + " (" + err.Error() + ")"
	return u
}
