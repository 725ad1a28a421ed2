package page

import (
	"slices"
	"testing"
)

// TestWalkPage: the bound on a filtered walk, in both directions.
func TestWalkPage(t *testing.T) {
	t.Parallel()
	src := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	key := func(v uint64) uint64 { return v }
	even := func(v uint64) bool { return v%2 == 0 }
	for _, tc := range []struct {
		start      Start
		limit, max int
		keep       func(uint64) bool
		want       []uint64
		next       uint64
	}{
		{First(false), 3, 100, even, []uint64{2, 4, 6}, 7}, // 7 was looked at
		{Start{Pos: 7}, 3, 100, even, []uint64{8, 10}, 0},
		{Start{Pos: 6}, 3, 100, even, []uint64{8, 10}, 0},
		{First(true), 3, 100, even, []uint64{10, 8, 6}, 5},
		{Start{Pos: 6, Desc: true}, 3, 100, even, []uint64{4, 2}, 0},
		{First(false), 3, 2, func(v uint64) bool { return v > 8 }, nil, 2},
		{Start{Pos: 7}, 3, 2, func(v uint64) bool { return v > 8 }, []uint64{9, 10}, 0},
		{First(true), 3, 2, func(v uint64) bool { return v < 3 }, nil, 9},
		{First(false), 10, 100, even, []uint64{2, 4, 6, 8, 10}, 0},
		{Start{Pos: 10}, 3, 100, even, nil, 0},
	} {
		var got []uint64
		next := Walk(src, key, tc.start, tc.limit, tc.max, tc.keep, func(v uint64) { got = append(got, v) })
		if !slices.Equal(got, tc.want) || next != tc.next {
			t.Errorf("%+v limit %d max %d: %v next %d, want %v next %d", tc.start, tc.limit, tc.max, got, next, tc.want, tc.next)
		}
	}
}
