package contextsvc_test

import (
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/dedupetest"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestMemoryDeduperContract runs the rules every Deduper follows on the
// MemoryDeduper, on a fake clock.
func TestMemoryDeduperContract(t *testing.T) {
	t.Parallel()
	dedupetest.Run(t, dedupetest.Harness{
		New: func(t *testing.T) (contextsvc.Deduper, func(time.Duration)) {
			clk := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
			d, err := contextsvc.NewMemoryDeduper(100, contextsvc.WithDeduperClock(clk.Now))
			if err != nil {
				t.Fatal(err)
			}
			return d, clk.Advance
		},
		Short: time.Minute,
	})
}
