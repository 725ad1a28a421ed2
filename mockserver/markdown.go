package mockserver

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// md is the one Markdown parser and renderer (CommonMark, no raw HTML in
// the output). A goldmark.Markdown is safe for concurrent use.
var md = goldmark.New()

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
	var b strings.Builder
	renderBlocks(&b, doc, src, false, "")
	return mdInfo{sections: sectionsOf(doc, src), words: countWords(b.String())}
}

// diffInfo compares two analysed texts. sections_modified lists, in the
// new text's order, the sections whose body was added or changed, then the
// removed ones in the old order; sections are matched by heading text and
// occurrence (the second "Notes" matches the second "Notes"). Each name
// appears once. old is nil for a first version: every section is listed
// and the delta is the whole word count.
func diffInfo(old *mdInfo, cur mdInfo) contextsvc.Changes {
	ch := contextsvc.Changes{SectionsModified: []string{}}
	ns := cur.sections
	var os []section
	if old != nil {
		os = old.sections
	}
	type key struct {
		name string
		n    int
	}
	keyed := func(ss []section) ([]key, map[key]string) {
		seen := map[string]int{}
		keys := make([]key, len(ss))
		m := make(map[key]string, len(ss))
		for i, s := range ss {
			k := key{s.name, seen[s.name]}
			seen[s.name]++
			keys[i] = k
			m[k] = s.body
		}
		return keys, m
	}
	nk, nm := keyed(ns)
	ok, om := keyed(os)
	listed := map[string]bool{}
	add := func(name string) {
		if !listed[name] {
			listed[name] = true
			ch.SectionsModified = append(ch.SectionsModified, name)
		}
	}
	for _, k := range nk {
		if ob, had := om[k]; !had || ob != nm[k] {
			add(k.name)
		}
	}
	for _, k := range ok {
		if _, has := nm[k]; !has {
			add(k.name)
		}
	}
	ch.WordCountDelta = cur.words
	if old != nil {
		ch.WordCountDelta -= old.words
	}
	return ch
}

// countWords counts the words of rendered text: runs of non-space
// characters holding at least one letter or digit, so Markdown markers and
// lone punctuation are not words.
func countWords(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			n++
		}
	}
	return n
}

// plainInline returns the text of n's inline descendants.
func plainInline(n ast.Node, src []byte) string {
	var b strings.Builder
	writeInline(&b, n, src)
	return b.String()
}

func writeInline(b *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(src))
		case *ast.RawHTML:
			// Raw HTML is not text; the html export omits it too.
		default:
			writeInline(b, c, src)
		}
	}
}

// renderText renders Markdown as plain text: one block per paragraph,
// separated by blank lines, code verbatim, no raw HTML. With markers, list
// items start with "- " or "N. " (the text export); without, they do not
// (word counting).
func renderText(src []byte, markers bool) string {
	doc := parseMarkdown(src)
	var b strings.Builder
	renderBlocks(&b, doc, src, markers, "")
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func renderBlocks(b *strings.Builder, parent ast.Node, src []byte, markers bool, indent string) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			b.WriteString(indent)
			b.WriteString(strings.TrimSpace(plainInline(n, src)))
			b.WriteString("\n")
			if _, tight := n.(*ast.TextBlock); !tight {
				b.WriteString("\n")
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				seg := l.At(i)
				b.WriteString(indent)
				b.Write(bytes.TrimRight(seg.Value(src), "\n"))
				b.WriteString("\n")
			}
			b.WriteString("\n")
		case *ast.List:
			num := n.Start
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				var item strings.Builder
				renderBlocks(&item, it, src, markers, "")
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
					b.WriteString(indent)
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
		case *ast.Blockquote:
			renderBlocks(b, n, src, markers, indent)
		case *ast.HTMLBlock, *ast.ThematicBreak:
			// No text.
		default:
			renderBlocks(b, n, src, markers, indent)
		}
	}
}
