package mockserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// exportFormat is one format of exportContext.
type exportFormat struct {
	name        string // canonical name, recorded in export.completed
	ext         string
	contentType string
}

var exportFormats = map[string]exportFormat{
	"markdown": {"markdown", "md", "text/markdown; charset=utf-8"},
	"md":       {"markdown", "md", "text/markdown; charset=utf-8"},
	"html":     {"html", "html", "text/html; charset=utf-8"},
	"text":     {"text", "txt", "text/plain; charset=utf-8"},
	"txt":      {"text", "txt", "text/plain; charset=utf-8"},
	"json":     {"json", "json", "application/json"},
	"pdf":      {"pdf", "pdf", "application/pdf"},
}

// exportDoc is what an export renders: a context as of one version.
type exportDoc struct {
	id, name, content string
	version           int
	updatedAt         time.Time
	json              []byte
}

func (s *Server) exportContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	q := r.URL.Query()
	fname := "markdown"
	if vs, ok := q["format"]; ok {
		fname = vs[0]
	}
	f, ok := exportFormats[fname]
	if !ok {
		writeError(w, badRequest("format", "format must be one of markdown (md), html, text (txt), json, pdf"))
		return
	}
	want, given := 0, ""
	if vs, ok := q["version"]; ok {
		n, ok := parseVersion(vs[0])
		if !ok {
			writeError(w, badRequest("version", "version must be a positive integer"))
			return
		}
		// The number as given: one past an int is read as the largest.
		want, given = n, vs[0]
	}
	a := k.acct
	a.mu.RLock()
	c, e := found(a, r)
	var d exportDoc
	if c != nil {
		if want == 0 || want == c.version {
			d = exportDoc{c.id, c.name, c.content, c.version, c.updatedAt, c.encode()}
		} else if want <= len(c.versions) {
			v := c.versions[want-1]
			d = exportDoc{c.id, v.v.Name, v.v.Content, v.v.Version, v.v.CreatedAt, c.asOfVersion(v)}
		} else {
			e = notFound(fmt.Sprintf("context %s has no version %s: its versions are 1 to %d", c.id, given, c.version))
		}
	}
	a.mu.RUnlock()
	if e != nil {
		writeError(w, e)
		return
	}
	body, err := render(f.name, d)
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, typ: errInternal, message: "export failed"})
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{f.contentType}
	h["Content-Disposition"] = []string{contentDisposition(d.name, d.version, f.ext)}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	s.emit(r.Context(), a.id, contextsvc.EventExportCompleted, exportCompletedData{
		ExportID: newID("exp_"), ContextID: d.id, Version: d.version, Format: f.name, SizeBytes: len(body),
	})
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func render(format string, d exportDoc) ([]byte, error) {
	switch format {
	case "html":
		return renderHTML(d)
	case "text":
		return renderText([]byte(d.content)), nil
	case "json":
		return d.json, nil
	case "pdf":
		return renderPDF(d)
	}
	return []byte(d.content), nil
}

// renderHTML renders a whole HTML document. Raw HTML in the content is
// shown escaped (see htmlExportMarkdown), goldmark drops dangerous link
// targets, and the title is escaped, so no <script> from the content passes
// through.
func renderHTML(d exportDoc) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(htmlEscape(d.name))
	b.WriteString("</title>\n</head>\n<body>\n")
	if err := htmlExportMarkdown.Convert([]byte(d.content), &b); err != nil {
		return nil, err
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes(), nil
}

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func htmlEscape(s string) string { return htmlReplacer.Replace(s) }
