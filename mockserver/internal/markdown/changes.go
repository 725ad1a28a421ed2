package markdown

import (
	"crypto/sha256"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

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
			cur = &section{name: PreambleSection}
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

// Info is what change tracking needs of a text: its sections and its word
// count. It is computed from one parse and kept with the context, so an
// update parses only the new text. Its section bodies are digests, not
// copies of the text (see compact).
type Info struct {
	sections []section
	words    int
}

// Analyze parses src and returns what [Diff] compares.
func Analyze(src []byte) Info { return compact(analyze(src)) }

// analyze is Analyze with section bodies as they are, fingerprints of the
// sections' source lines.
func analyze(src []byte) Info {
	doc := Parse(src)
	var c wordCounter
	countBlockWords(&c, doc, src)
	return Info{sections: sectionsOf(doc, src), words: c.n}
}

// compact replaces each section body of info, a fingerprint of the
// section's source lines, by its SHA-256 digest: change tracking only
// compares bodies, and a context keeps its analysis for as long as it
// lives, which would otherwise hold its text a second time.
func compact(info Info) Info {
	for i := range info.sections {
		sum := sha256.Sum256([]byte(info.sections[i].body))
		info.sections[i].body = string(sum[:])
	}
	return info
}

// Diff compares two analysed texts. sections_modified lists, in the
// new text's order, the sections whose body was added or changed, then the
// removed ones in the old order; sections are matched by heading text and
// occurrence (the second "Notes" matches the second "Notes"). Each name
// appears once. old is nil for a first version: every section is listed
// and the delta is the whole word count.
func Diff(old *Info, cur Info) contextsvc.Changes {
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
