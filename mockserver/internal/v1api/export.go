package v1api

import (
	"fmt"
	"net/http"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/export"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
)

// exportContext answers GET /v1/contexts/{id}/export: the context (or one
// of its versions) in a format, and export.completed fired.
func (h *Handler) exportContext(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
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
	a := k.Data
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
	hdr := w.Header()
	hdr["Content-Type"] = []string{f.ContentType}
	hdr["Content-Disposition"] = []string{export.ContentDisposition(d.Name, version, f.Ext)}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	h.svc.Emit(r.Context(), a.ID(), contextsvc.EventExportCompleted, id, contextsvc.ExportCompletedData{
		ExportID: ids.New("exp_"), ContextID: id, Version: version, Format: f.Name, SizeBytes: int64(len(body)),
	})
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
