package mockserver

import (
	"io"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/export"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/linediff"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/pdf"
)

// Forwarders to the internal packages that code moved to, for the callers
// that follow them in the next step of the move.

type mdInfo = markdown.Info

func analyze(src []byte) mdInfo      { return markdown.Analyze(src) }
func compactInfo(info mdInfo) mdInfo { return info } // Analyze compacts

func diffInfo(old *mdInfo, cur mdInfo) contextsvc.Changes { return markdown.Diff(old, cur) }

func renderText(src []byte) []byte { return markdown.Text(src) }

type htmlConverter struct{}

func (htmlConverter) Convert(src []byte, w io.Writer) error { return markdown.WriteHTML(w, src) }

var htmlExportMarkdown htmlConverter

func renderPDF(d exportDoc) ([]byte, error) { return pdf.Render(d.name, d.content, d.updatedAt) }

type diffOp = linediff.Op

const (
	diffEqual    = linediff.Equal
	diffDelete   = linediff.Delete
	diffInsert   = linediff.Insert
	maxDiffEdits = linediff.MaxEdits
)

func diffTexts(from, to string) linediff.Diff { return linediff.Texts(from, to) }

func contentDisposition(name string, version int, ext string) string {
	return export.ContentDisposition(name, version, ext)
}
