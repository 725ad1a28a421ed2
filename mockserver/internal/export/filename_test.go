package export

import (
	"mime"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Deploy Guide: Prod!", "deploy-guide-prod"},
		{"  ", "context"},
		{"日本語", "context"},
		{"a__b--c", "a-b-c"},
		{strings.Repeat("x", 80), strings.Repeat("x", 60)},
		{"Café 2", "cafe-2"},
		// Latin-1 Supplement and Latin Extended-A keep their letters.
		{"Ünïcödé Straße", "unicode-strasse"},
		{"Æsir Œuvre Ærø", "aesir-oeuvre-aero"},
		{"Łódź Þingvellir Đakovo", "lodz-thingvellir-dakovo"},
		{"Ĳssel ŋ ĸ ſ ŉ", "ijssel-ng-k-s-n"},
		{"Čeština Ğüzel Ţară Ŵales Ÿ", "cestina-guzel-tara-wales-y"},
		{"À Á Â Ã Ä Å Ç È É Ê Ë Ì Í Î Ï Ð Ñ Ò Ó Ô Õ Ö Ø Ù Ú Û Ü Ý", "a-a-a-a-a-a-c-e-e-e-e-i-i-i-i-d-n-o-o-o-o-o-o-u-u-u-u-y"},
		{"2×3÷4", "2-3-4"},
		// Combining accents (decomposed text) are dropped, not separators.
		{"Cafe\u0301 nai\u0308ve", "cafe-naive"},
		{"Греция 2026", "2026"},
		{"Ünïcödé " + strings.Repeat("ß", 40), "unicode-" + strings.Repeat("ss", 26)},
	} {
		if got := slug(tc.in); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Ünïcödé Straße", "Ünïcödé Straße"},
		{"Deploy Guide: Prod!", "Deploy Guide- Prod!"},
		{"../../etc/passwd", "etc-passwd"},
		{`a\b/c<d>e"f|g?h*i`, "a-b-c-d-e-f-g-h-i"},
		{"  tabs\tand\u00a0\u3000spaces  ", "tabs and spaces"},
		{".hidden", "hidden"},
		{"-rf", "rf"},
		{"trailing dots...", "trailing dots"},
		// A right-to-left override would show "evil‮fdp.exe" as "evilexe.pdf".
		{"evil\u202efdp.exe", "evilfdp.exe"},
		{"日本語のメモ 😀", "日本語のメモ 😀"},
		{"///", "context"},
		{"..", "context"},
		{"", "context"},
		// At most maxFileNameBytes, cut between characters.
		{strings.Repeat("é", 150), strings.Repeat("é", 100)},
		{"a" + strings.Repeat("€", 100), "a" + strings.Repeat("€", 66)},
	} {
		if got := fileName(tc.in); got != tc.want {
			t.Errorf("fileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestContentDisposition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		version     int
		ext         string
		want, parse string // the header, and the name mime.ParseMediaType gives
	}{
		{"Ünïcödé Straße", 1, "pdf",
			`attachment; filename="unicode-strasse-v1.pdf"; filename*=UTF-8''%C3%9Cn%C3%AFc%C3%B6d%C3%A9%20Stra%C3%9Fe-v1.pdf`,
			"Ünïcödé Straße-v1.pdf"},
		{"Deploy Guide: Prod!", 12, "md",
			`attachment; filename="deploy-guide-prod-v12.md"; filename*=UTF-8''Deploy%20Guide-%20Prod!-v12.md`,
			"Deploy Guide- Prod!-v12.md"},
		{"日本語", 3, "html",
			`attachment; filename="context-v3.html"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E-v3.html`,
			"日本語-v3.html"},
		{"100% 'quoted' (a;b) [c]=d", 1, "txt",
			`attachment; filename="100-quoted-a-b-c-d-v1.txt"; filename*=UTF-8''100%25%20%27quoted%27%20%28a%3Bb%29%20%5Bc%5D%3Dd-v1.txt`,
			"100% 'quoted' (a;b) [c]=d-v1.txt"},
	} {
		got := ContentDisposition(tc.name, tc.version, tc.ext)
		if got != tc.want {
			t.Errorf("ContentDisposition(%q)\n got %s\nwant %s", tc.name, got, tc.want)
		}
		typ, params, err := mime.ParseMediaType(got)
		if err != nil || typ != "attachment" || params["filename"] != tc.parse {
			t.Errorf("ParseMediaType(%s) = %q %q %v, want filename %q", got, typ, params, err, tc.parse)
		}
	}
}

// FuzzFileName: any context name gives a header whose names are safe:
// the ASCII fallback of letters, digits and dashes, the UTF-8 name valid,
// without path separators or control characters, within the byte limit.
func FuzzFileName(f *testing.F) {
	for _, s := range []string{"Ünïcödé Straße", "a/b\\c", "\u202e", " . ", "日本語", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n := fileName(name)
		if !utf8.ValidString(n) && utf8.ValidString(name) || strings.ContainsAny(n, "/\\<>:\"|?*") || len(n) > maxFileNameBytes || n == "" ||
			strings.IndexFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			t.Errorf("fileName(%q) = %q", name, n)
		}
		if s := slug(name); strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || len(s) > 60 {
			t.Errorf("slug(%q) = %q", name, s)
		}
		if !utf8.ValidString(name) {
			return // names are valid UTF-8 (validate.go)
		}
		_, params, err := mime.ParseMediaType(ContentDisposition(name, 1, "pdf"))
		if err != nil || params["filename"] != n+"-v1.pdf" {
			t.Errorf("%q: ParseMediaType gives %q, %v; want %q", name, params["filename"], err, n+"-v1.pdf")
		}
	})
}
