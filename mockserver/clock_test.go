package mockserver

import (
	"testing"
	"time"
)

func TestRealClock(t *testing.T) {
	t.Parallel()
	var c Clock = RealClock{}
	before := time.Now()
	if now := c.Now(); now.Before(before) {
		t.Errorf("Now %v is before %v", now, before)
	}
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	never := c.AfterFunc(time.Hour, func() { t.Error("a stopped timer fired") })
	if !never.Stop() {
		t.Error("Stop of a waiting timer reported false")
	}
}
