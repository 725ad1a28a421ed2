package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file parses links, images and emphasis in linear time, following
// CommonMark's "look for link or image" and "process emphasis" procedures
// (spec appendix A), inside goldmark's inline parsing and producing
// goldmark's own AST nodes, so goldmark's renderers and the rest of this
// package see what goldmark's parsers would give.
//
// goldmark's link and emphasis parsers are quadratic on hostile text:
//   - at each "](" the link destination is scanned to the end of the line
//     when it never closes (100 kB of "[a](" took 1.6 s, 4x per doubling);
//   - at each ']' the link text is walked to look for a link inside it;
//   - each closing '*' or '_' is compared with every unmatched opener
//     before it, with no "openers bottom" (goldmark issue 555).
//
// Here, as in the spec: a link makes the '[' openers before it inactive
// (no walk); a closing delimiter that finds no opener raises a bottom
// below which later closers of its kind do not look; a link destination's
// parentheses nest at most MaxLinkParens deep (the spec allows such a
// limit); a destination in pointy brackets ends at an unescaped '<' (the
// spec's rule, which goldmark does not apply); and a reference label is
// looked up only when no other bracket lies inside it (no reference label
// can contain one). Elsewhere the parse matches goldmark's.

// MaxLinkParens bounds the parentheses nesting of a link destination;
// deeper is no link. cmark uses the same limit.
const MaxLinkParens = 32

var inlineStateKey = parser.NewContextKey()

// inlineState is the state of the link and emphasis parsers within one
// block's inline text.
type inlineState struct {
	block ast.Node
	// brackets are the open '[' and '![' openers, innermost last.
	brackets []*bracket
	// inactiveBelow: a '[' (not '![') opener at an index below it is
	// inactive, because a link was made after it (links hold no links).
	inactiveBelow int
	// bracketTriggers counts the '[', '![' and ']' met so far.
	bracketTriggers int
	// last is the newest delimiter of the delimiter stack.
	last *delimiter
	seq  int
}

func inlineStateOf(pc parser.Context, block ast.Node) *inlineState {
	if st, _ := pc.Get(inlineStateKey).(*inlineState); st != nil && st.block == block {
		return st
	}
	st := &inlineState{block: block}
	pc.Set(inlineStateKey, st)
	return st
}

// closeBlock ends a block's inline parse: emphasis is matched over the
// whole block, then what is left of delimiters and brackets is text.
func closeBlock(pc parser.Context) {
	st, _ := pc.Get(inlineStateKey).(*inlineState)
	if st == nil {
		return
	}
	st.processEmphasis(0)
	for _, b := range st.brackets {
		ast.MergeOrReplaceTextSegment(b.Parent(), b, b.seg)
	}
	pc.Set(inlineStateKey, nil)
}

// bracket is an open '[' or '![' in the AST, until it becomes a link or
// text.
type bracket struct {
	ast.BaseInline
	seg   text.Segment
	image bool
	index int
	// delimBottom is the sequence number of the newest delimiter when the
	// bracket opened: emphasis inside the link text lies above it.
	delimBottom int
	// trigger is bracketTriggers when the bracket opened.
	trigger int
}

var kindBracket = ast.NewNodeKind("MockBracket")

// Kind implements ast.Node.
func (b *bracket) Kind() ast.NodeKind { return kindBracket }

// Dump implements ast.Node.
func (b *bracket) Dump(src []byte, level int) { ast.DumpHelper(b, src, level, nil, nil) }

// delimiter is a run of '*' or '_' that can open or close emphasis, in
// the AST and in the delimiter stack, until it is used up or becomes text.
type delimiter struct {
	ast.BaseInline
	seg                text.Segment // the characters not used yet
	char               byte
	canOpen, canClose  bool
	length, origLength int
	prev, next         *delimiter
	seq                int
}

var kindDelimiter = ast.NewNodeKind("MockDelimiter")

// Kind implements ast.Node.
func (d *delimiter) Kind() ast.NodeKind { return kindDelimiter }

// Dump implements ast.Node.
func (d *delimiter) Dump(src []byte, level int) { ast.DumpHelper(d, src, level, nil, nil) }

// emphasisParser parses '*' and '_' runs.
type emphasisParser struct{}

// Trigger implements parser.InlineParser.
func (emphasisParser) Trigger() []byte { return []byte{'*', '_'} }

// Parse implements parser.InlineParser.
func (emphasisParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	c := line[0]
	n := 1
	for n < len(line) && line[n] == c {
		n++
	}
	after := ' '
	if n < len(line) {
		after = util.ToRune(line, n)
	}
	canOpen, canClose := flanking(c, before, after)
	block.Advance(n)
	seg = seg.WithStop(seg.Start + n)
	if !canOpen && !canClose {
		// It can never match: text now, so no closer ever looks at it.
		return ast.NewTextSegment(seg)
	}
	st := inlineStateOf(pc, parent)
	st.seq++
	dl := &delimiter{seg: seg, char: c, canOpen: canOpen, canClose: canClose,
		length: n, origLength: n, prev: st.last, seq: st.seq}
	if st.last != nil {
		st.last.next = dl
	}
	st.last = dl
	return dl
}

// CloseBlock implements parser.CloseBlocker.
func (emphasisParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	closeBlock(pc)
}

// flanking applies CommonMark's rules for a run of c between the runes
// before and after it: whether it can open and whether it can close
// emphasis ('_' not inside a word).
func flanking(c byte, before, after rune) (canOpen, canClose bool) {
	beforeSpace, afterSpace := util.IsSpaceRune(before), util.IsSpaceRune(after)
	beforePunct, afterPunct := util.IsPunctRune(before), util.IsPunctRune(after)
	left := !afterSpace && (!afterPunct || beforeSpace || beforePunct)
	right := !beforeSpace && (!beforePunct || afterSpace || afterPunct)
	if c == '_' {
		return left && (!right || beforePunct), right && (!left || afterPunct)
	}
	return left, right
}

// removeDelimiter takes d off the delimiter stack; its unused characters
// become text.
func (st *inlineState) removeDelimiter(d *delimiter) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		st.last = d.prev
	}
	d.prev, d.next = nil, nil
	if d.length > 0 {
		ast.MergeOrReplaceTextSegment(d.Parent(), d, d.seg)
	} else {
		d.Parent().RemoveChild(d.Parent(), d)
	}
}

// processEmphasis matches the delimiters above bottom (a sequence
// number) into emphasis, then makes what is left of them text.
func (st *inlineState) processEmphasis(bottom int) {
	var cur *delimiter
	for d := st.last; d != nil && d.seq > bottom; d = d.prev {
		cur = d
	}
	// openersBottom[char][closer can open][closer length % 3]: no opener
	// for such a closer lies at or below this sequence number.
	var openersBottom [2][2][3]int
	for i := range openersBottom {
		for j := range openersBottom[i] {
			for k := range openersBottom[i][j] {
				openersBottom[i][j][k] = bottom
			}
		}
	}
	for cur != nil {
		if !cur.canClose {
			cur = cur.next
			continue
		}
		ci, oi := 0, 0
		if cur.char == '_' {
			ci = 1
		}
		if cur.canOpen {
			oi = 1
		}
		lim := &openersBottom[ci][oi][cur.origLength%3]
		var opener *delimiter
		for o := cur.prev; o != nil && o.seq > *lim; o = o.prev {
			if o.canOpen && o.char == cur.char && !ruleOfThree(o, cur) {
				opener = o
				break
			}
		}
		if opener == nil {
			if cur.prev != nil {
				*lim = max(cur.prev.seq, bottom)
			}
			next := cur.next
			if !cur.canOpen {
				st.removeDelimiter(cur)
			}
			cur = next
			continue
		}
		use := 1
		if opener.length >= 2 && cur.length >= 2 {
			use = 2
		}
		em := ast.NewEmphasis(use)
		em.SetPos(opener.seg.Start)
		parent := opener.Parent()
		for c := opener.NextSibling(); c != nil && c != ast.Node(cur); {
			next := c.NextSibling()
			em.AppendChild(em, c)
			c = next
		}
		parent.InsertAfter(parent, opener, em)
		for d := opener.next; d != cur; {
			next := d.next
			st.removeDelimiter(d)
			d = next
		}
		opener.length -= use
		opener.seg = opener.seg.WithStop(opener.seg.Stop - use)
		cur.length -= use
		cur.seg = cur.seg.WithStart(cur.seg.Start + use)
		if opener.length == 0 {
			st.removeDelimiter(opener)
		}
		if cur.length == 0 {
			next := cur.next
			st.removeDelimiter(cur)
			cur = next
		}
	}
	for d := st.last; d != nil && d.seq > bottom; {
		prev := d.prev
		st.removeDelimiter(d)
		d = prev
	}
}

// ruleOfThree is CommonMark's "multiple of 3" rule: when either run can
// both open and close, runs whose lengths sum to a multiple of 3 match
// only if both lengths are multiples of 3.
func ruleOfThree(opener, closer *delimiter) bool {
	return (opener.canClose || closer.canOpen) &&
		(opener.origLength+closer.origLength)%3 == 0 &&
		!(opener.origLength%3 == 0 && closer.origLength%3 == 0)
}

// linkParser parses links and images: '[' and '![' open, ']' closes.
type linkParser struct{}

// Trigger implements parser.InlineParser.
func (linkParser) Trigger() []byte { return []byte{'!', '[', ']'} }

// Parse implements parser.InlineParser.
func (linkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	switch line[0] {
	case '!':
		if len(line) < 2 || line[1] != '[' {
			return nil
		}
		return inlineStateOf(pc, parent).open(block, seg.WithStop(seg.Start+2), true)
	case '[':
		return inlineStateOf(pc, parent).open(block, seg.WithStop(seg.Start+1), false)
	}
	return inlineStateOf(pc, parent).close(block, seg.Start, pc)
}

// CloseBlock implements parser.CloseBlocker.
func (linkParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	closeBlock(pc)
}

func (st *inlineState) open(block text.Reader, seg text.Segment, image bool) ast.Node {
	st.bracketTriggers++
	b := &bracket{seg: seg, image: image, index: len(st.brackets), trigger: st.bracketTriggers}
	if st.last != nil {
		b.delimBottom = st.last.seq
	}
	st.brackets = append(st.brackets, b)
	block.Advance(seg.Len())
	return b
}

// close handles the ']' at offset at: it makes a link or image of the
// innermost open bracket when a destination or a known reference follows,
// else returns nil (the ']' is text).
func (st *inlineState) close(block text.Reader, at int, pc parser.Context) ast.Node {
	st.bracketTriggers++
	if len(st.brackets) == 0 {
		return nil
	}
	b := st.brackets[len(st.brackets)-1]
	st.brackets = st.brackets[:len(st.brackets)-1]
	inactive := !b.image && b.index < st.inactiveBelow
	// A bracket opened later at this index is active.
	st.inactiveBelow = min(st.inactiveBelow, len(st.brackets))
	if inactive {
		ast.MergeOrReplaceTextSegment(b.Parent(), b, b.seg)
		return nil
	}
	block.Advance(1)
	l, pos := block.Position()
	// The label for a collapsed or shortcut reference is the link text.
	// It can match a definition only when no bracket lies inside it.
	// Labels so checked never overlap, so reading them is linear.
	textLabel := func() []byte {
		if st.bracketTriggers-b.trigger > 1 {
			return nil
		}
		if label := blockText(st.block.Lines(), block.Source(), b.seg.Stop, at); len(label) <= 999 {
			return label
		}
		return nil
	}
	var link *ast.Link
	switch block.Peek() {
	case '(':
		link = inlineLink(block)
	case '[':
		var isLabel bool
		link, isLabel = fullReference(block, pc, textLabel)
		if link == nil && isLabel {
			ast.MergeOrReplaceTextSegment(b.Parent(), b, b.seg)
			return nil
		}
	}
	if link == nil {
		block.SetPosition(l, pos)
		label := textLabel()
		ref, ok := lookupReference(pc, label)
		if !ok {
			ast.MergeOrReplaceTextSegment(b.Parent(), b, b.seg)
			return nil
		}
		link = ast.NewLink()
		link.Destination, link.Title = ref.Destination(), ref.Title()
		link.Reference = ast.NewReferenceLink(ast.ReferenceLinkShortcut, label)
	}

	st.processEmphasis(b.delimBottom)
	for c := b.NextSibling(); c != nil; {
		next := c.NextSibling()
		link.AppendChild(link, c)
		c = next
	}
	b.Parent().RemoveChild(b.Parent(), b)
	var n ast.Node = link
	if b.image {
		n = ast.NewImage(link)
	} else {
		st.inactiveBelow = len(st.brackets)
	}
	n.(interface{ SetPos(int) }).SetPos(b.seg.Start)
	return n
}

func lookupReference(pc parser.Context, label []byte) (parser.Reference, bool) {
	if label == nil {
		return nil, false
	}
	return pc.Reference(util.ToLinkReference(label))
}

// inlineLink parses "(destination title)" after a link's ']', goldmark's
// way, with the destination's limits above; nil if there is none.
func inlineLink(block text.Reader) *ast.Link {
	block.Advance(1) // '('
	block.SkipSpaces()
	link := ast.NewLink()
	if block.Peek() == ')' {
		block.Advance(1)
		return link
	}
	dest, ok := linkDestination(block)
	if !ok {
		return nil
	}
	link.Destination = dest
	block.SkipSpaces()
	if block.Peek() == ')' {
		block.Advance(1)
		return link
	}
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		return nil
	}
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	block.Advance(1)
	// A title ends at its closer, and one in parentheses also at an
	// unescaped '(' (no nesting), so each scan ends where the next title
	// could start.
	segs, found := block.FindClosure(opener, closer, text.FindClosureOptions{Newline: true, Advance: true})
	if !found {
		return nil
	}
	link.Title = segmentsText(segs, block.Source())
	block.SkipSpaces()
	if block.Peek() != ')' {
		return nil
	}
	block.Advance(1)
	return link
}

// linkDestination reads a destination on the current line; see
// destinationIn.
func linkDestination(block text.Reader) ([]byte, bool) {
	line, _ := block.PeekLine()
	dest, n, ok := destinationIn(line)
	if ok {
		block.Advance(n)
	}
	return dest, ok
}

// destinationIn reads the link destination that line starts with and
// returns it and the bytes it spans: in pointy brackets up to an
// unescaped '>' (no '<' and no line break inside), or up to white space
// or an unbalanced ')', with parentheses nested at most MaxLinkParens
// deep; never empty unless in pointy brackets.
func destinationIn(line []byte) (dest []byte, n int, ok bool) {
	escaped := func(i int) bool { return line[i] == '\\' && i+1 < len(line) && util.IsPunct(line[i+1]) }
	if len(line) > 0 && line[0] == '<' {
		for i := 1; i < len(line); i++ {
			switch {
			case escaped(i):
				i++
			case line[i] == '>':
				return line[1:i], i + 1, true
			case line[i] == '<' || line[i] == '\n':
				return nil, 0, false
			}
		}
		return nil, 0, false
	}
	depth := 0
	i := 0
scan:
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case escaped(i):
			i++
		case c == '(':
			depth++
			if depth > MaxLinkParens {
				return nil, 0, false
			}
		case c == ')':
			depth--
			if depth < 0 {
				break scan
			}
		case util.IsSpace(c):
			break scan
		}
	}
	return line[:i], i, i > 0
}

// fullReference parses "[label]" after a link's ']': a link when the
// label names a definition, or, for "[]", when the link text does.
// isLabel reports a well-formed label, after which no shortcut is tried.
func fullReference(block text.Reader, pc parser.Context, textLabel func() []byte) (link *ast.Link, isLabel bool) {
	block.Advance(1) // '['
	// The label ends at ']' and fails at '[', so scans do not overlap.
	segs, found := block.FindClosure('[', ']', text.FindClosureOptions{Newline: true, Advance: true})
	if !found {
		return nil, false
	}
	label := segmentsText(segs, block.Source())
	typ := ast.ReferenceLinkFull
	if util.IsBlank(label) {
		label, typ = textLabel(), ast.ReferenceLinkCollapsed
		if label == nil {
			return nil, true
		}
	}
	if len(label) > 999 {
		return nil, true
	}
	ref, ok := lookupReference(pc, label)
	if !ok {
		return nil, true
	}
	link = ast.NewLink()
	link.Destination, link.Title = ref.Destination(), ref.Title()
	link.Reference = ast.NewReferenceLink(typ, label)
	return link, true
}

// segmentsText joins segments (each within one line) as goldmark does.
func segmentsText(segs *text.Segments, src []byte) []byte {
	if segs.Len() == 1 {
		s := segs.At(0)
		return s.Value(src)
	}
	var b []byte
	for i := range segs.Len() {
		s := segs.At(i)
		b = append(b, s.Value(src)...)
	}
	return b
}

// blockText returns the text of source offsets [start, stop) of a block
// whose lines are lines, with each line's padding, as goldmark's
// BlockReader.Value does, but finding the first line by binary search
// rather than by walking back from the last.
func blockText(lines *text.Segments, src []byte, start, stop int) []byte {
	lo, hi := 0, lines.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if lines.At(m).Stop <= start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	b := []byte{}
	for i := lo; i < lines.Len(); i++ {
		s := lines.At(i)
		b = s.ConcatPadding(b)
		from := max(s.Start, start)
		to := min(s.Stop, stop)
		if from < to {
			b = append(b, src[from:to]...)
		}
		if s.Stop >= stop {
			break
		}
	}
	return b
}
