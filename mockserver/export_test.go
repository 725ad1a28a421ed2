package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
)

func TestExportFormats(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, mustJSON(map[string]any{"name": "Deploy Guide: Prod!", "content": markdowntest.Document}))
	for _, tc := range []struct {
		format, canonical, ctype, ext string
		check                         func(t *testing.T, body []byte)
	}{
		{"", "markdown", "text/markdown; charset=utf-8", "md", func(t *testing.T, b []byte) {
			if string(b) != markdowntest.Document {
				t.Errorf("markdown body differs: %q", b)
			}
		}},
		{"md", "markdown", "text/markdown; charset=utf-8", "md", nil},
		{"html", "html", "text/html; charset=utf-8", "html", func(t *testing.T, b []byte) {
			s := string(b)
			for _, want := range []string{"<h1>Install Guide</h1>", "<li>first bullet item</li>", "<em>emphasis</em>", "<title>Deploy Guide: Prod!</title>", "&lt;script&gt;",
				// Raw HTML is shown escaped, block and inline, not dropped.
				"<pre>&lt;script&gt;alert('x')&lt;/script&gt;\n</pre>", "Inline &lt;script&gt;bad()&lt;/script&gt; and"} {
				if !strings.Contains(s, want) {
					t.Errorf("html lacks %q:\n%s", want, s)
				}
			}
			if strings.Contains(strings.ToLower(s), "<script") || strings.Contains(s, "javascript:") {
				t.Errorf("html lets a script through:\n%s", s)
			}
		}},
		{"text", "text", "text/plain; charset=utf-8", "txt", func(t *testing.T, b []byte) {
			s := string(b)
			for _, want := range []string{"Install Guide\n", "- first bullet item\n", "2. ordered beta\n", "# not a heading\n", "Opening paragraph with emphasis."} {
				if !strings.Contains(s, want) {
					t.Errorf("text lacks %q:\n%s", want, s)
				}
			}
			// The code span's "<script>" is text; the raw HTML is not.
			if strings.Contains(s, "alert") || strings.Contains(s, "<script>bad") || strings.Contains(s, "*emphasis*") {
				t.Errorf("text keeps markup:\n%s", s)
			}
		}},
		{"txt", "text", "text/plain; charset=utf-8", "txt", nil},
		{"json", "json", "application/json", "json", func(t *testing.T, b []byte) {
			var got contextJSON
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c, got); d != "" {
				t.Errorf("json export (-want +got):\n%s", d)
			}
		}},
		{"pdf", "pdf", "application/pdf", "pdf", func(t *testing.T, b []byte) {
			if !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Errorf("not a PDF: %.20q", b)
			}
		}},
	} {
		t.Run("format="+tc.format, func(t *testing.T) {
			path := "/v1/contexts/" + c.ID + "/export"
			if tc.format != "" {
				path += "?format=" + tc.format
			}
			before := len(ts.Events())
			r := do(t, ts, call{method: "GET", path: path})
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != tc.ctype {
				t.Errorf("Content-Type %q", ct)
			}
			if cd, want := r.Header.Get("Content-Disposition"), `attachment; filename="deploy-guide-prod-v1.`+tc.ext+`"; filename*=UTF-8''Deploy%20Guide-%20Prod!-v1.`+tc.ext; cd != want {
				t.Errorf("Content-Disposition %q, want %q", cd, want)
			}
			if tc.check != nil {
				tc.check(t, r.Body)
			}
			evs := ts.Events()[before:]
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			var d exportCompletedData
			if err := json.Unmarshal(evs[0].Data, &d); err != nil {
				t.Fatal(err)
			}
			want := exportCompletedData{ExportID: d.ExportID, ContextID: c.ID, Version: 1, Format: tc.canonical, SizeBytes: len(r.Body)}
			if diff := cmp.Diff(want, d); diff != "" || !strings.HasPrefix(d.ExportID, "exp_") {
				t.Errorf("export.completed (-want +got):\n%s", diff)
			}
		})
	}
	checkEvents(t, ts.Server)
}

func TestExportVersion(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc","content":"first text"}`)
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"Doc Two","content":"second text"}`})
	r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=1"})
	if r.Status != 200 || string(r.Body) != "first text" || r.Header.Get("Content-Disposition") != `attachment; filename="doc-v1.md"; filename*=UTF-8''Doc-v1.md` {
		t.Fatalf("version 1: %d %q %q", r.Status, r.Body, r.Header.Get("Content-Disposition"))
	}
	var got contextJSON
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=1&format=json"}).json(t, &got)
	if got.Version != 1 || got.Name != "Doc" || got.Content != "first text" || got.CreatedAt != c.CreatedAt {
		t.Fatalf("json of version 1: %+v", got)
	}
	r = do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=2"})
	if string(r.Body) != "second text" || r.Header.Get("Content-Disposition") != `attachment; filename="doc-two-v2.md"; filename*=UTF-8''Doc%20Two-v2.md` {
		t.Fatalf("version 2: %q", r.Body)
	}
	r = do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=3"})
	if typ, _ := r.errorOf(t); r.Status != 404 || typ != "not_found" {
		t.Fatalf("version 3: %d", r.Status)
	}
}

// TestExportPDFText reads an exported PDF back with pdftotext (Debian's
// poppler-utils, installed by .ci/run).
func TestExportPDFText(t *testing.T) {
	t.Parallel()
	bin := pdftotext(t)
	ts := NewTestServer(t)
	// Nesting deeper than the page is wide still shows its words.
	var deep strings.Builder
	for i := range 40 {
		deep.WriteString(strings.Repeat("  ", i) + "- level" + strconv.Itoa(i) + "\n")
	}
	deep.WriteString("\n" + strings.Repeat("> ", 40) + "deepest quoted words\n")
	c := create(t, ts, mustJSON(map[string]any{"name": "Deploy Guide", "content": markdowntest.Document + "\n> quoted wisdom here\n\n- outer\n  - nested inner item\n\n" + deep.String()}))
	r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?format=pdf"})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	text := pdfText(t, bin, r.Body)
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
	r2 := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?format=pdf"})
	if !bytes.Equal(r.Body, r2.Body) {
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
	pdf, err := renderPDF(exportDoc{name: "Long", content: doc.String()})
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

func ExampleServer_Publish() {
	s := New(WithClock(NewFakeClock(t0)))
	c := createDirect(s, `{"name":"Launch plan"}`)
	ev, _ := s.Publish(context.Background(), c)
	fmt.Println(ev.Type, ev.Timestamp.Format(timeFormat))
	// Output: context.published 2026-11-21T20:51:00.123Z
}
