package mockserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// TestDashboardAttemptTrace: on a traced server, a delivery's attempts show
// their trace id, the one the attempt's span (and the admin API) has.
func TestDashboardAttemptTrace(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	rig := newOtelRig(t)
	ts := NewTestServer(t, WithClock(NewFakeClock(time.Now())), WithTracerProvider(rig.tp))
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer receiver.Close()
	registerHook(t, ts, receiver.URL, "whsec_trace", contextsvc.EventContextPublished)
	if _, err := ts.EmitEvent(context.Background(), "", contextsvc.EventContextPublished, []byte(`{"contextId":"ctx_1"}`)); err != nil {
		t.Fatal(err)
	}
	dl, err := ts.WaitForDelivery(t.Context(), func(d Delivery) bool { return len(d.Attempts) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	id := dl.Attempts[0].TraceID
	if len(id) != 32 {
		t.Fatal("the attempt has no trace id")
	}
	d := openDashboard(t, ts, "#/deliveries?id="+dl.ID)
	got := d.wait(`document.querySelector('.attempts .attempt-trace') && document.querySelector('.attempts .attempt-trace').textContent`)
	if !strings.Contains(got, id) {
		t.Errorf("the attempt shows %s, want its trace id %s", got, id)
	}
}
