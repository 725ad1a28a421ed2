package markdowntest

import (
	"strconv"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
)

// Input is a Markdown body built to hit a super-linear path of a Markdown
// parser or renderer: deep nesting, long runs of openers that never close,
// many small blocks.
type Input struct {
	Name string
	// Gen returns a body of at most n bytes (and close to n).
	Gen func(n int) string
}

// repeatTo repeats unit up to n bytes, whole units only, then adds tail
// when it fits.
func repeatTo(n int, unit, tail string) string {
	k := (n - len(tail)) / len(unit)
	return strings.Repeat(unit, max(k, 0)) + tail
}

// ladder writes line(i) for i = 0, 1, … while the body stays within n bytes.
func ladder(n int, line func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l) > n {
			return b.String()
		}
		b.WriteString(l)
	}
}

// cycleTo repeats units in turn up to n bytes.
func cycleTo(n int, units ...string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		u := units[i%len(units)]
		if b.Len()+len(u) > n {
			return b.String()
		}
		b.WriteString(u)
	}
}

// nestedSpan nests open … close around inner, as deep as n bytes allow.
func nestedSpan(n int, open, inner, close string) string {
	k := (n - len(inner)) / (len(open) + len(close))
	return strings.Repeat(open, k) + inner + strings.Repeat(close, k)
}

// Hostile returns the bodies of the linear-time tests and benchmarks. Each
// one is a kind of input that made some CommonMark implementation (cmark,
// md4c, commonmark.js, pulldown-cmark, goldmark) quadratic, or a plain
// large document of a common shape.
func Hostile() []Input {
	return []Input{
		// Baseline: ordinary prose with headings, lists, emphasis and code.
		{"prose", func(n int) string {
			return repeatTo(n, "## Section heading\n\nSome ordinary *prose* with a [link](https://example.com) and `code`, then more words to fill the line.\n\n- a list item\n- another **item**\n\n", "")
		}},
		// Nesting.
		{"quote-run", func(n int) string { return repeatTo(n, ">", "") }},
		{"quote-run-text", func(n int) string { return repeatTo(n, "> ", "x\n") }},
		{"quote-ladder", func(n int) string { return ladder(n, func(i int) string { return strings.Repeat(">", i) + " x\n" }) }},
		{"list-ladder", func(n int) string { return ladder(n, func(i int) string { return strings.Repeat("  ", i) + "- x\n" }) }},
		{"ordered-ladder", func(n int) string {
			return ladder(n, func(i int) string { return strings.Repeat("   ", i) + "1. x\n" })
		}},
		{"list-run-dash", func(n int) string { return repeatTo(n, "- ", "x\n") }},
		{"list-run-star", func(n int) string { return repeatTo(n, "* ", "a\n") }},
		{"list-run-ordered", func(n int) string { return repeatTo(n, "1. ", "x\n") }},
		{"quote-list-run", func(n int) string { return repeatTo(n, "> - ", "x\n") }},
		{"list-quote-run", func(n int) string { return repeatTo(n, "- > ", "x\n") }},
		{"quote-list-ladder", func(n int) string {
			return ladder(n, func(i int) string { return strings.Repeat("> ", i) + "- x\n" })
		}},
		{"list-quote-ladder", func(n int) string {
			return ladder(n, func(i int) string { return strings.Repeat("  ", i) + "- > x\n" })
		}},
		// Inline openers.
		{"link-open", func(n int) string { return repeatTo(n, "[a](", "") }},
		{"bracket-run", func(n int) string { return repeatTo(n, "[", "") }},
		{"image-run", func(n int) string { return repeatTo(n, "![", "") }},
		{"bracket-a", func(n int) string { return repeatTo(n, "[a", "") }},
		{"link-paren", func(n int) string { return repeatTo(n, "[ (](", "") }},
		{"link-nested", func(n int) string { return repeatTo(n, "[*_a", "") }},
		{"brackets-nested", func(n int) string {
			k := n / 2
			return strings.Repeat("[", k/2) + "a" + strings.Repeat("]", k/2) + "(b)"
		}},
		{"bracket-close", func(n int) string { return repeatTo(n, "[a]", "") }},
		{"link-dest-open", func(n int) string { return repeatTo(n, "[a](<", "") }},
		{"link-title-open", func(n int) string { return repeatTo(n, `[a](b "`, "") }},
		{"star-run", func(n int) string { return repeatTo(n, "*", "") }},
		{"nested-strong", func(n int) string { return nestedSpan(n, "**", "a", "**") }},
		{"nested-em-alternating", func(n int) string { return nestedSpan(n, "*_", "a", "_*") }},
		{"nested-images", func(n int) string { return nestedSpan(n, "![", "a", "](b)") }},
		{"nested-links", func(n int) string { return nestedSpan(n, "[", "a", "](b)") }},
		{"star-a", func(n int) string { return repeatTo(n, "*a ", "") }},
		{"under-a", func(n int) string { return repeatTo(n, "_a ", "") }},
		{"strong-a", func(n int) string { return repeatTo(n, "**a ", "") }},
		{"a-triple-star", func(n int) string { return repeatTo(n, "a***", "") }},
		{"emphasis-mix", func(n int) string { return repeatTo(n, "*a_b*c_d**e_f*g**h*i_j**", "") }},
		{"emphasis-close-run", func(n int) string { return repeatTo(n, "a* ", "") }},
		{"backtick-ladder", func(n int) string {
			return ladder(n, func(i int) string { return strings.Repeat("`", i%4000+1) + " " })
		}},
		{"backtick-escaped", func(n int) string { return repeatTo(n, "\\``", "") }},
		{"backtick-pairs", func(n int) string { return repeatTo(n, "`` a `", "") }},
		{"angle-run", func(n int) string { return repeatTo(n, "<>", "") }},
		{"autolink-open", func(n int) string { return repeatTo(n, "<http://a", "") }},
		{"html-comment-open", func(n int) string { return repeatTo(n, "a <!--a\n", "") }},
		{"html-pi-open", func(n int) string { return repeatTo(n, "a <?a\n", "") }},
		{"html-cdata-open", func(n int) string { return repeatTo(n, "a <![CDATA[a\n", "") }},
		{"html-decl-open", func(n int) string { return repeatTo(n, "a <!A\n", "") }},
		{"html-tag-open", func(n int) string { return repeatTo(n, "<a b=\"", "") }},
		{"html-blocks", func(n int) string { return repeatTo(n, "<div>\n<p>raw html</p>\n</div>\n\n", "") }},
		{"html-inline", func(n int) string { return repeatTo(n, "a <b>c</b> ", "") }},
		{"entities", func(n int) string { return repeatTo(n, "&amp;&#123;&#x1F600;&copy;&bogus; ", "") }},
		// Blocks.
		{"headings", func(n int) string { return repeatTo(n, "# h\n", "") }},
		{"headings-distinct", func(n int) string {
			return ladder(n, func(i int) string { return "## Heading " + strconv.Itoa(i) + "\n\nbody " + strconv.Itoa(i) + "\n\n" })
		}},
		{"headings-numbered", func(n int) string {
			return ladder(n, func(i int) string { return "# " + strconv.Itoa(i) + "\n" })
		}},
		{"setext", func(n int) string { return repeatTo(n, "a\n=\n", "") }},
		{"empty-headings", func(n int) string { return repeatTo(n, "#\n", "") }},
		{"empty-items", func(n int) string { return repeatTo(n, "-\n", "") }},
		{"empty-quotes", func(n int) string { return repeatTo(n, ">\n\n", "") }},
		{"item-paragraphs", func(n int) string { return repeatTo(n, "- a\n\n", "") }},
		{"short-lines", func(n int) string { return repeatTo(n, "a\n", "") }},
		{"long-line", func(n int) string { return repeatTo(n, "word ", "") }},
		{"long-word", func(n int) string { return repeatTo(n, "x", "") }},
		{"tiny-paragraphs", func(n int) string { return repeatTo(n, "a\n\n", "") }},
		{"list-items", func(n int) string { return repeatTo(n, "- a\n", "") }},
		// Each line a list of its own (the marker changes): three blocks a
		// line, the most AST per byte found.
		{"list-marker-switch", func(n int) string { return repeatTo(n, "- a\n* b\n+ c\n", "") }},
		{"ordered-switch", func(n int) string { return repeatTo(n, "1. a\n1) b\n", "") }},
		{"table-like", func(n int) string { return repeatTo(n, "| a | b | c |\n|---|---|---|\n", "") }},
		{"thematic-breaks", func(n int) string { return repeatTo(n, "***\n", "") }},
		{"hard-breaks", func(n int) string { return repeatTo(n, "a  \n", "") }},
		{"code-fence-open", func(n int) string { return "```\n" + repeatTo(n-4, "code line\n", "") }},
		{"code-fences", func(n int) string { return repeatTo(n, "```\nx\n```\n", "") }},
		{"indented-code", func(n int) string { return repeatTo(n, "    code\n", "") }},
		{"link-ref-defs", func(n int) string {
			return ladder(n, func(i int) string { return "[r" + strconv.Itoa(i) + "]: /url \"title\"\n" })
		}},
		{"link-ref-uses", func(n int) string { return "[r]: /u\n\n" + repeatTo(n-9, "[r] ", "") }},
		{"link-ref-long", func(n int) string { return "[" + repeatTo(n-10, "a", "") + "]: /u\n" }},
		{"link-ref-brackets", func(n int) string { return repeatTo(n/2, "[", "") + " x " + repeatTo(n/2-10, "]", "") + ": q" }},
		{"tab-nesting", func(n int) string { return repeatTo(n, "\t- \t>", "x\n") }},
		{"lazy-deep", func(n int) string {
			return strings.Repeat(">", markdown.MaxNesting) + " a\n" + repeatTo(n-markdown.MaxNesting-3, "b\n", "")
		}},
		{"quote-deep-lines", func(n int) string { return repeatTo(n, strings.Repeat("> ", markdown.MaxNesting)+"a\n", "") }},
		{"autolink-email-open", func(n int) string { return repeatTo(n, "<a@b", "") }},
		{"html-attrs-open", func(n int) string { return repeatTo(n, "<a b c='d' e", "") }},
		{"mixed-deep", func(n int) string {
			return cycleTo(n, "> ", "- ", "1. ", "* ", "> ", "+ ", "x\n")
		}},
		// Text beyond Latin, for the PDF's fonts (the pdf package): one paragraph
		// of CJK (a possible line break at every character), a font change at
		// every character, Greek, Cyrillic and CJK words, characters no font
		// has, code with CJK and tabs.
		{"cjk", func(n int) string { return repeatTo(n, "我能吞下玻璃而不伤身体。", "") }},
		{"cjk-alternating", func(n int) string { return repeatTo(n, "a日", "") }},
		{"scripts-words", func(n int) string { return repeatTo(n, "Καλημέρα мир 漢字 café ", "") }},
		{"uncovered", func(n int) string { return repeatTo(n, "😀", "") }},
		{"cjk-code", func(n int) string { return "```\n" + repeatTo(n-4, "a日\tb\n", "") }},
	}
}
