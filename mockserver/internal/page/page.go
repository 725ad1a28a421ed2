// Package page walks a list kept in order of a position (a sequence
// number), a page at a time: after or before a position, skipping what a
// filter refuses, at most MaxScan refusals a page, so every page of every
// list costs a binary search, the records it tests and its items.
//
// It owns the walk; the lists, their positions and the cursors that carry
// a position are their owners'.
package page

import (
	"math"
	"sort"
)

// MaxScan bounds how many kept records a filtered page of an admin
// list walks past without a match. A filter that has an index of its own
// (a delivery's event, webhook, account or event type; an event's type or
// account) picks the records to walk, so a page of one filter costs its
// binary search and its items. What no index selects (a delivery's state,
// which changes; the second of two filters) is tested record by record:
// after MaxScan records without the page filling, the page ends
// early, holding fewer items than asked (even none), with hasMore and a
// cursor that goes on from where the walk stopped. So every page costs at
// most a binary search, MaxScan tests and its items, at any depth.
const MaxScan = 10_000

// Start is where a page begins: after position Pos (ascending), or
// before it (descending). The first page of a descending list starts
// before math.MaxUint64.
type Start struct {
	Pos  uint64
	Desc bool
}

// First is the start of a list's first page in the given order.
func First(desc bool) Start {
	if desc {
		return Start{Pos: math.MaxUint64, Desc: true}
	}
	return Start{}
}

// Walk visits src (sorted by ascending key) from start, in its order,
// passing each record for which keep is true to take until take has
// limit of them. It returns the position to continue from when more may
// follow, 0 when none do. After maxScan records that keep refused (the
// lists use MaxScan), it stops early and returns the position of
// the last one it looked at.
func Walk[T any](src []T, key func(T) uint64, start Start, limit, maxScan int, keep func(T) bool, take func(T)) (next uint64) {
	var i, end, step int
	if start.Desc {
		i = sort.Search(len(src), func(i int) bool { return key(src[i]) >= start.Pos }) - 1
		end, step = -1, -1
	} else {
		i = sort.Search(len(src), func(i int) bool { return key(src[i]) > start.Pos })
		end, step = len(src), 1
	}
	taken, refused := 0, 0
	for ; i != end; i += step {
		it := src[i]
		if !keep(it) {
			if refused++; refused >= maxScan && i+step != end {
				return key(it)
			}
			continue
		}
		if taken == limit {
			return key(src[i-step])
		}
		take(it)
		taken++
	}
	return 0
}
