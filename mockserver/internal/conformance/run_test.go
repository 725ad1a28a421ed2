package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance/conformancetest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/plantest"
)

// TestRunAgainstMock runs every check against the mock server, which
// follows the contract exactly: all pass (the 429 check is opt-in), the
// run deletes every context it created, reports the webhook it cannot
// delete, covers every /v1 operation without one 429, and shows no secret.
func TestRunAgainstMock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pdftotext"); err != nil && os.Getenv("CI") != "" {
		t.Fatal("pdftotext is missing in CI: install poppler-utils")
	}
	clock := mockserver.NewFakeClock(time.Now())
	ts := mockserver.NewTestServer(t, append(keys(), mockserver.WithClock(clock))...)
	cfg := fakeClockConfig(t, ts.URL, ts.Server, clock)
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep := run(t, cfg)
	txt, js := text(t, rep)
	if !rep.Passed() {
		t.Fatalf("the mock differs from the contract:\n%s", txt)
	}
	for id, st := range statuses(rep) {
		if want := conformance.Passed; id == "ratelimit.exceeded" {
			if st != conformance.Skipped {
				t.Errorf("%s: %s, want skipped (opt-in)", id, st)
			}
		} else if st != want {
			t.Errorf("%s: %s, want %s", id, st, want)
		}
	}
	if len(rep.Tolerance) != 0 {
		t.Errorf("differences listed for the mock: %+v", rep.Tolerance)
	}
	for _, c := range rep.Checks {
		if c.ID == "contexts.export" && strings.Contains(c.Note, "not read back") {
			if _, err := exec.LookPath("pdftotext"); err == nil {
				t.Errorf("the PDF was not read back with pdftotext installed: %s", c.Note)
			}
		}
	}

	// What the run created is gone, but for its webhook, reported.
	if left := ts.Contexts(account); len(left) != 0 {
		t.Errorf("%d contexts left behind, first %q", len(left), left[0].Name)
	}
	hooks := ts.AccountWebhooks(account)
	if len(hooks) != 1 || len(rep.LeftBehind) != 1 || rep.LeftBehind[0].Kind != "webhook" || rep.LeftBehind[0].ID != hooks[0].ID {
		t.Fatalf("left behind %+v; the account has webhooks %+v", rep.LeftBehind, hooks)
	}
	if !strings.Contains(hooks[0].URL, "contextsvc-conform-run="+rep.RunID) {
		t.Errorf("the webhook's url %q does not name the run", hooks[0].URL)
	}
	// Every context it created was named and tagged after the run.
	created := 0
	for _, ev := range ts.Events() {
		if ev.Type != contextsvc.EventContextCreated {
			continue
		}
		created++
		var d contextsvc.ContextCreatedData
		if err := json.Unmarshal(ev.Data, &d); err != nil || !strings.HasPrefix(d.Name, conformance.NamePrefix+rep.RunID+" ") || !slices.Contains(d.Tags, conformance.NamePrefix+rep.RunID) {
			t.Errorf("a context not named or tagged after the run: %s", ev.Data)
		}
	}
	if created < 10 {
		t.Errorf("%d contexts created", created)
	}

	for _, cv := range rep.Coverage {
		if cv.Requests == 0 || !slices.ContainsFunc(cv.Statuses, func(s int) bool { return s >= 200 && s <= 299 }) {
			t.Errorf("operation %s: %d requests, statuses %v: not covered, or never successfully", cv.Operation, cv.Requests, cv.Statuses)
		}
		if slices.Contains(cv.Statuses, 429) {
			t.Errorf("operation %s met a 429: the run was not paced", cv.Operation)
		}
	}

	// No secret anywhere: the keys, and the webhook's secret as the mock
	// stores it.
	var state bytes.Buffer
	if err := ts.SaveState(&state); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Accounts []struct {
			Webhooks []struct{ Secret string } `json:"webhooks"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal(state.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	secrets := []string{writeKey, readKey}
	for _, a := range doc.Accounts {
		for _, w := range a.Webhooks {
			secrets = append(secrets, w.Secret)
		}
	}
	if len(secrets) != 3 {
		t.Fatalf("secrets %d", len(secrets))
	}
	for _, s := range secrets {
		for name, out := range map[string]string{"text": txt, "JSON": js, "progress": progress.String()} {
			if s != "" && strings.Contains(out, s) {
				t.Errorf("the %s output shows a secret", name)
			}
		}
	}
	if err := ts.DeleteWebhook(hooks[0].ID); err != nil {
		t.Fatal(err)
	}
}

// TestRunReadOnly runs the checks that create nothing: they pass, the
// others are skipped, and the server's state has not changed.
func TestRunReadOnly(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t, keys()...)
	lim, _ := contextsvc.NewLocalLimiter(plantest.Enterprise(t, perMinute, burst))
	rep := run(t, conformance.Config{BaseURL: ts.URL, APIKey: writeKey, ReadKey: readKey, ReadOnly: true,
		Limiter: lim, PerMinute: perMinute, Document: mockserver.OpenAPI()})
	txt, _ := text(t, rep)
	if !rep.Passed() {
		t.Fatalf("read-only run failed:\n%s", txt)
	}
	ran := 0
	for _, c := range rep.Checks {
		if c.Status == conformance.Passed {
			ran++
		}
	}
	if ran < 8 || rep.Count(conformance.Skipped) < 10 {
		t.Errorf("%d checks passed, %d skipped:\n%s", ran, rep.Count(conformance.Skipped), txt)
	}
	// Each check left out names its own reason: what it would create or
	// change.
	reasons := map[string]string{}
	for _, c := range rep.Checks {
		if c.Status != conformance.Skipped || !strings.HasSuffix(c.Note, ": not in a read-only run") {
			continue
		}
		if other, ok := reasons[c.Note]; ok {
			t.Errorf("%s and %s are skipped for the same reason %q", other, c.ID, c.Note)
		}
		reasons[c.Note] = c.ID
	}
	if len(reasons) < 10 {
		t.Errorf("%d checks skipped for a read-only run:\n%s", len(reasons), txt)
	}
	for _, want := range []string{"registers a webhook", "creates three contexts", "creates a context and deletes it"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the read-only report does not say %q:\n%s", want, txt)
		}
	}
	if n := len(ts.Events()); n != 0 {
		t.Errorf("a read-only run fired %d events", n)
	}
	if s := ts.Snapshot(); len(s.Contexts) != 0 || len(s.Webhooks) != 0 || len(rep.LeftBehind) != 0 {
		t.Errorf("a read-only run left %d contexts, %d webhooks; reports %+v", len(s.Contexts), len(s.Webhooks), rep.LeftBehind)
	}
}

// TestRunAgainstDifferentServer runs against a server that answers in the
// plausible shapes the contract leaves to a real service: each difference
// is reported, and the SDK tolerates all of them but a list page that
// cannot say more pages follow.
func TestRunAgainstDifferentServer(t *testing.T) {
	t.Parallel()
	clock := mockserver.NewFakeClock(time.Now())
	srv := mockserver.New(append(keys(), mockserver.WithClock(clock))...)
	hs := httptest.NewServer(conformancetest.Reshape(srv))
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	rep := run(t, fakeClockConfig(t, hs.URL+"/v1", srv, clock))
	txt, _ := text(t, rep)
	if rep.Passed() {
		t.Fatalf("a different server passed:\n%s", txt)
	}
	const errorShape = `body: property "code" is unsupported; body: property "message" is unsupported; body /error: property "error" is missing`
	const plainText = `header Content-Type: "text/plain; charset=utf-8" is none of application/json`
	want := []string{
		"false|document|body: value must be an object|listContexts",
		"true|document|" + errorShape + "|createContext,deleteContext,exportContext,getContext,listContexts,listVersions,registerWebhook,updateContext",
		"true|document|" + plainText + "|GET off the API,PATCH off the API",
		"true|document|body: value must be an object|listContexts,listVersions",
		"true|status|200 where the contract answers 201|createContext",
		"true|status|204 where the contract answers 200|deleteContext",
		"true|header|no X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset|createContext,deleteContext,exportContext,getContext,listContexts,listVersions,registerWebhook,updateContext",
	}
	slices.Sort(want)
	if got := tolerance(rep); !slices.Equal(got, want) {
		t.Errorf("differences\n%s\nwant\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), txt)
	}
	// The checks the reshaping does not touch still pass: the delivery's
	// retry, the events once each, the request ids; webhooks.deliveries
	// differs only by the delete's 204.
	st := statuses(rep)
	for _, id := range []string{"webhooks.retry", "webhooks.once", "headers.request-id"} {
		if st[id] != conformance.Passed {
			t.Errorf("%s: %s", id, st[id])
		}
	}
	for _, c := range rep.Checks {
		if c.ID == "webhooks.deliveries" && (len(c.Differences) != 1 || c.Differences[0].Summary != "204 where the contract answers 200") {
			t.Errorf("webhooks.deliveries: %+v", c.Differences)
		}
		// Each difference says what was asked, what the contract says,
		// what came back, and what the SDK makes of it.
		for _, d := range c.Differences {
			if d.Request == "" || d.Contract == "" || d.Got == "" || d.SDK == nil || d.SDK.SDK == "" || d.Operation == "" {
				t.Errorf("%s: a difference lacks a part: %+v", c.ID, d)
			}
		}
	}
	// Clean-up went through the SDK, which reads every shape.
	if left := srv.Contexts(account); len(left) != 0 {
		t.Errorf("%d contexts left behind", len(left))
	}
}

// TestProvoke429 empties a key's bucket on purpose: the 429 follows the
// contract, and the run waits (on the server's fake clock) until the
// bucket is full again.
func TestProvoke429(t *testing.T) {
	t.Parallel()
	const small = 40 // more than the read-only checks send, few to empty
	clock := mockserver.NewFakeClock(time.Now())
	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock),
		mockserver.WithKey(mockserver.Key{Token: writeKey, Plan: mockserver.PlanEnterprise, PerMinute: 60_000, Burst: small}))
	lim, _ := contextsvc.NewLocalLimiter(plantest.Enterprise(t, 60_000, small))
	var mu sync.Mutex
	var slept []time.Duration
	rep := run(t, conformance.Config{BaseURL: ts.URL, APIKey: writeKey, ReadOnly: true, Provoke429: true,
		Limiter: lim, PerMinute: 60_000, Document: mockserver.OpenAPI(),
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
			clock.Advance(d)
			return nil
		}})
	txt, _ := text(t, rep)
	if st := statuses(rep)["ratelimit.exceeded"]; st != conformance.Passed || !rep.Passed() {
		t.Fatalf("ratelimit.exceeded %s:\n%s", st, txt)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(slept) != 1 || slept[0] < time.Second {
		t.Errorf("slept %v, want one wait of at least a second", slept)
	}
}

// TestRunInterrupted stops a run halfway: it still deletes what it
// created, skips the rest, and does not pass.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t, keys()...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lim, _ := contextsvc.NewLocalLimiter(plantest.Enterprise(t, perMinute, burst))
	rep, err := conformance.Run(ctx, conformance.Config{BaseURL: ts.URL, APIKey: writeKey, Limiter: lim, PerMinute: perMinute,
		Document: mockserver.OpenAPI(), Progress: stopAfter{"contexts.update", cancel}})
	if err != nil {
		t.Fatal(err)
	}
	txt, _ := text(t, rep)
	if rep.Passed() || !rep.Interrupted || !strings.Contains(txt, "interrupted") {
		t.Errorf("an interrupted run: passed %t, interrupted %t:\n%s", rep.Passed(), rep.Interrupted, txt)
	}
	if st := statuses(rep)["contexts.export"]; st != conformance.Skipped {
		t.Errorf("contexts.export after the stop: %s", st)
	}
	if left := ts.Contexts(account); len(left) != 0 {
		t.Errorf("%d contexts left behind after the stop", len(left))
	}
}

// stopAfter cancels the run once the progress line of a check shows.
type stopAfter struct {
	check  string
	cancel context.CancelFunc
}

func (s stopAfter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), " "+s.check) {
		s.cancel()
	}
	return len(p), nil
}

// TestConfigErrors: a configuration that cannot work fails before anything
// is sent, with ErrConfig.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	ok := conformance.Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk_x", Document: mockserver.OpenAPI()}
	lim, _ := contextsvc.NewLocalLimiter(contextsvc.FreePlan())
	for _, tt := range []struct {
		name   string
		change func(*conformance.Config)
	}{
		{"no base URL", func(c *conformance.Config) { c.BaseURL = "" }},
		{"a base URL without /v1", func(c *conformance.Config) { c.BaseURL = "http://127.0.0.1:1/api" }},
		{"a base URL with a query", func(c *conformance.Config) { c.BaseURL = "http://127.0.0.1:1/v1?k=v" }},
		{"a base URL without a scheme", func(c *conformance.Config) { c.BaseURL = "127.0.0.1:1/v1" }},
		{"no key", func(c *conformance.Config) { c.APIKey = "" }},
		{"a key with a space", func(c *conformance.Config) { c.APIKey = "sk x" }},
		{"the read key is the key", func(c *conformance.Config) { c.ReadKey = c.APIKey }},
		{"no document", func(c *conformance.Config) { c.Document = nil }},
		{"a document that is not OpenAPI", func(c *conformance.Config) { c.Document = []byte("openapi: 3.0.3\n") }},
		{"a receiver URL without an address", func(c *conformance.Config) { c.ReceiverURL = "https://hooks.example/x" }},
		{"a receiver URL that is not absolute", func(c *conformance.Config) {
			c.ReceiverListen, c.ReceiverURL = "127.0.0.1:0", "/x"
		}},
		{"a receiver address that cannot listen", func(c *conformance.Config) { c.ReceiverListen = "256.0.0.1:1" }},
		{"a read-only run with a receiver", func(c *conformance.Config) { c.ReadOnly, c.ReceiverListen = true, "127.0.0.1:0" }},
		{"an unlimited key paced", func(c *conformance.Config) { c.Unlimited, c.Limiter = true, lim }},
		{"a run id with capitals", func(c *conformance.Config) { c.RunID = "Run1" }},
		{"a negative time-out", func(c *conformance.Config) { c.RetryTimeout = -time.Second }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			tt.change(&cfg)
			rep, err := conformance.Run(t.Context(), cfg)
			if !errors.Is(err, conformance.ErrConfig) || rep != nil {
				t.Errorf("Run: %v, want an error matching ErrConfig", err)
			}
			if err != nil && strings.Contains(err.Error(), "sk_x") {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

// TestPDFText reads the mock's PDF export back.
func TestPDFText(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Contexts.Create(t.Context(), &contextsvc.CreateContextRequest{Name: "Read back", Content: "# Heading\n\nSome words here."})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := client.Contexts.Export(t.Context(), c.ID, &contextsvc.ExportOptions{Format: contextsvc.ExportPDF})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Body.Close()
	var pdf bytes.Buffer
	if _, err := pdf.ReadFrom(exp.Body); err != nil {
		t.Fatal(err)
	}
	text, err := conformance.PDFText(t.Context(), pdf.Bytes())
	if errors.Is(err, conformance.ErrNoPDFToText) {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext is missing in CI: install poppler-utils")
		}
		t.Skip("pdftotext not installed (apt-get install poppler-utils)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Read back") || !strings.Contains(text, "Some words here.") {
		t.Errorf("pdftotext reads %q", text)
	}
	if _, err := conformance.PDFText(t.Context(), []byte("not a PDF")); err == nil {
		t.Error("no error for a file that is no PDF")
	}
}

// TestRunWithoutReceiver runs every check but the webhooks': they are
// skipped, saying what they need, and nothing is left behind.
func TestRunWithoutReceiver(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t, keys()...)
	lim, _ := contextsvc.NewLocalLimiter(plantest.Enterprise(t, perMinute, burst))
	rep := run(t, conformance.Config{BaseURL: ts.URL, APIKey: writeKey, Limiter: lim, PerMinute: perMinute, Document: mockserver.OpenAPI()})
	txt, _ := text(t, rep)
	if !rep.Passed() || len(rep.LeftBehind) != 0 {
		t.Fatalf("passed %t, left %+v:\n%s", rep.Passed(), rep.LeftBehind, txt)
	}
	for _, c := range rep.Checks {
		skip := strings.HasPrefix(c.ID, "webhooks.") || c.ID == "errors.forbidden" || c.ID == "ratelimit.exceeded"
		if skip != (c.Status == conformance.Skipped) {
			t.Errorf("%s: %s (%s)", c.ID, c.Status, c.Note)
		}
		if strings.HasPrefix(c.ID, "webhooks.") && !strings.Contains(c.Note, "-receiver-listen") {
			t.Errorf("%s skipped without saying what it needs: %q", c.ID, c.Note)
		}
	}
	if s := ts.Snapshot(); len(s.Contexts) != 0 || len(s.Webhooks) != 0 {
		t.Errorf("left %d contexts and %d webhooks", len(s.Contexts), len(s.Webhooks))
	}
}
