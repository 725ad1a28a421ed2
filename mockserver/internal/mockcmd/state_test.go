package mockcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
)

// startRun runs the command in process with args until the returned stop
// is called; stop returns its exit code and its log.
func startRun(t *testing.T, args ...string) (base, key string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	stderr := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, stderr)
		pw.Close()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the command's log:\n%s", stderr.String())
		}
	})
	base, key = readReady(t, pr)
	go io.Copy(io.Discard, pr)
	return base, key, func() (int, string) {
		cancel()
		code := <-done
		return code, stderr.String()
	}
}

// TestRunStateFile runs the command twice on one -state-file: the second
// run has the first one's contexts (in two accounts), versions and
// webhook, and the first run's list cursor pages it. The file is mode
// 0600 and never shows in the log.
func TestRunStateFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	args := []string{"-state-file", path, "-key", "sk_test_a", "-key", "sk_test_b:pro:write:other", "-fake-clock"}
	base, key, stop := startRun(t, args...)
	ctx := t.Context()
	a, _ := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	b, _ := contextsvc.NewClient("sk_test_b", contextsvc.WithBaseURL(base))
	var ids []string
	for _, name := range []string{"One", "Two", "Three"} {
		c, err := a.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: name, Content: "# " + name + "\n\ntext", Tags: []string{"t"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	content := "# One\n\nmore text"
	if _, err := a.Contexts.Update(ctx, ids[0], &contextsvc.UpdateContextRequest{Content: &content}); err != nil {
		t.Fatal(err)
	}
	other, err := b.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Other account's"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
		URL: "https://hooks.example.com/in", Events: []contextsvc.EventType{contextsvc.EventContextDeleted}, Secret: "whsec_cmd_state",
	}); err != nil {
		t.Fatal(err)
	}
	page1, err := a.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 2})
	if err != nil || page1.NextCursor == "" {
		t.Fatalf("page 1: %+v %v", page1, err)
	}
	code, log1 := stop()
	if code != exitOK || !strings.Contains(log1, "state saved") || !strings.Contains(log1, `stateFile="`+path+" (written every 10s") {
		t.Fatalf("first run: exit %d\n%s", code, log1)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}

	base, key, stop = startRun(t, args...)
	a, _ = contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	b, _ = contextsvc.NewClient("sk_test_b", contextsvc.WithBaseURL(base))
	page2, err := a.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 2, Cursor: page1.NextCursor})
	if err != nil || len(page2.Data) != 1 || page2.Data[0].ID != ids[2] {
		t.Errorf("page 2 with the first run's cursor: %+v %v", page2, err)
	}
	versions, err := a.Contexts.ListVersions(ctx, ids[0], nil)
	if err != nil || len(versions.Data) != 2 || versions.Data[1].Content != content {
		t.Errorf("versions after restart: %+v %v", versions, err)
	}
	if got, err := b.Contexts.Get(ctx, other.ID); err != nil || got.Name != "Other account's" {
		t.Errorf("the other account's context after restart: %+v %v", got, err)
	}
	if _, err := a.Contexts.Get(ctx, other.ID); !errors.Is(err, contextsvc.ErrNotFound) {
		t.Errorf("the other account's context with the first key: %v", err)
	}
	res, err := http.Get(strings.TrimSuffix(base, "/v1") + "/_mock/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "https://hooks.example.com/in") {
		t.Errorf("webhooks after restart: %s", body)
	}
	code, log2 := stop()
	if code != exitOK || !strings.Contains(log2, "state loaded") || !strings.Contains(log2, "contexts=4 versions=5 webhooks=1") {
		t.Errorf("second run: exit %d\n%s", code, log2)
	}
	for _, secret := range []string{"whsec_cmd_state", "sk_test_a", "sk_test_b"} {
		if strings.Contains(log1+log2, secret) {
			t.Errorf("the log shows %s", secret)
		}
	}
}

// TestRunBadStateFile: a state file that cannot be loaded stops the start
// (exit 1) with a message naming it and what is wrong, and stays as it is.
func TestRunBadStateFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, msg string
	}{
		{"corrupt", `{"format":"contextsvc-mock-state","version":1,"accounts":[`, "the document ends early"},
		{"newer format", `{"format":"contextsvc-mock-state","version":9}`, "format version 9 is newer than this mock server reads (1)"},
		{"not a state", `{"openapi":"3.0.3"}`, `openapi: unknown field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := Run(t.Context(), []string{"-addr", "127.0.0.1:0", "-state-file", path}, &stdout, &stderr)
			if code != exitError || stdout.Len() != 0 || !strings.Contains(stderr.String(), "state file "+path+": ") ||
				!strings.Contains(stderr.String(), tc.msg) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tc.doc {
				t.Errorf("the refused file was changed: %q %v", got, err)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
				t.Errorf("the refused file's mode: %v", fi.Mode())
			}
		})
	}
}

// TestRunStateFileWriteFails: when the last write of the state file fails
// (its directory is gone), the command says the state is lost and exits 1.
func TestRunStateFileWriteFails(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.json")
	base, key, stop := startRun(t, "-state-file", path, "-state-interval", "1h")
	c, _ := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if _, err := c.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Lost"}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	code, log := stop()
	if code != exitError || !strings.Contains(log, "the state at shutdown is lost: the state file could not be written") ||
		!strings.Contains(log, "state file "+path+": cannot write it") {
		t.Errorf("exit %d\n%s", code, log)
	}
}

// TestRunStateFileSymlink: with one run on a state file, a second on a
// symbolic link to it is refused (exit 1, saying the file is in use),
// leaving no lock file of its own; the first run writes through its own
// link, which stays a link.
func TestRunStateFileSymlink(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path, link, link2 := filepath.Join(dir, "state.json"), filepath.Join(dir, "link.json"), filepath.Join(dir, "link2.json")
	for _, l := range []string{link, link2} {
		if err := os.Symlink("state.json", l); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	base, key, stop := startRun(t, "-state-file", link, "-state-interval", "1h")
	var stdout, stderr bytes.Buffer
	for _, other := range []string{path, link2} {
		stderr.Reset()
		if code := Run(t.Context(), []string{"-addr", "127.0.0.1:0", "-state-file", other}, &stdout, &stderr); code != exitError ||
			!strings.Contains(stderr.String(), "in use by another server: "+path+".lock is locked") {
			t.Errorf("a second run on %s: exit %d\n%s", other, code, stderr.String())
		}
	}
	c, _ := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if _, err := c.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Through the link"}); err != nil {
		t.Fatal(err)
	}
	if code, log := stop(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, log)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "link.json link2.json state.json state.json.lock" {
		t.Errorf("the directory holds %v", names)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer one: %v %v", fi, err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "Through the link") {
		t.Errorf("the link's target: %v\n%s", err, b)
	}
}

// TestRunFakeClockResumes: with -fake-clock and -state-file, a run
// advanced 27 hours and stopped leaves its clock in the file, and the
// next run's fake clock resumes there: it does not go back, and an update
// is not dated before the context's creation. A run on the real clock
// refuses that file, saying why.
func TestRunFakeClockResumes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	args := []string{"-fake-clock", "-state-file", path, "-state-interval", "1h"}
	admin := func(base, method, target, body string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, strings.TrimSuffix(base, "/v1")+target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, target, res.StatusCode, b)
		}
		var v struct{ Now time.Time }
		_ = json.Unmarshal(b, &v)
		return v.Now.Format(time.RFC3339Nano)
	}
	base, key, stop := startRun(t, args...)
	advanced := admin(base, http.MethodPost, "/_mock/clock/advance", `{"duration":"27h"}`)
	c, _ := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	created, err := c.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Made a day ahead"})
	if err != nil {
		t.Fatal(err)
	}
	if code, log := stop(); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, log)
	}

	base, key, stop = startRun(t, args...)
	if now := admin(base, http.MethodGet, "/_mock/clock", ""); now != advanced {
		t.Errorf("the clock after the restart reads %s, want %s (where it stopped)", now, advanced)
	}
	c, _ = contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	updated, err := c.Contexts.Update(t.Context(), created.ID, &contextsvc.UpdateContextRequest{Name: contextsvc.Ptr("Renamed")})
	if err != nil || updated.UpdatedAt.Before(created.CreatedAt) {
		t.Errorf("updated at %v, created at %v (%v)", updated.UpdatedAt, created.CreatedAt, err)
	}
	code, log := stop()
	if code != exitOK || !strings.Contains(log, "the fake clock resumes where the state file left it") {
		t.Errorf("second run: exit %d\n%s", code, log)
	}

	var stderr bytes.Buffer
	if code := Run(t.Context(), []string{"-addr", "127.0.0.1:0", "-state-file", path}, io.Discard, &stderr); code != exitError ||
		!strings.Contains(stderr.String(), "by a fake clock") || !strings.Contains(stderr.String(), "-fake-clock") {
		t.Errorf("a run on the real clock: exit %d\n%s", code, stderr.String())
	}
}
