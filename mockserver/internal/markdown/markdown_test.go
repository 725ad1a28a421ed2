package markdown

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// computeChanges is what an update does: analyze the texts, then diff
// them (old == nil for a first version).
func computeChanges(old, cur []byte) contextsvc.Changes {
	var oi *Info
	if old != nil {
		o := analyze(old)
		oi = &o
	}
	return Diff(oi, analyze(cur))
}

// wordCount is the count a create or update records.
func wordCount(src []byte) int { return analyze(src).words }

func TestComputeChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		old, new string
		first    bool
		want     contextsvc.Changes
	}{
		{name: "first version lists every section", first: true,
			new:  "Intro words here.\n\n# One\n\nalpha beta\n\nSetext Two\n----------\n\ngamma\n",
			want: contextsvc.Changes{SectionsModified: []string{"(preamble)", "One", "Setext Two"}, WordCountDelta: 9}},
		{name: "empty first version", first: true, new: "",
			want: contextsvc.Changes{SectionsModified: []string{}, WordCountDelta: 0}},
		{name: "no preamble when the text starts with a heading", first: true, new: "## Only\n",
			want: contextsvc.Changes{SectionsModified: []string{"Only"}, WordCountDelta: 1}},
		{name: "hash in a fenced code block is no heading",
			old:  "# Real\n\n```\n# fake\n```\n",
			new:  "# Real\n\n```\n# fake heading\n```\n",
			want: contextsvc.Changes{SectionsModified: []string{"Real"}, WordCountDelta: 1}},
		{name: "changed, added and removed, new order then removed",
			old:  "# A\n\none\n\n# B\n\ntwo\n\n# C\n\nthree\n",
			new:  "# C\n\nthree changed\n\n# A\n\none\n\n# D\n\nfour\n",
			want: contextsvc.Changes{SectionsModified: []string{"C", "D", "B"}, WordCountDelta: 1}},
		{name: "markers are not words",
			old:  "# Title\n\n- a\n- b\n",
			new:  "# Title\n\n- a\n- b\n- *c* -- d\n\n***\n",
			want: contextsvc.Changes{SectionsModified: []string{"Title"}, WordCountDelta: 2}},
		{name: "list marker style is no change",
			old:  "# L\n\n- x\n- y\n",
			new:  "# L\n\n* x\n* y\n",
			want: contextsvc.Changes{SectionsModified: []string{}, WordCountDelta: 0}},
		{name: "heading level change alone is no change",
			old:  "# H\n\nbody\n",
			new:  "### H\n\nbody\n",
			want: contextsvc.Changes{SectionsModified: []string{}, WordCountDelta: 0}},
		{name: "renamed heading is one removed, one added",
			old:  "# Old\n\nbody\n",
			new:  "# New\n\nbody\n",
			want: contextsvc.Changes{SectionsModified: []string{"New", "Old"}, WordCountDelta: 0}},
		{name: "preamble removed",
			old:  "lead in\n\n# H\n\nbody\n",
			new:  "# H\n\nbody\n",
			want: contextsvc.Changes{SectionsModified: []string{"(preamble)"}, WordCountDelta: -2}},
		{name: "duplicate headings match by occurrence",
			old:  "# N\n\na\n\n# N\n\nb\n",
			new:  "# N\n\na\n\n# N\n\nb2\n",
			want: contextsvc.Changes{SectionsModified: []string{"N"}, WordCountDelta: 0}},
		{name: "emphasis in a heading",
			old:  "# The *big* plan\n\nx\n",
			new:  "# The *big* plan\n\ny\n",
			want: contextsvc.Changes{SectionsModified: []string{"The big plan"}, WordCountDelta: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old []byte
			if !tc.first {
				old = []byte(tc.old)
			}
			got := computeChanges(old, []byte(tc.new))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestWordCount(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]int{
		"":                              0,
		"# Heading\n":                   1,
		"one two  three":                3,
		"- a\n- b\n  - c\n":             3,
		"**bold** _it_ `code span`":     4,
		"```\nfunc main() {}\n```\n":    2,
		"<div>raw html</div>\n\nword":   1,
		"[link text](https://x.y) - ok": 3,
		"1. first\n2. second\n":         2,
		"> quoted words\n":              2,
		"Ünïcode wörds ñ":               3,
	} {
		if got := wordCount([]byte(src)); got != want {
			t.Errorf("wordCount(%q) = %d, want %d", src, got, want)
		}
	}
}

// FuzzComputeChanges checks that any text parses into sections without a
// panic and that a text compared with itself has no changes.
func FuzzComputeChanges(f *testing.F) {
	for _, s := range []string{"", "# a\n\nb", "x\n===\n", "```\n# x\n```", "- a\n  # b\n", "> # q\n", "#\n\n#\n", "\xff\xfe"} {
		f.Add(s, "# a\n\nc")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ch := computeChanges([]byte(a), []byte(b))
		if ch.SectionsModified == nil {
			t.Fatal("nil sections_modified")
		}
		same := computeChanges([]byte(a), []byte(a))
		if len(same.SectionsModified) != 0 || same.WordCountDelta != 0 {
			t.Fatalf("self-diff %+v", same)
		}
		_ = Text([]byte(a))
	})
}
