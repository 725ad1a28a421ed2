package changes

import (
	"fmt"
	"testing"
)

// TestChangeHubResync: a subscriber that falls more than changeBuffer
// changes behind holds no more than that, and is told to resync.
func TestChangeHubResync(t *testing.T) {
	t.Parallel()
	var h Hub
	slow, _ := h.Subscribe()
	fast, _ := h.Subscribe()
	for i := range Buffer + 100 {
		h.Publish(Change{Kind: KindEvent, ID: fmt.Sprint(i)})
		if i%100 == 0 {
			if got, resync := h.Take(fast, nil); len(got) == 0 || resync {
				t.Fatalf("the fast subscriber: %d changes, resync %v", len(got), resync)
			}
		}
		if n := len(slow.pending); n > Buffer {
			t.Fatalf("the slow subscriber holds %d changes", n)
		}
	}
	got, resync := h.Take(slow, nil)
	if !resync || len(got) != 0 {
		t.Fatalf("the slow subscriber: %d changes, resync %v; want none and a resync", len(got), resync)
	}
	h.Publish(Change{Kind: KindReset})
	if got, resync := h.Take(slow, nil); resync || len(got) != 1 {
		t.Errorf("after its resync: %d changes, resync %v", len(got), resync)
	}
	h.Unsubscribe(fast)
	h.CloseAll()
	select {
	case <-slow.done:
	default:
		t.Error("closeAll left a subscription open")
	}
	if sub, closed := h.Subscribe(); sub != nil || !closed {
		t.Error("a closed hub took a subscriber")
	}
}
