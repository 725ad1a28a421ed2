// Package dashboard is the mock server's web page, served at
// /_mock/ui/: it shows what the mock holds (accounts, contexts and their
// versions, webhooks, events, deliveries with every attempt, the clock,
// faults), acts on it through the admin API, and follows its changes
// live (GET /_mock/stream). It is plain HTML, CSS and JavaScript modules,
// embedded here: no build step, no request leaves the mock.
//
// It owns the page's files and the security headers of every answer
// under its path ([SetHeaders]); it reads nothing of the server's state
// (the page asks the admin API from the browser) and decides nothing of
// who may load it (the access package does). It imports httpapi, nothing
// else of the mock server.
package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

//go:embed ui
var files embed.FS

// asset is an embedded file of the dashboard, with what its response
// needs.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// assets are the dashboard's files by name (index.html is the page).
var assets = func() map[string]asset {
	types := map[string]string{
		".html": "text/html; charset=utf-8",
		".js":   "text/javascript; charset=utf-8",
		".css":  "text/css; charset=utf-8",
		".svg":  "image/svg+xml",
	}
	out := make(map[string]asset)
	entries, err := fs.ReadDir(files, "ui")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := files.ReadFile("ui/" + e.Name())
		if err != nil {
			panic(err)
		}
		ct, ok := types[path.Ext(e.Name())]
		if !ok {
			panic("mockserver: the dashboard has a file of no known type: " + e.Name())
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = asset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out
}()

// ContentSecurityPolicy lets the dashboard load its own files and talk
// to its own origin, and nothing else: no inline script or style (every
// user string is written as text anyway; this is the second wall), no
// plugin, no other site, and no page may frame it. Trusted Types without
// a policy make the browsers that have them (Chromium) refuse every
// assignment of a string as HTML or script (innerHTML,
// insertAdjacentHTML, document.write…), so even a future slip would
// throw instead of parsing a user's string.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// IsPath reports whether p is the dashboard's or under it.
func IsPath(p string) bool { return p == "/_mock/ui" || strings.HasPrefix(p, "/_mock/ui/") }

// SetHeaders sets the dashboard's security headers: its
// Content-Security-Policy, no sniffing, no framing, no referrer, and an
// origin of its own. The server sets them on every answer under
// /_mock/ui/, its errors included, before it routes.
func SetHeaders(h http.Header) {
	h["Content-Security-Policy"] = []string{ContentSecurityPolicy}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	h["X-Frame-Options"] = []string{"DENY"}
	h["Referrer-Policy"] = []string{"no-referrer"}
	h["Cross-Origin-Opener-Policy"] = []string{"same-origin"}
	h["Cross-Origin-Resource-Policy"] = []string{"same-origin"}
}

// Serve answers with the embedded file of the dashboard named name
// (index.html is the page), or a 304 when the browser has it already, or
// the contract's 404.
func Serve(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := assets[name]
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("the dashboard has no file "+name))
		return
	}
	h := w.Header()
	SetHeaders(h)
	// Revalidated on every load: a 304 costs a round trip on loopback,
	// and a new build of the mock is never shown stale.
	h["Cache-Control"] = []string{"no-cache"}
	h["Etag"] = []string{a.etag}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = []string{a.contentType}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body)
}
