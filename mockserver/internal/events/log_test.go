package events

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/memtest"
)

// TestEventHistoryBytes: the event history keeps at most its byte bound,
// dropping the oldest first from every index, keeps the newest event
// whatever its size, and counts nothing after a reset.
func TestEventHistoryBytes(t *testing.T) {
	t.Parallel()
	ev := func(i, dataLen int) Event {
		data := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", dataLen))
		// Two types of one length: every event of 1,000 bytes of data
		// counts the same.
		typ := contextsvc.EventContextCreated
		if i%2 == 1 {
			typ = contextsvc.EventContextDeleted
		}
		return New(fmt.Sprintf("evt_%03d", i), typ, t0, fmt.Sprint("acct", i%3), []byte(data))
	}
	one := size(new(ev(0, 1000)))
	tests := []struct {
		name     string
		limit    int
		maxBytes int
		sizes    []int // data bytes of each event, in order
		wantKept []int // the indexes of the events kept
	}{
		{"under both bounds", 10, 10 * one, []int{1000, 1000, 1000}, []int{0, 1, 2}},
		{"the byte bound first", 10, 3 * one, []int{1000, 1000, 1000, 1000, 1000}, []int{2, 3, 4}},
		{"the count first", 2, 10 * one, []int{1000, 1000, 1000, 1000}, []int{2, 3}},
		{"a large event drops several", 10, 3 * one, []int{1000, 1000, 1000, 2000}, []int{2, 3}},
		{"one event past the bound is kept alone", 10, 3 * one, []int{1000, 1000, 5000}, []int{2}},
		{"and goes with the next", 10, 3 * one, []int{5000, 1000}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := NewLog(tt.limit, tt.maxBytes)
			for i, n := range tt.sizes {
				l.Add(ev(i, n))
			}
			var want, got []string
			wantBytes := 0
			for _, i := range tt.wantKept {
				e := ev(i, tt.sizes[i])
				want = append(want, e.ID)
				wantBytes += size(&e)
			}
			for _, e := range l.All() {
				got = append(got, e.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if n, b := l.Stats(); n != len(want) || b != wantBytes {
				t.Errorf("stats %d events, %d bytes; want %d, %d", n, b, len(want), wantBytes)
			}
			if _, b := l.Stats(); b > tt.maxBytes && len(want) > 1 {
				t.Errorf("%d bytes kept, past the bound of %d", b, tt.maxBytes)
			}
			// Every index holds the kept events and no other.
			indexed := 0
			for _, q := range l.byType {
				indexed += q.Len()
			}
			for _, q := range l.byAccount {
				indexed += q.Len()
			}
			if indexed != 2*len(want) || len(l.byID) != len(want) {
				t.Errorf("the indexes hold %d by type and account and %d by id, want %d and %d", indexed, len(l.byID), 2*len(want), len(want))
			}
			l.Reset()
			if n, b := l.Stats(); n != 0 || b != 0 {
				t.Errorf("after reset: %d events, %d bytes", n, b)
			}
			l.Add(ev(0, 10))
			l.ResetTo(100)
			if n, b := l.Stats(); n != 0 || b != 0 || len(l.byID) != 0 || len(l.byAccount) != 0 {
				t.Errorf("after resetTo: %d events, %d bytes, %d by id, %d accounts", n, b, len(l.byID), len(l.byAccount))
			}
		})
	}
}

// TestEventHistoryMemoryAccounting: what the history counts for its events
// is what they hold on the heap, within 10% below and 50% above.
func TestEventHistoryMemoryAccounting(t *testing.T) {
	const n = 10_000
	for _, dataLen := range []int{10, 300, 3000} {
		l := NewLog(n, maxBytes)
		// The events exist before the log takes them, as in the server;
		// their bytes are added to the heap growth below.
		evs := make([]Event, n)
		given := 0
		data := []byte(`{"pad":"` + strings.Repeat("x", dataLen) + `"}`)
		for i := range evs {
			evs[i] = New(ids.New("evt_"), contextsvc.EventTeamMemberAdded, t0, "acct_default", data)
			given += len(evs[i].Body) + len(evs[i].ID)
		}
		memtest.CheckAccounting(t, fmt.Sprintf("events of %d bytes of data", dataLen), given, func() {
			for _, ev := range evs {
				l.Add(ev)
			}
		}, func() int { _, b := l.Stats(); return b })
		runtime.KeepAlive(l)
		runtime.KeepAlive(evs)
	}
}

// t0 is the tests' events' time.
var t0 = time.Date(2026, 11, 21, 20, 51, 0, 123_000_000, time.UTC)

// maxBytes is the server's byte bound of the history
// (mockserver.MaxEventHistoryBytes).
const maxBytes = 64 << 20
