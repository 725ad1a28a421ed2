package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// TestNewEvent checks the hand-written envelope against encoding/json, and
// that an event's data is the tail of its body, in copies too.
func TestNewEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.UTC)
	data := []byte(`{"contextId":"ctx_1","name":"a \"b\" \u003cc\u003e"}`)
	ev := New("evt_1", `x"y`, at, "acct_1", data)
	want, _ := json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{"evt_1", `x"y`, jsonwire.FormatTime(at), data})
	if string(ev.Body) != string(want) {
		t.Errorf("body %s, want %s", ev.Body, want)
	}
	for _, e := range []Event{ev, Clone(ev)} {
		if string(e.Data) != string(data) || &e.Data[0] != &e.Body[len(e.Body)-1-len(data)] {
			t.Errorf("data %s is not the tail of the body %s", e.Data, e.Body)
		}
	}
	c := Clone(ev)
	c.Body[1] = 'X'
	if ev.Body[1] == 'X' {
		t.Error("a clone shares its body with the event")
	}
}
