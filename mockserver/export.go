package mockserver

import (
	"fmt"
	"net/http"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/export"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
)

func (s *Server) exportContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	q := r.URL.Query()
	fname := "markdown"
	if vs, ok := q["format"]; ok {
		fname = vs[0]
	}
	f, ok := export.Lookup(fname)
	if !ok {
		httpapi.WriteError(w, httpapi.BadRequest("format", "format must be one of "+export.FormatsHelp))
		return
	}
	want, given := 0, ""
	if vs, ok := q["version"]; ok {
		n, ok := httpapi.ParseVersion(vs[0])
		if !ok {
			httpapi.WriteError(w, httpapi.BadRequest("version", "version must be a positive integer"))
			return
		}
		// The number as given: one past an int is read as the largest.
		want, given = n, vs[0]
	}
	a := k.acct
	id := r.PathValue("id")
	doc, has, current, found := a.AsOf(id, want)
	switch {
	case !found:
		httpapi.WriteError(w, notFound(id))
		return
	case !has:
		httpapi.WriteError(w, httpapi.NotFound(fmt.Sprintf("context %s has no version %s: its versions are 1 to %d", id, given, current)))
		return
	}
	d, version := export.Doc{Name: doc.Name, Content: doc.Content, UpdatedAt: doc.UpdatedAt, JSON: doc.JSON}, doc.Version
	body, err := export.Render(f, d)
	if err != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "export failed"})
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{f.ContentType}
	h["Content-Disposition"] = []string{export.ContentDisposition(d.Name, version, f.Ext)}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	s.emit(r.Context(), a.ID(), contextsvc.EventExportCompleted, exportCompletedData{
		ExportID: ids.New("exp_"), ContextID: id, Version: version, Format: f.Name, SizeBytes: len(body),
	})
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
