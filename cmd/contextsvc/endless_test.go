package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// endlessServer serves lists whose pages never end: each page holds
// perPage items with content, and a cursor never given before. The
// contexts list is endless; so are the versions of the context
// ctx_endless. onPage is told of each page asked for (k from 1), before it
// is answered.
type endlessServer struct {
	perPage int
	content string
	onPage  func(k int)

	mu        sync.Mutex
	pages     int // pages asked for
	pageBytes int // the size of the last page sent
}

func (e *endlessServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := 1
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		k, _ = strconv.Atoi(strings.TrimPrefix(cur, "c"))
	}
	var b bytes.Buffer
	switch {
	case r.URL.Path == "/v1/contexts":
		b.WriteString(`{"data":[`)
		for i := range e.perPage {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"ctx_%d_%d","name":"n","content":%q,"version":1}`, k, i, e.content)
		}
		fmt.Fprintf(&b, `],"hasMore":true,"nextCursor":"c%d"}`, k+1)
	case r.URL.Path == "/v1/contexts/ctx_endless/versions":
		b.WriteString(`{"data":[`)
		for i := range e.perPage {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"contextId":"ctx_endless","version":%d,"name":"n","content":%q,"createdBy":"user_aaaaaaaaaaaaaaaaaaaaaaaa"}`, (k-1)*e.perPage+i+1, e.content)
		}
		fmt.Fprintf(&b, `],"hasMore":true,"nextCursor":"c%d"}`, k+1)
	default:
		http.NotFound(w, r)
		return
	}
	{
		e.mu.Lock()
		e.pages++
		e.pageBytes = b.Len()
		e.mu.Unlock()
		if e.onPage != nil {
			e.onPage(k)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b.Bytes())
}

// lineWriter is a stdout that counts the lines written to it.
type lineWriter struct {
	mu    sync.Mutex
	lines int
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

func (l *lineWriter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

// TestListAllStreams: list --all shows each page before it asks for the
// next, so it holds at most one page however long the list: against a
// server whose pages never end it goes on, showing them, until
// interrupted. The proof is in the order of things: when page k is asked
// for, every row of the pages before it has been written.
func TestListAllStreams(t *testing.T) {
	t.Parallel()
	const perPage, pages = 100, 30
	for _, tt := range []struct {
		name string
		args []string
		tty  bool
		// lines is what stdout must hold before page k is asked for.
		lines func(k int) int
	}{
		{"a table", nil, true, func(k int) int { return 1 + (k-1)*perPage }},
		{"a table for scripts", nil, false, func(k int) int { return (k - 1) * perPage }},
		{"ids", []string{"-q"}, false, func(k int) int { return (k - 1) * perPage }},
		{"JSON", []string{"--json"}, false, func(k int) int { return k - 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			out := &lineWriter{}
			var mu sync.Mutex
			var late []string
			srv := &endlessServer{perPage: perPage, content: strings.Repeat("x", 1000), onPage: func(k int) {
				if k > 1 {
					if got, want := out.count(), tt.lines(k); got < want {
						mu.Lock()
						late = append(late, fmt.Sprintf("page %d asked for with %d lines written, want %d", k, got, want))
						mu.Unlock()
					}
				}
				if k == pages {
					cancel() // Ctrl-C
				}
			}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			env := map[string]string{"CONTEXTSVC_BASE_URL": ts.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}
			var errOut bytes.Buffer
			s := &streams{in: strings.NewReader(""), out: out, err: &errOut, getenv: func(k string) string { return env[k] }, outTTY: tt.tty}
			code := run(ctx, append([]string{"contexts", "list", "--all", "--limit", strconv.Itoa(perPage)}, tt.args...), s)
			if code != exitError || !strings.Contains(errOut.String(), "interrupted") {
				t.Errorf("exit %d, stderr %q", code, errOut.String())
			}
			mu.Lock()
			defer mu.Unlock()
			if len(late) > 0 || srv.pages != pages {
				t.Errorf("%d pages asked for; pages not written before the next was asked:\n%s", srv.pages, strings.Join(late, "\n"))
			}
		})
	}
}

// TestListAllJSONLines: with --all --json each page is one line, however
// the server laid it out, so the output is JSON Lines.
func TestListAllJSONLines(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"":  "{\n  \"data\": [\n    {\"id\": \"ctx_1\", \"name\": \"n\", \"version\": 1}\n  ],\n  \"hasMore\": true,\n  \"nextCursor\": \"a\"\n}\n",
		"a": "{\"data\":[{\"id\":\"ctx_2\",\"name\":\"n\",\"version\":1}],\"hasMore\":false}",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, pages[r.URL.Query().Get("cursor")])
	}))
	defer srv.Close()
	c := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey}}
	out := c.ok("contexts", "list", "--all", "--json")
	want := `{"data":[{"id":"ctx_1","name":"n","version":1}],"hasMore":true,"nextCursor":"a"}` + "\n" + pages["a"] + "\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}
