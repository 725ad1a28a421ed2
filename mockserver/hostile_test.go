package mockserver

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// bodyJSON encodes a request body as a client may: '<', '>' and '&' as
// themselves (json.Marshal's \u003c would make 1 MB of '<' a 6 MB body,
// over the 2 MiB limit).
func bodyJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.String()
}

// hostileSections gives, for the hostile inputs with headings, the
// body's section names (first occurrences, in order); the others have no
// heading, only "(preamble)".
var hostileSections = map[string]func(body string) []string{
	"prose":    fixedSections("Section heading"),
	"headings": fixedSections("h"),
	"setext":   fixedSections("a"),
	// A heading with no text is a section named "".
	"empty-headings":    fixedSections(""),
	"headings-distinct": headingNames,
	"headings-numbered": headingNames,
}

// headingNames lists the text of each ATX heading line.
func headingNames(body string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	return names
}

func fixedSections(names ...string) func(string) []string {
	return func(string) []string { return names }
}

// hostileTestSize is the size of each hostile body in TestHostileBodies:
// small enough that the whole test takes about a second (76 bodies, 5
// parses each), large enough that quadratic paths take seconds more (the
// parser before the fix took 74 ms to create 10 kB of '>' and 199 ms for
// "- - - … x", about 0.9 s per operation over the quadratic bodies).
const hostileTestSize = 10_000

// TestHostileBodies sends every hostile body through a real server:
// create it, update a context to it, and export that context in every
// format. Each must answer correctly: the word count is the count of the
// rendered text's words, the sections are the body's headings, each export
// carries the body. It asserts no time; a quadratic path makes it slow.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "hostile", Plan: PlanUnlimited}))
	for _, h := range markdowntest.Hostile() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			body := h.Gen(hostileTestSize)
			sections := []string{markdown.PreambleSection}
			if f := hostileSections[h.Name]; f != nil {
				sections = f(body)
			}

			// Create with the body: version 1 lists every section and counts
			// every word.
			c := create(t, ts, bodyJSON(map[string]any{"name": h.Name, "content": body}))
			v1 := versionOf(t, ts, c.ID, 1)
			doc := markdown.Parse([]byte(body))
			words := markdowntest.CountWords(markdowntest.Text(doc, []byte(body), false))
			want := contextsvc.Changes{SectionsModified: sections, WordCountDelta: words}
			if d := cmp.Diff(want, v1.Changes); d != "" {
				t.Errorf("create: changes (-want +got):\n%s", d)
			}

			// Update another context to the body.
			u := create(t, ts, `{"name":"start","content":"# Start\n\nfirst two words\n"}`)
			r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + u.ID, body: bodyJSON(map[string]any{"content": body})})
			if r.Status != 200 {
				t.Fatalf("update: %d %.200s", r.Status, r.Body)
			}
			want = contextsvc.Changes{SectionsModified: append(sections, "Start"), WordCountDelta: words - 4}
			if d := cmp.Diff(want, versionOf(t, ts, u.ID, 2).Changes); d != "" {
				t.Errorf("update: changes (-want +got):\n%s", d)
			}

			// Every export of the updated context.
			if got := exportBody(t, ts, u.ID, "markdown"); string(got) != body {
				t.Errorf("markdown export differs from the body (%d bytes, want %d)", len(got), len(body))
			}
			if got, want := string(exportBody(t, ts, u.ID, "text")), markdowntest.Text(doc, []byte(body), true); got != want {
				t.Errorf("text export differs from the oracle's (%d bytes, want %d)", len(got), len(want))
			}
			var j model.ContextJSON
			if err := json.Unmarshal(exportBody(t, ts, u.ID, "json"), &j); err != nil || j.Content != body || j.Version != 2 {
				t.Errorf("json export: %v, version %d, content of %d bytes", err, j.Version, len(j.Content))
			}
			html := string(exportBody(t, ts, u.ID, "html"))
			if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.HasSuffix(html, "</body>\n</html>\n") {
				t.Errorf("html export is not a whole document: %.80q…%.80q", html, html[max(0, len(html)-80):])
			}
			if hw := markdowntest.CountWords(htmlText(html)); hw < words {
				t.Errorf("html export shows %d words, the text has %d", hw, words)
			}
			pdf := exportBody(t, ts, u.ID, "pdf")
			if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[max(0, len(pdf)-64):], []byte("%%EOF")) {
				t.Errorf("pdf export is not a whole PDF: %.20q…%q", pdf, pdf[max(0, len(pdf)-20):])
			}
		})
	}
}

func versionOf(t *testing.T, ts *TestServer, id string, n int) model.VersionJSON {
	t.Helper()
	var page struct{ Data []model.VersionJSON }
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + id + "/versions"}).json(t, &page)
	if len(page.Data) < n {
		t.Fatalf("%s has %d versions, want %d", id, len(page.Data), n)
	}
	return page.Data[n-1]
}

func exportBody(t *testing.T, ts *TestServer, id, format string) []byte {
	t.Helper()
	r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + id + "/export?format=" + format})
	if r.Status != 200 {
		t.Fatalf("export %s: %d %.200s", format, r.Status, r.Body)
	}
	return r.Body
}

// htmlText is the text of an HTML export's body, with images' alt text:
// other tags become spaces.
func htmlText(html string) string {
	_, body, _ := strings.Cut(html, "<body>")
	var b strings.Builder
	for {
		text, rest, ok := strings.Cut(body, "<")
		b.WriteString(text)
		b.WriteByte(' ')
		if !ok {
			return b.String()
		}
		var tag string
		tag, body, _ = strings.Cut(rest, ">")
		if _, alt, ok := strings.Cut(tag, ` alt="`); ok {
			alt, _, _ = strings.Cut(alt, `"`)
			b.WriteString(alt)
		}
	}
}
