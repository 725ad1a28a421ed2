package markdown

import (
	"bytes"
	"slices"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The mock server parses any text of up to 1,000,000 bytes, so its
// Markdown parser must take time linear in the text. goldmark (the
// project's CommonMark parser) does not on its own; four kinds of input
// made it quadratic or worse, each fixed here without refusing any text:
//
//   - Deep nesting. For every container a line continues or opens,
//     goldmark measures the line's column from the line's start
//     (text.Reader.LineOffset) and rescans the rest of the line (its
//     indentation, or "- - - x" as a possible thematic break), so a line
//     nested d deep costs d times its length: 1 MB of '>' is one line a
//     million quotes deep, and 1 MB of "- x" lines indented ever deeper
//     took 4.9 s. Block quotes and list items therefore nest at most
//     MaxNesting deep (see nestingLimited); deeper markers are text.
//   - Openers without closers. A code span opener scans the rest of its
//     paragraph for a closing backtick run of its length, once per opener
//     (see codeSpans); a link's "](" scans the rest of its line (see
//     linkParser in inline.go).
//   - Emphasis. goldmark matches each closing '*' or '_' against every
//     unmatched opener before it (it lacks CommonMark's "openers bottom"),
//     so emphasis and links are parsed by inline.go.
//   - Link reference definitions: see linkDefinitions.
//
// Everything else (block structure, headings, code blocks, HTML,
// autolinks, entities) is goldmark's own.
var mdParser = parser.NewParser(
	parser.WithBlockParsers(
		util.Prioritized(parser.NewSetextHeadingParser(), 100),
		util.Prioritized(parser.NewThematicBreakParser(), 200),
		util.Prioritized(nestingLimited{parser.NewListParser()}, 300),
		util.Prioritized(nestingLimited{parser.NewListItemParser()}, 400),
		util.Prioritized(parser.NewCodeBlockParser(), 500),
		util.Prioritized(parser.NewATXHeadingParser(), 600),
		util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
		util.Prioritized(nestingLimited{parser.NewBlockquoteParser()}, 800),
		util.Prioritized(parser.NewHTMLBlockParser(), 900),
		util.Prioritized(parser.NewParagraphParser(), 1000),
	),
	parser.WithInlineParsers(
		util.Prioritized(codeSpans{parser.NewCodeSpanParser()}, 100),
		util.Prioritized(linkParser{}, 200),
		util.Prioritized(parser.NewAutoLinkParser(), 300),
		util.Prioritized(parser.NewRawHTMLParser(), 400),
		util.Prioritized(emphasisParser{}, 500),
	),
	parser.WithParagraphTransformers(util.Prioritized(linkDefinitions{}, 100)),
)

// MaxNesting is how deep block quotes and list items nest: a marker that
// would open a container inside MaxNesting others is left as text. 32 is
// deeper than documents people write, and it bounds goldmark's work on a
// line to MaxNesting times the line.
const MaxNesting = 32

// nestingLimited is a goldmark block parser (block quote, list or list
// item) that opens no container inside MaxNesting others. Refusing is
// what goldmark does for a marker that does not match, so the marker
// becomes text of the block it is in; continuing an open container is
// unchanged.
type nestingLimited struct{ parser.BlockParser }

// Open implements parser.BlockParser.
func (p nestingLimited) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	// A list's items sit one level below the list's parent, and a new
	// item of an open list (parent is the list) is always allowed: the
	// list was opened within the limit.
	if _, inList := parent.(*ast.List); !inList && nestingDepth(parent) >= MaxNesting {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// nestingDepth counts the block quotes and list items that are n or hold
// n, up to MaxNesting.
func nestingDepth(n ast.Node) int {
	d := 0
	for ; n != nil && d < MaxNesting; n = n.Parent() {
		switch n.(type) {
		case *ast.Blockquote, *ast.ListItem:
			d++
		}
	}
	return d
}

// codeSpans is goldmark's code span parser behind a check that a closing
// backtick run exists. goldmark looks for the closer by scanning the rest
// of the paragraph, and an opener without one (a lone backtick among
// pairs) is then text, so n such openers cost n scans. Here each
// paragraph's backtick runs are indexed once (by length, in order), an
// opener without a closer becomes text at once, as goldmark would make
// it, and goldmark parses only the spans that close, whose scan ends at
// the closer.
type codeSpans struct{ parser.InlineParser }

var backtickRunsKey = parser.NewContextKey()

// backtickRuns indexes one block's maximal backtick runs: starts[k] holds
// the source offsets of the runs of length k, in increasing order.
type backtickRuns struct {
	block  ast.Node
	starts map[int][]int
}

// Parse implements parser.InlineParser.
func (p codeSpans) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	k := 0
	for k < len(line) && line[k] == '`' {
		k++
	}
	runs, _ := pc.Get(backtickRunsKey).(*backtickRuns)
	if runs == nil || runs.block != parent {
		runs = indexBacktickRuns(parent, block.Source())
		pc.Set(backtickRunsKey, runs)
	}
	if !runs.closes(k, seg.Start+k) {
		block.Advance(k)
		return ast.NewTextSegment(seg.WithStop(seg.Start + k))
	}
	return p.InlineParser.Parse(parent, block, pc)
}

// closes reports whether a run of exactly k backticks starts at or after
// offset from.
func (r *backtickRuns) closes(k, from int) bool {
	s := r.starts[k]
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(s)
}

func indexBacktickRuns(block ast.Node, src []byte) *backtickRuns {
	r := &backtickRuns{block: block, starts: map[int][]int{}}
	lines := block.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		for j := seg.Start; j < seg.Stop; {
			if src[j] != '`' {
				j++
				continue
			}
			start := j
			for j < seg.Stop && src[j] == '`' {
				j++
			}
			r.starts[j-start] = append(r.starts[j-start], start)
		}
	}
	return r
}

// linkDefinitions parses the link reference definitions that open a
// paragraph, as CommonMark defines them. goldmark's own transformer reads
// each definition's label and title through BlockReader.Value, which
// walks back over every line of the paragraph, so a paragraph of n
// definitions cost n times the paragraph (1 MB of them took 3.5 s); it
// also keeps a title that is followed by other text. Here the paragraph's
// text is joined once and definitions are read from it in one pass.
type linkDefinitions struct{}

// Transform implements parser.ParagraphTransformer.
func (linkDefinitions) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	src := reader.Source()
	if lines.Len() == 0 {
		return
	}
	if first := lines.At(0); !bytes.HasPrefix(util.TrimLeftSpace(first.Value(src)), []byte("[")) {
		return // the common case: no definition, nothing to do
	}
	// The paragraph's text, and where each line starts in it.
	var buf []byte
	starts := make([]int, lines.Len()+1)
	for i := range lines.Len() {
		starts[i] = len(buf)
		seg := lines.At(i)
		buf = append(buf, seg.Value(src)...)
	}
	starts[lines.Len()] = len(buf)
	lineAt := func(pos int) int { // the line starting at pos
		i, _ := slices.BinarySearch(starts, pos)
		return i
	}
	parent := node.Parent()
	from := 0 // the first line not consumed
	for pos := 0; pos < len(buf); {
		def, next, ok := parseLinkDefinition(buf, pos)
		if !ok {
			break
		}
		pc.AddReference(parser.NewReference(def.label, def.dest, def.title))
		end := lineAt(next)
		ref := ast.NewLinkReferenceDefinition(def.label, def.dest, def.title)
		for i := from; i < end; i++ {
			ref.Lines().Append(lines.At(i))
		}
		if from == 0 {
			ref.SetBlankPreviousLines(node.HasBlankPreviousLines())
		}
		parent.InsertBefore(parent, node, ref)
		from, pos = end, next
	}
	if from == 0 {
		return
	}
	if from == lines.Len() {
		parent.RemoveChild(parent, node)
		return
	}
	rest := text.NewSegments()
	rest.AppendAll(lines.Sliced(from, lines.Len()))
	node.SetLines(rest)
}

type linkDefinition struct{ label, dest, title []byte }

// parseLinkDefinition reads one definition at b[pos:], which starts a
// line; next is where the line after it starts. Each scan stops at the
// first character that ends or breaks its part, so the work is linear in
// what the definition spans (a title without a closer is read once).
func parseLinkDefinition(b []byte, pos int) (def linkDefinition, next int, ok bool) {
	i := skipSpaceTab(b, pos)
	if i-pos > 3 || i >= len(b) || b[i] != '[' {
		return def, 0, false
	}
	// Label: up to the first unescaped ']', no unescaped '[', at most
	// 999 characters, not blank.
	i++
	start := i
	for ; i < len(b) && b[i] != ']'; i++ {
		switch {
		case i-start > 999 || b[i] == '[':
			return def, 0, false
		case b[i] == '\\' && i+1 < len(b) && util.IsPunct(b[i+1]):
			i++
		}
	}
	if i >= len(b) || i-start > 999 || util.IsBlank(b[start:i]) || i+1 >= len(b) || b[i+1] != ':' {
		return def, 0, false
	}
	def.label = b[start:i]
	i = skipOneLineEnding(b, i+2)
	// Destination.
	dest, i, ok := scanDestination(b, i)
	if !ok {
		return def, 0, false
	}
	def.dest = dest
	// Without a title the definition may end with the destination's line.
	afterDest := skipSpaceTab(b, i)
	noTitleEnd := -1
	if afterDest >= len(b) || b[afterDest] == '\n' {
		noTitleEnd = min(afterDest+1, len(b))
	}
	j := skipOneLineEnding(b, i)
	if j > i && j < len(b) && (b[j] == '"' || b[j] == '\'' || b[j] == '(') {
		if title, k, ok := scanTitle(b, j); ok {
			if k = skipSpaceTab(b, k); k >= len(b) || b[k] == '\n' {
				def.title = title
				return def, min(k+1, len(b)), true
			}
		}
	}
	if noTitleEnd < 0 {
		return def, 0, false
	}
	return def, noTitleEnd, true
}

func skipSpaceTab(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// skipOneLineEnding skips spaces and tabs with at most one line ending
// among them.
func skipOneLineEnding(b []byte, i int) int {
	i = skipSpaceTab(b, i)
	if i < len(b) && b[i] == '\n' {
		i = skipSpaceTab(b, i+1)
	}
	return i
}

// scanDestination reads a link destination at b[i:], as linkDestination
// does on a line.
func scanDestination(b []byte, i int) (dest []byte, end int, ok bool) {
	lineEnd := bytes.IndexByte(b[i:], '\n')
	if lineEnd < 0 {
		lineEnd = len(b)
	} else {
		lineEnd += i
	}
	line := b[i:lineEnd]
	d, n, ok := destinationIn(line)
	return d, i + n, ok
}

// scanTitle reads a link title at b[i:] (b[i] is its opener) up to its
// closer; a title in parentheses holds no unescaped '('.
func scanTitle(b []byte, i int) (title []byte, end int, ok bool) {
	opener, closer := b[i], b[i]
	if opener == '(' {
		closer = ')'
	}
	for j := i + 1; j < len(b); j++ {
		switch {
		case b[j] == '\\' && j+1 < len(b) && util.IsPunct(b[j+1]):
			j++
		case b[j] == closer:
			return b[i+1 : j], j + 1, true
		case b[j] == opener:
			return nil, 0, false
		}
	}
	return nil, 0, false
}
