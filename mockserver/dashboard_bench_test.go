package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
)

// benchReceiver is an in-memory webhook receiver: the deliveries' HTTP
// client hands it each attempt without a connection, so seeding 100,000
// deliveries costs no 100,000 loopback round trips. Its answer depends on
// the webhook's path: /ok answers 200, /flaky 503 with a JSON error, and
// /down fails as an unreachable host does.
type benchReceiver struct{}

func (benchReceiver) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	answer := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: r}
	}
	switch r.URL.Path {
	case "/ok":
		return answer(http.StatusOK, `{"received":true}`), nil
	case "/flaky":
		return answer(http.StatusServiceUnavailable, `{"error":"search index is rebuilding","retryAfterSeconds":30}`), nil
	default:
		return nil, errors.New("dial tcp 127.0.0.1:9: connect: connection refused")
	}
}

// withDeliveryClient makes the server send its delivery attempts with c.
func withDeliveryClient(c *http.Client) Option {
	return func(cf *config) error { cf.deliveryClient = c; return nil }
}

// dashboardBenchServer serves a mock holding n deliveries (a multiple of
// 10), seeded through the Go API: ten webhooks of one account (seven
// healthy, two answering 503, one unreachable) get every event of n/10,
// on a fake clock with one retry a minute later. The clock is moved past
// the retries of all but the last 10% of the events, so about 70% of the
// deliveries have succeeded, 27% failed after two attempts and 3% wait
// for their retry. It is served over loopback without the validator,
// whose checks would weigh more than the server.
func dashboardBenchServer(b *testing.B, n int) string {
	b.Helper()
	clock := NewFakeClock(dlvT0)
	s := unvalidated(New(WithClock(clock), WithKey(Key{Token: "sk_bench", Plan: PlanUnlimited, Account: "acme"}),
		WithRetrySchedule([]time.Duration{time.Minute}), WithHistoryLimit(max(n, 1)), WithDeliveryBacklog(max(n, 1)),
		withDeliveryClient(&http.Client{Transport: benchReceiver{}})))
	hs := httptest.NewServer(s)
	b.Cleanup(func() {
		s.CloseStreams()
		hs.Close()
		_ = s.Close(context.Background())
	})
	if n == 0 {
		return hs.URL
	}
	for i, path := range []string{"ok", "ok", "ok", "ok", "ok", "ok", "ok", "flaky", "flaky", "down"} {
		body := fmt.Sprintf(`{"url":"http://127.0.0.1/%s","events":["context.updated"],"secret":"whsec_%d"}`, path, i)
		req := httptest.NewRequest("POST", "/v1/webhooks", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk_bench")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("register webhook: %d %s", rec.Code, rec.Body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	emit := func(from, to int) {
		for i := from; i < to; i++ {
			data := fmt.Sprintf(`{"contextId":"ctx_bench%020d","name":"Runbook %d","version":%d,"updatedBy":"user_bench0000000000000000",`+
				`"changes":{"sections_modified":["Detect"],"word_count_delta":3}}`, i, i%97, 2+i%5)
			if _, err := s.EmitEvent(ctx, "acme", contextsvc.EventContextUpdated, json.RawMessage(data)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.WaitIdle(ctx); err != nil {
			b.Fatal(err)
		}
	}
	events := n / 10
	emit(0, events-events/10)
	clock.Advance(time.Minute)
	emit(events-events/10, events)
	if got := s.svc.Deliveries.Counts(); got.Pending+got.Succeeded+got.Failed != n {
		b.Fatalf("%+v deliveries, want %d", got, n)
	} else {
		b.Logf("seeded %d deliveries (%+v) through the Go API in %v", n, got, time.Since(start).Round(10*time.Millisecond))
	}
	return hs.URL
}

// dashboardLoad is what one load of the dashboard took, from the start of
// its navigation.
type dashboardLoad struct {
	FCP  time.Duration // first contentful paint (the page's frame)
	List time.Duration // the first page of deliveries rendered and painted
}

// loadDashboard navigates the tab to the dashboard at base and waits until
// its deliveries list is painted. Each load has a URL of its own (n): the
// same URL with a fragment again would be no new load.
func loadDashboard(ctx context.Context, base string, n int) (dashboardLoad, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/_mock/ui/?load=%d#/deliveries", base, n))); err != nil {
		return dashboardLoad{}, err
	}
	tm, err := chromedp.Run(ctx, browsertest.PageTiming())
	if err != nil {
		return dashboardLoad{}, err
	}
	// The page marks "dashboard-painted" in the first task after the frame
	// that shows its first list.
	ms, err := chromedp.Run(ctx, chromedp.Poll[float64](`(() => {
		const m = performance.getEntriesByName('dashboard-painted')[0];
		return m ? m.startTime : 0;
	})()`, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		return dashboardLoad{}, err
	}
	return dashboardLoad{FCP: tm.FirstContentfulPaint, List: time.Duration(ms * float64(time.Millisecond))}, nil
}

// BenchmarkDashboardFirstPaint loads the dashboard in headless chromium
// with 100,000 deliveries in the mock, beside two baselines loaded in the
// same rounds, in a rotating order: an empty mock, and one holding 50
// deliveries (one page: the same rows to render, none of the bulk). For
// each it reports the first contentful paint and the time until the first
// page of deliveries is painted, both from the start of the navigation
// (the Performance API), and the ratios of the 100,000's time to each
// baseline's, taken round by round. Seeding takes a few seconds, outside
// the timing:
//
//	go test ./mockserver -run '^$' -bench BenchmarkDashboardFirstPaint -benchtime 20x
func BenchmarkDashboardFirstPaint(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"empty", 0}, {"50", 50}, {"100k", 100_000}}
	urls := make([]string, len(sizes))
	for i, sz := range sizes {
		urls[i] = dashboardBenchServer(b, sz.n)
	}
	ctx := browsertest.New(b)
	n := 0
	for _, u := range urls { // the page's files in the tab's cache, as on a reload
		n++
		if _, err := loadDashboard(ctx, u, n); err != nil {
			b.Fatal(err)
		}
	}
	sum := make([]dashboardLoad, len(urls))
	ratios := make([]float64, len(urls)) // the 100k's list time over each
	round := 0
	for b.Loop() {
		got := make([]dashboardLoad, len(urls))
		for k := range urls {
			i := (k + round) % len(urls)
			n++
			l, err := loadDashboard(ctx, urls[i], n)
			if err != nil {
				b.Fatal(err)
			}
			got[i] = l
			sum[i].FCP += l.FCP
			sum[i].List += l.List
		}
		for i := range urls {
			ratios[i] += float64(got[len(urls)-1].List) / float64(got[i].List)
		}
		round++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(round) }
	for i, sz := range sizes {
		b.ReportMetric(ms(sum[i].FCP), "fcp-"+sz.name+"-ms")
		b.ReportMetric(ms(sum[i].List), "list-"+sz.name+"-ms")
	}
	b.ReportMetric(ratios[0]/float64(round), "list-100k/empty")
	b.ReportMetric(ratios[1]/float64(round), "list-100k/50")
	b.ReportMetric(0, "ns/op")
}
