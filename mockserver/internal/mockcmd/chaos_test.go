package mockcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
)

// TestChaosFlag: -chaos takes a SPEC as mockserver.ParseChaos reads it
// and sets the server's chaos mode; a SPEC it cannot use is a usage error
// (exit 2) that says why, and so is -chaos with -upstream.
func TestChaosFlag(t *testing.T) {
	t.Parallel()
	st, err := parseFlags([]string{"-chaos", "seed=42, duplicate=0.4,reorder=0.5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := mockserver.Chaos{Seed: 42, Duplicate: 0.4, Reorder: 0.5}
	if st.chaos == nil || *st.chaos != want {
		t.Fatalf("-chaos read as %+v", st.chaos)
	}
	srv := mockserver.New(st.options(nil)...)
	defer srv.Close(t.Context())
	if rep := srv.Chaos(); !rep.On || rep.Chaos.Seed != 42 || rep.Chaos.Delay != mockserver.DefaultChaosDelay {
		t.Errorf("the server's chaos mode: %+v", rep)
	}
	for _, args := range [][]string{nil, {"-chaos", ""}, {"-chaos", "seed=1", "-chaos", " "}} {
		if st, err := parseFlags(args, io.Discard); err != nil || st.chaos != nil {
			t.Errorf("%q: chaos %+v, %v; want none", args, st.chaos, err)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-chaos", "seed=0"}, `invalid value "seed=0" for flag -chaos: seed: 0 is no seed`},
		{[]string{"-chaos", "duplicate=2"}, "duplicate: 2 is not a probability from 0 to 1"},
		{[]string{"-chaos", "delay=10m,reorder=1"}, "delay: 10m0s is not from 1ms to 5m0s"},
		{[]string{"-chaos", "api_error=0.1"}, `unknown key "api_error": the keys are seed, duplicate, reorder, delay and api-error`},
		{[]string{"-chaos", "api-error=0.1", "-upstream", "https://api.example.com/v1"}, "-chaos plays the in-memory service"},
	} {
		var stderr bytes.Buffer
		if code := Run(t.Context(), tc.args, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
	var help bytes.Buffer
	if code := Run(t.Context(), []string{"-h"}, &help, io.Discard); code != exitOK ||
		!strings.Contains(help.String(), "-chaos SPEC") || !strings.Contains(help.String(), "seed=42,duplicate=0.2,reorder=0.3,api-error=0.1") {
		t.Errorf("-h does not teach -chaos:\n%s", help.String())
	}
}

// chaosCommand runs the command in this process with args, until the
// test ends, and returns its base URL, key and log.
func chaosCommand(t *testing.T, args ...string) (base, key string, log *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	log = new(syncbuf.Buffer)
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, log)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("exit %d\n%s", code, log.String())
		}
	})
	base, key = readReady(t, pr)
	go io.Copy(io.Discard, pr)
	return base, key, log
}

// adminJSON sends an admin request and decodes its answer into v (when
// not nil).
func adminJSON(t *testing.T, base, method, path, body string, v any) {
	t.Helper()
	req, _ := http.NewRequest(method, strings.TrimSuffix(base, "/v1")+path, strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
}

// chaosDeliveries runs the command with -fake-clock and -chaos spec, a
// receiver on the SDK's handler (its memory deduper) and a client making
// its requests one after another; it moves the clock through every
// delivery chaos held back or repeats, and returns, by event ordinal, what
// chaos did to its delivery's attempts, and the events the receiver
// handled, in order.
func chaosDeliveries(t *testing.T, spec string) (decisions map[uint64]string, handled []uint64) {
	t.Helper()
	base, key, _ := chaosCommand(t, "-fake-clock", "-key", "sk_chaos:unlimited", "-log-level", "debug", "-chaos", spec)
	var mu sync.Mutex
	var ids []string
	deliveries := map[string]int{}
	h, err := contextsvc.NewWebhookHandler("whsec_cmd_chaos", func(_ context.Context, ev *contextsvc.Event) error {
		mu.Lock()
		ids = append(ids, ev.ID)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		deliveries[r.Header.Get("X-Service-Delivery")]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(receiver.Close)
	client, err := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: receiver.URL, Secret: "whsec_cmd_chaos",
		Events: []contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventContextUpdated}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: fmt.Sprint("Doc ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr("# Changed")}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		// An advance of nothing waits for the attempts running; then the
		// clock moves to each held delivery and duplicate.
		adminJSON(t, base, "POST", "/_mock/clock/advance", `{"seconds":0}`, nil)
		var clock struct{ NextDueAt string }
		adminJSON(t, base, "GET", "/_mock/clock", "", &clock)
		if clock.NextDueAt == "" {
			break
		}
		adminJSON(t, base, "POST", "/_mock/clock/advance", `{"toNextDue":true}`, nil)
	}
	var events struct {
		Data []struct {
			ID           string
			ChaosOrdinal uint64
		}
	}
	adminJSON(t, base, "GET", "/_mock/events?limit=100", "", &events)
	ordinal := map[string]uint64{}
	for _, ev := range events.Data {
		ordinal[ev.ID] = ev.ChaosOrdinal
	}
	var dls struct {
		Data []mockserver.Delivery
	}
	adminJSON(t, base, "GET", "/_mock/deliveries?limit=100", "", &dls)
	decisions = map[uint64]string{}
	for _, dl := range dls.Data {
		var what []string
		for _, a := range dl.Attempts {
			what = append(what, fmt.Sprintf("%d %s %v", a.StatusCode, a.Chaos.Action, a.Chaos.Delay))
		}
		decisions[ordinal[dl.EventID]] = strings.Join(what, "; ")
		if deliveries[dl.ID] != len(dl.Attempts) {
			t.Errorf("delivery of event %d: %d attempts, the receiver got %d", ordinal[dl.EventID], len(dl.Attempts), deliveries[dl.ID])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		handled = append(handled, ordinal[id])
	}
	return decisions, handled
}

// TestRunChaos is what a user of the command checks: with -chaos
// seed=42,duplicate=0.4,reorder=0.5 and a real receiver, no event is lost,
// some come twice and some out of order, all signed (the receiver
// verifies them), and a second run makes the same decisions; with -chaos
// seed=7,api-error=0.3, 60 GETs meet some injected errors, marked in the
// log, with the same statuses in the same order on a second run.
func TestRunChaos(t *testing.T) {
	t.Parallel()
	decisions, handled := chaosDeliveries(t, "seed=42,duplicate=0.4,reorder=0.5")
	if len(handled) != 20 || len(decisions) != 20 {
		t.Fatalf("%d events handled of %d delivered", len(handled), len(decisions))
	}
	seen := map[uint64]bool{}
	for _, n := range handled {
		if seen[n] {
			t.Errorf("event %d handled twice", n)
		}
		seen[n] = true
	}
	var dups, held int
	for _, d := range decisions {
		dups += strings.Count(d, "duplicate")
		held += strings.Count(d, "held")
	}
	t.Logf("20 events: %d duplicated, %d held, handled in the order %v", dups, held, handled)
	if dups == 0 || held == 0 || slices.IsSorted(handled) {
		t.Errorf("%d duplicated, %d held, handled in the order %v: chaos did too little", dups, held, handled)
	}
	again, _ := chaosDeliveries(t, "seed=42,duplicate=0.4,reorder=0.5")
	if !maps.Equal(decisions, again) {
		t.Errorf("the same seed decided otherwise:\n%v\n%v", decisions, again)
	}

	statuses := func() ([]int, string) {
		base, key, log := chaosCommand(t, "-chaos", "seed=7,api-error=0.3")
		var out []int
		for range 60 {
			req, _ := http.NewRequest("GET", base+"/contexts", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			out = append(out, res.StatusCode)
		}
		// Each request's line is written before its answer is sent.
		return out, log.String()
	}
	first, log := statuses()
	injected := 0
	for _, st := range first {
		if st != http.StatusOK {
			injected++
		}
	}
	t.Logf("60 GETs: %v", first)
	if injected < 6 || injected > 30 || strings.Count(log, "chaos=api-error") != injected {
		t.Errorf("60 GETs: %d failed (%v); the log marks %d:\n%s", injected, first, strings.Count(log, "chaos=api-error"), log)
	}
	if second, _ := statuses(); !slices.Equal(first, second) {
		t.Errorf("the same seed failed others:\n%v\n%v", first, second)
	}
}
