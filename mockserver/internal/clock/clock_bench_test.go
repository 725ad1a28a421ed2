package clock

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFakeClockAdvance advances a clock through 1,000 timers spread
// evenly over a jump of an hour and of a hundred years: an advance stops
// at each due time, so the two cost the same (the timers', not the
// jump's).
func BenchmarkFakeClockAdvance(b *testing.B) {
	const timers = 1000
	for _, jump := range []time.Duration{time.Hour, 100 * 365 * 24 * time.Hour} {
		b.Run(fmt.Sprint("jump=", jump), func(b *testing.B) {
			f := func() {}
			for b.Loop() {
				c := New(t0)
				for i := range timers {
					c.AfterFunc(jump/timers*time.Duration(i+1), f)
				}
				c.Advance(jump)
			}
		})
	}
}
