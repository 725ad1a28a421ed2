package mockserver

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// TestReceiverURLRedacted: a receiver's url carrying a password and a
// query token shows neither in the attempt's error (Go and the admin
// API), the delivery log or a WebhookUpdate's String; the error still
// says what happened, and the admin API's webhook and delivery keep the
// url as registered.
func TestReceiverURLRedacted(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(dead.URL, "http://")
	dead.Close() // connection refused from now on
	const pass, token = "pw_s3cretpass", "tok_s3crettoken"
	hookURL := "http://bot:" + pass + "@" + host + "/hooks/in?token=" + token + "&channel=ops"
	const masked = "http://xxxxx@"

	var logs bytes.Buffer
	var mu sync.Mutex
	ts, _ := newFakeTestServer(t, WithRetrySchedule([]time.Duration{}),
		WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))))
	hook := registerHook(t, ts, hookURL, "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)

	dls := ts.Deliveries(DeliveryFilter{WebhookID: hook})
	if len(dls) != 1 || len(dls[0].Attempts) != 1 {
		t.Fatalf("deliveries %+v", dls)
	}
	got := dls[0].Attempts[0].Error
	want := `Post "` + masked + host + `/hooks/in?token=xxxxx&channel=xxxxx": dial tcp ` + host + `: connect: connection refused`
	if got != want {
		t.Errorf("the attempt's error:\n%s\nwant\n%s", got, want)
	}
	var dl Delivery
	admin(t, ts, "GET", "/_mock/deliveries/"+dls[0].ID, "").json(t, &dl)
	if len(dl.Attempts) != 1 || dl.Attempts[0].Error != want {
		t.Errorf("the admin API's attempt error: %+v", dl.Attempts)
	}
	if dl.URL != hookURL {
		t.Errorf("the admin API's delivery url %q, want it as registered", dl.URL)
	}
	var wh struct{ URL string }
	admin(t, ts, "GET", "/_mock/webhooks/"+hook, "").json(t, &wh)
	if wh.URL != hookURL {
		t.Errorf("the admin API's webhook url %q, want it as registered", wh.URL)
	}

	update := WebhookUpdate{URL: &hookURL}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	for name, text := range map[string]string{"the log": logged, "WebhookUpdate.String": update.String(), "%#v": fmt.Sprintf("%#v", update)} {
		if strings.Contains(text, pass) || strings.Contains(text, token) || !strings.Contains(text, masked) {
			t.Errorf("%s shows the url unredacted, or not at all:\n%s", name, text)
		}
	}
	if !strings.Contains(logged, "connection refused") {
		t.Errorf("the log does not say why the attempt failed:\n%s", logged)
	}
}
