package main

import (
	"io"
	"unicode/utf8"
)

// termSafeWriter passes text on to a terminal without what would drive
// it: escape sequences are dropped whole (CSI "ESC [ … final", OSC "ESC ]
// … BEL or ST" that sets a title or a hyperlink, DCS, SOS, PM and APC
// strings, two-byte and nF escapes, and their one-character C1 forms),
// and every other control character but line feed and tab is dropped
// too. A bidirectional override or isolate (it reorders what follows) and
// invalid UTF-8 show as "�", as they do in the command's tables. It works
// on a stream: a sequence or a character may be cut across writes.
//
// What it keeps costs constant memory: a character cut at the end of a
// write (at most 3 bytes) and the state of the sequence being dropped. A
// sequence longer than maxSequence ends there, its rest read as text (made
// safe all the same), so one stray ESC ] cannot hide a whole document.
type termSafeWriter struct {
	w       io.Writer
	state   termState
	seqLen  int
	partial []byte // the start of a UTF-8 character cut by the write's end
	dropped int    // sequences and control characters dropped
	buf     []byte
}

// maxSequence bounds the bytes of one escape sequence or string.
const maxSequence = 4096

type termState uint8

const (
	stGround    termState = iota // text
	stEsc                        // after ESC
	stEscInter                   // ESC and intermediate bytes (nF: ESC ( B)
	stCSI                        // a control sequence: parameters, intermediates, final
	stString                     // an OSC, DCS, SOS, PM or APC string
	stStringEsc                  // ESC inside a string: \ ends it
)

func newTermSafeWriter(w io.Writer) *termSafeWriter {
	return &termSafeWriter{w: w, partial: make([]byte, 0, utf8.UTFMax)}
}

// Write filters p and writes what is left. It reports len(p) written
// unless the underlying writer fails.
func (t *termSafeWriter) Write(p []byte) (int, error) {
	t.buf = t.buf[:0]
	n := len(p)
	if len(t.partial) > 0 {
		// Complete the character cut at the end of the last write.
		for len(p) > 0 && !utf8.FullRune(t.partial) {
			t.partial = append(t.partial, p[0])
			p = p[1:]
		}
		if !utf8.FullRune(t.partial) {
			return n, nil // still cut: wait for more
		}
		r, size := utf8.DecodeRune(t.partial)
		t.rune(r, size == 1 && r == utf8.RuneError)
		// A byte that made the character invalid starts the next one.
		rest := t.partial[size:]
		t.partial = t.partial[:0]
		p = append(append([]byte(nil), rest...), p...)
	}
	for len(p) > 0 {
		if p[0] < utf8.RuneSelf {
			t.rune(rune(p[0]), false)
			p = p[1:]
			continue
		}
		if !utf8.FullRune(p) {
			t.partial = append(t.partial, p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		t.rune(r, size == 1 && r == utf8.RuneError)
		p = p[size:]
	}
	if len(t.buf) == 0 {
		return n, nil
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// Close writes what a cut character left ("�") and ends a sequence cut
// short. It does not close the underlying writer.
func (t *termSafeWriter) Close() error {
	if len(t.partial) == 0 {
		return nil
	}
	t.partial = t.partial[:0]
	if t.state != stGround {
		return nil
	}
	_, err := t.w.Write([]byte("\uFFFD"))
	return err
}

// rune takes one character (invalid: a byte of invalid UTF-8).
func (t *termSafeWriter) rune(r rune, invalid bool) {
	if t.state != stGround {
		t.seqLen++
		if t.seqLen > maxSequence {
			t.state = stGround
		} else if t.sequence(r) {
			return
		}
	}
	switch {
	case invalid:
		t.buf = utf8.AppendRune(t.buf, utf8.RuneError)
	case r == '\n' || r == '\t':
		t.buf = append(t.buf, byte(r))
	case r == 0x1b:
		t.begin(stEsc)
	case r == 0x9b:
		t.begin(stCSI)
	case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
		t.begin(stString)
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		t.dropped++
	case unsafeRune(r):
		t.buf = utf8.AppendRune(t.buf, utf8.RuneError)
	default:
		t.buf = utf8.AppendRune(t.buf, r)
	}
}

func (t *termSafeWriter) begin(s termState) {
	t.state, t.seqLen = s, 0
	t.dropped++
}

// sequence takes r inside a sequence; it reports whether r belongs to it
// (false: the sequence ended before r, which is text again).
func (t *termSafeWriter) sequence(r rune) bool {
	switch t.state {
	case stEsc:
		switch {
		case r == '[':
			t.state = stCSI
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			t.state = stString
		case r >= 0x20 && r <= 0x2f:
			t.state = stEscInter
		case r >= 0x30 && r <= 0x7e:
			t.state = stGround // a two-byte escape: ESC c, ESC 7…
		case r == 0x1b:
			// ESC ESC: the first ends, the second starts.
			t.dropped++
		default:
			t.state = stGround
			return false
		}
		return true
	case stEscInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
		case r >= 0x30 && r <= 0x7e:
			t.state = stGround
		default:
			t.state = stGround
			return false
		}
		return true
	case stCSI:
		switch {
		case r >= 0x20 && r <= 0x3f: // parameters and intermediates
		case r >= 0x40 && r <= 0x7e:
			t.state = stGround
		default:
			t.state = stGround
			return false
		}
		return true
	case stString:
		switch r {
		case 0x07, 0x9c: // BEL (OSC's usual end), ST
			t.state = stGround
		case 0x1b:
			t.state = stStringEsc
		}
		return true
	case stStringEsc:
		if r == '\\' {
			t.state = stGround
			return true
		}
		// Another escape cancels the string and starts anew.
		t.state, t.seqLen = stEsc, 0
		return t.sequence(r)
	}
	return false
}
