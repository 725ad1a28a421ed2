package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// The Markdown the export check renders: a heading, emphasis, a list, raw
// HTML (which must not pass through) and a code block; version 1 is a
// draft.
const (
	exportDraft   = "# Release Plan\n\nFirst draft.\n"
	exportContent = "# Release Plan\n\nShip the **conformance** runner to staging.\n\n- first item\n- second item\n\n" +
		"<script>alert(\"conformance\")</script>\n\n    code block line\n"
)

// exportWords are the words every rendering of exportContent shows.
var exportWords = []string{"Release Plan", "conformance", "first item", "second item", "code block line"}

// exportDone is one export the check made, for the export.completed
// events it fires.
type exportDone struct {
	format  string // canonical
	version int
	size    int
}

func (e exportDone) String() string {
	return fmt.Sprintf("%s v%d %d bytes", e.format, e.version, e.size)
}

// checkExport exports a context of two versions in every format and alias
// of the contract, without a format, and at its first version.
func (r *runner) checkExport(c *checker) {
	ctx, ok := c.create(r.name("export"), exportDraft, nil)
	if !ok {
		return
	}
	if _, ok := c.update(ctx.ID, map[string]any{"content": exportContent}, contextsvc.Context{Name: ctx.Name, Content: exportContent, Version: 2}); !ok {
		return
	}
	var done []exportDone
	notes := []string{}
	export := func(format string, version int) (*contract.Exchange, contract.ExportFormat, bool) {
		q := url.Values{}
		if format != "" {
			q.Set("format", format)
		}
		if version != 0 {
			q.Set("version", itoa(version))
		}
		p := "/contexts/" + url.PathEscape(ctx.ID) + "/export"
		if len(q) > 0 {
			p += "?" + q.Encode()
		}
		f := formatOf(format)
		ex := c.send(request{method: http.MethodGet, path: p})
		if !c.answer(ex, http.StatusOK, "with the document as "+f.ContentType, contract.Expect{}) {
			return nil, f, false
		}
		v := version
		if v == 0 {
			v = 2
		}
		done = append(done, exportDone{format: f.Name, version: v, size: len(ex.Body)})
		c.exportHeaders(ex, f, v)
		return ex, f, true
	}
	for _, f := range contract.ExportFormats() {
		for _, name := range append([]string{f.Name}, f.Aliases...) {
			ex, f, ok := export(name, 0)
			if !ok {
				continue
			}
			if note := c.exportBody(ex, f, ctx.ID); note != "" && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
		}
	}
	if ex, f, ok := export("", 0); ok {
		c.exportBody(ex, f, ctx.ID)
	}
	if ex, _, ok := export("markdown", 1); ok && string(ex.Body) != exportDraft {
		c.value(ex, "exportContext: version=1 does not export the first version", excerpt([]byte(exportDraft), 200), shownAnswer(ex))
	}
	r.exports = append(r.exports, exportsOf{contextID: ctx.ID, done: done})
	r.eventsDue = append(r.eventsDue, eventDue{what: "exports", typ: "export.completed", contextID: ctx.ID, want: len(done)})
	c.res.Note = strings.Join(notes, "; ")
}

// formatOf returns the contract's format a format parameter selects ("" is
// the default).
func formatOf(param string) contract.ExportFormat {
	if param == "" {
		param = contract.DefaultExportFormat
	}
	for _, f := range contract.ExportFormats() {
		if f.Name == param || slices.Contains(f.Aliases, param) {
			return f
		}
	}
	return contract.ExportFormat{Name: param}
}

// exportHeaders holds an export's Content-Type and Content-Disposition to
// the format and version (the document holds the disposition's form).
func (c *checker) exportHeaders(ex *contract.Exchange, f contract.ExportFormat, version int) {
	ct := ex.Header.Get("Content-Type")
	if !sameMediaType(ct, f.ContentType) {
		c.value(ex, "exportContext: format "+f.Name+" has another Content-Type", "Content-Type: "+f.ContentType, "Content-Type: "+ct)
	}
	cd := ex.Header.Get(contract.HeaderContentDisposition)
	disp, params, err := mime.ParseMediaType(cd)
	suffix := fmt.Sprintf("-v%d.%s", version, f.Ext)
	if err != nil || disp != "attachment" || !strings.HasSuffix(params["filename"], suffix) {
		c.value(ex, "exportContext: format "+f.Name+": the file name does not end in -v<version>.<ext>",
			`Content-Disposition: attachment; filename="<slug>`+suffix+`"`, "Content-Disposition: "+cd)
	}
}

// sameMediaType compares two media types with their parameters, as HTTP
// does (case-insensitively).
func sameMediaType(a, b string) bool {
	ta, pa, err1 := mime.ParseMediaType(a)
	tb, pb, err2 := mime.ParseMediaType(b)
	if err1 != nil || err2 != nil || ta != tb || len(pa) != len(pb) {
		return false
	}
	for k, v := range pa {
		if !strings.EqualFold(pb[k], v) {
			return false
		}
	}
	return true
}

// exportBody holds an export's document to its format: the Markdown as
// stored, the rendered words without Markdown markers or raw HTML, the
// Context as JSON, a PDF whose text holds the words. It returns a note for
// the report when part of it could not be checked.
func (c *checker) exportBody(ex *contract.Exchange, f contract.ExportFormat, id string) string {
	body := string(ex.Body)
	lacks := func(kind string) {
		c.value(ex, "exportContext: the "+f.Name+" document "+kind, "a document with "+strings.Join(exportWords, ", ")+"; no raw <script>", shownAnswer(ex))
	}
	switch f.Name {
	case "markdown":
		if body != exportContent {
			c.value(ex, "exportContext: the markdown document is not the stored text", excerpt([]byte(exportContent), 300), shownAnswer(ex))
		}
	case "text", "html":
		for _, w := range exportWords {
			if !strings.Contains(body, w) {
				lacks("lacks a word of the text")
				return ""
			}
		}
		switch {
		case strings.Contains(strings.ToLower(body), "<script"):
			lacks("lets raw HTML through")
		case f.Name == "text" && strings.Contains(body, "**"):
			lacks("keeps Markdown markers")
		}
	case "json":
		got, ok := decode[contextsvc.Context](ex)
		if !ok || got.ID != id || got.Content != exportContent || got.Version != 2 {
			c.value(ex, "exportContext: the json document is not the context", "the Context "+id+" at version 2", shownAnswer(ex))
		}
	case "pdf":
		if !bytes.HasPrefix(ex.Body, []byte("%PDF-")) || !bytes.Contains(ex.Body[max(0, len(ex.Body)-1024):], []byte("%%EOF")) {
			lacks("is not a PDF file")
			return ""
		}
		text, err := PDFText(c.ctx, ex.Body)
		if errors.Is(err, ErrNoPDFToText) {
			return "the PDF's text was not read back: " + err.Error()
		}
		if err != nil {
			c.value(ex, "exportContext: the PDF cannot be read", "a PDF a reader opens", err.Error())
			return ""
		}
		for _, w := range exportWords {
			if !strings.Contains(text, w) {
				c.value(ex, "exportContext: the PDF's text lacks a word of the context", show(exportWords), excerpt([]byte(text), 300))
				return ""
			}
		}
		if strings.Contains(text, "alert(") {
			lacks("lets raw HTML through")
		}
	}
	return ""
}
