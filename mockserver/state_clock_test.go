package mockserver

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// clockT0 is a start far ahead of any machine's clock, so that a state
// saved on a fake clock from there is ahead of the wall clock.
var clockT0 = time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC)

// savedOnFakeClock runs a server with a state file on a fake clock from
// clockT0, advances it 27 hours, creates a context, stops it and returns
// the context's id and the clock's time at the stop.
func savedOnFakeClock(t *testing.T, path string) (id string, at time.Time) {
	t.Helper()
	clock := NewFakeClock(clockT0)
	ts := stateServer(t, clock, path)
	clock.Advance(27 * time.Hour)
	c := create(t, ts, `{"name":"Made a day ahead"}`)
	stop(t, ts)
	return c.ID, clock.Now()
}

// TestStateFileResumesFakeClock: across a restart the time never goes
// back. A fake clock resumes where the state file left it: exactly when
// nothing used it yet (the command's -fake-clock, started at any time),
// else moved forward only; an update after the restart is never dated
// before the context's creation. The file says its clock was a fake one.
func TestStateFileResumesFakeClock(t *testing.T) {
	t.Parallel()
	saved := clockT0.Add(27 * time.Hour)
	tests := []struct {
		name  string
		clock func() *FakeClock
		want  time.Time
	}{
		{"a new clock started earlier", func() *FakeClock { return NewFakeClock(clockT0.Add(-time.Hour)) }, saved},
		{"a new clock started later (the server was stopped a week)", func() *FakeClock { return NewFakeClock(saved.Add(7 * 24 * time.Hour)) }, saved},
		{"a clock already advanced, behind", func() *FakeClock {
			c := NewFakeClock(clockT0)
			c.Advance(time.Minute)
			return c
		}, saved},
		{"a clock already advanced, ahead", func() *FakeClock {
			c := NewFakeClock(saved)
			c.Advance(time.Hour)
			return c
		}, saved.Add(time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			id, at := savedOnFakeClock(t, path)
			if !at.Equal(saved) {
				t.Fatalf("the first clock stopped at %s", at)
			}
			doc, _ := os.ReadFile(path)
			if !strings.Contains(string(doc), `"savedAt":"2100-01-03T06:04:05.000Z","clock":"fake",`) {
				t.Errorf("the file does not say where its fake clock was: %.140s", doc)
			}
			clock := tt.clock()
			ts := stateServer(t, clock, path)
			if now := clock.Now(); !now.Equal(tt.want) {
				t.Errorf("the clock reads %s after the restart, want %s", now, tt.want)
			}
			r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + id, body: `{"name":"Renamed"}`, key: "sk_state_a"})
			var c contextsvc.Context
			if err := json.Unmarshal(r.Body, &c); err != nil || c.UpdatedAt.Before(c.CreatedAt) || c.CreatedAt.IsZero() {
				t.Errorf("after the restart: %d, created %s, updated %s (%v)", r.Status, c.CreatedAt, c.UpdatedAt, err)
			}
			stop(t, ts)
		})
	}
}

// TestStateFileAheadOfWallClock: a server on the wall clock refuses a
// state file saved ahead of it (a fake clock advanced), rather than date
// its changes before the file's: ErrStateClockAhead, naming when, and the
// file and its directory are left as they were.
func TestStateFileAheadOfWallClock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	savedOnFakeClock(t, path)
	if err := os.Remove(path + ".lock"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err := Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
	var sfe *StateFileError
	if !errors.Is(err, ErrStateClockAhead) || !errors.As(err, &sfe) || sfe.Path != path ||
		!strings.Contains(err.Error(), "saved at 2100-01-03T06:04:05Z by a fake clock") || !strings.Contains(err.Error(), "-fake-clock") {
		t.Fatalf("Open on the wall clock: %v; want ErrStateClockAhead saying when and how", err)
	}
	checkUntouched(t, path, before, 0o600)
}

// TestStateClockField: the document's clock is "fake" or "real" (or
// absent: the wall clock, as in documents written before it was); a
// wall clock's document has none, so older servers read it.
func TestStateClockField(t *testing.T) {
	t.Parallel()
	s := New(stateKeys...)
	defer s.Close(t.Context())
	for _, clock := range []string{"real", "fake"} {
		doc := strings.Replace(fixtureState, `"version":1,`, `"version":1,"clock":"`+clock+`",`, 1)
		if err := s.LoadState(strings.NewReader(doc)); err != nil {
			t.Errorf("clock %q: %v", clock, err)
		}
	}
	doc := strings.Replace(fixtureState, `"version":1,`, `"version":1,"clock":"sundial",`, 1)
	var se *StateError
	if err := s.LoadState(strings.NewReader(doc)); !errors.As(err, &se) || se.Path != "clock" || !strings.Contains(se.Message, `must be "fake" or "real"`) {
		t.Errorf("clock sundial: %v", err)
	}
	if saved := string(saveState(t, s)); strings.Contains(saved, `"clock"`) {
		t.Errorf("a wall clock's document says %.140s", saved)
	}
}
