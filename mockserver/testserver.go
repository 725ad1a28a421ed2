package mockserver

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// testServerStarted, when set, is told of each server NewTestServer makes
// and its test. Only this package's own tests set it, so that a response
// that does not match openapi.yaml fails the test that made the server.
var testServerStarted func(t testing.TB, s *Server)

// TestServer is a [Server] listening on loopback for one test.
type TestServer struct {
	*Server
	// URL is the base URL of the API, ending in /v1.
	URL string
	// APIKey is the token of the server's default key.
	APIKey string
	// HTTP is the underlying httptest server (its URL has no /v1).
	HTTP *httptest.Server
}

// NewTestServer starts a Server made with opts on a loopback port and
// closes it when the test ends:
//
//	ts := mockserver.NewTestServer(t)
//	// send requests to ts.URL with "Authorization: Bearer " + ts.APIKey
//
// With [WithStateFile], a file that cannot be loaded fails the test.
func NewTestServer(t testing.TB, opts ...Option) *TestServer {
	t.Helper()
	s, err := Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if testServerStarted != nil {
		testServerStarted(t, s)
	}
	// Cleanups run last first: the HTTP server closes, then deliveries
	// stop (running attempts get 10 s to finish).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("mockserver: closing deliveries: %v", err)
		}
	})
	// The connection time-outs are the ones HTTPServer sets.
	hs := httptest.NewUnstartedServer(s)
	cf := s.HTTPServer("")
	hs.Config.ReadHeaderTimeout, hs.Config.IdleTimeout = cf.ReadHeaderTimeout, cf.IdleTimeout
	hs.Start()
	// The dashboard's streams end first: hs.Close waits for every running
	// request, and a stream runs until its page closes.
	t.Cleanup(func() {
		s.CloseStreams()
		hs.Close()
	})
	return &TestServer{Server: s, URL: hs.URL + "/v1", APIKey: s.DefaultKey().Token, HTTP: hs}
}
