package syncbuf

import (
	"fmt"
	"sync"
	"testing"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSeen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before string   // written before Seen
		writes []string // written after, one Write each
		want   bool
	}{
		{"already there", "ready on :8080\n", nil, true},
		{"in one write", "", []string{"ready on :8080\n"}, true},
		{"across writes", "", []string{"rea", "dy on", " :8080\n"}, true},
		{"across the watch", "rea", []string{"dy on :8080\n"}, true},
		{"never", "", []string{"started\n", "stopped\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b Buffer
			fmt.Fprint(&b, tt.before)
			ch := b.Seen("ready on")
			for _, w := range tt.writes {
				fmt.Fprint(&b, w)
			}
			if got := isClosed(ch); got != tt.want {
				t.Errorf("seen %t, want %t (buffer %q)", got, tt.want, b.String())
			}
			if again := b.Seen("ready on"); isClosed(again) != tt.want {
				t.Errorf("a second Seen: closed %t, want %t", isClosed(again), tt.want)
			}
		})
	}
}

func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b Buffer
	done := b.Seen("writer 7 line 99\n")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", w, i)
			}
		})
	}
	wg.Wait()
	if !isClosed(done) {
		t.Error("the last line of writer 7 was not seen")
	}
	if n := len(b.String()); n < 8*100*len("writer 0 line 0\n") {
		t.Errorf("%d bytes, fewer than written", n)
	}
}
