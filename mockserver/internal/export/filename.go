// Package export makes the files of the export endpoint (GET
// /v1/contexts/{id}/export): the formats ([Lookup]), each one's bytes
// ([Render]; the pdf package lays out the PDF) and the file's name (an
// attachment's Content-Disposition with an ASCII fallback and the name
// itself, [ContentDisposition]).
//
// It owns how an export reads and is named. It sees a context's name,
// text and date as of one version, never a stored context, and the JSON
// format's bytes are given to it; it imports markdown and pdf, nothing
// else of the mock server.
package export

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ContentDisposition is an export's Content-Disposition (RFC 6266): an
// attachment named after the context and version, twice: filename is the
// ASCII fallback, slug(name)-v<version>.<ext>; filename* (RFC 5987,
// UTF-8, percent-encoded) is the real name, fileName(name)-v<version>.<ext>.
// Clients that read filename* (browsers, this SDK) save
// "Ünïcödé Straße-v1.pdf"; others "unicode-strasse-v1.pdf".
func ContentDisposition(name string, version int, ext string) string {
	suffix := "-v" + strconv.Itoa(version) + "." + ext
	var b strings.Builder
	b.WriteString(`attachment; filename="`)
	b.WriteString(slug(name))
	b.WriteString(suffix)
	b.WriteString(`"; filename*=UTF-8''`)
	percentEncode(&b, fileName(name)+suffix)
	return b.String()
}

// maxFileNameBytes bounds fileName: with the longest suffix
// ("-v2147483647.html", 17 bytes) a name stays within the 255 bytes most
// file systems allow.
const maxFileNameBytes = 200

// fileName makes a safe file name of a context name, keeping its letters:
// path separators (/ and \), the characters Windows forbids in names
// (< > : " | ? *) and control characters become '-'; format characters
// (Unicode Cf, such as the bidirectional overrides that can disguise an
// extension) are left out; each run of white space becomes one space;
// leading and trailing spaces, dots and dashes go (no hidden file, no
// option-like name); the result is cut at a character boundary to at most
// maxFileNameBytes bytes of UTF-8. "context" when nothing is left.
func fileName(name string) string {
	var b strings.Builder
	space := false
	for _, r := range name {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case strings.ContainsRune(`/\<>:"|?*`, r), unicode.IsControl(r):
			r = '-'
		case unicode.Is(unicode.Cf, r):
			continue
		}
		if space && b.Len() > 0 {
			if b.Len()+1 > maxFileNameBytes {
				break
			}
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > maxFileNameBytes {
			break
		}
		b.WriteRune(r)
	}
	s := strings.Trim(b.String(), " .-")
	if s == "" {
		return "context"
	}
	return s
}

// percentEncode writes s as an RFC 5987 value: attr-chars as they are,
// every other byte as %XX.
func percentEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}

// slug makes the ASCII file name of a context name: letters transliterated
// to ASCII (Latin-1 Supplement and Latin Extended-A by latinASCII, so
// "Ünïcödé Straße" is "unicode-strasse"; combining accents dropped),
// lowercase ASCII letters and digits kept, every other run one '-', at
// most 60 characters; "context" when nothing is left.
func slug(name string) string {
	var b strings.Builder
	dash := false
	write := func(s string) bool {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
				if dash && b.Len() > 0 {
					b.WriteByte('-')
				}
				dash = false
				b.WriteByte(c)
				if b.Len() >= 60 {
					return false
				}
			} else {
				dash = true
			}
		}
		return true
	}
	for _, r := range name {
		var ok bool
		switch {
		case r < utf8.RuneSelf:
			ok = write(string(rune(r)))
		case r >= latinFirst && int(r-latinFirst) < len(latinASCII):
			ok = write(latinASCII[r-latinFirst])
		case unicode.Is(unicode.Mn, r):
			ok = true // a combining accent: "e\u0301" is "e"
		default:
			ok = write("-")
		}
		if !ok {
			break
		}
	}
	if b.Len() == 0 {
		return "context"
	}
	return b.String()
}

// latinFirst is the first character of latinASCII.
const latinFirst = 0xC0

// latinASCII transliterates U+00C0 to U+017F (the letters of Latin-1
// Supplement and all of Latin Extended-A) to lowercase ASCII: accents
// stripped, ß ss, æ ae, œ oe, ĳ ij, þ th, ð and đ d, ø o, ł l, ŋ ng, ĸ k,
// ſ s; × and ÷ are no letters ("-").
var latinASCII = [...]string{
	// U+00C0 À Á Â Ã Ä Å Æ Ç È É Ê Ë Ì Í Î Ï
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
	// U+00D0 Ð Ñ Ò Ó Ô Õ Ö × Ø Ù Ú Û Ü Ý Þ ß
	"d", "n", "o", "o", "o", "o", "o", "-", "o", "u", "u", "u", "u", "y", "th", "ss",
	// U+00E0 à á â ã ä å æ ç è é ê ë ì í î ï
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
	// U+00F0 ð ñ ò ó ô õ ö ÷ ø ù ú û ü ý þ ÿ
	"d", "n", "o", "o", "o", "o", "o", "-", "o", "u", "u", "u", "u", "y", "th", "y",
	// U+0100 Ā ā Ă ă Ą ą Ć ć Ĉ ĉ Ċ ċ Č č Ď ď
	"a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d",
	// U+0110 Đ đ Ē ē Ĕ ĕ Ė ė Ę ę Ě ě Ĝ ĝ Ğ ğ
	"d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g",
	// U+0120 Ġ ġ Ģ ģ Ĥ ĥ Ħ ħ Ĩ ĩ Ī ī Ĭ ĭ Į į
	"g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i",
	// U+0130 İ ı Ĳ ĳ Ĵ ĵ Ķ ķ ĸ Ĺ ĺ Ļ ļ Ľ ľ Ŀ
	"i", "i", "ij", "ij", "j", "j", "k", "k", "k", "l", "l", "l", "l", "l", "l", "l",
	// U+0140 ŀ Ł ł Ń ń Ņ ņ Ň ň ŉ Ŋ ŋ Ō ō Ŏ ŏ
	"l", "l", "l", "n", "n", "n", "n", "n", "n", "n", "ng", "ng", "o", "o", "o", "o",
	// U+0150 Ő ő Œ œ Ŕ ŕ Ŗ ŗ Ř ř Ś ś Ŝ ŝ Ş ş
	"o", "o", "oe", "oe", "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s",
	// U+0160 Š š Ţ ţ Ť ť Ŧ ŧ Ũ ũ Ū ū Ŭ ŭ Ů ů
	"s", "s", "t", "t", "t", "t", "t", "t", "u", "u", "u", "u", "u", "u", "u", "u",
	// U+0170 Ű ű Ų ų Ŵ ŵ Ŷ ŷ Ÿ Ź ź Ż ż Ž ž ſ
	"u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "s",
}
