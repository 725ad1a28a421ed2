// Package linediff is the line diff the dashboard shows between two
// versions of a context (GET /_mock/contexts/{id}/diff): Myers' O((N+M)D)
// algorithm, bounded so that any two contents the API accepts (1 MB each)
// cost time linear in their length. Lines common to both ends are set
// aside first (linear); the rest is diffed by Myers with at most MaxEdits
// edits and a budget of steps proportional to its length. Past either
// bound the diff gives up and says the versions are too different: the
// page then shows both texts side by side instead.
//
// It owns the diff of two strings and nothing else: how a diff is sent
// and cut to size is the admin API's. It imports nothing of the mock
// server.
package linediff

import (
	"strings"
)

const (
	// MaxEdits bounds the edit distance (lines deleted plus lines
	// inserted) a diff looks for. Myers keeps one row of its search per
	// edit, (MaxEdits+1)(MaxEdits+2)/2 int32s in all: 2 MB.
	MaxEdits = 1000
	// defaultStepsPerLine and defaultBaseSteps set the budget of Myers'
	// steps (diagonals tried and lines compared) for N+M lines:
	// defaultStepsPerLine*(N+M) + defaultBaseSteps. A step is a comparison of two
	// ints, so two 1 MB texts of short lines (about a million lines in
	// all) cost some 0.1 s at most.
	defaultStepsPerLine = 64
	defaultBaseSteps    = 1 << 20
	// contextLines is how many unchanged lines a hunk shows around a change.
	contextLines = 3
)

// Op is what a line of a diff does: the same in both texts, only in
// the old one (deleted) or only in the new one (inserted).
type Op byte

const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// Line is one line of a hunk.
type Line struct {
	Op Op
	// Text is the line without its newline.
	Text string
	// NoNewline marks the last line of a text that does not end with a
	// newline, so "a" and "a\n" differ visibly.
	NoNewline bool
}

// Hunk is a run of changes with up to contextLines unchanged lines
// around them. Start lines count from 1; a side with no lines has the
// number of the line before the hunk.
type Hunk struct {
	FromStart, FromLines int
	ToStart, ToLines     int
	Lines                []Line
}

// Diff is the difference between two texts, line by line.
type Diff struct {
	// Identical: the texts are the same.
	Identical bool
	// TooDifferent: more than the edits or steps the diff may spend; no
	// hunks are given.
	TooDifferent bool
	// Added and Removed count the inserted and deleted lines.
	Added, Removed int
	Hunks          []Hunk
}

// Texts diffs two texts line by line within the default bounds.
func Texts(from, to string) Diff {
	return textsBounded(from, to, MaxEdits, defaultStepsPerLine, defaultBaseSteps)
}

// splitLines splits s into lines, each with its newline but the last when
// s does not end with one. An empty s has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// textsBounded diffs from and to, giving up past maxEdits edits or
// stepsPerLine*(lines left after the common ends) + baseSteps steps.
func textsBounded(from, to string, maxEdits, stepsPerLine, baseSteps int) Diff {
	if from == to {
		return Diff{Identical: true}
	}
	a, b := splitLines(from), splitLines(to)
	// Lines common to both ends are no part of the search.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	// Each distinct line becomes a number, so Myers compares ints.
	ids := make(map[string]int32)
	number := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	midA, midB := number(a[pre:len(a)-suf]), number(b[pre:len(b)-suf])
	budget := stepsPerLine*(len(midA)+len(midB)) + baseSteps
	ops, ok := myers(midA, midB, maxEdits, budget)
	if !ok {
		return Diff{TooDifferent: true}
	}
	// The whole script: the common start, the middle, the common end.
	script := make([]Op, 0, pre+len(ops)+suf)
	for range pre {
		script = append(script, Equal)
	}
	script = append(script, ops...)
	for range suf {
		script = append(script, Equal)
	}
	return hunks(a, b, script)
}

// myers returns the shortest edit script turning a into b, one Op per
// step (equal, delete a line of a, insert a line of b), or false when it
// needs more than maxEdits edits or budget steps.
//
// It is Myers' greedy forward search ("An O(ND) Difference Algorithm and
// Its Variations", 1986): for d = 0, 1, … it finds, on each diagonal k =
// x-y reachable with d edits, the furthest point, following runs of equal
// lines ("snakes"). Row d of the search (the furthest x on diagonals -d,
// -d+2, …, d) is kept, so the path is found again backwards from the end.
func myers(a, b []int32, maxEdits, budget int) ([]Op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		if n+m > maxEdits {
			return nil, false
		}
		ops := make([]Op, 0, n+m)
		for range n {
			ops = append(ops, Delete)
		}
		for range m {
			ops = append(ops, Insert)
		}
		return ops, true
	}
	// v[k+off] is the furthest x on diagonal k, over rows d-1 and d.
	off := maxEdits + 1
	v := make([]int32, 2*maxEdits+3)
	// rows holds row d at rows[d*(d+1)/2 : d*(d+1)/2+d+1], diagonal k at
	// index (k+d)/2.
	var rows []int32
	steps := 0
	for d := 0; d <= maxEdits; d++ {
		for k := -d; k <= d; k += 2 {
			var x int32
			if k == -d || (k != d && v[k-1+off] < v[k+1+off]) {
				x = v[k+1+off] // down: insert b[y-1]
			} else {
				x = v[k-1+off] + 1 // right: delete a[x-1]
			}
			y := x - int32(k)
			for int(x) < n && int(y) < m && a[x] == b[y] {
				x++
				y++
				steps++
			}
			v[k+off] = x
			if int(x) >= n && int(y) >= m {
				return backtrack(a, b, rows, d), true
			}
			// Checked on every diagonal: one snake is at most a text's
			// length, so the budget is overrun by at most that.
			if steps++; steps > budget {
				return nil, false
			}
		}
		for k := -d; k <= d; k += 2 {
			rows = append(rows, v[k+off])
		}
	}
	return nil, false
}

// backtrack walks the rows 0 to D-1 of myers back from (len(a),
// len(b)), reached with D edits, and returns the edit script in order.
func backtrack(a, b []int32, rows []int32, D int) []Op {
	row := func(d, k int) int32 { return rows[d*(d+1)/2+(k+d)/2] }
	x, y := len(a), len(b)
	ops := make([]Op, 0, x+y)
	for d := D; d > 0; d-- {
		k := x - y
		var prevK int
		if k == -d || (k != d && row(d-1, k-1) < row(d-1, k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := int(row(d-1, prevK))
		prevY := prevX - prevK
		// The move lands on (startX, startY); a snake of equal lines runs
		// from there to (x, y).
		startX, startY := prevX, prevY
		if prevK == k+1 {
			startY++
		} else {
			startX++
		}
		for x > startX && y > startY {
			ops = append(ops, Equal)
			x--
			y--
		}
		if prevK == k+1 {
			ops = append(ops, Insert)
		} else {
			ops = append(ops, Delete)
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		ops = append(ops, Equal)
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// hunks groups the edit script of a → b into hunks: each change with up
// to contextLines unchanged lines before and after it, changes fewer than
// 2*contextLines+1 unchanged lines apart in one hunk, as diff -u does.
func hunks(a, b []string, script []Op) Diff {
	var d Diff
	line := func(op Op, s string) Line {
		text, nl := strings.CutSuffix(s, "\n")
		return Line{Op: op, Text: text, NoNewline: !nl}
	}
	i, j := 0, 0 // lines of a and b before script[si]
	for si := 0; si < len(script); {
		if script[si] == Equal {
			si, i, j = si+1, i+1, j+1
			continue
		}
		// A change at si: the hunk runs from contextLines lines before it
		// to contextLines lines after its last change.
		ctx := min(contextLines, si)
		end := si
		for {
			for end < len(script) && script[end] != Equal {
				end++
			}
			run := 0
			for end+run < len(script) && script[end+run] == Equal {
				run++
			}
			if end+run < len(script) && run <= 2*contextLines {
				end += run // the next change joins this hunk
				continue
			}
			end += min(run, contextLines)
			break
		}
		h := Hunk{FromStart: i - ctx + 1, ToStart: j - ctx + 1}
		for c := ctx; c > 0; c-- {
			h.Lines = append(h.Lines, line(Equal, a[i-c]))
		}
		h.FromLines, h.ToLines = ctx, ctx
		for ; si < end; si++ {
			switch script[si] {
			case Equal:
				h.Lines = append(h.Lines, line(Equal, a[i]))
				h.FromLines++
				h.ToLines++
				i++
				j++
			case Delete:
				h.Lines = append(h.Lines, line(Delete, a[i]))
				h.FromLines++
				d.Removed++
				i++
			default:
				h.Lines = append(h.Lines, line(Insert, b[j]))
				h.ToLines++
				d.Added++
				j++
			}
		}
		// A side without lines is numbered as the line before it, as in
		// diff -u.
		if h.FromLines == 0 {
			h.FromStart--
		}
		if h.ToLines == 0 {
			h.ToStart--
		}
		d.Hunks = append(d.Hunks, h)
	}
	return d
}
