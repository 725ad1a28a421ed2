package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestSnapshotLimit: against a server whose contexts, or one context's
// versions, never end, snapshot stops once the answers pass --max-size,
// writes nothing, and has read no more than the limit and a page.
func TestSnapshotLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, tt := range []struct {
		name     string
		versions bool // the contexts end, ctx_endless's versions do not
	}{
		{"endless contexts", false},
		{"endless versions", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := &endlessServer{perPage: 100, content: strings.Repeat("x", 1000)}
			var handler http.Handler = srv
			if tt.versions {
				handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/v1/contexts" {
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprint(w, `{"data":[{"id":"ctx_endless","name":"n","version":1}],"hasMore":false}`)
						return
					}
					srv.ServeHTTP(w, r)
				})
			}
			ts := httptest.NewServer(handler)
			defer ts.Close()
			c := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": ts.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}}
			dir := t.TempDir()
			path := filepath.Join(dir, "snap.json")
			r := c.run("snapshot", "-o", path, "--max-size", "1MiB")
			if r.code != exitError || r.out != "" ||
				r.errOut != "Error: the server's answers came to more than 1MiB, the snapshot's limit (--max-size raises it): nothing was written\n" {
				t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
			}
			if got := dirFiles(t, dir); len(got) != 0 {
				t.Errorf("the directory holds %q", got)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.pages > 0 && srv.pages > limit/srv.pageBytes+2 {
				t.Errorf("%d pages of %d bytes read for a limit of %d", srv.pages, srv.pageBytes, limit)
			}
		})
	}
}

// TestSnapshotKeepsFiles: a file that is there is replaced only with
// --force, and without it nothing is asked of the server.
func TestSnapshotKeepsFiles(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	c.ok("contexts", "create", "--name", "A")
	path := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(path, []byte("mine"), 0o600)
	r := c.run("snapshot", "-o", path)
	if b, _ := os.ReadFile(path); r.code != exitError || string(b) != "mine" || !strings.Contains(r.errOut, path+" exists: it was left as it is (--force replaces it)") {
		t.Errorf("exit %d, %q; the file holds %q", r.code, r.errOut, b)
	}
	c.ok("snapshot", "-o", path, "--force")
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"contextsvc-mock-state"`) {
		t.Errorf("--force: the file holds %.100q", b)
	}
	if r := c.run("snapshot", "-o", path, "--max-size", "lots"); r.code != exitUsage || !strings.Contains(r.errOut, `"lots" is not a size`) {
		t.Errorf("a bad size: exit %d, %q", r.code, r.errOut)
	}
}

// TestWriteErrorsNameTheTarget: a file that cannot be written is named in
// the error, not the temporary file it was being written through.
func TestWriteErrorsNameTheTarget(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "A", "-q"))
	dir := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"snapshot", "-o", filepath.Join(dir, "x.json")},
		{"contexts", "export", id, "-o", filepath.Join(dir, "x.md")},
	} {
		r := c.run(args...)
		target := args[len(args)-1]
		if r.code != exitError || r.errOut != "Error: cannot write "+target+": no such file or directory\n" {
			t.Errorf("%q: exit %d, %q", args, r.code, r.errOut)
		}
	}
}
