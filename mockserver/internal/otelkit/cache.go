// Package otelkit is what the project's OpenTelemetry instrumentations
// (package contextsvcotel and the mock server's telemetry) share to keep
// their work off every request: bounded caches of what they build once
// (span names, attribute sets, start options), and a header carrier that
// does not allocate for the W3C fields.
//
// Each module that uses this package keeps a copy of it (modules version
// apart, so none imports another's internal packages); the repository's
// module checks (internal/tools/modules) hold the copies identical.
package otelkit

import "sync"

// MaxCached bounds each Cache. Its keys are few (endpoints, routes,
// statuses, error types) but come from the network; past the bound, values
// are built afresh each time instead of kept.
const MaxCached = 1024

// Cache keeps values built from their keys, at most MaxCached of them, for
// concurrent use. The zero value is empty and ready. (A map behind a read
// lock rather than a sync.Map: its keys are often structs, which sync.Map
// would box on every look-up.)
type Cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// Get returns the value for k, building it with build on a miss.
func (c *Cache[K, V]) Get(k K, build func() V) V {
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
	if len(c.m) < MaxCached {
		if c.m == nil {
			c.m = make(map[K]V)
		}
		c.m[k] = v
	}
	return v
}

// Len is how many values the cache keeps.
func (c *Cache[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
