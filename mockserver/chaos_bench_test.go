package mockserver

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkServeGETChaos is BenchmarkServeGET with the chaos mode off and
// on, in one run: on, every request is counted and drawn (a SHA-256 of
// the seed and its ordinal), and fails once in a billion, so that what is
// measured is the decision's cost on a request that runs.
func BenchmarkServeGETChaos(b *testing.B) {
	for _, bc := range []struct {
		name  string
		chaos *Chaos
	}{{"off", nil}, {"on", &Chaos{Seed: 1, APIError: 1e-9}}} {
		b.Run(bc.name, func(b *testing.B) {
			s := benchServer(b, 1)
			if bc.chaos != nil {
				if _, err := s.SetChaos(*bc.chaos); err != nil {
					b.Fatal(err)
				}
			}
			id := s.Snapshot().Contexts[0].ID
			req := httptest.NewRequest("GET", "/v1/contexts/"+id, nil)
			req.Header.Set("Authorization", "Bearer bench")
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
			}
		})
	}
}
