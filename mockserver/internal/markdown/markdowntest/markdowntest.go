// Package markdowntest holds what the tests of Markdown, and of the
// server's answers that carry it, share: bodies that made parsers
// quadratic ([Hostile]), the plain renderers the linear ones are checked
// against ([Text], [CountWords]), and a sample [Document]. Only tests
// import it.
package markdowntest

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
)

// Document is a short document of the kinds of block and inline the
// exports render: a preamble, headings, lists, code, raw HTML, a script
// link and text beyond ASCII.
const Document = "Opening paragraph with *emphasis*.\n\n" +
	"# Install Guide\n\nRun the installer carefully.\n\n" +
	"- first bullet item\n- second bullet item\n\n" +
	"1. ordered alpha\n2. ordered beta\n\n" +
	"```go\nfunc main() { fmt.Println(\"codeword\") }\n# not a heading\n```\n\n" +
	"<script>alert('x')</script>\n\n" +
	"Inline <script>bad()</script> and [link](javascript:alert(1)) and `<script>` code.\n\n" +
	"## Café Notes\n\nNaïve résumé text.\n"

// CountWords is the contract's word count, written the plain way:
// fields of the text holding a letter or digit.
func CountWords(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			n++
		}
	}
	return n
}

// Text is the text renderer before the linear one, kept as
// the oracle of its output: each list item is rendered to its own buffer,
// split into lines and indented, so nesting d deep costs d times the text.
func Text(doc ast.Node, src []byte, markers bool) string {
	var b strings.Builder
	textBlocks(&b, doc, src, markers)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func textBlocks(b *strings.Builder, parent ast.Node, src []byte, markers bool) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			b.Write(bytes.TrimSpace(markdown.AppendInline(nil, n, src)))
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
				textBlocks(&item, it, src, markers)
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
			textBlocks(b, n, src, markers)
		}
	}
}
