// Package queue is the first-in first-out list the mock server's
// histories are kept in (events, finished deliveries): push at the back,
// pop at the front, a page of the live items found by binary search.
//
// It owns the slots and their compaction, nothing of what they hold.
package queue

// Queue is a first-in first-out list: push at the back, pop at the front,
// both in amortized constant time. The live items are one slice in push
// order (all), so a page of them starts with a binary search. Popped slots
// are zeroed at once, so a popped item is never kept alive, and the slice
// is compacted when half of it is popped slots, so it holds at most about
// twice the live items (and append's slack, as much again).
type Queue[T any] struct {
	items []T
	head  int // items[:head] are popped (zero) slots
}

// Push appends v at the back.
func (q *Queue[T]) Push(v T) { q.items = append(q.items, v) }

// Len returns the number of live items.
func (q *Queue[T]) Len() int { return len(q.items) - q.head }

// All returns the live items, oldest first. The slice is valid until the
// next push or pop.
func (q *Queue[T]) All() []T { return q.items[q.head:] }

// Front returns the oldest live item; the queue must not be empty.
func (q *Queue[T]) Front() T { return q.items[q.head] }

// PopFront removes and returns the oldest live item; the queue must not be
// empty.
func (q *Queue[T]) PopFront() T {
	var zero T
	v := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 32 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return v
}

// Filter keeps the live items for which keep is true, in order, in linear
// time.
func (q *Queue[T]) Filter(keep func(T) bool) {
	live := q.items[q.head:]
	n := 0
	for _, v := range live {
		if keep(v) {
			live[n] = v
			n++
		}
	}
	clear(live[n:])
	q.items = q.items[:q.head+n]
}
