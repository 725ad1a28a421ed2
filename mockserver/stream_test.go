package mockserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
)

// streamGoroutines counts the goroutines serving a /_mock/stream.
func streamGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "adminapi.(*Handler).stream(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// eventually waits until cond holds, checking every few milliseconds: the
// goroutines it watches end on their own schedule, not the mock's clock,
// and however long the machine takes. It gives up only when the test
// binary's -timeout is near, to say what it was waiting for.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if dl, ok := t.Deadline(); ok && time.Until(dl) < 10*time.Second {
			t.Fatalf("still waiting, with the test binary's -timeout near: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawStream opens /_mock/stream with ctx and returns its body, once the
// hello has arrived.
func rawStream(t *testing.T, ctx context.Context, ts *TestServer) io.ReadCloser {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.HTTP.URL+"/_mock/stream", nil)
	res, err := ts.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("the stream's first line: %q %v", line, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res.Body
}

// drain reads the stream's body to its end: it returns once the stream
// has ended (a stream that never ends is go test's -timeout).
func drain(body io.Reader) { _, _ = io.Copy(io.Discard, body) }

// TestStreamEnds: a stream ends when its client goes, when the server's
// Close runs and when its http.Server shuts down (CloseStreams), and
// after Close a new one is a 503. A reset does not end it: it says
// "reset" and goes on.
func TestStreamEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(ts *TestServer, cancel context.CancelFunc)
	}{
		{"the client goes", func(ts *TestServer, cancel context.CancelFunc) { cancel() }},
		{"Server.Close", func(ts *TestServer, cancel context.CancelFunc) {
			if err := ts.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}},
		{"http.Server shutdown", func(ts *TestServer, cancel context.CancelFunc) { ts.CloseStreams() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := NewTestServer(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			body := rawStream(t, ctx, ts)
			tc.end(ts, cancel)
			drain(body)
			eventually(t, "the server still counts the subscriber", func() bool { return ts.svc.Changes.Subscribers() == 0 })
			if tc.name != "the client goes" {
				if r := admin(t, ts, "GET", "/_mock/stream", ""); r.Status != http.StatusServiceUnavailable {
					t.Errorf("a new stream after %s: %d", tc.name, r.Status)
				}
			}
		})
	}
	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		ts := NewTestServer(t)
		sr := openStream(t, ts)
		ts.Reset()
		ts.AddFault(Fault{Status: 500})
		if got := sr.changes(2); got[0].Kind != changes.KindReset || got[1].Kind != changes.KindFaults {
			t.Errorf("after a reset: %+v", got)
		}
	})
}

// TestStreamNoGoroutineLeak: every stream's goroutine ends with it, those
// of clients that stopped reading during a burst (they resync) included,
// and the subscriptions go with them. It does not run in parallel, so the
// streams it counts are its own.
func TestStreamNoGoroutineLeak(t *testing.T) {
	base := streamGoroutines()
	ts := NewTestServer(t)
	const n = 20
	cancels := make([]context.CancelFunc, n)
	for i := range n {
		ctx, cancel := context.WithCancel(t.Context())
		cancels[i] = cancel
		rawStream(t, ctx, ts) // read no further: a page that stopped reading
	}
	eventually(t, "20 streams serving", func() bool { return streamGoroutines() == base+n })
	// A burst larger than a subscriber's buffer, which nobody reads.
	for range 2 * changes.Buffer {
		ts.svc.Changes.Publish(changes.Change{Kind: changes.KindFaults, Action: "added"})
	}
	for _, cancel := range cancels[:n/2] {
		cancel()
	}
	eventually(t, "the streams of the clients that went end", func() bool { return streamGoroutines() == base+n/2 })
	if err := ts.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every stream ends on Close", func() bool { return streamGoroutines() == base })
	if got := ts.svc.Changes.Subscribers(); got != 0 {
		t.Errorf("%d subscribers left", got)
	}
}

// TestDeliveryChangeFeedsStreamAndStateFile: one hook tells a delivery's
// change both to the dashboard's streams and to the state file: a retry
// that the clock makes due (no request involved, so nothing else notes
// it) reaches the stream and marks the state to be written.
func TestDeliveryChangeFeedsStreamAndStateFile(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(dlvT0)
	ts := stateServer(t, clock, filepath.Join(t.TempDir(), "state.json"), WithStateInterval(time.Hour))
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) { w.WriteHeader(500) })
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	sr := openStream(t, ts)
	if err := ts.svc.SaveStateFile(); err != nil { // the file is current
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	idle(t, ts)
	seen := map[string]bool{}
	for _, c := range sr.changes(3) {
		seen[c.Kind+" "+c.Action] = true
	}
	if !seen["delivery attemptStarted"] || !seen["delivery attemptFinished"] {
		t.Errorf("the stream's changes: %v", seen)
	}
	if _, changed := ts.svc.StateFileStatus(); !changed {
		t.Error("the retry's attempt did not mark the state file to be written")
	}
}

// TestStreamRefusesOtherOrigins: a stream asked for by a page of another
// origin (an <img>, an EventSource) is a 403 and takes no slot; the
// dashboard's own, an address typed in and a program get the stream.
func TestStreamRefusesOtherOrigins(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	host := strings.TrimPrefix(ts.HTTP.URL, "http://")
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"an <img> on another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, 403},
		{"an EventSource on another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": "http://evil.example"}, 403},
		{"a page on another port", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, 403},
		{"an old browser, another origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"an old browser, a null origin", map[string]string{"Origin": "null"}, 403},
		{"the dashboard", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, 200},
		{"an old browser, this origin", map[string]string{"Origin": "http://" + host}, 200},
		{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"a program", nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.HTTP.URL+"/_mock/stream", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			res, err := ts.HTTP.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("%d, want %d", res.StatusCode, tc.status)
			}
			if tc.status == 200 {
				cancel()
				eventually(t, "the stream's slot is given back", func() bool { return ts.svc.Changes.Subscribers() == 0 })
				return
			}
			var e struct {
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(res.Body).Decode(&e); err != nil || e.Error.Type != "forbidden" || !strings.Contains(e.Error.Message, "cross-site request refused") {
				t.Errorf("the refusal: %+v %v", e, err)
			}
			if n := ts.svc.Changes.Subscribers(); n != 0 {
				t.Errorf("a refused stream holds a slot: %d open", n)
			}
		})
	}
}
