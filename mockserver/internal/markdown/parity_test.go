package markdown_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/text"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
)

// stockMarkdown is goldmark as it comes: the reference the linear parser
// must agree with wherever its limits do not apply.
var stockMarkdown = goldmark.New()

func convert(t testing.TB, m goldmark.Markdown, src string) string {
	t.Helper()
	var b bytes.Buffer
	if err := m.Convert([]byte(src), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type specExample struct {
	Markdown, HTML string
	Example        int
}

// commonMarkSpec returns the CommonMark spec examples that goldmark ships
// (_test/spec.json in its module directory, found with "go list"). Without
// the go command or the module's files (a vendored build) the test is
// skipped, or fails in CI.
func commonMarkSpec(t testing.TB) []specExample {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/goldmark").Output()
	var b []byte
	if err == nil {
		b, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "_test", "spec.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("goldmark's _test/spec.json: %v", err)
		}
		t.Skipf("goldmark's _test/spec.json: %v", err)
	}
	var ex []specExample
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatal(err)
	}
	if len(ex) < 600 {
		t.Fatalf("%d spec examples", len(ex))
	}
	return ex
}

// TestCommonMarkSpecParity renders every CommonMark spec example with the
// linear parser and with goldmark as it comes: the HTML must be the same
// (goldmark passes the spec), and the text export and word count the same
// as the renderer they replaced.
func TestCommonMarkSpecParity(t *testing.T) {
	t.Parallel()
	for _, ex := range commonMarkSpec(t) {
		if got, want := convert(t, markdown.MD, ex.Markdown), convert(t, stockMarkdown, ex.Markdown); got != want {
			t.Errorf("example %d %q:\n got %q\nwant %q", ex.Example, ex.Markdown, got, want)
		}
		checkTextOracle(t, ex.Markdown)
		checkAnalyzeParity(t, ex.Markdown)
	}
}

// mayHitLimits reports whether src could meet a limit of the linear
// parser, where it departs from goldmark on purpose: more than MaxNesting
// container markers, more than MaxLinkParens parentheses, a pointy link
// destination holding '<', link reference definitions (goldmark
// mis-parses some), or enough text for goldmark's 999-byte label quirk.
func mayHitLimits(src string) bool {
	return len(src) > 900 ||
		strings.Count(src, ">")+strings.Count(src, "-")+strings.Count(src, "*")+strings.Count(src, "+")+
			strings.Count(src, ".")+strings.Count(src, ")") > markdown.MaxNesting ||
		strings.Count(src, "(") > markdown.MaxLinkParens ||
		pointyWithLess.MatchString(src) ||
		strings.Contains(src, "]:")
}

var pointyWithLess = regexp.MustCompile(`\(\s*<[^>\n]*<`)

// TestHostileParity: on the hostile inputs, small enough for goldmark's
// quadratic paths, the linear parser renders as goldmark does unless a
// limit applies, and the text export is unchanged in every case.
func TestHostileParity(t *testing.T) {
	t.Parallel()
	compared := 0
	for _, h := range markdowntest.Hostile() {
		for _, n := range []int{20, 60, 200, 900} {
			src := h.Gen(n)
			checkTextOracle(t, src)
			if mayHitLimits(src) {
				continue
			}
			compared++
			if got, want := convert(t, markdown.MD, src), convert(t, stockMarkdown, src); got != want {
				t.Errorf("%s at %d bytes %q:\n got %q\nwant %q", h.Name, n, src, got, want)
			}
			checkAnalyzeParity(t, src)
		}
	}
	if compared < 100 {
		t.Errorf("only %d inputs compared with goldmark", compared)
	}
}

// FuzzMarkdownParity: any text renders as goldmark renders it (where no
// limit of the linear parser applies), and its text export and word count
// are those of the renderer they replaced.
func FuzzMarkdownParity(f *testing.F) {
	for _, h := range markdowntest.Hostile() {
		f.Add(h.Gen(24))
		f.Add(h.Gen(80))
	}
	f.Add(markdowntest.Document)
	for _, s := range []string{"*a **b** c*", "_a_b_ __c__", "[a](<b> 't')", "![x [y](z)](w)", "[a][b]\n\n[b]: /u 'v'",
		"`a``b`", "***a** b*", "[a]: /u\n[a]", "<a href='x'>y</a>", "&amp; &#35; &bogus;", "a\\*b\\[c", "- a\n\n  b\n- c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkTextOracle(t, src)
		if mayHitLimits(src) {
			return
		}
		if got, want := convert(t, markdown.MD, src), convert(t, stockMarkdown, src); got != want {
			t.Errorf("%q:\n got %q\nwant %q", src, got, want)
		}
		checkAnalyzeParity(t, src)
	})
}

// checkAnalyzeParity checks what events report of src (its section names
// and word count) against the same analysis of goldmark's own parse: the
// linear parser must change neither. Section bodies are fingerprints of
// source lines, compared only between two parses of one parser, so they
// are left out.
func checkAnalyzeParity(t testing.TB, src string) {
	t.Helper()
	got := markdown.Analyze([]byte(src))
	doc := stockMarkdown.Parser().Parse(text.NewReader([]byte(src)))
	want := markdown.AnalyzeParsed(doc, []byte(src))
	names := func(info markdown.Info) []string { return info.SectionNames() }
	if d := cmp.Diff(names(want), names(got)); d != "" {
		t.Errorf("sections of %q (-goldmark +linear):\n%s", src, d)
	}
	if got.Words() != want.Words() {
		t.Errorf("word count of %q: %d, goldmark's parse gives %d", src, got.Words(), want.Words())
	}
}

// checkTextOracle checks the linear text export and word count against
// the renderer they replaced, on the same parse.
func checkTextOracle(t testing.TB, src string) {
	t.Helper()
	doc := markdown.Parse([]byte(src))
	if got, want := string(markdown.Text([]byte(src))), markdowntest.Text(doc, []byte(src), true); got != want {
		t.Errorf("text export of %q:\n got %q\nwant %q", src, got, want)
	}
	if got, want := markdown.Analyze([]byte(src)).Words(), markdowntest.CountWords(markdowntest.Text(doc, []byte(src), false)); got != want {
		t.Errorf("word count of %q: %d, want %d", src, got, want)
	}
}

// TestNestingLimit pins down what the nesting limit does: block quotes and
// list items nest MaxNesting deep, and a marker beyond is text of the
// deepest container, with its words kept.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	deep := func(unit string, n int) string { return strings.Repeat(unit, n) + "deep words\n" }
	for _, tc := range []struct {
		name, src     string
		quotes, items int    // block quotes and list items in the HTML
		tail          string // the HTML of the deepest text
		text          string // the text export
		words         int
	}{
		{"quotes at the limit", deep(">", markdown.MaxNesting), markdown.MaxNesting, 0, "<p>deep words</p>", "deep words\n", 2},
		{"quotes beyond", deep("> ", markdown.MaxNesting+2), markdown.MaxNesting, 0, "<p>&gt; &gt; deep words</p>", "> > deep words\n", 2},
		{"lists at the limit", deep("- ", markdown.MaxNesting), 0, markdown.MaxNesting, "<li>deep words</li>", strings.Repeat("- ", markdown.MaxNesting) + "deep words\n", 2},
		{"lists beyond", deep("- ", markdown.MaxNesting+1), 0, markdown.MaxNesting, "<li>- deep words</li>", strings.Repeat("- ", markdown.MaxNesting+1) + "deep words\n", 2},
		// "1." beyond the limit is text, and holds a digit: a word.
		{"mixed beyond", deep("> 1. ", markdown.MaxNesting/2+1), markdown.MaxNesting / 2, markdown.MaxNesting / 2, "<li>&gt; 1. deep words</li>",
			strings.Repeat("1. ", markdown.MaxNesting/2) + "> 1. deep words\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			html := convert(t, markdown.MD, tc.src)
			if q, i := strings.Count(html, "<blockquote>"), strings.Count(html, "<li>"); q != tc.quotes || i != tc.items || !strings.Contains(html, tc.tail) {
				t.Errorf("%d quotes, %d items, want %d, %d and %q:\n%s", q, i, tc.quotes, tc.items, tc.tail, html)
			}
			if got := string(markdown.Text([]byte(tc.src))); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if w := markdown.Analyze([]byte(tc.src)).Words(); w != tc.words {
				t.Errorf("%d words, want %d", w, tc.words)
			}
		})
	}
	// A ladder of list items indented ever deeper: the items beyond the
	// limit continue the deepest item's paragraph, every word kept.
	var ladder strings.Builder
	for i := range 40 {
		fmt.Fprintf(&ladder, "%s- w%d\n", strings.Repeat("  ", i), i)
	}
	if w := markdown.Analyze([]byte(ladder.String())).Words(); w != 40 {
		t.Errorf("ladder of 40: %d words", w)
	}
	if html := convert(t, markdown.MD, ladder.String()); strings.Count(html, "<li>") != markdown.MaxNesting || !strings.Contains(html, "w31\n- w32\n- w33") {
		t.Errorf("ladder of 40: %d items:\n%s", strings.Count(html, "<li>"), html)
	}
}

// TestLinkLimits pins down the link rules that differ from goldmark's:
// destinations nest parentheses at most MaxLinkParens deep, and a pointy
// destination holds no '<' (CommonMark's rule).
func TestLinkLimits(t *testing.T) {
	t.Parallel()
	parens := func(n int) string { return strings.Repeat("(", n) + "x" + strings.Repeat(")", n) }
	for _, tc := range []struct{ src, want string }{
		{"[a](" + parens(markdown.MaxLinkParens) + ")", `<p><a href="` + parens(markdown.MaxLinkParens) + `">a</a></p>`},
		{"[a](" + parens(markdown.MaxLinkParens+1) + ")", "<p>[a](" + parens(markdown.MaxLinkParens+1) + ")</p>"},
		{"[a](<b<c>)", "<p>[a](&lt;b<!-- raw HTML omitted -->)</p>"},
		{"[a](<b\\<c>)", `<p><a href="b%3Cc">a</a></p>`},
		{"[a](b)", `<p><a href="b">a</a></p>`},
	} {
		if got := convert(t, markdown.MD, tc.src); strings.TrimSpace(got) != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}
