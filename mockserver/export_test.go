package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown/markdowntest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

func TestExportFormats(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, mustJSON(map[string]any{"name": "Deploy Guide: Prod!", "content": markdowntest.Document}))
	for _, tc := range []struct {
		format, canonical, ctype, ext string
		check                         func(t *testing.T, body []byte)
	}{
		{"", "markdown", "text/markdown; charset=utf-8", "md", func(t *testing.T, b []byte) {
			if string(b) != markdowntest.Document {
				t.Errorf("markdown body differs: %q", b)
			}
		}},
		{"md", "markdown", "text/markdown; charset=utf-8", "md", nil},
		{"html", "html", "text/html; charset=utf-8", "html", func(t *testing.T, b []byte) {
			s := string(b)
			for _, want := range []string{"<h1>Install Guide</h1>", "<li>first bullet item</li>", "<em>emphasis</em>", "<title>Deploy Guide: Prod!</title>", "&lt;script&gt;",
				// Raw HTML is shown escaped, block and inline, not dropped.
				"<pre>&lt;script&gt;alert('x')&lt;/script&gt;\n</pre>", "Inline &lt;script&gt;bad()&lt;/script&gt; and"} {
				if !strings.Contains(s, want) {
					t.Errorf("html lacks %q:\n%s", want, s)
				}
			}
			if strings.Contains(strings.ToLower(s), "<script") || strings.Contains(s, "javascript:") {
				t.Errorf("html lets a script through:\n%s", s)
			}
		}},
		{"text", "text", "text/plain; charset=utf-8", "txt", func(t *testing.T, b []byte) {
			s := string(b)
			for _, want := range []string{"Install Guide\n", "- first bullet item\n", "2. ordered beta\n", "# not a heading\n", "Opening paragraph with emphasis."} {
				if !strings.Contains(s, want) {
					t.Errorf("text lacks %q:\n%s", want, s)
				}
			}
			// The code span's "<script>" is text; the raw HTML is not.
			if strings.Contains(s, "alert") || strings.Contains(s, "<script>bad") || strings.Contains(s, "*emphasis*") {
				t.Errorf("text keeps markup:\n%s", s)
			}
		}},
		{"txt", "text", "text/plain; charset=utf-8", "txt", nil},
		{"json", "json", "application/json", "json", func(t *testing.T, b []byte) {
			var got model.ContextJSON
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c, got); d != "" {
				t.Errorf("json export (-want +got):\n%s", d)
			}
		}},
		{"pdf", "pdf", "application/pdf", "pdf", func(t *testing.T, b []byte) {
			if !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Errorf("not a PDF: %.20q", b)
			}
		}},
	} {
		t.Run("format="+tc.format, func(t *testing.T) {
			path := "/v1/contexts/" + c.ID + "/export"
			if tc.format != "" {
				path += "?format=" + tc.format
			}
			before := len(ts.Events())
			r := do(t, ts, call{method: "GET", path: path})
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != tc.ctype {
				t.Errorf("Content-Type %q", ct)
			}
			if cd, want := r.Header.Get("Content-Disposition"), `attachment; filename="deploy-guide-prod-v1.`+tc.ext+`"; filename*=UTF-8''Deploy%20Guide-%20Prod!-v1.`+tc.ext; cd != want {
				t.Errorf("Content-Disposition %q, want %q", cd, want)
			}
			if tc.check != nil {
				tc.check(t, r.Body)
			}
			evs := ts.Events()[before:]
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			var d contextsvc.ExportCompletedData
			if err := json.Unmarshal(evs[0].Data, &d); err != nil {
				t.Fatal(err)
			}
			want := contextsvc.ExportCompletedData{ExportID: d.ExportID, ContextID: c.ID, Version: 1, Format: tc.canonical, SizeBytes: int64(len(r.Body))}
			if diff := cmp.Diff(want, d); diff != "" || !strings.HasPrefix(d.ExportID, "exp_") {
				t.Errorf("export.completed (-want +got):\n%s", diff)
			}
		})
	}
	checkEvents(t, ts.Server)
}

func TestExportVersion(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc","content":"first text"}`)
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"Doc Two","content":"second text"}`})
	r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=1"})
	if r.Status != 200 || string(r.Body) != "first text" || r.Header.Get("Content-Disposition") != `attachment; filename="doc-v1.md"; filename*=UTF-8''Doc-v1.md` {
		t.Fatalf("version 1: %d %q %q", r.Status, r.Body, r.Header.Get("Content-Disposition"))
	}
	var got model.ContextJSON
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=1&format=json"}).json(t, &got)
	if got.Version != 1 || got.Name != "Doc" || got.Content != "first text" || got.CreatedAt != c.CreatedAt {
		t.Fatalf("json of version 1: %+v", got)
	}
	r = do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=2"})
	if string(r.Body) != "second text" || r.Header.Get("Content-Disposition") != `attachment; filename="doc-two-v2.md"; filename*=UTF-8''Doc%20Two-v2.md` {
		t.Fatalf("version 2: %q", r.Body)
	}
	r = do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/export?version=3"})
	if typ, _ := r.errorOf(t); r.Status != 404 || typ != "not_found" {
		t.Fatalf("version 3: %d", r.Status)
	}
}

func ExampleServer_Publish() {
	s := New(WithClock(NewFakeClock(t0)))
	c := createDirect(s, `{"name":"Launch plan"}`)
	ev, _ := s.Publish(context.Background(), c)
	fmt.Println(ev.Type, ev.Timestamp.Format(jsonwire.TimeFormat))
	// Output: context.published 2026-11-21T20:51:00.123Z
}
