package mockserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// A test seeds its fixtures with a state document: here a context of two
// versions, written by hand with only the fields it needs (its changes
// are worked out as the updates would have made them).
func ExampleServer_LoadState() {
	srv := mockserver.New(mockserver.WithKey(mockserver.Key{Token: "sk_test", Account: "acme"}))
	err := srv.LoadState(strings.NewReader(`{"format":"contextsvc-mock-state","version":1,
"accounts":[{"id":"acme","contexts":[{"id":"ctx_fixture0000000000000000","versions":[
 {"version":1,"name":"Runbook","content":"# Deploy\n\nship it","createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_fixture00000000000000000"},
 {"version":2,"name":"Runbook","content":"# Deploy\n\nship it today","createdAt":"2026-11-22T12:00:00.000Z","createdBy":"user_fixture00000000000000000"}]}]}]}`))
	if err != nil {
		panic(err)
	}
	c, _ := srv.Context("ctx_fixture0000000000000000")
	fmt.Println(c.Name, "version", c.Version, "changed", c.Versions[1].Changes.SectionsModified, "by", c.Versions[1].Changes.WordCountDelta, "word")

	// A document that breaks a rule changes nothing, and says where.
	err = srv.LoadState(strings.NewReader(`{"format":"contextsvc-mock-state","version":1,
"accounts":[{"id":"acme","contexts":[{"id":"ctx_fixture0000000000000000","versions":[{"version":1,"name":"","createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_fixture00000000000000000"}]}]}]}`))
	fmt.Println(err)
	// Output:
	// Runbook version 2 changed [Deploy] by 1 word
	// mockserver: state document: accounts[0].contexts[0].versions[0].name: name must be 1 to 200 characters, got 0
}

// A server with a state file keeps its contexts, webhooks and pending
// deliveries across a restart: Close writes the file, and Open reads it.
func ExampleWithStateFile() {
	dir, _ := os.MkdirTemp("", "state")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.json")
	key := mockserver.WithKey(mockserver.Key{Token: "sk_test", Account: mockserver.DefaultAccount}) // the same account at every start

	srv, err := mockserver.Open(key, mockserver.WithStateFile(path))
	if err != nil {
		panic(err) // the file exists but cannot be loaded: the error says why
	}
	hs := httptest.NewServer(srv)
	req, _ := http.NewRequest("POST", hs.URL+"/v1/contexts", strings.NewReader(`{"name":"Kept"}`))
	req.Header.Set("Authorization", "Bearer sk_test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	hs.Close()
	if err := srv.Close(context.Background()); err != nil { // the last write
		panic(err)
	}

	again, err := mockserver.Open(key, mockserver.WithStateFile(path))
	if err != nil {
		panic(err)
	}
	fi, _ := os.Stat(path)
	fmt.Println(again.Contexts(mockserver.DefaultAccount)[0].Name, fi.Mode().Perm())
	// Output: Kept -rw-------
}

// TestWithStateFileInATest is a state file as a test uses one, whole as
// the guide shows it: the key names its account, so the second start
// reaches what the first one wrote.
func TestWithStateFileInATest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	key := mockserver.WithKey(mockserver.Key{Token: "sk_test", Account: mockserver.DefaultAccount}) // the same account at every start
	srv, err := mockserver.Open(key, mockserver.WithStateFile(path))
	if err != nil {
		t.Fatal(err) // the file exists but cannot be loaded: the error says why
	}
	hs := httptest.NewServer(srv)
	client, err := contextsvc.NewClient("sk_test", contextsvc.WithBaseURL(hs.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Kept"})
	hs.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(t.Context()); err != nil { // the last write
		t.Fatal(err)
	}

	again, err := mockserver.Open(key, mockserver.WithStateFile(path))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	if c, ok := again.Context(created.ID); !ok || c.Name != "Kept" || c.Account != mockserver.DefaultAccount {
		t.Errorf("after a restart, %s is %+v (found: %v); want the context Kept in the account %s", created.ID, c, ok, mockserver.DefaultAccount)
	}
}
