package redisstore

// Share is how many limiters sharing the key the last heartbeat counted (0
// before the first): what a fall-back divides the plan by. Heartbeats run
// in the background, so a test waits for the count rather than for the
// heartbeat's request.
func (l *Limiter) Share() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.share
}
