package jsonwire

import "unicode/utf8"

// CutUTF8 cuts s to at most limit bytes, dropping a rune the limit cuts
// in two.
func CutUTF8(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return string(DropCutRune([]byte(s[:limit])))
}

// DropCutRune drops the end of a rune cut in two at the end of b (at most
// 3 bytes) when b is otherwise text, so the cut text stays valid UTF-8.
func DropCutRune(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	for i := 1; i <= utf8.UTFMax-1 && i < len(b); i++ {
		if utf8.Valid(b[:len(b)-i]) {
			return b[:len(b)-i]
		}
	}
	return b
}
