package httpapi

import (
	"fmt"
	"net/http"
	"strings"
)

// Route is one path with its handlers by method; a method not in it is a
// 405 with Allow.
type Route map[string]http.HandlerFunc

// ServeHTTP runs the handler of r's method, or answers the 405.
func (rt Route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := rt[r.Method]; ok {
		h(w, r)
		return
	}
	allow := make([]string, 0, len(rt))
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, ok := rt[m]; ok {
			allow = append(allow, m)
		}
	}
	MethodNotAllowed(w, r, strings.Join(allow, ", "))
}

// MethodNotAllowed answers the 405 of a path that takes the methods in
// allow ("GET, POST"), with the Allow header.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	WriteError(w, &Error{Status: http.StatusMethodNotAllowed, Type: TypeMethodNotAllowed,
		Message: fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, allow)})
}

// UncleanPath reports whether p has empty, "." or ".." segments: the APIs
// have no such paths, and http.ServeMux would answer them with a
// redirect and a text body, so they are a plain 404.
func UncleanPath(p string) bool {
	return strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") || !strings.HasPrefix(p, "/")
}

// NoSuchPath is the 404 of a path no route has.
func NoSuchPath(w http.ResponseWriter, r *http.Request) {
	WriteError(w, NotFound("no such path: "+r.URL.Path))
}
