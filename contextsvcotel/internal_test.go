package contextsvcotel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

func TestFullURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://api.test/v1/contexts/ctx_1", "https://api.test/v1/contexts/ctx_1"},
		{"https://api.test/v1/contexts?limit=5&cursor=abc", "https://api.test/v1/contexts?limit=5&cursor=abc"},
		{"https://api.test/v1/contexts?sig=s3cr3t&limit=5", "https://api.test/v1/contexts?sig=REDACTED&limit=5"},
		{"https://api.test/v1/x?Signature=a&AWSAccessKeyId=b&X-Goog-Signature=c&signature=d", "https://api.test/v1/x?Signature=REDACTED&AWSAccessKeyId=REDACTED&X-Goog-Signature=REDACTED&signature=REDACTED"},
		{"https://api.test/v1/x?s%69g=escaped", "https://api.test/v1/x?s%69g=REDACTED"},
		// Names are compared percent-decoded: %53 is S.
		{"https://api.test/v1/x?%53ignature=abc", "https://api.test/v1/x?%53ignature=REDACTED"},
		{"https://api.test/v1/x?%73%69%67=abc&limit=1", "https://api.test/v1/x?%73%69%67=REDACTED&limit=1"},
		{"https://api.test/v1/contexts?limit=3&api_key=QUERYKEYSECRET99", "https://api.test/v1/contexts?limit=3&api_key=REDACTED"},
		{"https://api.test/v1/x?access_token=t&tag=ops", "https://api.test/v1/x?access_token=REDACTED&tag=ops"},
		{"https://api.test/v1/x?sig", "https://api.test/v1/x?sig=REDACTED"},
		{"https://user:pass@api.test/v1/x", "https://REDACTED:REDACTED@api.test/v1/x"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := fullURL(u); got != tt.want {
			t.Errorf("fullURL(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestErrorType(t *testing.T) {
	t.Parallel()
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		err  error
		want string
	}{
		{&contextsvc.Error{StatusCode: 429}, "429"},
		{fmt.Errorf("wrapped: %w", &contextsvc.Error{StatusCode: 503}), "503"},
		{context.DeadlineExceeded, "timeout"},
		{&url.Error{Op: "Get", URL: "https://x", Err: context.Canceled}, "canceled"},
		{&net.DNSError{Err: "timeout", IsTimeout: true}, "timeout"},
		{dial, "*net.OpError"},
		{&url.Error{Op: "Get", URL: "https://x", Err: dial}, "*net.OpError"},
		{fmt.Errorf("x: %w", &tls.CertificateVerificationError{Err: errors.New("bad")}), "*tls.CertificateVerificationError"},
	}
	for _, tt := range tests {
		if got := errorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		host string
		port int
	}{
		{"https://api.test/v1", "api.test", 443},
		{"http://127.0.0.1:8080/v1", "127.0.0.1", 8080},
		{"http://localhost/v1", "localhost", 80},
		{"https://[::1]:9443/v1", "::1", 9443},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.in)
		if host, port := server(u); host != tt.host || port != tt.port {
			t.Errorf("server(%s) = %s %d, want %s %d", tt.in, host, port, tt.host, tt.port)
		}
	}
}
