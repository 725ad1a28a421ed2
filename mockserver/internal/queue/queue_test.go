package queue

import (
	"slices"
	"testing"
)

func TestQueue(t *testing.T) {
	t.Parallel()
	var q Queue[int]
	var want []int
	for i := range 1000 {
		q.Push(i)
		want = append(want, i)
		if i%3 == 0 {
			if got := q.PopFront(); got != want[0] {
				t.Fatalf("pop %d, want %d", got, want[0])
			}
			want = want[1:]
		}
		if !slices.Equal(q.All(), want) {
			t.Fatalf("after %d: %v, want %v", i, q.All(), want)
		}
		if cap(q.items) > 4*len(want)+64 {
			t.Fatalf("after %d: capacity %d for %d items", i, cap(q.items), len(want))
		}
	}
	q.Filter(func(v int) bool { return v%2 == 0 })
	want = slices.DeleteFunc(want, func(v int) bool { return v%2 != 0 })
	if !slices.Equal(q.All(), want) {
		t.Fatalf("after filter: %v", q.All())
	}
	for q.Len() > 0 {
		q.PopFront()
	}
	if q.head != 0 || len(q.items) != 0 {
		t.Fatalf("empty queue: head %d, %d slots", q.head, len(q.items))
	}
}
