package mockserver

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark/ast"
)

// renderPDF lays the context out with fpdf's core fonts: the name as the
// title, then headings, paragraphs, lists (nested, with markers), code
// blocks in Courier on a grey band, block quotes in italics. Text is
// translated from UTF-8 to cp1252 so pdftotext recovers the words; runes
// cp1252 lacks print as '.'. A heading or paragraph without text takes no
// space. Dates come from the context, so the same version always gives the
// same bytes.
//
// Its cost is linear in the content: one fpdf cell per block or wrapped
// line. Pages are compressed only up to maxCompressedPages, because fpdf
// starts a new zlib writer for every page (0.1 to 0.3 ms each), which
// would double the time of a long document (1 MB of headings is 10,000
// pages).
func renderPDF(d exportDoc) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(d.updatedAt)
	pdf.SetModificationDate(d.updatedAt)
	pdf.SetCatalogSort(true)
	pdf.SetTitle(d.name, true)
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(true, 20)
	pdf.AddPage()
	p := &pdfWriter{pdf: pdf, tr: pdf.UnicodeTranslatorFromDescriptor(""), src: []byte(d.content)}
	p.bullet = p.tr("•")
	p.setFont("Helvetica", "B", 20)
	pdf.MultiCell(0, 9, p.tr(d.name), "", "L", false)
	pdf.Ln(4)
	p.blocks(parseMarkdown(p.src), 20, "")
	pdf.SetCompression(pdf.PageCount() <= maxCompressedPages)
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// maxCompressedPages is the longest PDF whose pages are compressed: at
// most about 30 ms of zlib set-up. Longer documents are about five times
// larger uncompressed.
const maxCompressedPages = 100

// maxLeft is the deepest left margin (mm) nesting may push text to: A4 is
// 210 mm wide with a 20 mm right margin, and past about 28 levels of 6 mm
// fpdf was left no width and dropped the text, so deeper levels stay at
// this margin and keep a readable 110 mm column.
const maxLeft = 80

// indent is the left margin of a nested list item or block quote.
func indent(left float64) float64 { return min(left+6, maxLeft) }

type pdfWriter struct {
	pdf *fpdf.Fpdf
	tr  func(string) string
	src []byte
	// marker is a list item's marker (in cp1252) waiting for the item's
	// first line. It is written in the same cell as the text so that text
	// extraction keeps marker and item together.
	marker string
	bullet string // "•" in cp1252
	// font is the font set last: fpdf writes a font change to the page
	// even when the font is the same.
	font pdfFont
	// inline and cell are reused for each block's text.
	inline inlineBuffer
	cell   []byte
}

type pdfFont struct {
	family, style string
	size          float64
}

func (p *pdfWriter) setFont(family, style string, size float64) {
	if f := (pdfFont{family, style, size}); f != p.font {
		p.font = f
		p.pdf.SetFont(family, style, size)
	}
}

// inlineText returns the trimmed text of n's inlines, valid until the
// next call.
func (p *pdfWriter) inlineText(n ast.Node) []byte {
	p.inline = p.inline[:0]
	writeInline(&p.inline, n, p.src)
	return bytes.TrimSpace(p.inline)
}

// text writes s (after a waiting list marker) as a paragraph, translated
// to cp1252; it reports whether anything was written.
func (p *pdfWriter) text(style string, size, lineH float64, s []byte) bool {
	p.cell = p.cell[:0]
	if p.marker != "" {
		p.cell = append(append(p.cell, p.marker...), ' ')
		p.marker = ""
	}
	if ascii(s) {
		p.cell = append(p.cell, s...)
	} else {
		p.cell = append(p.cell, p.tr(string(s))...)
	}
	if len(p.cell) == 0 {
		return false
	}
	p.setFont("Helvetica", style, size)
	p.pdf.MultiCell(0, lineH, string(p.cell), "", "L", false)
	return true
}

// ascii reports whether s is ASCII, which cp1252 leaves as it is.
func ascii(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// blocks writes the children of parent with left margin left; style is
// the font style inherited from a block quote.
func (p *pdfWriter) blocks(parent ast.Node, left float64, style string) {
	pdf := p.pdf
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		pdf.SetLeftMargin(left)
		pdf.SetX(left)
		switch n := n.(type) {
		case *ast.Heading:
			if t := p.inlineText(n); len(t) > 0 || p.marker != "" {
				pdf.Ln(2)
				p.text("B", max(18-2*float64(n.Level-1), 11), 8, t)
				pdf.Ln(1)
			}
		case *ast.Paragraph:
			if p.text(style, 11, 5.5, p.inlineText(n)) {
				pdf.Ln(2)
			}
		case *ast.TextBlock:
			p.text(style, 11, 5.5, p.inlineText(n))
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			var b strings.Builder
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				seg := l.At(i)
				b.Write(seg.Value(p.src))
			}
			p.setFont("Courier", "", 9)
			pdf.SetFillColor(235, 235, 235)
			pdf.MultiCell(0, 4.5, p.tr(strings.TrimRight(b.String(), "\n")), "", "L", true)
			pdf.Ln(2)
		case *ast.List:
			num := n.Start
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				marker := p.bullet
				if n.IsOrdered() {
					marker = strconv.Itoa(num) + "."
					num++
				}
				p.marker = marker
				p.blocks(it, indent(left), style)
				p.marker = ""
			}
			pdf.SetLeftMargin(left)
			pdf.Ln(2)
		case *ast.Blockquote:
			p.blocks(n, indent(left), "I")
		case *ast.ThematicBreak:
			y := pdf.GetY() + 2
			w, _ := pdf.GetPageSize()
			pdf.Line(left, y, w-20, y)
			pdf.Ln(5)
		case *ast.HTMLBlock:
			// Raw HTML is not rendered, as in the html export.
		default:
			p.blocks(n, left, style)
		}
	}
	pdf.SetLeftMargin(left)
}
