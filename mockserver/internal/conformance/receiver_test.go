package conformance

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

func TestReceiverURL(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", ":0"} {
		r, err := startReceiver(addr, "s", "", time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if u := r.url(); !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0/") {
			t.Errorf("listening on %s: url %s", addr, u)
		}
		r.close()
	}
}

// TestReceiver sends deliveries to the receiver: it answers as the SDK's
// handler would (401 for a bad signature), fails only the first attempt
// of the chosen context's context.created, and keeps each delivery with
// the SDK's reading of it.
func TestReceiver(t *testing.T) {
	t.Parallel()
	const secret = "whsec_receiver_test"
	r, err := startReceiver("127.0.0.1:0", secret, "to fail", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	created := func(name string) []byte {
		return []byte(`{"id":"evt_` + strings.Repeat("a", 20) + name[:1] + `","type":"context.created","timestamp":"2026-01-02T03:04:05.000Z",` +
			`"data":{"contextId":"ctx_1","name":"` + name + `","version":1,"tags":[],"createdBy":"user_1"}}`)
	}
	post := func(body []byte, signature, attempt string) int {
		req, _ := http.NewRequest(http.MethodPost, r.url(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if signature != "" {
			req.Header.Set(contract.HeaderSignature, signature)
		}
		req.Header.Set(contract.HeaderDelivery, "dlv_1")
		req.Header.Set(contract.HeaderDeliveryAttempt, attempt)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fail, other := created("to fail"), created("other")
	for _, tt := range []struct {
		name      string
		body      []byte
		signature string
		attempt   string
		want      int
	}{
		{"unsigned", other, "", "1", http.StatusUnauthorized},
		{"signed with another secret", other, contextsvc.Sign(other, "nope"), "1", http.StatusUnauthorized},
		{"another context", other, contextsvc.Sign(other, secret), "1", http.StatusOK},
		{"the chosen one, first attempt", fail, contextsvc.Sign(fail, secret), "1", http.StatusServiceUnavailable},
		{"the chosen one, retried", fail, contextsvc.Sign(fail, secret), "2", http.StatusOK},
	} {
		if got := post(tt.body, tt.signature, tt.attempt); got != tt.want {
			t.Errorf("%s: answered %d, want %d", tt.name, got, tt.want)
		}
	}
	ds, failed := r.snapshot()
	if len(ds) != 5 || failed != ds[3] || failed.attempt() != 1 || failed.ev == nil || ds[0].ev != nil || ds[0].reading.Err == nil {
		t.Errorf("kept %d deliveries, failed %+v", len(ds), failed)
	}
	if got := r.wait(t.Context(), forever, func(ds []*delivery) bool { return len(ds) == 5 }); !got {
		t.Error("wait did not see the deliveries it has")
	}
}

const forever = 24 * time.Hour
