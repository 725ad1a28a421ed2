package mockserver

import (
	"fmt"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"net/url"
	"sync"
	"testing"
)

// TestParallelClients runs clients of two accounts at once (creating,
// updating, listing, exporting, deleting); under -race it checks the
// locking, and afterwards every surviving context has a consistent
// version history.
func TestParallelClients(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "a", Account: "acct_a", Plan: PlanUnlimited}), WithKey(Key{Token: "b", Account: "acct_b", Plan: PlanUnlimited}))
	workers, rounds := 8, 15
	if testing.Short() {
		rounds = 5
	}
	var wg sync.WaitGroup
	for w := range workers {
		key := []string{"a", "b"}[w%2]
		wg.Go(func() {
			for i := range rounds {
				var c model.ContextJSON
				do(t, ts, call{method: "POST", path: "/v1/contexts", key: key, body: fmt.Sprintf(`{"name":"w%d-%d","content":"# S\n\ntext","tags":["w%d","all"]}`, w, i, w)}).json(t, &c)
				do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, key: key, body: `{"content":"# S\n\nmore text"}`})
				do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, key: key, body: `{"tags":["all"]}`})
				r := do(t, ts, call{method: "GET", path: "/v1/contexts?limit=5&tag=all", key: key})
				var lb listBody
				r.json(t, &lb)
				if lb.NextCursor != nil {
					do(t, ts, call{method: "GET", path: "/v1/contexts?limit=5&cursor=" + url.QueryEscape(*lb.NextCursor), key: key})
				}
				do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?format=html", key: key})
				if i%3 == 0 {
					do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID, key: key})
				}
			}
		})
	}
	wg.Wait()
	snap := ts.Snapshot()
	wantLive := workers * (rounds - (rounds+2)/3)
	if len(snap.Contexts) != wantLive {
		t.Fatalf("%d live contexts, want %d", len(snap.Contexts), wantLive)
	}
	for _, c := range snap.Contexts {
		wantAcct := map[byte]string{0: "acct_a", 1: "acct_b"}[(c.Name[1]-'0')%2]
		if c.Version != 3 || len(c.Versions) != 3 || c.Account != wantAcct {
			t.Errorf("context %s: version %d, %d versions, account %s", c.ID, c.Version, len(c.Versions), c.Account)
		}
	}
	checkEvents(t, ts.Server)
}
