package contextsvcotel

import "sync"

// maxCached bounds each cache of attribute sets and span options. Its keys
// are few (endpoints, statuses, error types) but come from the network; past
// the bound, values are built afresh each time instead of kept.
const maxCached = 1024

// boundedCache keeps values built from their keys, at most maxCached of
// them, for concurrent use. (A map behind a read lock rather than a
// sync.Map: its keys are structs, which sync.Map would box on every
// look-up.)
type boundedCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns the value for k, building it with build on a miss.
func (c *boundedCache[K, V]) get(k K, build func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = build()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return old
	}
	if len(c.m) < maxCached {
		if c.m == nil {
			c.m = make(map[K]V)
		}
		c.m[k] = v
	}
	return v
}
