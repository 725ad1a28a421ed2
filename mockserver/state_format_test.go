package mockserver

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStateFormatFixture loads testdata/state-format-1.json, a document of
// format version 1 as the server wrote it before its JSON was read and
// written with a library (escaped strings, pending deliveries with their
// attempts and events, an inactive webhook, a deleted context's gap), and
// saves it again: the server holds what the file says, and writes the
// same bytes back (saying its clock is a fake one).
func TestStateFormatFixture(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/state-format-1.json")
	if err != nil {
		t.Fatal(err)
	}
	s := New(append([]Option{WithClock(NewFakeClock(dlvT0.Add(time.Minute)))}, stateKeys...)...)
	defer s.Close(t.Context())
	if err := s.LoadState(bytes.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	a := s.Contexts("team-a")
	if len(a) != 3 || len(s.Contexts("team-b")) != 1 {
		t.Fatalf("contexts: %d in team-a, %d in team-b", len(a), len(s.Contexts("team-b")))
	}
	if c := a[0]; c.Name != "Runbook v2" || len(c.Versions) != 4 || c.Versions[0].Name != `Runbook "main"` ||
		strings.Join(c.Tags, ",") != "db" || c.Versions[1].Changes.WordCountDelta != 1 {
		t.Errorf("the first context: %+v", c)
	}
	if c := a[1]; c.Name != "Ünïcödé Straße <&>" || c.Content != "日本語 text <b>&amp;</b>\ttab\r\n\u2028line\u2029 \\ back / slash 😀" ||
		strings.Join(c.Tags, ",") != "ops,<x>" || c.Version != 1 {
		t.Errorf("the escaped context: %+v", c)
	}
	hooks := s.Webhooks()
	if len(hooks) != 2 || hooks[1].Active || !hooks[0].Active || hooks[0].Account != "team-a" {
		t.Errorf("webhooks: %+v", hooks)
	}
	pending := s.Deliveries(DeliveryFilter{State: DeliveryPending})
	for _, d := range pending {
		if len(d.Attempts) != 2 || d.Attempts[1].ResponseSnippet != "<html>\"busy\" & \u2028 later</html>" ||
			d.Attempts[1].StatusCode != 503 || !d.NextAttemptAt.Equal(dlvT0.Add(6*time.Minute)) {
			t.Errorf("delivery %s: %+v", d.ID, d)
		}
	}
	if len(pending) != 7 {
		t.Errorf("%d pending deliveries, want 7", len(pending))
	}
	var again bytes.Buffer
	if err := s.SaveState(&again); err != nil {
		t.Fatal(err)
	}
	// The same bytes, but the mark of the fake clock the server runs on
	// (the fixture, written on the wall clock, has none).
	want := bytes.Replace(doc, []byte(`"savedAt":"2026-11-21T12:01:00.000Z",`), []byte(`"savedAt":"2026-11-21T12:01:00.000Z","clock":"fake",`), 1)
	if !bytes.Equal(again.Bytes(), want) {
		t.Errorf("saved again, the document differs:\n%s", again.Bytes())
	}
}

// FuzzLoadState reads any document: LoadState never panics, refuses with a
// *StateError (nothing else: the reader here never fails), and a document
// it takes is saved as one that loads again and is saved the same.
func FuzzLoadState(f *testing.F) {
	fixture, err := os.ReadFile("testdata/state-format-1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Add([]byte(fixtureState))
	for _, tc := range badStates {
		if doc := tc.document(nil); len(doc) < 4096 {
			f.Add([]byte(doc))
		}
	}
	clock := NewFakeClock(dlvT0.Add(time.Minute))
	f.Fuzz(func(t *testing.T, doc []byte) {
		s := New(append([]Option{WithClock(clock)}, stateKeys...)...)
		defer s.Close(t.Context())
		err := s.LoadState(bytes.NewReader(doc))
		if err != nil {
			var se *StateError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidState) {
				t.Fatalf("%q: %v, not a *StateError", doc, err)
			}
			return
		}
		saved := saveState(t, s)
		again := New(append([]Option{WithClock(clock)}, stateKeys...)...)
		defer again.Close(t.Context())
		if err := again.LoadState(bytes.NewReader(saved)); err != nil {
			t.Fatalf("%q was taken, but what it was saved as is refused: %v\n%s", doc, err, saved)
		}
		if resaved := saveState(t, again); !bytes.Equal(saved, resaved) {
			t.Fatalf("%q: saved, loaded and saved again, the document differs:\n%s\n---\n%s", doc, saved, resaved)
		}
	})
}
