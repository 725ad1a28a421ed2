// Package pdf is the PDF export: it lays a Markdown document out on A4
// pages with Unicode fonts embedded in the binary (fonts/, font.go), the
// fonts parsed only by the documents that print with them.
//
// It owns the layout and the fonts. It sees a name, a text and a date,
// never a stored context, and it parses the text with the markdown
// package, so an export reads as the other formats do; it imports nothing
// else of the mock server.
package pdf

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark/ast"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
)

// Render lays a document out with the embedded Unicode fonts (font.go):
// name as the title, then headings, paragraphs, lists
// (nested, with markers), code blocks in Go Mono on a grey band, block
// quotes in italics. Every character an embedded font covers is printed,
// and pdftotext recovers it; any other prints as missing (U+FFFD). A line whose
// characters need two fonts (Latin and CJK) switches font per run of text.
// A heading or paragraph without text takes no space. The document's dates
// are date, so the same name, text and date always give the same bytes.
//
// Its cost is linear in the content: one fpdf text per printed line (per
// run of one font on a line that mixes fonts), a page's runs written one
// face after the other so that the font changes about once a page. Pages are
// compressed only up to maxCompressedPages, because fpdf starts a new zlib
// writer for every page (0.1 to 0.3 ms each), which would double the time
// of a long document (1 MB of headings is 10,000 pages).
//
// fpdf parses a font and subsets it in every document that uses it
// (together about 7 ms for a Go font and 40 ms for the CJK one on the
// development machine), and offers no way to share a parsed
// font between documents (the parsed font is private to the document, and
// its output step changes it), so each font is added to a document only
// when the document first prints with it: a document without code, quotes
// or CJK text parses two fonts.
func Render(name, content string, date time.Time) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(date)
	pdf.SetModificationDate(date)
	pdf.SetCatalogSort(true)
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(true, 20)
	p := &pdfWriter{pdf: pdf, cov: coverage(), src: []byte(content)}
	// The title in the document's information as printed on its page
	// (fpdf encodes only the Basic Multilingual Plane).
	p.appendText(faceBold, []byte(name), false)
	pdf.SetTitle(string(p.cell), true)
	pdf.AddPage()
	p.text(faceBold, 20, 9, []byte(name))
	pdf.Ln(4)
	p.blocks(markdown.Parse(p.src), 20, faceRegular)
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

// bullet is an unordered list item's marker.
const bullet = "•"

type pdfWriter struct {
	pdf *fpdf.Fpdf
	cov *fontCoverage
	src []byte
	// marker is a list item's marker waiting for the item's first line.
	// It is written in the same cell as the text so that text extraction
	// keeps marker and item together.
	marker string
	// added records the faces added to the document so far.
	added [numFaces]bool
	// font is the font set last: fpdf writes a font change to the page
	// even when the font is the same.
	font pdfFont
	// inline, cell and runs are reused for each block's text: inline
	// holds it as parsed, cell as printed (appendText), runs its faces.
	// col is the column after cell's last line break.
	inline []byte
	cell   []byte
	runs   []textRun
	col    int
	// toks, line, lineRuns and lineEnds are reused by mixed.
	toks     []textToken
	line     []textToken
	lineRuns []lineRun
	lineEnds []int
	placed   []placedRun // drawLines' runs waiting for their page's end
}

type pdfFont struct {
	face face
	size float64
}

// setFont selects face f at size pt, adding the face to the document
// first if it is not yet there. fpdf gets its own copy of the font: while
// subsetting it, fpdf writes into the bytes it was given (getMetrics
// appends to a slice of them), which would change the embedded font for
// later documents and race with concurrent exports.
func (p *pdfWriter) setFont(f face, size float64) {
	if !p.added[f] {
		p.added[f] = true
		ff := faceFonts[f]
		p.pdf.AddUTF8FontFromBytes(ff.family, ff.style, bytes.Clone(ff.ttf))
	}
	if pf := (pdfFont{f, size}); pf != p.font {
		p.font = pf
		ff := faceFonts[f]
		p.pdf.SetFont(ff.family, ff.style, size)
	}
}

// inlineText returns the trimmed text of n's inlines, valid until the
// next call.
func (p *pdfWriter) inlineText(n ast.Node) []byte {
	p.inline = markdown.AppendInline(p.inline[:0], n, p.src)
	return bytes.TrimSpace(p.inline)
}

// reset empties the block text buffer.
func (p *pdfWriter) reset() {
	p.cell, p.runs, p.col = p.cell[:0], p.runs[:0], 0
}

// text writes s (after a waiting list marker) as a paragraph in face f; it
// reports whether anything was written.
func (p *pdfWriter) text(f face, size, lineH float64, s []byte) bool {
	p.reset()
	if p.marker != "" {
		p.appendText(f, []byte(p.marker), false)
		p.appendRun(f, []byte{' '})
		p.marker = ""
	}
	p.appendText(f, s, false)
	if len(p.cell) == 0 {
		return false
	}
	p.flow(f, size, lineH, false)
	return true
}

// flow writes p.cell, wrapped to the margins, with line height lineH and
// the current fill color as background if fill: with fpdf's MultiCell
// when it is all in one Go face, else with mixed. (MultiCell breaks lines
// between CJK characters, but drops the character it breaks before.)
func (p *pdfWriter) flow(f face, size, lineH float64, fill bool) {
	if len(p.runs) > 1 || len(p.runs) == 1 && p.runs[0].face == faceCJK {
		p.mixed(size, lineH, fill)
		return
	}
	p.setFont(f, size)
	txt := string(p.cell)
	if p.oneLine(txt) {
		// What MultiCell would print, without its rune copy and its
		// second pass over the characters: a document of one-line list
		// items makes one such call per line.
		left, _, right, _ := p.pdf.GetMargins()
		pageW, _ := p.pdf.GetPageSize()
		p.lineRuns = append(p.lineRuns[:0], lineRun{face: f, end: len(txt), x: left + p.pdf.GetCellMargin()})
		p.lineEnds = append(p.lineEnds[:0], 1)
		p.drawLines(txt, size, lineH, fill, left, pageW-right-left)
		return
	}
	p.pdf.MultiCell(0, lineH, txt, "", "L", fill)
}

// oneLine reports whether MultiCell would print txt, in the current font
// at the left margin, as one line: it has no line break and is no wider
// than the line (measured as MultiCell measures, in glyph units).
func (p *pdfWriter) oneLine(txt string) bool {
	if strings.IndexByte(txt, '\n') >= 0 {
		return false
	}
	pdf := p.pdf
	pageW, _ := pdf.GetPageSize()
	left, _, right, _ := pdf.GetMargins()
	_, unit := pdf.GetFontSize()
	wmax := int(math.Ceil((pageW - right - left - 2*pdf.GetCellMargin()) * 1000 / unit))
	return pdf.GetStringSymbolWidth(txt) <= wmax
}

// blocks writes the children of parent with left margin left; base is the
// text face, italic in a block quote.
func (p *pdfWriter) blocks(parent ast.Node, left float64, base face) {
	pdf := p.pdf
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		pdf.SetLeftMargin(left)
		pdf.SetX(left)
		switch n := n.(type) {
		case *ast.Heading:
			if t := p.inlineText(n); len(t) > 0 || p.marker != "" {
				pdf.Ln(2)
				p.text(faceBold, max(18-2*float64(n.Level-1), 11), 8, t)
				pdf.Ln(1)
			}
		case *ast.Paragraph:
			if p.text(base, 11, 5.5, p.inlineText(n)) {
				pdf.Ln(2)
			}
		case *ast.TextBlock:
			p.text(base, 11, 5.5, p.inlineText(n))
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			p.reset()
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				seg := l.At(i)
				p.appendText(faceMono, seg.Value(p.src), true)
			}
			p.trimNewlines()
			pdf.SetFillColor(235, 235, 235)
			p.flow(faceMono, 9, 4.5, true)
			// Back to the text color: while the fill color differs, fpdf
			// wraps every later text in a color change of its own.
			pdf.SetFillColor(pdf.GetTextColor())
			pdf.Ln(2)
		case *ast.List:
			num := n.Start
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				marker := bullet
				if n.IsOrdered() {
					marker = strconv.Itoa(num) + "."
					num++
				}
				p.marker = marker
				p.blocks(it, indent(left), base)
				p.marker = ""
			}
			pdf.SetLeftMargin(left)
			pdf.Ln(2)
		case *ast.Blockquote:
			p.blocks(n, indent(left), faceItalic)
		case *ast.ThematicBreak:
			y := pdf.GetY() + 2
			w, _ := pdf.GetPageSize()
			pdf.Line(left, y, w-20, y)
			pdf.Ln(5)
		case *ast.HTMLBlock:
			// Raw HTML is not rendered, as in the html export.
		default:
			p.blocks(n, left, base)
		}
	}
	pdf.SetLeftMargin(left)
}

// trimNewlines drops the line breaks that end p.cell (a code block's
// last line's).
func (p *pdfWriter) trimNewlines() {
	n := len(bytes.TrimRight(p.cell, "\n"))
	p.cell = p.cell[:n]
	for len(p.runs) > 0 && p.runs[len(p.runs)-1].start >= n {
		p.runs = p.runs[:len(p.runs)-1]
	}
	if k := len(p.runs); k > 0 {
		p.runs[k-1].end = n
	}
}

// textToken is a unit of mixed's line breaking: a word in one face, a run
// of spaces, a line break, or one CJK character (each may start a line).
type textToken struct {
	face       face
	kind       tokenKind
	start, end int     // bytes of the block's text
	w          float64 // width in mm
}

type tokenKind uint8

// lineRun is a run of one face on a line of mixed, and where it starts.
type lineRun struct {
	face       face
	start, end int
	x          float64
}

const (
	tokenWord tokenKind = iota
	tokenSpace
	tokenBreak
)

// mixed writes p.cell, whose runs are in more than one face or in the
// CJK face, wrapped as MultiCell wraps text in one face: at spaces,
// between CJK characters and where the face changes, a word wider than
// the line at any character, explicit line breaks kept, one cell per run
// of one face on each line. CJK closing punctuation does not start a
// line: it hangs past the line's end. Each token is measured once and
// each character is written once, so it is linear in the text.
func (p *pdfWriter) mixed(size, lineH float64, fill bool) {
	pdf := p.pdf
	txt := string(p.cell)
	p.toks = p.toks[:0]
	for _, r := range p.runs {
		for i := r.start; i < r.end; {
			j, kind := i+1, tokenWord
			switch c := txt[i]; {
			case c == '\n':
				kind = tokenBreak
			case c == ' ':
				kind = tokenSpace
				for j < r.end && txt[j] == ' ' {
					j++
				}
			case r.face == faceCJK:
				for j < r.end && txt[j]&0xC0 == 0x80 {
					j++ // one character
				}
			default:
				for j < r.end && txt[j] != ' ' && txt[j] != '\n' {
					j++
				}
			}
			p.toks = append(p.toks, textToken{face: r.face, kind: kind, start: i, end: j})
			i = j
		}
	}
	// Measure, one face at a time: fpdf measures with the current font.
	var present [numFaces]bool
	for _, t := range p.toks {
		present[t.face] = true
	}
	for f := range numFaces {
		if !present[f] {
			continue
		}
		p.setFont(f, size)
		for i := range p.toks {
			if t := &p.toks[i]; t.face == f && t.kind != tokenBreak {
				t.w = pdf.GetStringWidth(txt[t.start:t.end])
			}
		}
	}

	cm := pdf.GetCellMargin()
	pageW, _ := pdf.GetPageSize()
	left, _, right, _ := pdf.GetMargins()
	lineW := pageW - right - left
	wmax := lineW - 2*cm

	// emit ends a line: its runs of one face, each with its place, go to
	// p.lineRuns, and the line's end to p.lineEnds.
	p.lineRuns, p.lineEnds = p.lineRuns[:0], p.lineEnds[:0]
	emit := func(line []textToken) {
		for len(line) > 0 && line[len(line)-1].kind == tokenSpace {
			line = line[:len(line)-1]
		}
		x := left + cm
		for i := 0; i < len(line); {
			r := lineRun{face: line[i].face, start: line[i].start, end: line[i].end, x: x}
			x += line[i].w
			for i++; i < len(line) && line[i].face == r.face && line[i].start == r.end; i++ {
				r.end, x = line[i].end, x+line[i].w
			}
			p.lineRuns = append(p.lineRuns, r)
		}
		p.lineEnds = append(p.lineEnds, len(p.lineRuns))
	}

	line, width, wrapped, hung := p.line[:0], 0.0, false, false
	for _, t := range p.toks {
		switch {
		case t.kind == tokenBreak:
			emit(line)
			line, width, wrapped, hung = line[:0], 0, false, false
			continue
		case t.kind == tokenSpace && wrapped && len(line) == 0:
			continue // a wrapped line starts with its first word
		case len(line) > 0 && width+t.w > wmax:
			if !hung && t.face == faceCJK && line[len(line)-1].kind == tokenWord && closesCJK(txt[t.start:t.end]) {
				hung = true
				break
			}
			emit(line)
			line, width, wrapped, hung = line[:0], 0, true, false
			if t.kind == tokenSpace {
				continue // the space the line broke at
			}
		}
		if t.w <= wmax {
			line, width = append(line, t), width+t.w
			continue
		}
		// A word wider than the line: as many characters as fit on each
		// line, the rest starting the next.
		p.setFont(t.face, size)
		piece := textToken{face: t.face, kind: tokenWord, start: t.start, end: t.start}
		for _, c := range txt[t.start:t.end] {
			cw := pdf.GetStringWidth(string(c))
			if piece.end > piece.start && piece.w+cw > wmax {
				emit(append(line, piece))
				line, wrapped, hung = line[:0], true, false
				piece.start, piece.w = piece.end, 0
			}
			piece.end += len(string(c))
			piece.w += cw
		}
		line, width = append(line, piece), piece.w
	}
	emit(line)
	p.line = line[:0]
	p.drawLines(txt, size, lineH, fill, left, lineW)
}

// drawLines writes the lines mixed laid out. Each line is a cell of the
// line's width without text (the page break, if one is due), then its
// runs, each at its place on the baseline MultiCell's cells use. With fill,
// one rectangle per page is the background of the lines on that page.
//
// The runs of a page are written when the page is full (or the text
// ends), one face after the other, the current face first: the font then
// changes about once per page, not at every change of script (a code
// block of Latin and CJK changed it twice a line, and each change is a
// command on the page). The page looks the same, and text extraction,
// which orders characters by position, reads the same.
func (p *pdfWriter) drawLines(txt string, size, lineH float64, fill bool, left, lineW float64) {
	pdf := p.pdf
	_, pageH := pdf.GetPageSize()
	_, bottom := pdf.GetAutoPageBreak()
	trigger := pageH - bottom
	baseline := lineH/2 + 0.3*size/pdf.GetConversionRatio()
	fillR, fillG, fillB := pdf.GetFillColor()
	p.placed = p.placed[:0]
	page, start := 0, 0
	for i, end := range p.lineEnds {
		if pdf.GetY()+lineH > trigger {
			p.writePlaced(txt, size) // before the break below
		}
		pdf.SetX(left)
		pdf.CellFormat(lineW, lineH, "", "", 0, "L", false, 0, "")
		y := pdf.GetY()
		if fill && pdf.PageNo() != page {
			// The lines that fit on this page, as fpdf will break them.
			page = pdf.PageNo()
			n, next := 1, y+lineH
			for i+n < len(p.lineEnds) && next+lineH <= trigger {
				n, next = n+1, next+lineH
			}
			pdf.SetFillColor(fillR, fillG, fillB)
			pdf.Rect(left, y, lineW, float64(n)*lineH, "F")
			// The text's own color as fill color, so that fpdf does not
			// wrap each run in a color change.
			pdf.SetFillColor(pdf.GetTextColor())
		}
		for _, r := range p.lineRuns[start:end] {
			p.placed = append(p.placed, placedRun{lineRun: r, y: y + baseline})
		}
		start = end
		pdf.Ln(lineH)
	}
	p.writePlaced(txt, size)
}

// placedRun is a run of drawLines with its baseline, waiting to be written.
type placedRun struct {
	lineRun
	y float64
}

// writePlaced writes the waiting runs, face by face, the current one
// first, and empties the list.
func (p *pdfWriter) writePlaced(txt string, size float64) {
	first := p.font.face
	for k := range numFaces {
		f := (first + k) % numFaces
		for _, r := range p.placed {
			if r.face == f {
				p.setFont(f, size)
				p.pdf.Text(r.x, r.y, txt[r.start:r.end])
			}
		}
	}
	p.placed = p.placed[:0]
}

// closesCJK reports whether s is CJK closing punctuation, which must not
// start a line (Japanese kinsoku, Chinese and Korean alike).
func closesCJK(s string) bool {
	return len(s) == 3 && strings.Contains("、。，．：；？！）］｝〕〉》」』】〙〗〟・", s)
}
