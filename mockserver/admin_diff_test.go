package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// TestAdminDiffBounded: the diff of two versions of the largest content
// the API takes answers a bounded body, whatever the texts: long lines
// cut, hunks past the text bound left out (and counted), the texts of
// versions too different cut. Every cut says how much it left out.
func TestAdminDiffBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Under the race detector the diffs of megabytes take minutes of
		// its checks, and their work is one goroutine's: nothing for it
		// to see that the other tests do not show.
		t.Skip("diffs versions of 1,000,000 bytes")
	}
	t.Parallel()
	ts := NewTestServer(t)
	const size = 999_000
	// Lines of 999 bytes, every 20th changed: some 50 hunks of 7 lines,
	// 350 KB of text in all.
	var longLines, changed strings.Builder
	for i := 0; longLines.Len() < size-1000; i++ {
		line := fmt.Sprintf("%04d %s\n", i, strings.Repeat("<", 994))
		longLines.WriteString(line)
		if i%20 == 10 {
			line = fmt.Sprintf("%04d %s\n", i, strings.Repeat(">", 994))
		}
		changed.WriteString(line)
	}
	// 500 lines of 999 bytes, all changed: one hunk of 1,000 lines.
	var block, blockChanged strings.Builder
	for i := range 500 {
		fmt.Fprintf(&block, "%04d %s\n", i, strings.Repeat("<", 994))
		fmt.Fprintf(&blockChanged, "%04d %s\n", i, strings.Repeat(">", 994))
	}
	for _, tc := range []struct {
		name, from, to string
		check          func(t *testing.T, d adminapi.DiffJSON)
	}{
		{"too different", strings.Repeat("<\n", size/2), strings.Repeat(">\n", size/2), func(t *testing.T, d adminapi.DiffJSON) {
			if !d.TooDifferent || d.FromContent == nil || d.ToContent == nil || len(*d.FromContent) != adminapi.MaxDiffContentBytes ||
				*d.FromContent != strings.Repeat("<\n", size/2)[:adminapi.MaxDiffContentBytes] || d.FromContentCut != size-adminapi.MaxDiffContentBytes ||
				d.ToContentCut != size-adminapi.MaxDiffContentBytes {
				t.Errorf("too different: %d and %d bytes sent, %d and %d cut", len(*d.FromContent), len(*d.ToContent), d.FromContentCut, d.ToContentCut)
			}
		}},
		{"one long line each", strings.Repeat("é", size/2), strings.Repeat("<", size), func(t *testing.T, d adminapi.DiffJSON) {
			if len(d.Hunks) != 1 || len(d.Hunks[0].Lines) != 2 {
				t.Fatalf("hunks %+v", d.Hunks)
			}
			del, ins := d.Hunks[0].Lines[0], d.Hunks[0].Lines[1]
			if del.Text != strings.Repeat("é", adminapi.MaxDiffLineBytes/2) || del.Cut != size-adminapi.MaxDiffLineBytes ||
				ins.Text != strings.Repeat("<", adminapi.MaxDiffLineBytes) || ins.Cut != size-adminapi.MaxDiffLineBytes || !ins.NoNewline {
				t.Errorf("cut lines: %d bytes, %d cut; %d bytes, %d cut", len(del.Text), del.Cut, len(ins.Text), ins.Cut)
			}
		}},
		{"many hunks", longLines.String(), changed.String(), func(t *testing.T, d adminapi.DiffJSON) {
			text := 0
			for _, h := range d.Hunks {
				for _, l := range h.Lines {
					text += len(l.Text)
				}
			}
			if d.TooDifferent || d.HunksLeftOut == 0 || text > adminapi.MaxDiffTextBytes+7*adminapi.MaxDiffLineBytes || d.Added != d.Removed || d.Added < 40 ||
				len(d.Hunks)+d.HunksLeftOut != d.Added {
				t.Errorf("%d hunks sent (%d bytes of text), %d left out, +%d −%d", len(d.Hunks), text, d.HunksLeftOut, d.Added, d.Removed)
			}
		}},
		{"one big hunk", block.String(), blockChanged.String(), func(t *testing.T, d adminapi.DiffJSON) {
			if len(d.Hunks) != 1 || d.HunksLeftOut != 0 {
				t.Fatalf("%d hunks, %d left out", len(d.Hunks), d.HunksLeftOut)
			}
			h := d.Hunks[0]
			if h.FromLines != 500 || h.ToLines != 500 || h.LinesLeftOut == 0 || len(h.Lines)+h.LinesLeftOut != 1000 ||
				len(h.Lines)*999 > adminapi.MaxDiffTextBytes+999 {
				t.Errorf("%d lines sent, %d left out", len(h.Lines), h.LinesLeftOut)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := create(t, ts, bodyJSON(map[string]string{"name": "Big", "content": tc.from}))
			if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: bodyJSON(map[string]string{"content": tc.to})}); r.Status != 200 {
				t.Fatalf("update: %d %s", r.Status, r.Body)
			}
			r := admin(t, ts, "GET", "/_mock/contexts/"+c.ID+"/diff", "")
			if r.Status != 200 || len(r.Body) > 1<<20 {
				t.Errorf("%d, %d bytes", r.Status, len(r.Body))
			}
			t.Logf("%d bytes", len(r.Body))
			var d adminapi.DiffJSON
			r.json(t, &d)
			tc.check(t, d)
		})
	}
}

// TestDashboardDiffCut: the page says where the server cut a diff: each
// long line with how much it left out, and the lines left out of the
// last hunk.
func TestDashboardDiffCut(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts := NewTestServer(t)
	var from, to strings.Builder
	for i := range 200 {
		fmt.Fprintf(&from, "%03d %s\n", i, strings.Repeat("<", 2996))
		fmt.Fprintf(&to, "%03d %s\n", i, strings.Repeat(">", 2996))
	}
	c := create(t, ts, bodyJSON(map[string]string{"name": "Wide", "content": from.String()}))
	if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: bodyJSON(map[string]string{"content": to.String()})}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	d := openDashboard(t, ts, "#/contexts?id="+c.ID)
	got := d.wait(`document.querySelector('.diff-left-out') && [document.querySelectorAll('.diff .line').length,
		document.querySelector('.diff .line-delete .cut').textContent, document.querySelector('.diff-left-out').textContent]`)
	// 2,048 of the 3,000 bytes of a line are sent: 952 B more.
	if !strings.Contains(got, "952 B more") || !strings.Contains(got, "more lines of this hunk") {
		t.Errorf("the page shows %s", got)
	}
	browsertest.NoErrors(t, d.tab)
}

// TestAdminContextTextSize: a context's content, read by the page through
// GET /_mock/contexts/{id}, answers about its own size, whatever its
// characters (HTML's escapes would make each '<' six bytes).
func TestAdminContextTextSize(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	content := strings.Repeat("<a href='x'>&</a>\n", 10_000)
	c := create(t, ts, bodyJSON(map[string]string{"name": "<b>Markup</b>", "content": content}))
	r := admin(t, ts, "GET", "/_mock/contexts/"+c.ID, "")
	var got adminapi.ContextJSON
	r.json(t, &got)
	if got.Content == nil || *got.Content != content || got.Name != "<b>Markup</b>" || len(r.Body) > len(content)*5/4 {
		t.Errorf("%d bytes for %d of content: %.300s", len(r.Body), len(content), r.Body)
	}
}

// BenchmarkAdminDiff: GET /_mock/contexts/{id}/diff of two versions of
// 999,000 bytes each, of the kinds that cost most (every line different,
// so too different; long lines, one big hunk; many hunks), through the
// handler, beside its baseline in the same run: GET /_mock/contexts/{id},
// the newer version's content alone. resp-bytes is the answer's size.
//
//	go test ./mockserver -run '^$' -bench BenchmarkAdminDiff -benchtime 20x
func BenchmarkAdminDiff(b *testing.B) {
	s := unvalidated(New(WithKey(Key{Token: "sk_bench", Plan: PlanUnlimited})))
	serve := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "127.0.0.1"
		req.Header.Set("Authorization", "Bearer sk_bench")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code/100 != 2 {
			b.Fatalf("%s %s: %d %.200s", method, path, rec.Code, rec.Body)
		}
		return rec
	}
	const size = 999_000
	lines := func(n int, line func(i int) string) string {
		var sb strings.Builder
		for i := 0; sb.Len() < size-n; i++ {
			sb.WriteString(line(i))
		}
		return sb.String()
	}
	for _, bc := range []struct{ name, from, to string }{
		{"every-line-different", lines(20, func(i int) string { return fmt.Sprintf("a%d\n", i) }), lines(20, func(i int) string { return fmt.Sprintf("b%d\n", i) })},
		{"one-big-hunk", lines(1000, func(i int) string { return fmt.Sprintf("%04d %s\n", i, strings.Repeat("<", 994)) }),
			lines(1000, func(i int) string { return fmt.Sprintf("%04d %s\n", i, strings.Repeat(">", 994)) })},
		{"many-hunks", lines(1000, func(i int) string { return fmt.Sprintf("%04d %s\n", i, strings.Repeat("<", 994)) }),
			lines(1000, func(i int) string {
				if i%20 == 10 {
					return fmt.Sprintf("%04d %s\n", i, strings.Repeat(">", 994))
				}
				return fmt.Sprintf("%04d %s\n", i, strings.Repeat("<", 994))
			})},
	} {
		var c model.ContextJSON
		if err := json.Unmarshal(serve("POST", "/v1/contexts", bodyJSON(map[string]string{"name": bc.name, "content": bc.from})).Body.Bytes(), &c); err != nil {
			b.Fatal(err)
		}
		serve("PUT", "/v1/contexts/"+c.ID, bodyJSON(map[string]string{"content": bc.to}))
		for _, sub := range []struct{ name, path string }{{"diff", "/diff"}, {"baseline-read", ""}} {
			b.Run(bc.name+"/"+sub.name, func(b *testing.B) {
				var n int
				for b.Loop() {
					n = serve("GET", "/_mock/contexts/"+c.ID+sub.path, "").Body.Len()
				}
				b.ReportMetric(float64(n), "resp-bytes")
			})
		}
	}
}
