// Package markdown is the mock server's Markdown: a CommonMark parser
// whose time is linear in the text (goldmark's, with the parsers that were
// not replaced here), and what the server derives from a text: its
// sections and word count and the changes between two versions
// ([Analyze], [Diff]), its plain text ([Text]) and its HTML with raw HTML
// shown escaped ([WriteHTML]).
//
// It owns the rules of the contract that concern a text (what a section
// and a word are, how the text and HTML exports read) and nothing that is
// stored: it sees bytes, never a context or an account, and imports
// nothing of the mock server.
package markdown

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// md is the one Markdown parser and renderer (CommonMark, no raw HTML in
// the output), with the linear-time parser of parser.go. A
// goldmark.Markdown is safe for concurrent use.
var md = goldmark.New(goldmark.WithParser(mdParser))

// PreambleSection names the text before the first heading.
const PreambleSection = "(preamble)"

// Parse parses src with the linear-time parser into goldmark's AST.
func Parse(src []byte) ast.Node {
	return md.Parser().Parse(text.NewReader(src))
}

// AppendInline appends the text of n's inline descendants (as the text
// export shows it: no raw HTML, a soft or hard line break as a space) to
// dst and returns the extended buffer. src is the source n was parsed from.
func AppendInline(dst []byte, n ast.Node, src []byte) []byte {
	b := inlineBuffer(dst)
	writeInline(&b, n, src)
	return b
}

// plainInline returns the text of n's inline descendants.
func plainInline(n ast.Node, src []byte) string {
	var b strings.Builder
	writeInline(&b, n, src)
	return b.String()
}

// textWriter is what inline text is written to: a strings.Builder, an
// inlineBuffer, or a wordCounter.
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

// inlineBuffer collects inline text (a textWriter).
type inlineBuffer []byte

func (b *inlineBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
func (b *inlineBuffer) WriteByte(c byte) error      { *b = append(*b, c); return nil }
