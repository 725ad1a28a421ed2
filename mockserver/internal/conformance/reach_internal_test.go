package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestUnreachableReasons classifies the transport errors a probe can meet,
// also those a test cannot provoke on loopback without waiting.
func TestUnreachableReasons(t *testing.T) {
	t.Parallel()
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	for _, tt := range []struct {
		err          error
		reason, says string
	}{
		{opErr(syscall.ECONNREFUSED), ReasonConnectionRefused, "connection refused: nothing listens at api.example:443"},
		{&net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}, ReasonDNS, `"api.example" does not resolve`},
		{&net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}, ReasonDNS, "the DNS lookup of \"api.example\" timed out"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}, ReasonTimeout, "within the request time-out"},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), ReasonTimeout, "within the request time-out"},
		{opErr(syscall.EHOSTUNREACH), ReasonNetwork, "no route to api.example:443"},
		{errors.New("EOF"), ReasonNetwork, "no HTTP answer from api.example:443 (EOF)"},
	} {
		u := unreachable("api.example:443", tt.err)
		if u.Reason != tt.reason || !strings.Contains(u.Message, tt.says) {
			t.Errorf("%v: %+v, want %s saying %q", tt.err, u, tt.reason, tt.says)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
