package proxy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/page"
)

func finding(op string, msgLen int) *Finding {
	return &Finding{Method: "GET", Target: "/v1/contexts", Operation: op, Status: 200,
		Answer: []contract.Mismatch{{Where: "body", Rule: "#/x", Message: strings.Repeat("m", msgLen)}}}
}

// TestLogBounds: the log keeps the newest findings within its bounds in
// entries and in bytes (always the newest), while the counts cover every
// exchange; pages walk the kept ones, filtered by operation.
func TestLogBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		limit, maxBytes int
		add, msgLen     int
		wantKept        int
	}{
		{"under both bounds", 10, 1 << 20, 5, 10, 5},
		{"past the count", 3, 1 << 20, 5, 10, 3},
		{"past the bytes", 100, 3 * 1100, 10, 1000, 2},
		{"one larger than the bytes", 100, 10, 3, 1000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := NewLog(tt.limit, tt.maxBytes)
			for i := range tt.add {
				op := "listContexts"
				if i%2 == 1 {
					op = "getContext"
				}
				l.record(op, finding(op, tt.msgLen), false, false)
				l.record(op, nil, false, false) // an exchange that matched
			}
			kept, bytes := l.Stats()
			if kept != tt.wantKept || (kept > 1 && bytes > tt.maxBytes) {
				t.Errorf("kept %d findings, %d bytes; want %d within %d", kept, bytes, tt.wantKept, tt.maxBytes)
			}
			all := l.All()
			if last := all[len(all)-1].ID; last != "cm_"+strconv.Itoa(tt.add) {
				t.Errorf("the newest kept is %s", last)
			}
			exchanges, mismatched := 0, 0
			for _, c := range l.Counts() {
				exchanges += c.Exchanges
				mismatched += c.Mismatched
			}
			if exchanges != 2*tt.add || mismatched != tt.add {
				t.Errorf("counts: %d exchanges, %d mismatched", exchanges, mismatched)
			}
			items, next := l.Page(page.First(true), 100, "listContexts")
			for _, f := range items {
				if f.Operation != "listContexts" {
					t.Errorf("a page of listContexts holds %s", f.Operation)
				}
			}
			if next != 0 {
				t.Errorf("next %d", next)
			}
			l.Reset()
			if n, b := l.Stats(); n != 0 || b != 0 || len(l.Counts()) != 0 {
				t.Errorf("after Reset: %d, %d, %v", n, b, l.Counts())
			}
		})
	}
}
