package mockserver

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// TestBadInput sends bad requests of every kind the contract names. Each
// gets its status, error type and (where one field is at fault) param,
// never a 500, and leaves the store exactly as it was.
func TestBadInput(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	ts := NewTestServer(t,
		WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithKey(Key{Token: "writer", Plan: PlanUnlimited}),
		WithKey(Key{Token: "reader", Plan: PlanUnlimited, Scope: ScopeRead}))
	ctx := create(t, ts, `{"name":"keep me","content":"# A\n\nbody","tags":["x"]}`)
	do(t, ts, call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/h","events":["context.created"],"secret":"k"}`})
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + ctx.ID, body: `{"content":"# A\n\nbody 2"}`})
	var vl struct{ NextCursor *string }
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + ctx.ID + "/versions?limit=1"}).json(t, &vl)
	versionsCursor := url.QueryEscape(*vl.NextCursor)

	cp := "/v1/contexts"
	one := cp + "/" + ctx.ID
	long := func(n int) string { return strings.Repeat("n", n) }
	tags21 := make([]string, 21)
	for i := range tags21 {
		tags21[i] = fmt.Sprint("t", i)
	}
	// Some 300,000 distinct short tags in just under 2 MiB: a 400 at once
	// (deduplicating them against each other took minutes).
	var manyTags strings.Builder
	manyTags.WriteString(`{"name":"a","tags":["t0"`)
	for i := 1; manyTags.Len() < 2<<20-16; i++ {
		fmt.Fprintf(&manyTags, `,"%x"`, i)
	}
	manyTags.WriteString(`]}`)
	hook := func(u, events, secret string) string {
		return fmt.Sprintf(`{"url":%s,"events":%s,"secret":%s}`, u, events, secret)
	}

	cases := []struct {
		name   string
		c      call
		status int
		typ    string
		param  string
	}{
		{"malformed JSON", call{method: "POST", path: cp, body: `{"name":`}, 400, "invalid_request", ""},
		{"JSON array", call{method: "POST", path: cp, body: `[{"name":"a"}]`}, 400, "invalid_request", ""},
		{"JSON string", call{method: "POST", path: cp, body: `"name"`}, 400, "invalid_request", ""},
		{"JSON number", call{method: "POST", path: cp, body: `42`}, 400, "invalid_request", ""},
		{"JSON null body", call{method: "POST", path: cp, body: `null`}, 400, "invalid_request", ""},
		{"empty body", call{method: "POST", path: cp}, 400, "invalid_request", ""},
		{"trailing data", call{method: "POST", path: cp, body: `{"name":"a"} {}`}, 400, "invalid_request", ""},
		{"byte order mark", call{method: "POST", path: cp, body: "\ufeff" + `{"name":"a"}`}, 400, "invalid_request", ""},
		{"name wrong type", call{method: "POST", path: cp, body: `{"name":5}`}, 400, "invalid_request", "name"},
		{"name null", call{method: "POST", path: cp, body: `{"name":null}`}, 400, "invalid_request", "name"},
		{"content null", call{method: "POST", path: cp, body: `{"name":"a","content":null}`}, 400, "invalid_request", "content"},
		{"tags null", call{method: "POST", path: cp, body: `{"name":"a","tags":null}`}, 400, "invalid_request", "tags"},
		{"content wrong type", call{method: "POST", path: cp, body: `{"name":"a","content":{"x":1}}`}, 400, "invalid_request", "content"},
		{"unknown field", call{method: "POST", path: cp, body: `{"name":"a","contnet":"x"}`}, 400, "invalid_request", "contnet"},
		{"field given twice", call{method: "POST", path: cp, body: `{"name":"a","name":"b"}`}, 400, "invalid_request", "name"},
		{"field given twice, once escaped", call{method: "POST", path: cp, body: `{"name":"a","content":"x","n\u0061me":"b"}`}, 400, "invalid_request", "name"},
		{"field given twice, once invalid", call{method: "POST", path: cp, body: `{"name":1,"name":"b"}`}, 400, "invalid_request", "name"},
		{"missing name", call{method: "POST", path: cp, body: `{"content":"x"}`}, 400, "invalid_request", "name"},
		{"empty name", call{method: "POST", path: cp, body: `{"name":""}`}, 400, "invalid_request", "name"},
		{"white space name", call{method: "POST", path: cp, body: `{"name":" \t\n\u00a0 "}`}, 400, "invalid_request", "name"},
		{"201-character name", call{method: "POST", path: cp, body: `{"name":"` + long(201) + `"}`}, 400, "invalid_request", "name"},
		{"201 runes name", call{method: "POST", path: cp, body: `{"name":"` + strings.Repeat("é", 201) + `"}`}, 400, "invalid_request", "name"},
		{"21 tags", call{method: "POST", path: cp, body: mustJSON(map[string]any{"name": "a", "tags": tags21})}, 400, "invalid_request", "tags"},
		{"2 MiB of distinct tags", call{method: "POST", path: cp, body: manyTags.String()}, 400, "invalid_request", "tags"},
		{"51-character tag", call{method: "POST", path: cp, body: `{"name":"a","tags":["` + long(51) + `"]}`}, 400, "invalid_request", "tags"},
		{"empty tag", call{method: "POST", path: cp, body: `{"name":"a","tags":[""]}`}, 400, "invalid_request", "tags"},
		{"tags not an array", call{method: "POST", path: cp, body: `{"name":"a","tags":"x"}`}, 400, "invalid_request", "tags"},
		{"tag not a string", call{method: "POST", path: cp, body: `{"name":"a","tags":[1]}`}, 400, "invalid_request", "tags"},
		{"tag null", call{method: "POST", path: cp, body: `{"name":"a","tags":[null]}`}, 400, "invalid_request", "tags"},
		{"content over 1,000,000 bytes", call{method: "POST", path: cp, body: `{"name":"a","content":"` + long(1_000_001) + `"}`}, 400, "invalid_request", "content"},
		{"invalid UTF-8 content", call{method: "POST", path: cp, body: "{\"name\":\"a\",\"content\":\"ok \xff\xfe bad\"}"}, 400, "invalid_request", "content"},
		{"invalid UTF-8 name", call{method: "POST", path: cp, body: "{\"name\":\"\xc3\x28\"}"}, 400, "invalid_request", "name"},
		{"body over 2 MiB", call{method: "POST", path: cp, body: `{"name":"a","content":"` + long(2<<20) + `"}`}, 413, "payload_too_large", ""},
		{"update empty object", call{method: "PUT", path: one, body: `{}`}, 400, "invalid_request", ""},
		{"update unknown field", call{method: "PUT", path: one, body: `{"title":"x"}`}, 400, "invalid_request", "title"},
		{"update field given twice", call{method: "PUT", path: one, body: `{"content":"new","tags":[],"content":"old"}`}, 400, "invalid_request", "content"},
		{"update name null", call{method: "PUT", path: one, body: `{"name":null}`}, 400, "invalid_request", "name"},
		{"update over-long name", call{method: "PUT", path: one, body: `{"name":"` + long(201) + `"}`}, 400, "invalid_request", "name"},
		{"update array body", call{method: "PUT", path: one, body: `[]`}, 400, "invalid_request", ""},
		{"update body over 2 MiB", call{method: "PUT", path: one, body: `{"content":"` + long(3<<20) + `"}`}, 413, "payload_too_large", ""},
		{"update unknown id", call{method: "PUT", path: cp + "/ctx_missing", body: `{"name":"x"}`}, 404, "not_found", ""},
		{"delete unknown id", call{method: "DELETE", path: cp + "/ctx_missing"}, 404, "not_found", ""},
		{"limit 0", call{method: "GET", path: cp + "?limit=0"}, 400, "invalid_request", "limit"},
		{"limit 101", call{method: "GET", path: cp + "?limit=101"}, 400, "invalid_request", "limit"},
		{"limit not a number", call{method: "GET", path: cp + "?limit=ten"}, 400, "invalid_request", "limit"},
		{"limit negative", call{method: "GET", path: cp + "?limit=-1"}, 400, "invalid_request", "limit"},
		{"limit empty", call{method: "GET", path: cp + "?limit="}, 400, "invalid_request", "limit"},
		{"cursor garbage", call{method: "GET", path: cp + "?cursor=not-a-cursor"}, 400, "invalid_request", "cursor"},
		{"cursor of another list", call{method: "GET", path: cp + "?cursor=" + versionsCursor}, 400, "invalid_request", "cursor"},
		{"empty tag filter", call{method: "GET", path: cp + "?tag="}, 400, "invalid_request", "tag"},
		{"versions limit 1000", call{method: "GET", path: one + "/versions?limit=1000"}, 400, "invalid_request", "limit"},
		{"versions bad cursor", call{method: "GET", path: one + "/versions?cursor=AAAA"}, 400, "invalid_request", "cursor"},
		{"unknown export format", call{method: "GET", path: one + "/export?format=docx"}, 400, "invalid_request", "format"},
		{"export version 0", call{method: "GET", path: one + "/export?version=0"}, 400, "invalid_request", "version"},
		{"export version not a number", call{method: "GET", path: one + "/export?version=latest"}, 400, "invalid_request", "version"},
		{"export version never existed", call{method: "GET", path: one + "/export?version=9"}, 404, "not_found", ""},
		{"webhook http non-loopback", call{method: "POST", path: "/v1/webhooks", body: hook(`"http://example.com/h"`, `["context.created"]`, `"s"`)}, 400, "invalid_request", "url"},
		{"webhook relative url", call{method: "POST", path: "/v1/webhooks", body: hook(`"/hooks/in"`, `["context.created"]`, `"s"`)}, 400, "invalid_request", "url"},
		{"webhook ftp url", call{method: "POST", path: "/v1/webhooks", body: hook(`"ftp://example.com/h"`, `["context.created"]`, `"s"`)}, 400, "invalid_request", "url"},
		{"webhook url not a string", call{method: "POST", path: "/v1/webhooks", body: hook(`7`, `["context.created"]`, `"s"`)}, 400, "invalid_request", "url"},
		{"webhook empty events", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `[]`, `"s"`)}, 400, "invalid_request", "events"},
		{"webhook unknown event", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `["context.exploded"]`, `"s"`)}, 400, "invalid_request", "events"},
		{"webhook events not an array", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `"context.created"`, `"s"`)}, 400, "invalid_request", "events"},
		{"webhook missing events", call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/h","secret":"s"}`}, 400, "invalid_request", "events"},
		{"webhook empty secret", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `["context.created"]`, `""`)}, 400, "invalid_request", "secret"},
		{"webhook 257-character secret", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `["context.created"]`, `"`+long(257)+`"`)}, 400, "invalid_request", "secret"},
		{"webhook field given twice", call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/h","events":["context.created"],"secret":"s","secret":"t"}`}, 400, "invalid_request", "secret"},
		{"webhook unknown field", call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/h","events":["context.created"],"secret":"s","active":false}`}, 400, "invalid_request", "active"},
		{"no Authorization", call{method: "GET", path: cp, key: "-"}, 401, "unauthorized", ""},
		{"Basic scheme", call{method: "GET", path: cp, key: "-", header: map[string]string{"Authorization": "Basic d3JpdGVyOg=="}}, 401, "unauthorized", ""},
		{"Bearer without token", call{method: "GET", path: cp, key: "-", header: map[string]string{"Authorization": "Bearer "}}, 401, "unauthorized", ""},
		{"bare token", call{method: "GET", path: cp, key: "-", header: map[string]string{"Authorization": "writer"}}, 401, "unauthorized", ""},
		{"unknown key", call{method: "POST", path: cp, key: "writer2", body: `{"name":"a"}`}, 401, "unauthorized", ""},
		{"key prefix", call{method: "DELETE", path: one, key: "write"}, 401, "unauthorized", ""},
		{"read scope creates", call{method: "POST", path: cp, key: "reader", body: `{"name":"a"}`}, 403, "forbidden", ""},
		{"read scope updates", call{method: "PUT", path: one, key: "reader", body: `{"name":"a"}`}, 403, "forbidden", ""},
		{"read scope deletes", call{method: "DELETE", path: one, key: "reader"}, 403, "forbidden", ""},
		{"read scope registers webhook", call{method: "POST", path: "/v1/webhooks", key: "reader", body: hook(`"https://example.com/h"`, `["context.created"]`, `"s"`)}, 403, "forbidden", ""},
		{"wrong method on collection", call{method: "PATCH", path: cp, body: `{"name":"a"}`}, 405, "method_not_allowed", ""},
		{"wrong method on versions", call{method: "POST", path: one + "/versions", body: `{}`}, 405, "method_not_allowed", ""},
		{"unknown path", call{method: "GET", path: "/v1/context"}, 404, "not_found", ""},
		{"lone high surrogate in name", call{method: "POST", path: cp, body: `{"name":"a\ud800"}`}, 400, "invalid_request", "name"},
		{"lone low surrogate in content", call{method: "POST", path: cp, body: `{"name":"a","content":"x\uDC00y"}`}, 400, "invalid_request", "content"},
		{"reversed pair in a tag", call{method: "POST", path: cp, body: `{"name":"a","tags":["\ude00\ud83d"]}`}, 400, "invalid_request", "tags"},
		{"high surrogate then a letter", call{method: "PUT", path: one, body: `{"name":"\ud83dA"}`}, 400, "invalid_request", "name"},
		{"NUL in name", call{method: "POST", path: cp, body: `{"name":"a\u0000b"}`}, 400, "invalid_request", "name"},
		{"tab in name", call{method: "POST", path: cp, body: `{"name":"a\tb"}`}, 400, "invalid_request", "name"},
		{"C1 control in name", call{method: "POST", path: cp, body: `{"name":"a\u0085"}`}, 400, "invalid_request", "name"},
		{"newline in a tag", call{method: "POST", path: cp, body: `{"name":"a","tags":["x\ny"]}`}, 400, "invalid_request", "tags"},
		{"NUL in content", call{method: "POST", path: cp, body: `{"name":"a","content":"x\u0000"}`}, 400, "invalid_request", "content"},
		{"DEL in content", call{method: "PUT", path: one, body: `{"content":"x\u007f"}`}, 400, "invalid_request", "content"},
		{"escape in content", call{method: "POST", path: cp, body: `{"name":"a","content":"\u001b[31mred"}`}, 400, "invalid_request", "content"},
		{"newline in the secret", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `["context.created"]`, `"s\n"`)}, 400, "invalid_request", "secret"},
		{"lone surrogate in the secret", call{method: "POST", path: "/v1/webhooks", body: hook(`"https://example.com/h"`, `["context.created"]`, `"s\udfff"`)}, 400, "invalid_request", "secret"},
		{"bad percent-escape in the query", call{method: "GET", path: cp + "?cursor=%%%garbage"}, 400, "invalid_request", "cursor"},
		{"bad percent-escape, other parameter", call{method: "GET", path: cp + "?limit=5&tag=%zz"}, 400, "invalid_request", "tag"},
		{"bad percent-escape in a name", call{method: "GET", path: one + "/versions?%zz=1"}, 400, "invalid_request", "%zz"},
		{"semicolon in the query", call{method: "GET", path: one + "/export?format=md;version=1"}, 400, "invalid_request", "format"},
		{"export version beyond int64", call{method: "GET", path: one + "/export?version=99999999999999999999"}, 404, "not_found", ""},
		{"export version negative beyond int64", call{method: "GET", path: one + "/export?version=-99999999999999999999"}, 400, "invalid_request", "version"},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		before := ts.Snapshot()
		nEvents := len(ts.Events())
		if tc.c.key == "" {
			tc.c.key = "writer"
		}
		r := do(t, ts, tc.c)
		typ, param := r.errorOf(t)
		if r.Status != tc.status || typ != tc.typ || param != tc.param {
			t.Errorf("%s: got %d %s param %q, want %d %s param %q\n%.300s", tc.name, r.Status, typ, param, tc.status, tc.typ, tc.param, r.Body)
		}
		if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, r.Header.Get("WWW-Authenticate"))
		}
		if d := cmp.Diff(before, ts.Snapshot()); d != "" {
			t.Errorf("%s changed the store (-before +after):\n%s", tc.name, d)
		}
		if n := len(ts.Events()); n != nEvents {
			t.Errorf("%s fired %d events", tc.name, n-nEvents)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	// No bad input reached the panic handler, and no key or secret was
	// logged.
	for _, bad := range []string{"recovered panic", "writer", "reader", "level=ERROR"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("log contains %q:\n%s", bad, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "status=400") {
		t.Errorf("requests were not logged:\n%.500s", logs.String())
	}
}

// TestBodyLimitWithoutLength sends a chunked body with no Content-Length
// that never ends within 2 MiB: the server answers 413 after reading the
// limit, not the whole body.
func TestBodyLimitWithoutLength(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	src := &countingReader{r: io.MultiReader(strings.NewReader(`{"name":"a","content":"`), infiniteN{})}
	req, _ := http.NewRequest("POST", ts.URL+"/contexts", io.LimitReader(src, 64<<20))
	req.Header.Set("Authorization", "Bearer "+ts.APIKey)
	req.ContentLength = -1
	res, err := ts.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 413 || !strings.Contains(string(b), `"payload_too_large"`) {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	if n := src.n.Load(); n >= 64<<20 {
		t.Fatalf("the whole 64 MiB body was sent (%d bytes)", n)
	}
	if len(ts.Snapshot().Contexts) != 0 {
		t.Fatal("a context was stored")
	}
}

// TestByteOrderMark: a body that starts with a UTF-8 byte order mark (as
// some tools write) is refused, with a message that names the mark rather
// than calling the JSON object no object.
func TestByteOrderMark(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	r := do(t, ts, call{method: "POST", path: "/v1/contexts", body: "\ufeff" + `{"name":"a"}`})
	var e httpapi.ErrorBody
	r.json(t, &e)
	if r.Status != 400 || !strings.Contains(e.Error.Message, "byte order mark") {
		t.Errorf("%d %s", r.Status, r.Body)
	}
}
