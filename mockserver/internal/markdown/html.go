package markdown

import (
	"io"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// The contract says the HTML export shows raw HTML escaped: a reader of the
// export sees the text "<script>…" the author wrote, and no browser runs it.
// goldmark's default renderer drops raw HTML instead (a comment takes its
// place), which loses the author's text, so the HTML export uses its own
// goldmark with a node renderer that writes raw HTML as escaped text.
var htmlExportMarkdown = goldmark.New(goldmark.WithParser(mdParser), goldmark.WithRendererOptions(
	// A lower priority value registers last and wins over goldmark's HTML
	// renderer (1000) for the two raw-HTML node kinds.
	renderer.WithNodeRenderers(util.Prioritized(escapedRawHTML{}, 100)),
))

// WriteHTML writes src as HTML (the body of the HTML export) to w: raw
// HTML in src shown escaped, as text, and dangerous link targets dropped
// (goldmark's renderer drops them), so nothing of src runs in a browser.
func WriteHTML(w io.Writer, src []byte) error { return htmlExportMarkdown.Convert(src, w) }

// escapedRawHTML renders inline raw HTML and HTML blocks as escaped text.
type escapedRawHTML struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (escapedRawHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTMLEscaped)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlockEscaped)
}

func renderRawHTMLEscaped(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	segs := n.(*ast.RawHTML).Segments
	for i := range segs.Len() {
		seg := segs.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlockEscaped(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	block := n.(*ast.HTMLBlock)
	_, _ = w.WriteString("<pre>")
	lines := block.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	if block.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(block.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</pre>\n")
	return ast.WalkContinue, nil
}
