package contextsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

const ctx1JSON = `{"id":"ctx_1","name":"Notes","content":"# Hi","tags":["a","b"],"version":2,` +
	`"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:52:00.456Z","extra":{"ignored":true}}`

func ctx1() *Context {
	return &Context{
		ID: "ctx_1", Name: "Notes", Content: "# Hi", Tags: []string{"a", "b"}, Version: 2,
		CreatedAt: time.Date(2026, 11, 21, 20, 51, 0, 123e6, time.UTC),
		UpdatedAt: time.Date(2026, 11, 21, 20, 52, 0, 456e6, time.UTC),
	}
}

// timeEqual compares instants, whatever their location.
var timeEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestContextOperations(t *testing.T) {
	t.Parallel()
	ver1 := `{"contextId":"ctx_1","version":1,"name":"Notes","content":"# Hi","tags":[],"createdAt":"2026-11-21T20:51:00Z",` +
		`"createdBy":"user_1","changes":{"sections_modified":["Hi"],"word_count_delta":1}}`
	wantVer1 := &Version{ContextID: "ctx_1", Version: 1, Name: "Notes", Content: "# Hi", Tags: []string{},
		CreatedAt: time.Date(2026, 11, 21, 20, 51, 0, 0, time.UTC), CreatedBy: "user_1",
		Changes: Changes{SectionsModified: []string{"Hi"}, WordCountDelta: 1}}

	tests := []struct {
		name   string
		method string
		url    string // registered responder URL
		status int
		resp   string
		call   func(context.Context, *Client) (any, error)
		want   recorded // Header ignored
		result any
	}{
		{
			name: "get", method: "GET", url: testBase + "/contexts/ctx_1", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Get(ctx, "ctx_1") },
			want: recorded{Method: "GET", Path: "/v1/contexts/ctx_1"}, result: ctx1(),
		},
		{
			name: "get escapes what a path cannot hold as it is", method: "GET", url: testBase + "/contexts/ctx_a%22b%7Cc", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Get(ctx, `ctx_a"b|c`) },
			want: recorded{Method: "GET", Path: `/v1/contexts/ctx_a"b|c`}, result: ctx1(),
		},
		{
			name: "create 201", method: "POST", url: testBase + "/contexts", status: 201, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Create(ctx, &CreateContextRequest{Name: "Notes", Content: "# Hi", Tags: []string{"a", "b"}})
			},
			want:   recorded{Method: "POST", Path: "/v1/contexts", Body: `{"name":"Notes","content":"# Hi","tags":["a","b"]}`},
			result: ctx1(),
		},
		{
			name: "create 200, name only", method: "POST", url: testBase + "/contexts", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Create(ctx, &CreateContextRequest{Name: "Notes"})
			},
			want: recorded{Method: "POST", Path: "/v1/contexts", Body: `{"name":"Notes"}`}, result: ctx1(),
		},
		{
			name: "update content", method: "PUT", url: testBase + "/contexts/ctx_1", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Content: Ptr("# Hi")})
			},
			want: recorded{Method: "PUT", Path: "/v1/contexts/ctx_1", Body: `{"content":"# Hi"}`}, result: ctx1(),
		},
		{
			name: "update name to empty string is sent", method: "PUT", url: testBase + "/contexts/ctx_1", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Name: Ptr("")})
			},
			want: recorded{Method: "PUT", Path: "/v1/contexts/ctx_1", Body: `{"name":""}`}, result: ctx1(),
		},
		{
			name: "update clears tags", method: "PUT", url: testBase + "/contexts/ctx_1", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Tags: []string{}})
			},
			want: recorded{Method: "PUT", Path: "/v1/contexts/ctx_1", Body: `{"tags":[]}`}, result: ctx1(),
		},
		{
			name: "update every field", method: "PUT", url: testBase + "/contexts/ctx_1", status: 200, resp: ctx1JSON,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Name: Ptr("N"), Content: Ptr("C"), Tags: []string{"x"}})
			},
			want: recorded{Method: "PUT", Path: "/v1/contexts/ctx_1", Body: `{"name":"N","content":"C","tags":["x"]}`}, result: ctx1(),
		},
		{
			name: "delete 200", method: "DELETE", url: testBase + "/contexts/ctx_1", status: 200, resp: `{"id":"ctx_1","deleted":true}`,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Delete(ctx, "ctx_1") },
			want: recorded{Method: "DELETE", Path: "/v1/contexts/ctx_1"}, result: &DeleteResult{ID: "ctx_1", Deleted: true},
		},
		{
			name: "delete 204 without body", method: "DELETE", url: testBase + "/contexts/ctx_1", status: 204, resp: "",
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Delete(ctx, "ctx_1") },
			want: recorded{Method: "DELETE", Path: "/v1/contexts/ctx_1"}, result: &DeleteResult{ID: "ctx_1", Deleted: true},
		},
		{
			name: "delete 200 with another JSON body", method: "DELETE", url: testBase + "/contexts/ctx_1", status: 200, resp: `{"status":"ok"}`,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Delete(ctx, "ctx_1") },
			want: recorded{Method: "DELETE", Path: "/v1/contexts/ctx_1"}, result: &DeleteResult{ID: "ctx_1", Deleted: true},
		},
		{
			name: "delete 200 with a JSON array", method: "DELETE", url: testBase + "/contexts/ctx_1", status: 200, resp: `[]`,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.Delete(ctx, "ctx_1") },
			want: recorded{Method: "DELETE", Path: "/v1/contexts/ctx_1"}, result: &DeleteResult{ID: "ctx_1", Deleted: true},
		},
		{
			name: "list with options", method: "GET", url: testBase + "/contexts", status: 200,
			resp: `{"data":[` + ctx1JSON + `],"hasMore":true,"nextCursor":"cur_2"}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.List(ctx, &ContextListOptions{Limit: 5, Cursor: "cur_1", Tags: []string{"a", "b c"}})
			},
			want:   recorded{Method: "GET", Path: "/v1/contexts", Query: "cursor=cur_1&limit=5&tag=a&tag=b+c"},
			result: &ContextList{Data: []*Context{ctx1()}, HasMore: true, NextCursor: "cur_2"},
		},
		{
			name: "list nil options", method: "GET", url: testBase + "/contexts", status: 200,
			resp: `{"data":[],"hasMore":false,"nextCursor":null}`,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Contexts.List(ctx, nil) },
			want: recorded{Method: "GET", Path: "/v1/contexts"}, result: &ContextList{Data: []*Context{}},
		},
		{
			name: "versions", method: "GET", url: testBase + "/contexts/ctx_1/versions", status: 200,
			resp: `{"data":[` + ver1 + `],"hasMore":false,"nextCursor":null}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Contexts.ListVersions(ctx, "ctx_1", &VersionListOptions{Limit: 100, Cursor: "v"})
			},
			want:   recorded{Method: "GET", Path: "/v1/contexts/ctx_1/versions", Query: "cursor=v&limit=100"},
			result: &VersionList{Data: []*Version{wantVer1}},
		},
		{
			name: "register webhook", method: "POST", url: testBase + "/webhooks", status: 201,
			resp: `{"id":"wh_1","url":"https://hooks.test/in","events":["context.updated","export.completed"],"createdAt":"2026-11-21T21:51:00.123+01:00","active":true}`,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Webhooks.Register(ctx, &RegisterWebhookRequest{
					URL: "https://hooks.test/in", Events: []EventType{EventContextUpdated, EventExportCompleted}, Secret: "whsec_1",
				})
			},
			want: recorded{Method: "POST", Path: "/v1/webhooks",
				Body: `{"url":"https://hooks.test/in","events":["context.updated","export.completed"],"secret":"whsec_1"}`},
			result: &Webhook{ID: "wh_1", URL: "https://hooks.test/in", Events: []EventType{EventContextUpdated, EventExportCompleted},
				CreatedAt: time.Date(2026, 11, 21, 20, 51, 0, 123e6, time.UTC), Active: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t)
			mt.RegisterResponder(tt.method, tt.url, rec.wrap(respond(tt.status, tt.resp)))
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(tt.result, got, timeEqual); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			reqs := rec.all()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			r.Header = nil
			if diff := cmp.Diff(tt.want, r); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgumentsCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t)
	ctx := context.Background()
	calls := map[string]func() error{
		"get empty id":       func() error { _, err := c.Contexts.Get(ctx, ""); return err },
		"update empty id":    func() error { _, err := c.Contexts.Update(ctx, "", &UpdateContextRequest{Name: Ptr("x")}); return err },
		"update nothing set": func() error { _, err := c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{}); return err },
		"update nil":         func() error { _, err := c.Contexts.Update(ctx, "ctx_1", nil); return err },
		"delete empty id":    func() error { _, err := c.Contexts.Delete(ctx, ""); return err },
		"versions empty id":  func() error { _, err := c.Contexts.ListVersions(ctx, "", nil); return err },
		"export empty id":    func() error { _, err := c.Contexts.Export(ctx, "", &ExportOptions{}); return err },
		"export negative":    func() error { _, err := c.Contexts.Export(ctx, "ctx_1", &ExportOptions{Version: -1}); return err },
		"create nil":         func() error { _, err := c.Contexts.Create(ctx, nil); return err },
		"register nil":       func() error { _, err := c.Webhooks.Register(ctx, nil); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestTolerantListShapes(t *testing.T) {
	t.Parallel()
	item := `{"id":"ctx_1","name":"n","tags":[],"version":1,"createdAt":"2026-11-21T20:51:00+00:00","updatedAt":"2026-11-21T15:51:00.5-05:00"}`
	want := &Context{ID: "ctx_1", Name: "n", Tags: []string{}, Version: 1,
		CreatedAt: time.Date(2026, 11, 21, 20, 51, 0, 0, time.UTC),
		UpdatedAt: time.Date(2026, 11, 21, 20, 51, 0, 5e8, time.UTC)}
	tests := []struct {
		name     string
		body     string
		wantMore bool
		wantNext string
	}{
		{name: "bare array", body: " \n[" + item + "]"},
		{name: "data", body: `{"data":[` + item + `],"hasMore":true,"nextCursor":"c2"}`, wantMore: true, wantNext: "c2"},
		{name: "contexts", body: `{"contexts":[` + item + `],"hasMore":false}`},
		{name: "null cursor and unknown fields", body: `{"object":"list","data":[` + item + `],"hasMore":false,"nextCursor":null,"total":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts", respond(200, tt.body))
			got, err := c.Contexts.List(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantList := &ContextList{Data: []*Context{want}, HasMore: tt.wantMore, NextCursor: tt.wantNext}
			if diff := cmp.Diff(wantList, got, timeEqual); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	versionShapes := map[string]string{
		"bare array": `[{"contextId":"ctx_1","version":3}]`,
		"data":       `{"data":[{"contextId":"ctx_1","version":3}]}`,
		"versions":   `{"versions":[{"contextId":"ctx_1","version":3}],"hasMore":false}`,
	}
	for name, body := range versionShapes {
		t.Run("versions "+name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts/ctx_1/versions", respond(200, body))
			got, err := c.Contexts.ListVersions(context.Background(), "ctx_1", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&VersionList{Data: []*Version{{ContextID: "ctx_1", Version: 3}}}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	bad := map[string]string{"not json": `<html>`, "empty": ``, "wrong type": `{"data":"x"}`}
	for name, body := range bad {
		t.Run("bad "+name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts", respond(200, body))
			if _, err := c.Contexts.List(context.Background(), nil); err == nil {
				t.Fatal("List succeeded on an unreadable body")
			}
		})
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      ExportOptions
		query     string
		ctype     string
		cd        string
		wantName  string
		wantBytes string
	}{
		{name: "default", query: "", ctype: "text/markdown; charset=utf-8",
			cd: `attachment; filename="notes-v2.md"`, wantName: "notes-v2.md", wantBytes: "# Hi\n"},
		{name: "pdf of version 1", opts: ExportOptions{Format: ExportPDF, Version: 1}, query: "format=pdf&version=1",
			ctype: "application/pdf", cd: `attachment; filename="notes-v1.pdf"`, wantName: "notes-v1.pdf", wantBytes: "%PDF-1.4 ..."},
		{name: "no disposition", opts: ExportOptions{Format: ExportHTML}, query: "format=html",
			ctype: "text/html; charset=utf-8", wantBytes: "<h1>Hi</h1>"},
		{name: "path in file name is dropped", opts: ExportOptions{Format: ExportText}, query: "format=text",
			ctype: "text/plain; charset=utf-8", cd: `attachment; filename="../../etc/passwd"`, wantName: "passwd", wantBytes: "Hi"},
		{name: "hidden file", opts: ExportOptions{Format: ExportText}, query: "format=text",
			ctype: "text/plain; charset=utf-8", cd: `attachment; filename=".bashrc"`, wantName: "bashrc", wantBytes: "Hi"},
		{name: "NTFS stream", opts: ExportOptions{Format: ExportPDF}, query: "format=pdf",
			ctype: "application/pdf", cd: `attachment; filename="report.pdf:evil.exe"`, wantName: "report.pdf_evil.exe", wantBytes: "%PDF"},
		{name: "Windows device", opts: ExportOptions{Format: ExportText}, query: "format=text",
			ctype: "text/plain; charset=utf-8", cd: `attachment; filename*=UTF-8''CON`, wantName: "_CON", wantBytes: "Hi"},
		{name: "bad disposition", opts: ExportOptions{Format: ExportJSON}, query: "format=json",
			ctype: "application/json", cd: `attachment; filename=`, wantBytes: "{}"},
		// RFC 6266: filename* (UTF-8, percent-encoded) wins over filename,
		// in either order.
		{name: "filename* preferred", opts: ExportOptions{Format: ExportPDF}, query: "format=pdf", ctype: "application/pdf",
			cd:       `attachment; filename="unicode-strasse-v1.pdf"; filename*=UTF-8''%C3%9Cn%C3%AFc%C3%B6d%C3%A9%20Stra%C3%9Fe-v1.pdf`,
			wantName: "Ünïcödé Straße-v1.pdf", wantBytes: "%PDF"},
		{name: "filename* first", opts: ExportOptions{Format: ExportText}, query: "format=text", ctype: "text/plain",
			cd: `attachment; filename*=utf-8'el'%CE%9D%CF%8C%CF%84%CE%B5%CF%82-v2.txt; filename="context-v2.txt"`, wantName: "Νότες-v2.txt", wantBytes: "x"},
		{name: "filename* in an unknown charset falls back", opts: ExportOptions{Format: ExportText}, query: "format=text", ctype: "text/plain",
			cd: `attachment; filename="cafe-v1.txt"; filename*=ISO-8859-1''caf%E9-v1.txt`, wantName: "cafe-v1.txt", wantBytes: "x"},
		{name: "path in filename* is dropped", opts: ExportOptions{Format: ExportText}, query: "format=text", ctype: "text/plain",
			cd: `attachment; filename="x.txt"; filename*=UTF-8''..%2F..%2F%C3%A9tc%5Cpasswd`, wantName: "passwd", wantBytes: "x"},
		{name: "control and format characters are dropped", opts: ExportOptions{Format: ExportText}, query: "format=text", ctype: "text/plain",
			cd: `attachment; filename="x.txt"; filename*=UTF-8''evil%0A%E2%80%AEfdp.exe`, wantName: "evilfdp.exe", wantBytes: "x"},
		{name: "invalid UTF-8 in filename*", opts: ExportOptions{Format: ExportText}, query: "format=text", ctype: "text/plain",
			cd: `attachment; filename="x.txt"; filename*=UTF-8''a%FFb.txt`, wantName: "a\uFFFDb.txt", wantBytes: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts/ctx_1/export", rec.wrap(func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(200, tt.wantBytes)
				resp.Header.Set("Content-Type", tt.ctype)
				if tt.cd != "" {
					resp.Header.Set("Content-Disposition", tt.cd)
				}
				return resp, nil
			}))
			exp, err := c.Contexts.Export(context.Background(), "ctx_1", &tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(exp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if err := exp.Body.Close(); err != nil {
				t.Fatal(err)
			}
			if string(body) != tt.wantBytes || exp.ContentType != tt.ctype || exp.Filename != tt.wantName {
				t.Errorf("got body %q type %q name %q; want %q %q %q", body, exp.ContentType, exp.Filename, tt.wantBytes, tt.ctype, tt.wantName)
			}
			r := rec.all()[0]
			if r.Query != tt.query || r.Path != "/v1/contexts/ctx_1/export" || r.Header.Get("Accept") != "*/*" {
				t.Errorf("request %s?%s Accept %q", r.Path, r.Query, r.Header.Get("Accept"))
			}
		})
	}

	t.Run("error", func(t *testing.T) {
		t.Parallel()
		c, mt, _ := newTestClient(t)
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1/export",
			respond(400, `{"error":{"type":"invalid_request","message":"unknown format","param":"format"}}`))
		_, err := c.Contexts.Export(context.Background(), "ctx_1", &ExportOptions{Format: "docx"})
		var apiErr *Error
		if !errors.As(err, &apiErr) || apiErr.Param != "format" || !errors.Is(err, ErrBadRequest) {
			t.Fatalf("err = %v, want a 400 naming format", err)
		}
	})
}

// pagedResponder serves contexts ctx_0 … ctx_{n-1} in pages of size, with
// the cursor "c<index>"; failAt makes the page starting there answer 500.
func pagedResponder(n, size, failAt int) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		start := 0
		if cur := req.URL.Query().Get("cursor"); cur != "" {
			fmt.Sscanf(cur, "c%d", &start)
		}
		if start == failAt {
			return httpmock.NewStringResponse(400, `{"error":{"type":"invalid_request","message":"bad cursor"}}`), nil
		}
		var items []string
		for i := start; i < min(start+size, n); i++ {
			items = append(items, fmt.Sprintf(`{"id":"ctx_%d","contextId":"ctx_x","version":%d}`, i, i+1))
		}
		more := start+size < n
		next := "null"
		if more {
			next = fmt.Sprintf(`"c%d"`, start+size)
		}
		body := fmt.Sprintf(`{"data":[%s],"hasMore":%t,"nextCursor":%s}`, strings.Join(items, ","), more, next)
		return httpmock.NewStringResponse(200, body), nil
	}
}

func TestAllFollowsCursors(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts", rec.wrap(pagedResponder(7, 3, -1)))
	var ids []string
	for cx, err := range c.Contexts.All(context.Background(), &ContextListOptions{Limit: 3, Tags: []string{"t"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cx.ID)
	}
	want := []string{"ctx_0", "ctx_1", "ctx_2", "ctx_3", "ctx_4", "ctx_5", "ctx_6"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	var queries []string
	for _, r := range rec.all() {
		queries = append(queries, r.Query)
	}
	wantQ := []string{"limit=3&tag=t", "cursor=c3&limit=3&tag=t", "cursor=c6&limit=3&tag=t"}
	if diff := cmp.Diff(wantQ, queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestAllStopsAtFirstError(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts", rec.wrap(pagedResponder(9, 3, 6)))
	var ids []string
	var errs []error
	for cx, err := range c.Contexts.All(context.Background(), nil) {
		if err != nil {
			errs = append(errs, err)
			continue // the iterator must end by itself
		}
		ids = append(ids, cx.ID)
	}
	if len(ids) != 6 || len(errs) != 1 || !errors.Is(errs[0], ErrBadRequest) {
		t.Fatalf("got ids %v errs %v; want 6 ids and one 400", ids, errs)
	}
	if n := rec.count(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestAllEarlyBreakFetchesNoMore(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts", rec.wrap(pagedResponder(9, 3, -1)))
	n := 0
	for _, err := range c.Contexts.All(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 4 {
			break
		}
	}
	if got := rec.count(); got != 2 {
		t.Errorf("%d requests after breaking on the 4th item, want 2", got)
	}
}

func TestAllVersions(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_x/versions", rec.wrap(pagedResponder(5, 2, -1)))
	var versions []int
	for v, err := range c.Contexts.AllVersions(context.Background(), "ctx_x", &VersionListOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v.Version)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5}, versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if got := rec.count(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestAllRefusesEndlessPaging(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"no cursor":   `{"data":[{"id":"ctx_1"}],"hasMore":true,"nextCursor":null}`,
		"same cursor": `{"data":[{"id":"ctx_1"}],"hasMore":true,"nextCursor":"c"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts", rec.wrap(respond(200, body)))
			var errs int
			for _, err := range c.Contexts.All(context.Background(), &ContextListOptions{Cursor: "c"}) {
				if err != nil {
					errs++
				}
			}
			if errs != 1 || rec.count() != 1 {
				t.Errorf("%d errors after %d requests; want 1 after 1", errs, rec.count())
			}
		})
	}
}

func TestRegisterWebhookRequestRedactsSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"https://h.test", "https://h.test"},
		{"https://bot:toppass@h.test/in?token=toptoken&channel=ops", "https://xxxxx@h.test/in?token=xxxxx&channel=xxxxx"},
	} {
		r := &RegisterWebhookRequest{URL: tc.url, Events: []EventType{EventContextCreated}, Secret: "whsec_topsecret"}
		for _, out := range []string{
			fmt.Sprintf("%v", r), fmt.Sprintf("%+v", r), fmt.Sprintf("%#v", r), fmt.Sprintf("%s", *r), r.String(), r.GoString(),
		} {
			if strings.Contains(out, "top") || !strings.Contains(out, "[REDACTED]") || !strings.Contains(out, tc.want) {
				t.Errorf("formatted request %q, want %s and [REDACTED]", out, tc.want)
			}
		}
	}
}

// TestSafeFilename: the name an export suggests can be saved as it is on
// Linux, macOS and Windows, in the caller's directory, visible, under the
// name it shows.
func TestSafeFilename(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 100000) + ".pdf"
	longUTF8 := strings.Repeat("é", 200) + ".md"
	tests := []struct{ in, want string }{
		{"notes-v2.md", "notes-v2.md"},
		{"Ünïcödé Straße-v1.pdf", "Ünïcödé Straße-v1.pdf"},
		{".bashrc", "bashrc"},
		{"..bashrc", "bashrc"},
		{"...", ""},
		{" .profile", "profile"},
		{"CON", "_CON"},
		{"con.txt", "_con.txt"},
		{"Nul .md", "_Nul .md"},
		{"COM1.pdf", "_COM1.pdf"},
		{"lpt9", "_lpt9"},
		{"COM¹", "_COM¹"},
		{"CONIN$", "_CONIN$"},
		{"CONTEXT.md", "CONTEXT.md"},
		{"COM10.md", "COM10.md"},
		{"C:evil.pdf", "C_evil.pdf"},
		{"report.pdf:evil.exe", "report.pdf_evil.exe"},
		{`a<b>c"d|e?f*g.txt`, "a_b_c_d_e_f_g.txt"},
		{"name. . ", "name"},
		{"../../etc/passwd", "passwd"},
		{`..\..\windows\system.ini`, "system.ini"},
		{"dir/", ""},
		{"evil\u202efdp.exe", "evilfdp.exe"},
		{long, strings.Repeat("a", 251) + ".pdf"},
		{longUTF8, strings.Repeat("é", 126) + ".md"},
		{strings.Repeat("b", 300), strings.Repeat("b", 255)},
		{strings.Repeat("x", 300) + "." + strings.Repeat("y", 40), strings.Repeat("x", 255)},
	}
	for _, tt := range tests {
		got := safeFilename(tt.in)
		if got != tt.want {
			t.Errorf("safeFilename(%.60q) = %.60q (%d bytes), want %.60q", tt.in, got, len(got), tt.want)
		}
		if got != "" {
			checkSafeFilename(t, tt.in, got)
		}
	}
}

// checkSafeFilename fails the test when name, made from in, is not safe to
// save as it is.
func checkSafeFilename(t *testing.T, in, name string) {
	t.Helper()
	switch {
	case strings.ContainsAny(name, `/\<>:"|?*`) || name == ".." || name == ".":
		t.Errorf("from %q: %q, a path or a name Windows refuses", in, name)
	case !utf8.ValidString(name) || strings.IndexFunc(name, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf) }) >= 0:
		t.Errorf("from %q: %q, not a printable name", in, name)
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, " ") || strings.HasSuffix(name, ".") || strings.HasSuffix(name, " "):
		t.Errorf("from %q: %q, hidden or changed by Windows", in, name)
	case len(name) > 255:
		t.Errorf("from %.60q: %d bytes, longer than a file system takes", in, len(name))
	case windowsDeviceName(name):
		t.Errorf("from %q: %q, a Windows device", in, name)
	}
}

func FuzzDispositionFilename(f *testing.F) {
	for _, s := range []string{`attachment; filename="a-v1.md"`, `attachment; filename="../x"`, `inline`, `attachment; filename*=UTF-8''%e2%82%ac.txt`, `;;`, ``,
		`attachment; filename="a"; filename*=UTF-8''%FF%0A%E2%80%AE..%2F`, `attachment; filename=".bashrc"`, `attachment; filename="CON"`,
		`attachment; filename="C:evil.pdf"`, `attachment; filename="report.pdf:evil.exe"`, `attachment; filename*=UTF-8''nul%20.txt`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cd string) {
		if name := dispositionFilename(cd); name != "" {
			checkSafeFilename(t, cd, name)
		}
	})
}

func TestLenientTimes(t *testing.T) {
	t.Parallel()
	body := `{"id":"ctx_1","name":"n","content":"2026-11-21t20:51:00z stays as written","tags":[],"version":1,` +
		`"createdAt":"2026-11-21t20:51:00.25z","updatedAt":"2026-12-31 23:59:60+01:00"}`
	c, mt, _ := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(200, body))
	mt.RegisterResponder("GET", testBase+"/contexts", respond(200, `[`+body+`]`))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_bad", respond(200, `{"id":"ctx_bad","createdAt":"yesterday"}`))
	want := &Context{ID: "ctx_1", Name: "n", Content: "2026-11-21t20:51:00z stays as written", Tags: []string{}, Version: 1,
		CreatedAt: time.Date(2026, 11, 21, 20, 51, 0, 25e7, time.UTC),
		UpdatedAt: time.Date(2026, 12, 31, 22, 59, 59, 999999999, time.UTC)}
	got, err := c.Contexts.Get(context.Background(), "ctx_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	list, err := c.Contexts.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&ContextList{Data: []*Context{want}}, list, timeEqual); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if _, err := c.Contexts.Get(context.Background(), "ctx_bad"); err == nil {
		t.Error("a createdAt that is no time decoded without error")
	}
}

func FuzzParseLenientRFC3339(f *testing.F) {
	for _, s := range []string{"2026-11-21T20:51:00.123Z", "2026-11-21t20:51:00z", "2026-11-21 20:51:60+05:30", "2026-11-21T20:51:00", "x", "2026-13-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, ok := parseLenientRFC3339(s)
		if !ok {
			return
		}
		// Whatever was accepted must survive encoding/json's strict parser
		// once normalised.
		var back time.Time
		if err := back.UnmarshalText([]byte(tm.Format(time.RFC3339Nano))); err != nil || !back.Equal(tm) {
			t.Errorf("parseLenientRFC3339(%q) = %v, which does not round-trip: %v", s, tm, err)
		}
		if strict, err := time.Parse(time.RFC3339Nano, s); err == nil && !strict.Equal(tm) {
			t.Errorf("parseLenientRFC3339(%q) = %v, strict parser says %v", s, tm, strict)
		}
	})
}

// FuzzLenientTimes checks, for any response body, the client's one-pass
// decoding (responseJSON): it never panics, and where encoding/json reads
// a Context, it reads the same Context (lenient times only add what the
// strict decoder refuses).
func FuzzLenientTimes(f *testing.F) {
	for _, s := range []string{
		ctx1JSON,
		`{"createdAt":"2026-11-21t20:51:00.25z","updatedAt":"2026-12-31 23:59:60+01:00","content":"2026-11-21t20:51:00z"}`,
		`[{"data":[{"createdAt":"2026-11-21 20:51:00Z"}]}]`,
		`{"timestamp":"2026-11-21T20:51:00+00:00","n":1e400}`,
		`{"createdAt":12}`, `null`, `{`, ``, `{"CreatedAt":"2026-11-21T20:51:00Z","ID":"x","Name":"n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var strict, lenient Context
		lerr := jsonv2.Unmarshal(body, &lenient, responseJSON)
		if json.Unmarshal(body, &strict) != nil {
			return
		}
		if lerr != nil {
			t.Fatalf("%q: encoding/json reads it, the client does not: %v", body, lerr)
		}
		if diff := cmp.Diff(strict, lenient, timeEqual); diff != "" {
			t.Fatalf("%q: the client reads another Context (-encoding/json +client):\n%s", body, diff)
		}
	})
}

// TestIDsRefusedBeforeSending: every method that puts an id in a path
// refuses, before sending anything, an id that is not one path segment as
// it stands: empty, a dot segment, one with a separator, a query or a
// fragment, an escape a proxy may decode, path parameters, white space,
// control characters or non-ASCII, or an overlong one. Ids like the
// service's (and any printable ASCII without those) are sent as given.
func TestIDsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	methods := map[string]func(ctx context.Context, c *Client, id string) error{
		"Get": func(ctx context.Context, c *Client, id string) error { _, err := c.Contexts.Get(ctx, id); return err },
		"Update": func(ctx context.Context, c *Client, id string) error {
			_, err := c.Contexts.Update(ctx, id, &UpdateContextRequest{Name: Ptr("n")})
			return err
		},
		"Delete": func(ctx context.Context, c *Client, id string) error {
			_, err := c.Contexts.Delete(ctx, id)
			return err
		},
		"ListVersions": func(ctx context.Context, c *Client, id string) error {
			_, err := c.Contexts.ListVersions(ctx, id, &VersionListOptions{Limit: 5})
			return err
		},
		"AllVersions": func(ctx context.Context, c *Client, id string) error {
			for _, err := range c.Contexts.AllVersions(ctx, id, nil) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Export": func(ctx context.Context, c *Client, id string) error {
			exp, err := c.Contexts.Export(ctx, id, &ExportOptions{Format: ExportPDF})
			if err == nil {
				exp.Body.Close()
			}
			return err
		},
	}
	bad := map[string]string{
		"":                       "empty",
		".":                      "dot segment",
		"..":                     "dot segment",
		"a/b":                    `"/"`,
		"/":                      `"/"`,
		"../webhooks":            `"/"`,
		"ctx_1/versions":         `"/"`,
		`ctx\1`:                  `"\\"`,
		`..\..`:                  `"\\"`,
		"ctx_1?limit=1":          `"?"`,
		"?":                      `"?"`,
		"ctx_1#x":                `"#"`,
		"%2e%2e":                 `"%"`,
		"ctx%2F1":                `"%"`,
		"ctx%252F1":              `"%"`,
		"..;":                    `";"`,
		"ctx_1;jsessionid=x":     `";"`,
		"ctx 1":                  "white space",
		"ctx_1\n":                "white space",
		"\x00":                   "control character",
		"ctx_1\x7f":              "control character",
		"ctx_\u202e1":            "beyond ASCII",
		"ctx_é":                  "beyond ASCII",
		"ctx_\uff0e\uff0e":       "beyond ASCII", // fullwidth dots, which some servers map to "."
		"\xff":                   "beyond ASCII",
		strings.Repeat("a", 256): "256 bytes",
	}
	for name, call := range methods {
		for id, want := range bad {
			t.Run(name+" "+strconv.Quote(id), func(t *testing.T) {
				t.Parallel()
				c, mt, _ := newTestClient(t)
				err := call(context.Background(), c, id)
				if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "context id") || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want ErrInvalidArgument saying %s", err, want)
				}
				checkInert(t, err.Error(), 512)
				if n := mt.GetTotalCallCount(); n != 0 {
					t.Errorf("%d requests reached the server, want none", n)
				}
			})
		}
	}

	good := []string{"ctx_1", "ctx_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "ctx_0123456789abcdef", "...", ".a", "a.", "ctx_a-b_c~d", "a:b@c", strings.Repeat("a", 255)}
	for name, call := range methods {
		for _, id := range good {
			t.Run(name+" sends "+strconv.Quote(id), func(t *testing.T) {
				t.Parallel()
				c, mt, rec := newTestClient(t)
				mt.RegisterNoResponder(rec.wrap(respond(404, `{"error":{"type":"not_found"}}`)))
				err := call(context.Background(), c, id)
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("err = %v, want the server's 404", err)
				}
				got := rec.all()
				if len(got) == 0 || got[0].Path != "/v1/contexts/"+id && !strings.HasPrefix(got[0].Path, "/v1/contexts/"+id+"/") {
					t.Errorf("requests %+v, want one for /v1/contexts/%s", got, id)
				}
			})
		}
	}
}
