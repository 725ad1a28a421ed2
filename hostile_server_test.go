package contextsvc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jarcoal/httpmock"
)

// The client against a server it does not control: a proxy, a gateway, a
// broken or hostile deployment. Each test sets up the misbehaviour and
// checks that the key stays home, memory stays bounded, and a wrong answer
// is an error that is safe to log.

// keyThief is a server on another port that records whether anything, and
// the key above all, reached it.
type keyThief struct {
	*httptest.Server
	requests atomic.Int32
	sawKey   atomic.Bool
}

func newKeyThief(t *testing.T) *keyThief {
	t.Helper()
	k := &keyThief{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.requests.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), testKey) {
			k.sawKey.Store(true)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"ctx_stolen","data":[],"deleted":true}`)
	}))
	t.Cleanup(k.Close)
	return k
}

// TestRedirectsKeepTheKeyHome: a redirect to another origin (another port,
// another host, http from https) is refused before anything is sent there,
// for every redirect status, every operation and Do; it is not retried.
func TestRedirectsKeepTheKeyHome(t *testing.T) {
	t.Parallel()
	thief := newKeyThief(t)
	calls := map[string]func(context.Context, *Client) error{
		"Get": func(ctx context.Context, c *Client) error { _, err := c.Contexts.Get(ctx, "ctx_1"); return err },
		"Create": func(ctx context.Context, c *Client) error {
			_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"})
			return err
		},
		"Delete": func(ctx context.Context, c *Client) error { _, err := c.Contexts.Delete(ctx, "ctx_1"); return err },
		"Do": func(ctx context.Context, c *Client) error {
			req, err := c.NewRequest(ctx, http.MethodPost, "contexts/ctx_1/publish", map[string]int{"n": 1})
			if err != nil {
				return err
			}
			_, err = c.Do(ctx, req, nil)
			return err
		},
	}
	for _, status := range []int{301, 302, 303, 307, 308} {
		for name, call := range calls {
			t.Run(fmt.Sprintf("%d %s", status, name), func(t *testing.T) {
				t.Parallel()
				var hits atomic.Int32
				base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					hits.Add(1)
					http.Redirect(w, r, thief.URL+"/steal", status)
				}))
				defer base.Close()
				c, err := NewClient(testKey, WithBaseURL(base.URL+"/v1"), WithRetryWait(time.Millisecond, time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				err = call(context.Background(), c)
				if !errors.Is(err, ErrRedirectRefused) {
					t.Fatalf("err = %v, want ErrRedirectRefused", err)
				}
				if !strings.Contains(err.Error(), "another origin") || strings.Contains(err.Error(), "/steal") {
					t.Errorf("error %q: want it to say another origin, without the target's path", err)
				}
				if n := thief.requests.Load(); n != 0 || thief.sawKey.Load() {
					t.Fatalf("the other origin got %d requests (key seen: %v)", n, thief.sawKey.Load())
				}
				if n := hits.Load(); n != 1 {
					t.Errorf("the base URL got %d requests, want 1: a refused redirect is not retried", n)
				}
			})
		}
	}

	t.Run("https to http on the same host and port", func(t *testing.T) {
		t.Parallel()
		var hits atomic.Int32
		base := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, "http://"+r.Host+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		defer base.Close()
		c, err := NewClient(testKey, WithBaseURL(base.URL+"/v1"), WithHTTPClient(base.Client()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Contexts.Get(context.Background(), "ctx_1"); !errors.Is(err, ErrRedirectRefused) || hits.Load() != 1 {
			t.Errorf("err = %v after %d requests, want ErrRedirectRefused after 1", err, hits.Load())
		}
	})
}

// TestRedirectsWithinTheOrigin: a redirect to the base URL's own origin is
// followed with the key; a loop, or one redirect too many, is an error at
// once, not a transport failure retried.
func TestRedirectsWithinTheOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		redirect func(path string) string // where a request to path goes; "" answers
		wantErr  error
		wantHits int
	}{
		{name: "followed", redirect: func(p string) string {
			if p == "/v1/contexts/ctx_1" {
				return "/v1/contexts/ctx_moved"
			}
			return ""
		}, wantHits: 2},
		{name: "to itself", redirect: func(p string) string { return p }, wantErr: ErrRedirectRefused, wantHits: 1},
		{name: "a loop of two", redirect: func(p string) string {
			if p == "/v1/a" {
				return "/v1/contexts/ctx_1"
			}
			return "/v1/a"
		}, wantErr: ErrRedirectRefused, wantHits: 2},
		{name: "endless", redirect: func(p string) string {
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/v1/r"))
			return "/v1/r" + strconv.Itoa(n+1)
		}, wantErr: ErrRedirectRefused, wantHits: maxRedirects + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			var keyless atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.Header.Get("Authorization") != "Bearer "+testKey {
					keyless.Store(true)
				}
				if to := tt.redirect(r.URL.Path); to != "" {
					http.Redirect(w, r, to, http.StatusFound)
					return
				}
				io.WriteString(w, `{"id":"ctx_moved"}`)
			}))
			defer srv.Close()
			c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"), WithRetryWait(time.Millisecond, time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Contexts.Get(context.Background(), "ctx_1")
			if tt.wantErr == nil && (err != nil || got.ID != "ctx_moved") {
				t.Errorf("Get = %+v, %v; want ctx_moved", got, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if n := int(hits.Load()); n != tt.wantHits {
				t.Errorf("%d requests, want %d", n, tt.wantHits)
			}
			if keyless.Load() {
				t.Error("a redirect within the origin lost the key")
			}
		})
	}
}

// gzipOf returns the gzip encoding of n zero bytes: a stream of 1 MiB
// members (gzip readers read a multi-member stream as one), so that a large
// answer costs the test almost nothing to make.
func gzipOf(t testing.TB, n int) []byte {
	t.Helper()
	var member bytes.Buffer
	zw := gzip.NewWriter(&member)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(member.Bytes(), n>>20)
}

// bigAnswer serves a 2xx answer of size bytes of JSON-ish filler: with its
// Content-Length, without (chunked), or gzip-encoded (size counted
// decompressed). It stops writing when the client goes away.
func bigAnswer(t testing.TB, mode string, size int) http.Handler {
	var gz []byte
	if mode == "gzip" {
		gz = gzipOf(t, size)
	}
	chunk := bytes.Repeat([]byte(" "), 64<<10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch mode {
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
			return
		case "length":
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		for left := size; left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	})
}

// TestAnswerSizeBound: every answer the client reads is bounded, counted
// after decompression: the typed operations, Do (decoding or copying) and
// an export's Body fail with ErrResponseTooLarge past WithMaxResponseBytes,
// and an answer of exactly the bound is read.
func TestAnswerSizeBound(t *testing.T) {
	t.Parallel()
	const bound = 2 << 20
	calls := readingCalls()
	calls["Export"] = func(ctx context.Context, c *Client) error {
		exp, err := c.Contexts.Export(ctx, "ctx_1", nil)
		if err != nil {
			return err
		}
		defer exp.Body.Close()
		_, err = io.Copy(io.Discard, exp.Body)
		return err
	}
	for _, mode := range []string{"length", "chunked", "gzip"} {
		for name, call := range calls {
			t.Run(mode+" "+name, func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(bigAnswer(t, mode, 4*bound))
				defer srv.Close()
				c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"), WithMaxResponseBytes(bound))
				if err != nil {
					t.Fatal(err)
				}
				if err := call(context.Background(), c); !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("err = %v, want ErrResponseTooLarge", err)
				}
			})
		}
	}

	t.Run("exactly the bound", func(t *testing.T) {
		t.Parallel()
		body := `{"id":"ctx_1"}`
		c, mt, _ := newTestClient(t, WithMaxResponseBytes(int64(len(body))))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(200, body))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_2", respond(200, body+" "))
		if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
			t.Errorf("an answer of exactly the bound: %v", err)
		}
		if _, err := c.Contexts.Get(context.Background(), "ctx_2"); !errors.Is(err, ErrResponseTooLarge) {
			t.Errorf("an answer one byte over the bound: %v, want ErrResponseTooLarge", err)
		}
	})
}

// TestAnswerSizeBoundHeap: with the default bound, a 256 MiB answer, plain
// or gzip-encoded (a few hundred KiB on the wire), fails with
// ErrResponseTooLarge, and the client allocates at most 128 MiB reading it.
// Not parallel: it counts the process's allocations.
func TestAnswerSizeBoundHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	const size = 256 << 20
	for _, mode := range []string{"chunked", "gzip"} {
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(bigAnswer(t, mode, size))
			defer srv.Close()
			c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"))
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = c.Contexts.Get(context.Background(), "ctx_1")
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrResponseTooLarge) {
				t.Fatalf("err = %v, want ErrResponseTooLarge", err)
			}
			grew := after.TotalAlloc - before.TotalAlloc
			if grew > 128<<20 {
				t.Errorf("reading the answer allocated %d MiB, want at most 128", grew>>20)
			}
			t.Logf("a %d MiB answer (%s): %s after %d MiB allocated", size>>20, mode, err, grew>>20)
		})
	}
}

// keyEchoForms returns the ways a server may echo key inside a JSON
// string: as it is, every character \u-escaped (lower- and upper-case hex),
// and mixed with the short escapes JSON has for "/" and "\".
func keyEchoForms(key string) map[string]string {
	var lower, upper, mixed strings.Builder
	for i, r := range key {
		fmt.Fprintf(&lower, `\u%04x`, r)
		fmt.Fprintf(&upper, `\u%04X`, r)
		switch {
		case r == '/':
			mixed.WriteString(`\/`)
		case i%2 == 0:
			fmt.Fprintf(&mixed, `\u%04x`, r)
		default:
			mixed.WriteRune(r)
		}
	}
	return map[string]string{"literal": key, "escaped": lower.String(), "escaped upper": upper.String(), "mixed": mixed.String()}
}

// TestKeyEchoRedacted: a server echoing the key, in any JSON escaping,
// anywhere in an error body (or in its request id header), never puts it
// into the error: not Error(), not %+v, not Message, not Body. An echo cut
// by the 4 KiB limit leaves no part of the key behind.
func TestKeyEchoRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk_live/abc&def_0123456789abcdef"
	secret := key[len("sk_live/"):] // what must not show, even in part
	type echo struct{ name, body, header string }
	var echoes []echo
	for form, e := range keyEchoForms(key) {
		echoes = append(echoes,
			echo{name: form + " in message", body: `{"error":{"type":"unauthorized","message":"bad key ` + e + `"}}`},
			echo{name: form + " in request id", body: `{"error":{"type":"unauthorized","requestId":"` + e + `"}}`},
			echo{name: form + " in text", body: "Authorization: Bearer " + e},
			echo{name: form + " across the cut", body: `{"message":"` + strings.Repeat("x", maxErrorBody-20) + e + `"}`},
		)
	}
	echoes = append(echoes,
		echo{name: "in the request id header", header: key},
		echo{name: "escaped in the request id header", header: keyEchoForms(key)["escaped"]},
		echo{name: "escaped twice in a message", body: `{"message":"` + strings.ReplaceAll(keyEchoForms(key)["escaped"], `\`, `\\`) + `"}`},
		echo{name: "cut short by the server", body: `{"message":"` + strings.Repeat("x", 100) + key[:len(key)-5]},
		echo{name: "escaped, cut short by the server", body: `{"message":"` + keyEchoForms(key)["escaped"][:6*(len(key)-5)]},
	)
	for _, tt := range echoes {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mt := httpmock.NewMockTransport()
			mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(401, tt.body)
				if tt.header != "" {
					resp.Header.Set("X-Request-Id", tt.header)
				}
				return resp, nil
			})
			c, err := NewClient(key, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Contexts.Get(context.Background(), "ctx_1")
			var apiErr *Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *Error", err)
			}
			shown := map[string]string{
				"Error()": err.Error(), "%+v": fmt.Sprintf("%+v", err), "Message": apiErr.Message,
				"RequestID": apiErr.RequestID, "Body": string(apiErr.Body), "Body unescaped": jsonUnescape(string(apiErr.Body)),
				"Error() unescaped": jsonUnescape(err.Error()), "Message unescaped": jsonUnescape(apiErr.Message),
				"RequestID unescaped": jsonUnescape(apiErr.RequestID),
			}
			for where, s := range shown {
				for i := 0; i+8 <= len(secret); i++ {
					if strings.Contains(s, secret[i:i+8]) {
						t.Fatalf("%s shows part of the key (%q): %q", where, secret[i:i+8], s)
					}
				}
			}
		})
	}
}

// jsonUnescape undoes JSON's escapes in s, wherever they are.
func jsonUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == 'u' && i+6 <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 5
					continue
				}
			}
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestMalformedAnswers: a 2xx answer that is not what the operation returns
// is an ErrMalformedResponse, never an empty value or an empty page.
func TestMalformedAnswers(t *testing.T) {
	t.Parallel()
	get := func(ctx context.Context, c *Client) error { _, err := c.Contexts.Get(ctx, "ctx_1"); return err }
	list := func(ctx context.Context, c *Client) error { _, err := c.Contexts.List(ctx, nil); return err }
	versions := func(ctx context.Context, c *Client) error {
		_, err := c.Contexts.ListVersions(ctx, "ctx_1", nil)
		return err
	}
	tests := []struct {
		name string
		body string
		call func(context.Context, *Client) error
	}{
		{"Get null", `null`, get},
		{"Get {}", `{}`, get},
		{"Get without id", `{"name":"n","version":1}`, get},
		{"Get empty id", `{"id":"","name":"n"}`, get},
		{"Get a list", `[{"id":"ctx_1"}]`, get},
		{"Get a string", `"ctx_1"`, get},
		{"Get trailing data", `{"id":"ctx_1"} {"id":"ctx_2"}`, get},
		{"Get not JSON", `<html>`, get},
		{"Get empty", ``, get},
		{"Create {}", `{}`, func(ctx context.Context, c *Client) error {
			_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"})
			return err
		}},
		{"Update null", `null`, func(ctx context.Context, c *Client) error {
			_, err := c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Name: Ptr("n")})
			return err
		}},
		{"Register {}", `{}`, func(ctx context.Context, c *Client) error {
			_, err := c.Webhooks.Register(ctx, &RegisterWebhookRequest{URL: "https://h.test", Events: []EventType{EventContextCreated}, Secret: "s"})
			return err
		}},
		{"List null", `null`, list},
		{"List {}", `{}`, list},
		{"List data null", `{"data":null,"hasMore":false}`, list},
		{"List of null", `[null]`, list},
		{"List data of null", `{"data":[null],"hasMore":false}`, list},
		{"List with a null entry", `{"data":[{"id":"ctx_1"},null]}`, list},
		{"List with an entry without id", `{"data":[{"id":"ctx_1"},{"name":"n"}]}`, list},
		{"List trailing data", `{"data":[]}]`, list},
		{"versions without contextId", `{"data":[{"version":1}]}`, versions},
		{"versions numbered 0", `{"data":[{"contextId":"ctx_1","version":0}]}`, versions},
		{"Do trailing data", `{"a":1}garbage`, func(ctx context.Context, c *Client) error {
			req, _ := c.NewRequest(ctx, http.MethodGet, "contexts", nil)
			var v map[string]int
			_, err := c.Do(ctx, req, &v)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterNoResponder(respond(200, tt.body))
			if err := tt.call(context.Background(), c); !errors.Is(err, ErrMalformedResponse) {
				t.Errorf("err = %v, want ErrMalformedResponse", err)
			}
		})
	}
}

// cursorServer answers list pages from a table: cursor -> (items, next).
// It counts the pages it served.
func cursorServer(pages map[string]string, count *atomic.Int32) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		count.Add(1)
		cur := r.URL.Query().Get("cursor")
		body, ok := pages[cur]
		if !ok {
			// A fresh cursor every time, and an empty page.
			n, _ := strconv.Atoi(strings.TrimPrefix(cur, "fresh"))
			body = fmt.Sprintf(`{"data":[],"hasMore":true,"nextCursor":"fresh%d"}`, n+1)
		}
		return httpmock.NewStringResponse(200, body), nil
	}
}

// TestPaginationLoops: pages that would never end (a cursor cycle, endless
// empty pages, more without a cursor) end All and AllVersions with
// ErrPaginationLoop, after every item was yielded once, within a few
// pages.
func TestPaginationLoops(t *testing.T) {
	t.Parallel()
	page := func(item, next string) string {
		items := ""
		if item != "" {
			items = `{"id":"` + item + `","contextId":"ctx_1","version":1}`
		}
		return `{"data":[` + items + `],"hasMore":true,"nextCursor":"` + next + `"}`
	}
	tests := []struct {
		name      string
		pages     map[string]string
		wantItems int
		maxPages  int32
	}{
		{name: "A, B, A", pages: map[string]string{"": page("a", "A"), "A": page("b", "B"), "B": page("c", "A")}, wantItems: 3, maxPages: 3},
		{name: "a cycle after a tail", pages: map[string]string{
			"": page("0", "A"), "A": page("1", "B"), "B": page("2", "C"), "C": page("3", "D"), "D": page("4", "E"), "E": page("5", "C"),
		}, wantItems: 6, maxPages: 6},
		{name: "the same cursor", pages: map[string]string{"": page("0", "A"), "A": page("1", "A")}, wantItems: 2, maxPages: 2},
		{name: "more without a cursor", pages: map[string]string{"": page("0", "")}, wantItems: 1, maxPages: 1},
		{name: "endless empty pages", pages: map[string]string{"": page("0", "fresh0")}, wantItems: 1, maxPages: MaxEmptyPages + 2},
	}
	for _, tt := range tests {
		for _, which := range []string{"All", "AllVersions"} {
			t.Run(which+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				c, mt, _ := newTestClient(t)
				var pages atomic.Int32
				mt.RegisterNoResponder(cursorServer(tt.pages, &pages))
				seq := c.Contexts.All(context.Background(), nil)
				if which == "AllVersions" {
					vs := c.Contexts.AllVersions(context.Background(), "ctx_1", nil)
					seq = func(yield func(*Context, error) bool) {
						for v, err := range vs {
							cx := &Context{}
							if err == nil {
								cx.ID = strconv.Itoa(v.Version)
							}
							if !yield(cx, err) {
								return
							}
						}
					}
				}
				items, errs := 0, 0
				for _, err := range seq {
					if err != nil {
						errs++
						if !errors.Is(err, ErrPaginationLoop) {
							t.Errorf("err = %v, want ErrPaginationLoop", err)
						}
						continue
					}
					items++
					if pages.Load() > 100 {
						t.Fatal("still paging after 100 pages")
					}
				}
				if errs != 1 || items != tt.wantItems || pages.Load() > tt.maxPages {
					t.Errorf("%d items, %d errors after %d pages; want %d items, 1 error, at most %d pages",
						items, errs, pages.Load(), tt.wantItems, tt.maxPages)
				}
			})
		}
	}
}

// TestCursorSetBeyondItsMemory: past the cursors it remembers exactly, a
// cycle is still found, within a few times the pages fetched so far.
func TestCursorSetBeyondItsMemory(t *testing.T) {
	t.Parallel()
	var s cursorSet
	s.repeated("start")
	const tail = maxTrackedCursors + 1000
	for i := range tail {
		if s.repeated("c" + strconv.Itoa(i)) {
			t.Fatalf("cursor %d reported as repeated", i)
		}
	}
	const cycle = 7
	for i := range 4 * (tail + cycle) {
		if s.repeated("loop" + strconv.Itoa(i%cycle)) {
			if i < cycle {
				t.Fatalf("reported at step %d, before the cycle came round", i)
			}
			return
		}
	}
	t.Fatalf("a cycle of %d after %d other cursors not found", cycle, tail)
}

// TestErrorTextIsBoundedAndInert: whatever the server puts into an error
// (a 512 KiB request id, a huge number, line breaks and terminal escapes
// to forge log lines), Error() is one line of at most 8 KiB with no
// control character.
func TestErrorTextIsBoundedAndInert(t *testing.T) {
	t.Parallel()
	forged := "fine\ntime=2026-11-21T20:51:00Z level=INFO msg=\"user admin logged in\"\x1b[2J\u202e\u2028"
	huge := strings.Repeat("r", 512<<10)
	tests := []struct {
		name   string
		status int
		body   string
		header string // X-Request-Id
	}{
		{"512 KiB request id with control characters", 500, `{}`, huge + forged},
		{"2 MiB of headers", 200, `{"id":"ctx_1"}`, strings.Repeat(huge, 4)},
		{"forged message", 400, `{"error":{"type":"invalid_request","message":` + strconv.Quote(forged) + `}}`, ""},
		{"forged everything", 400, `{"error":{"type":` + strconv.Quote(forged) + `,"message":` + strconv.Quote(forged+huge) +
			`,"param":` + strconv.Quote(forged) + `,"requestId":` + strconv.Quote(forged) + `}}`, ""},
		{"a body of control characters", 502, "\x1b[31m\x00\x07" + forged, ""},
		{"a huge number in a 2xx answer", 200, `{"id":"ctx_1","version":` + strings.Repeat("9", 1<<20) + `}`, ""},
		{"a huge string of the wrong type in a 2xx answer", 200, `{"id":"ctx_1","version":"` + huge + forged + `"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					// Set directly: the server writes the value as it is.
					w.Header()["X-Request-Id"] = []string{tt.header}
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"), WithMaxRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Contexts.Get(context.Background(), "ctx_1")
			if err == nil {
				t.Fatal("no error")
			}
			checkInert(t, err.Error(), 8<<10)
			if e, ok := errors.AsType[*Error](err); ok {
				for _, f := range []string{e.Type, e.Message, e.Param, e.RequestID} {
					checkInert(t, f, maxErrorMessage+len("…"))
				}
			}
		})
	}

	t.Run("transport error", func(t *testing.T) {
		t.Parallel()
		c, mt, _ := newTestClient(t, WithMaxRetries(0))
		mt.RegisterNoResponder(httpmock.NewErrorResponder(errors.New(huge + forged)))
		_, err := c.Contexts.Get(context.Background(), "ctx_1")
		checkInert(t, err.Error(), 8<<10)
	})
}

// checkInert fails the test when s is longer than max bytes or holds a
// control or format character.
func checkInert(t *testing.T, s string, limit int) {
	t.Helper()
	if len(s) > limit {
		t.Errorf("%d bytes, want at most %d: %.200q…", len(s), limit, s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
	}); i >= 0 {
		t.Errorf("a control character at %d: %.200q", i, s[max(0, i-40):])
	}
}

func TestInert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"req_123", 256, "req_123"},
		{"a\nb\r\tc", 256, `a\nb\r\tc`},
		{"\x1b[2J\x00\x7f", 256, `\x1b[2J\x00\x7f`},
		{"évil\u202etxt.exe\u2028", 256, `évil\u202etxt.exe\u2028`},
		{"bad \xff utf-8", 256, `bad \xff utf-8`},
		{"abcdefghij", 5, "abcde…"},
		{"ab\ncd", 4, `ab\n…`},
		{"ab\ncd", 3, `ab…`},
		{"日本語", 4, "日…"},
	}
	for _, tt := range tests {
		if got := inert(tt.in, tt.max); got != tt.want {
			t.Errorf("inert(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range []string{"req_1", "a\nb", "\x1b[2J", "\u202e", "\xff\xfe", "日本語"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = limit&0x3ff + 1
		got := inert(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("inert(%q, %d) = %q: invalid UTF-8", s, limit, got)
		}
		if len(got) > limit+len("…") {
			t.Fatalf("inert(%q, %d) = %q: %d bytes", s, limit, got, len(got))
		}
		if strings.IndexFunc(got, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) }) >= 0 {
			t.Fatalf("inert(%q, %d) = %q: a control character", s, limit, got)
		}
	})
}

// TestWaitsThatOutliveTheDeadline: when the wait before a retry cannot end
// before the context's deadline, the call returns the answer it got at
// once (errors.Is(err, ErrRateLimited) holds), instead of sleeping until
// the deadline and returning only that. A Retry-After of 0 still waits the
// minimum back-off.
func TestWaitsThatOutliveTheDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      []Option
		answers   []httpmock.Responder
		deadline  time.Duration
		wantErr   error
		wantTook  time.Duration
		wantSends int
	}{
		{name: "Retry-After 29 s, deadline 5 s", answers: []httpmock.Responder{respond(429, `{}`, "Retry-After", "29")},
			deadline: 5 * time.Second, wantErr: ErrRateLimited, wantSends: 1},
		{name: "back-off 2 s, deadline 1 s", opts: []Option{WithRetryWait(2*time.Second, 2*time.Second)},
			answers: []httpmock.Responder{respond(503, `{}`)}, deadline: time.Second, wantErr: ErrServer, wantSends: 1},
		{name: "a retry that fits, then one that does not", opts: []Option{WithRetryWait(time.Second, time.Second)},
			answers:  []httpmock.Responder{respond(429, `{}`, "Retry-After", "1"), respond(429, `{}`, "Retry-After", "3")},
			deadline: 3 * time.Second, wantErr: ErrRateLimited, wantTook: time.Second, wantSends: 2},
		{name: "Retry-After 0 keeps the minimum wait", opts: []Option{WithRetryWait(500*time.Millisecond, time.Second), WithMaxRetries(3)},
			answers: []httpmock.Responder{respond(429, `{}`, "Retry-After", "0")}, wantErr: ErrRateLimited,
			wantTook: 3 * 500 * time.Millisecond, wantSends: 4},
		{name: "a transport error when the minimum wait cannot fit", opts: []Option{WithRetryWait(2*time.Second, 2*time.Second)},
			answers:  []httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset by peer"))},
			deadline: time.Second, wantErr: nil, wantSends: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c, mt, rec := newTestClient(t, tt.opts...)
				mt.RegisterNoResponder(rec.wrap(sequence(tt.answers...)))
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				start := time.Now()
				_, err := c.Contexts.Get(ctx, "ctx_1")
				took := time.Since(start)
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == nil && (err == nil || errors.Is(err, context.DeadlineExceeded)) {
					t.Errorf("err = %v, want the transport error", err)
				}
				if took != tt.wantTook || rec.count() != tt.wantSends {
					t.Errorf("returned after %v and %d requests, want %v and %d", took, rec.count(), tt.wantTook, tt.wantSends)
				}
			})
		})
	}
}

// stallingBody is a body whose bytes never come: a transport that ignores
// the request's context, as a caller's own RoundTripper may. Closing it
// ends a pending read.
type stallingBody struct {
	once   sync.Once
	closed chan struct{}
}

func (b *stallingBody) Read([]byte) (int, error) {
	<-b.closed
	return 0, errors.New("read on a closed body")
}

func (b *stallingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestSlowBodyEndsAtTheDeadline: a 2xx answer whose body stalls ends at
// the context's deadline with an error (errors.Is DeadlineExceeded), over
// net/http's own transport and over one that does not watch the context.
func TestSlowBodyEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	calls := readingCalls()
	for _, transport := range []string{"net/http", "context-blind"} {
		for name, call := range calls {
			t.Run(transport+" "+name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					var hc *http.Client
					base := pipeBase
					if transport == "net/http" {
						_, hc = servePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							w.Header().Set("Content-Type", "application/json")
							io.WriteString(w, `{"id":"ctx_1","na`)
							http.NewResponseController(w).Flush()
							<-r.Context().Done() // the rest never comes
						}))
					} else {
						mt := httpmock.NewMockTransport()
						mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
							return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &stallingBody{closed: make(chan struct{})},
								ContentLength: -1, Request: r}, nil
						})
						hc, base = &http.Client{Transport: mt}, testBase
					}
					c, err := NewClient(testKey, WithBaseURL(base), WithHTTPClient(hc))
					if err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					defer cancel()
					start := time.Now()
					err = call(ctx, c)
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("err = %v, want context.DeadlineExceeded", err)
					}
					if took := time.Since(start); took != 2*time.Second {
						t.Errorf("returned after %v, want at the 2 s deadline", took)
					}
				})
			})
		}
	}
}

// TestOneDecoder: the typed operations, Do and ParseEvent accept the same
// bytes (RFC 3339 times with a lower-case "t" and "z") and refuse the same
// bytes (trailing data).
func TestOneDecoder(t *testing.T) {
	t.Parallel()
	const at = "2026-11-21t20:51:00.123z"
	want := time.Date(2026, 11, 21, 20, 51, 0, 123e6, time.UTC)
	for _, tt := range []struct {
		name    string
		suffix  string
		wantErr bool
	}{{"lower-case t and z", "", false}, {"trailing data", " {}", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterNoResponder(respond(200, `{"id":"ctx_1","createdAt":"`+at+`"}`+tt.suffix))
			got, err := c.Contexts.Get(context.Background(), "ctx_1")
			if (err != nil) != tt.wantErr || err == nil && !got.CreatedAt.Equal(want) {
				t.Errorf("Get: %+v, %v", got, err)
			}
			req, _ := c.NewRequest(context.Background(), http.MethodGet, "contexts/ctx_1", nil)
			var viaDo Context
			if _, err := c.Do(context.Background(), req, &viaDo); (err != nil) != tt.wantErr || err == nil && !viaDo.CreatedAt.Equal(want) {
				t.Errorf("Do: %+v, %v", viaDo, err)
			}
			ev, err := ParseEvent([]byte(`{"id":"evt_1","type":"context.created","timestamp":"` + at +
				`","data":{"contextId":"ctx_1","name":"n","version":1}}` + tt.suffix))
			if (err != nil) != tt.wantErr || err == nil && !ev.Timestamp.Equal(want) {
				t.Errorf("ParseEvent: %+v, %v", ev, err)
			}
		})
	}
}

// FuzzRedactKey: whatever the body, no echo of the key, literal or
// JSON-escaped, survives redactKey, and the result is cut to the limit.
func FuzzRedactKey(f *testing.F) {
	for form, e := range keyEchoForms("sk_live/abc&def_0123") {
		f.Add(`{"message":"`+e+`"}`, "sk_live/abc&def_0123", 64)
		f.Add(form+e[:len(e)/2], "sk_live/abc&def_0123", 16)
	}
	f.Add(`\u00e9\ud83d\ude00`, "é😀", 8)
	f.Fuzz(func(t *testing.T, body, key string, limit int) {
		if key == "" || strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f || r == utf8.RuneError }) {
			return // NewClient refuses such keys
		}
		if strings.ContainsAny(key, "[]") || strings.Contains(redacted, key) {
			return // the marker itself would spell the key
		}
		limit = limit&0xfff + 1
		out := string(redactKey([]byte(body), key, limit))
		for form, e := range keyEchoForms(key) {
			if strings.Contains(out, e) {
				t.Fatalf("redactKey(%q, %q, %d) = %q: the key is still there (%s)", body, key, limit, out, form)
			}
		}
		if len(out) > limit {
			t.Fatalf("redactKey(%q, %q, %d) = %d bytes", body, key, limit, len(out))
		}
	})
}

// readingCalls are the calls that read a 2xx answer's body, by name: the
// typed operations, and Do decoding it or copying it into a writer.
func readingCalls() map[string]func(context.Context, *Client) error {
	return map[string]func(context.Context, *Client) error{
		"Get":  func(ctx context.Context, c *Client) error { _, err := c.Contexts.Get(ctx, "ctx_1"); return err },
		"List": func(ctx context.Context, c *Client) error { _, err := c.Contexts.List(ctx, nil); return err },
		"Do": func(ctx context.Context, c *Client) error {
			req, _ := c.NewRequest(ctx, http.MethodGet, "contexts", nil)
			var v any
			_, err := c.Do(ctx, req, &v)
			return err
		},
		"Do into a writer": func(ctx context.Context, c *Client) error {
			req, _ := c.NewRequest(ctx, http.MethodGet, "contexts", nil)
			_, err := c.Do(ctx, req, io.Discard)
			return err
		},
	}
}

// hang is a handler that never answers: the connection is accepted and the
// request read, but no headers ever come, until the client goes away.
// (net/http's server sees the client go only once the body was read.)
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// stallAfter answers status with the first bytes of body, then stalls
// until the client goes away.
func stallAfter(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

// pipeClient is a client with the default bounds on servePipe's network
// (inside a synctest bubble: every wait is on the bubble's clock).
func pipeClient(t *testing.T, h http.Handler, opts ...Option) *Client {
	t.Helper()
	_, hc := servePipe(t, h)
	c, err := NewClient(testKey, append([]Option{WithBaseURL(pipeBase), WithHTTPClient(hc)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// boundedCalls are the calls whose time the client bounds, by name: every
// kind of operation, Do (decoding, and copying into a writer), a page of
// All, and Export (whose call ends with the answer's headers).
func boundedCalls() map[string]func(context.Context, *Client, *Response) error {
	return map[string]func(context.Context, *Client, *Response) error{
		"Get": func(ctx context.Context, c *Client, r *Response) error {
			_, err := c.Contexts.Get(ctx, "ctx_1", WithResponseInto(r))
			return err
		},
		"Create": func(ctx context.Context, c *Client, r *Response) error {
			_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, WithResponseInto(r))
			return err
		},
		"Delete": func(ctx context.Context, c *Client, r *Response) error {
			_, err := c.Contexts.Delete(ctx, "ctx_1", WithResponseInto(r))
			return err
		},
		"All": func(ctx context.Context, c *Client, r *Response) error {
			for _, err := range c.Contexts.All(ctx, nil, WithResponseInto(r)) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Export": func(ctx context.Context, c *Client, r *Response) error {
			exp, err := c.Contexts.Export(ctx, "ctx_1", nil, WithResponseInto(r))
			if err == nil {
				exp.Body.Close()
			}
			return err
		},
		"Do": func(ctx context.Context, c *Client, r *Response) error {
			req, _ := c.NewRequest(ctx, http.MethodGet, "contexts", nil)
			var v any
			_, err := c.Do(ctx, req, &v, WithResponseInto(r))
			return err
		},
		"Do into a writer": func(ctx context.Context, c *Client, r *Response) error {
			req, _ := c.NewRequest(ctx, http.MethodPost, "contexts/ctx_1/publish", nil)
			_, err := c.Do(ctx, req, io.Discard, WithResponseInto(r))
			return err
		},
	}
}

// TestSilentServerEndsTheCall: against a server that accepts the
// connection and never answers, every call with context.Background() ends
// by default: each attempt after DefaultHeaderTimeout (and is retried), the
// call at DefaultCallTimeout, with an error that is ErrTimeout and
// context.DeadlineExceeded. A PATCH, which is not retried, ends after its
// one attempt.
func TestSilentServerEndsTheCall(t *testing.T) {
	t.Parallel()
	for name, call := range boundedCalls() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, http.HandlerFunc(hang))
				var resp Response
				start := time.Now()
				err := call(context.Background(), c, &resp)
				took := time.Since(start)
				if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v, want ErrTimeout and context.DeadlineExceeded", err)
				}
				// 30 s per attempt and the waits between them: the fourth
				// attempt is cut by the call's 2 minutes.
				if took != DefaultCallTimeout || resp.Attempts != 4 {
					t.Errorf("returned after %v and %d attempts, want %v and 4", took, resp.Attempts, DefaultCallTimeout)
				}
				if !strings.Contains(err.Error(), "WithCallTimeout") {
					t.Errorf("error %q does not name the bound", err)
				}
				if te, ok := errors.AsType[interface {
					error
					Timeout() bool
				}](err); !ok || !te.Timeout() {
					t.Errorf("error %q does not report Timeout() true", err)
				}
			})
		})
	}

	t.Run("PATCH", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			c := pipeClient(t, http.HandlerFunc(hang))
			req, _ := c.NewRequest(context.Background(), http.MethodPatch, "contexts/ctx_1", map[string]string{"name": "n"})
			start := time.Now()
			var resp Response
			_, err := c.Do(context.Background(), req, nil, WithResponseInto(&resp))
			if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "WithHeaderTimeout") {
				t.Errorf("err = %v, want ErrTimeout naming WithHeaderTimeout", err)
			}
			if took := time.Since(start); took != DefaultHeaderTimeout || resp.Attempts != 1 {
				t.Errorf("returned after %v and %d attempts, want %v and 1", took, resp.Attempts, DefaultHeaderTimeout)
			}
		})
	})
}

// TestStalledBodyEndsTheCall: an answer whose body stops coming ends the
// call DefaultStallTimeout after its last bytes: a 404 after 9 bytes is
// the 404's *Error (ErrNotFound) with those bytes, a 2xx an ErrTimeout.
// It holds over a transport that does not watch the context too.
func TestStalledBodyEndsTheCall(t *testing.T) {
	t.Parallel()
	t.Run("404 after 9 bytes", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			c := pipeClient(t, stallAfter(404, `{"error":`))
			start := time.Now()
			_, err := c.Contexts.Get(context.Background(), "ctx_1")
			e, ok := errors.AsType[*Error](err)
			if !ok || !errors.Is(err, ErrNotFound) || string(e.Body) != `{"error":` {
				t.Fatalf("err = %v, want the 404's *Error with its 9 bytes", err)
			}
			if took := time.Since(start); took != DefaultStallTimeout {
				t.Errorf("returned after %v, want %v", took, DefaultStallTimeout)
			}
		})
	})
	for name, call := range readingCalls() {
		t.Run("2xx "+name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, stallAfter(200, `{"id":"ctx_1","na`))
				start := time.Now()
				err := call(context.Background(), c)
				if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "WithStallTimeout") {
					t.Fatalf("err = %v, want ErrTimeout naming WithStallTimeout", err)
				}
				if took := time.Since(start); took != DefaultStallTimeout {
					t.Errorf("returned after %v, want %v", took, DefaultStallTimeout)
				}
			})
		})
	}
	t.Run("a transport that does not watch the context", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			mt := httpmock.NewMockTransport()
			mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &stallingBody{closed: make(chan struct{})},
					ContentLength: -1, Request: r}, nil
			})
			c, err := NewClient(testKey, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}), WithStallTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.Contexts.Get(context.Background(), "ctx_1")
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("err = %v, want ErrTimeout", err)
			}
			if took := time.Since(start); took != 5*time.Second {
				t.Errorf("returned after %v, want 5s", took)
			}
		})
	})
}

// TestExportBodyBounds: an export's Body is bounded by the stall bound
// while it is read, not by the call's: a document that keeps coming,
// slowly, for longer than the call's bound is read to its end, and one
// that stops coming fails its read DefaultStallTimeout after its last
// bytes. Time the caller spends between reads does not count.
func TestExportBodyBounds(t *testing.T) {
	t.Parallel()
	t.Run("slow but steady", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			const chunks = 20 // one every 20 s: 400 s in all
			c := pipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/markdown")
				for range chunks {
					io.WriteString(w, "# line\n")
					http.NewResponseController(w).Flush()
					time.Sleep(20 * time.Second)
				}
			}))
			exp, err := c.Contexts.Export(context.Background(), "ctx_1", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Body.Close()
			// The caller takes its time too, between reads.
			time.Sleep(time.Hour)
			b, err := io.ReadAll(exp.Body)
			if err != nil || len(b) != chunks*len("# line\n") {
				t.Errorf("read %d bytes, %v; want %d bytes", len(b), err, chunks*len("# line\n"))
			}
		})
	})
	t.Run("stalls", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			c := pipeClient(t, stallAfter(200, "# Deploy\n\nFirst"))
			exp, err := c.Contexts.Export(context.Background(), "ctx_1", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Body.Close()
			start := time.Now()
			b, err := io.ReadAll(exp.Body)
			if string(b) != "# Deploy\n\nFirst" || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("read %q, %v; want the first bytes, then ErrTimeout", b, err)
			}
			if took := time.Since(start); took != DefaultStallTimeout {
				t.Errorf("the read failed after %v, want %v", took, DefaultStallTimeout)
			}
		})
	})
}

// blockingLimiter never grants a request: it waits for its context.
type blockingLimiter struct{}

func (blockingLimiter) Wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestCallBoundAcrossRetries: the call's bound covers its attempts and the
// waits between them. A retry whose wait (a Retry-After the service asks
// for) would end past the bound is not begun: the call returns the answer
// it got at once. A wait for the rate limiter ends at the bound. A caller's
// earlier deadline still ends the call first (then it is not ErrTimeout);
// a later one does not extend it.
func TestCallBoundAcrossRetries(t *testing.T) {
	t.Parallel()
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "25")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	tests := []struct {
		name         string
		h            http.Handler
		opts         []Option
		deadline     time.Duration // the caller's, 0: context.Background()
		wantErr      error
		wantNot      error
		wantTook     time.Duration
		wantAttempts int
	}{
		{name: "Retry-After past what is left", h: unavailable, opts: []Option{WithMaxRetries(10)},
			wantErr: ErrServer, wantNot: ErrTimeout, wantTook: 100 * time.Second, wantAttempts: 5},
		{name: "a shorter call bound", h: http.HandlerFunc(hang), opts: []Option{WithCallTimeout(45 * time.Second)},
			wantErr: ErrTimeout, wantTook: 45 * time.Second, wantAttempts: 2},
		{name: "a shorter header bound", h: http.HandlerFunc(hang), opts: []Option{WithHeaderTimeout(time.Second), WithMaxRetries(1), WithRetryWait(time.Millisecond, time.Millisecond)},
			wantErr: ErrTimeout, wantTook: 2*time.Second + time.Millisecond, wantAttempts: 2},
		// A middleware cannot lift the bound, even with a context that
		// never ends.
		{name: "through middleware", h: http.HandlerFunc(hang), opts: []Option{WithMiddleware(Middleware{
			Call: func(ctx context.Context, _ *Call, next CallNext) (*http.Response, error) {
				return next(context.WithoutCancel(ctx))
			},
		})}, wantErr: ErrTimeout, wantTook: DefaultCallTimeout, wantAttempts: 4},
		{name: "the rate limiter", h: http.HandlerFunc(hang), opts: []Option{WithLimiter(blockingLimiter{})},
			wantErr: ErrTimeout, wantTook: DefaultCallTimeout, wantAttempts: 0},
		// The first attempt is cut by the header bound at 30 s, the
		// second by the caller's deadline.
		{name: "the caller's earlier deadline", h: http.HandlerFunc(hang), deadline: 45 * time.Second,
			wantErr: context.DeadlineExceeded, wantNot: ErrTimeout, wantTook: 45 * time.Second, wantAttempts: 2},
		{name: "the caller's later deadline", h: http.HandlerFunc(hang), deadline: time.Hour,
			wantErr: ErrTimeout, wantTook: DefaultCallTimeout, wantAttempts: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, tt.h, tt.opts...)
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				var resp Response
				start := time.Now()
				_, err := c.Contexts.Get(ctx, "ctx_1", WithResponseInto(&resp))
				took := time.Since(start)
				if !errors.Is(err, tt.wantErr) || tt.wantNot != nil && errors.Is(err, tt.wantNot) {
					t.Errorf("err = %v, want %v (and not %v)", err, tt.wantErr, tt.wantNot)
				}
				if took != tt.wantTook || resp.Attempts != tt.wantAttempts {
					t.Errorf("returned after %v and %d attempts, want %v and %d", took, resp.Attempts, tt.wantTook, tt.wantAttempts)
				}
			})
		})
	}
}

// TestHeaderBoundRetried: an attempt cut by the header bound is retried
// (with the same idempotency key), and the call succeeds when the next
// attempt is answered.
func TestHeaderBoundRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var keys []string
		c := pipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			keys = append(keys, r.Header.Get("Idempotency-Key"))
			n := len(keys)
			mu.Unlock()
			if n == 1 {
				hang(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, ctx1JSON)
		}), WithHeaderTimeout(3*time.Second), WithRetryWait(time.Second, time.Second))
		var resp Response
		start := time.Now()
		got, err := c.Contexts.Create(context.Background(), &CreateContextRequest{Name: "n"}, WithResponseInto(&resp))
		if err != nil || got.ID != "ctx_1" {
			t.Fatalf("Create = %+v, %v", got, err)
		}
		if took := time.Since(start); took != 4*time.Second || resp.Attempts != 2 {
			t.Errorf("returned after %v and %d attempts, want 4s and 2", took, resp.Attempts)
		}
		if len(keys) != 2 || keys[0] != keys[1] || keys[0] == "" {
			t.Errorf("idempotency keys %q, want the same key twice", keys)
		}
	})
}

// TestAllPagesEachBounded: each page of All is a call with its own bound:
// a page that never comes ends the iteration with ErrTimeout, after the
// items of the pages before it.
func TestAllPagesEachBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := pipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("cursor") != "" {
				hang(w, r)
				return
			}
			io.WriteString(w, `{"data":[{"id":"ctx_1"},{"id":"ctx_2"}],"hasMore":true,"nextCursor":"c2"}`)
		}))
		start := time.Now()
		items := 0
		var last error
		for _, err := range c.Contexts.All(context.Background(), nil) {
			if err != nil {
				last = err
				continue
			}
			items++
		}
		if items != 2 || !errors.Is(last, ErrTimeout) {
			t.Errorf("%d items, then %v; want 2, then ErrTimeout", items, last)
		}
		if took := time.Since(start); took != DefaultCallTimeout {
			t.Errorf("ended after %v, want %v", took, DefaultCallTimeout)
		}
	})
}
