package events

import (
	"encoding/json"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// TestNewEvent checks the hand-written envelope against encoding/json of
// its definition (model.EventJSON), byte for byte, over ids, types and
// data that need escapes and times in other zones; and that an event's
// data is the tail of its body, in copies too.
func TestNewEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		id   string
		typ  contextsvc.EventType
		at   time.Time
		data string
	}{
		{"evt_1", contextsvc.EventContextCreated, at, `{"contextId":"ctx_1","name":"a \"b\" \u003cc\u003e"}`},
		{`evt_"<&>"\`, `x"y<z>&\` + "\u2028\t\u00e9", at.In(time.FixedZone("x", -5*3600)), `{}`},
		{"evt_é😀\u2029", "team.member.added", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), `{"teamId":"team_1","nested":{"a":[1,2.5,null,true]}}`},
	} {
		ev := New(tc.id, tc.typ, tc.at, "acct_1", []byte(tc.data))
		want, err := json.Marshal(model.EventJSON{ID: tc.id, Type: tc.typ, Timestamp: jsonwire.FormatTime(tc.at), Data: json.RawMessage(tc.data)})
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Body) != string(want) {
			t.Errorf("body %s, want %s", ev.Body, want)
		}
	}
	data := []byte(`{"contextId":"ctx_1"}`)
	ev := New("evt_1", contextsvc.EventContextCreated, at, "acct_1", data)
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
