package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// BenchmarkHostileMarkdown runs each hostile body (markdowntest.Hostile) at
// 10 kB, 100 kB and 1 MB through a server's ServeHTTP: create, update (to
// the body, from a one-byte variant of it) and export in every format.
// Time must grow about 10x per 10x of size; "prose" is the baseline of
// ordinary Markdown. Select with -bench, e.g.
//
//	go test ./mockserver -run '^$' -bench 'HostileMarkdown/list-ladder/1M' -benchtime 1x
func BenchmarkHostileMarkdown(b *testing.B) {
	ops := []string{"create", "update", "markdown", "html", "text", "json", "pdf"}
	for _, h := range markdowntest.Hostile() {
		for _, size := range []struct {
			name string
			n    int
		}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}} {
			var fix *hostileFixture // made by the first sub-benchmark that runs
			for _, op := range ops {
				b.Run(h.Name+"/"+size.name+"/"+op, func(b *testing.B) {
					if fix == nil {
						fix = newHostileFixture(b, h.Gen(size.n))
					}
					fix.run(b, op)
				})
			}
			if fix != nil {
				_ = fix.s.Close(context.Background())
				fix = nil // its megabytes would slow the later benchmarks' GC
			}
		}
	}
}

// hostileFixture is a server holding one context whose content is body.
type hostileFixture struct {
	s          *Server
	id         string
	body       string
	createJSON string
	updateJSON [2]string
	updates    int
}

func newHostileFixture(b *testing.B, body string) *hostileFixture {
	// Not validated against openapi.yaml: the figures are the server's alone
	// (kin-openapi decodes and checks each 1 MB body again).
	f := &hostileFixture{s: unvalidated(New(WithKey(Key{Token: "bench", Plan: PlanUnlimited}))), body: body}
	f.createJSON = bodyJSON(map[string]any{"name": "bench", "content": body})
	// An update changes the content, so it is parsed and versioned.
	variant := "x" + body
	if len(variant) > 1_000_000 {
		// In place of the first character, whole: cutting a multi-byte
		// one ("uncovered" is all emoji) would leave invalid UTF-8.
		_, n := utf8.DecodeRuneInString(body)
		variant = "x" + body[n:]
	}
	f.updateJSON = [2]string{bodyJSON(map[string]any{"content": variant}), bodyJSON(map[string]any{"content": body})}
	rec := f.serve("POST", "/v1/contexts", f.createJSON)
	if rec.Code != 201 {
		b.Fatalf("create: %d %.200s", rec.Code, rec.Body)
	}
	var c model.ContextJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
		b.Fatal(err)
	}
	f.id = c.ID
	return f
}

func (f *hostileFixture) serve(method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer bench")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.s.ServeHTTP(rec, req)
	return rec
}

func (f *hostileFixture) run(b *testing.B, op string) {
	b.SetBytes(int64(len(f.body)))
	runtime.GC() // the set-up's garbage is not this benchmark's
	for b.Loop() {
		var rec *httptest.ResponseRecorder
		switch op {
		case "create":
			rec = f.serve("POST", "/v1/contexts", f.createJSON)
			if rec.Code != 201 {
				b.Fatalf("create: %d %.200s", rec.Code, rec.Body)
			}
		case "update":
			rec = f.serve("PUT", "/v1/contexts/"+f.id, f.updateJSON[f.updates%2])
			f.updates++
		default:
			rec = f.serve("GET", fmt.Sprintf("/v1/contexts/%s/export?format=%s&version=1", f.id, op), "")
		}
		if rec.Code/100 != 2 {
			b.Fatalf("%s: %d %.200s", op, rec.Code, rec.Body)
		}
	}
}
