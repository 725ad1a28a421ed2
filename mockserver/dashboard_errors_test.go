package mockserver

import (
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
)

// TestDashboardActionErrors: an action the admin API refuses shows the
// server's reason in the page, and changes nothing: a redelivery to an
// inactive webhook (409), a duration the clock does not take (400). And a
// route of no view says so, without an error.
func TestDashboardActionErrors(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	rc := newReceiver(t, answerStatus(500, `down`))
	ts, clock := newFakeTestServer(t, WithRetrySchedule([]time.Duration{}))
	hook := registerHook(t, ts, rc.URL+"/hook", "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	rc.waitHit(t)
	idle(t, ts)
	if _, err := ts.UpdateWebhook(hook, WebhookUpdate{Active: new(false)}); err != nil {
		t.Fatal(err)
	}
	dl := ts.Deliveries(DeliveryFilter{})[0]
	d := openDashboard(t, ts, "#/deliveries?id="+dl.ID)
	d.click("#redeliver")
	d.wait(`[...document.querySelectorAll('.toast-error')].some(t => t.textContent.includes('inactive or deleted') && t.textContent.includes('reactivated'))`)
	if got, _ := ts.Delivery(dl.ID); len(got.Attempts) != 1 || got.State != DeliveryFailed {
		t.Errorf("a refused redelivery changed the delivery: %+v", got)
	}
	evalAs[any](d, `document.querySelector('#clock-duration').value = '9999999h'`)
	d.click("#clock-form button")
	d.wait(`[...document.querySelectorAll('.toast-error')].some(t => t.textContent.includes('is not a duration'))`)
	if !clock.Now().Equal(dlvT0) {
		t.Errorf("a refused advance moved the clock to %v", clock.Now())
	}
	// A route that names no view of the page, but a name every object
	// has, is no view either.
	d.route("#/constructor")
	d.wait(`document.querySelector('.sidebar a[aria-current=page]') === null &&
		document.querySelector('main h1').textContent === 'No such view' && !document.querySelector('table.list')`)
	if n := evalAs[int](d, `[...document.querySelectorAll('.toast-error')].filter(t => !t.textContent.includes('inactive') && !t.textContent.includes('duration')).length`); n != 0 {
		t.Errorf("the route showed %d errors", n)
	}
	// The console shows the two refused requests, and nothing else.
	msgs, err := browsertest.Messages(d.tab)
	if err != nil {
		t.Error(err)
	}
	for _, m := range msgs {
		if browsertest.IsError(m) && !strings.Contains(m.URL, "/redeliver") && !strings.Contains(m.URL, "/_mock/clock/advance") {
			t.Errorf("console %s", browsertest.Describe(m))
		}
	}
}
