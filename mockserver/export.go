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
	a.mu.RLock()
	c, e := found(a, r)
	var d export.Doc
	var version int
	if c != nil {
		if want == 0 || want == c.version {
			d, version = export.Doc{Name: c.name, Content: c.content, UpdatedAt: c.updatedAt, JSON: c.encode()}, c.version
		} else if want <= len(c.versions) {
			v := c.versions[want-1]
			d, version = export.Doc{Name: v.v.Name, Content: v.v.Content, UpdatedAt: v.v.CreatedAt, JSON: c.asOfVersion(v)}, v.v.Version
		} else {
			e = httpapi.NotFound(fmt.Sprintf("context %s has no version %s: its versions are 1 to %d", c.id, given, c.version))
		}
	}
	a.mu.RUnlock()
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	body, err := export.Render(f, d)
	if err != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "export failed"})
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{f.ContentType}
	h["Content-Disposition"] = []string{export.ContentDisposition(d.Name, version, f.Ext)}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	s.emit(r.Context(), a.id, contextsvc.EventExportCompleted, exportCompletedData{
		ExportID: ids.New("exp_"), ContextID: c.id, Version: version, Format: f.Name, SizeBytes: len(body),
	})
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
