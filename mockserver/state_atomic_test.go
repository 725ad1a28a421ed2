package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stateSummary names what a state document holds: each account's contexts
// and webhooks, and the pending deliveries with their webhooks.
func stateSummary(t *testing.T, doc []byte) string {
	t.Helper()
	var d struct {
		Accounts []struct {
			ID       string
			Contexts []struct{ ID string }
			Webhooks []struct{ ID string }
		}
		Deliveries []struct{ ID, WebhookID string }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Errorf("a state document that is not JSON: %v\n%.300s", err, doc)
		return ""
	}
	var parts []string
	for _, a := range d.Accounts {
		for _, c := range a.Contexts {
			parts = append(parts, a.ID+" "+c.ID)
		}
		for _, w := range a.Webhooks {
			parts = append(parts, a.ID+" "+w.ID)
		}
	}
	for _, dl := range d.Deliveries {
		parts = append(parts, dl.ID+" to "+dl.WebhookID)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// TestStateChangesAreWhole races loads (LoadState, PUT /_mock/state) of
// two documents, resets (Reset, POST /_mock/reset) and copies of the
// state (SaveState, GET /_mock/state, the state file's saves): every copy
// is one whole state, the first document, the second or the empty one,
// never a mix, and loaded webhooks always come with their pending
// deliveries. Run it with -race.
func TestStateChangesAreWhole(t *testing.T) {
	t.Parallel()
	docA := fixtureState
	// docB is another account's: other contexts, webhook and delivery.
	docB := strings.NewReplacer(`"id":"team-a"`, `"id":"team-b"`, "user_aaaaaaaaaaaaaaaaaaaaaaaa", "user_bbbbbbbbbbbbbbbbbbbbbbbb",
		"ctx_aaaaaaaaaaaaaaaaaaaaaaaa", "ctx_cccccccccccccccccccccccc", "ctx_bbbbbbbbbbbbbbbbbbbbbbbb", "ctx_dddddddddddddddddddddddd",
		"wh_aaaaaaaaaaaaaaaaaaaaaaaa", "wh_cccccccccccccccccccccccc", "dlv_aaaaaaaaaaaaaaaaaaaaaaaa", "dlv_cccccccccccccccccccccccc",
		"evt_aaaaaaaaaaaaaaaaaaaaaaaa", "evt_cccccccccccccccccccccccc").Replace(fixtureState)
	summary := func(acct, ctx1, ctx2, wh, dlv string) string {
		parts := []string{acct + " " + ctx1, acct + " " + ctx2, acct + " " + wh, dlv + " to " + wh}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	}
	whole := map[string]string{
		summary("team-a", "ctx_aaaaaaaaaaaaaaaaaaaaaaaa", "ctx_bbbbbbbbbbbbbbbbbbbbbbbb", "wh_aaaaaaaaaaaaaaaaaaaaaaaa", "dlv_aaaaaaaaaaaaaaaaaaaaaaaa"): "A",
		summary("team-b", "ctx_cccccccccccccccccccccccc", "ctx_dddddddddddddddddddddddd", "wh_cccccccccccccccccccccccc", "dlv_cccccccccccccccccccccccc"): "B",
		"": "empty",
	}

	path := filepath.Join(t.TempDir(), "state.json")
	// The file is written only when this test says (and at Close).
	ts := stateServer(t, NewFakeClock(dlvT0), path, WithStateInterval(time.Hour))
	for name, doc := range map[string]string{"A": docA, "B": docB} {
		if err := ts.LoadState(strings.NewReader(doc)); err != nil {
			t.Fatalf("LoadState %s: %v", name, err)
		}
		if sum := stateSummary(t, saveState(t, ts.Server)); whole[sum] != name {
			t.Fatalf("document %s loaded reads as %q", name, sum)
		}
	}

	// Each racer goes round rounds times; the state file, synced to disk at
	// each save, fewer. The race detector's checks of every access, and
	// -short, make do with fewer.
	rounds, fileRounds := 300, 20
	if raceEnabled || testing.Short() {
		rounds = 100
	}
	var mu sync.Mutex
	seen := map[string]int{}
	check := func(how string, doc []byte) {
		sum := stateSummary(t, doc)
		name, ok := whole[sum]
		if !ok {
			t.Errorf("%s gave a mixed state: %s", how, sum)
			return
		}
		mu.Lock()
		seen[name]++
		mu.Unlock()
	}
	// The admin requests go to the server's handler without a network, so
	// that the rounds are many and quick.
	serve := func(method, path, body string, want int) []byte {
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, httptestRequest(method, path, body, "-"))
		if rec.Code != want {
			t.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	racers := []struct {
		rounds int
		f      func(i int)
	}{
		{rounds, func(int) {
			if err := ts.LoadState(strings.NewReader(docA)); err != nil {
				t.Error(err)
			}
		}},
		{rounds, func(int) { serve("PUT", "/_mock/state", docB, http.StatusNoContent) }},
		{rounds, func(i int) {
			if i%2 == 0 {
				ts.Reset()
				return
			}
			serve("POST", "/_mock/reset", "", http.StatusNoContent)
		}},
		{rounds, func(int) {
			var b bytes.Buffer
			if err := ts.SaveState(&b); err != nil {
				t.Error(err)
			}
			check("SaveState", b.Bytes())
		}},
		{rounds, func(int) { check("GET /_mock/state", serve("GET", "/_mock/state", "", http.StatusOK)) }},
		{fileRounds, func(int) {
			// The only writer of the file meanwhile.
			if err := ts.svc.SaveStateFile(); err != nil {
				t.Error(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
			}
			check("the state file", b)
		}},
	}
	var wg sync.WaitGroup
	for _, r := range racers {
		wg.Go(func() {
			for i := range r.rounds {
				r.f(i)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.Logf("whole states seen: %v", seen)
	}
	// Whatever came last, the server holds one whole state.
	check("the end", saveState(t, ts.Server))
}
