package mockcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
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
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/interrupt"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
	"github.com/google/go-cmp/cmp"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	st, err := parseFlags([]string{
		"-addr", "127.0.0.1:0", "-key", "sk_a", "-key", "sk_b:free:read", "-key", "sk_c:enterprise=600/20",
		"-key", "sk_d:pro:write:acme", "-key", "sk_e:free:read:acme",
		"-retry-schedule", "1s, 5s,30s,2m,24m", "-fake-clock", "-delivery-timeout", "2s", "-https-only",
		"-admin=false", "-log-level", "WARN", "-shutdown-timeout", "3s", "-history-limit", "50",
		"-read-header-timeout", "4s", "-read-body-timeout", "5s", "-idle-timeout", "6s", "-delivery-backlog", "7",
		"-state-file", filepath.Join(t.TempDir(), "state.json"), "-state-interval", "8s",
		"-retry-limit", "8",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st.addr != "127.0.0.1:0" || !st.fakeClock || st.deliveryTimeout != 2*time.Second || !st.httpsOnly || st.admin ||
		st.logLevel != slog.LevelWarn || st.shutdownTimeout != 3*time.Second || st.historyLimit != 50 ||
		st.headerTimeout != 4*time.Second || st.bodyTimeout != 5*time.Second || st.idleTimeout != 6*time.Second ||
		st.deliveryBacklog != 7 || st.retryLimit != 8 || !strings.HasSuffix(st.stateFile, "state.json") || st.stateInterval != 8*time.Second {
		t.Errorf("settings %+v", st)
	}
	want := []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute, 24 * time.Minute}
	if diff := cmp.Diff(want, st.schedule); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if len(st.keys) != 5 || st.keys[1].Plan != mockserver.PlanFree || st.keys[1].Scope != mockserver.ScopeRead ||
		st.keys[2].PerMinute != 600 || st.keys[2].Burst != 20 || st.keys[4].Scope != mockserver.ScopeRead {
		t.Fatalf("keys %v", st.keys)
	}
	// The settings make a valid server (Open refuses a bad key). Keys
	// without an account share "default"; those naming one share it. The
	// ids are the names given and the users are derived from them, so both
	// are the same at every start.
	srv := mockserver.New(st.options(slog.New(slog.DiscardHandler))...)
	defer srv.Close(t.Context()) // it holds its state file
	if srv.DefaultKey().Token != "sk_a" {
		t.Errorf("first key %v", srv.DefaultKey())
	}
	for i, k := range srv.Keys() {
		want := mockserver.DefaultAccount
		if i >= 3 {
			want = "acme"
		}
		if k.Account != want || k.User != mockrules.AccountUser(want) {
			t.Errorf("key %d: %v, want account %s and its user %s", i, k, want, mockrules.AccountUser(want))
		}
	}
	if got := accountNames(srv.Keys()); got != "default,acme" {
		t.Errorf("accountNames = %q", got)
	}

	st, err = parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st.addr != "127.0.0.1:8080" || !st.admin || st.fakeClock || st.logLevel != slog.LevelInfo ||
		st.deliveryTimeout != mockserver.DefaultDeliveryTimeout || len(st.keys) != 1 ||
		st.historyLimit != mockserver.DefaultHistoryLimit || st.headerTimeout != mockserver.DefaultReadHeaderTimeout ||
		st.bodyTimeout != mockserver.DefaultReadBodyTimeout || st.idleTimeout != mockserver.DefaultIdleTimeout ||
		st.deliveryBacklog != mockserver.DefaultDeliveryBacklog || st.retryLimit != mockserver.DefaultRetryLimit || st.stateFile != "" || st.stateInterval != mockserver.DefaultStateInterval ||
		!cmp.Equal(st.schedule, mockserver.DefaultRetrySchedule()) {
		t.Errorf("defaults %+v", st)
	}
	// Without -key: one random key, in the account every such run shares.
	if k := st.keys[0]; !strings.HasPrefix(k.Token, "sk_test_") || len(k.Token) < 28 || k.Account != mockserver.DefaultAccount ||
		k.Plan != mockserver.PlanBusiness || k.Scope != mockserver.ScopeWrite {
		t.Errorf("the key made without -key: %v", k)
	}
	if again, _ := parseFlags(nil, io.Discard); again.keys[0].Token == st.keys[0].Token {
		t.Error("two runs without -key made the same token")
	}
	if st, _ := parseFlags([]string{"-retry-schedule", ""}, io.Discard); st == nil || st.schedule == nil || len(st.schedule) != 0 {
		t.Errorf("empty schedule: %+v", st)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-key", "k:gold"}, `unknown plan "gold"`},
		{[]string{"-key", "k:pro:admin"}, `unknown scope "admin"`},
		{[]string{"-key", ""}, "empty key"},
		{[]string{"-key", "k", "-key", "k:free"}, "-key #2: the same key is given twice (as -key #1 too)"},
		{[]string{"-key", "a", "-key", "k:free", "-key", "k:pro:read:acme"}, "-key #3: the same key is given twice (as -key #2 too)"},
		{[]string{"-key", "k::read"}, "-key #1: the plan (part 2 of KEY:plan:scope:account) is empty"},
		{[]string{"-key", "k:"}, "-key #1: the plan (part 2 of KEY:plan:scope:account) is empty"},
		{[]string{"-key", "k:pro::acme"}, "-key #1: the scope (part 3 of KEY:plan:scope:account) is empty"},
		{[]string{"-key", "sk test"}, "-key #1: the key contains spaces or control characters"},
		{[]string{"-key", " sk_test:free"}, "-key #1: the key contains spaces or control characters"},
		{[]string{"-key", "k:enterprise=0/1"}, "enterprise plan"},
		{[]string{"-retry-schedule", "1s,soon"}, `"soon" is not a duration`},
		{[]string{"-retry-schedule", "-1s"}, "negative"},
		{[]string{"-log-level", "loud"}, "debug, info, warn or error"},
		{[]string{"-delivery-timeout", "0s"}, "must be positive"},
		{[]string{"-delivery-timeout", "ten"}, "invalid value"},
		{[]string{"-read-body-timeout", "0s"}, "must be positive"},
		{[]string{"-idle-timeout", "-1s"}, "must be positive"},
		{[]string{"-state-interval", "0s"}, "-state-interval must be positive"},
		{[]string{"-upstream-timeout", "0s"}, "-upstream-timeout and -upstream-idle-timeout must be positive"},
		{[]string{"-upstream-idle-timeout", "-1s"}, "-upstream-timeout and -upstream-idle-timeout must be positive"},
		{[]string{"-history-limit", "0"}, "-history-limit, -delivery-backlog and -retry-limit must be positive"},
		{[]string{"-delivery-backlog", "-5"}, "-history-limit, -delivery-backlog and -retry-limit must be positive"},
		{[]string{"-retry-limit", "0"}, "-history-limit, -delivery-backlog and -retry-limit must be positive"},
		{[]string{"-key", "k:pro:write:acme/eu"}, "-key #1: an account may hold only A-Z, a-z, 0-9"},
		{[]string{"-key", "k:pro:write:"}, "-key #1: the account (part 4 of KEY:plan:scope:account) is empty"},
		{[]string{"-key", "k:pro:write:acme:x"}, "more than KEY:plan:scope:account"},
		{[]string{"serve"}, `unexpected argument "serve"`},
		{[]string{"-upstream", "https://api.example.com/v1", "-key", "sk_a"}, "-key and -state-file do not go with it"},
		{[]string{"-upstream", "https://api.example.com/v1", "-state-file", "s.json"}, "-key and -state-file do not go with it"},
		{[]string{"-upstream", "https://api.example.com"}, "-upstream: the upstream https://api.example.com must end in /v1"},
		{[]string{"-upstream", "ftp://api.example.com/v1"}, "must be an http or https URL"},
		{[]string{"-upstream", "https://bot:pw_secret@api.example.com/v1"}, "https://xxxxx@api.example.com/v1 must not carry credentials"},
	} {
		var stderr bytes.Buffer
		if code := Run(t.Context(), tc.args, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
	// A refused -key never echoes its token (the flag package would quote
	// the whole value if Set refused it).
	var keyErr bytes.Buffer
	for _, spec := range []string{"sk_secret_token_123:gold", "sk_secret_token_123:pro:write:no/slash", "sk_secret_token_123:pro:write:" + strings.Repeat("a", 65)} {
		keyErr.Reset()
		if code := Run(t.Context(), []string{"-key", "sk_ok", "-key", spec}, io.Discard, &keyErr); code != exitUsage ||
			strings.Contains(keyErr.String(), "sk_secret_token_123") || !strings.Contains(keyErr.String(), "-key #2") {
			t.Errorf("bad -key: exit %d, stderr %q; want exit %d, the flag named by position, no token", code, keyErr.String(), exitUsage)
		}
	}
	// An address it cannot listen on is no usage error: exit 1, said why.
	var stderr bytes.Buffer
	if code := Run(t.Context(), []string{"-addr", "127.0.0.1:99999"}, io.Discard, &stderr); code != exitError || !strings.Contains(stderr.String(), "cannot listen") {
		t.Errorf("bad -addr: exit %d, stderr %q", code, stderr.String())
	}
	// The help goes to stdout, each flag with two dashes; a mistake is one
	// line and where the help is, not the help.
	var stdout bytes.Buffer
	stderr.Reset()
	if code := Run(t.Context(), []string{"-h"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "\n  --retry-schedule delays\n") ||
		strings.Contains(stdout.String(), "\n  -r") || stderr.Len() != 0 {
		t.Errorf("-h: exit %d, %q, %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := Run(t.Context(), []string{"-chaos", "duplicate=2"}, &stdout, &stderr); code != exitUsage || stdout.Len() != 0 ||
		stderr.String() != "contextsvc-mock: invalid value \"duplicate=2\" for flag -chaos: duplicate: 2 is not a probability from 0 to 1\nRun 'contextsvc-mock --help' for usage.\n" {
		t.Errorf("-chaos duplicate=2: exit %d, %q", code, stderr.String())
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// readReady reads the two lines the command prints on start.
func readReady(t testing.TB, r io.Reader) (baseURL, key string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for _, want := range []string{"export CONTEXTSVC_BASE_URL=", "export CONTEXTSVC_API_KEY="} {
		if !sc.Scan() {
			t.Fatalf("stdout ended before %s: %v", want, sc.Err())
		}
		v, ok := strings.CutPrefix(sc.Text(), want)
		if !ok {
			t.Fatalf("stdout line %q, want %s…", sc.Text(), want)
		}
		if want == "export CONTEXTSVC_BASE_URL=" {
			baseURL = v
		} else {
			key = v
		}
	}
	return baseURL, key
}

// TestRunInProcess serves with run until its context ends.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"-addr", "127.0.0.1:0", "-fake-clock"}, pw, &stderr)
		pw.Close()
	}()
	base, key := readReady(t, pr)
	go io.Copy(io.Discard, pr)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0/v1") || !strings.HasPrefix(key, "sk_test_") {
		t.Errorf("ready lines %q %q", base, key)
	}
	client, err := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "In process"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	code := <-done
	if code != exitOK {
		t.Errorf("exit %d\n%s", code, stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, "method=POST path=/v1/contexts status=201") || strings.Contains(log, key) {
		t.Errorf("log:\n%s", log)
	}
	// On a fake clock, the start says what real receivers need.
	if !strings.Contains(log, "more than 5 minutes ahead of real time") || !strings.Contains(log, "more than 27 hours behind") ||
		!strings.Contains(log, "-replay-window 0") || !strings.Contains(log, "WithWebhookClock") {
		t.Errorf("the fake clock's start line does not say what receivers need:\n%s", log)
	}
}

// TestReadyLinesExport: the two lines the command prints, pasted into a
// shell, set the variables for the commands run after them.
func TestReadyLinesExport(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"-addr", "127.0.0.1:0", "-key", "sk_test_pasted:free"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	go io.Copy(io.Discard, pr)
	out, err := exec.Command(sh, "-c", strings.Join(lines, "\n")+"\nenv").Output()
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^CONTEXTSVC_BASE_URL=http://127\.0\.0\.1:\d+/v1$`).Match(out) || !regexp.MustCompile(`(?m)^CONTEXTSVC_API_KEY=sk_test_pasted$`).Match(out) {
		t.Errorf("the lines %q set, for a command run after them:\n%s", lines, out)
	}
}

// TestRunProxy runs the command as a validating proxy in front of a mock:
// it prints its base URL alone (its callers use the upstream's key),
// forwards with the caller's key, and logs a mismatch without the key.
func TestRunProxy(t *testing.T) {
	t.Parallel()
	up := mockserver.NewTestServer(t)
	// A path the document does not serve, answered by the upstream with a
	// 404 whose Content-Type the document does not list.
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/odd" {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		up.HTTP.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(odd.Close)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"-addr", "127.0.0.1:0", "-upstream", odd.URL + "/v1", "-upstream-timeout", "45s", "-upstream-idle-timeout", "15s"}, pw, &stderr)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "export CONTEXTSVC_BASE_URL=http://127.0.0.1:") {
		t.Fatalf("first line %q", sc.Text())
	}
	base := strings.TrimPrefix(sc.Text(), "export CONTEXTSVC_BASE_URL=")
	var rest bytes.Buffer
	copied := make(chan struct{})
	go func() {
		for sc.Scan() {
			rest.WriteString(sc.Text())
		}
		close(copied)
	}()
	client, err := contextsvc.NewClient(up.APIKey, contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Through the proxy"}); err != nil {
		t.Fatal(err)
	}
	if n := len(up.Contexts(up.DefaultKey().Account)); n != 1 {
		t.Errorf("the upstream has %d contexts", n)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/odd", nil)
	req.Header.Set("Authorization", "Bearer "+up.APIKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("%v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The answer's request id is the upstream's, and so is the one the
	// proxy's log names.
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/contexts", nil)
	req.Header.Set("Authorization", "Bearer "+up.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	upstreamID := resp.Header.Get("X-Request-Id")
	if len(resp.Header.Values("X-Request-Id")) != 1 || !strings.HasPrefix(upstreamID, "req_") {
		t.Errorf("X-Request-Id %q", resp.Header.Values("X-Request-Id"))
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d\n%s", code, stderr.String())
	}
	<-copied
	log := stderr.String()
	if rest.Len() != 0 || !strings.Contains(log, "contextsvc-mock proxying") || !strings.Contains(log, "msg=\"contract mismatch\"") ||
		!strings.Contains(log, "rule=#/components/responses/NotFound/content") || strings.Contains(log, up.APIKey) ||
		!strings.Contains(log, "path=/v1/contexts status=200") || !strings.Contains(log, "requestId="+upstreamID) ||
		strings.Contains(log, "contextsvc-mock serving") || !strings.Contains(log, "upstreamTimeout=45s upstreamIdleTimeout=15s") {
		t.Errorf("stdout after the first line %q; log:\n%s", rest.String(), log)
	}
}

// TestRunShutdownDeliveries stops the command while a webhook delivery
// attempt is running: it exits 0 either way, after the attempt finished
// (and succeeded) when the receiver answers within -shutdown-timeout, or
// after canceling it at that deadline when the receiver hangs. The
// webhook's secret is never logged.
func TestRunShutdownDeliveries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout string
		answer  bool     // the receiver answers once the shutdown has begun
		wantLog []string // in the log
		wantNot []string // not in the log
	}{
		{
			name: "attempt finishes", timeout: "20s", answer: true,
			wantLog: []string{"outcome=succeeded", "pendingDeliveries=0"},
			wantNot: []string{"canceled", "whsec_shutdown"},
		},
		{
			name: "deadline cancels a hanging attempt", timeout: "200ms",
			wantLog: []string{"attempt canceled", "webhook delivery attempts still running at the deadline were canceled"},
			wantNot: []string{"outcome=succeeded", "whsec_shutdown"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			started := make(chan struct{})
			release := make(chan struct{})
			var once sync.Once
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				once.Do(func() { close(started) })
				select {
				case <-release:
				case <-r.Context().Done(): // the attempt was canceled
				}
			}))
			t.Cleanup(receiver.Close)
			var releaseOnce sync.Once
			releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
			t.Cleanup(releaseAll) // runs before receiver.Close

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pr, pw := io.Pipe()
			var stderr syncbuf.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, []string{"-addr", "127.0.0.1:0", "-shutdown-timeout", tt.timeout, "-retry-schedule", ""}, pw, &stderr)
				pw.Close()
			}()
			base, key := readReady(t, pr)
			go io.Copy(io.Discard, pr)
			client, err := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
				URL: receiver.URL, Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: "whsec_shutdown",
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Shutdown"}); err != nil {
				t.Fatal(err)
			}
			<-started // the attempt is in flight
			cancel()
			<-stderr.Seen("shutting down")
			if tt.answer {
				releaseAll()
			}
			code := <-done
			if code != exitOK {
				t.Errorf("exit %d, want 0", code)
			}
			log := stderr.String()
			for _, want := range tt.wantLog {
				if !strings.Contains(log, want) {
					t.Errorf("the log lacks %q:\n%s", want, log)
				}
			}
			for _, not := range tt.wantNot {
				if strings.Contains(log, not) {
					t.Errorf("the log has %q:\n%s", not, log)
				}
			}
		})
	}
}

// asCommand, in a process's environment, makes the test binary the
// command contextsvc-mock, as its main runs it (see TestMain): the tests
// that need it as a process run the code they were built with, and build
// nothing.
const asCommand = "CONTEXTSVC_TEST_AS_COMMAND=1"

func TestMain(m *testing.M) {
	if slices.Contains(os.Environ(), asCommand) {
		ctx, stop := interrupt.Context()
		code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestCommand starts the command as a process on a free port, creates a
// context through the SDK and stops it with SIGTERM.
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process")
	}
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	command := func(args ...string) *exec.Cmd {
		c := exec.Command(exe, args...)
		c.Env = append(os.Environ(), asCommand)
		return c
	}
	cmd := command("-addr", "127.0.0.1:0", "-key", "sk_test_cmd:unlimited", "-key", "sk_test_reader:free:read",
		"-retry-schedule", "1s,5s")
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base, key := readReady(t, stdout)
	if key != "sk_test_cmd" {
		t.Errorf("key %q, want the first -key", key)
	}
	ctx := t.Context()
	client, err := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	// A webhook receiver that checks what it gets with the SDK.
	received := make(chan *contextsvc.Event, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := contextsvc.ConstructEvent(body, r.Header.Get("X-Service-Signature"), "whsec_cmd")
		if err != nil {
			t.Errorf("delivery: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		received <- ev
	}))
	defer receiver.Close()
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
		URL: receiver.URL, Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: "whsec_cmd",
	}); err != nil {
		t.Fatalf("register webhook: %v", err)
	}
	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "From the command test"})
	if err != nil {
		t.Fatalf("create: %v\nstderr:\n%s", err, stderr.String())
	}
	// The second key shares the account: it reads what the first wrote.
	reader, _ := contextsvc.NewClient("sk_test_reader", contextsvc.WithBaseURL(base))
	if got, err := reader.Contexts.Get(ctx, c.ID); err != nil || got.Name != "From the command test" {
		t.Errorf("get with the second key: %+v %v", got, err)
	}

	ev := <-received
	if d, err := ev.ContextCreated(); err != nil || d.ContextID != c.ID {
		t.Errorf("delivered %+v: %v", d, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\nstderr:\n%s", err, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	log := stderr.String()
	for _, want := range []string{"method=POST path=/v1/contexts status=201", "requestId=req_", "webhook delivery attempt", "outcome=succeeded", "shutting down", "stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{"sk_test_cmd", "sk_test_reader", "whsec_cmd"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log shows %s:\n%s", secret, log)
		}
	}

	// SIGINT (Ctrl-C) stops it the same way.
	intr := command("-addr", "127.0.0.1:0", "-fake-clock")
	var stderr2 syncbuf.Buffer
	intr.Stderr = &stderr2
	if stdout, err = intr.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := intr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = intr.Process.Kill() })
	readReady(t, stdout)
	if err := intr.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := intr.Wait(); err != nil || !strings.Contains(stderr2.String(), "stopped") {
		t.Fatalf("exit after SIGINT: %v\nstderr:\n%s", err, stderr2.String())
	}

	// A second signal does not wait for a hanging receiver.
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices when the client is gone
		<-r.Context().Done()
	}))
	defer hanging.Close()
	twice := command("-addr", "127.0.0.1:0", "-shutdown-timeout", "10m")
	var stderr3 syncbuf.Buffer
	twice.Stderr = &stderr3
	if stdout, err = twice.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := twice.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = twice.Process.Kill() })
	base, key = readReady(t, stdout)
	client, _ = contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
		URL: hanging.URL, Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: "whsec_hang",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Hang"}); err != nil {
		t.Fatal(err)
	}
	if err := twice.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-stderr3.Seen("shutting down")
	if err := twice.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = twice.Wait() // killed by the signal: its status is checked below
	if ws, ok := twice.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("after a second SIGINT: %v, want killed by SIGINT\nstderr:\n%s", twice.ProcessState, stderr3.String())
	}
}

// TestWarnAdminExposed: the command warns when the admin routes listen on
// an address other machines reach without credentials (-admin-insecure),
// says so without warning when they have some, and says nothing on
// loopback. The addresses are given, not listened on: a test binds
// loopback only.
func TestWarnAdminExposed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    net.Addr
		exposed bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, false},
		{&net.TCPAddr{IP: net.IPv4(127, 3, 2, 1), Port: 8080}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 20), Port: 8080}, true},
		{&net.TCPAddr{IP: net.ParseIP("fd00::1"), Port: 8080}, true},
	}
	for _, tt := range tests {
		for _, protected := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s,protected=%t", tt.addr, protected), func(t *testing.T) {
				t.Parallel()
				var log bytes.Buffer
				warnAdminExposed(slog.New(slog.NewTextHandler(&log, nil)), tt.addr, protected)
				got := log.String()
				if said := got != ""; said != tt.exposed {
					t.Fatalf("said %q, want something: %v", got, tt.exposed)
				}
				if warned := strings.Contains(got, "level=WARN"); warned != (tt.exposed && !protected) {
					t.Fatalf("warned %v, want %v: %q", warned, tt.exposed && !protected, got)
				}
				if !tt.exposed {
					return
				}
				if !strings.Contains(got, "reachable beyond this machine") || !strings.Contains(got, "addr="+tt.addr.String()) {
					t.Errorf("the line does not say what is reachable: %q", got)
				}
				if !protected && (!strings.Contains(got, "-admin=false") || !strings.Contains(got, "-admin-auth-file")) {
					t.Errorf("the warning does not say how to close it: %q", got)
				}
			})
		}
	}
}

// TestBaseURL: the printed URL is one a user can paste: an unspecified
// address (every interface) becomes 127.0.0.1.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr  net.Addr
		want  string
		every bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080", false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, "http://[::1]:8080", false},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 20), Port: 9000}, "http://192.168.1.20:9000", false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://127.0.0.1:8080", true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8081}, "http://127.0.0.1:8081", true},
	}
	for _, tt := range tests {
		if got, every := baseURL(tt.addr); got != tt.want || every != tt.every {
			t.Errorf("baseURL(%s) = %q, %v; want %q, %v", tt.addr, got, every, tt.want, tt.every)
		}
	}
}

// TestBeyondLoopback: which -addr values listen where other machines
// reach.
func TestBeyondLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": false, "127.9.9.9:0": false, "[::1]:8080": false, "localhost:8080": false, "LOCALHOST:1": false,
		":8080": true, "0.0.0.0:8080": true, "[::]:8080": true, "192.168.1.20:8080": true, "[fd00::1]:8080": true,
		"no-port": false,
	} {
		if got := beyondLoopback(addr); got != want {
			t.Errorf("beyondLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestRunDashboardLine: on start the command logs where the dashboard
// is, and on loopback warns of nothing; without the admin routes it
// mentions no dashboard.
func TestRunDashboardLine(t *testing.T) {
	t.Parallel()
	base, log := startCommand(t)
	want := "url=" + strings.TrimSuffix(base, "/v1") + "/_mock/ui/"
	<-log.Seen("dashboard")
	if got := log.String(); !strings.Contains(got, want) || strings.Contains(got, "level=WARN") {
		t.Errorf("log does not say %s, or warns:\n%s", want, got)
	}
	if r := send(t, "GET", strings.TrimSuffix(base, "/v1")+"/_mock/ui/", "", ""); r.status != http.StatusOK {
		t.Errorf("GET /_mock/ui/: %d", r.status)
	}

	_, log = startCommand(t, "-admin=false")
	<-log.Seen("contextsvc-mock serving")
	if got := log.String(); strings.Contains(got, "dashboard") {
		t.Errorf("without the admin routes, the log names the dashboard:\n%s", got)
	}
}
