package mockserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// A receiver's test under chaos: every delivery attempt the receiver
// acknowledges may come again (duplicate), and any delivery may be held
// back so that a later event of its context overtakes it (reorder). A
// receiver built on NewWebhookHandler, with its memory deduper, handles
// each event once, loses none, and must not assume the order: here a
// context.updated can come before its context.created. The seed makes the
// run the same each time.
func ExampleWithChaos() {
	clock := mockserver.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	srv := mockserver.New(mockserver.WithClock(clock),
		mockserver.WithChaos(mockserver.Chaos{Seed: 42, Duplicate: 0.5, Reorder: 0.5}),
		mockserver.WithDeliveryWorkers(1)) // one sender: the same order, and output, each run
	defer srv.Close(context.Background())

	var mu sync.Mutex
	handled := map[string]int{}  // times each event was handled
	first := map[string]string{} // the type of each context's first event handled
	handle := func(_ context.Context, ev *contextsvc.Event) error {
		var d struct{ ContextID string }
		_ = json.Unmarshal(ev.Data, &d)
		mu.Lock()
		defer mu.Unlock()
		handled[ev.ID]++
		if first[d.ContextID] == "" {
			first[d.ContextID] = string(ev.Type)
		}
		return nil
	}
	deduper, _ := contextsvc.NewMemoryDeduper(1000, contextsvc.WithDeduperClock(clock.Now))
	h, err := contextsvc.NewWebhookHandler("whsec_chaos", handle,
		contextsvc.WithDeduper(deduper), contextsvc.WithWebhookClock(clock.Now)) // the replay window on the mock's clock
	if err != nil {
		panic(err)
	}
	receiver := httptest.NewServer(h)
	defer receiver.Close()

	call := func(method, path, body string) []byte {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.DefaultKey().Token)
		srv.ServeHTTP(rec, req)
		return rec.Body.Bytes()
	}
	call("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["context.created","context.updated"],"secret":"whsec_chaos"}`)
	for i := range 6 {
		var c struct{ ID string }
		_ = json.Unmarshal(call("POST", "/v1/contexts", fmt.Sprintf(`{"name":"Runbook %d"}`, i)), &c)
		call("PUT", "/v1/contexts/"+c.ID, `{"content":"# Changed"}`)
	}

	// The attempts due now, then those chaos held back or repeats, each
	// at its time on the fake clock (at most Delay, 2 s, later).
	for {
		_ = srv.WaitIdle(context.Background())
		at, ok := srv.NextAttemptAt()
		if !ok {
			break
		}
		clock.Set(at)
	}

	deliveries := srv.Deliveries(mockserver.DeliveryFilter{})
	once := true
	duplicates := 0
	for _, d := range deliveries {
		once = once && handled[d.EventID] == 1
		for _, a := range d.Attempts {
			if a.Chaos.Action == mockserver.ChaosDuplicate {
				duplicates++
			}
		}
	}
	updatedFirst := 0
	for _, typ := range first {
		if typ == "context.updated" {
			updatedFirst++
		}
	}
	fmt.Println("events delivered:", len(deliveries))
	fmt.Println("each handled once:", once)
	fmt.Println("duplicates the deduper answered:", duplicates)
	fmt.Println("contexts whose update came before their creation:", updatedFirst)
	fmt.Println("chaos:", srv.Chaos().Chaos)
	// Output:
	// events delivered: 12
	// each handled once: true
	// duplicates the deduper answered: 7
	// contexts whose update came before their creation: 5
	// chaos: seed=42,duplicate=0.5,reorder=0.5,delay=2s
}
