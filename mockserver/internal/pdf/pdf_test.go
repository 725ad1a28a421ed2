package pdf

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
)

// t0 is the date of the tests' documents.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// unicodeText is text in every script the embedded fonts cover, one
// paragraph each: Latin with accents (Latin-1 and Extended-A), Greek,
// Cyrillic, symbols, Chinese, Japanese, Korean.
var unicodeText = []string{
	"Ünïcödé Straße: naïve café, Ærøskøbing, Łódź, œuvre, þorn, đak, Ğüzel, Ŵales, ĳssel.",
	"Ελληνικά: Καλημέρα κόσμε, ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
	"Кириллица: Съешь же ещё этих мягких французских булок, да выпей чаю. Їжак ґанок.",
	"Symbols: → ← ↑ ↓ ≤ ≥ ≠ ≈ ∞ ± × ÷ √ ∑ ∫ € £ ¥ © ® ™ § ¶ † ‡ • … ‰ ′ ″ « » „ “ ” ─ │ ┌ ┐",
	"中文：我能吞下玻璃而不伤身体。",
	"日本語：私はガラスを食べられます。それは私を傷つけません。",
	"한국어: 나는 유리를 먹을 수 있어요. 그래도 아프지 않아요.",
}

// TestExportPDFUnicode reads back with pdftotext a PDF of text in every
// covered script, in every place the layout has (title, heading,
// paragraph, list, quote, code, a paragraph mixing scripts in one line),
// and finds every character again, as often as it was written.
func TestExportPDFUnicode(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	mixed := strings.Repeat("Go 语言 and Ελληνικά with 日本語 and 한국어 text ", 12)
	long := strings.Repeat("漢字かなカナ한글", 40) // wraps over several lines with no space
	content := "# " + unicodeText[1] + "\n\n" + strings.Join(unicodeText, "\n\n") +
		"\n\n- " + unicodeText[2] + "\n  - " + unicodeText[5] +
		"\n\n> " + unicodeText[6] + "\n\n```\n" + unicodeText[4] + "\n\tκώδικας 代码\n```\n\n" + mixed + "\n\n" + long + "\n"
	name := "Ünïcödé Straße 中文"
	pdf, err := Render(name, content, t0)
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, bin, pdf)
	for _, s := range append([]string{name, "Go 语言 and Ελληνικά with 日本語 and 한국어 text", "κώδικας 代码"}, unicodeText...) {
		// A line break in the middle of CJK text reads back as a space.
		if !strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(s, " ", "")) {
			t.Errorf("pdftotext output lacks %q", s)
		}
	}
	want := runeCounts(name + content)
	for _, marker := range "#->`" { // Markdown syntax, not text
		delete(want, marker)
	}
	got := runeCounts(text)
	for r, n := range want {
		if got[r] < n {
			t.Errorf("%q (U+%04X) comes back %d times, want %d", r, r, got[r], n)
		}
	}
	if strings.ContainsRune(text, missing) {
		t.Errorf("a covered character printed as %q:\n%s", missing, text)
	}
	// Same version, same bytes, with the CJK font too.
	pdf2, err := Render(name, content, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdf, pdf2) {
		t.Error("two exports of one version differ")
	}
}

// runeCounts counts the characters of s that are not white space.
func runeCounts(s string) map[rune]int {
	m := map[rune]int{}
	for _, r := range s {
		if !unicode.IsSpace(r) {
			m[r]++
		}
	}
	return m
}

// TestExportPDFMissing: a character no embedded font covers prints as the
// visible mark U+FFFD, once per character; invisible format characters
// (joiners, variation selectors, soft hyphens) print as nothing.
func TestExportPDFMissing(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	var in, want []string
	for _, tc := range []struct{ in, want string }{
		{"emoji 😀 end", "emoji � end"},
		{"thumbs 👍🏽 up", "thumbs �� up"}, // the emoji and its skin tone
		{"heart ❤\ufe0f end", "heart � end"},
		{"family 👨\u200d👩\u200d👧 end", "family ��� end"},
		{"Arabic مرحبا Hebrew שלום", "Arabic ����� Hebrew ����"},
		{"Thai สวัสดี Devanagari नमस्ते", "Thai ������ Devanagari ������"},
		{"Extension A 㐀 and a CJK 中 together", "Extension A � and a CJK 中 together"},
		{"zero\u200bwidth soft\u00adhyphen", "zerowidth softhyphen"},
		{"in code:\n\n```\nx := \"😀\" // 中\n```\n", "in code: x := \"�\" // 中"},
	} {
		// One document per case would cost a font parse each: the cases
		// go in one, one paragraph each, and come back in order.
		in = append(in, tc.in)
		want = append(want, tc.want)
	}
	pdf, err := Render("Missing", strings.Join(in, "\n\n"), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimPrefix(pdfText(t, bin, pdf), "Missing ")
	if w := strings.Join(want, " "); got != w {
		t.Errorf("the PDF reads back as\n%s\nwant\n%s", got, w)
	}
}

// TestAppendText: the text a block prints and the face of each run.
func TestAppendText(t *testing.T) {
	t.Parallel()
	type run struct {
		Face face
		Text string
	}
	for _, tc := range []struct {
		base face
		in   string
		code bool
		want []run
	}{
		{faceRegular, "plain ASCII", false, []run{{faceRegular, "plain ASCII"}}},
		{faceBold, "Straße Ελλάδα Київ €", false, []run{{faceBold, "Straße Ελλάδα Київ €"}}},
		{faceRegular, "Go 语言 API", false, []run{{faceRegular, "Go "}, {faceCJK, "语言 "}, {faceRegular, "API"}}},
		// Korean spaces its words: the spaces stay in the CJK face.
		{faceItalic, "나는 유리를 먹을", false, []run{{faceCJK, "나는 유리를 먹을"}}},
		{faceRegular, "a\U0001F600b\u200d\ufe0fc\u00add\re", false, []run{{faceRegular, "a\uFFFDbcde"}}},
		{faceRegular, "a\tb", false, []run{{faceRegular, "a b"}}},
		// In code a tab goes to the next multiple of 4 columns, and spaces
		// after CJK keep Go Mono's width.
		{faceMono, "a\tb\n\tc\nabcd\te", true, []run{{faceMono, "a   b\n    c\nabcd    e"}}},
		{faceMono, "日\tb", true, []run{{faceCJK, "日"}, {faceMono, "   b"}}},
	} {
		p := &pdfWriter{cov: coverage()}
		p.appendText(tc.base, []byte(tc.in), tc.code)
		var got []run
		for _, r := range p.runs {
			got = append(got, run{r.face, string(p.cell[r.start:r.end])})
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("appendText(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

// TestPDFFontCoverage: the fast path of appendText takes printable ASCII
// to be in every Go face, and the layout's bullet and the missing mark are
// there too, with the whole of Latin-1 and Latin Extended-A, Greek and
// Cyrillic; the CJK face has the three scripts.
func TestPDFFontCoverage(t *testing.T) {
	t.Parallel()
	cov := coverage()
	for f := range faceCJK {
		for r := rune(0x20); r < 0x7F; r++ {
			if !cov.has(f, r) {
				t.Errorf("face %d lacks %q", f, r)
			}
		}
		for _, r := range bullet + string(missing) + "ΑωάώАяёЇґ€→≤─" {
			if !cov.has(f, r) {
				t.Errorf("face %d lacks %q", f, r)
			}
		}
		for r := rune(0xA0); r < 0x180; r++ { // Latin-1 Supplement, Latin Extended-A
			if !cov.has(f, r) {
				t.Errorf("face %d lacks %q", f, r)
			}
		}
	}
	for _, r := range "中文字日本語ひらがなカタカナ한국어、。" {
		if !cov.has(faceCJK, r) {
			t.Errorf("the CJK face lacks %q", r)
		}
	}
	for _, r := range "😀ابשא\U00020000" {
		if cov.has(faceRegular, r) || cov.has(faceCJK, r) {
			t.Errorf("%q is covered, but no font has it", r)
		}
	}
}

// TestPDFEmbeddedFontsUnchanged: fpdf writes into the font bytes it is
// given while subsetting; the embedded fonts must stay as they are, or
// the next export would differ (and concurrent ones would race).
func TestPDFEmbeddedFontsUnchanged(t *testing.T) {
	t.Parallel()
	var before [numFaces][32]byte
	for f := range numFaces {
		before[f] = sha256.Sum256(faceFonts[f].ttf)
	}
	content := strings.Join(unicodeText, "\n\n") + "\n\n> " + unicodeText[0] + "\n\n```\n" + unicodeText[2] + " 中\n```\n\n# " + unicodeText[6]
	if _, err := Render(unicodeText[1], content, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for f := range numFaces {
		if sha256.Sum256(faceFonts[f].ttf) != before[f] {
			t.Errorf("rendering changed the bytes of face %d (%s)", f, faceFonts[f].family)
		}
	}
}

// TestPDFMixedLinesDrawOnce: a line that changes script at every word (its
// page's runs written face by face) draws each run once, at its
// place: the page content holds each CJK character as often as the text
// does, and pdftotext reads the line in order.
func TestPDFMixedLinesDrawOnce(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	const n = 60
	content := strings.Repeat("abc 漢字 ", n)
	pdf, err := Render("Mixed", content, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	pc := pageContent(t, pdf)
	for _, r := range "漢字" {
		if got := bytes.Count(pc, utf16BE(string(r))); got != n {
			t.Errorf("the page content draws %c %d times, want %d", r, got, n)
		}
	}
	text := strings.ReplaceAll(pdfText(t, bin, pdf), "漢 字", "漢字") // a line may break between the two
	if want := "Mixed " + strings.TrimSpace(content); text != want {
		t.Errorf("pdftotext reads\n%s\nwant\n%s", text, want)
	}
}

// pageContent returns the content streams of pdf's pages, decompressed,
// one after the other (fpdf writes them as "<</Filter /FlateDecode
// /Length n>>", or "<</Length n>>" uncompressed; font streams put /Length
// first).
func pageContent(t *testing.T, pdf []byte) []byte {
	t.Helper()
	var out []byte
	for _, m := range regexp.MustCompile(`<<(/Filter /FlateDecode )?/Length (\d+)>>\nstream\n`).FindAllSubmatchIndex(pdf, -1) {
		n, _ := strconv.Atoi(string(pdf[m[4]:m[5]]))
		data := pdf[m[1] : m[1]+n]
		if m[2] >= 0 {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, data...)
	}
	return out
}

// TestExportPDFText reads an exported PDF back with pdftotext (Debian's
// poppler-utils, installed by .ci/run).
func TestExportPDFText(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	// Nesting deeper than the page is wide still shows its words.
	var deep strings.Builder
	for i := range 40 {
		deep.WriteString(strings.Repeat("  ", i) + "- level" + strconv.Itoa(i) + "\n")
	}
	deep.WriteString("\n" + strings.Repeat("> ", 40) + "deepest quoted words\n")
	content := markdowntest.Document + "\n> quoted wisdom here\n\n- outer\n  - nested inner item\n\n" + deep.String()
	pdf, err := Render("Deploy Guide", content, t0)
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, bin, pdf)
	for _, want := range []string{
		"Deploy Guide", "Opening paragraph with emphasis.", "Install Guide", "Run the installer carefully.",
		"• first bullet item", "• second bullet item", "ordered alpha", "ordered beta",
		"codeword", "# not a heading", "Café Notes", "Naïve résumé text.", "quoted wisdom here", "nested inner item",
		"level0", "level20", "level39", "deepest quoted words",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "alert") || strings.Contains(text, "<script>bad") {
		t.Errorf("raw HTML reached the PDF:\n%s", text)
	}
	// Same version, same bytes.
	pdf2, err := Render("Deploy Guide", content, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdf, pdf2) {
		t.Error("two exports of one version differ")
	}
}

// TestExportPDFLong reads back a PDF longer than maxCompressedPages, whose
// pages are not compressed.
func TestExportPDFLong(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	var doc strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&doc, "word%d\n\n", i)
	}
	pdf, err := Render("Long", doc.String(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Text is written in UTF-16BE; compressed pages would not show it.
	if !bytes.Contains(pdf, utf16BE("word2500")) {
		t.Error("a long PDF's pages are compressed")
	}
	text := pdfText(t, bin, pdf)
	for _, want := range []string{"Long word0 word1", "word2500", "word4998 word4999"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext output lacks %q", want)
		}
	}
	if pages := strings.Count(string(pdf), "/Type /Page\n"); pages <= maxCompressedPages {
		t.Errorf("%d pages, want more than %d", pages, maxCompressedPages)
	}
}

// utf16BE encodes s (in the Basic Multilingual Plane) as a PDF string
// in a Unicode font holds it.
func utf16BE(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r>>8), byte(r))
	}
	return b
}

// pdftotext returns the path of poppler's pdftotext, or skips the test
// (fails it in CI) when it is not installed.
func pdftotext(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext is missing in CI: install poppler-utils")
		}
		t.Skip("pdftotext not installed (apt-get install poppler-utils)")
	}
	return bin
}

// pdfText returns the words pdftotext reads from pdf, one space apart.
func pdfText(t *testing.T, bin string, pdf []byte) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-enc", "UTF-8", in, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
