package e2e_test

import (
	"bytes"
	stdcmp "cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

const runbook = `Intro text before any heading.

# Setup

Install the tool and run it.

# Usage

Call it twice a day.
`

// TestCreateGetUpdate follows one context through create, get and every kind
// of update, and after each step compares what the client returned with what
// the mock server says it stores.
func TestCreateGetUpdate(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client := newClient(t, ts, "")
	ctx := context.Background()

	created, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
		Name: "Runbook", Content: runbook, Tags: []string{"ops", "docs", "ops"},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if diff := cmp.Diff(asContext(stored(t, ts, created.ID)), created); diff != "" {
		t.Errorf("Create returned something else than the server stores (-stored +returned):\n%s", diff)
	}
	if created.Version != 1 || !cmp.Equal(created.Tags, []string{"ops", "docs"}) {
		t.Errorf("created version %d tags %q, want version 1 and the duplicate tag dropped", created.Version, created.Tags)
	}

	got, err := client.Contexts.Get(ctx, created.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("Get differs from Create (-create +get):\n%s", diff)
	}

	steps := []struct {
		name        string
		req         *contextsvc.UpdateContextRequest
		wantVersion int
		wantTags    []string
	}{
		{"content", &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr(runbook + "\n# Limits\n\nSixty a minute.\n")}, 2, []string{"ops", "docs"}},
		{"name only", &contextsvc.UpdateContextRequest{Name: contextsvc.Ptr("Runbook v2")}, 3, []string{"ops", "docs"}},
		{"replace tags", &contextsvc.UpdateContextRequest{Tags: []string{"archive"}}, 4, []string{"archive"}},
		{"clear tags", &contextsvc.UpdateContextRequest{Tags: []string{}}, 5, []string{}},
		// Nothing differs: same context, no new version, no event.
		{"no-op", &contextsvc.UpdateContextRequest{Name: contextsvc.Ptr("Runbook v2"), Tags: []string{}}, 5, []string{}},
	}
	for _, st := range steps {
		eventsBefore := len(ts.Events())
		updated, err := client.Contexts.Update(ctx, created.ID, st.req)
		if err != nil {
			t.Fatalf("Update %s: %v", st.name, err)
		}
		sc := stored(t, ts, created.ID)
		if diff := cmp.Diff(asContext(sc), updated); diff != "" {
			t.Errorf("Update %s: returned != stored (-stored +returned):\n%s", st.name, diff)
		}
		if updated.Version != st.wantVersion || !cmp.Equal(updated.Tags, st.wantTags) {
			t.Errorf("Update %s: version %d tags %q, want %d %q", st.name, updated.Version, updated.Tags, st.wantVersion, st.wantTags)
		}
		if len(sc.Versions) != st.wantVersion {
			t.Errorf("Update %s: server records %d versions, want %d", st.name, len(sc.Versions), st.wantVersion)
		}
		newEvents := len(ts.Events()) - eventsBefore
		if st.name == "no-op" && newEvents != 0 {
			t.Errorf("a no-op update fired %d events, want none", newEvents)
		}
		if st.name != "no-op" && newEvents != 2 { // context.updated + context.version.created
			t.Errorf("Update %s fired %d events, want 2", st.name, newEvents)
		}
	}

	// The first update changed one section and added two words; the event
	// the server recorded says the same as the version the client reads.
	updates := eventsOf[contextsvc.ContextUpdatedData](t, ts.Server, contextsvc.EventContextUpdated)
	if len(updates) != 4 {
		t.Fatalf("%d context.updated events, want 4", len(updates))
	}
	wantChanges := contextsvc.Changes{SectionsModified: []string{"Limits"}, WordCountDelta: 4}
	if diff := cmp.Diff(wantChanges, updates[0].Changes); diff != "" {
		t.Errorf("changes of the content update (-want +got):\n%s", diff)
	}
	versions, err := client.Contexts.ListVersions(ctx, created.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []*contextsvc.Version
	for _, sv := range stored(t, ts, created.ID).Versions {
		want = append(want, asVersion(created.ID, sv))
	}
	if diff := cmp.Diff(want, versions.Data); diff != "" {
		t.Errorf("Versions != store (-store +listed):\n%s", diff)
	}
	if diff := cmp.Diff(wantChanges, versions.Data[1].Changes); diff != "" {
		t.Errorf("version 2's changes (-want +got):\n%s", diff)
	}
}

// TestListAndVersionsPaging creates more contexts and versions than a page
// holds and reads them back page by page, through the iterators, and with a
// tag filter, comparing each with the server's store.
func TestListAndVersionsPaging(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client := newClient(t, ts, "")
	ctx := context.Background()

	const n = 7
	for i := range n {
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		if i%3 == 0 {
			tags = append(tags, "third")
		}
		if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
			Name: fmt.Sprintf("Context %d", i), Content: fmt.Sprintf("# Part %d\n\nSome words here.\n", i), Tags: tags,
		}); err != nil {
			t.Fatal(err)
		}
	}
	account := ts.DefaultKey().Account
	var want []*contextsvc.Context
	for _, sc := range ts.Contexts(account) {
		want = append(want, asContext(sc))
	}
	if len(want) != n {
		t.Fatalf("server stores %d contexts, want %d", len(want), n)
	}

	// Page by page with List.
	var paged []*contextsvc.Context
	opts := &contextsvc.ContextListOptions{Limit: 3}
	pages := 0
	for {
		page, err := client.Contexts.List(ctx, opts)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		pages++
		paged = append(paged, page.Data...)
		if !page.HasMore {
			if page.NextCursor != "" {
				t.Errorf("last page has a cursor %q", page.NextCursor)
			}
			break
		}
		opts.Cursor = page.NextCursor
	}
	if pages != 3 {
		t.Errorf("%d pages of 3 for %d contexts, want 3", pages, n)
	}
	if diff := cmp.Diff(want, paged); diff != "" {
		t.Errorf("List pages != store (-store +listed):\n%s", diff)
	}

	// The iterator, filtered by two tags (has all of them).
	filter := func(tags ...string) []*contextsvc.Context {
		var out []*contextsvc.Context
		for _, c := range want {
			if !slices.ContainsFunc(tags, func(tg string) bool { return !slices.Contains(c.Tags, tg) }) {
				out = append(out, c)
			}
		}
		return out
	}
	for _, tags := range [][]string{nil, {"even"}, {"even", "third"}, {"none"}} {
		var got []*contextsvc.Context
		for c, err := range client.Contexts.All(ctx, &contextsvc.ContextListOptions{Limit: 2, Tags: tags}) {
			if err != nil {
				t.Fatalf("All(%q): %v", tags, err)
			}
			got = append(got, c)
		}
		if diff := cmp.Diff(filter(tags...), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("All(tags %q) (-store +iterated):\n%s", tags, diff)
		}
	}

	// Versions: five of one context, read in pages of two and through
	// AllVersions.
	id := want[0].ID
	for i := range 4 {
		if _, err := client.Contexts.Update(ctx, id, &contextsvc.UpdateContextRequest{
			Content: contextsvc.Ptr(fmt.Sprintf("# Part 0\n\nRevision %d with %s.\n", i, strings.Repeat("more ", i))),
		}); err != nil {
			t.Fatal(err)
		}
	}
	var wantVersions []*contextsvc.Version
	for _, sv := range stored(t, ts, id).Versions {
		wantVersions = append(wantVersions, asVersion(id, sv))
	}
	if len(wantVersions) != 5 {
		t.Fatalf("server records %d versions, want 5", len(wantVersions))
	}
	var pagedVersions []*contextsvc.Version
	vopts := &contextsvc.VersionListOptions{Limit: 2}
	for {
		page, err := client.Contexts.ListVersions(ctx, id, vopts)
		if err != nil {
			t.Fatalf("Versions: %v", err)
		}
		pagedVersions = append(pagedVersions, page.Data...)
		if !page.HasMore {
			break
		}
		vopts.Cursor = page.NextCursor
	}
	if diff := cmp.Diff(wantVersions, pagedVersions); diff != "" {
		t.Errorf("Versions pages != store (-store +listed):\n%s", diff)
	}
	var iterated []*contextsvc.Version
	for v, err := range client.Contexts.AllVersions(ctx, id, &contextsvc.VersionListOptions{Limit: 3}) {
		if err != nil {
			t.Fatalf("AllVersions: %v", err)
		}
		iterated = append(iterated, v)
	}
	if diff := cmp.Diff(wantVersions, iterated); diff != "" {
		t.Errorf("AllVersions != store (-store +iterated):\n%s", diff)
	}
}

// TestExportEveryFormat exports a context in every format, current and an
// earlier version, and checks the document against the stored text and the
// export.completed event the server recorded.
func TestExportEveryFormat(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client := newClient(t, ts, "")
	ctx := context.Background()

	c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Release Notes", Content: runbook})
	if err != nil {
		t.Fatal(err)
	}
	v2 := runbook + "\n# Changes\n\n- faster *exports*\n- <script>alert(1)</script>\n"
	if _, err := client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: &v2}); err != nil {
		t.Fatal(err)
	}
	sc := stored(t, ts, c.ID)

	tests := []struct {
		format      contextsvc.ExportFormat
		version     int
		contentType string
		filename    string // the name itself, from Content-Disposition's filename*
		check       func(t *testing.T, body []byte)
	}{
		{"", 0, "text/markdown; charset=utf-8", "Release Notes-v2.md", func(t *testing.T, b []byte) {
			if string(b) != sc.Content {
				t.Errorf("markdown export != stored content:\n%s", cmp.Diff(sc.Content, string(b)))
			}
		}},
		{contextsvc.ExportMarkdown, 1, "text/markdown; charset=utf-8", "Release Notes-v1.md", func(t *testing.T, b []byte) {
			if string(b) != sc.Versions[0].Content {
				t.Errorf("markdown export of version 1 != stored version 1:\n%s", cmp.Diff(sc.Versions[0].Content, string(b)))
			}
		}},
		{contextsvc.ExportHTML, 0, "text/html; charset=utf-8", "Release Notes-v2.html", func(t *testing.T, b []byte) {
			for _, want := range []string{"<h1>Setup</h1>", "<em>exports</em>"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("HTML export lacks %q:\n%s", want, b)
				}
			}
			if bytes.Contains(b, []byte("<script>")) {
				t.Errorf("HTML export lets raw <script> through:\n%s", b)
			}
		}},
		{contextsvc.ExportText, 0, "text/plain; charset=utf-8", "Release Notes-v2.txt", func(t *testing.T, b []byte) {
			if !bytes.Contains(b, []byte("Call it twice a day.")) || bytes.Contains(b, []byte("# Setup")) {
				t.Errorf("text export is not the rendered text:\n%s", b)
			}
		}},
		{contextsvc.ExportJSON, 0, "application/json", "Release Notes-v2.json", func(t *testing.T, b []byte) {
			var got contextsvc.Context
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("json export: %v", err)
			}
			if diff := cmp.Diff(asContext(sc), &got); diff != "" {
				t.Errorf("json export != stored (-stored +export):\n%s", diff)
			}
		}},
		{contextsvc.ExportJSON, 1, "application/json", "Release Notes-v1.json", func(t *testing.T, b []byte) {
			var got contextsvc.Context
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("json export: %v", err)
			}
			if got.Version != 1 || got.Content != sc.Versions[0].Content {
				t.Errorf("json export of version 1: version %d, content %q", got.Version, got.Content)
			}
		}},
		{contextsvc.ExportPDF, 0, "application/pdf", "Release Notes-v2.pdf", func(t *testing.T, b []byte) {
			if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) {
				t.Errorf("pdf export is no PDF document (%d bytes, starts %q)", len(b), b[:min(len(b), 8)])
			}
		}},
	}
	// received maps "format vN" to the size of the document the client
	// got, to compare with the export.completed events.
	var mu sync.Mutex
	received := map[string]int64{}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/v%d", stdcmp.Or(string(tc.format), "default"), tc.version), func(t *testing.T) {
			t.Parallel()
			exp, err := client.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Format: tc.format, Version: tc.version})
			if err != nil {
				t.Fatalf("Export: %v", err)
			}
			body, err := io.ReadAll(exp.Body)
			exp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if exp.ContentType != tc.contentType || exp.Filename != tc.filename {
				t.Errorf("Content-Type %q filename %q, want %q %q", exp.ContentType, exp.Filename, tc.contentType, tc.filename)
			}
			if exp.ContentLength >= 0 && exp.ContentLength != int64(len(body)) {
				t.Errorf("ContentLength %d, body %d bytes", exp.ContentLength, len(body))
			}
			tc.check(t, body)
			version := stdcmp.Or(tc.version, sc.Version)
			mu.Lock()
			received[fmt.Sprintf("%s v%d", stdcmp.Or(string(tc.format), "markdown"), version)] += int64(len(body))
			mu.Unlock()
		})
	}
	t.Cleanup(func() {
		// Runs after the parallel subtests: one export.completed per export,
		// each with the format, version and size of what the client got.
		recorded := map[string]int64{}
		for _, d := range eventsOf[contextsvc.ExportCompletedData](t, ts.Server, contextsvc.EventExportCompleted) {
			if d.ContextID != c.ID || !strings.HasPrefix(d.ExportID, "exp_") {
				t.Errorf("export.completed %+v", d)
			}
			recorded[fmt.Sprintf("%s v%d", d.Format, d.Version)] += d.SizeBytes
		}
		if diff := cmp.Diff(received, recorded); diff != "" {
			t.Errorf("export.completed sizes by format and version (-received +recorded):\n%s", diff)
		}
	})

	// An unknown format and a version that never existed are typed errors.
	_, err = client.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Format: "docx"})
	var apiErr *contextsvc.Error
	if !errors.As(err, &apiErr) || !errors.Is(err, contextsvc.ErrBadRequest) || apiErr.Param != "format" {
		t.Errorf("Export(docx) = %v, want a 400 naming format", err)
	}
	if _, err := client.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Version: 9}); !errors.Is(err, contextsvc.ErrNotFound) {
		t.Errorf("Export(version 9) = %v, want ErrNotFound", err)
	}
}

// TestDeleteThenNotFound deletes a context and checks that every endpoint then
// answers 404 for it, and the store no longer has it.
func TestDeleteThenNotFound(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client := newClient(t, ts, "")
	ctx := context.Background()

	keep, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Keep"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Gone", Content: "bye"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Contexts.Delete(ctx, gone.ID)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if diff := cmp.Diff(&contextsvc.DeleteResult{ID: gone.ID, Deleted: true}, res); diff != "" {
		t.Errorf("Delete result (-want +got):\n%s", diff)
	}
	if _, ok := ts.Context(gone.ID); ok {
		t.Errorf("the server still stores %s", gone.ID)
	}
	if diff := cmp.Diff([]mockserver.StoredContext{stored(t, ts, keep.ID)}, ts.Snapshot().Contexts); diff != "" {
		t.Errorf("store after delete (-want +got):\n%s", diff)
	}

	calls := map[string]func() error{
		"Get": func() error { _, err := client.Contexts.Get(ctx, gone.ID); return err },
		"Update": func() error {
			_, err := client.Contexts.Update(ctx, gone.ID, &contextsvc.UpdateContextRequest{Name: contextsvc.Ptr("x")})
			return err
		},
		"Delete": func() error { _, err := client.Contexts.Delete(ctx, gone.ID); return err },
		"Versions": func() error {
			_, err := client.Contexts.ListVersions(ctx, gone.ID, nil)
			return err
		},
		"Export": func() error { _, err := client.Contexts.Export(ctx, gone.ID, &contextsvc.ExportOptions{}); return err },
	}
	for name, call := range calls {
		err := call()
		var apiErr *contextsvc.Error
		if !errors.Is(err, contextsvc.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.RequestID == "" {
			t.Errorf("%s after delete: %v, want a 404 *Error with a request id", name, err)
		}
	}
	deleted := eventsOf[contextsvc.ContextDeletedData](t, ts.Server, contextsvc.EventContextDeleted)
	if len(deleted) != 1 || deleted[0].ContextID != gone.ID || deleted[0].Name != "Gone" || deleted[0].DeletedBy != ts.DefaultKey().User {
		t.Errorf("context.deleted events %+v", deleted)
	}
}

// TestRegisterWebhook registers a webhook and compares it with the store.
func TestRegisterWebhook(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client := newClient(t, ts, "")
	wh, err := client.Webhooks.Register(context.Background(), &contextsvc.RegisterWebhookRequest{
		URL:    "http://127.0.0.1:9/hook",
		Events: []contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventExportCompleted, contextsvc.EventContextCreated},
		Secret: "whsec_test",
	})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := []mockserver.Webhook{{
		ID: wh.ID, Account: ts.DefaultKey().Account, URL: "http://127.0.0.1:9/hook",
		Events:    []contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventExportCompleted},
		CreatedAt: wh.CreatedAt, Active: true,
	}}
	if diff := cmp.Diff(want, ts.Webhooks()); diff != "" {
		t.Errorf("stored webhooks (-want +got):\n%s", diff)
	}
	if !wh.Active || !cmp.Equal(wh.Events, want[0].Events) || wh.URL != want[0].URL || wh.CreatedAt.IsZero() {
		t.Errorf("Register returned %+v", wh)
	}

	// A plain-http URL that is not loopback is refused, naming the field.
	_, err = client.Webhooks.Register(context.Background(), &contextsvc.RegisterWebhookRequest{
		URL: "http://example.com/hook", Events: contextsvc.AllEventTypes(), Secret: "s",
	})
	var apiErr *contextsvc.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "url" {
		t.Errorf("Register(http://example.com) = %v, want a 400 naming url", err)
	}
	if len(ts.Webhooks()) != 1 {
		t.Errorf("a refused registration was stored: %+v", ts.Webhooks())
	}
}
