package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// termSafe runs in through a termSafeWriter in writes of at most chunk
// bytes (0: one write).
func termSafe(t *testing.T, in string, chunk int) (string, int) {
	t.Helper()
	var out bytes.Buffer
	w := newTermSafeWriter(&out)
	if chunk == 0 {
		chunk = len(in) + 1
	}
	for rest := []byte(in); len(rest) > 0; {
		n := min(chunk, len(rest))
		if k, err := w.Write(rest[:n]); err != nil || k != n {
			t.Fatalf("Write: %d, %v", k, err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), w.dropped
}

// TestTermSafeWriter: escape sequences go whole, other controls but line
// feed and tab go, text stays; the same however the text is cut into
// writes.
func TestTermSafeWriter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want string
		dropped        int
	}{
		{"plain text", "# Title\n\nA line\twith a tab, ünïcödé, 日本語.\n", "# Title\n\nA line\twith a tab, ünïcödé, 日本語.\n", 0},
		{"a title (OSC, BEL)", "a\x1b]0;owned\x07b", "ab", 1},
		{"a hyperlink (OSC, ST)", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click", 2},
		{"a cleared screen and colours (CSI)", "\x1b[2J\x1b[1;31mred\x1b[0m", "red", 3},
		{"private CSI", "\x1b[?1049h\x1b[?25lx", "x", 2},
		{"two-byte escapes", "\x1bc\x1b7x\x1b8", "x", 3},
		{"nF escape", "\x1b(0lqk\x1b(B", "lqk", 2},
		{"C1 CSI and OSC", "a\u009b2Jb\u009d0;t\u009cc", "abc", 2},
		{"DCS, SOS, PM, APC", "\x1bPq#0\x1b\\1\x1bXs\x1b\\2\x1b^p\x1b\\3\x1b_a\x1b\\4", "1234", 4},
		{"lone controls", "a\rb\x07c\x08d\x00e\x7ff\u0085g", "abcdefg", 6},
		{"carriage return in a line ending", "one\r\ntwo\r\n", "one\ntwo\n", 2},
		{"bidi controls", "evil\u202egpj.exe\u2066x\u2069", "evil\uFFFDgpj.exe\uFFFDx\uFFFD", 0},
		{"invalid UTF-8", "a\xffb\xe2\x82", "a\uFFFDb\uFFFD", 0},
		{"a C1 byte alone", "a\x9bb", "a\uFFFDb", 0},
		{"ESC before text that ends it", "\x1b\x1b[31mx", "x", 2},
		{"an escape in a string starts another", "\x1b]0;t\x1b[31mx", "x", 1},
		{"an unterminated CSI ends at a control", "\x1b[31\nx", "\nx", 1},
		{"ESC at the end", "x\x1b", "x", 1},
		{"a string too long ends", "\x1b]" + strings.Repeat("a", maxSequence+10) + "\n", strings.Repeat("a", 11) + "\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, chunk := range []int{0, 1, 2, 3, 5} {
				got, dropped := termSafe(t, tt.in, chunk)
				if got != tt.want || dropped != tt.dropped {
					t.Errorf("in writes of %d: %q (%d dropped), want %q (%d)", chunk, got, dropped, tt.want, tt.dropped)
				}
			}
		})
	}
}

// FuzzTermSafeWriter: whatever comes in, what goes out is valid UTF-8
// with no control character but line feed and tab, and is the same
// however the input is cut.
func FuzzTermSafeWriter(f *testing.F) {
	for _, s := range []string{"plain\n", "\x1b]0;t\x07x", "\x1b[1;31m\u009b2J", "\xe2\x82", "\x1bP\x1b\\", "a\u202eb"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, in string, chunk int) {
		whole, _ := termSafe(t, in, 0)
		cut, _ := termSafe(t, in, 1+(chunk&7))
		if whole != cut {
			t.Fatalf("%q: %q in one write, %q cut", in, whole, cut)
		}
		if !utf8.ValidString(whole) {
			t.Fatalf("%q: invalid UTF-8 out: %q", in, whole)
		}
		for _, r := range whole {
			if r != '\n' && r != '\t' && (r < 0x20 || r >= 0x7f && r <= 0x9f) {
				t.Fatalf("%q: a control character out: %q", in, whole)
			}
		}
	})
}
