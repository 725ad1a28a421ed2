package adminapi

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

// TestStreamKeepAlive: an idle stream sends a comment line every
// keep-alive period (15 s; here 10 ms), so proxies keep it and a page
// that went is noticed.
func TestStreamKeepAlive(t *testing.T) {
	t.Parallel()
	ks, err := keys.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Clock: clock.Real{}, Engine: clock.Real{}, Keys: ks})
	h := New(Config{Service: svc, KeepAlive: 10 * time.Millisecond})
	hs := httptest.NewServer(h)
	t.Cleanup(func() { svc.Changes.CloseAll(); hs.Close() })
	// Without keep-alive comments the read would wait (until go test's
	// -timeout).
	req, _ := http.NewRequestWithContext(t.Context(), "GET", hs.URL+"/_mock/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	comments := 0
	for comments < 3 && sc.Scan() {
		if sc.Text() == ": keep-alive" {
			comments++
		}
	}
	if comments < 3 {
		t.Errorf("%d keep-alive comments before the stream ended: %v", comments, sc.Err())
	}
}
