package mockserver

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkAdvanceSchedule takes one delivery to a receiver that always
// answers 503 (in memory: no connection) through its six attempts, with
// one advance of 27 hours ("catch-up") and, as the baseline, as a test
// had to before the clock caught up: an advance to each due time and a
// WaitIdle after it ("by hand"). Each op is one event and six attempts.
func BenchmarkAdvanceSchedule(b *testing.B) {
	for _, how := range []string{"catch-up", "by hand"} {
		b.Run(how, func(b *testing.B) {
			clock := NewFakeClock(dlvT0)
			s := unvalidated(New(WithClock(clock), WithKey(Key{Token: "sk_bench", Plan: PlanUnlimited, Account: "acme"}),
				withDeliveryClient(&http.Client{Transport: benchReceiver{}})))
			b.Cleanup(func() { _ = s.Close(context.Background()) })
			body := `{"url":"http://127.0.0.1/flaky","events":["team.member.added"],"secret":"whsec_bench"}`
			rec := newRecorder()
			s.ServeHTTP(rec, httptestRequest("POST", "/v1/webhooks", body, "sk_bench"))
			if rec.Code != http.StatusCreated {
				b.Fatalf("register webhook: %d %s", rec.Code, rec.Body)
			}
			ctx := context.Background()
			data := json.RawMessage(`{"teamId":"team_1","userId":"user_1","role":"editor"}`)
			delays := DefaultRetrySchedule()
			for b.Loop() {
				if _, err := s.EmitEvent(ctx, "acme", "team.member.added", data); err != nil {
					b.Fatal(err)
				}
				if how == "catch-up" {
					clock.Advance(27 * time.Hour)
					continue
				}
				_ = s.WaitIdle(ctx)
				for _, d := range delays {
					clock.Advance(d)
					_ = s.WaitIdle(ctx)
				}
				clock.Advance(27*time.Hour - 26*time.Hour - 36*time.Minute)
			}
			b.StopTimer()
			if c := s.svc.Deliveries.Counts(); c.Pending != 0 || c.Failed == 0 {
				b.Fatalf("deliveries %+v: want every one failed after its schedule", c)
			}
		})
	}
}
