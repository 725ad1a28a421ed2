package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// receiverSecret signs the deliveries to receivers.
const receiverSecret = "whsec_replicas"

// receivers is the replicas of one webhook receiver, each its own
// NewWebhookHandler with its own Deduper (one prefix, one Redis, a Redis
// client each), behind a round-robin front as a load balancer would
// spread deliveries. The receiver's function never fails; receivers
// counts how often it ran for each event.
type receivers struct {
	handlers []http.Handler
	next     atomic.Uint64
	sent     atomic.Int64 // attempts answered so far

	mu       sync.Mutex
	handled  map[string]int // event id → times the function ran for it
	attempts []receiverAttempt
}

// receiverAttempt is one delivery attempt: when it was sent and answered,
// its answer, and whether the receiver's function ran in it.
type receiverAttempt struct {
	id         string
	start, end time.Time
	status     int
	handled    bool
}

// handledKey marks a request whose function ran: the front puts a flag
// in its context.
type handledKey struct{}

// newReceivers builds one replica per Deduper.
func newReceivers(t testing.TB, dedupers ...contextsvc.Deduper) *receivers {
	t.Helper()
	r := &receivers{handled: map[string]int{}}
	fn := func(ctx context.Context, ev *contextsvc.Event) error {
		r.mu.Lock()
		r.handled[ev.ID]++
		r.mu.Unlock()
		ctx.Value(handledKey{}).(*atomic.Bool).Store(true)
		return nil
	}
	for _, d := range dedupers {
		h, err := contextsvc.NewWebhookHandler(receiverSecret, fn, contextsvc.WithDeduper(d))
		if err != nil {
			t.Fatal(err)
		}
		r.handlers = append(r.handlers, h)
	}
	return r
}

// send delivers one attempt of event id (timestamped ts) to the next
// replica and returns its answer.
func (r *receivers) send(id string, ts time.Time) int {
	body := eventJSON(id, ts)
	req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
	req.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, receiverSecret))
	var handled atomic.Bool
	req = req.WithContext(context.WithValue(req.Context(), handledKey{}, &handled))
	w := httptest.NewRecorder()
	a := receiverAttempt{id: id, start: time.Now()}
	r.handlers[r.next.Add(1)%uint64(len(r.handlers))].ServeHTTP(w, req)
	a.end, a.status, a.handled = time.Now(), w.Code, handled.Load()
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
	r.sent.Add(1)
	return a.status
}

// deliver delivers each event ids yields, copies times (once per
// matching webhook; the copies go out one after the other, while other
// events' go out concurrently), from workers concurrent senders, until
// each copy is answered 200, or 409 (another attempt holds the event: the
// copy is set aside and returned, for the caller to deliver later). Any
// other answer is retried 50 ms later, as the service retries (sooner).
// Every event has the timestamp ts.
func (r *receivers) deliver(ids iter.Seq[string], copies, workers int, ts time.Time) (busy []string) {
	queue := make(chan string)
	var open sync.WaitGroup // copies not yet answered 200 or 409
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range queue {
				switch r.send(id, ts) {
				case http.StatusOK:
					open.Done()
				case http.StatusConflict:
					mu.Lock()
					busy = append(busy, id)
					mu.Unlock()
					open.Done()
				default:
					time.AfterFunc(50*time.Millisecond, func() { queue <- id })
				}
			}
		})
	}
	for id := range ids {
		for range copies {
			open.Add(1)
			queue <- id
		}
	}
	open.Wait()
	close(queue)
	wg.Wait()
	return busy
}

// counts returns, per status, how many attempts were answered with it.
func (r *receivers) counts() map[int]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[int]int{}
	for _, a := range r.attempts {
		n[a.status]++
	}
	return n
}

// handledCount returns how many times the function has run, in all.
func (r *receivers) handledCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.handled {
		n += c
	}
	return n
}

// eventIDs yields n event ids, "evt_<tag>_<i>".
func eventIDs(tag string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range n {
			if !yield(fmt.Sprintf("evt_%s_%06d", tag, i)) {
				return
			}
		}
	}
}
