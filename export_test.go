package contextsvc

// BucketSize is the number of tokens l's bucket holds, for the external
// tests that check the numbers the docs give.
func BucketSize(l *LocalLimiter) int { return l.rl.Burst() }
