package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// apiBody is the body of a GET as the service sends it, for comparing
// with --json.
func apiBody(t *testing.T, base, path string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestContexts goes through a context's life: create, update, list (the
// table, --json, -q, every page), get, versions, export, delete.
func TestContexts(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)

	out := c.ok("contexts", "create", "--name", "Deploy runbook", "--content", "# Deploy\n\nship it", "--tag", "ops", "--tag", "a,b")
	m := regexp.MustCompile(`^Created (ctx_[a-z0-9]+) "Deploy runbook" \(version 1\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create printed %q", out)
	}
	id := m[1]
	stored, ok := ts.Context(id)
	if !ok || stored.Content != "# Deploy\n\nship it" || strings.Join(stored.Tags, "|") != "ops|a,b" {
		t.Fatalf("stored %+v", stored)
	}

	// The content from stdin, the id alone with -q.
	second := strings.TrimSpace(c.runIn("# Notes\n\nfrom stdin\n", "contexts", "create", "--name", "Notes", "--file", "-", "-q").out)
	if got, _ := ts.Context(second); got.Content != "# Notes\n\nfrom stdin\n" {
		t.Errorf("--file -: %q (id %q)", got.Content, second)
	}
	file := filepath.Join(t.TempDir(), "runbook.md")
	os.WriteFile(file, []byte("# Deploy\n\nship it today\n\n# Roll back\n\nundo\n"), 0o644)

	out = c.ok("contexts", "update", id, "--file", file, "--name", "Runbook")
	if out != "Updated "+id+" \"Runbook\": now at version 2\n" {
		t.Errorf("update printed %q", out)
	}
	c.ok("contexts", "update", id, "--clear-tags")
	if got, _ := ts.Context(id); got.Version != 3 || len(got.Tags) != 0 || got.Name != "Runbook" {
		t.Errorf("after the updates: %+v", got)
	}

	// The table, for people on a terminal: a header and a row per
	// context, aligned.
	c.tty, c.env["NO_COLOR"] = true, "1"
	out = c.ok("contexts", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !regexp.MustCompile(`^ID +NAME +TAGS +VERSION +UPDATED$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^`+id+` +Runbook +- +3 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(lines[1]) ||
		strings.Index(lines[1], " 3 ")+1 != strings.Index(lines[0], "VERSION") { // " 3 ": an id may end in 3
		t.Errorf("the table:\n%s", out)
	}
	out = c.ok("contexts", "versions", id)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "VERSION") || !regexp.MustCompile(`^2 +Runbook +ops,a,b +\S+ +user_\w+ +\+4 +Deploy, Roll back$`).MatchString(lines[2]) ||
		!regexp.MustCompile(`^3 +Runbook +- +\S+ +user_\w+ +0 +-$`).MatchString(lines[3]) {
		t.Errorf("versions:\n%s", out)
	}
	// For scripts (not a terminal), as gh prints them: no header, the
	// values tab-separated.
	c.tty = false
	if out := c.ok("contexts", "list"); !regexp.MustCompile(`^` + id + "\tRunbook\t-\t3\t\\S+Z\n" + second + "\tNotes\t-\t1\t\\S+Z\n$").MatchString(out) {
		t.Errorf("the table for scripts:\n%q", out)
	}
	if out := c.ok("contexts", "versions", id); !regexp.MustCompile("^1\tDeploy runbook\tops,a,b\t\\S+\tuser_\\w+\t\\+3\tDeploy\n2\t.*\tDeploy, Roll back\n3\tRunbook\t-\t\\S+\tuser_\\w+\t0\t-\n$").MatchString(out) {
		t.Errorf("versions for scripts:\n%q", out)
	}
	// --json is the API's body, byte for byte.
	if got, want := c.ok("contexts", "list", "--json"), apiBody(t, ts.URL, "/contexts"); got != want+"\n" && got != want {
		t.Errorf("list --json:\n%s\nthe API:\n%s", got, want)
	}
	if got, want := c.ok("contexts", "get", id, "--json"), apiBody(t, ts.URL, "/contexts/"+id); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("get --json:\n%s\nthe API:\n%s", got, want)
	}
	// A page of one, then every page: each page object in turn.
	r := c.run("contexts", "list", "--limit", "1")
	if strings.Count(r.out, "ctx_") != 1 || !strings.Contains(r.errOut, "--all lists every page") {
		t.Errorf("a page of one:\n%s\n%s", r.out, r.errOut)
	}
	out = c.ok("contexts", "list", "--limit", "1", "--all", "--json")
	dec := json.NewDecoder(strings.NewReader(out))
	var ids []string
	for dec.More() {
		var page contextsvc.ContextList
		if err := dec.Decode(&page); err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Data {
			ids = append(ids, x.ID)
		}
	}
	if strings.Join(ids, ",") != id+","+second {
		t.Errorf("--all --json pages gave %q", ids)
	}
	if out := c.ok("contexts", "list", "--all", "-q", "--limit", "1"); out != id+"\n"+second+"\n" {
		t.Errorf("--all -q: %q", out)
	}
	if out := c.ok("contexts", "list", "--tag", "nope"); out != "No contexts.\n" {
		t.Errorf("no match: %q", out)
	}

	out = c.ok("contexts", "get", id)
	if !strings.Contains(out, "Version  3\n") || !strings.HasSuffix(out, "\n# Deploy\n\nship it today\n\n# Roll back\n\nundo\n") {
		t.Errorf("get:\n%s", out)
	}

	if got, want := c.ok("contexts", "versions", id, "--json"), apiBody(t, ts.URL, "/contexts/"+id+"/versions"); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("versions --json:\n%s\nthe API:\n%s", got, want)
	}

	// Exports: to stdout, to a file, into a directory under the
	// service's name, an earlier version.
	if out := c.ok("contexts", "export", id, "--format", "md", "--version", "1", "-o", "-"); out != "# Deploy\n\nship it" {
		t.Errorf("export to stdout: %q", out)
	}
	dir := t.TempDir()
	pdf := filepath.Join(dir, "runbook.pdf")
	out = c.ok("contexts", "export", id, "--format", "pdf", "-o", pdf)
	if b, _ := os.ReadFile(pdf); !strings.HasPrefix(string(b), "%PDF-") || !strings.HasPrefix(out, "Wrote "+pdf+" (") {
		t.Errorf("export pdf: %q, file starts %q", out, b[:min(len(b), 8)])
	}
	c.ok("contexts", "export", id, "--format", "html", "-o", dir)
	if _, err := os.Stat(filepath.Join(dir, "Runbook-v3.html")); err != nil {
		t.Errorf("export into a directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %d files (a temporary file left?)", len(entries))
	}

	if out := c.ok("contexts", "delete", id); out != "Deleted "+id+"\n" {
		t.Errorf("delete: %q", out)
	}
	if _, ok := ts.Context(id); ok {
		t.Error("the context is still there")
	}
}

// TestErrorsOnStderr: an API error is one line on stderr with its
// status, type, message and request id, and exits 1; stdout is empty.
func TestErrorsOnStderr(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	for _, args := range [][]string{
		{"contexts", "get", "ctx_missing"},
		{"contexts", "get", "ctx_missing", "--json"},
		{"contexts", "export", "ctx_missing", "-o", filepath.Join(t.TempDir(), "x.pdf"), "--format", "pdf"},
	} {
		r := c.run(args...)
		if r.code != exitError || r.out != "" ||
			!regexp.MustCompile(`^Error: 404 not_found: [^\n]*ctx_missing[^\n]* \(request req_[a-z0-9]+\)\n$`).MatchString(r.errOut) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.errOut)
		}
	}
	r := c.run("contexts", "create", "--name", "")
	if r.code != exitError || !strings.Contains(r.errOut, "400 invalid_request") || !strings.Contains(r.errOut, "param name") {
		t.Errorf("a 400: exit %d, %q", r.code, r.errOut)
	}
	// A wrong key: 401, exit 1, where the key came from, and the key
	// never printed.
	base := c.env["CONTEXTSVC_BASE_URL"]
	c.env["CONTEXTSVC_API_KEY"] = testKey + "_wrong"
	r = c.run("contexts", "list")
	if r.code != exitError || !strings.Contains(r.errOut, "401 unauthorized") || strings.Contains(r.errOut, "_wrong") ||
		!strings.HasSuffix(r.errOut, ". The key came from CONTEXTSVC_API_KEY: set it to a key of the server at "+base+" (contextsvc mock prints one), or give --api-key.\n") {
		t.Errorf("a wrong key: exit %d, %q", r.code, r.errOut)
	}
	r = c.run("contexts", "list", "--api-key", "sk_test_given_wrong")
	if r.code != exitError || strings.Contains(r.errOut, "given_wrong") ||
		!strings.HasSuffix(r.errOut, ". The key given with --api-key was refused: give a key of the server at "+base+" (contextsvc mock prints one).\n") {
		t.Errorf("a wrong --api-key: exit %d, %q", r.code, r.errOut)
	}
	// A base URL that is not the service's: its 404 says so, and which
	// setting to check.
	notService := httptest.NewServer(http.NotFoundHandler())
	defer notService.Close()
	for _, tt := range []struct {
		args []string
		from string
	}{
		{[]string{"contexts", "list"}, "CONTEXTSVC_BASE_URL"},
		{[]string{"contexts", "get", "ctx_x"}, "CONTEXTSVC_BASE_URL"},
		{[]string{"contexts", "list", "--base-url", notService.URL + "/api/v1"}, "--base-url"},
	} {
		c.env["CONTEXTSVC_BASE_URL"], c.env["CONTEXTSVC_API_KEY"] = notService.URL+"/v1", testKey
		r = c.run(tt.args...)
		if r.code != exitError || !strings.HasPrefix(r.errOut, "Error: 404: ") || !strings.Contains(r.errOut, "(from "+tt.from+") does not look like the service's /v1") ||
			!strings.Contains(r.errOut, "Check "+tt.from+":") {
			t.Errorf("%q at a server that is not the service: exit %d, %q", tt.args, r.code, r.errOut)
		}
	}
	// Nothing listens: a network error, exit 1.
	c.env["CONTEXTSVC_BASE_URL"] = "http://127.0.0.1:1/v1"
	r = c.run("contexts", "list", "--timeout", "5s", "--plan", "business")
	if r.code != exitError || !strings.Contains(r.errOut, "connection refused") {
		t.Errorf("no server: exit %d, %q", r.code, r.errOut)
	}
}

// TestContentLimits: --file reads at most what a context may hold.
func TestContentLimits(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	big := strings.Repeat("x", maxContentBytes+1)
	r := c.runIn(big, "contexts", "create", "--name", "Big", "--file", "-")
	if r.code != exitUsage || !strings.Contains(r.errOut, "more than 1000000 bytes") {
		t.Errorf("too large: exit %d, %q", r.code, r.errOut)
	}
	if len(ts.Contexts("acme")) != 0 {
		t.Error("a context was created")
	}
	r = c.run("contexts", "create", "--name", "Missing", "--file", filepath.Join(t.TempDir(), "none.md"))
	if r.code != exitUsage || !strings.Contains(r.errOut, "no such file") {
		t.Errorf("a missing file: exit %d, %q", r.code, r.errOut)
	}
}

// TestListAllEnds: --all reads through the SDK's iterator, so a server
// whose pages never end (a cursor cycle, endless empty pages) ends the
// command with an error rather than running for ever; with --json, the
// pages accepted before are written and a page the SDK refuses is not.
func TestListAllEnds(t *testing.T) {
	t.Parallel()
	ctx := func(id string) string { return `{"id":"` + id + `","name":"n","version":1}` }
	ver := func(n string) string { return `{"contextId":"ctx_1","version":` + n + `}` }
	for _, tc := range []struct {
		name     string
		args     []string
		pages    map[string]string // cursor → the answer's body
		status   map[string]int    // cursor → the answer's status, 200 when absent
		wantErr  string            // in stderr
		wantJSON []string          // the page cursors written, in order
	}{
		{
			name: "a cursor cycle",
			args: []string{"contexts", "list", "--all", "-q"},
			pages: map[string]string{
				"":  `{"data":[` + ctx("ctx_1") + `],"hasMore":true,"nextCursor":"a"}`,
				"a": `{"data":[` + ctx("ctx_2") + `],"hasMore":true,"nextCursor":"b"}`,
				"b": `{"data":[` + ctx("ctx_3") + `],"hasMore":true,"nextCursor":"a"}`,
			},
			wantErr: "the same pages would follow for ever",
		},
		{
			name: "a cursor cycle, --json",
			args: []string{"contexts", "list", "--all", "--json"},
			pages: map[string]string{
				"":  `{"data":[` + ctx("ctx_1") + `],"hasMore":true,"nextCursor":"a"}`,
				"a": `{"data":[` + ctx("ctx_2") + `],"hasMore":true,"nextCursor":"a"}`,
			},
			wantErr:  "the same pages would follow for ever",
			wantJSON: []string{"", "a"},
		},
		{
			name: "endless empty pages of versions",
			args: []string{"contexts", "versions", "ctx_1", "--all"},
			pages: func() map[string]string {
				m := map[string]string{"": `{"data":[` + ver("1") + `],"hasMore":true,"nextCursor":"e0"}`}
				for i := range 40 {
					m[fmt.Sprint("e", i)] = fmt.Sprintf(`{"data":[],"hasMore":true,"nextCursor":"e%d"}`, i+1)
				}
				return m
			}(),
			wantErr: "empty pages in a row",
		},
		{
			name: "a refused page, --json",
			args: []string{"contexts", "versions", "ctx_1", "--all", "--json"},
			pages: map[string]string{
				"":  `{"data":[` + ver("1") + `],"hasMore":true,"nextCursor":"a"}`,
				"a": `{"data":[` + ver("1") + `],"hasMore":true,"nextCursor":"b"}`,
				"b": `{"data":[` + ver("0") + `],"hasMore":false}`,
			},
			wantErr:  "not from 1 on",
			wantJSON: []string{"", "a"},
		},
		{
			name: "an error answer, --json",
			args: []string{"contexts", "list", "--all", "--json"},
			pages: map[string]string{
				"":  `{"data":[` + ctx("ctx_1") + `],"hasMore":true,"nextCursor":"a"}`,
				"a": `{"error":{"code":"not_found","message":"no such cursor"}}`,
			},
			status:   map[string]int{"a": http.StatusNotFound},
			wantErr:  "no such cursor",
			wantJSON: []string{""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				cur := r.URL.Query().Get("cursor")
				body, ok := tc.pages[cur]
				if !ok {
					t.Errorf("a request for the cursor %q, which no page gave", cur)
					http.Error(w, "{}", http.StatusInternalServerError)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				if st := tc.status[cur]; st != 0 {
					w.WriteHeader(st)
				}
				io.WriteString(w, body)
			}))
			defer srv.Close()
			c := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}}
			r := c.run(tc.args...)
			if r.code != exitError || !strings.Contains(r.errOut, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.errOut, exitError, tc.wantErr)
			}
			var want string
			for _, cur := range tc.wantJSON {
				want += tc.pages[cur] + "\n"
			}
			if slices.Contains(tc.args, "--json") && r.out != want {
				t.Errorf("stdout:\n%s\nwant the pages accepted:\n%s", r.out, want)
			}
		})
	}
}

// TestMoreAfterTable: on a terminal, where stdout and stderr show
// together, the line that says more pages follow comes after the table.
func TestMoreAfterTable(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "A", "-q"))
	c.ok("contexts", "create", "--name", "B")
	c.ok("contexts", "update", id, "--name", "A2")
	for _, args := range [][]string{{"contexts", "list", "--limit", "1"}, {"contexts", "versions", id, "--limit", "1"}} {
		var term bytes.Buffer
		s := &streams{in: strings.NewReader(""), out: &term, err: &term, getenv: envMap{"NO_COLOR": "1", "CONTEXTSVC_BASE_URL": c.env["CONTEXTSVC_BASE_URL"],
			"CONTEXTSVC_API_KEY": testKey}.get, outTTY: true, errTTY: true}
		if code := run(t.Context(), args, s); code != exitOK ||
			!regexp.MustCompile(`^(ID|VERSION) .*\n\S+ .*\nMore (contexts|versions) follow: --all lists every page, --cursor \S+ the next\.\n$`).MatchString(term.String()) {
			t.Errorf("%q: exit %d\n%s", args, code, term.String())
		}
	}
}

// TestUpdateUnchanged: an update that changes nothing says so, and the
// context stays at its version.
func TestUpdateUnchanged(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Same", "--content", "# A", "--tag", "x", "-q"))
	for _, args := range [][]string{{"--name", "Same"}, {"--content", "# A"}, {"--tag", "x"}, {"--name", "Same", "--content", "# A", "--tag", "x"}} {
		out := c.ok(append([]string{"contexts", "update", id}, args...)...)
		if out != "Unchanged: "+id+" \"Same\" stays at version 1 (what was given is what it holds)\n" {
			t.Errorf("update %q: %q", args, out)
		}
	}
	if out := c.ok("contexts", "update", id, "--name", "Other"); out != "Updated "+id+" \"Other\": now at version 2\n" {
		t.Errorf("a change: %q", out)
	}
	if got, _ := ts.Context(id); got.Version != 2 {
		t.Errorf("version %d", got.Version)
	}
}
