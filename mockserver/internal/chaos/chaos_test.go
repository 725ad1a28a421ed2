package chaos

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// set puts c in force on a new mode, or fails the test.
func set(t *testing.T, c model.Chaos) *Mode {
	t.Helper()
	m := New(Config{})
	if _, err := m.Set(c, t0); err != nil {
		t.Fatal(err)
	}
	return m
}

// decisions is every decision of a run for the first n requests, events
// and their first three deliveries' first two attempts, by ordinal.
type decisions struct {
	Statuses   []int
	Holds      []time.Duration
	Duplicates []time.Duration
}

// draw draws them in the order given by order (a permutation of 0..n-1),
// from several goroutines at once.
func draw(r *Run, n int, order []int) decisions {
	d := decisions{Statuses: make([]int, n), Holds: make([]time.Duration, 3*n), Duplicates: make([]time.Duration, 6*n)}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				k := order[i]
				d.Statuses[k] = r.drawRequest(uint64(k + 1)).Status
				for target := range 3 {
					t := r.Ticket(uint64(k+1), target)
					d.Holds[3*k+target] = t.Hold()
					for attempt := 1; attempt <= 2; attempt++ {
						d.Duplicates[6*k+2*target+attempt-1] = t.Duplicate(attempt)
					}
				}
			}
		})
	}
	wg.Wait()
	return d
}

// TestDecisionsAreKeyedOnOrdinals: the same seed gives the same decision
// for each ordinal, in whatever order and from whatever goroutine they
// are drawn; another seed gives others.
func TestDecisionsAreKeyedOnOrdinals(t *testing.T) {
	t.Parallel()
	c := model.Chaos{Seed: 42, Duplicate: 0.4, Reorder: 0.5, APIError: 0.3}
	const n = 500
	inOrder := make([]int, n)
	for i := range inOrder {
		inOrder[i] = i
	}
	shuffled := append([]int(nil), inOrder...)
	rand.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a := draw(set(t, c).Current(), n, inOrder)
	b := draw(set(t, c).Current(), n, shuffled)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("the same seed drew other decisions (-first +second):\n%s", diff)
	}
	c.Seed = 43
	if other := draw(set(t, c).Current(), n, inOrder); cmp.Equal(a, other) {
		t.Error("seeds 42 and 43 drew the same decisions")
	}
}

// drawRequest is NextRequest's draw for the n-th request.
func (r *Run) drawRequest(n uint64) RequestDraw {
	u, x := r.draw(kindAPIError, n, 0, 0)
	if u >= r.c.APIError {
		return RequestDraw{N: n}
	}
	return RequestDraw{run: r, N: n, Status: apiStatuses[x%uint64(len(apiStatuses))]}
}

// TestRatesFollowTheProbabilities: over many ordinals each kind of
// decision comes at about its probability, the statuses are the four the
// contract allows, each often, and the delays are whole milliseconds
// from 1 ms to the delay. The seed is fixed, so the counts are too.
func TestRatesFollowTheProbabilities(t *testing.T) {
	t.Parallel()
	r := set(t, model.Chaos{Seed: 7, Duplicate: 0.25, Reorder: 0.5, APIError: 0.3, Delay: 750 * time.Millisecond}).Current()
	const n = 20_000
	statuses := map[int]int{}
	var held, dups int
	for i := range n {
		d := r.NextRequest()
		if d.N != uint64(i+1) {
			t.Fatalf("request %d drew ordinal %d", i+1, d.N)
		}
		if d.Status != 0 {
			statuses[d.Status]++
			if ra := d.RetryAfter(); (d.Status == http.StatusTooManyRequests) != (ra == time.Second) || (ra != 0 && ra != time.Second) {
				t.Fatalf("status %d with Retry-After %v", d.Status, ra)
			}
		}
		tk := r.Ticket(r.NextEvent(), 0)
		for _, delay := range []time.Duration{tk.Hold(), tk.Duplicate(1)} {
			if delay != 0 && (delay < time.Millisecond || delay > 750*time.Millisecond || delay%time.Millisecond != 0) {
				t.Fatalf("a delay of %v", delay)
			}
		}
		if tk.Hold() != 0 {
			held++
		}
		if tk.Duplicate(1) != 0 {
			dups++
		}
	}
	var failed int
	for s, k := range statuses {
		if s != 429 && s != 500 && s != 502 && s != 503 {
			t.Errorf("status %d", s)
		}
		if k < n*3/10/4*8/10 {
			t.Errorf("status %d only %d times of %d failures", s, k, n*3/10)
		}
		failed += k
	}
	for _, rate := range []struct {
		what string
		got  int
		p    float64
	}{{"api-error", failed, 0.3}, {"reorder", held, 0.5}, {"duplicate", dups, 0.25}} {
		if want := rate.p * n; float64(rate.got) < 0.95*want || float64(rate.got) > 1.05*want {
			t.Errorf("%s: %d of %d, want about %.0f", rate.what, rate.got, n, want)
		}
	}
}

// TestSetStopRestart: a mode set without a seed chooses one and says so;
// a restart keeps the settings and seed and counts from 1 again; a
// stopped mode decides no duplicate any more; bad settings leave the mode
// as it was.
func TestSetStopRestart(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var changes int
	var mu sync.Mutex
	m := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnChange: func() { mu.Lock(); changes++; mu.Unlock() }, ChooseSeed: func() uint64 { return 4711 }})
	if m.Current() != nil || m.Report().On {
		t.Fatal("a new mode is on")
	}
	rep, err := m.Set(model.Chaos{Duplicate: 1, APIError: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := model.Chaos{Seed: 4711, Duplicate: 1, APIError: 1, Delay: model.DefaultChaosDelay}
	if !rep.On || rep.Chaos != want || !rep.SeedChosen || !rep.Since.Equal(t0) {
		t.Errorf("set: %+v", rep)
	}
	if !strings.Contains(logs.String(), `chaos="seed=4711,duplicate=1,delay=2s,api-error=1" seedChosen=true`) {
		t.Errorf("the chosen seed is not logged:\n%s", logs.String())
	}
	r := m.Current()
	d := r.NextRequest()
	d.Failed(t0, "GET", "/v1/contexts/"+strings.Repeat("a", 300), "req_1")
	tk := r.Ticket(r.NextEvent(), 0)
	tk.Held(t0, "evt_1", "dlv_1", time.Second)
	rep = m.Report()
	if rep.Requests != 1 || rep.Events != 1 || rep.APIErrors != 1 || rep.Held != 1 || len(rep.Decisions) != 2 ||
		rep.Decisions[0].Action != model.ChaosHeld || len(rep.Decisions[1].Path) != maxPath {
		t.Errorf("report after two decisions: %+v", rep)
	}
	if !strings.Contains(logs.String(), "chaos: api-error") || !strings.Contains(logs.String(), "chaos: held") {
		t.Errorf("the decisions are not logged at debug level:\n%s", logs.String())
	}

	m.Restart(t0.Add(time.Hour))
	rep = m.Report()
	if rep.Chaos != want || rep.Requests != 0 || len(rep.Decisions) != 0 || !rep.Since.Equal(t0.Add(time.Hour)) {
		t.Errorf("after a restart: %+v", rep)
	}
	if d2 := m.Current().NextRequest(); d2.N != 1 || d2.Status != d.Status {
		t.Errorf("after a restart the first request draws %+v, before %+v", d2, d)
	}

	if _, err := m.Set(model.Chaos{Reorder: 2}, t0); err == nil {
		t.Error("reorder 2 was set")
	}
	if m.Report().Chaos != want {
		t.Errorf("a refused Set changed the mode: %+v", m.Report())
	}
	stale := m.Current().Ticket(1, 0)
	if !m.Stop() || m.Stop() || m.Current() != nil || m.Report().On {
		t.Error("Stop did not turn the mode off once")
	}
	if stale.Duplicate(1) != 0 {
		t.Error("a stopped mode decided a duplicate")
	}
	mu.Lock()
	defer mu.Unlock()
	if changes != 5 { // set, two decisions, restart, stop
		t.Errorf("%d changes told, want 5", changes)
	}
}

// TestDecisionsKeptAreBounded: a run keeps its newest MaxChaosDecisions
// decisions, newest first, and counts them all.
func TestDecisionsKeptAreBounded(t *testing.T) {
	t.Parallel()
	r := set(t, model.Chaos{Seed: 1, APIError: 1}).Current()
	const n = 3*model.MaxChaosDecisions + 7
	for range n {
		r.NextRequest().Failed(t0, "GET", "/v1/contexts", "req_1")
	}
	rep := r.Report()
	if rep.APIErrors != n || len(rep.Decisions) != model.MaxChaosDecisions {
		t.Fatalf("%d failed, %d kept", rep.APIErrors, len(rep.Decisions))
	}
	for i, d := range rep.Decisions {
		if d.Request != uint64(n-i) {
			t.Fatalf("decision %d is request %d, want %d", i, d.Request, n-i)
		}
	}
}

// TestNothingToDecide: a run without reorder or duplicate gives no
// ticket, and one without api-error fails no request.
func TestNothingToDecide(t *testing.T) {
	t.Parallel()
	r := set(t, model.Chaos{Seed: 3}).Current()
	if r.Ticket(1, 0).Active() {
		t.Error("a ticket of a run that neither reorders nor duplicates")
	}
	for range 100 {
		if d := r.NextRequest(); d.Status != 0 {
			t.Fatalf("request %d failed", d.N)
		}
	}
	var zero Ticket
	if zero.Hold() != 0 || zero.Duplicate(1) != 0 {
		t.Error("the zero ticket decided")
	}
}
