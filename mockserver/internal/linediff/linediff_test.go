package linediff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// applyDiff rebuilds the new text from the old one and the hunks (lines
// outside them are the same in both), and checks the hunks' numbers and
// counts against their lines.
func applyDiff(t testing.TB, from string, d Diff) string {
	t.Helper()
	a := splitLines(from)
	var out strings.Builder
	next := 0 // the first line of a not yet copied
	added, removed := 0, 0
	for _, h := range d.Hunks {
		start := h.FromStart - 1
		if h.FromLines == 0 {
			start = h.FromStart
		}
		if start < next || start > len(a) {
			t.Fatalf("hunk %+v starts at line %d, before the end of the last one (%d) or past the text (%d lines)", h, start+1, next, len(a))
		}
		for ; next < start; next++ {
			out.WriteString(a[next])
		}
		from, to := 0, 0
		for _, l := range h.Lines {
			text := l.Text
			if !l.NoNewline {
				text += "\n"
			}
			switch l.Op {
			case Equal:
				if a[next] != text {
					t.Fatalf("hunk %+v: context line %q is %q in the old text", h, text, a[next])
				}
				out.WriteString(text)
				next++
				from++
				to++
			case Delete:
				if a[next] != text {
					t.Fatalf("hunk %+v: deleted line %q is %q in the old text", h, text, a[next])
				}
				next++
				from++
				removed++
			case Insert:
				out.WriteString(text)
				to++
				added++
			default:
				t.Fatalf("op %q", l.Op)
			}
		}
		if from != h.FromLines || to != h.ToLines {
			t.Fatalf("hunk %+v has %d old and %d new lines", h, from, to)
		}
	}
	for ; next < len(a); next++ {
		out.WriteString(a[next])
	}
	if added != d.Added || removed != d.Removed {
		t.Fatalf("the hunks add %d and remove %d lines; the diff says %d and %d", added, removed, d.Added, d.Removed)
	}
	return out.String()
}

// lcsEdits is the shortest edit distance (deletions plus insertions)
// between the lines of a and b, by the quadratic dynamic programme.
func lcsEdits(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return len(a) + len(b) - 2*prev[len(b)]
}

// checkDiff checks a diff of from and to: it rebuilds to, and it is a
// shortest one (against the quadratic oracle, for texts small enough).
func checkDiff(t testing.TB, from, to string, d Diff) {
	t.Helper()
	if d.Identical != (from == to) {
		t.Fatalf("Identical = %v for %q and %q", d.Identical, from, to)
	}
	if d.TooDifferent {
		return
	}
	if got := applyDiff(t, from, d); got != to {
		t.Fatalf("the diff of %q and %q rebuilds %q", from, to, got)
	}
	a, b := splitLines(from), splitLines(to)
	if len(a)*len(b) <= 1<<16 {
		if want := lcsEdits(a, b); d.Added+d.Removed != want {
			t.Fatalf("the diff of %q and %q has %d edits; the shortest has %d", from, to, d.Added+d.Removed, want)
		}
	}
}

func TestDiffTexts(t *testing.T) {
	t.Parallel()
	eq := func(s string) Line { return Line{Op: Equal, Text: s} }
	del := func(s string) Line { return Line{Op: Delete, Text: s} }
	ins := func(s string) Line { return Line{Op: Insert, Text: s} }
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name     string
		from, to string
		want     Diff
	}{
		{name: "identical", from: "a\nb\n", to: "a\nb\n", want: Diff{Identical: true}},
		{name: "both empty", want: Diff{Identical: true}},
		{
			name: "from empty", from: "", to: "a\nb\n",
			want: Diff{Added: 2, Hunks: []Hunk{{FromStart: 0, FromLines: 0, ToStart: 1, ToLines: 2, Lines: []Line{ins("a"), ins("b")}}}},
		},
		{
			name: "one line changed", from: "# Title\n\nold text\n\nend\n", to: "# Title\n\nnew text\n\nend\n",
			want: Diff{Added: 1, Removed: 1, Hunks: []Hunk{{FromStart: 1, FromLines: 5, ToStart: 1, ToLines: 5,
				Lines: []Line{eq("# Title"), eq(""), del("old text"), ins("new text"), eq(""), eq("end")}}}},
		},
		{
			name: "newline at the end", from: "a\nb", to: "a\nb\n",
			want: Diff{Added: 1, Removed: 1, Hunks: []Hunk{{FromStart: 1, FromLines: 2, ToStart: 1, ToLines: 2,
				Lines: []Line{eq("a"), {Op: Delete, Text: "b", NoNewline: true}, ins("b")}}}},
		},
		{
			name: "two hunks far apart",
			from: lines(20, func(i int) string { return fmt.Sprint("line ", i) }),
			to: lines(20, func(i int) string {
				switch i {
				case 2:
					return "second"
				case 18:
					return "eighteenth"
				}
				return fmt.Sprint("line ", i)
			}),
			want: Diff{Added: 2, Removed: 2, Hunks: []Hunk{
				{FromStart: 1, FromLines: 5, ToStart: 1, ToLines: 5, Lines: []Line{eq("line 1"), del("line 2"), ins("second"), eq("line 3"), eq("line 4"), eq("line 5")}},
				{FromStart: 15, FromLines: 6, ToStart: 15, ToLines: 6, Lines: []Line{eq("line 15"), eq("line 16"), eq("line 17"), del("line 18"), ins("eighteenth"), eq("line 19"), eq("line 20")}},
			}},
		},
		{
			name: "close changes share a hunk",
			from: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", to: "1\nTWO\n3\n4\n5\n6\n7\n8\nNINE\n",
			want: Diff{Added: 2, Removed: 2, Hunks: []Hunk{{FromStart: 1, FromLines: 9, ToStart: 1, ToLines: 9, Lines: []Line{
				eq("1"), del("2"), ins("TWO"), eq("3"), eq("4"), eq("5"), eq("6"), eq("7"), eq("8"), del("9"), ins("NINE")}}}},
		},
		{
			name: "deletion only", from: "a\nb\nc\n", to: "a\nc\n",
			want: Diff{Removed: 1, Hunks: []Hunk{{FromStart: 1, FromLines: 3, ToStart: 1, ToLines: 2, Lines: []Line{eq("a"), del("b"), eq("c")}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Texts(tt.from, tt.to)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diff (-want +got):\n%s", diff)
			}
			checkDiff(t, tt.from, tt.to, got)
		})
	}
}

// TestDiffTextsBounds: past its edits or its steps the diff says the texts
// are too different, and two legal contents of 1 MB of the worst kinds
// (every line different; every line the same but one in the middle; a
// single line each) finish, each in time linear in its length (the
// benchmark has the figures; a quadratic diff would not finish here).
func TestDiffTextsBounds(t *testing.T) {
	t.Parallel()
	if d := textsBounded("a\nb\nc\n", "x\ny\nz\n", 5, defaultStepsPerLine, defaultBaseSteps); !d.TooDifferent {
		t.Errorf("6 edits with at most 5: %+v", d)
	}
	if d := textsBounded("a\nb\nc\n", "x\ny\nz\n", 6, defaultStepsPerLine, defaultBaseSteps); d.TooDifferent || d.Added != 3 || d.Removed != 3 {
		t.Errorf("6 edits with at most 6: %+v", d)
	}
	if d := textsBounded("a\nb\nc\nd\n", "b\nc\nd\na\n", 100, 0, 3); !d.TooDifferent {
		t.Errorf("with a budget of 3 steps: %+v", d)
	}
	if testing.Short() {
		return
	}
	const size = 1_000_000
	distinct := func(prefix string) string {
		var b strings.Builder
		for i := 0; b.Len() < size-20; i++ {
			fmt.Fprintf(&b, "%s%d\n", prefix, i)
		}
		return b.String()
	}
	same := strings.Repeat("x\n", size/2)
	for _, tc := range []struct {
		name, from, to   string
		wantTooDifferent bool
	}{
		{"every line different", distinct("a"), distinct("b"), true},
		{"one line in the middle", same, same[:size/2] + "y\n" + same[size/2+2:], false},
		{"interleaved", distinct("a"), strings.ReplaceAll(distinct("a"), "0\n", "0!\n"), true},
		{"one line each", strings.Repeat("a", size), strings.Repeat("b", size), false},
		{"same lines, ends changed", "p\n" + same[:size-4] + "q\n", "r\n" + same[:size-4] + "s\n", false},
	} {
		d := Texts(tc.from, tc.to)
		if d.TooDifferent != tc.wantTooDifferent {
			t.Errorf("%s: TooDifferent = %v, want %v", tc.name, d.TooDifferent, tc.wantTooDifferent)
		}
		checkDiff(t, tc.from, tc.to, d)
	}
}

// FuzzDiffTexts: every diff rebuilds the new text from the old, is a
// shortest one, and with tight bounds is either that or too different.
func FuzzDiffTexts(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"a", ""}, {"a\nb\nc\n", "a\nc\n"}, {"a\nb", "a\nb\n"},
		{"x\nx\nx\ny\n", "y\nx\nx\nx\n"}, {"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n3\n2\n4\n5\n6\n7\n8\n10\n9\n"},
		{"# T\n\ntext\n", "# T\n\n<img src=x onerror=alert(1)>\n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		checkDiff(t, from, to, Texts(from, to))
		for _, bound := range []struct{ edits, perLine, base int }{{3, defaultStepsPerLine, defaultBaseSteps}, {100, 1, 10}} {
			d := textsBounded(from, to, bound.edits, bound.perLine, bound.base)
			checkDiff(t, from, to, d)
			if !d.TooDifferent && d.Added+d.Removed > bound.edits {
				t.Fatalf("%d edits with at most %d", d.Added+d.Removed, bound.edits)
			}
		}
	})
}

// BenchmarkDiffTexts: two 1 MB contents of the worst kinds against the
// same bytes compared (the floor any diff pays), each in time linear in
// its length.
func BenchmarkDiffTexts(b *testing.B) {
	const size = 1_000_000
	var sb strings.Builder
	for i := 0; sb.Len() < size-20; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	distinct := sb.String()
	same := strings.Repeat("x\n", size/2)
	for _, bc := range []struct{ name, from, to string }{
		{"every-line-different", distinct, strings.ReplaceAll(distinct, "line", "LINE")},
		{"one-line-changed", same, same[:size/2] + "y\n" + same[size/2+2:]},
		{"same-lines-shifted", "p\n" + same[:size-4] + "q\n", "r\n" + same[:size-4] + "s\n"},
		{"every-10th-line-changed", distinct, strings.ReplaceAll(distinct, "0\n", "0!\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.from) + len(bc.to)))
			for b.Loop() {
				Texts(bc.from, bc.to)
			}
		})
	}
	b.Run("baseline-compare", func(b *testing.B) {
		from, to := distinct, strings.Clone(distinct)
		b.SetBytes(int64(len(from) + len(to)))
		for b.Loop() {
			_ = splitLines(from)
			_ = splitLines(to)
		}
	})
}
