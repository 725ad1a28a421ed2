package mockserver

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// FuzzAppendJSONString checks the string quoting against encoding/json:
// byte for byte on valid UTF-8; on invalid UTF-8 (which no stored string
// holds), where Go releases differ (1.26 writes each bad byte as \ufffd,
// 1.27 as a literal U+FFFD), what it writes is valid JSON that decodes to
// what encoding/json decodes its own output to.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80", "\U0001F600", `\ufffd`, "\ufffd\xff", "\\\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatalf("appendJSONString(%q) lost what dst held", s)
		}
		got = got[1:]
		if utf8.ValidString(s) {
			if string(got) != string(want) {
				t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
			}
			return
		}
		var gotS, wantS string
		if err := json.Unmarshal(got, &gotS); err != nil || !utf8.Valid(got) {
			t.Fatalf("appendJSONString(%q) = %s: not valid JSON of valid UTF-8 (%v)", s, got, err)
		}
		if err := json.Unmarshal(want, &wantS); err != nil || gotS != wantS {
			t.Fatalf("appendJSONString(%q) = %s decodes to %q; encoding/json's %s to %q", s, got, gotS, want, wantS)
		}
	})
}

// TestContextJSON checks that the hand-written Context and Version shapes
// are what encoding/json makes of contextJSON and versionJSON.
func TestContextJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.FixedZone("x", 3600))
	for _, tags := range [][]string{nil, {}, {"a", "<b>"}} {
		name, content := "N \"&\"", "# T\n\nbody\t<x>"
		v := newContextView("ctx_1", name, content, tags, 7, at, at.Add(time.Hour))
		wantTags := tags
		if wantTags == nil {
			wantTags = []string{}
		}
		want, _ := json.Marshal(contextJSON{ID: "ctx_1", Name: name, Content: content, Tags: wantTags, Version: 7,
			CreatedAt: formatTime(at), UpdatedAt: formatTime(at.Add(time.Hour))})
		if diff := cmp.Diff(string(want), string(v.appendJSON(nil))); diff != "" {
			t.Errorf("context (-encoding/json +hand-written):\n%s", diff)
		}
		sv := StoredVersion{Version: 3, Name: name, Content: content, Tags: tags, CreatedAt: at, CreatedBy: "user_1",
			Changes: contextsvc.Changes{SectionsModified: []string{"(preamble)", "A & B"}, WordCountDelta: -4}}
		want, _ = json.Marshal(versionJSON{ContextID: "ctx_1", Version: 3, Name: sv.Name, Content: sv.Content, Tags: wantTags,
			CreatedAt: formatTime(at), CreatedBy: "user_1", Changes: sv.Changes})
		if diff := cmp.Diff(string(want), string(appendVersionJSON(nil, "ctx_1", &sv))); diff != "" {
			t.Errorf("version (-encoding/json +hand-written):\n%s", diff)
		}
	}
}

// TestAppendJSONTime checks the fast timestamp writer against formatTime.
func TestAppendJSONTime(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{
		time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", -7*3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		if got, want := string(appendJSONTime(nil, at)), `"`+formatTime(at)+`"`; got != want {
			t.Errorf("%v: %s, want %s", at, got, want)
		}
	}
}

// TestNewEvent checks the hand-written envelope against encoding/json, and
// that an event's data is the tail of its body, in copies too.
func TestNewEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123456789, time.UTC)
	data := []byte(`{"contextId":"ctx_1","name":"a \"b\" \u003cc\u003e"}`)
	ev := newEvent("evt_1", `x"y`, at, "acct_1", data)
	want, _ := json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{"evt_1", `x"y`, formatTime(at), data})
	if string(ev.Body) != string(want) {
		t.Errorf("body %s, want %s", ev.Body, want)
	}
	for _, e := range []Event{ev, ev.clone()} {
		if string(e.Data) != string(data) || &e.Data[0] != &e.Body[len(e.Body)-1-len(data)] {
			t.Errorf("data %s is not the tail of the body %s", e.Data, e.Body)
		}
	}
	c := ev.clone()
	c.Body[1] = 'X'
	if ev.Body[1] == 'X' {
		t.Error("a clone shares its body with the event")
	}
}
