package pdf

import (
	"bytes"
	_ "embed" // the CJK font
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// The PDF export prints with TrueType fonts embedded in the binary, so
// every character one of them covers survives (fpdf embeds the subset a
// document uses):
//   - the Go fonts (golang.org/x/image/font/gofont): Latin (Basic, Latin-1
//     Supplement and Extended-A whole, a little of Extended-B), modern
//     Greek, Cyrillic (Russian, Ukrainian, Belarusian, Serbian, Macedonian,
//     Bulgarian), punctuation, currency, arrows, math and box-drawing
//     symbols; Regular for text, Bold for the title and headings, Italic
//     for block quotes, Mono for code;
//   - Droid Sans Fallback (fonts/, Apache-2.0) for Chinese, Japanese and
//     Korean: the CJK Unified Ideographs, kana, Hangul syllables, CJK
//     punctuation and full-width forms, in every style.
//
// A character neither has (an emoji, Arabic, Hebrew, Devanagari, Thai, CJK
// Extension A, anything outside the Basic Multilingual Plane, which fpdf
// cannot print) is printed as missing.

//go:embed fonts/DroidSansFallback.ttf
var droidSansFallback []byte

// missing is what the PDF prints for a character no embedded font
// covers: U+FFFD REPLACEMENT CHARACTER, the mark Unicode gives for a
// character that cannot be shown, which the Go fonts draw (a diamond with a
// question mark) and text extraction returns as U+FFFD.
const missing = '\uFFFD'

// face is one embedded font.
type face uint8

const (
	faceRegular face = iota // Go Regular: paragraphs, list items
	faceBold                // Go Bold: the title, headings
	faceItalic              // Go Italic: block quotes
	faceMono                // Go Mono: code
	faceCJK                 // Droid Sans Fallback: CJK in any of the above
	numFaces
)

// faceFonts gives each face's fpdf family and style, and its TrueType
// bytes.
var faceFonts = [numFaces]struct {
	family, style string
	ttf           []byte
}{
	faceRegular: {"go", "", goregular.TTF},
	faceBold:    {"go", "B", gobold.TTF},
	faceItalic:  {"go", "I", goitalic.TTF},
	faceMono:    {"gomono", "", gomono.TTF},
	faceCJK:     {"droidsansfallback", "", droidSansFallback},
}

// fontCoverage has a bit per Basic Multilingual Plane character per face:
// whether the face has a glyph for it. fpdf reads only a font's BMP
// character map, so nothing beyond U+FFFF is covered.
type fontCoverage [numFaces][0x10000 / 64]uint64

// has reports whether f has a glyph for r.
func (c *fontCoverage) has(f face, r rune) bool {
	return r >= 0 && r < 0x10000 && c[f][r>>6]&(1<<(r&63)) != 0
}

// coverage is built once per process from the fonts' character maps
// (about 10 ms, on the first PDF export). fpdf itself parses each font
// again in every document that uses it: it has no way to share a parsed
// font between documents (see renderPDF).
var coverage = sync.OnceValue(func() *fontCoverage {
	c := new(fontCoverage)
	var buf sfnt.Buffer
	for f := range numFaces {
		font, err := sfnt.Parse(faceFonts[f].ttf)
		if err != nil {
			panic("mockserver: embedded font " + faceFonts[f].family + ": " + err.Error())
		}
		for r := rune(0x20); r < 0x10000; r++ {
			if g, err := font.GlyphIndex(&buf, r); err == nil && g != 0 {
				c[f][r>>6] |= 1 << (r & 63)
			}
		}
	}
	return c
})

// ignorable reports whether r is a Unicode default-ignorable character
// (zero-width space and joiners, variation selectors, soft hyphen, bidi
// and other format controls): invisible by definition, and left out of
// the PDF, as a text renderer without a glyph for one shows nothing.
// An emoji's variation selector or joiner does not add a mark to the
// emoji's own.
func ignorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true
	case unicode.Is(unicode.Cf, r):
		// Format characters that are visible: interlinear annotation,
		// Egyptian format controls, prepended concatenation marks.
		return !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F) &&
			!unicode.Is(unicode.Prepended_Concatenation_Mark, r)
	}
	return false
}

// textRun is a stretch of a block's text, as bytes [start, end) of
// pdfWriter.cell, printed in one face.
type textRun struct {
	face       face
	start, end int
}

// appendText appends s to p.cell as the PDF prints it in face base: each
// character in base when base has it, else in faceCJK when that has it,
// else as missing in base; default-ignorable characters and carriage
// returns left out; in code (code is true) a tab advances to the next
// multiple of 4 columns, elsewhere it is a space. p.runs gets the faces.
// Its cost is linear in s, with a fast path for printable ASCII, which
// every Go face covers.
func (p *pdfWriter) appendText(base face, s []byte, code bool) {
	for i := 0; i < len(s); {
		// The longest stretch of printable ASCII and line breaks.
		j := i
		for j < len(s) && (s[j] >= 0x20 && s[j] < 0x7F || s[j] == '\n') {
			j++
		}
		if j > i {
			// Spaces after CJK stay in the CJK face (it has a space), so
			// Korean, which spaces its words, needs no font change; not in
			// code, whose spaces keep Go Mono's width.
			if n := len(p.runs); !code && n > 0 && p.runs[n-1].face == faceCJK {
				k := i
				for k < j && s[k] == ' ' {
					k++
				}
				if k > i {
					p.appendRun(faceCJK, s[i:k])
					i = k
				}
			}
			if j > i {
				p.appendRun(base, s[i:j])
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		switch {
		case r == '\r' || ignorable(r):
		case r == '\t':
			n := 1
			if code {
				n = 4 - p.col%4
			}
			p.appendRun(base, []byte("    ")[:n])
		case p.cov.has(base, r):
			p.appendRune(base, r)
		case p.cov.has(faceCJK, r):
			p.appendRune(faceCJK, r)
		default:
			p.appendRune(base, missing)
		}
	}
}

func (p *pdfWriter) appendRune(f face, r rune) {
	var b [utf8.UTFMax]byte
	p.appendRun(f, b[:utf8.EncodeRune(b[:], r)])
	p.col++
}

// appendRun appends b (ASCII, or one character) in face f, extending the
// last run when it is in f, and keeps p.col.
func (p *pdfWriter) appendRun(f face, b []byte) {
	start := len(p.cell)
	p.cell = append(p.cell, b...)
	if b[0] < utf8.RuneSelf {
		if nl := bytes.LastIndexByte(b, '\n'); nl >= 0 {
			p.col = len(b) - nl - 1
		} else {
			p.col += len(b)
		}
	}
	if n := len(p.runs); n > 0 && p.runs[n-1].face == f {
		p.runs[n-1].end = len(p.cell)
		return
	}
	p.runs = append(p.runs, textRun{f, start, len(p.cell)})
}
