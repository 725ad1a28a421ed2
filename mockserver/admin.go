package mockserver

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.0.3 description of every endpoint of
// the mock server, the contract in machine-readable form.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns the embedded OpenAPI document (a copy).
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

// adminRoutes registers the /_mock/ endpoints (no bearer key). The
// delivery engine adds its own here.
func (s *Server) adminRoutes() {
	s.mux.Handle("/_mock/openapi.yaml", route{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/yaml"}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(openAPIDocument)
	}})
}
