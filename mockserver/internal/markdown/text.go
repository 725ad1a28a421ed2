package markdown

import (
	"bytes"
	"strconv"

	"github.com/yuin/goldmark/ast"
)

// Text renders Markdown as plain text: one block per paragraph,
// separated by blank lines, code verbatim, no raw HTML; list items start
// with "- " or "N. " and their further lines are indented to match.
func Text(src []byte) []byte {
	t := textRenderer{b: make([]byte, 0, len(src)+len(src)/8)}
	t.blocks(Parse(src), src)
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
