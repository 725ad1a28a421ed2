package mockserver_test

import (
	"context"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestWithMockServer holds the docs' "mock server in tests" snippet: two
// lines give a running server and a client pointed at it, and the server's
// Go API shows what was stored.
func TestWithMockServer(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL))
	if err != nil {
		t.Fatal(err)
	}

	created, err := client.Contexts.Create(context.Background(), &contextsvc.CreateContextRequest{Name: "Runbook"})
	if err != nil {
		t.Fatal(err)
	}
	stored, ok := ts.Context(created.ID)
	if !ok || stored.Name != "Runbook" || stored.Version != 1 {
		t.Fatalf("stored = %+v, %v; want the created context at version 1", stored, ok)
	}
}
