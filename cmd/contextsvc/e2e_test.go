package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/cmd/internal/syncbuf"
	"github.com/contextsvc/contextsvc-go/cmd/internal/testproc"
)

// The tests here drive the command as a person would: each run is a
// process, against contextsvc mock started as a process on a free port.
// The test binary stands in for the command (TestMain runs its main when
// asCommand is in its environment), so the processes run the code the
// tests were built with, race detector included, and nothing is built
// again; binary gives it the name contextsvc, for a shell's PATH.

// asCommand, in a process's environment, makes the test binary the
// command.
const asCommand = "CONTEXTSVC_TEST_AS_COMMAND=1"

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	if slices.Contains(os.Environ(), asCommand) {
		main() // it exits
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary returns the path of the command: a link named contextsvc to the
// test binary, made once.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the command as processes")
	}
	binOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "contextsvc-e2e"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "contextsvc")
		binErr = os.Symlink(exe, binPath)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is a running process of the command whose stdout a test waits on.
type proc struct {
	t           *testing.T
	cmd         *exec.Cmd
	out, errOut *syncbuf.Buffer
	done        chan struct{}
}

// start starts the command with args and env (added to the process's,
// less any CONTEXTSVC_ variable of the test's own environment).
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	p := &proc{t: t, cmd: cmd, out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	testproc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		testproc.KillGroup(cmd.Process.Pid)
	})
	return p
}

// cleanEnv is the test's environment without the variables the command
// reads, so that only what a test gives counts.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONTEXTSVC_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return append(env, asCommand)
}

// wait waits for text on stdout; the process ending first fails the test.
func (p *proc) wait(text string) {
	p.t.Helper()
	select {
	case <-p.out.Seen(text):
	case <-p.done:
		select {
		case <-p.out.Seen(text):
		default:
			p.t.Fatalf("%s ended (%v) before printing %q\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, p.cmd.ProcessState, text, p.out, p.errOut)
		}
	}
}

// interrupt sends Ctrl-C's signal and returns the exit code.
func (p *proc) interrupt() int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		p.t.Fatal(err)
	}
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// startMock starts contextsvc mock on a free port and returns the
// environment that points the command at it.
func startMock(t *testing.T, args ...string) (*proc, []string) {
	t.Helper()
	p := start(t, nil, append([]string{"mock", "-addr", "127.0.0.1:0"}, args...)...)
	// The mock prints both lines in one write.
	p.wait("CONTEXTSVC_API_KEY=")
	var env []string
	for line := range strings.Lines(p.out.String()) {
		if kv, ok := strings.CutPrefix(line, "export CONTEXTSVC_"); ok {
			env = append(env, "CONTEXTSVC_"+strings.TrimSpace(kv))
		}
	}
	if len(env) != 2 {
		t.Fatalf("contextsvc mock printed:\n%s", p.out)
	}
	return p, env
}

// execCmd runs the command to its end.
func execCmd(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
}

func execOK(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := execCmd(t, env, args...)
	if r.code != 0 {
		t.Fatalf("contextsvc %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.out, r.errOut)
	}
	return r.out
}

// TestCommandLine is a person's session with the built command against
// contextsvc mock: contexts created, updated, listed and exported, an
// error, a typo, completion, listen with trigger, a snapshot served by a
// second mock, and the contract checks.
func TestCommandLine(t *testing.T) {
	t.Parallel()
	mock, env := startMock(t, "-key", "sk_test_e2e:unlimited")

	id := strings.TrimSpace(execOK(t, env, "contexts", "create", "--name", "Deploy runbook", "--content", "# Deploy\n\nShip the main branch.", "--tag", "ops", "-q"))
	if !regexp.MustCompile(`^ctx_[a-z0-9]{20,}$`).MatchString(id) {
		t.Fatalf("create -q printed %q", id)
	}
	if out := execOK(t, env, "contexts", "update", id, "--content", "# Deploy\n\nShip the main branch.\n\n# Roll back\n\nRedeploy the last tag."); out != "Updated "+id+" \"Deploy runbook\": now at version 2\n" {
		t.Errorf("update: %q", out)
	}
	var page contextsvc.ContextList
	if err := json.Unmarshal([]byte(execOK(t, env, "contexts", "list", "--json")), &page); err != nil || len(page.Data) != 1 || page.Data[0].Version != 2 {
		t.Errorf("list --json: %+v %v", page, err)
	}
	// Not a terminal: the rows alone, tab-separated.
	if out := execOK(t, env, "contexts", "list"); !regexp.MustCompile(`^` + id + "\tDeploy runbook\tops\t2\t\\S+\n$").MatchString(out) {
		t.Errorf("list:\n%s", out)
	}
	if out := execOK(t, env, "contexts", "versions", id); !regexp.MustCompile("^1\tDeploy runbook\t.*\n2\tDeploy runbook\t.*\tRoll back\n$").MatchString(out) {
		t.Errorf("versions:\n%s", out)
	}

	// The PDF, read back.
	pdf := filepath.Join(t.TempDir(), "runbook.pdf")
	execOK(t, env, "contexts", "export", id, "--format", "pdf", "-o", pdf)
	_, lookErr := exec.LookPath("pdftotext")
	testproc.Require(t, "pdftotext", "apt-get install poppler-utils", lookErr)
	text, err := exec.Command("pdftotext", pdf, "-").Output()
	if err != nil || !strings.Contains(string(text), "Ship the main branch.") || !strings.Contains(string(text), "Redeploy the last tag.") {
		t.Errorf("pdftotext: %v\n%s", err, text)
	}

	// A 404, a typo, completion.
	r := execCmd(t, env, "contexts", "get", "ctx_doesnotexist")
	if r.code != 1 || r.out != "" || !regexp.MustCompile(`^Error: 404 not_found: .*ctx_doesnotexist.* \(request req_[a-z0-9]+\)\n$`).MatchString(r.errOut) {
		t.Errorf("a 404: exit %d, %q, %q", r.code, r.out, r.errOut)
	}
	r = execCmd(t, env, "contexts", "lsit")
	if r.code != 2 || !strings.Contains(r.errOut, "Did you mean this?\n\tlist\n") {
		t.Errorf("a typo: exit %d, %q", r.code, r.errOut)
	}
	if out := execOK(t, nil, "completion", "bash"); !strings.Contains(out, "__start_contextsvc") {
		t.Errorf("completion bash: %.200s", out)
	}

	// listen forwards what trigger fires to the app, signed with --secret.
	got := make(chan *contextsvc.Event, 4)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ev, err := contextsvc.ConstructEvent(body, req.Header.Get(contextsvc.DefaultSignatureHeader), "whsec_e2e_secret")
		if err != nil {
			t.Errorf("the app: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got <- ev
	}))
	defer app.Close()
	// The secret from the environment: out of the process list, and not
	// printed.
	listen := start(t, append(env, "CONTEXTSVC_WEBHOOK_SECRET=whsec_e2e_secret"), "listen", "--forward-to", app.URL+"/webhooks")
	listen.wait("Ready.")
	if out := execOK(t, env, "trigger", "context.updated"); !strings.HasPrefix(out, "Triggered context.updated: event evt_") {
		t.Errorf("trigger: %q", out)
	}
	ev := <-got
	if d, err := ev.ContextUpdated(); err != nil || ev.Type != contextsvc.EventContextUpdated || d.ContextID != id || d.Version != 2 {
		t.Errorf("the app got %s %+v %v", ev.Type, d, err)
	}
	listen.wait(ev.ID)
	if !deliveryLine("context.updated", ev.ID, "1", "signature verified", "200 OK").MatchString(listen.out.String()) {
		t.Errorf("listen's line:\n%s", listen.out)
	}
	webhookID := regexp.MustCompile(`Webhook (wh_[a-z0-9]+) registered`).FindStringSubmatch(listen.out.String())
	if code := listen.interrupt(); code != 0 || webhookID == nil || !strings.Contains(listen.out.String(), "Removed the webhook "+webhookID[1]) ||
		strings.Contains(listen.out.String()+listen.errOut.String(), "whsec_e2e_secret") {
		t.Errorf("listen after Ctrl-C: exit %d\n%s\n%s", code, listen.out, listen.errOut)
	}

	// A snapshot, served by a second mock.
	state := filepath.Join(t.TempDir(), "state.json")
	if out := execOK(t, env, "snapshot", "-o", state); !strings.Contains(out, "1 context, 2 versions, in the account default") {
		t.Errorf("snapshot: %q", out)
	}
	second, env2 := startMock(t, "-state-file", state)
	var versions contextsvc.VersionList
	if err := json.Unmarshal([]byte(execOK(t, env2, "contexts", "versions", id, "--json")), &versions); err != nil || len(versions.Data) != 2 ||
		versions.Data[1].Content != "# Deploy\n\nShip the main branch.\n\n# Roll back\n\nRedeploy the last tag." || versions.Data[0].Content != "# Deploy\n\nShip the main branch." {
		t.Errorf("the second mock's versions: %+v %v", versions, err)
	}
	if code := second.interrupt(); code != 0 {
		t.Errorf("the second mock: exit %d\n%s", code, second.errOut)
	}

	// The contract checks, against the mock.
	r = execCmd(t, env, "conform", "-plan", "unlimited", "-skip-retry", "-quiet")
	if r.code != 0 || !strings.Contains(r.out, "everything the run checked follows the contract") {
		t.Errorf("conform: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}

	if code := mock.interrupt(); code != 0 {
		t.Errorf("the mock: exit %d\n%s", code, mock.errOut)
	}
}

// TestDocsSession runs the session of docs/cli.md as a reader would
// paste it, against contextsvc mock started as the guide says (on a free
// port instead of 8080).
func TestDocsSession(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(marker string) string {
		m := regexp.MustCompile("(?s)<!-- session: " + marker + " -->\n```sh\n(.*?)```").FindSubmatch(doc)
		if m == nil {
			t.Fatalf("docs/cli.md has no sh block after <!-- session: %s -->", marker)
		}
		return string(m[1])
	}
	mockLine := strings.TrimSpace(block("mock"))
	args := strings.Fields(mockLine)
	if len(args) < 2 || args[0] != "contextsvc" || args[1] != "mock" || !strings.Contains(mockLine, "-addr 127.0.0.1:8080") {
		t.Fatalf("the mock's line: %q", mockLine)
	}
	mockArgs := strings.Fields(strings.Replace(mockLine, "-addr 127.0.0.1:8080", "-addr 127.0.0.1:0", 1))[1:]
	mock := start(t, nil, mockArgs...)
	mock.wait("CONTEXTSVC_API_KEY=")
	base := regexp.MustCompile(`CONTEXTSVC_BASE_URL=http://(127\.0\.0\.1:\d+)/v1`).FindStringSubmatch(mock.out.String())
	if base == nil {
		t.Fatalf("the mock printed:\n%s", mock.out)
	}

	session := strings.ReplaceAll(block("commands"), "127.0.0.1:8080", base[1])
	dir := t.TempDir()
	sh := exec.Command("bash", "-euo", "pipefail", "-c", session)
	sh.Dir = dir
	sh.Env = append(cleanEnv(), "PATH="+filepath.Dir(binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the session: %v\n%s", err, out)
	}
	for _, want := range []string{"now at version 2", "Deploy runbook", "Roll back", "Wrote runbook.pdf", "-v2.html (",
		"Error: runbook.pdf exists: it was left as it is (--force replaces it)\nrunbook.pdf kept\n", `"hasMore":false`, "Wrote local.json: 1 context, 2 versions",
		"Triggered context.updated: event evt_", " (with your data)\n", "\tcontext.updated\twh_", "\tpending\t1\t", "Resent evt_", "Advanced the mock's clock by 1m0s to ",
		" delivery attempts ran", "Chaos: on since ", ", seed=42,duplicate=0.2,delay=2s, seed 42.\n", "Chaos: off.\n", "\thttp://127.0.0.1:9/hooks\tcontext.updated\tyes\t",
		"Deleted the webhook wh_", "* GET http://127.0.0.1:", "> Authorization: Bearer [redacted]\n", "< 200 OK in ", "Reset the mock: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session's output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"runbook.pdf", "local.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	mock.interrupt()
}
