package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// hostileTestSize is the size of each hostile body in TestHostileBodies:
// small enough that the whole test takes about a second (76 bodies, 5
// parses each), large enough that quadratic paths take seconds more (the
// parser before the fix took 74 ms to create 10 kB of '>' and 199 ms for
// "- - - … x", about 0.9 s per operation over the quadratic bodies).
const hostileTestSize = 10_000

// TestHostileBodies sends every hostile body through a real server:
// create it, update a context to it, and export that context in every
// format. Each must answer correctly: the word count is the count of the
// rendered text's words, the sections are the body's headings, each export
// carries the body. It asserts no time; a quadratic path makes it slow.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "hostile", Plan: PlanUnlimited}))
	for _, h := range hostileInputs {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			body := h.gen(hostileTestSize)
			sections := []string{preambleSection}
			if f := hostileSections[h.name]; f != nil {
				sections = f(body)
			}

			// Create with the body: version 1 lists every section and counts
			// every word.
			c := create(t, ts, bodyJSON(map[string]any{"name": h.name, "content": body}))
			v1 := versionOf(t, ts, c.ID, 1)
			doc := parseMarkdown([]byte(body))
			words := oracleCountWords(oracleRenderText(doc, []byte(body), false))
			want := contextsvc.Changes{SectionsModified: sections, WordCountDelta: words}
			if d := cmp.Diff(want, v1.Changes); d != "" {
				t.Errorf("create: changes (-want +got):\n%s", d)
			}

			// Update another context to the body.
			u := create(t, ts, `{"name":"start","content":"# Start\n\nfirst two words\n"}`)
			r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + u.ID, body: bodyJSON(map[string]any{"content": body})})
			if r.Status != 200 {
				t.Fatalf("update: %d %.200s", r.Status, r.Body)
			}
			want = contextsvc.Changes{SectionsModified: append(sections, "Start"), WordCountDelta: words - 4}
			if d := cmp.Diff(want, versionOf(t, ts, u.ID, 2).Changes); d != "" {
				t.Errorf("update: changes (-want +got):\n%s", d)
			}

			// Every export of the updated context.
			if got := export(t, ts, u.ID, "markdown"); string(got) != body {
				t.Errorf("markdown export differs from the body (%d bytes, want %d)", len(got), len(body))
			}
			if got, want := string(export(t, ts, u.ID, "text")), oracleRenderText(doc, []byte(body), true); got != want {
				t.Errorf("text export differs from the oracle's (%d bytes, want %d)", len(got), len(want))
			}
			var j contextJSON
			if err := json.Unmarshal(export(t, ts, u.ID, "json"), &j); err != nil || j.Content != body || j.Version != 2 {
				t.Errorf("json export: %v, version %d, content of %d bytes", err, j.Version, len(j.Content))
			}
			html := string(export(t, ts, u.ID, "html"))
			if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.HasSuffix(html, "</body>\n</html>\n") {
				t.Errorf("html export is not a whole document: %.80q…%.80q", html, html[max(0, len(html)-80):])
			}
			if hw := oracleCountWords(htmlText(html)); hw < words {
				t.Errorf("html export shows %d words, the text has %d", hw, words)
			}
			pdf := export(t, ts, u.ID, "pdf")
			if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[max(0, len(pdf)-64):], []byte("%%EOF")) {
				t.Errorf("pdf export is not a whole PDF: %.20q…%q", pdf, pdf[max(0, len(pdf)-20):])
			}
		})
	}
}

func versionOf(t *testing.T, ts *TestServer, id string, n int) versionJSON {
	t.Helper()
	var page struct{ Data []versionJSON }
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + id + "/versions"}).json(t, &page)
	if len(page.Data) < n {
		t.Fatalf("%s has %d versions, want %d", id, len(page.Data), n)
	}
	return page.Data[n-1]
}

func export(t *testing.T, ts *TestServer, id, format string) []byte {
	t.Helper()
	r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + id + "/export?format=" + format})
	if r.Status != 200 {
		t.Fatalf("export %s: %d %.200s", format, r.Status, r.Body)
	}
	return r.Body
}

// htmlText is the text of an HTML export's body, with images' alt text:
// other tags become spaces.
func htmlText(html string) string {
	_, body, _ := strings.Cut(html, "<body>")
	var b strings.Builder
	for {
		text, rest, ok := strings.Cut(body, "<")
		b.WriteString(text)
		b.WriteByte(' ')
		if !ok {
			return b.String()
		}
		var tag string
		tag, body, _ = strings.Cut(rest, ">")
		if _, alt, ok := strings.Cut(tag, ` alt="`); ok {
			alt, _, _ = strings.Cut(alt, `"`)
			b.WriteString(alt)
		}
	}
}

// oracleCountWords is the contract's word count, written the plain way:
// fields of the text holding a letter or digit.
func oracleCountWords(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			n++
		}
	}
	return n
}

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
		if got, want := convert(t, md, ex.Markdown), convert(t, stockMarkdown, ex.Markdown); got != want {
			t.Errorf("example %d %q:\n got %q\nwant %q", ex.Example, ex.Markdown, got, want)
		}
		checkTextOracle(t, ex.Markdown)
		checkAnalyzeParity(t, ex.Markdown)
	}
}

// mayHitLimits reports whether src could meet a limit of the linear
// parser, where it departs from goldmark on purpose: more than maxNesting
// container markers, more than maxLinkParens parentheses, a pointy link
// destination holding '<', link reference definitions (goldmark
// mis-parses some), or enough text for goldmark's 999-byte label quirk.
func mayHitLimits(src string) bool {
	return len(src) > 900 ||
		strings.Count(src, ">")+strings.Count(src, "-")+strings.Count(src, "*")+strings.Count(src, "+")+
			strings.Count(src, ".")+strings.Count(src, ")") > maxNesting ||
		strings.Count(src, "(") > maxLinkParens ||
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
	for _, h := range hostileInputs {
		for _, n := range []int{20, 60, 200, 900} {
			src := h.gen(n)
			checkTextOracle(t, src)
			if mayHitLimits(src) {
				continue
			}
			compared++
			if got, want := convert(t, md, src), convert(t, stockMarkdown, src); got != want {
				t.Errorf("%s at %d bytes %q:\n got %q\nwant %q", h.name, n, src, got, want)
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
	for _, h := range hostileInputs {
		f.Add(h.gen(24))
		f.Add(h.gen(80))
	}
	f.Add(exportMarkdown)
	for _, s := range []string{"*a **b** c*", "_a_b_ __c__", "[a](<b> 't')", "![x [y](z)](w)", "[a][b]\n\n[b]: /u 'v'",
		"`a``b`", "***a** b*", "[a]: /u\n[a]", "<a href='x'>y</a>", "&amp; &#35; &bogus;", "a\\*b\\[c", "- a\n\n  b\n- c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkTextOracle(t, src)
		if mayHitLimits(src) {
			return
		}
		if got, want := convert(t, md, src), convert(t, stockMarkdown, src); got != want {
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
	got := analyze([]byte(src))
	doc := stockMarkdown.Parser().Parse(text.NewReader([]byte(src)))
	var c wordCounter
	countBlockWords(&c, doc, []byte(src))
	want := mdInfo{sections: sectionsOf(doc, []byte(src)), words: c.n}
	names := func(info mdInfo) []string {
		var out []string
		for _, s := range info.sections {
			out = append(out, s.name)
		}
		return out
	}
	if d := cmp.Diff(names(want), names(got)); d != "" {
		t.Errorf("sections of %q (-goldmark +linear):\n%s", src, d)
	}
	if got.words != want.words {
		t.Errorf("word count of %q: %d, goldmark's parse gives %d", src, got.words, want.words)
	}
}

// checkTextOracle checks the linear text export and word count against
// the renderer they replaced, on the same parse.
func checkTextOracle(t testing.TB, src string) {
	t.Helper()
	doc := parseMarkdown([]byte(src))
	if got, want := string(renderText([]byte(src))), oracleRenderText(doc, []byte(src), true); got != want {
		t.Errorf("text export of %q:\n got %q\nwant %q", src, got, want)
	}
	if got, want := analyze([]byte(src)).words, oracleCountWords(oracleRenderText(doc, []byte(src), false)); got != want {
		t.Errorf("word count of %q: %d, want %d", src, got, want)
	}
}

// oracleRenderText is the text renderer before the linear one, kept as
// the oracle of its output: each list item is rendered to its own buffer,
// split into lines and indented, so nesting d deep costs d times the text.
func oracleRenderText(doc ast.Node, src []byte, markers bool) string {
	var b strings.Builder
	oracleRenderBlocks(&b, doc, src, markers)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func oracleRenderBlocks(b *strings.Builder, parent ast.Node, src []byte, markers bool) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			b.WriteString(strings.TrimSpace(plainInline(n, src)))
			b.WriteString("\n")
			if _, tight := n.(*ast.TextBlock); !tight {
				b.WriteString("\n")
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				seg := l.At(i)
				b.Write(bytes.TrimRight(seg.Value(src), "\n"))
				b.WriteString("\n")
			}
			b.WriteString("\n")
		case *ast.List:
			num := n.Start
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				var item strings.Builder
				oracleRenderBlocks(&item, it, src, markers)
				lines := strings.Split(strings.TrimRight(item.String(), "\n"), "\n")
				marker := ""
				if markers {
					marker = "- "
					if n.IsOrdered() {
						marker = strconv.Itoa(num) + ". "
						num++
					}
				}
				pad := strings.Repeat(" ", len(marker))
				for i, line := range lines {
					if i == 0 {
						b.WriteString(marker)
					} else if line != "" {
						b.WriteString(pad)
					}
					b.WriteString(line)
					b.WriteString("\n")
				}
			}
			b.WriteString("\n")
		case *ast.HTMLBlock, *ast.ThematicBreak:
		default:
			oracleRenderBlocks(b, n, src, markers)
		}
	}
}

// TestNestingLimit pins down what the nesting limit does: block quotes and
// list items nest maxNesting deep, and a marker beyond is text of the
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
		{"quotes at the limit", deep(">", maxNesting), maxNesting, 0, "<p>deep words</p>", "deep words\n", 2},
		{"quotes beyond", deep("> ", maxNesting+2), maxNesting, 0, "<p>&gt; &gt; deep words</p>", "> > deep words\n", 2},
		{"lists at the limit", deep("- ", maxNesting), 0, maxNesting, "<li>deep words</li>", strings.Repeat("- ", maxNesting) + "deep words\n", 2},
		{"lists beyond", deep("- ", maxNesting+1), 0, maxNesting, "<li>- deep words</li>", strings.Repeat("- ", maxNesting+1) + "deep words\n", 2},
		// "1." beyond the limit is text, and holds a digit: a word.
		{"mixed beyond", deep("> 1. ", maxNesting/2+1), maxNesting / 2, maxNesting / 2, "<li>&gt; 1. deep words</li>",
			strings.Repeat("1. ", maxNesting/2) + "> 1. deep words\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			html := convert(t, md, tc.src)
			if q, i := strings.Count(html, "<blockquote>"), strings.Count(html, "<li>"); q != tc.quotes || i != tc.items || !strings.Contains(html, tc.tail) {
				t.Errorf("%d quotes, %d items, want %d, %d and %q:\n%s", q, i, tc.quotes, tc.items, tc.tail, html)
			}
			if got := string(renderText([]byte(tc.src))); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if w := analyze([]byte(tc.src)).words; w != tc.words {
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
	if w := analyze([]byte(ladder.String())).words; w != 40 {
		t.Errorf("ladder of 40: %d words", w)
	}
	if html := convert(t, md, ladder.String()); strings.Count(html, "<li>") != maxNesting || !strings.Contains(html, "w31\n- w32\n- w33") {
		t.Errorf("ladder of 40: %d items:\n%s", strings.Count(html, "<li>"), html)
	}
}

// TestLinkLimits pins down the link rules that differ from goldmark's:
// destinations nest parentheses at most maxLinkParens deep, and a pointy
// destination holds no '<' (CommonMark's rule).
func TestLinkLimits(t *testing.T) {
	t.Parallel()
	parens := func(n int) string { return strings.Repeat("(", n) + "x" + strings.Repeat(")", n) }
	for _, tc := range []struct{ src, want string }{
		{"[a](" + parens(maxLinkParens) + ")", `<p><a href="` + parens(maxLinkParens) + `">a</a></p>`},
		{"[a](" + parens(maxLinkParens+1) + ")", "<p>[a](" + parens(maxLinkParens+1) + ")</p>"},
		{"[a](<b<c>)", "<p>[a](&lt;b<!-- raw HTML omitted -->)</p>"},
		{"[a](<b\\<c>)", `<p><a href="b%3Cc">a</a></p>`},
		{"[a](b)", `<p><a href="b">a</a></p>`},
	} {
		if got := convert(t, md, tc.src); strings.TrimSpace(got) != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}
