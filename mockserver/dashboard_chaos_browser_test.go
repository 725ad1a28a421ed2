package mockserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
)

// TestDashboardChaos: the dashboard shows the chaos mode (the top bar's
// badge, the Chaos view's settings, counts and decisions, each linking
// what it changed), what it did to each attempt, and an event's ordinal;
// it sets the mode from a SPEC, says why it refuses one, follows its
// decisions live, and turns it off.
func TestDashboardChaos(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithKey(chaosKey), WithChaos(Chaos{Seed: 11, Duplicate: 1, Reorder: 1, Delay: 500 * time.Millisecond}))
	rc := newReceiver(t, answerStatus(http.StatusOK, `{}`))
	registerHook(t, ts, rc.URL, "whsec_dash", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Chaotic"}`)
	settle(t, ts.Server, clock)
	dl := ts.Deliveries(DeliveryFilter{})[0]
	if len(dl.Attempts) != 2 {
		t.Fatalf("the delivery: %+v", dl)
	}

	d := openDashboard(t, ts, "#/chaos")
	d.wait(`!document.querySelector('#chaos-badge').hidden && document.querySelector('#count-chaos').textContent === 'on'`)
	d.wait(`document.querySelector('#chaos-spec-now').textContent === 'seed=11,duplicate=1,reorder=1,delay=500ms'`)
	// Newest first: the duplicate, then the hold, each linking the delivery.
	d.wait(`[...document.querySelectorAll('table.list.chaos tbody tr')].map(r => r.children[1].textContent).join() === 'duplicate,held'`)
	if got := evalAs[string](d, `document.querySelector('table.list.chaos tbody tr a').getAttribute('href')`); got != "#/deliveries?id="+dl.ID {
		t.Errorf("the decision links %q", got)
	}

	// The delivery says what chaos did to each attempt; the list marks it.
	d.route("#/deliveries?id=" + dl.ID)
	d.wait(`[...document.querySelectorAll('.attempt .badge-chaos')].map(b => b.textContent).join('|').match(/^duplicate of #1, \d+ ms after\|held \d+ ms$/)`)
	d.wait(`document.querySelector('table.list.deliveries .badge-chaos')`)
	d.route("#/events?id=" + dl.EventID)
	d.wait(`[...document.querySelectorAll('.detail dd')].some(dd => dd.textContent === 'event 1')`)

	// A SPEC the mode cannot use is refused, saying why; one it can is set.
	d.route("#/chaos")
	d.wait(`document.querySelector('#chaos-spec')`)
	evalAs[chromedp.Void](d, `document.querySelector('#chaos-spec').value = 'seed=0'`)
	d.click("#chaos-form button[type=submit]")
	d.wait(`[...document.querySelectorAll('.toast-error')].some(t => t.textContent.includes('0 is no seed'))`)
	evalAs[chromedp.Void](d, `document.querySelector('#chaos-spec').value = 'seed=9,api-error=1'`)
	d.click("#chaos-form button[type=submit]")
	d.wait(`document.querySelector('#chaos-spec-now') && document.querySelector('#chaos-spec-now').textContent === 'seed=9,api-error=1'`)
	if c := ts.Chaos().Chaos; c != (Chaos{Seed: 9, APIError: 1, Delay: DefaultChaosDelay}) {
		t.Errorf("set in the page, the mode is %+v", c)
	}
	// A request it fails shows at once.
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts", key: chaosKey.Token}); r.Status < 429 {
		t.Fatalf("api-error=1 let a request through: %d", r.Status)
	}
	d.wait(`document.querySelector('#chaos-api-errors').textContent === '1' && document.querySelector('table.list.chaos tbody tr').textContent.includes('GET /v1/contexts')`)

	d.click("#chaos-stop")
	d.wait(`document.querySelector('#chaos-off') && document.querySelector('#chaos-badge').hidden`)
	if ts.Chaos().On {
		t.Error("turned off in the page, the mode is on")
	}
	// The refused SPEC's 400 is the one error the console may show.
	msgs, err := browsertest.Messages(d.tab)
	if err != nil {
		t.Error(err)
	}
	for _, m := range msgs {
		if browsertest.IsError(m) && !(strings.HasSuffix(m.URL, "/_mock/chaos") && strings.Contains(m.Text, "400")) {
			t.Errorf("console %s", browsertest.Describe(m))
		}
	}
}
