package mockserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStalledClientsAreDropped opens raw connections that stop sending
// half-way (after the headers, inside the headers, or between requests):
// the server closes each of them once its time-out passes, answering first
// where a request was under way. It runs against the http.Server of
// HTTPServer and against NewTestServer, which must use the same settings.
// The time-outs are 100 ms; the client waits up to 10 s, and what the test
// asserts is that the server closed the connection, not when.
func TestStalledClientsAreDropped(t *testing.T) {
	t.Parallel()
	opts := []Option{
		WithKey(Key{Token: "k", Plan: PlanUnlimited}),
		WithReadHeaderTimeout(100 * time.Millisecond),
		WithReadBodyTimeout(100 * time.Millisecond),
		WithIdleTimeout(100 * time.Millisecond),
	}
	const stalledBody = "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
	cases := []struct {
		name string
		send string
		// status is the answer expected before the close; 0 for none.
		status int
		// first is a whole request answered before the connection idles.
		first bool
	}{
		{"body stalls after the headers", "POST /v1/contexts HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer k\r\n" + stalledBody, 400, false},
		{"update body stalls", "PUT /v1/contexts/ctx_x HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer k\r\n" + stalledBody, 400, false},
		{"admin body stalls", "POST /_mock/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n" + stalledBody, 400, false}, // a Host the admin routes answer to
		{"refused request's body stalls", "POST /v1/contexts HTTP/1.1\r\nHost: mock\r\n" + stalledBody, 401, false},
		{"GET with a stalled body", "GET /v1/contexts HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer k\r\n" + stalledBody, 200, false},
		{"headers stall", "POST /v1/contexts HTTP/1.1\r\nHost: mock\r\nAuthorization: Bear", 0, false},
		{"idle keep-alive connection", "GET /v1/contexts HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer k\r\n\r\n", 200, true},
	}
	servers := map[string]func(t *testing.T) (addr string, closed <-chan struct{}){
		"HTTPServer": func(t *testing.T) (string, <-chan struct{}) {
			s := New(opts...)
			hs := s.HTTPServer("")
			closed := make(chan struct{}, len(cases))
			hs.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed <- struct{}{}
				}
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = hs.Serve(ln) }()
			t.Cleanup(func() { _ = hs.Close() })
			return ln.Addr().String(), closed
		},
		"NewTestServer": func(t *testing.T) (string, <-chan struct{}) {
			ts := NewTestServer(t, opts...)
			if ts.HTTP.Config.ReadHeaderTimeout != 100*time.Millisecond || ts.HTTP.Config.IdleTimeout != 100*time.Millisecond {
				t.Errorf("NewTestServer's http.Server: read-header %s, idle %s", ts.HTTP.Config.ReadHeaderTimeout, ts.HTTP.Config.IdleTimeout)
			}
			return ts.HTTP.Listener.Addr().String(), nil
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr, closed := start(t)
			for _, tc := range cases {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := io.WriteString(conn, tc.send); err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(conn)
				if tc.status != 0 {
					res, err := http.ReadResponse(br, nil)
					if err != nil {
						t.Errorf("%s: no answer: %v", tc.name, err)
						continue
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != tc.status {
						t.Errorf("%s: status %d, want %d", tc.name, res.StatusCode, tc.status)
					}
					if !tc.first && tc.status == 400 && !res.Close {
						t.Errorf("%s: the 400 does not say Connection: close", tc.name)
					}
				}
				// Returns when the server closes the connection (one it
				// kept open is go test's -timeout).
				rest, _ := io.ReadAll(br) // a reset ends it too
				if len(rest) > 0 && tc.status != 0 {
					t.Errorf("%s: more after the answer: %q", tc.name, rest)
				}
				if closed != nil {
					<-closed
				}
				if tc.status == 0 && len(rest) > 0 && !strings.HasPrefix(string(rest), "HTTP/1.1 4") {
					t.Errorf("%s: got %q", tc.name, rest)
				}
			}
		})
	}
}
