package export

import (
	"bytes"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/pdf"
)

// Format is one format of the export endpoint.
type Format struct {
	// Name is the canonical name, recorded in export.completed.
	Name string
	// Ext is the file name's extension.
	Ext string
	// ContentType is the answer's Content-Type.
	ContentType string
}

var formats = map[string]Format{
	"markdown": {"markdown", "md", "text/markdown; charset=utf-8"},
	"md":       {"markdown", "md", "text/markdown; charset=utf-8"},
	"html":     {"html", "html", "text/html; charset=utf-8"},
	"text":     {"text", "txt", "text/plain; charset=utf-8"},
	"txt":      {"text", "txt", "text/plain; charset=utf-8"},
	"json":     {"json", "json", "application/json"},
	"pdf":      {"pdf", "pdf", "application/pdf"},
}

// FormatsHelp lists the formats for the message that refuses another.
const FormatsHelp = "markdown (md), html, text (txt), json, pdf"

// Lookup returns the format of the format query parameter's value (a name
// or its short form), and whether there is one.
func Lookup(name string) (Format, bool) {
	f, ok := formats[name]
	return f, ok
}

// Doc is what an export renders: a context as of one version.
type Doc struct {
	Name, Content string
	// UpdatedAt is when the version was recorded: the PDF's dates.
	UpdatedAt time.Time
	// JSON is the context as of the version, the json format's answer.
	JSON []byte
}

// Render renders d in format f: markdown is the stored text as is, text
// the rendered plain text, html a whole document with raw HTML shown
// escaped, json the context, pdf a laid-out document (the pdf package).
func Render(f Format, d Doc) ([]byte, error) {
	switch f.Name {
	case "html":
		return renderHTML(d)
	case "text":
		return markdown.Text([]byte(d.Content)), nil
	case "json":
		return d.JSON, nil
	case "pdf":
		return pdf.Render(d.Name, d.Content, d.UpdatedAt)
	}
	return []byte(d.Content), nil
}

// renderHTML renders a whole HTML document. Raw HTML in the content is
// shown escaped (markdown.WriteHTML), goldmark drops dangerous link
// targets, and the title is escaped, so no <script> from the content passes
// through.
func renderHTML(d Doc) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(htmlReplacer.Replace(d.Name))
	b.WriteString("</title>\n</head>\n<body>\n")
	if err := markdown.WriteHTML(&b, []byte(d.Content)); err != nil {
		return nil, err
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes(), nil
}

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
