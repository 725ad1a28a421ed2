package mockserver

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// md is the one Markdown parser and renderer (CommonMark, no raw HTML in
// the output), with the linear-time parser of markdown_parser.go. A
// goldmark.Markdown is safe for concurrent use.
var md = goldmark.New(goldmark.WithParser(mdParser))

// preambleSection names the text before the first heading.
const preambleSection = "(preamble)"

func parseMarkdown(src []byte) ast.Node {
	return md.Parser().Parse(text.NewReader(src))
}

// section is one part of a document: a top-level heading and the blocks up
// to the next top-level heading. body is a fingerprint of those blocks'
// source lines (with each block's kind), so edits to the text count as
// changes but swapping one list marker for another does not.
type section struct {
	name string
	body string
}

// sectionsOf splits a parsed document at every top-level ATX or setext
// heading (any level) that goldmark finds, so a '#' in a fenced code block
// is no heading. The preamble is a section only when it holds at least one
// block; a heading with no body is still a section. Headings nested in
// block quotes or list items stay part of their section's body.
func sectionsOf(doc ast.Node, src []byte) []section {
	var out []section
	var cur *section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.body = body.String()
			out = append(out, *cur)
		}
		body.Reset()
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok {
			flush()
			cur = &section{name: strings.TrimSpace(plainInline(h, src))}
			continue
		}
		if cur == nil {
			cur = &section{name: preambleSection}
		}
		fingerprint(&body, n, src)
	}
	flush()
	return out
}

func fingerprint(b *strings.Builder, n ast.Node, src []byte) {
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		b.WriteString(c.Kind().String())
		b.WriteByte('\x00')
		if l := c.Lines(); l != nil {
			for i := 0; i < l.Len(); i++ {
				seg := l.At(i)
				b.Write(seg.Value(src))
			}
		}
		b.WriteByte('\x00')
		return ast.WalkContinue, nil
	})
}

// mdInfo is what change tracking needs of a text: its sections and its
// word count. It is computed from one parse and kept with the context, so
// an update parses only the new text.
type mdInfo struct {
	sections []section
	words    int
}

func analyze(src []byte) mdInfo {
	doc := parseMarkdown(src)
	var c wordCounter
	countBlockWords(&c, doc, src)
	return mdInfo{sections: sectionsOf(doc, src), words: c.n}
}

// diffInfo compares two analysed texts. sections_modified lists, in the
// new text's order, the sections whose body was added or changed, then the
// removed ones in the old order; sections are matched by heading text and
// occurrence (the second "Notes" matches the second "Notes"). Each name
// appears once. old is nil for a first version: every section is listed
// and the delta is the whole word count.
func diffInfo(old *mdInfo, cur mdInfo) contextsvc.Changes {
	ch := contextsvc.Changes{SectionsModified: []string{}}
	var os []section
	if old != nil {
		os = old.sections
	}
	// One entry per distinct name, not per section: 1 MB of "#" lines is
	// 500,000 sections of one name, and a map of them all cost seconds.
	type group struct {
		olds   []int // indexes in os of the sections so named
		next   int   // the occurrence the next new section so named is
		listed bool
	}
	groups := map[string]*group{}
	groupOf := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
		}
		return g
	}
	add := func(g *group, name string) {
		if !g.listed {
			g.listed = true
			ch.SectionsModified = append(ch.SectionsModified, name)
		}
	}
	for i, s := range os {
		g := groupOf(s.name)
		g.olds = append(g.olds, i)
	}
	matched := make([]bool, len(os))
	for _, s := range cur.sections {
		g := groupOf(s.name)
		k := g.next
		g.next++
		if k < len(g.olds) {
			matched[g.olds[k]] = true
			if os[g.olds[k]].body == s.body {
				continue
			}
		}
		add(g, s.name)
	}
	for i, s := range os {
		if !matched[i] {
			add(groups[s.name], s.name)
		}
	}
	ch.WordCountDelta = cur.words
	if old != nil {
		ch.WordCountDelta -= old.words
	}
	return ch
}

// wordCounter counts the words of rendered text written to it: runs of
// non-space characters holding at least one letter or digit, so Markdown
// markers and lone punctuation are not words. Writes must not split a
// UTF-8 sequence; end marks a break between blocks.
type wordCounter struct {
	n             int
	inWord, alnum bool
}

func (c *wordCounter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); {
		r, size := rune(p[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(p[i:])
		}
		i += size
		c.char(r)
	}
	return len(p), nil
}

func (c *wordCounter) WriteByte(b byte) error {
	if b < utf8.RuneSelf {
		c.char(rune(b))
	} else {
		c.char(utf8.RuneError) // half a character: not a space
	}
	return nil
}

func (c *wordCounter) char(r rune) {
	if unicode.IsSpace(r) {
		c.end()
		return
	}
	c.inWord = true
	if !c.alnum && (unicode.IsLetter(r) || unicode.IsNumber(r)) {
		c.alnum = true
	}
}

// end ends the current word, if any.
func (c *wordCounter) end() {
	if c.inWord && c.alnum {
		c.n++
	}
	c.inWord, c.alnum = false, false
}

// plainInline returns the text of n's inline descendants.
func plainInline(n ast.Node, src []byte) string {
	var b strings.Builder
	writeInline(&b, n, src)
	return b.String()
}

// textWriter is what inline text is written to: a strings.Builder, or a
// wordCounter.
type textWriter interface {
	Write(p []byte) (int, error)
	WriteByte(c byte) error
}

func writeInline(b textWriter, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			_, _ = b.Write(c.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				_ = b.WriteByte(' ')
			}
		case *ast.String:
			_, _ = b.Write(c.Value)
		case *ast.AutoLink:
			_, _ = b.Write(c.Label(src))
		case *ast.RawHTML:
			// Raw HTML is not text; the html export omits it too.
		default:
			writeInline(b, c, src)
		}
	}
}

// renderText renders Markdown as plain text: one block per paragraph,
// separated by blank lines, code verbatim, no raw HTML; list items start
// with "- " or "N. " and their further lines are indented to match.
func renderText(src []byte) []byte {
	t := textRenderer{b: make([]byte, 0, len(src)+len(src)/8)}
	t.blocks(parseMarkdown(src), src)
	return append(t.b, '\n')
}

// textRenderer writes plain text line by line. Each open list item has a
// prefix: its marker on its first line, spaces of the marker's width on
// the others (none on an empty line). Blank lines wait in pending until a
// line follows, so a list item's trailing blank lines are dropped, and so
// are the text's. Every line is written once, whatever the nesting, so
// rendering is linear.
type textRenderer struct {
	b       []byte
	items   []textItem
	pending int
	started bool
	inline  inlineBuffer // a block's text, reused
}

type textItem struct {
	marker string
	first  bool
}

// inlineBuffer collects inline text (a textWriter).
type inlineBuffer []byte

func (b *inlineBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
func (b *inlineBuffer) WriteByte(c byte) error      { *b = append(*b, c); return nil }

// spaces indents the lines of list items after the first; markers are
// "- " or at most "999999999. ".
const spaces = "            "

// line writes one line of text (without its line break).
func (t *textRenderer) line(s []byte) {
	first := len(t.items) > 0 && t.items[len(t.items)-1].first
	if len(s) == 0 && !first {
		t.blank()
		return
	}
	if t.started {
		t.b = append(t.b, '\n')
	}
	for ; t.pending > 0; t.pending-- {
		t.b = append(t.b, '\n')
	}
	t.started = true
	for i := range t.items {
		it := &t.items[i]
		if it.first {
			t.b = append(t.b, it.marker...)
			it.first = false
		} else {
			t.b = append(t.b, spaces[:len(it.marker)]...)
		}
	}
	t.b = append(t.b, s...)
}

func (t *textRenderer) blank() { t.pending++ }

func (t *textRenderer) blocks(parent ast.Node, src []byte) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			t.inline = t.inline[:0]
			writeInline(&t.inline, n, src)
			t.line(bytes.TrimSpace(t.inline))
			if _, tight := n.(*ast.TextBlock); !tight {
				t.blank()
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			l := n.Lines()
			for i := range l.Len() {
				seg := l.At(i)
				t.line(bytes.TrimRight(seg.Value(src), "\n"))
			}
			t.blank()
		case *ast.List:
			num := n.Start
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				marker := "- "
				if n.IsOrdered() {
					marker = strconv.Itoa(num) + ". "
					num++
				}
				t.items = append(t.items, textItem{marker, true})
				t.blocks(it, src)
				if t.items[len(t.items)-1].first {
					t.line(nil) // an empty item still shows its marker
				}
				t.items = t.items[:len(t.items)-1]
				t.pending = 0
			}
			t.blank()
		case *ast.HTMLBlock, *ast.ThematicBreak:
			// No text.
		default: // block quotes, link reference definitions
			t.blocks(n, src)
		}
	}
}

// countBlockWords adds the words of the blocks under parent to c: the
// words of the text export, without building it.
func countBlockWords(c *wordCounter, parent ast.Node, src []byte) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			writeInline(c, n, src)
			c.end()
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			l := n.Lines()
			for i := range l.Len() {
				seg := l.At(i)
				_, _ = c.Write(seg.Value(src))
				c.end()
			}
		case *ast.HTMLBlock, *ast.ThematicBreak:
		default:
			countBlockWords(c, n, src)
		}
	}
}
