package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(method, path string) *http.Request { return httptest.NewRequest(method, path, nil) }

// createDirect creates a context through ServeHTTP without a network and
// returns its id.
func createDirect(s *Server, body string) string {
	req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.DefaultKey().Token)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var c struct{ ID string }
	_ = json.Unmarshal(rec.Body.Bytes(), &c)
	return c.ID
}

type infiniteN struct{}

func (infiniteN) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'n'
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// httptestRequest is a request for ServeHTTP with a JSON body (none when
// body is empty) and the bearer key.
func httptestRequest(method, path, body, key string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	// A loopback Host, as a client of the mock sends: the admin routes
	// refuse httptest's example.com (the access package's Host check).
	req.Host = "127.0.0.1"
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// dlvT0 is when every fake clock of these tests starts.
var dlvT0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
