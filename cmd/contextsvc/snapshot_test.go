package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestSnapshot copies every context with all its versions, over several
// pages, into a state file a mock started on it serves: the same ids,
// names, content, tags and versions, their authors and changes, in the
// account default or --account; webhooks are left out and it says so.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	for i, name := range []string{"One", "Two", "Three"} {
		id := strings.TrimSpace(c.ok("contexts", "create", "--name", name, "--content", "# "+name+"\n\ntext", "--tag", "t"+name, "-q"))
		for v := range i + 1 {
			c.ok("contexts", "update", id, "--content", "# "+name+"\n\nversion "+strings.Repeat("x", v+2))
		}
	}
	gone := strings.TrimSpace(c.ok("contexts", "create", "--name", "Gone", "-q"))
	c.ok("contexts", "delete", gone)
	c.ok("webhooks", "register", "--url", "http://127.0.0.1:1/", "--event", "context.created")

	dir := t.TempDir()
	for _, account := range []string{mockserver.DefaultAccount, "staging"} {
		path := filepath.Join(dir, account+".json")
		args := []string{"snapshot", "-o", path}
		if account != mockserver.DefaultAccount {
			args = append(args, "--account", account)
		}
		out := c.ok(args...)
		for _, want := range []string{"Wrote " + path + ": 3 contexts, 9 versions, in the account " + account + ".\n",
			"Webhooks are left out: the API never returns their secrets", "Serve it with: contextsvc mock -state-file " + path} {
			if !strings.Contains(out, want) {
				t.Errorf("snapshot printed %q, lacking %q", out, want)
			}
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the file: %v %v", fi, err)
		}

		// A mock started on the file, as contextsvc mock -state-file.
		srv, err := mockserver.Open(mockserver.WithKey(mockserver.Key{Token: "sk_other", Account: account}), mockserver.WithStateFile(path))
		if err != nil {
			t.Fatal(err)
		}
		got := srv.Contexts(account)
		srv.Close(t.Context())
		want := ts.Contexts("acme")
		for i := range want {
			want[i].Account = account
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateApproxTime(0)); diff != "" {
			t.Errorf("--account %s: the mock serves (-source +loaded):\n%s", account, diff)
		}
		if len(srv.Webhooks()) != 0 {
			t.Error("a webhook was copied")
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 { // two files, and their mocks' locks
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %q (a temporary file left?)", names)
	}
}

// TestSnapshotRefused: what the mock would not load is not written, and
// the error names the context.
func TestSnapshotRefused(t *testing.T) {
	t.Parallel()
	// A server whose versions' authors are not user ids of the form
	// the mock takes: the SDK reads them, the mock would refuse them.
	c, ts := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Odd", "-q"))
	doc := `{"format":"contextsvc-mock-state","version":1,"accounts":[{"id":"acme","contexts":[{"id":"` + id + `","versions":[
{"version":1,"name":"Odd","createdAt":"2026-11-21T12:00:00.000Z","createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}]}]}]}`
	if err := ts.LoadState(strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	// The author becomes one the mock refuses on its way to the command.
	c.env["CONTEXTSVC_BASE_URL"] = rewritingProxy(t, ts.URL, "user_aaaaaaaaaaaaaaaaaaaaaaaa", "alice@example.com")
	r := c.run("snapshot", "-o", path)
	if r.code != exitError || !strings.Contains(r.errOut, "the mock could not load the snapshot, so it was not written: the context "+id+` ("Odd").versions[0].createdBy`) {
		t.Errorf("exit %d, %q", r.code, r.errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the file was written: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Errorf("%d files left", len(entries))
	}
}
